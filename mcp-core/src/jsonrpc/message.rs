//! Decoded messages

use serde_json::value::RawValue;

use super::error::ErrorObject;
use super::id::RequestId;

/// One decoded message
///
/// Messages compare equal when their fields are equal, raw JSON compared by its text.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Message {
    /// A request, which expects a response with the same id
    Request(Request),
    /// A notification, which expects no response
    Notification(Notification),
    /// A response to a request we sent: a result or an error
    Response(Response),
}

/// A request: a method call that expects a response
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Request {
    /// The id the response must carry
    pub id: RequestId,
    /// The method name, such as `tools/call`
    pub method: String,
    /// The parameters as raw JSON, an object or an array; `None` when absent
    pub params: Option<Box<RawValue>>,
}

/// A notification: a method call that expects no response
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Notification {
    /// The method name, such as `notifications/progress`
    pub method: String,
    /// The parameters as raw JSON, an object or an array; `None` when absent
    pub params: Option<Box<RawValue>>,
}

/// A response: the result of a request, or its error
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Response {
    /// The id of the request answered; `None` when an error response had a null or absent id
    /// (the peer could not read our request's id)
    pub id: Option<RequestId>,
    /// The result as raw JSON, or the error object
    pub outcome: Result<Box<RawValue>, ErrorObject>,
}

fn raw_text(raw: Option<&RawValue>) -> Option<&str> {
    raw.map(RawValue::get)
}

impl PartialEq for Request {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
            && self.method == other.method
            && raw_text(self.params.as_deref()) == raw_text(other.params.as_deref())
    }
}

impl PartialEq for Notification {
    fn eq(&self, other: &Self) -> bool {
        self.method == other.method
            && raw_text(self.params.as_deref()) == raw_text(other.params.as_deref())
    }
}

impl PartialEq for Response {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
            && match (&self.outcome, &other.outcome) {
                (Ok(a), Ok(b)) => a.get() == b.get(),
                (Err(a), Err(b)) => a == b,
                _ => false,
            }
    }
}
