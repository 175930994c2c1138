//! Sampling with a typed answer: what every binding's `Context::sample_text` is made of
//!
//! `sample_text` asks the client's model one user message ([`question`]: one
//! `sampling/createMessage` under a key of its own, through the era-agnostic `Context::ask`)
//! and keeps the text of its answer ([`answer`]).

use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::schema::{
    CallToolResult, CreateMessageParams, InputRequest, InputRequests, InputResponse,
    InputResponses, SamplingContent, SamplingContents, SamplingMessage,
};
use mcp_sansio::server::AskFailure;

use crate::elicit::Keys;

/// Why `Context::sample_text` has no text
///
/// Turn it into the request's error with `?` (it converts into an [`ErrorObject`], see
/// [`to_error`](Self::to_error)), or into a tool error with
/// [`to_tool_result`](Self::to_tool_result).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SampleError {
    /// The client could not be asked, or did not answer (see [`AskFailure`]; on a 2026
    /// request [`AskFailure::Cancelled`] means this run of the handler ended with
    /// `input_required`, and any error may be returned: it is dropped)
    #[error(transparent)]
    Ask(#[from] AskFailure),
    /// The client answered with no text (only images, audio or tool calls), or with
    /// something that is no sampling result
    #[error("the client's sampling answer has no text: {reason}")]
    Answer {
        /// Why, in words
        reason: String,
    },
}

impl SampleError {
    /// The JSON-RPC error to answer the request with: [`AskFailure::to_error`] for a failed
    /// ask (-32021 when the client lacks the `sampling` capability), -32603 for an answer
    /// with no text
    pub fn to_error(&self) -> ErrorObject {
        match self {
            Self::Ask(failure) => failure.to_error(),
            Self::Answer { .. } => ErrorObject::internal_error(self),
        }
    }

    /// A tool error (`isError: true`) with this error's text
    pub fn to_tool_result(&self) -> CallToolResult {
        CallToolResult::error(self.to_string())
    }
}

impl From<SampleError> for ErrorObject {
    fn from(error: SampleError) -> Self {
        error.to_error()
    }
}

/// The input request of one sampling of `prompt` (a user message, at most `max_tokens`),
/// under the run's next key: `(key, requests)`
pub fn question(
    keys: &Keys,
    prompt: impl Into<String>,
    max_tokens: u64,
) -> (String, InputRequests) {
    let key = keys.next("sample");
    let params = CreateMessageParams::new(vec![SamplingMessage::user(prompt)], max_tokens);
    let requests = InputRequests::from([(key.clone(), InputRequest::CreateMessage(params))]);
    (key, requests)
}

/// The text of the answer under `key` (its text blocks joined by blank lines)
///
/// # Errors
/// [`SampleError::Answer`] when there is no sampling result under `key`, or it has no text.
pub fn answer(key: &str, mut responses: InputResponses) -> Result<String, SampleError> {
    let no = |reason: &str| SampleError::Answer {
        reason: reason.to_owned(),
    };
    let result = match responses.remove(key) {
        Some(InputResponse::CreateMessage(result)) => result,
        Some(_) => return Err(no("the answer is no sampling result")),
        None => return Err(no(&format!("no answer under `{key}`"))),
    };
    let blocks = match result.content {
        SamplingContents::One(block) => vec![block],
        SamplingContents::Many(blocks) => blocks,
        _ => Vec::new(),
    };
    let texts: Vec<String> = blocks
        .into_iter()
        .filter_map(|block| match block {
            SamplingContent::Text(text) => Some(text.text),
            _ => None,
        })
        .collect();
    if texts.is_empty() {
        return Err(no("it holds no text block"));
    }
    Ok(texts.join("\n\n"))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn responses(answer: Value) -> InputResponses {
        InputResponses::from([("k".to_owned(), serde_json::from_value(answer).unwrap())])
    }

    #[test]
    fn the_question_is_one_user_message_and_the_answer_its_text() {
        let keys = Keys::default();
        let (key, requests) = question(&keys, "Say hi", 50);
        assert_eq!(key, "sample-0");
        assert_eq!(
            serde_json::to_value(&requests).unwrap(),
            json!({"sample-0": {"method": "sampling/createMessage", "params": {
                "messages": [{"role": "user", "content": {"type": "text", "text": "Say hi"}}],
                "maxTokens": 50}}})
        );
        let one = responses(json!({"role": "assistant", "model": "m",
            "content": {"type": "text", "text": "hi"}}));
        assert_eq!(answer("k", one).unwrap(), "hi");
        let many = responses(json!({"role": "assistant", "model": "m", "content": [
            {"type": "text", "text": "a"},
            {"type": "image", "data": "AA==", "mimeType": "image/png"},
            {"type": "text", "text": "b"}]}));
        assert_eq!(answer("k", many).unwrap(), "a\n\nb");
    }

    #[test]
    fn an_answer_without_text_is_a_clear_error() {
        let image = responses(json!({"role": "assistant", "model": "m",
            "content": {"type": "image", "data": "AA==", "mimeType": "image/png"}}));
        let error = answer("k", image).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the client's sampling answer has no text: it holds no text block"
        );
        assert_eq!(error.to_error().code, -32603);
    }
}
