//! What the session reads from a request's params, and the one pass that reads it together
//! with what the 2026 wire's header checks need ([`ParamsView`])

use std::ops::Range;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::inbound_table::Answers;
use super::task_table::TaskParam;
use crate::jsonrpc::RequestId;
use crate::schema::LoggingLevel;

/// `_meta` keys read from request params
#[derive(Deserialize, Default, Debug)]
pub(crate) struct RequestMeta {
    #[serde(rename = "progressToken", default)]
    pub(super) progress_token: Option<RequestId>,
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", default)]
    pub(crate) version: Option<String>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", default)]
    pub(crate) capabilities: Option<Box<RawValue>>,
    /// A 2026 request's log level, read here so that the server need not parse the params
    /// again for it: anything but a level name reads as none (nothing is logged)
    #[serde(
        rename = "io.modelcontextprotocol/logLevel",
        default,
        deserialize_with = "lenient_level"
    )]
    pub(super) log_level: Option<LoggingLevel>,
}

/// A log level, or `None` for any other JSON value (which is skipped, not refused)
fn lenient_level<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<LoggingLevel>, D::Error> {
    use serde::de::{self, IgnoredAny, IntoDeserializer, Visitor};
    struct Lenient;
    impl<'de> Visitor<'de> for Lenient {
        type Value = Option<LoggingLevel>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
            let level: Result<LoggingLevel, E> = LoggingLevel::deserialize(s.into_deserializer());
            Ok(level.ok())
        }
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(None)
        }
        fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(None)
        }
    }
    deserializer.deserialize_any(Lenient)
}

/// What the core reads from request params: `_meta`, and a modern retry's input
#[derive(Deserialize, Default, Debug)]
pub(crate) struct ParamsWithMeta {
    /// An object, or absent or `null` (none): the spec's `_meta` is an object, and an array
    /// (which serde would read as the members in order) is invalid params
    #[serde(rename = "_meta", default, deserialize_with = "object_meta")]
    pub(super) meta: Option<RequestMeta>,
    #[serde(rename = "inputResponses", default)]
    pub(super) input_responses: Option<Answers>,
    #[serde(rename = "requestState", default)]
    pub(super) request_state: Option<String>,
    /// 2025-11-25 task augmentation
    #[serde(default)]
    pub(super) task: Option<TaskParam>,
    /// A `tools/call`'s name and arguments as the one pass found them ([`ParamsView::into_kept`])
    #[serde(skip)]
    pub(crate) call: Option<CallSpans>,
}

/// Where a `tools/call`'s name (a JSON string without escapes, its quotes included) and
/// arguments (an object or `null`, if present) are in its params' text, when the one pass
/// read params that the route's own reading would take: no member it checks named twice,
/// `_meta` an object, no `task`, `inputResponses` or `requestState`
/// ([`InboundRequest::call`](super::InboundRequest))
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CallSpans {
    pub(crate) name: Range<usize>,
    pub(crate) arguments: Option<Range<usize>>,
}

/// Request params as one pass reads them: [`ParamsWithMeta`]'s members, declared the same,
/// and, borrowed, the members the 2026 wire's headers mirror, for the HTTP rules that check
/// them before the session takes the request
/// ([`handle_request_as`](super::Session::handle_request_as))
///
/// Params this refuses may still be fine for the session (a member named twice that the
/// session does not read): a caller then reads them as before, in two passes.
#[derive(Deserialize)]
pub(crate) struct ParamsView<'a> {
    #[serde(rename = "_meta", default, deserialize_with = "object_meta")]
    pub(crate) meta: Option<RequestMeta>,
    #[serde(rename = "inputResponses", default)]
    input_responses: Option<Answers>,
    #[serde(rename = "requestState", default)]
    request_state: Option<String>,
    #[serde(default)]
    task: Option<TaskParam>,
    #[serde(default, borrow)]
    pub(crate) name: Option<&'a RawValue>,
    #[serde(default, borrow)]
    pub(crate) uri: Option<&'a RawValue>,
    #[serde(rename = "taskId", default, borrow)]
    pub(crate) task_id: Option<&'a RawValue>,
    #[serde(default, borrow)]
    pub(crate) arguments: Option<&'a RawValue>,
}

impl ParamsView<'_> {
    /// Reads `params`, if they are read in one pass
    pub(crate) fn parse(params: &str) -> Option<ParamsView<'_>> {
        serde_json::from_str(params).ok()
    }

    /// What the session keeps; for a `tools/call` (`method`) also where its name and
    /// arguments are in `params`, the text this view was read from
    pub(crate) fn into_kept(self, method: &str, params: &str) -> ParamsWithMeta {
        let plain = self.task.is_none()
            && self.input_responses.is_none()
            && self.request_state.is_none()
            && method == "tools/call";
        let call = self.name.filter(|_| plain).and_then(|name| {
            let text = name.get();
            let arguments = match self.arguments {
                None => None,
                Some(a) if a.get().starts_with(['{', 'n']) => Some(span(params, a.get())?),
                Some(_) => return None,
            };
            (text.len() >= 2 && text.starts_with('"') && !text.contains('\\')).then_some(())?;
            Some(CallSpans {
                name: span(params, text)?,
                arguments,
            })
        });
        ParamsWithMeta {
            meta: self.meta,
            input_responses: self.input_responses,
            request_state: self.request_state,
            task: self.task,
            call,
        }
    }
}

/// Where `part`, a slice of `whole`, lies in it
fn span(whole: &str, part: &str) -> Option<Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    let end = start + part.len();
    (end <= whole.len()).then_some(start..end)
}

/// `_meta` as [`RequestMeta`] when it is an object (or `null`: none); anything else is an
/// error (the derived reading would take an array as the members in order)
fn object_meta<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<RequestMeta>, D::Error> {
    use serde::de::{self, MapAccess, Visitor, value::MapAccessDeserializer};
    struct Object;
    impl<'de> Visitor<'de> for Object {
        type Value = Option<RequestMeta>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            RequestMeta::deserialize(MapAccessDeserializer::new(map)).map(Some)
        }
    }
    deserializer.deserialize_any(Object)
}
