//! The first look at a request: HTTP method, content type, `Accept`, size, JSON, and which
//! wire (2025 or 2026) a POST is on
//!
//! The order of the checks (each failure is a complete response):
//! 0. the header fields: a value that is not UTF-8, or two `Host` fields: 400;
//! 1. `Host` / `Origin` (DNS rebinding): 421 / 403;
//! 2. the HTTP method: GET, POST and DELETE only, else 405;
//! 3. POST: `Content-Type: application/json`, else 415;
//! 4. POST: `Accept` allows `application/json` or `text/event-stream`, else 406;
//! 5. POST: the body fits [`HttpConfig::max_body_size`], else 413;
//! 6. POST: the body is UTF-8 JSON, else 400 with -32700;
//! 7. POST: the body is one JSON-RPC message (no batch), else 400 with -32600.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::config::HttpConfig;
use super::headers::{
    Accepts, Headers, MCP_PROTOCOL_VERSION, MCP_SESSION_ID, check_fields, is_json_content_type,
};
use super::response::HttpResponse;
use crate::jsonrpc::{self, Decoded, ErrorObject, Message};
use crate::schema::meta;
use crate::version::{Era, ProtocolVersion};

/// Which Streamable HTTP wire a request is on
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Wire {
    /// 2025: stateful, `Mcp-Session-Id`, GET streams, resumability
    Stateful,
    /// 2026: stateless, every POST self-contained
    Stateless,
}

/// A request that passed the transport checks
#[derive(Debug)]
pub(crate) enum Classified {
    Post {
        wire: Wire,
        message: Message,
        accepts: Accepts,
    },
    Get,
    Delete,
}

/// The 2026 rule (FIXTURES §2.1): no session id, and a modern version header or a version
/// in `params._meta`
pub(crate) fn wire_of(headers: &(impl Headers + ?Sized), params: Option<&RawValue>) -> Wire {
    if headers.get(MCP_SESSION_ID).is_some() {
        return Wire::Stateful;
    }
    let modern_header = headers
        .get(MCP_PROTOCOL_VERSION)
        .is_some_and(|v| ProtocolVersion::parse(v.trim()).is_none_or(|p| p.era() == Era::Modern));
    if modern_header || meta_version(params).is_some() {
        Wire::Stateless
    } else {
        Wire::Stateful
    }
}

/// `params._meta["io.modelcontextprotocol/protocolVersion"]`, when it is a string
pub(crate) fn meta_version(params: Option<&RawValue>) -> Option<String> {
    #[derive(Deserialize)]
    struct P {
        #[serde(rename = "_meta", default)]
        meta: Option<serde_json::Map<String, serde_json::Value>>,
    }
    let p: P = serde_json::from_str(params?.get()).ok()?;
    p.meta?
        .get(meta::PROTOCOL_VERSION)?
        .as_str()
        .map(str::to_owned)
}

pub(crate) fn classify(
    config: &HttpConfig,
    method: &str,
    headers: &(impl Headers + ?Sized),
    body: &[u8],
) -> Result<Classified, HttpResponse> {
    check_fields(headers)?;
    config.hosts.check(headers)?;
    match method {
        "GET" => return Ok(Classified::Get),
        "DELETE" => return Ok(Classified::Delete),
        "POST" => {}
        _ => {
            let error = ErrorObject::invalid_request(format!("method {method} is not allowed"));
            return Err(HttpResponse::json_error(405, None, &error)
                .with_header("Allow", "GET, POST, DELETE"));
        }
    }
    if !headers
        .get("Content-Type")
        .is_some_and(is_json_content_type)
    {
        let error = ErrorObject::invalid_request("the body must be Content-Type: application/json");
        return Err(HttpResponse::json_error(415, None, &error));
    }
    let accepts = Accepts::of(headers);
    if !accepts.any() {
        let error =
            ErrorObject::invalid_request("Accept must allow application/json or text/event-stream");
        return Err(HttpResponse::json_error(406, None, &error));
    }
    if body.len() > config.max_body_size {
        return Err(oversize(config.max_body_size));
    }
    let Ok(text) = std::str::from_utf8(body) else {
        let error = ErrorObject::parse_error("the body is not UTF-8");
        return Err(HttpResponse::json_error(400, None, &error));
    };
    let message = match jsonrpc::decode(text) {
        Decoded::Single(Ok(message)) => message,
        Decoded::Single(Err(invalid)) => {
            return Err(HttpResponse::json_error(
                400,
                invalid.id.as_ref(),
                &invalid.error,
            ));
        }
        Decoded::Batch(_) => {
            let error = ErrorObject::invalid_request("JSON-RPC batches are not accepted over HTTP");
            return Err(HttpResponse::json_error(400, None, &error));
        }
    };
    let params = match &message {
        Message::Request(r) => r.params.as_deref(),
        Message::Notification(n) => n.params.as_deref(),
        Message::Response(_) => None,
    };
    let wire = wire_of(headers, params);
    Ok(Classified::Post {
        wire,
        message,
        accepts,
    })
}

pub(crate) fn oversize(limit: usize) -> HttpResponse {
    let error = ErrorObject::invalid_request(format!(
        "the body is larger than the limit of {limit} bytes"
    ));
    HttpResponse::json_error(413, None, &error)
}
