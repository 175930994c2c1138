//! The typed calls of every binding's client, sans-IO: what to send and how to read what
//! comes back; each binding's `Client` only sends a [`Request`] and waits for its result
//! (see [`Exchange`])

use std::future::Future;
use std::marker::PhantomData;

use mcp_sansio::schema::method::{
    CallTool, Complete, GetPrompt, ListPrompts, ListResources, ListTools, Method, ReadResource,
};
use mcp_sansio::schema::{
    CallToolResult, CompleteParams, CompleteResult, GetPromptParams, GetPromptResult,
    PaginatedParams, Prompt, ReadResourceParams, ReadResourceResult, Resource, Tool,
};
use mcp_sansio::{CallError, PeerInfo, RequestOptions, SendError};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::error::ClientError;

/// One request of a typed call, ready to send
#[derive(Debug)]
#[non_exhaustive]
pub struct Request {
    /// The method
    pub method: &'static str,
    /// Its params
    pub params: Box<RawValue>,
    /// Its options
    pub options: RequestOptions,
}

/// What a typed call does next
#[derive(Debug)]
pub enum Next<T> {
    /// Send this request and feed its result to the next [`Exchange::step`]
    Send(Request),
    /// The call's value
    Done(T),
}

/// A typed call as a sequence of requests (one, or a page after another)
///
/// The binding calls [`step`](Self::step) with `None`, sends each [`Next::Send`] and feeds
/// the result back, until [`Next::Done`]; a failed request ends the call with its error.
pub trait Exchange {
    /// The call's value
    type Output;

    /// The next request, or the value; `answer` is the result of the request the previous
    /// step asked for (`None` on the first step)
    ///
    /// # Errors
    /// A request that cannot be encoded, a result of the wrong shape
    /// ([`CallError::InvalidResult`]).
    fn step(&mut self, answer: Option<Box<RawValue>>) -> Result<Next<Self::Output>, ClientError>;
}

/// Runs a typed call to its value: sends each of its requests with `send` and feeds the
/// result back; the first failure ends the call (every binding's client runs its typed
/// calls through this loop: the async ones await `send`, the blocking one through
/// [`run_blocking`])
///
/// # Errors
/// What [`Exchange::step`] or `send` returns.
pub async fn drive<E, F, Fut>(mut call: E, mut send: F) -> Result<E::Output, ClientError>
where
    E: Exchange,
    F: FnMut(Request) -> Fut,
    Fut: Future<Output = Result<Box<RawValue>, ClientError>>,
{
    let mut answer = None;
    loop {
        match call.step(answer.take())? {
            Next::Done(value) => return Ok(value),
            Next::Send(request) => answer = Some(send(request).await?),
        }
    }
}

/// [`drive`] with a `send` that blocks the calling thread until the result (the blocking
/// binding's client): each of its futures is ready at once, so the loop never waits
///
/// # Errors
/// As [`drive`].
pub fn run_blocking<E, F>(call: E, mut send: F) -> Result<E::Output, ClientError>
where
    E: Exchange,
    F: FnMut(Request) -> Result<Box<RawValue>, ClientError>,
{
    futures_lite::future::block_on(drive(call, |request| std::future::ready(send(request))))
}

/// A result, decoded (a result of the wrong shape is [`CallError::InvalidResult`])
///
/// # Errors
/// [`ClientError::Call`].
pub(crate) fn decode_result<T: DeserializeOwned>(
    method: &str,
    raw: &RawValue,
) -> Result<T, ClientError> {
    serde_json::from_str(raw.get())
        .map_err(|e| CallError::InvalidResult(format!("invalid {method} result: {e}")).into())
}

/// Params, encoded (they must be a JSON object)
///
/// # Errors
/// [`SendError::ParamsNotAnObject`].
pub(crate) fn encode_params<P: Serialize>(params: &P) -> Result<Box<RawValue>, SendError> {
    serde_json::value::to_raw_value(params).map_err(|_| SendError::ParamsNotAnObject)
}

/// One request, one typed result
#[derive(Debug)]
pub struct Single<T> {
    method: &'static str,
    request: Option<Result<Request, SendError>>,
    result: PhantomData<fn() -> T>,
}

impl<T: DeserializeOwned> Exchange for Single<T> {
    type Output = T;

    fn step(&mut self, answer: Option<Box<RawValue>>) -> Result<Next<T>, ClientError> {
        match answer {
            Some(raw) => decode_result(self.method, &raw).map(Next::Done),
            None => match self.request.take() {
                Some(request) => Ok(Next::Send(request?)),
                // Asked twice for its request: the call has been sent already
                None => Err(SendError::Closed.into()),
            },
        }
    }
}

/// Every page of a paginated list, concatenated
#[derive(Debug)]
pub(crate) struct Pages<M, T, F> {
    all: Vec<T>,
    page_items: F,
    method: PhantomData<fn() -> M>,
}

impl<M, T, F> Exchange for Pages<M, T, F>
where
    M: Method<Params = PaginatedParams>,
    F: FnMut(M::Result) -> (Vec<T>, Option<String>),
{
    type Output = Vec<T>;

    fn step(&mut self, answer: Option<Box<RawValue>>) -> Result<Next<Vec<T>>, ClientError> {
        let params = match answer {
            None => PaginatedParams::new(),
            Some(raw) => {
                let (items, next) = (self.page_items)(decode_result(M::NAME, &raw)?);
                self.all.extend(items);
                match next {
                    Some(cursor) => PaginatedParams::at(cursor),
                    None => return Ok(Next::Done(std::mem::take(&mut self.all))),
                }
            }
        };
        Ok(Next::Send(Request {
            method: M::NAME,
            params: encode_params(&params)?,
            options: RequestOptions::default(),
        }))
    }
}

fn pages<M, T, F>(page_items: F) -> Pages<M, T, F>
where
    M: Method<Params = PaginatedParams>,
    F: FnMut(M::Result) -> (Vec<T>, Option<String>),
{
    Pages {
        all: Vec::new(),
        page_items,
        method: PhantomData,
    }
}

/// A typed request
pub fn request<M: Method>(params: &M::Params, options: RequestOptions) -> Single<M::Result> {
    Single {
        method: M::NAME,
        request: Some(encode_params(params).map(|params| Request {
            method: M::NAME,
            params,
            options,
        })),
        result: PhantomData,
    }
}

/// `tools/call`
pub fn call_tool(
    name: &str,
    arguments: Map<String, Value>,
    options: RequestOptions,
) -> Single<CallToolResult> {
    /// The params [`CallToolParams::new`]`(name).with_arguments(arguments)` writes, written
    /// from borrowed parts (the name is not copied first)
    #[derive(Serialize)]
    struct Params<'a> {
        name: &'a str,
        arguments: &'a Map<String, Value>,
    }
    Single {
        method: CallTool::NAME,
        request: Some(
            encode_params(&Params {
                name,
                arguments: &arguments,
            })
            .map(|params| Request {
                method: CallTool::NAME,
                params,
                options,
            }),
        ),
        result: PhantomData,
    }
}

/// Every tool, following pagination; on 2026-07-28 connections (`peer`'s version), tools
/// whose `x-mcp-header` annotations are invalid are left out, as the spec requires
pub fn list_tools(peer: &PeerInfo) -> impl Exchange<Output = Vec<Tool>> + Send + 'static {
    let modern = peer.version.era() == mcp_sansio::Era::Modern;
    pages::<ListTools, _, _>(move |mut page| {
        if modern {
            let _dropped = mcp_sansio::http::filter_tools_list(&mut page);
        }
        (page.tools, page.next_cursor)
    })
}

/// Every resource, following pagination
pub fn list_resources() -> impl Exchange<Output = Vec<Resource>> + Send + 'static {
    pages::<ListResources, _, _>(|page| (page.resources, page.next_cursor))
}

/// Every prompt, following pagination
pub fn list_prompts() -> impl Exchange<Output = Vec<Prompt>> + Send + 'static {
    pages::<ListPrompts, _, _>(|page| (page.prompts, page.next_cursor))
}

/// `resources/read`
pub fn read_resource(uri: &str) -> Single<ReadResourceResult> {
    request::<ReadResource>(&ReadResourceParams::new(uri), RequestOptions::default())
}

/// `prompts/get`
pub fn get_prompt(params: &GetPromptParams) -> Single<GetPromptResult> {
    request::<GetPrompt>(params, RequestOptions::default())
}

/// `completion/complete`
pub fn complete(params: &CompleteParams) -> Single<CompleteResult> {
    request::<Complete>(params, RequestOptions::default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_sansio::schema::CallToolParams;

    fn raw(json: &str) -> Box<RawValue> {
        RawValue::from_string(json.to_owned()).unwrap()
    }

    #[test]
    fn a_single_call_sends_its_request_then_decodes_the_result() {
        let mut call = call_tool("echo", Map::new(), RequestOptions::default());
        let Next::Send(request) = call.step(None).unwrap() else {
            panic!("the first step sends");
        };
        assert_eq!(request.method, "tools/call");
        assert_eq!(
            serde_json::from_str::<Value>(request.params.get()).unwrap()["name"],
            "echo"
        );
        let answer = raw(r#"{"content":[{"type":"text","text":"hi"}]}"#);
        let Next::Done(result) = call.step(Some(answer)).unwrap() else {
            panic!("the answer ends the call");
        };
        assert_eq!(result.content.len(), 1);
    }

    #[test]
    fn a_tool_call_writes_the_params_of_its_schema_type() {
        let arguments: Map<String, Value> =
            serde_json::from_str(r#"{"text":"hello \"world\"","n":[1,{"a":null}]}"#).unwrap();
        let mut call = call_tool("echo/é", arguments.clone(), RequestOptions::default());
        let Next::Send(request) = call.step(None).unwrap() else {
            panic!("the first step sends");
        };
        let typed = encode_params(&CallToolParams::new("echo/é").with_arguments(arguments));
        assert_eq!(request.params.get(), typed.unwrap().get());
    }

    #[test]
    fn a_result_of_the_wrong_shape_is_invalid_result() {
        let mut call = read_resource("file:///a");
        assert!(matches!(call.step(None), Ok(Next::Send(_))));
        let err = call.step(Some(raw(r#"{"contents":7}"#))).unwrap_err();
        assert!(
            matches!(err, ClientError::Call(CallError::InvalidResult(m)) if m.contains("resources/read"))
        );
    }

    #[test]
    fn pages_follow_the_cursor_and_concatenate() {
        let mut call = list_prompts();
        let Next::Send(first) = call.step(None).unwrap() else {
            panic!("the first step sends");
        };
        assert_eq!(first.method, "prompts/list");
        assert_eq!(
            serde_json::from_str::<Value>(first.params.get())
                .unwrap()
                .get("cursor"),
            None
        );
        let page = raw(r#"{"prompts":[{"name":"a"}],"nextCursor":"c2"}"#);
        let Next::Send(second) = call.step(Some(page)).unwrap() else {
            panic!("a cursor asks for the next page");
        };
        assert_eq!(
            serde_json::from_str::<Value>(second.params.get()).unwrap()["cursor"],
            "c2"
        );
        let last = raw(r#"{"prompts":[{"name":"b"}]}"#);
        let Next::Done(all) = call.step(Some(last)).unwrap() else {
            panic!("no cursor ends the list");
        };
        let names: Vec<_> = all.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
    }
}
