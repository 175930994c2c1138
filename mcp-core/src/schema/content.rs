//! Content: the blocks of tool results and prompt messages, sampling content (with tool use
//! and tool results), and resource contents

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::common::{Annotations, Meta};
use super::fit::FitVersion;
use super::resources::Resource;
use super::tagged::{self, Tagged};
use crate::ProtocolVersion;

/// Text
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TextContent {
    /// The text
    pub text: String,
    /// Hints for the client
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl TextContent {
    /// A text block
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            annotations: None,
            meta: None,
            extra: Map::new(),
        }
    }
}

/// An image (base64) or, with the same shape, audio
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct MediaContent {
    /// Base64-encoded bytes
    pub data: String,
    /// MIME type, such as `image/png` or `audio/wav`
    pub mime_type: String,
    /// Hints for the client
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl MediaContent {
    /// Media from base64 data and a MIME type
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
            extra: Map::new(),
        }
    }
}

/// An image (`type: "image"`)
pub type ImageContent = MediaContent;
/// Audio (`type: "audio"`, 2025-03-26 and later)
pub type AudioContent = MediaContent;

/// A resource embedded in a message (`type: "resource"`)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct EmbeddedResource {
    /// The contents
    pub resource: ResourceContents,
    /// Hints for the client
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl EmbeddedResource {
    /// Embeds contents
    pub(crate) fn new(resource: ResourceContents) -> Self {
        Self {
            resource,
            annotations: None,
            meta: None,
            extra: Map::new(),
        }
    }
}

/// One block of a tool result or prompt message
///
/// Read by its `"type"` tag, straight from the object when the tag comes first (see
/// `schema::tagged`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ContentBlock {
    /// `"text"`
    Text(TextContent),
    /// `"image"`
    Image(ImageContent),
    /// `"audio"` (2025-03-26 and later)
    Audio(AudioContent),
    /// `"resource_link"`: a link to a resource (2025-06-18 and later)
    ResourceLink(Resource),
    /// `"resource"`: an embedded resource
    Resource(EmbeddedResource),
}

impl Tagged for ContentBlock {
    const EXPECTING: &'static str = "a content block";
    const TAGS: &'static [&'static str] = &["text", "image", "audio", "resource_link", "resource"];

    fn variant<'de, D: Deserializer<'de>>(tag: usize, fields: D) -> Result<Self, D::Error> {
        Ok(match tag {
            0 => Self::Text(TextContent::deserialize(fields)?),
            1 => Self::Image(ImageContent::deserialize(fields)?),
            2 => Self::Audio(AudioContent::deserialize(fields)?),
            3 => Self::ResourceLink(Resource::deserialize(fields)?),
            _ => Self::Resource(EmbeddedResource::deserialize(fields)?),
        })
    }

    fn extra(&self) -> &Map<String, Value> {
        match self {
            Self::Text(b) => &b.extra,
            Self::Image(b) | Self::Audio(b) => &b.extra,
            Self::ResourceLink(b) => &b.extra,
            Self::Resource(b) => &b.extra,
        }
    }
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        tagged::deserialize(d)
    }
}

impl ContentBlock {
    /// A text block
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(TextContent::new(text))
    }

    /// An image block
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Image(MediaContent::new(data, mime_type))
    }

    /// An audio block
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Audio(MediaContent::new(data, mime_type))
    }

    /// A resource link block
    pub fn resource_link(resource: Resource) -> Self {
        Self::ResourceLink(resource)
    }

    /// An embedded resource block
    pub fn resource(contents: ResourceContents) -> Self {
        Self::Resource(EmbeddedResource::new(contents))
    }

    /// The text, for a text block
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

impl From<TextContent> for ContentBlock {
    fn from(c: TextContent) -> Self {
        Self::Text(c)
    }
}

impl From<EmbeddedResource> for ContentBlock {
    fn from(c: EmbeddedResource) -> Self {
        Self::Resource(c)
    }
}

/// A text block standing in for content the version cannot carry
pub(crate) fn stand_in(
    text: String,
    annotations: Option<Annotations>,
    meta: Option<Meta>,
) -> TextContent {
    TextContent {
        text,
        annotations,
        meta,
        extra: Map::new(),
    }
}

fn audio_description(mime_type: &str, version: ProtocolVersion) -> String {
    format!("[audio ({mime_type}) not shown: protocol {version} has no audio content]")
}

impl FitVersion for ContentBlock {
    /// Audio before 2025-03-26 and resource links before 2025-06-18 become a text block that
    /// describes them (a resource link keeps its URI, name and description)
    fn fit_to(&mut self, version: ProtocolVersion) {
        let replacement = match self {
            Self::Audio(a) if version < ProtocolVersion::V2025_03_26 => stand_in(
                audio_description(&a.mime_type, version),
                a.annotations.take(),
                a.meta.take(),
            ),
            Self::ResourceLink(r) if version < ProtocolVersion::V2025_06_18 => {
                let name = r.title.as_deref().unwrap_or(&r.name);
                let mut text = format!("{name}: {}", r.uri);
                if let Some(description) = &r.description {
                    text.push('\n');
                    text.push_str(description);
                }
                stand_in(text, r.annotations.take(), r.meta.take())
            }
            _ => return,
        };
        *self = Self::Text(replacement);
    }
}

/// Text contents of a resource
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TextResourceContents {
    /// The resource's URI
    pub uri: String,
    /// MIME type
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The text
    pub text: String,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Binary contents of a resource
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct BlobResourceContents {
    /// The resource's URI
    pub uri: String,
    /// MIME type
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Base64-encoded bytes
    pub blob: String,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The contents of a resource: text or a blob
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum ResourceContents {
    /// Text (has `text`)
    Text(TextResourceContents),
    /// Binary (has `blob`)
    Blob(BlobResourceContents),
}

impl ResourceContents {
    /// Text contents
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        Self::Text(TextResourceContents {
            uri: uri.into(),
            mime_type: None,
            text: text.into(),
            meta: None,
            extra: Map::new(),
        })
    }

    /// Binary contents from base64
    pub fn blob(uri: impl Into<String>, blob: impl Into<String>) -> Self {
        Self::Blob(BlobResourceContents {
            uri: uri.into(),
            mime_type: None,
            blob: blob.into(),
            meta: None,
            extra: Map::new(),
        })
    }

    /// Sets the MIME type
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        let m = Some(mime_type.into());
        match &mut self {
            Self::Text(t) => t.mime_type = m,
            Self::Blob(b) => b.mime_type = m,
        }
        self
    }

    /// The URI
    pub fn uri(&self) -> &str {
        match self {
            Self::Text(t) => &t.uri,
            Self::Blob(b) => &b.uri,
        }
    }
}

/// A model's request to call a tool, in sampling (`type: "tool_use"`, 2025-11-25 and later)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolUseContent {
    /// Identifies this call; the matching result carries it as `toolUseId`
    pub id: String,
    /// The tool's name
    pub name: String,
    /// The arguments
    pub input: Map<String, Value>,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ToolUseContent {
    /// A tool call
    pub fn new(id: impl Into<String>, name: impl Into<String>, input: Map<String, Value>) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            input,
            meta: None,
            extra: Map::new(),
        }
    }
}

/// The result of a tool call, in sampling (`type: "tool_result"`, 2025-11-25 and later)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolResultContent {
    /// The `id` of the matching tool use
    pub tool_use_id: String,
    /// The result blocks
    pub content: Vec<ContentBlock>,
    /// Structured result
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the call failed
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ToolResultContent {
    /// A tool result
    pub fn new(tool_use_id: impl Into<String>, content: Vec<ContentBlock>) -> Self {
        Self {
            tool_use_id: tool_use_id.into(),
            content,
            structured_content: None,
            is_error: None,
            meta: None,
            extra: Map::new(),
        }
    }
}

/// One block of a sampling message
///
/// Read by its `"type"` tag, like [`ContentBlock`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum SamplingContent {
    /// `"text"`
    Text(TextContent),
    /// `"image"`
    Image(ImageContent),
    /// `"audio"` (2025-03-26 and later)
    Audio(AudioContent),
    /// `"tool_use"` (2025-11-25 and later)
    ToolUse(ToolUseContent),
    /// `"tool_result"` (2025-11-25 and later)
    ToolResult(ToolResultContent),
}

impl Tagged for SamplingContent {
    const EXPECTING: &'static str = "a sampling content block";
    const TAGS: &'static [&'static str] = &["text", "image", "audio", "tool_use", "tool_result"];

    fn variant<'de, D: Deserializer<'de>>(tag: usize, fields: D) -> Result<Self, D::Error> {
        Ok(match tag {
            0 => Self::Text(TextContent::deserialize(fields)?),
            1 => Self::Image(ImageContent::deserialize(fields)?),
            2 => Self::Audio(AudioContent::deserialize(fields)?),
            3 => Self::ToolUse(ToolUseContent::deserialize(fields)?),
            _ => Self::ToolResult(ToolResultContent::deserialize(fields)?),
        })
    }

    fn extra(&self) -> &Map<String, Value> {
        match self {
            Self::Text(b) => &b.extra,
            Self::Image(b) | Self::Audio(b) => &b.extra,
            Self::ToolUse(b) => &b.extra,
            Self::ToolResult(b) => &b.extra,
        }
    }
}

impl<'de> Deserialize<'de> for SamplingContent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        tagged::deserialize(d)
    }
}

impl SamplingContent {
    /// A text block
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(TextContent::new(text))
    }
}

impl FitVersion for SamplingContent {
    /// Audio before 2025-03-26 and tool use / tool results before 2025-11-25 become a text
    /// block (a tool result keeps the text of its blocks); inner blocks of a tool result are
    /// fitted like [`ContentBlock`]s
    fn fit_to(&mut self, version: ProtocolVersion) {
        let replacement = match self {
            Self::Audio(a) if version < ProtocolVersion::V2025_03_26 => stand_in(
                audio_description(&a.mime_type, version),
                a.annotations.take(),
                a.meta.take(),
            ),
            Self::ToolUse(t) if version < ProtocolVersion::V2025_11_25 => stand_in(
                format!(
                    "[tool use {} ({}): {}]",
                    t.name,
                    t.id,
                    Value::Object(t.input.clone())
                ),
                None,
                t.meta.take(),
            ),
            Self::ToolResult(r) if version < ProtocolVersion::V2025_11_25 => {
                let texts: Vec<&str> = r.content.iter().filter_map(ContentBlock::as_text).collect();
                let status = if r.is_error == Some(true) {
                    "error"
                } else {
                    "result"
                };
                stand_in(
                    format!("[tool {status} ({})]\n{}", r.tool_use_id, texts.join("\n")),
                    None,
                    r.meta.take(),
                )
            }
            Self::ToolResult(r) => {
                r.content.fit_to(version);
                return;
            }
            _ => return,
        };
        *self = Self::Text(replacement);
    }
}

/// The content of a sampling message: one block, or (2025-11-25 and later) several
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum SamplingContents {
    /// One block
    One(SamplingContent),
    /// Several blocks (2025-11-25 and later)
    Many(Vec<SamplingContent>),
}

impl SamplingContents {
    /// The blocks, owned
    pub(crate) fn into_vec(self) -> Vec<SamplingContent> {
        match self {
            Self::One(c) => vec![c],
            Self::Many(v) => v,
        }
    }
}

impl From<SamplingContent> for SamplingContents {
    fn from(c: SamplingContent) -> Self {
        Self::One(c)
    }
}

impl From<Vec<SamplingContent>> for SamplingContents {
    fn from(v: Vec<SamplingContent>) -> Self {
        Self::Many(v)
    }
}

#[cfg(test)]
mod tagged_tests {
    //! The `"type"`-tagged unions held to serde's derived reading (`schema::tagged`)

    use serde::Deserialize;
    use serde_json::json;

    use super::{
        AudioContent, ContentBlock, EmbeddedResource, ImageContent, Resource, SamplingContent,
        TextContent, ToolResultContent, ToolUseContent,
    };

    /// serde's derived reading of the same unions: the reference
    #[derive(Debug, Deserialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    enum DerivedBlock {
        Text(TextContent),
        Image(ImageContent),
        Audio(AudioContent),
        ResourceLink(Resource),
        Resource(EmbeddedResource),
    }

    impl From<DerivedBlock> for ContentBlock {
        fn from(d: DerivedBlock) -> Self {
            match d {
                DerivedBlock::Text(b) => Self::Text(b),
                DerivedBlock::Image(b) => Self::Image(b),
                DerivedBlock::Audio(b) => Self::Audio(b),
                DerivedBlock::ResourceLink(b) => Self::ResourceLink(b),
                DerivedBlock::Resource(b) => Self::Resource(b),
            }
        }
    }

    #[derive(Debug, Deserialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    enum DerivedSampling {
        Text(TextContent),
        Image(ImageContent),
        Audio(AudioContent),
        ToolUse(ToolUseContent),
        ToolResult(ToolResultContent),
    }

    impl From<DerivedSampling> for SamplingContent {
        fn from(d: DerivedSampling) -> Self {
            match d {
                DerivedSampling::Text(b) => Self::Text(b),
                DerivedSampling::Image(b) => Self::Image(b),
                DerivedSampling::Audio(b) => Self::Audio(b),
                DerivedSampling::ToolUse(b) => Self::ToolUse(b),
                DerivedSampling::ToolResult(b) => Self::ToolResult(b),
            }
        }
    }

    /// Blocks with the tag first, later, missing, unknown, repeated, not a string; fields
    /// repeated, unknown, of the wrong type; not an object
    const BLOCKS: &[&str] = &[
        r#"{"type":"text","text":"hi"}"#,
        r#"{"text":"hi","type":"text"}"#,
        r#"{"type":"text","text":"hi","x":{"y":[1,2]},"_meta":{"k":1}}"#,
        r#"{"x":1,"text":"hi","type":"text","annotations":{"priority":0.5}}"#,
        r#"{"type":"image","data":"AAA=","mimeType":"image/png"}"#,
        r#"{"mimeType":"audio/wav","type":"audio","data":"AAA="}"#,
        r#"{"type":"resource_link","uri":"file:///a","name":"a"}"#,
        r#"{"type":"resource","resource":{"uri":"file:///a","text":"t"}}"#,
        r#"{"resource":{"uri":"file:///a","blob":"AAA="},"type":"resource"}"#,
        r#"{"type":"tool_use","id":"1","name":"n","input":{}}"#,
        r#"{"content":[],"type":"tool_result","toolUseId":"1"}"#,
        r#"{"type":"text"}"#,
        r#"{"text":"hi"}"#,
        r#"{}"#,
        r#"{"type":"video","text":"hi"}"#,
        r#"{"text":"hi","type":"video"}"#,
        r#"{"type":"text","text":"hi","type":"text"}"#,
        r#"{"text":"hi","type":"text","type":"text"}"#,
        r#"{"type":"text","text":"a","text":"b"}"#,
        r#"{"text":"a","type":"text","text":"b"}"#,
        r#"{"type":1,"text":"hi"}"#,
        r#"{"text":"hi","type":null}"#,
        r#"{"type":"text","text":5}"#,
        r#"{"text":5,"type":"text"}"#,
        r#"{"type":"text","text":"hi","annotations":"no"}"#,
        r#"{"type":"TEXT","text":"hi"}"#,
        r#"["text","hi"]"#,
        r#""text""#,
        r#"null"#,
    ];

    #[test]
    fn a_block_reads_as_the_derived_reading_reads_it_whether_the_tag_is_first_or_not() {
        for text in BLOCKS {
            let ours = serde_json::from_str::<ContentBlock>(text);
            let derived = serde_json::from_str::<DerivedBlock>(text).map(ContentBlock::from);
            match (&ours, &derived) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{text}"),
                (Err(_), Err(_)) => {}
                _ => panic!("{text}: ours {ours:?}, derived {derived:?}"),
            }
            // From a JSON value too (the tag then comes in the map's order).
            let value: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
            let ours = ContentBlock::deserialize(&value);
            let derived = DerivedBlock::deserialize(&value).map(ContentBlock::from);
            assert_eq!(ours.is_ok(), derived.is_ok(), "{text} as a value");
            if let (Ok(a), Ok(b)) = (ours, derived) {
                assert_eq!(a, b, "{text} as a value");
            }

            let ours = serde_json::from_str::<SamplingContent>(text);
            let derived = serde_json::from_str::<DerivedSampling>(text).map(SamplingContent::from);
            match (&ours, &derived) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{text}"),
                (Err(_), Err(_)) => {}
                _ => panic!("{text}: ours {ours:?}, derived {derived:?}"),
            }
        }
    }

    #[test]
    fn a_refused_block_says_why() {
        let err = |text: &str| {
            serde_json::from_str::<ContentBlock>(text)
                .unwrap_err()
                .to_string()
        };
        assert!(err(r#"{"text":"hi"}"#).contains("missing field `type`"));
        assert!(err(r#"{"type":"video"}"#).contains("unknown variant `video`"));
        assert!(err(r#"{"text":"hi","type":"video"}"#).contains("unknown variant `video`"));
        assert!(
            err(r#"{"type":"text","type":"text","text":"hi"}"#).contains("duplicate field `type`")
        );
        assert!(err(r#"{"text":"a","type":"text","text":"b"}"#).contains("duplicate field `text`"));
        assert!(err(r#"{"type":"text"}"#).contains("missing field `text`"));
        assert!(err(r#"{"type":1,"text":"hi"}"#).contains("expected a string tag"));
        assert!(err(r#"{"text":"hi","type":1}"#).contains("expected a string tag"));
        assert!(err("[]").contains("expected a content block"));
    }

    #[test]
    fn a_block_written_reads_back_the_same() {
        let blocks = [
            ContentBlock::text("hi"),
            ContentBlock::image("AAA=", "image/png"),
            ContentBlock::audio("AAA=", "audio/wav"),
            serde_json::from_value(
                json!({"type":"resource_link","uri":"file:///a","name":"a","x":1}),
            )
            .unwrap(),
        ];
        for block in blocks {
            let text = serde_json::to_string(&block).unwrap();
            assert!(text.starts_with(r#"{"type":"#), "{text}");
            assert_eq!(serde_json::from_str::<ContentBlock>(&text).unwrap(), block);
        }
    }
}
