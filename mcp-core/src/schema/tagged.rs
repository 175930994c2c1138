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
                let tag = object
                    .remove(TAG)
                    .ok_or_else(|| de::Error::missing_field(TAG))?;
                let tag = TagSeed::<T>(PhantomData)
                    .deserialize(tag)
                    .map_err(de::Error::custom)?;
                T::variant(tag, object.into_deserializer()).map_err(de::Error::custom)
            }
        }
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
