//! Elicitation: `elicitation/create` (form and URL mode), its result, and
//! `notifications/elicitation/complete`

use std::collections::BTreeMap;

use serde::de::{self, Deserializer};
use serde::ser::{self, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::Meta;
use super::common::TaskMetadata;
use super::fit::FitVersion;
use crate::ProtocolVersion;

/// The `"string"` type tag of enum item schemas
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum StringType {
    /// `"string"`
    #[default]
    #[serde(rename = "string")]
    String,
}

/// The `"object"` type tag of a requested schema
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum ObjectType {
    /// `"object"`
    #[default]
    #[serde(rename = "object")]
    Object,
}

/// Formats a string field may require
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum StringFormat {
    /// An email address
    Email,
    /// A URI
    Uri,
    /// A date
    Date,
    /// A date and time
    DateTime,
}

/// A free-text field (`type: "string"`)
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct StringSchema {
    /// Label
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Shortest length
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// Longest length
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// Required format
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<StringFormat>,
    /// Default value (2025-11-25 and later)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `"number"` or `"integer"`
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum NumberType {
    /// Any number
    #[default]
    Number,
    /// An integer
    Integer,
}

/// A numeric field (`type: "number"` or `"integer"`)
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct NumberSchema {
    /// Number or integer
    #[serde(rename = "type")]
    pub kind: NumberType,
    /// Label
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Least value
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<serde_json::Number>,
    /// Greatest value
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<serde_json::Number>,
    /// Default value (2025-11-25 and later)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<serde_json::Number>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A yes/no field (`type: "boolean"`)
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct BooleanSchema {
    /// Label
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Default value
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<bool>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One option with a display title
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EnumOption {
    /// The value
    #[serde(rename = "const")]
    pub value: String,
    /// What to show
    pub title: String,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl EnumOption {
    /// An option
    pub fn new(value: impl Into<String>, title: impl Into<String>) -> Self {
        Self {
            value: value.into(),
            title: title.into(),
            extra: Map::new(),
        }
    }
}

/// Pick one of plain values (`type: "string"`, `enum`; 2025-11-25 and later)
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UntitledSingleSelectEnumSchema {
    /// Label
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The values
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// Default value
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Pick one of titled options (`type: "string"`, `oneOf`; 2025-11-25 and later)
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TitledSingleSelectEnumSchema {
    /// Label
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The options
    pub one_of: Vec<EnumOption>,
    /// Default value
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Items of an untitled multi-select: `{"type": "string", "enum": [...]}`
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UntitledEnumItems {
    /// Always `"string"`
    #[serde(rename = "type")]
    pub kind: StringType,
    /// The values
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Pick several plain values (`type: "array"`; 2025-11-25 and later)
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UntitledMultiSelectEnumSchema {
    /// Label
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Fewest picks
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Most picks
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The values
    pub items: UntitledEnumItems,
    /// Default picks
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Items of a titled multi-select: `{"anyOf": [{"const", "title"}, ...]}`
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TitledEnumItems {
    /// The options
    pub any_of: Vec<EnumOption>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Pick several titled options (`type: "array"`; 2025-11-25 and later)
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TitledMultiSelectEnumSchema {
    /// Label
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Fewest picks
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Most picks
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The options
    pub items: TitledEnumItems,
    /// Default picks
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Pick one value, with display names in a parallel list (`enum` + `enumNames`: the only
/// enum form of 2025-06-18; deprecated later)
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct LegacyTitledEnumSchema {
    /// Label
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The values
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// Display names, parallel to `values`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enum_names: Option<Vec<String>>,
    /// Default value
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One field of a form: a primitive JSON Schema
///
/// Decoding picks the variant from `type` and the keys present: `"string"` with `oneOf` is
/// a titled single select, with `enum` and `enumNames` a legacy titled enum, with `enum` an
/// untitled single select, else a string; `"array"` with `items.anyOf` is a titled multi
/// select, else an untitled one.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum PrimitiveSchema {
    /// Free text
    String(StringSchema),
    /// A number or integer
    Number(NumberSchema),
    /// Yes/no
    Boolean(BooleanSchema),
    /// One of plain values
    UntitledSingleSelect(UntitledSingleSelectEnumSchema),
    /// One of titled options
    TitledSingleSelect(TitledSingleSelectEnumSchema),
    /// Several plain values
    UntitledMultiSelect(UntitledMultiSelectEnumSchema),
    /// Several titled options
    TitledMultiSelect(TitledMultiSelectEnumSchema),
    /// One value with `enumNames`
    LegacyTitled(LegacyTitledEnumSchema),
}

impl PrimitiveSchema {
    fn type_tag(&self) -> Option<&'static str> {
        match self {
            Self::String(_)
            | Self::UntitledSingleSelect(_)
            | Self::TitledSingleSelect(_)
            | Self::LegacyTitled(_) => Some("string"),
            Self::Boolean(_) => Some("boolean"),
            Self::UntitledMultiSelect(_) | Self::TitledMultiSelect(_) => Some("array"),
            Self::Number(_) => None,
        }
    }

    /// Whether this is a multi-select (`type: "array"`)
    pub(crate) fn is_multi_select(&self) -> bool {
        matches!(
            self,
            Self::UntitledMultiSelect(_) | Self::TitledMultiSelect(_)
        )
    }
}

impl Serialize for PrimitiveSchema {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let inner = match self {
            Self::String(s) => serde_json::to_value(s),
            Self::Number(s) => serde_json::to_value(s),
            Self::Boolean(s) => serde_json::to_value(s),
            Self::UntitledSingleSelect(s) => serde_json::to_value(s),
            Self::TitledSingleSelect(s) => serde_json::to_value(s),
            Self::UntitledMultiSelect(s) => serde_json::to_value(s),
            Self::TitledMultiSelect(s) => serde_json::to_value(s),
            Self::LegacyTitled(s) => serde_json::to_value(s),
        };
        let mut value = inner.map_err(ser::Error::custom)?;
        if let (Some(tag), Value::Object(map)) = (self.type_tag(), &mut value) {
            map.insert("type".to_owned(), Value::from(tag));
        }
        value.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for PrimitiveSchema {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut map = Map::<String, Value>::deserialize(deserializer)?;
        let kind = match map.get("type") {
            Some(Value::String(s)) => s.clone(),
            Some(_) => return Err(de::Error::custom("`type` must be a string")),
            None => return Err(de::Error::missing_field("type")),
        };
        fn parse<T: de::DeserializeOwned, E: de::Error>(map: Map<String, Value>) -> Result<T, E> {
            serde_json::from_value(Value::Object(map)).map_err(E::custom)
        }
        if kind != "number" && kind != "integer" {
            map.remove("type");
        }
        Ok(match kind.as_str() {
            "string" if map.contains_key("oneOf") => Self::TitledSingleSelect(parse(map)?),
            "string" if map.contains_key("enum") && map.contains_key("enumNames") => {
                Self::LegacyTitled(parse(map)?)
            }
            "string" if map.contains_key("enum") => Self::UntitledSingleSelect(parse(map)?),
            "string" => Self::String(parse(map)?),
            "number" | "integer" => Self::Number(parse(map)?),
            "boolean" => Self::Boolean(parse(map)?),
            "array" if map.get("items").is_some_and(|i| i.get("anyOf").is_some()) => {
                Self::TitledMultiSelect(parse(map)?)
            }
            "array" => Self::UntitledMultiSelect(parse(map)?),
            other => {
                return Err(de::Error::custom(format!(
                    "unknown primitive schema type `{other}`"
                )));
            }
        })
    }
}

impl FitVersion for PrimitiveSchema {
    /// Before 2025-11-25 a titled single select becomes a legacy `enum` + `enumNames`;
    /// untitled single selects keep their shape (the legacy form without names). Multi
    /// selects cannot be expressed and are removed by [`ElicitationSchema`]'s rule.
    fn fit_to(&mut self, version: ProtocolVersion) {
        if version >= ProtocolVersion::V2025_11_25 {
            return;
        }
        if let Self::TitledSingleSelect(s) = self {
            let (values, names) = s
                .one_of
                .iter()
                .map(|o| (o.value.clone(), o.title.clone()))
                .unzip();
            *self = Self::LegacyTitled(LegacyTitledEnumSchema {
                title: s.title.take(),
                description: s.description.take(),
                values,
                enum_names: Some(names),
                default: s.default.take(),
                extra: std::mem::take(&mut s.extra),
            });
        }
    }
}

/// The form of a form-mode elicitation: a flat object schema of primitive fields
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ElicitationSchema {
    /// `$schema` (2025-11-25 and later)
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Always `"object"`
    #[serde(rename = "type")]
    pub kind: ObjectType,
    /// The fields
    pub properties: BTreeMap<String, PrimitiveSchema>,
    /// Names of the required fields
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ElicitationSchema {
    /// An empty form
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a field
    #[must_use]
    pub fn with_property(
        mut self,
        name: impl Into<String>,
        schema: PrimitiveSchema,
        required: bool,
    ) -> Self {
        let name = name.into();
        if required {
            self.required
                .get_or_insert_with(Vec::new)
                .push(name.clone());
        }
        self.properties.insert(name, schema);
        self
    }
}

impl FitVersion for ElicitationSchema {
    /// Fits every field; before 2025-11-25 multi-select fields, which those versions cannot
    /// express, are removed (from `required` too)
    fn fit_to(&mut self, version: ProtocolVersion) {
        if version < ProtocolVersion::V2025_11_25 {
            let dropped: Vec<String> = self
                .properties
                .iter()
                .filter(|(_, s)| s.is_multi_select())
                .map(|(k, _)| k.clone())
                .collect();
            for name in &dropped {
                self.properties.remove(name);
            }
            if let Some(required) = &mut self.required {
                required.retain(|r| !dropped.contains(r));
            }
        }
        for s in self.properties.values_mut() {
            s.fit_to(version);
        }
    }
}

/// The `"form"` mode tag
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum FormMode {
    /// `"form"`
    #[default]
    #[serde(rename = "form")]
    Form,
}

/// Params of a form-mode `elicitation/create`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitFormParams {
    /// `"form"`, or absent (2025-11-25 and later may say it)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<FormMode>,
    /// What to ask the user
    pub message: String,
    /// The form
    pub requested_schema: ElicitationSchema,
    /// Run as a task with these settings (2025-11-25 task augmentation)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Params of a URL-mode `elicitation/create` (2025-11-25 and later)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitUrlParams {
    /// What to tell the user
    pub message: String,
    /// The URL to open
    pub url: String,
    /// Identifies the elicitation (required in 2025-11-25; not defined in 2026-07-28)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
    /// Run as a task with these settings (2025-11-25 task augmentation)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Params of `elicitation/create`: a form, or a URL to open
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ElicitParams {
    /// Form mode (`mode` absent or `"form"`)
    Form(ElicitFormParams),
    /// URL mode (`mode: "url"`)
    Url(ElicitUrlParams),
}

impl ElicitParams {
    /// A form request
    pub fn form(message: impl Into<String>, schema: ElicitationSchema) -> Self {
        Self::Form(ElicitFormParams {
            mode: None,
            message: message.into(),
            requested_schema: schema,
            task: None,
            meta: None,
            extra: Map::new(),
        })
    }

    /// A URL request
    pub fn url(
        message: impl Into<String>,
        url: impl Into<String>,
        elicitation_id: impl Into<String>,
    ) -> Self {
        Self::Url(ElicitUrlParams {
            message: message.into(),
            url: url.into(),
            elicitation_id: Some(elicitation_id.into()),
            task: None,
            meta: None,
            extra: Map::new(),
        })
    }
}

impl Serialize for ElicitParams {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Form(p) => p.serialize(serializer),
            Self::Url(p) => {
                let mut value = serde_json::to_value(p).map_err(ser::Error::custom)?;
                if let Value::Object(map) = &mut value {
                    map.insert("mode".to_owned(), Value::from("url"));
                }
                value.serialize(serializer)
            }
        }
    }
}

impl<'de> Deserialize<'de> for ElicitParams {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut map = Map::<String, Value>::deserialize(deserializer)?;
        if map.get("mode").and_then(Value::as_str) == Some("url") {
            map.remove("mode");
            serde_json::from_value(Value::Object(map))
                .map(Self::Url)
                .map_err(de::Error::custom)
        } else {
            serde_json::from_value(Value::Object(map))
                .map(Self::Form)
                .map_err(de::Error::custom)
        }
    }
}

impl FitVersion for ElicitParams {
    /// Fits the form; before 2025-11-25, which has no URL mode, a URL request becomes a form
    /// with no fields whose message ends with the URL
    fn fit_to(&mut self, version: ProtocolVersion) {
        match self {
            Self::Form(f) => f.requested_schema.fit_to(version),
            Self::Url(u) if version < ProtocolVersion::V2025_11_25 => {
                *self = Self::Form(ElicitFormParams {
                    mode: None,
                    message: format!("{}\n\n{}", u.message, u.url),
                    requested_schema: ElicitationSchema::new(),
                    task: u.task.take(),
                    meta: u.meta.take(),
                    extra: std::mem::take(&mut u.extra),
                });
            }
            Self::Url(_) => {}
        }
    }
}

/// What the user did
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ElicitAction {
    /// Submitted or confirmed
    Accept,
    /// Explicitly declined
    Decline,
    /// Dismissed
    Cancel,
}

/// One submitted form value
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum ElicitValue {
    /// A boolean
    Bool(bool),
    /// A number (the JSON schemas of 2025-06-18 and later accept integers only)
    Number(serde_json::Number),
    /// A string
    String(String),
    /// Several strings, from a multi select (2025-11-25 and later)
    Strings(Vec<String>),
}

/// Result of `elicitation/create` (in 2026-07-28 an input response, which has no
/// `resultType`)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ElicitResult {
    /// What the user did
    pub action: ElicitAction,
    /// The submitted values (form mode, `accept` only)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<BTreeMap<String, ElicitValue>>,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ElicitResult {
    /// The user accepted with these values
    pub fn accept(content: BTreeMap<String, ElicitValue>) -> Self {
        Self {
            action: ElicitAction::Accept,
            content: Some(content),
            meta: None,
            extra: Map::new(),
        }
    }

    /// The user declined
    pub fn decline() -> Self {
        Self::with_action(ElicitAction::Decline)
    }

    /// The user dismissed the request
    pub fn cancel() -> Self {
        Self::with_action(ElicitAction::Cancel)
    }

    /// A result with an action and no content
    pub(crate) fn with_action(action: ElicitAction) -> Self {
        Self {
            action,
            content: None,
            meta: None,
            extra: Map::new(),
        }
    }
}

impl FitVersion for ElicitResult {
    /// Before 2025-11-25, which has no multi selects, list values are removed
    fn fit_to(&mut self, version: ProtocolVersion) {
        if version < ProtocolVersion::V2025_11_25
            && let Some(content) = &mut self.content
        {
            content.retain(|_, v| !matches!(v, ElicitValue::Strings(_)));
        }
    }
}

/// Params of `notifications/elicitation/complete` (2025-11-25)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitationCompleteParams {
    /// The URL elicitation that finished
    pub elicitation_id: String,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ElicitationCompleteParams {
    /// Params for a finished elicitation
    pub fn new(elicitation_id: impl Into<String>) -> Self {
        Self {
            elicitation_id: elicitation_id.into(),
            meta: None,
            extra: Map::new(),
        }
    }
}

/// `data` of the 2025-11-25 error -32042 (URL elicitation required)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UrlElicitationRequiredData {
    /// The elicitations the client must complete first
    pub elicitations: Vec<ElicitParams>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

super::fit::same_in_every_version!(ElicitationCompleteParams);
