//! What the session reads from a request's params, and the one pass that reads it together
//! with what the 2026 wire's header checks need ([`ParamsView`])

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
    #[serde(rename = "_meta", default)]
    pub(super) meta: Option<RequestMeta>,
    #[serde(rename = "inputResponses", default)]
    pub(super) input_responses: Option<Answers>,
    #[serde(rename = "requestState", default)]
    pub(super) request_state: Option<String>,
    /// 2025-11-25 task augmentation
    #[serde(default)]
    pub(super) task: Option<TaskParam>,
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
    #[serde(rename = "_meta", default)]
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

    /// What the session keeps
    pub(crate) fn into_kept(self) -> ParamsWithMeta {
        ParamsWithMeta {
            meta: self.meta,
            input_responses: self.input_responses,
            request_state: self.request_state,
            task: self.task,
        }
    }
}
