//! What a handle hands out: the bytes to write and the events, each kept inside the handle
//! until the caller's next poll of its kind (only `poll_transmit` touches [`Outputs::transmit`],
//! only [`Outputs::next_event`] the event's buffer: the header promises it)

use std::collections::VecDeque;

use mcp_sansio::{CallError, CloseReason, ErrorObject, Progress};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

/// The handle's outputs: the borrowed buffers of the last `poll_transmit` and `poll_event`,
/// and the events converted to JSON that wait for `poll_event`
#[derive(Debug, Default)]
pub(crate) struct Outputs {
    /// The bytes of the last `poll_transmit`
    pub(crate) transmit: Vec<u8>,
    /// The last event's JSON followed by a NUL byte
    event: Vec<u8>,
    /// Events converted, in order, waiting for `poll_event`, each with what handing it out
    /// retires
    queue: VecDeque<(String, Retire)>,
}

/// What handing an event out ends: the application has now been told, so the requests it
/// concerns are no longer open
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Retire {
    /// Nothing
    Nothing,
    /// The peer's request of this number (a `cancelled` event)
    Request(u64),
    /// Every open request and input (a `closed` event)
    All,
}

impl Outputs {
    /// Queues one event
    pub(crate) fn push(&mut self, event: &Value, retire: Retire) {
        self.queue.push_back((render(event), retire));
    }

    /// How many events wait
    pub(crate) fn queued(&self) -> usize {
        self.queue.len()
    }

    /// Moves the next event into the borrowed buffer: its JSON (without the NUL) and what it
    /// retires, or `None`
    pub(crate) fn next_event(&mut self) -> Option<(&[u8], Retire)> {
        let (json, retire) = self.queue.pop_front()?;
        self.event.clear();
        self.event.extend_from_slice(json.as_bytes());
        self.event.push(0);
        if self.queue.is_empty() && self.queue.capacity() > 64 {
            self.queue.shrink_to(64);
        }
        Some((&self.event[..json.len()], retire))
    }

    /// Forgets what the last `poll_transmit` handed out, keeping a modest buffer
    pub(crate) fn reset_transmit(&mut self) {
        self.transmit.clear();
        if self.transmit.capacity() > 1 << 20 {
            self.transmit.shrink_to(64 * 1024);
        }
    }
}

/// An event's JSON text, compact, with `"kind"` first and the `"request"` or `"input"`
/// number right after it (the header promises it: C code may read both with a prefix
/// match, before any params that could hold the same key names)
fn render(event: &Value) -> String {
    const FIRST: [&str; 3] = ["kind", "request", "input"];
    let Value::Object(map) = event else {
        return event.to_string();
    };
    let leading = FIRST.iter().filter_map(|key| map.get_key_value(*key));
    let rest = map.iter().filter(|(key, _)| !FIRST.contains(&key.as_str()));
    let mut out = String::from("{");
    for (i, (key, value)) in leading.chain(rest).enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&Value::from(key.as_str()).to_string());
        out.push(':');
        out.push_str(&value.to_string());
    }
    out.push('}');
    out
}

/// Raw params as a JSON value (absent params are `{}`)
pub(crate) fn params_value(params: Option<&RawValue>) -> Value {
    params
        .and_then(|raw| serde_json::from_str(raw.get()).ok())
        .unwrap_or_else(|| Value::Object(Map::new()))
}

/// An error object as JSON: `{"code", "message", "data"?}`
pub(crate) fn error_value(error: &ErrorObject) -> Value {
    serde_json::to_value(error)
        .unwrap_or_else(|_| json!({"code": error.code, "message": error.message}))
}

/// The code a local failure is reported with in a `response` event's `error`
///
/// -32001 and -32000 are what the official SDKs use for a timed-out request and a closed
/// connection; the rest are the JSON-RPC internal error.
fn local_code(error: &CallError) -> i64 {
    match error {
        CallError::TimedOut => -32001,
        CallError::SessionClosed | CallError::Transport(_) => -32000,
        CallError::Cancelled => -32800,
        _ => -32603,
    }
}

/// The `failure` word of a `response` event's error: who or what ended the request
fn failure_word(error: &CallError) -> &'static str {
    match error {
        CallError::Remote(_) => "remote",
        CallError::TimedOut => "timeout",
        CallError::Cancelled => "cancelled",
        CallError::SessionClosed => "closed",
        CallError::InvalidResult(_) => "invalid_result",
        CallError::TooManyInputRounds { .. } => "too_many_input_rounds",
        CallError::Transport(_) => "transport",
        CallError::TooLarge { .. } => "too_large",
        _ => "other",
    }
}

/// A `response` event: `{"kind":"response","request":N,"result":{..}}` or
/// `{"kind":"response","request":N,"error":{..},"failure":".."}`
pub(crate) fn response_event(request: u64, outcome: &Result<Box<RawValue>, CallError>) -> Value {
    match outcome {
        Ok(raw) => json!({
            "kind": "response",
            "request": request,
            "result": params_value(Some(raw)),
        }),
        Err(error) => {
            let object = match error {
                CallError::Remote(remote) => error_value(remote),
                other => json!({"code": local_code(other), "message": other.to_string()}),
            };
            json!({
                "kind": "response",
                "request": request,
                "error": object,
                "failure": failure_word(error),
            })
        }
    }
}

/// A `progress` event
pub(crate) fn progress_event(request: u64, progress: &Progress) -> Value {
    let mut event = json!({"kind": "progress", "request": request, "progress": progress.progress});
    if let Some(total) = progress.total {
        event["total"] = json!(total);
    }
    if let Some(message) = &progress.message {
        event["message"] = json!(message);
    }
    event
}

/// A `notification` event
pub(crate) fn notification_event(method: &str, params: Option<&RawValue>) -> Value {
    json!({"kind": "notification", "method": method, "params": params_value(params)})
}

/// A `closed` event: `reason` is a word, `message` the sentence
pub(crate) fn closed_event(reason: &CloseReason) -> Value {
    let word = match reason {
        CloseReason::PeerClosed => "peer_closed",
        CloseReason::Local => "local",
        CloseReason::Handshake(_) => "handshake",
        CloseReason::Transport(_) => "transport",
        _ => "other",
    };
    json!({"kind": "closed", "reason": word, "message": reason.to_string()})
}

/// An event the C API has no dedicated shape for: its kind and the core's description
pub(crate) fn other_event(kind: &str, debug: &dyn std::fmt::Debug) -> Value {
    json!({"kind": kind, "debug": format!("{debug:?}")})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_and_number_come_first() {
        let event =
            json!({"arguments": {"request": 9}, "kind": "request", "request": 3, "method": "m"});
        let text = render(&event);
        assert!(
            text.starts_with(r#"{"kind":"request","request":3,"#),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), event);
        let text = render(&json!({"requests": {}, "input": 4, "kind": "input_required"}));
        assert!(
            text.starts_with(r#"{"kind":"input_required","input":4,"#),
            "{text}"
        );
        assert_eq!(
            render(&json!({"kind": "unblocked"})),
            r#"{"kind":"unblocked"}"#
        );
    }
}
