//! Multi-round-trip requests (2026-07-28): `input_required` results, the requests they
//! carry, and the responses the client sends back on its retry

use std::collections::BTreeMap;

use serde::de::{self, Deserializer};
use serde::ser::{self, SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::{Meta, MetaParams, ResultType};
use super::elicitation::{ElicitParams, ElicitResult};
use super::fit::FitVersion;
use super::roots::ListRootsResult;
use super::sampling::{CreateMessageParams, CreateMessageResult};
use crate::{Era, ProtocolVersion};

/// A request the server needs the client to answer before it can finish
///
/// On the wire: `{"method": "...", "params": {...}}`. Other envelope members (such as an
/// `id`) are not part of the type and are dropped.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum InputRequest {
    /// `sampling/createMessage`
    CreateMessage(CreateMessageParams),
    /// `roots/list` (params are optional)
    ListRoots(Option<MetaParams>),
    /// `elicitation/create`
    Elicit(ElicitParams),
}

impl InputRequest {
    /// The method name
    pub fn method(&self) -> &'static str {
        match self {
            Self::CreateMessage(_) => "sampling/createMessage",
            Self::ListRoots(_) => "roots/list",
            Self::Elicit(_) => "elicitation/create",
        }
    }
}

impl Serialize for InputRequest {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let params = match self {
            Self::CreateMessage(p) => Some(serde_json::to_value(p)),
            Self::ListRoots(p) => p.as_ref().map(serde_json::to_value),
            Self::Elicit(p) => Some(serde_json::to_value(p)),
        }
        .transpose()
        .map_err(ser::Error::custom)?;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("method", self.method())?;
        if let Some(params) = params {
            map.serialize_entry("params", &params)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for InputRequest {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut map = Map::<String, Value>::deserialize(deserializer)?;
        let method = match map.remove("method") {
            Some(Value::String(m)) => m,
            Some(_) => return Err(de::Error::custom("`method` must be a string")),
            None => return Err(de::Error::missing_field("method")),
        };
        let params = map.remove("params");
        fn parse<T: de::DeserializeOwned, E: de::Error>(v: Option<Value>) -> Result<T, E> {
            let v = v.ok_or_else(|| E::missing_field("params"))?;
            serde_json::from_value(v).map_err(E::custom)
        }
        match method.as_str() {
            "sampling/createMessage" => parse(params).map(Self::CreateMessage),
            "elicitation/create" => parse(params).map(Self::Elicit),
            "roots/list" => match params {
                None => Ok(Self::ListRoots(None)),
                p => parse(p).map(|p| Self::ListRoots(Some(p))),
            },
            other => Err(de::Error::custom(format!(
                "unknown input request method `{other}`"
            ))),
        }
    }
}

impl FitVersion for InputRequest {
    fn fit_to(&mut self, version: ProtocolVersion) {
        match self {
            Self::CreateMessage(p) => p.fit_to(version),
            Self::Elicit(p) => p.fit_to(version),
            Self::ListRoots(_) => {}
        }
    }
}

/// The client's answer to one [`InputRequest`]
///
/// Decoded by shape: `action` means an elicitation result, `model` a sampling result,
/// `roots` a roots list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
#[allow(clippy::large_enum_variant)] // short-lived messages; boxing would only cost clarity
pub enum InputResponse {
    /// Answer to `elicitation/create`
    Elicit(ElicitResult),
    /// Answer to `sampling/createMessage`
    CreateMessage(CreateMessageResult),
    /// Answer to `roots/list`
    ListRoots(ListRootsResult),
}

impl FitVersion for InputResponse {
    fn fit_to(&mut self, version: ProtocolVersion) {
        match self {
            Self::Elicit(r) => r.fit_to(version),
            Self::CreateMessage(r) => r.fit_to(version),
            Self::ListRoots(r) => r.fit_to(version),
        }
    }
}

/// Input requests by key (the client answers each key in [`InputResponses`])
pub type InputRequests = BTreeMap<String, InputRequest>;

/// Input responses by the key of the request they answer
pub type InputResponses = BTreeMap<String, InputResponse>;

impl<T: FitVersion> FitVersion for BTreeMap<String, T> {
    fn fit_to(&mut self, version: ProtocolVersion) {
        for v in self.values_mut() {
            v.fit_to(version);
        }
    }
}

/// The server needs input before it can answer: `resultType: "input_required"`
///
/// The client answers `input_requests` and retries the original request (under a new id)
/// with `inputResponses` and `requestState` set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InputRequiredResult {
    /// What the server needs
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// Opaque state to send back on the retry
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// `"input_required"` ([`FitVersion`] fills it)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl InputRequiredResult {
    /// A result asking for these inputs
    pub fn new(input_requests: InputRequests) -> Self {
        Self {
            input_requests: Some(input_requests),
            result_type: Some(ResultType::InputRequired),
            ..Self::default()
        }
    }

    /// Sets the request state
    #[must_use]
    pub(crate) fn with_request_state(mut self, state: impl Into<String>) -> Self {
        self.request_state = Some(state.into());
        self
    }
}

impl FitVersion for InputRequiredResult {
    /// Sets `resultType: "input_required"` when missing and fits the requests
    fn fit_to(&mut self, version: ProtocolVersion) {
        if version.era() == Era::Modern {
            self.result_type.get_or_insert(ResultType::InputRequired);
        }
        self.input_requests.fit_to(version);
    }
}
