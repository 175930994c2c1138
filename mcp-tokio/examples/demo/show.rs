//! How the demo shows what a server answers, as a person reads it: text as text, other content
//! as a short line (kind, MIME type, size, URI), errors as `error: ..`. No `Debug` dumps.
//!
//! The protocol types are `#[non_exhaustive]`, so every `match` here ends in a wildcard arm:
//! a content kind added by a later version shows as `<kind content>`.

use mcp_sansio::CallError;
use mcp_sansio::schema::{CallToolResult, ContentBlock, PromptMessage, ResourceContents, Role};
use mcp_sansio_tokio::ClientError;
use serde_json::Value;

/// The most characters of one text shown; the rest is counted
pub(crate) const TEXT_LIMIT: usize = 300;
/// The most characters of compact JSON shown (structured content)
pub(crate) const JSON_LIMIT: usize = 200;

/// `text` up to `limit` characters, then `…`
pub(crate) fn clip(text: &str, limit: usize) -> String {
    let text = text.trim_end();
    match text.char_indices().nth(limit) {
        None => text.to_owned(),
        Some((cut, _)) => format!("{}…", text[..cut].trim_end()),
    }
}

/// A text, cut after [`TEXT_LIMIT`] characters
pub(crate) fn text(text: &str) -> String {
    truncate(text, TEXT_LIMIT)
}

/// `text` up to `limit` characters, then `… (N more characters)`
pub(crate) fn truncate(text: &str, limit: usize) -> String {
    let text = text.trim_end();
    match text.char_indices().nth(limit) {
        None => text.to_owned(),
        Some((cut, _)) => {
            let rest = text[cut..].chars().count();
            format!("{}… ({rest} more characters)", &text[..cut])
        }
    }
}

/// The number of bytes base64 `data` decodes to
pub(crate) fn base64_len(data: &str) -> usize {
    let digits = data
        .bytes()
        .filter(|b| !b.is_ascii_whitespace() && *b != b'=')
        .count();
    digits * 3 / 4
}

/// A MIME type, or a stand-in when the server gave none
fn mime(mime_type: Option<&str>) -> &str {
    mime_type.unwrap_or("no MIME type")
}

/// One content block of a tool result or prompt message
pub(crate) fn content(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(t) => text(&t.text),
        ContentBlock::Image(i) => {
            format!("<image, {}, {} bytes>", i.mime_type, base64_len(&i.data))
        }
        ContentBlock::Audio(a) => {
            format!("<audio, {}, {} bytes>", a.mime_type, base64_len(&a.data))
        }
        ContentBlock::ResourceLink(link) => {
            let mut line = format!("<link to {}", link.uri);
            if let Some(mime_type) = &link.mime_type {
                line.push_str(&format!(", {mime_type}"));
            }
            line.push('>');
            line
        }
        ContentBlock::Resource(embedded) => {
            let contents = &embedded.resource;
            match contents {
                ResourceContents::Text(t) => format!(
                    "<resource {}, {}>: {}",
                    t.uri,
                    mime(t.mime_type.as_deref()),
                    truncate(&t.text, 80)
                ),
                _ => format!(
                    "<resource {}>: {}",
                    contents.uri(),
                    resource_contents(contents)
                ),
            }
        }
        other => format!("<{} content>", kind(other)),
    }
}

/// The `type` of a content block, as on the wire
fn kind(block: &ContentBlock) -> String {
    serde_json::to_value(block)
        .ok()
        .and_then(|v| v["type"].as_str().map(str::to_owned))
        .unwrap_or_else(|| "unknown".to_owned())
}

/// Structured content as compact JSON, cut after [`JSON_LIMIT`] characters
pub(crate) fn json(value: &Value) -> String {
    truncate(&value.to_string(), JSON_LIMIT)
}

/// A tool result, one line per block: `error: ..` first when it is an `isError` result;
/// `structuredContent` as compact JSON unless a text block already carries the same JSON
pub(crate) fn tool_result(result: &CallToolResult) -> String {
    let mut lines: Vec<String> = result.content.iter().map(content).collect();
    if let Some(structured) = &result.structured_content {
        let repeated = result.content.iter().any(|block| {
            block
                .as_text()
                .and_then(|t| serde_json::from_str::<Value>(t).ok())
                .is_some_and(|v| &v == structured)
        });
        if !repeated {
            lines.push(format!("structured: {}", json(structured)));
        }
    }
    if lines.is_empty() {
        lines.push("(no content)".to_owned());
    }
    if result.is_error == Some(true) {
        lines[0] = format!("error: {}", lines[0]);
    }
    lines.join("\n")
}

/// Resource contents: the text, or `<blob, N bytes, MIME type>`
pub(crate) fn resource_contents(contents: &ResourceContents) -> String {
    match contents {
        ResourceContents::Text(t) => text(&t.text),
        ResourceContents::Blob(b) => format!(
            "<blob, {} bytes, {}>",
            base64_len(&b.blob),
            mime(b.mime_type.as_deref())
        ),
        other => format!("<contents of {}>", other.uri()),
    }
}

/// Who says a prompt message
pub(crate) fn role(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
        _ => "someone",
    }
}

/// A prompt message as `role: text`
pub(crate) fn prompt_message(message: &PromptMessage) -> String {
    format!("{}: {}", role(message.role), content(&message.content))
}

/// A failed call: `error <code>: <message>` for a JSON-RPC error, else `error: <why>`
pub(crate) fn error(error: &ClientError) -> String {
    match error {
        ClientError::Call(CallError::Remote(e)) => format!("error {}: {}", e.code, e.message),
        other => format!("error: {other}"),
    }
}

/// A call's outcome: the result, or the error
pub(crate) fn outcome(outcome: &Result<CallToolResult, ClientError>) -> String {
    match outcome {
        Ok(result) => tool_result(result),
        Err(e) => error(e),
    }
}
