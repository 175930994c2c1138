//! Decoding a frame into messages

use std::fmt;

use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::error::{ErrorObject, code};
use super::id::{IdError, RequestId};
use super::message::{Message, Notification, Request, Response};
use super::raw::{self, Kind};

/// Something that is not a valid message; `id` is the request id when it could be recovered
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Invalid {
    /// The request id, when the input had a valid one
    pub id: Option<RequestId>,
    /// The error to reply with (when [`answerable`](Self::answerable))
    pub error: ErrorObject,
    /// false when the input looked like a response (no "method" member): JSON-RPC never
    /// answers a response, so the receiver should drop it (and count it) instead of replying
    pub answerable: bool,
}

/// A decoded frame
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Decoded {
    /// The frame held one message (or one invalid value)
    Single(Result<Message, Invalid>),
    /// The frame held a non-empty JSON array: one entry per element, in order
    Batch(Vec<Result<Message, Invalid>>),
}

/// Decode one frame (already framed and UTF-8-checked). Never panics.
///
/// Makes one pass over the frame (a batch: one over the frame, then one per element), keeping
/// `params`, `result` and error `data` as raw text. Unknown members are ignored. Invalid JSON
/// gives a [`PARSE_ERROR`](code::PARSE_ERROR); valid JSON that is not a valid message gives an
/// [`INVALID_REQUEST`](code::INVALID_REQUEST). An empty array `[]` is a single invalid request.
/// Nesting depth is not limited here: raw values are skipped without recursion.
pub fn decode(frame: &str) -> Decoded {
    match Kind::of(frame) {
        Some(Kind::Object) => Decoded::Single(match serde_json::from_str::<Envelope<'_>>(frame) {
            Ok(envelope) => envelope.classify(),
            Err(e) => Err(not_json(frame, &e)),
        }),
        Some(Kind::Array) => match serde_json::from_str::<Vec<&RawValue>>(frame) {
            Ok(entries) if entries.is_empty() => {
                Decoded::Single(Err(Invalid::request(None, "the batch is empty")))
            }
            Ok(entries) => Decoded::Batch(entries.into_iter().map(decode_entry).collect()),
            Err(e) => Decoded::Single(Err(not_json(frame, &e))),
        },
        _ => Decoded::Single(Err(match serde_json::from_str::<IgnoredAny>(frame) {
            Ok(IgnoredAny) => Invalid::request(None, NotAnObject("a message", frame)),
            Err(e) => Invalid::parse(&e),
        })),
    }
}

/// Decodes one element of a batch: valid JSON, not yet known to be an object.
fn decode_entry(entry: &RawValue) -> Result<Message, Invalid> {
    let text = entry.get();
    if Kind::of(text) != Some(Kind::Object) {
        return Err(Invalid::request(None, NotAnObject("a batch entry", text)));
    }
    match serde_json::from_str::<Envelope<'_>>(text) {
        Ok(envelope) => envelope.classify(),
        Err(e) => Err(not_json(text, &e)),
    }
}

/// The error for a frame serde rejected: a parse error, unless the JSON itself was valid.
fn not_json(text: &str, error: &serde_json::Error) -> Invalid {
    // The envelope accepts any member values, so only syntax errors are expected here.
    if error.is_data() && serde_json::from_str::<IgnoredAny>(text).is_ok() {
        Invalid::request(None, error)
    } else {
        Invalid::parse(error)
    }
}

impl Invalid {
    fn parse(error: &serde_json::Error) -> Self {
        Self {
            id: None,
            error: ErrorObject::parse_error(error),
            answerable: true,
        }
    }

    fn request(id: Option<RequestId>, detail: impl fmt::Display) -> Self {
        Self {
            id,
            error: ErrorObject::invalid_request(detail),
            answerable: true,
        }
    }

    fn response(id: Option<RequestId>, detail: impl fmt::Display) -> Self {
        Self {
            id,
            error: ErrorObject::new(code::INVALID_REQUEST, format!("Invalid response: {detail}")),
            answerable: false,
        }
    }
}

/// "a message must be a JSON object, not a number"
struct NotAnObject<'a>(&'static str, &'a str);

impl fmt::Display for NotAnObject<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} must be a JSON object", self.0)?;
        match Kind::of(self.1) {
            Some(kind) => write!(f, ", not {}", kind.with_article()),
            None => Ok(()),
        }
    }
}

/// The top-level members of a message object, each kept as raw text.
///
/// `None` means absent; a member written as `null` is `Some("null")`.
#[derive(Default)]
struct Envelope<'a> {
    jsonrpc: Option<&'a RawValue>,
    id: Option<&'a RawValue>,
    method: Option<&'a RawValue>,
    params: Option<&'a RawValue>,
    result: Option<&'a RawValue>,
    error: Option<&'a RawValue>,
    /// The first member that appeared more than once
    duplicate: Option<Field>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Field {
    Jsonrpc,
    Id,
    Method,
    Params,
    Result,
    Error,
    #[serde(other)]
    Other,
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Jsonrpc => "\"jsonrpc\"",
            Self::Id => "\"id\"",
            Self::Method => "\"method\"",
            Self::Params => "\"params\"",
            Self::Result => "\"result\"",
            Self::Error => "\"error\"",
            Self::Other => "a member",
        })
    }
}

impl<'de> Deserialize<'de> for Envelope<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(EnvelopeVisitor)
    }
}

struct EnvelopeVisitor;

impl<'de> Visitor<'de> for EnvelopeVisitor {
    type Value = Envelope<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC message object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Envelope<'de>, A::Error> {
        let mut envelope = Envelope::default();
        while let Some(field) = map.next_key::<Field>()? {
            let slot = match field {
                Field::Jsonrpc => &mut envelope.jsonrpc,
                Field::Id => &mut envelope.id,
                Field::Method => &mut envelope.method,
                Field::Params => &mut envelope.params,
                Field::Result => &mut envelope.result,
                Field::Error => &mut envelope.error,
                Field::Other => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            let value = map.next_value::<&'de RawValue>()?;
            if slot.is_some() {
                envelope.duplicate.get_or_insert(field);
            } else {
                *slot = Some(value);
            }
        }
        Ok(envelope)
    }
}

/// A JSON-RPC error object as written on the wire
#[derive(Deserialize)]
struct WireError<'a> {
    code: i64,
    message: String,
    #[serde(default, borrow, deserialize_with = "raw::present")]
    data: Option<&'a RawValue>,
}

impl Envelope<'_> {
    /// Applies the JSON-RPC 2.0 and MCP rules to the members of one object.
    fn classify(self) -> Result<Message, Invalid> {
        // Read once; the id, when it is valid, goes into any error about the rest of the
        // message.
        let parsed = self.id.map(RequestId::from_raw);
        let id = match (&parsed, self.duplicate) {
            (_, Some(Field::Id)) | (None, _) => None,
            (Some(read), _) => read.as_ref().ok().cloned(),
        };
        let is_response = self.method.is_none() && (self.result.is_some() || self.error.is_some());
        let invalid = |id, detail: &dyn fmt::Display| {
            if is_response {
                Invalid::response(id, detail)
            } else {
                Invalid::request(id, detail)
            }
        };

        if let Some(field) = self.duplicate {
            return Err(invalid(id, &format_args!("{field} appears more than once")));
        }
        match self.jsonrpc {
            None => return Err(invalid(id, &"\"jsonrpc\" is missing; it must be \"2.0\"")),
            Some(v) if !is_version(v) => return Err(invalid(id, &"\"jsonrpc\" must be \"2.0\"")),
            Some(_) => {}
        }
        if is_response {
            self.classify_response(id, parsed)
        } else {
            self.classify_call(id, parsed)
        }
    }

    /// A request or a notification; `jsonrpc` is already checked.
    ///
    /// `parsed` is the id read (`None` when absent).
    fn classify_call(
        self,
        id: Option<RequestId>,
        parsed: Option<Result<RequestId, IdError>>,
    ) -> Result<Message, Invalid> {
        let Some(method) = self.method else {
            return Err(Invalid::request(id, "\"method\" is missing"));
        };
        let method = match (Kind::of(method.get()), raw::string(method)) {
            (_, Some(method)) => method,
            (Some(Kind::String), None) => {
                let detail = "\"method\" has an unpaired surrogate escape";
                return Err(Invalid::request(id, detail));
            }
            _ => return Err(Invalid::request(id, "\"method\" must be a string")),
        };
        let request_id = match parsed {
            None => None,
            Some(Ok(request_id)) => Some(request_id),
            Some(Err(e)) => return Err(Invalid::request(None, e)),
        };
        if let Some(params) = self.params
            && !matches!(Kind::of(params.get()), Some(Kind::Object | Kind::Array))
        {
            return Err(Invalid::request(
                id,
                "\"params\" must be an object or an array",
            ));
        }
        let method = method.into_owned();
        let params = self.params.map(ToOwned::to_owned);
        Ok(match request_id {
            Some(id) => Message::Request(Request { id, method, params }),
            None => Message::Notification(Notification { method, params }),
        })
    }

    /// A response: no `method`, and `result` or `error`; `jsonrpc` is already checked.
    ///
    /// `parsed` is the id read (`None` when absent).
    fn classify_response(
        self,
        id: Option<RequestId>,
        parsed: Option<Result<RequestId, IdError>>,
    ) -> Result<Message, Invalid> {
        let (result, error) = match (self.result, self.error) {
            (Some(_), Some(_)) => {
                return Err(Invalid::response(
                    id,
                    "it has both \"result\" and \"error\"",
                ));
            }
            (result, error) => (result, error),
        };
        if let Some(result) = result {
            return match parsed {
                Some(Ok(id)) => Ok(Message::Response(Response {
                    id: Some(id),
                    outcome: Ok(result.to_owned()),
                })),
                Some(Err(e)) => Err(Invalid::response(None, e)),
                None => Err(Invalid::response(None, "a result needs an \"id\"")),
            };
        }
        let id = match (self.id, parsed) {
            (None, _) | (_, None) => None,
            (Some(raw), _) if raw.get() == "null" => None,
            (_, Some(Ok(id))) => Some(id),
            (_, Some(Err(e))) => {
                return Err(Invalid::response(None, format_args!("{e} or null")));
            }
        };
        let Some(error) = error else {
            return Err(Invalid::response(
                id,
                "it has neither \"result\" nor \"error\"",
            ));
        };
        let wire = match Kind::of(error.get()) {
            Some(Kind::Object) => serde_json::from_str::<WireError<'_>>(error.get()),
            Some(kind) => {
                let detail =
                    format_args!("\"error\" must be an object, not {}", kind.with_article());
                return Err(Invalid::response(id, detail));
            }
            None => return Err(Invalid::response(id, "\"error\" must be an object")),
        };
        match wire {
            Ok(wire) => Ok(Message::Response(Response {
                id,
                outcome: Err(ErrorObject {
                    code: wire.code,
                    message: wire.message,
                    data: wire.data.map(ToOwned::to_owned),
                }),
            })),
            Err(e) => Err(Invalid::response(
                id,
                format_args!(
                    "\"error\" must have an integer \"code\" and a string \"message\" ({e})"
                ),
            )),
        }
    }
}

/// Whether a raw `jsonrpc` value is the string "2.0" (escapes allowed, as JSON allows them).
fn is_version(raw: &RawValue) -> bool {
    raw.get() == "\"2.0\"" || raw::string(raw).is_some_and(|v| v == "2.0")
}
