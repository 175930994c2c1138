//! The 2026 wire's request validation, in the order FIXTURES §2.1.2 fixes
//!
//! | step | condition | error | HTTP |
//! |---|---|---|---|
//! | 1 | `params._meta` missing, or without `…/protocolVersion` or `…/clientCapabilities` | -32602 | 400 |
//! | 2 | `MCP-Protocol-Version` header missing or ≠ `_meta…/protocolVersion` | -32020 | 400 |
//! | 3 | the version is not a supported modern one | -32022 `{supported, requested}` | 400 |
//! | 4 | `Mcp-Method` missing or ≠ `method` (case-sensitive) | -32020 | 400 |
//! | 5 | `Mcp-Name` missing or ≠ `params.name` / `uri` / `taskId` (header trimmed) | -32020 | 400 |
//! | 6 | `Mcp-Param-X` missing, malformed, or ≠ the argument annotated `x-mcp-header: X` | -32020 | 400 |
//!
//! The later rows of the table (-32021 for a missing client capability, -32601 for unknown
//! or removed methods) come from the session and the handler; their HTTP status is applied
//! when the answer goes out.

use std::borrow::Cow;

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::headers::{Headers, MCP_METHOD, MCP_NAME, MCP_PROTOCOL_VERSION};
use super::response::HttpResponse;
use super::{HeaderParam, header_value};
use crate::jsonrpc::{ErrorObject, Request, code};
use crate::schema::meta;
use crate::session::{ParamsView, ParamsWithMeta};

/// The body member `Mcp-Name` mirrors, by method
pub(crate) fn name_member(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        "tasks/get" | "tasks/update" | "tasks/cancel" => Some("taskId"),
        _ => None,
    }
}

/// Checks a 2026 request against its headers
///
/// `supported` are the modern versions the server serves; `tool_params` gives the
/// `Mcp-Param-*` mirrors of a tool by name. `Ok` holds the params as the session reads
/// them, when the checks read them in the same pass
/// ([`handle_request_as`](crate::session::Session::handle_request_as) takes them).
pub(crate) fn validate(
    request: &Request,
    headers: &(impl Headers + ?Sized),
    supported: &[&'static str],
    tool_params: &dyn Fn(&str) -> Option<Vec<HeaderParam>>,
) -> Result<Option<ParamsWithMeta>, HttpResponse> {
    if request
        .params
        .as_deref()
        .is_some_and(|p| nests_deeper(p.get().as_bytes(), MAX_DEPTH))
    {
        return Err(invalid_meta(
            request,
            &format!("params nest deeper than {MAX_DEPTH} levels"),
        ));
    }
    // One pass that the session's reading of the params comes out of too; params it
    // refuses (a type the session refuses, a member named twice) are read as before: a
    // borrowed view of what the checks need, and the session reads them itself.
    let params = request.params.as_deref().map(RawValue::get);
    let whole = params.and_then(ParamsView::parse);
    if let (Some(whole), Some(params)) = (whole, params) {
        let facts = Facts {
            meta: whole.meta.as_ref().map(|m| MetaFacts {
                version: m.version.as_deref().map(Cow::Borrowed),
                capabilities: m.capabilities.as_deref(),
            }),
            name: whole.name,
            uri: whole.uri,
            task_id: whole.task_id,
            arguments: whole.arguments,
        };
        check(request, headers, supported, tool_params, &facts)?;
        return Ok(Some(whole.into_kept(&request.method, params)));
    }
    two_passes(request, headers, supported, tool_params).map(|()| None)
}

/// [`validate`]'s checks on a borrowed view of the params (the session reads them again)
fn two_passes(
    request: &Request,
    headers: &(impl Headers + ?Sized),
    supported: &[&'static str],
    tool_params: &dyn Fn(&str) -> Option<Vec<HeaderParam>>,
) -> Result<(), HttpResponse> {
    let params: Option<View<'_>> = request
        .params
        .as_deref()
        .and_then(|p| serde_json::from_str(p.get()).ok());
    let facts = params.map_or_else(Facts::default, |p| Facts {
        meta: p.meta.map(|m| MetaFacts {
            version: m.version.and_then(|v| serde_json::from_str(v.get()).ok()),
            capabilities: m.capabilities,
        }),
        name: p.name,
        uri: p.uri,
        task_id: p.task_id,
        arguments: p.arguments,
    });
    check(request, headers, supported, tool_params, &facts)
}

/// What the checks read of the params, however they were read
#[derive(Default)]
struct Facts<'a> {
    meta: Option<MetaFacts<'a>>,
    name: Option<&'a RawValue>,
    uri: Option<&'a RawValue>,
    task_id: Option<&'a RawValue>,
    arguments: Option<&'a RawValue>,
}

/// `_meta`'s envelope members: the version when it is a string
struct MetaFacts<'a> {
    version: Option<Cow<'a, str>>,
    capabilities: Option<&'a RawValue>,
}

impl Facts<'_> {
    /// A member that `Mcp-Name` mirrors, when it is a string
    fn member(&self, member: &str) -> Option<Cow<'_, str>> {
        let raw = match member {
            "name" => self.name,
            "uri" => self.uri,
            "taskId" => self.task_id,
            _ => None,
        }?;
        json_str(raw)
    }
}

/// A JSON string's text: borrowed when it has no escapes (the quotes of valid JSON enclose
/// exactly its text then), else decoded; `None` for any other JSON value
///
/// serde reads a `Cow<str>` as an owned copy, always: two allocations a request here.
fn json_str(raw: &RawValue) -> Option<Cow<'_, str>> {
    let text = raw.get();
    if let Some(inner) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"'))
        && !inner.contains('\\')
    {
        return Some(Cow::Borrowed(inner));
    }
    serde_json::from_str::<String>(text).ok().map(Cow::Owned)
}

/// The FIXTURES §2.1.2 checks in their order, on what the params say
fn check(
    request: &Request,
    headers: &(impl Headers + ?Sized),
    supported: &[&'static str],
    tool_params: &dyn Fn(&str) -> Option<Vec<HeaderParam>>,
    params: &Facts<'_>,
) -> Result<(), HttpResponse> {
    let id = Some(&request.id);
    let Some(meta) = &params.meta else {
        return Err(invalid_meta(request, "params._meta is missing"));
    };
    let Some(version) = meta.version.as_deref() else {
        return Err(invalid_meta(
            request,
            &format!("params._meta lacks \"{}\"", meta::PROTOCOL_VERSION),
        ));
    };
    if !meta
        .capabilities
        .is_some_and(|c| c.get().trim_start().starts_with('{'))
    {
        return Err(invalid_meta(
            request,
            &format!("params._meta lacks \"{}\"", meta::CLIENT_CAPABILITIES),
        ));
    }
    let header = headers.get(MCP_PROTOCOL_VERSION).map(str::trim);
    if header != Some(version) {
        return Err(mismatch(
            request,
            &format!(
                "the {MCP_PROTOCOL_VERSION} header ({}) does not match _meta (\"{version}\")",
                header.map_or("missing".to_owned(), |h| format!("\"{h}\""))
            ),
        ));
    }
    if !supported.contains(&version) {
        let error = ErrorObject::new(
            code::UNSUPPORTED_PROTOCOL_VERSION,
            format!("Unsupported protocol version: {version}"),
        )
        .with_data(&json!({ "supported": supported, "requested": version }));
        return Err(HttpResponse::json_error(400, id, &error));
    }
    match headers.get(MCP_METHOD).map(str::trim) {
        Some(m) if m == request.method => {}
        Some(m) => {
            return Err(mismatch(
                request,
                &format!(
                    "the {MCP_METHOD} header (\"{m}\") does not match the method \"{}\"",
                    request.method
                ),
            ));
        }
        None => {
            return Err(mismatch(
                request,
                &format!("the {MCP_METHOD} header is missing"),
            ));
        }
    }
    if let Some(member) = name_member(&request.method)
        && let Some(body) = params.member(member)
    {
        let Some(raw) = headers.get(MCP_NAME) else {
            return Err(mismatch(
                request,
                &format!("the {MCP_NAME} header is missing"),
            ));
        };
        let decoded = header_value::decoded(raw.trim()).ok();
        if decoded.as_deref().map(str::trim) != Some(body.trim()) {
            return Err(mismatch(
                request,
                &format!("the {MCP_NAME} header does not match params.{member}"),
            ));
        }
    }
    if request.method == "tools/call"
        && let Some(name) = params.member("name")
        && let Some(mirrors) = tool_params(&name)
    {
        let arguments: Map<String, Value> = params
            .arguments
            .and_then(|a| serde_json::from_str(a.get()).ok())
            .unwrap_or_default();
        for mirror in &mirrors {
            check_param(request, headers, mirror, arguments.get(&mirror.property))?;
        }
    }
    Ok(())
}

/// How deep params may nest: serde_json's limit for a `Value`, which the sessions and
/// handlers parse them into
const MAX_DEPTH: usize = 127;

/// Whether JSON `text` nests arrays and objects deeper than `limit` (strings skipped)
fn nests_deeper(text: &[u8], limit: usize) -> bool {
    // No more opening brackets than the limit (in strings or not) cannot nest deeper: a
    // vectorised count (`memchr2`, stopped past the limit) spares almost every request the
    // exact scan.
    if memchr::memchr2_iter(b'[', b'{', text).nth(limit).is_none() {
        return false;
    }
    let mut depth = 0_usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in text {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// The members of a 2026 request's params the checks read, borrowed from its text
#[derive(serde::Deserialize)]
struct View<'a> {
    /// Read in the same pass: params whose `_meta` is not an object count as without one
    #[serde(rename = "_meta", default, borrow)]
    meta: Option<MetaView<'a>>,
    #[serde(default, borrow)]
    name: Option<&'a RawValue>,
    #[serde(default, borrow)]
    uri: Option<&'a RawValue>,
    #[serde(rename = "taskId", default, borrow)]
    task_id: Option<&'a RawValue>,
    #[serde(default, borrow)]
    arguments: Option<&'a RawValue>,
}

/// `params._meta`'s envelope members
#[derive(serde::Deserialize)]
struct MetaView<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", default, borrow)]
    version: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", default, borrow)]
    capabilities: Option<&'a RawValue>,
}

/// One `Mcp-Param-*` header against its argument
fn check_param(
    request: &Request,
    headers: &(impl Headers + ?Sized),
    mirror: &HeaderParam,
    argument: Option<&Value>,
) -> Result<(), HttpResponse> {
    let expected = match argument {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::Bool(b)) => b.to_string(),
        // Not a primitive: the tool's own argument validation refuses it.
        Some(_) => return Ok(()),
    };
    let Some(raw) = headers.get(&mirror.header) else {
        return Err(mismatch(
            request,
            &format!("the {} header is missing", mirror.header),
        ));
    };
    match header_value::decoded(raw) {
        Ok(value) if value == expected => Ok(()),
        Ok(_) => Err(mismatch(
            request,
            &format!(
                "the {} header does not match argument `{}`",
                mirror.header, mirror.property
            ),
        )),
        Err(e) => Err(mismatch(
            request,
            &format!("the {} header is malformed: {e}", mirror.header),
        )),
    }
}

fn invalid_meta(request: &Request, why: &str) -> HttpResponse {
    HttpResponse::json_error(400, Some(&request.id), &ErrorObject::invalid_params(why))
}

fn mismatch(request: &Request, why: &str) -> HttpResponse {
    let error = ErrorObject::new(code::HEADER_MISMATCH, format!("Header mismatch: {why}"));
    HttpResponse::json_error(400, Some(&request.id), &error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::RequestId;

    #[test]
    fn one_pass_answers_as_two_and_reads_the_params_as_the_session_does() {
        // The one pass must give every request the answer the checks gave on a borrowed
        // view, and the session what it reads from the params itself; params the pass
        // refuses go the old way.
        let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
        let meta_and = |more: &str| {
            format!(
                r#""_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}},{more}}}"#
            )
        };
        let cases: Vec<(&str, String)> = vec![
            ("tools/call", format!(r#"{{"name":"echo","arguments":{{"text":"hi"}},{meta}}}"#)),
            ("tools/call", format!(r#"{{"name":"e\u0063ho",{meta}}}"#)),
            ("tools/call", format!(r#"{{"name":"other",{meta}}}"#)),
            ("tools/call", format!(r#"{{"name":5,{meta}}}"#)),
            ("tools/call", format!(r#"{{"name":"echo","name":"echo",{meta}}}"#)),
            ("tools/call", format!(r#"{{"name":"echo","inputResponses":5,{meta}}}"#)),
            ("tools/call", format!(r#"{{"name":"echo","requestState":"s","inputResponses":{{"a":{{"x":1}}}},{meta}}}"#)),
            ("tools/call", format!(r#"{{"name":"echo","task":{{"ttl":"x"}},{meta}}}"#)),
            ("tools/call", format!(r#"{{"name":"echo",{}}}"#, meta_and(r#""progressToken":"p","io.modelcontextprotocol/logLevel":"info""#))),
            ("tools/call", format!(r#"{{"name":"echo",{}}}"#, meta_and(r#""progressToken":[1]"#))),
            ("tools/call", r#"{"name":"echo"}"#.to_owned()),
            ("tools/call", r#"{"name":"echo","_meta":null}"#.to_owned()),
            ("tools/call", r#"{"name":"echo","_meta":5}"#.to_owned()),
            ("tools/call", r#"{"name":"echo","_meta":["2026-07-28",{}]}"#.to_owned()),
            ("tools/call", r#"{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":7,"io.modelcontextprotocol/clientCapabilities":{}}}"#.to_owned()),
            ("tools/call", r#"{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#.to_owned()),
            ("tools/call", r#"{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}}"#.to_owned()),
            ("tools/call", r#"{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"1999-01-01","io.modelcontextprotocol/clientCapabilities":{}}}"#.to_owned()),
            ("tools/list", format!(r#"{{{meta}}}"#)),
            ("resources/read", format!(r#"{{"uri":"test://a",{meta}}}"#)),
            ("tasks/get", format!(r#"{{"taskId":"t1",{meta}}}"#)),
            ("tools/list", "[1,2]".to_owned()),
        ];
        let header_sets: [&[(&str, &str)]; 3] = [
            &[("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Name", "echo")],
            &[
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Name", "test://a"),
                ("Mcp-Name", "t1"),
            ],
            &[("MCP-Protocol-Version", "2025-11-25")],
        ];
        let tool_params = |name: &str| {
            (name == "echo").then(|| {
                vec![HeaderParam {
                    property: "text".to_owned(),
                    header: "Mcp-Param-Text".to_owned(),
                }]
            })
        };
        let mut one_pass = 0;
        for (method, params) in &cases {
            for set in header_sets {
                let mut headers = vec![("Mcp-Method", *method)];
                headers.extend_from_slice(set);
                headers.push(("Mcp-Param-Text", "hi"));
                let request = Request {
                    id: RequestId::Number(1),
                    method: (*method).to_owned(),
                    params: Some(RawValue::from_string(params.clone()).unwrap()),
                };
                let now = validate(&request, &headers[..], &["2026-07-28"], &tool_params);
                let before = two_passes(&request, &headers[..], &["2026-07-28"], &tool_params);
                match (&now, &before) {
                    (Err(a), Err(b)) => assert_eq!(a, b, "{method} {params} {set:?}"),
                    (Ok(_), Ok(())) => {}
                    _ => panic!("{method} {params} {set:?}: {now:?} / {before:?}"),
                }
                if let Ok(Some(mut kept)) = now {
                    one_pass += 1;
                    // What the route reads is held to its own reading in the route's tests.
                    kept.call = None;
                    let session: ParamsWithMeta = serde_json::from_str(params).unwrap();
                    assert_eq!(format!("{kept:?}"), format!("{session:?}"), "{params}");
                }
            }
        }
        assert!(one_pass >= 6, "{one_pass}");
    }

    #[test]
    fn a_json_string_is_borrowed_without_escapes_and_decoded_with_them() {
        // Whether the text was borrowed, and the text.
        let read = |text: &str| {
            let raw = RawValue::from_string(text.to_owned()).unwrap();
            json_str(&raw).map(|s| (matches!(s, Cow::Borrowed(_)), s.into_owned()))
        };
        let borrowed = |s: &str| Some((true, s.to_owned()));
        let decoded = |s: &str| Some((false, s.to_owned()));
        assert_eq!(read(r#""echo""#), borrowed("echo"));
        assert_eq!(read("\"\u{e9}t\u{e9}\""), borrowed("\u{e9}t\u{e9}"));
        assert_eq!(read(r#""""#), borrowed(""));
        assert_eq!(read(r#""e\u0063ho""#), decoded("echo"));
        assert_eq!(read(r#""a\"b""#), decoded("a\"b"));
        assert_eq!(read(r#""\\""#), decoded("\\"));
        for other in ["5", "null", "[]", r#"{"a":"b"}"#, "true"] {
            assert_eq!(read(other), None, "{other}");
        }
    }

    #[test]
    fn nesting_is_counted_as_serde_json_counts_it_strings_aside() {
        let nested = |n: usize| "[".repeat(n) + &"]".repeat(n);
        assert!(!nests_deeper(nested(MAX_DEPTH).as_bytes(), MAX_DEPTH));
        assert!(nests_deeper(nested(MAX_DEPTH + 1).as_bytes(), MAX_DEPTH));
        // serde_json agrees on both sides of the limit.
        let depth_ok = (1..200).take_while(|n| serde_json::from_str::<Value>(&nested(*n)).is_ok());
        assert_eq!(depth_ok.last(), Some(MAX_DEPTH));
        let in_text = format!(r#"{{"a":"{}\"{}"}}"#, "[".repeat(500), "{".repeat(500));
        assert!(!nests_deeper(in_text.as_bytes(), MAX_DEPTH));
        // Many brackets side by side are not deep (the count alone would say otherwise).
        let wide = format!("[{}[]]", "[],".repeat(300));
        assert!(!nests_deeper(wide.as_bytes(), MAX_DEPTH));
        let deep_after_wide = format!("[{}{}]", "[],".repeat(300), nested(MAX_DEPTH));
        assert!(nests_deeper(deep_after_wide.as_bytes(), MAX_DEPTH));
    }
}
