//! Reading the schema's `"type"`-tagged unions ([`ContentBlock`](super::ContentBlock),
//! [`SamplingContent`](super::SamplingContent)) without buffering the block
//!
//! serde's derived internally tagged enum first copies the whole object into its own buffer
//! (every key and string owned), since the tag may come anywhere, then reads the variant
//! from that copy. A block's tag almost always comes first (every MCP SDK writes it first):
//! then the variant is read straight from the rest of the map. Otherwise the object is read
//! into a JSON object and the variant from that, as before. Both ways accept and refuse the
//! same objects as the derived reading: a missing tag, an unknown one, a repeated one and a
//! repeated field are refused.

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, Visitor};
use serde_json::{Map, Value};

/// The name of the tag field
const TAG: &str = "type";

/// A union read by its `"type"` tag
pub(crate) trait Tagged: Sized {
    /// What the union is, for errors ("a content block")
    const EXPECTING: &'static str;
    /// The tags, in order
    const TAGS: &'static [&'static str];
    /// Reads the variant of tag number `tag` (an index into [`TAGS`](Self::TAGS)) from the
    /// object's other fields
    fn variant<'de, D: Deserializer<'de>>(tag: usize, fields: D) -> Result<Self, D::Error>;
    /// The fields the variant kept as sent (to refuse a second tag, which they would take)
    fn extra(&self) -> &Map<String, Value>;
}

/// Reads a [`Tagged`] union (its `Deserialize`)
pub(crate) fn deserialize<'de, T: Tagged, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
    d.deserialize_map(TaggedVisitor(PhantomData))
}

struct TaggedVisitor<T>(PhantomData<T>);

impl<'de, T: Tagged> Visitor<'de> for TaggedVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(T::EXPECTING)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        match map.next_key_seed(KeySeed)? {
            None => Err(de::Error::missing_field(TAG)),
            Some(Key::Tag) => {
                let tag = map.next_value_seed(TagSeed::<T>(PhantomData))?;
                let value = T::variant(tag, MapAccessDeserializer::new(map))?;
                if value.extra().contains_key(TAG) {
                    return Err(de::Error::duplicate_field(TAG));
                }
                Ok(value)
            }
            Some(Key::Other(first)) => {
                // The tag comes later: read the object, then the variant from it.
                let mut object = Map::new();
                object.insert(first, map.next_value()?);
                while let Some((key, value)) = map.next_entry::<String, Value>()? {
                    if object.contains_key(&key) {
                        return Err(de::Error::custom(format_args!("duplicate field `{key}`")));
                    }
                    object.insert(key, value);
                }
                let tag = match object.remove(TAG) {
                    None => return Err(de::Error::missing_field(TAG)),
                    Some(Value::String(tag)) => tag_index::<T, A::Error>(&tag)?,
                    Some(other) => {
                        return Err(de::Error::invalid_type(unexpected(&other), &"a string tag"));
                    }
                };
                T::variant(tag, object.into_deserializer()).map_err(de::Error::custom)
            }
        }
    }
}

/// What an unexpected JSON value is, for an error
fn unexpected(value: &Value) -> de::Unexpected<'_> {
    match value {
        Value::Null => de::Unexpected::Unit,
        Value::Bool(b) => de::Unexpected::Bool(*b),
        Value::Number(_) => de::Unexpected::Other("number"),
        Value::String(s) => de::Unexpected::Str(s),
        Value::Array(_) => de::Unexpected::Seq,
        Value::Object(_) => de::Unexpected::Map,
    }
}

fn tag_index<T: Tagged, E: de::Error>(tag: &str) -> Result<usize, E> {
    T::TAGS
        .iter()
        .position(|t| *t == tag)
        .ok_or_else(|| E::unknown_variant(tag, T::TAGS))
}

/// The first key: the tag, or another (kept)
enum Key {
    Tag,
    Other(String),
}

struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Key, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for KeySeed {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<Key, E> {
        Ok(if key == TAG {
            Key::Tag
        } else {
            Key::Other(key.to_owned())
        })
    }

    fn visit_string<E: de::Error>(self, key: String) -> Result<Key, E> {
        Ok(if key == TAG {
            Key::Tag
        } else {
            Key::Other(key)
        })
    }
}

/// The tag's value, as its index among the union's tags
struct TagSeed<T>(PhantomData<T>);

impl<'de, T: Tagged> DeserializeSeed<'de> for TagSeed<T> {
    type Value = usize;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_str(self)
    }
}

impl<T: Tagged> Visitor<'_> for TagSeed<T> {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string tag")
    }

    fn visit_str<E: de::Error>(self, tag: &str) -> Result<usize, E> {
        tag_index::<T, E>(tag)
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use crate::schema::content::{
        AudioContent, EmbeddedResource, ImageContent, TextContent, ToolResultContent,
        ToolUseContent,
    };
    use crate::schema::{ContentBlock, Resource, SamplingContent};

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
