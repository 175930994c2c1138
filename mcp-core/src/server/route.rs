//! Which handler an inbound request goes to, or the answer the catalog gives without one
//!
//! Every binding's server does the same with a request: list requests are answered from the
//! catalog, `tools/call` arguments are checked against the tool's schema, a `resources/read`
//! URI is resolved to a resource or template, `prompts/get` arguments are checked, and
//! anything else is method-not-found. [`Catalog::route`] makes those decisions once; the
//! binding only runs the handler a [`Route`] names, or responds with its [`Answer`]
//! ([`respond`]).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::{Catalog, EntryKind, ResourceMatch, resource_not_found};
use crate::jsonrpc::ErrorObject;
use crate::schema::method::{
    CallTool, Complete, GetPrompt, ListPrompts, ListResourceTemplates, ListResources, ListTools,
    Method, ReadResource,
};
use crate::schema::{CompleteParams, FitVersion, Reference};
use crate::session::Principal;
use crate::uri_template::Variables;
use crate::version::ProtocolVersion;
use crate::{InboundRequest, Responder, ServerSession};

/// A response decided without a handler, already fitted to the request's version: respond
/// with it ([`respond`])
pub type Answer = Result<Box<RawValue>, ErrorObject>;

/// Where a server sends one inbound request
#[derive(Debug)]
#[non_exhaustive]
pub enum Route {
    /// The catalog answered: a list page, an unknown tool, resource or prompt, arguments that
    /// fail a tool's `inputSchema` (an `isError` result), invalid params, an unknown method
    Answer(Answer),
    /// Run this tool's handler; its arguments passed the tool's `inputSchema`
    Tool {
        /// The tool's name
        name: String,
        /// The call's arguments (`{}` when absent)
        arguments: Map<String, Value>,
    },
    /// Run the reader registered under `key` for `uri`
    Resource {
        /// The resource's URI, or the URI template that matched
        key: String,
        /// The URI asked for
        uri: String,
        /// The template's variables (empty for a resource)
        variables: Variables,
    },
    /// Run this prompt's handler; its required arguments are present
    Prompt {
        /// The prompt's name
        name: String,
        /// The arguments (empty when absent)
        arguments: BTreeMap<String, String>,
    },
    /// Run the `completion/complete` handler
    Complete(CompleteParams),
}

/// Responds to a request with an [`Answer`] (a no-op if the peer cancelled or the session
/// closed)
pub fn respond(session: &mut ServerSession, responder: Responder, answer: &Answer) {
    match answer {
        Ok(raw) => {
            if let Err(refused) = session.respond_raw(responder, raw) {
                let error = ErrorObject::internal_error("the server produced an invalid result");
                session.respond_error(refused.into_responder(), &error);
            }
        }
        Err(error) => session.respond_error(responder, error),
    }
}

/// A typed result fitted to `version` and serialized
fn fitted<T: Serialize + FitVersion>(
    result: Result<T, ErrorObject>,
    version: ProtocolVersion,
) -> Answer {
    let mut result = result?;
    result.fit_to(version);
    serde_json::value::to_raw_value(&result).map_err(ErrorObject::internal_error)
}

/// What routing a `tools/call` reads: its name and arguments
///
/// The params are checked as [`CallToolParams`](crate::schema::CallToolParams) checks them
/// (the same members must have the same types), but `_meta` and the members the route does
/// not use are skipped instead of built into `Value` trees: a 2026 call's `_meta` carries the
/// client's capabilities and info in every request.
#[derive(serde::Deserialize)]
struct CallRoute {
    name: String,
    #[serde(default)]
    arguments: Option<Map<String, Value>>,
    // Read for their checks only.
    #[serde(rename = "task", default)]
    _task: Option<crate::schema::TaskMetadata>,
    #[serde(rename = "inputResponses", default)]
    _input_responses: Option<crate::schema::InputResponses>,
    #[serde(rename = "requestState", default)]
    _request_state: Option<String>,
    #[serde(rename = "_meta", default)]
    _meta: Option<SkippedObject>,
}

impl CallRoute {
    /// The name and arguments where the one pass over the params found them, which also
    /// found the rest as this reading would ([`CallSpans`](crate::session::CallSpans)); `None`
    /// sends the params to the whole reading (arguments that are not an object, say: its
    /// error names where)
    fn from_spans(spans: &crate::session::CallSpans, params: &str) -> Option<Self> {
        let name = params.get(spans.name.clone())?;
        let name = name.strip_prefix('"')?.strip_suffix('"')?.to_owned();
        let arguments = match &spans.arguments {
            Some(span) => serde_json::from_str(params.get(span.clone())?).ok()?,
            None => None,
        };
        Some(Self {
            name,
            arguments,
            _task: None,
            _input_responses: None,
            _request_state: None,
            _meta: None,
        })
    }
}

/// A JSON object, checked and skipped
struct SkippedObject;

impl<'de> serde::Deserialize<'de> for SkippedObject {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Skip;
        impl<'de> serde::de::Visitor<'de> for Skip {
            type Value = SkippedObject;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<SkippedObject, A::Error> {
                use serde::de::IgnoredAny;
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(SkippedObject)
            }
        }
        deserializer.deserialize_map(Skip)
    }
}

/// A `tools/call`'s name and arguments, or the `-32602` that
/// [`InboundRequest::params`] would give
fn call_params(request: &InboundRequest) -> Result<CallRoute, ErrorObject> {
    if let Some(route) = request
        .call
        .as_ref()
        .zip(request.params.as_deref())
        .and_then(|(spans, params)| CallRoute::from_spans(spans, params.get()))
    {
        return Ok(route);
    }
    serde_json::from_str(request.params.as_deref().map_or("{}", RawValue::get))
        .map_err(|e| ErrorObject::invalid_params(format!("invalid {} params: {e}", CallTool::NAME)))
}

impl Catalog {
    /// Routes one inbound request of a server: to the answer the catalog gives, or to the
    /// handler that must run
    ///
    /// `completion` says whether the server has a `completion/complete` handler; without
    /// one that method is method-not-found, like any method the catalog does not serve.
    pub fn route(&self, request: &InboundRequest, completion: bool) -> Route {
        self.try_route(request, completion)
            .unwrap_or_else(|| Route::Answer(Err(ErrorObject::method_not_found(&request.method))))
    }

    /// Routes one inbound request as [`route`](Self::route) does, but leaves the methods
    /// the catalog does not serve to the caller: `None` for them (instead of
    /// method-not-found)
    ///
    /// For a server whose application answers other methods itself (the Python binding
    /// hands them to the application as plain requests). The catalog serves the list
    /// methods, `tools/call`, `resources/read`, `prompts/get`, and `completion/complete`
    /// when `completion` is set.
    ///
    /// An entry that [requires scopes](Catalog::require_scopes) the request's principal
    /// lacks is answered with [`insufficient_scope`](super::insufficient_scope) before its
    /// arguments are looked at (also a `completion/complete` of one of its arguments); with [`CatalogConfig::hide_forbidden`](super::CatalogConfig::hide_forbidden)
    /// the lists leave such entries out.
    pub fn try_route(&self, request: &InboundRequest, completion: bool) -> Option<Route> {
        let version = request.version;
        let principal = request.principal();
        let answer = |answer| Route::Answer(answer);
        Some(match request.method.as_str() {
            ListTools::NAME => answer(fitted(
                request
                    .params::<ListTools>()
                    .and_then(|p| self.list_tools_for(&p, principal)),
                version,
            )),
            ListResources::NAME => answer(fitted(
                request
                    .params::<ListResources>()
                    .and_then(|p| self.list_resources_for(&p, principal)),
                version,
            )),
            ListResourceTemplates::NAME => answer(fitted(
                request
                    .params::<ListResourceTemplates>()
                    .and_then(|p| self.list_resource_templates_for(&p, principal)),
                version,
            )),
            ListPrompts::NAME => answer(fitted(
                request
                    .params::<ListPrompts>()
                    .and_then(|p| self.list_prompts_for(&p, principal)),
                version,
            )),
            CallTool::NAME => match call_params(request) {
                Err(e) => Route::Answer(Err(e)),
                Ok(params) => {
                    // Checked in place: the arguments are moved into the route, not copied,
                    // and the name is the call's own (the tool's, since it was found).
                    let arguments = Value::Object(params.arguments.unwrap_or_default());
                    match self
                        .check_access(EntryKind::Tool, &params.name, principal)
                        .map(|()| self.check_call_arguments(&params.name, &arguments))
                    {
                        Err(refused) => Route::Answer(Err(refused)),
                        Ok(Ok(_)) => Route::Tool {
                            name: params.name,
                            arguments: match arguments {
                                Value::Object(arguments) => arguments,
                                _ => Map::new(), // an object was put in
                            },
                        },
                        Ok(Err(refused)) => answer(fitted(refused.into_response(), version)),
                    }
                }
            },
            ReadResource::NAME => match request.params::<ReadResource>() {
                Err(e) => Route::Answer(Err(e)),
                Ok(params) => match self.resolve(&params.uri) {
                    Some(ResourceMatch::Resource(r))
                        if let Err(refused) =
                            self.check_access(EntryKind::Resource, &r.uri, principal) =>
                    {
                        Route::Answer(Err(refused))
                    }
                    Some(ResourceMatch::Template { template, .. })
                        if let Err(refused) = self.check_access(
                            EntryKind::Template,
                            &template.uri_template,
                            principal,
                        ) =>
                    {
                        Route::Answer(Err(refused))
                    }
                    Some(ResourceMatch::Resource(r)) => Route::Resource {
                        key: r.uri.clone(),
                        uri: params.uri,
                        variables: Variables::new(),
                    },
                    Some(ResourceMatch::Template {
                        template,
                        variables,
                    }) => Route::Resource {
                        key: template.uri_template.clone(),
                        uri: params.uri,
                        variables,
                    },
                    _ => Route::Answer(Err(resource_not_found(&params.uri))),
                },
            },
            GetPrompt::NAME => match request.params::<GetPrompt>() {
                Err(e) => Route::Answer(Err(e)),
                Ok(params) => match self
                    .check_access(EntryKind::Prompt, &params.name, principal)
                    .and_then(|()| self.check_prompt_args(&params.name, params.arguments.as_ref()))
                {
                    Ok(_) => Route::Prompt {
                        name: params.name,
                        arguments: params.arguments.unwrap_or_default(),
                    },
                    Err(e) => Route::Answer(Err(e)),
                },
            },
            Complete::NAME if completion => match request.params::<Complete>() {
                // The values a scoped entry's arguments take are as much its own as its use.
                Ok(params) => match self.check_completion_access(&params.reference, principal) {
                    Ok(()) => Route::Complete(params),
                    Err(refused) => Route::Answer(Err(refused)),
                },
                Err(e) => Route::Answer(Err(e)),
            },
            _ => return None,
        })
    }

    /// Whether a caller with `principal` may complete an argument of `reference`: the
    /// scopes of the prompt, or of the template (or resource) the URI names
    fn check_completion_access(
        &self,
        reference: &Reference,
        principal: Option<&Principal>,
    ) -> Result<(), ErrorObject> {
        match reference {
            Reference::Prompt(p) => self.check_access(EntryKind::Prompt, &p.name, principal),
            Reference::Resource(r) => self
                .check_access(EntryKind::Template, &r.uri, principal)
                .and_then(|()| self.check_access(EntryKind::Resource, &r.uri, principal)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::CallRoute;
    use crate::session::ParamsView;

    /// The route's reading of a call by where the one pass found its name and arguments
    /// takes exactly what its reading of the whole params takes, and reads the same
    #[test]
    fn a_call_read_where_the_one_pass_found_it_reads_as_the_whole_params_read() {
        let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"n","version":"1"}}"#;
        let cases = [
            format!(r#"{{"name":"echo","arguments":{{"text":"hello"}},{meta}}}"#),
            format!(r#"{{ "name" : "echo" , "arguments" : {{ "t" : "a\"}}{{[" }} , {meta} }}"#),
            format!(r#"{{"arguments":{{"a":[1,{{"b":null}}]}},"name":"\u00e9cho",{meta}}}"#),
            format!(r#"{{"name":"e\u0063ho","arguments":{{}},{meta}}}"#),
            format!(r#"{{"name":"echo","arguments":null,{meta}}}"#),
            format!(r#"{{"name":"echo",{meta}}}"#),
            r#"{"name":"échо","arguments":{"é":"ü"}}"#.to_owned(),
            r#"{"name":"echo","_meta":null}"#.to_owned(),
            r#"{"name":"echo","_meta":["2026-07-28",{}]}"#.to_owned(),
            r#"{"name":"echo","_meta":[]}"#.to_owned(),
            r#"{"name":"echo","_meta":[null]}"#.to_owned(),
            r#"{"name":"echo","_meta":5}"#.to_owned(),
            format!(r#"{{"name":"echo","arguments":"text",{meta}}}"#),
            format!(r#"{{"name":"echo","arguments":[1],{meta}}}"#),
            format!(r#"{{"name":"echo","arguments":7,{meta}}}"#),
            format!(r#"{{"name":"echo","arguments":{{}},"arguments":{{}},{meta}}}"#),
            format!(r#"{{"name":"echo","name":"other",{meta}}}"#),
            format!(r#"{{"name":5,{meta}}}"#),
            format!(r#"{{"name":null,{meta}}}"#),
            format!(r#"{{"arguments":{{}},{meta}}}"#),
            format!(r#"{{"name":"echo","task":{{"ttl":5}},{meta}}}"#),
            format!(r#"{{"name":"echo","task":{{"ttl":"x"}},{meta}}}"#),
            format!(r#"{{"name":"echo","requestState":"s",{meta}}}"#),
            format!(r#"{{"name":"echo","requestState":5,{meta}}}"#),
            format!(r#"{{"name":"echo","inputResponses":{{}},{meta}}}"#),
            format!(r#"{{"name":"echo","inputResponses":5,{meta}}}"#),
            format!(r#"{{"name":"echo","other":1,"other":2,{meta}}}"#),
            format!(r#"{{"name":"echo","uri":"a","uri":"b",{meta}}}"#),
            format!(r#"{{"name":"echo",{meta},{meta}}}"#),
            r#"{"name":"echo","_meta":{"progressToken":[1]}}"#.to_owned(),
            r#"{"name":"echo","_meta":{"io.modelcontextprotocol/logLevel":"x","a":{"b":[]}}}"#
                .to_owned(),
        ];
        let mut by_spans = 0;
        for params in &cases {
            let whole: Result<CallRoute, _> = serde_json::from_str(params);
            let spans = ParamsView::parse(params)
                .map(|view| view.into_kept("tools/call", params))
                .and_then(|kept| kept.call);
            let Some(spans) = spans else { continue };
            let Some(read) = CallRoute::from_spans(&spans, params) else {
                continue;
            };
            by_spans += 1;
            let whole =
                whole.unwrap_or_else(|e| panic!("{params}: the whole reading refuses: {e}"));
            assert_eq!(read.name, whole.name, "{params}");
            assert_eq!(read.arguments, whole.arguments, "{params}");
        }
        assert!(by_spans >= 7, "{by_spans}");
        // Another method's params carry no spans.
        let params = format!(r#"{{"name":"p",{meta}}}"#);
        let kept = ParamsView::parse(&params)
            .unwrap()
            .into_kept("prompts/get", &params);
        assert!(kept.call.is_none());
    }
}
