//! Typed input from the user: what every binding's `Context::elicit` is made of
//!
//! `elicit::<T>` derives the form from `T` ([`form_of`]: its `schemars` JSON Schema
//! restricted by the core's [`ElicitationSchema::from_json_schema`]), asks with the
//! binding's era-agnostic `Context::ask` ([`question`]: one `elicitation/create` under a key
//! of its own), and decodes the answer into `T` ([`answer`]).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::schema::{
    CallToolResult, ElicitAction, ElicitParams, ElicitationSchema, FormSchemaError, InputRequest,
    InputRequests, InputResponse, InputResponses,
};
use mcp_sansio::server::AskFailure;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// What the user did with a form: accepted it (with the values, decoded), declined it, or
/// dismissed it
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Elicited<T> {
    /// The user submitted the form; its values
    Accepted(T),
    /// The user explicitly declined to answer
    Declined,
    /// The user dismissed the form without choosing
    Cancelled,
}

impl<T> Elicited<T> {
    /// The values, if the user accepted
    pub fn accepted(self) -> Option<T> {
        match self {
            Self::Accepted(value) => Some(value),
            Self::Declined | Self::Cancelled => None,
        }
    }

    /// Whether the user accepted
    pub fn is_accepted(&self) -> bool {
        matches!(self, Self::Accepted(_))
    }
}

/// Why `Context::elicit` has no answer
///
/// Turn it into the request's error with `?` (it converts into an [`ErrorObject`], see
/// [`to_error`](Self::to_error)), or into a tool error the model sees with
/// [`to_tool_result`](Self::to_tool_result).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ElicitError {
    /// `T` cannot be a form (a nested object, a list of anything but an enum, a map, ...):
    /// the error names the field. Found before anything is sent; a bug of the server.
    #[error("the elicitation form cannot be built: {0}")]
    Form(#[from] FormSchemaError),
    /// The client could not be asked, or did not answer (see [`AskFailure`]; on a 2026
    /// request [`AskFailure::Cancelled`] means this run of the handler ended with
    /// `input_required`, and any error may be returned: it is dropped)
    #[error(transparent)]
    Ask(#[from] AskFailure),
    /// The client accepted with values that do not decode into `T` (it ignored the form), or
    /// answered with something that is no elicitation result
    #[error("the client's answer does not fit the form: {reason}")]
    Answer {
        /// Why, in words (the decoding error)
        reason: String,
    },
}

impl ElicitError {
    /// The JSON-RPC error to answer the request with: -32603 for a form that cannot be
    /// built, [`AskFailure::to_error`] for a failed ask (-32021 when the client lacks the
    /// `elicitation` capability), -32602 for an answer that does not fit
    pub fn to_error(&self) -> ErrorObject {
        match self {
            Self::Form(_) => ErrorObject::internal_error(self),
            Self::Ask(failure) => failure.to_error(),
            Self::Answer { .. } => ErrorObject::invalid_params(self),
        }
    }

    /// A tool error (`isError: true`) with this error's text, for a tool that would rather
    /// tell the model than fail the request
    pub fn to_tool_result(&self) -> CallToolResult {
        CallToolResult::error(self.to_string())
    }
}

impl From<ElicitError> for ErrorObject {
    fn from(error: ElicitError) -> Self {
        error.to_error()
    }
}

/// The keys of one handler run's typed questions: `elicit-0`, `sample-1`, `elicit-2`, ...
/// in the order it asks (shared by the clones of its `Context`)
///
/// A 2026 retry runs the handler again from the start, and its answers come back under the
/// keys it asked with; counting keeps two questions of one run apart, in both eras.
#[derive(Debug, Clone, Default)]
pub struct Keys(Arc<crate::peer::RunCounters>);

impl Keys {
    /// Keys counted in `counters` (shared with the run's [`Reports`](crate::peer::Reports))
    pub(crate) fn of(counters: Arc<crate::peer::RunCounters>) -> Self {
        Self(counters)
    }

    /// The next key, `<kind>-<n>`
    pub(crate) fn next(&self, kind: &str) -> String {
        format!("{kind}-{}", self.0.keys.fetch_add(1, Ordering::Relaxed))
    }
}

/// A run's reports and the keys of its questions, counted in one shared place
pub(crate) fn run_counters() -> (crate::peer::Reports, Keys) {
    let counters = Arc::new(crate::peer::RunCounters::default());
    (
        crate::peer::Reports::of(Arc::clone(&counters)),
        Keys::of(counters),
    )
}

/// The form for `T`: its JSON Schema (`schemars`) restricted to what a form holds
///
/// # Errors
/// [`FormSchemaError`], naming the field a form cannot hold.
#[cfg(feature = "schemars")]
pub fn form_of<T: schemars::JsonSchema>() -> Result<ElicitationSchema, FormSchemaError> {
    let schema = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default();
    ElicitationSchema::from_json_schema(&schema)
}

/// The input request of one elicitation, under the run's next key: `(key, requests)`
pub fn question(
    keys: &Keys,
    message: impl Into<String>,
    form: ElicitationSchema,
) -> (String, InputRequests) {
    let key = keys.next("elicit");
    let request = InputRequest::Elicit(ElicitParams::form(message, form));
    let requests = InputRequests::from([(key.clone(), request)]);
    (key, requests)
}

/// The answer to the question under `key`, decoded into `T`
///
/// # Errors
/// [`ElicitError::Answer`] when there is no elicitation result under `key` or accepted
/// values do not decode into `T`.
pub fn answer<T: DeserializeOwned>(
    key: &str,
    mut responses: InputResponses,
) -> Result<Elicited<T>, ElicitError> {
    let result = match responses.remove(key) {
        Some(InputResponse::Elicit(result)) => result,
        Some(_) => {
            return Err(ElicitError::Answer {
                reason: "the answer is no elicitation result".to_owned(),
            });
        }
        None => {
            return Err(ElicitError::Answer {
                reason: format!("no answer under `{key}`"),
            });
        }
    };
    match result.action {
        ElicitAction::Accept => {
            let content = serde_json::to_value(result.content.unwrap_or_default())
                .unwrap_or(Value::Object(serde_json::Map::new()));
            serde_json::from_value(content)
                .map(Elicited::Accepted)
                .map_err(|e| ElicitError::Answer {
                    reason: e.to_string(),
                })
        }
        ElicitAction::Decline => Ok(Elicited::Declined),
        // `Cancel`, and any action a later version may add: the user did not answer
        _ => Ok(Elicited::Cancelled),
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    #[derive(Debug, PartialEq, Deserialize)]
    struct Name {
        name: String,
        age: Option<u8>,
    }

    fn responses(key: &str, answer: Value) -> InputResponses {
        InputResponses::from([(key.to_owned(), serde_json::from_value(answer).unwrap())])
    }

    #[test]
    fn each_question_of_a_run_gets_its_own_key_and_the_answer_decodes() {
        let keys = Keys::default();
        let (first, _) = question(&keys, "a?", ElicitationSchema::new());
        let (second, requests) = question(&keys.clone(), "b?", ElicitationSchema::new());
        assert_eq!((first.as_str(), second.as_str()), ("elicit-0", "elicit-1"));
        assert_eq!(
            serde_json::to_value(&requests).unwrap(),
            json!({"elicit-1": {"method": "elicitation/create", "params": {
                "message": "b?", "requestedSchema": {"type": "object", "properties": {}}}}})
        );
        let accepted = responses("k", json!({"action": "accept", "content": {"name": "Ada"}}));
        assert_eq!(
            answer::<Name>("k", accepted).unwrap(),
            Elicited::Accepted(Name {
                name: "Ada".into(),
                age: None
            })
        );
        let declined = responses("k", json!({"action": "decline"}));
        assert_eq!(answer::<Name>("k", declined).unwrap(), Elicited::Declined);
        let cancelled = responses("k", json!({"action": "cancel"}));
        assert_eq!(answer::<Name>("k", cancelled).unwrap(), Elicited::Cancelled);
    }

    #[test]
    fn an_answer_that_does_not_fit_is_a_clear_error() {
        let wrong = responses("k", json!({"action": "accept", "content": {"name": 7}}));
        let error = answer::<Name>("k", wrong).unwrap_err();
        assert!(
            error.to_string().starts_with(
                "the client's answer does not fit the form: invalid type: integer `7`"
            ),
            "{error}"
        );
        assert_eq!(error.to_error().code, -32602);
        let missing = answer::<Name>("other", InputResponses::new()).unwrap_err();
        assert_eq!(
            missing.to_string(),
            "the client's answer does not fit the form: no answer under `other`"
        );
    }
}
