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

use serde_json::{Map, Value, json};

use super::headers::{Headers, MCP_METHOD, MCP_NAME, MCP_PROTOCOL_VERSION};
use super::response::HttpResponse;
use super::{HeaderParam, decode_header_value};
use crate::jsonrpc::{ErrorObject, Request, code};
use crate::schema::meta;

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
/// `Mcp-Param-*` mirrors of a tool by name.
pub(crate) fn validate(
    request: &Request,
    headers: &(impl Headers + ?Sized),
    supported: &[&'static str],
    tool_params: &dyn Fn(&str) -> Option<Vec<HeaderParam>>,
) -> Result<(), HttpResponse> {
    let id = Some(&request.id);
    let params: Value = request
        .params
        .as_deref()
        .and_then(|p| serde_json::from_str(p.get()).ok())
        .unwrap_or(Value::Null);
    let meta_obj = params.get("_meta").and_then(Value::as_object);
    let Some(meta_obj) = meta_obj else {
        return Err(invalid_meta(request, "params._meta is missing"));
    };
    let Some(version) = meta_obj.get(meta::PROTOCOL_VERSION).and_then(Value::as_str) else {
        return Err(invalid_meta(
            request,
            &format!("params._meta lacks \"{}\"", meta::PROTOCOL_VERSION),
        ));
    };
    if !meta_obj
        .get(meta::CLIENT_CAPABILITIES)
        .is_some_and(Value::is_object)
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
        && let Some(body) = params.get(member).and_then(Value::as_str)
    {
        let Some(raw) = headers.get(MCP_NAME) else {
            return Err(mismatch(
                request,
                &format!("the {MCP_NAME} header is missing"),
            ));
        };
        let decoded = decode_header_value(raw.trim()).ok();
        if decoded.as_deref().map(str::trim) != Some(body.trim()) {
            return Err(mismatch(
                request,
                &format!("the {MCP_NAME} header does not match params.{member}"),
            ));
        }
    }
    if request.method == "tools/call"
        && let Some(name) = params.get("name").and_then(Value::as_str)
        && let Some(mirrors) = tool_params(name)
    {
        let empty = Map::new();
        let arguments = params
            .get("arguments")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        for mirror in &mirrors {
            check_param(request, headers, mirror, arguments.get(&mirror.property))?;
        }
    }
    Ok(())
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
    match decode_header_value(raw) {
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
