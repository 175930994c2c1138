//! Cheap work on raw JSON objects: find top-level keys and add members without re-serializing
//!
//! Params and results pass through the core as raw JSON text. The core sometimes needs to add
//! a member (`_meta` on modern requests, `resultType` on modern results). Re-serializing the
//! whole value would cost a full parse and allocation, so these helpers splice text instead and
//! fall back to a parse only when an existing `_meta` object must be merged.

use std::fmt;

use serde::Deserializer;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};

/// Which of `keys` appear at the top level of the JSON object `json`, as a bit mask
///
/// Bit `i` is set when `keys[i]` is present. `None` when `json` is not an object.
pub(crate) fn top_level_keys(json: &str, keys: &[&str]) -> Option<u64> {
    debug_assert!(keys.len() <= 64);
    let mut de = serde_json::Deserializer::from_str(json);
    de.deserialize_map(KeysVisitor { keys }).ok()
}

struct KeysVisitor<'k> {
    keys: &'k [&'k str],
}

impl<'de> Visitor<'de> for KeysVisitor<'_> {
    type Value = u64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<u64, A::Error> {
        let mut found = 0u64;
        while let Some(index) = map.next_key_seed(KeyIndex { keys: self.keys })? {
            if let Some(i) = index {
                found |= 1 << i;
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok(found)
    }
}

struct KeyIndex<'k> {
    keys: &'k [&'k str],
}

impl<'de> DeserializeSeed<'de> for KeyIndex<'_> {
    type Value = Option<usize>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyIndex<'_> {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(self.keys.iter().position(|k| *k == v))
    }
}

/// Members to add to a JSON object on its way out
pub(crate) struct Patch<'a> {
    /// Top-level members added when absent: `(key, raw JSON value)`
    pub(crate) members: &'a [(&'a str, &'a [u8])],
    /// Entries added to the object's `_meta` (created when absent)
    pub(crate) meta: &'a [(&'a str, &'a [u8])],
    /// Whether `meta` entries replace entries the object's `_meta` already has
    pub(crate) meta_wins: bool,
}

/// Writes the JSON object `object` (or `{}` when `None`) to `out` with `patch` applied
///
/// The fast path splices text: it applies when the object has neither `_meta` nor any of the
/// members. Otherwise the object is parsed once and serialized again. `object` must be valid
/// JSON; if it is not an object it is written unchanged.
pub(crate) fn write_patched(out: &mut Vec<u8>, object: Option<&str>, patch: &Patch<'_>) {
    let mut keys = ["_meta"; 8];
    let n = patch.members.len().min(7);
    for (slot, (key, _)) in keys[1..].iter_mut().zip(patch.members) {
        *slot = key;
    }
    let found = match object {
        None => 0,
        Some(o) => match keys_by_text(o, &keys[..=n]).or_else(|| top_level_keys(o, &keys[..=n])) {
            Some(found) => found,
            None => {
                out.extend_from_slice(o.as_bytes());
                return;
            }
        },
    };
    if found & 1 == 0 && patch.members.len() < keys.len() {
        // No `_meta`: the members it lacks and the `_meta` go in front of its text.
        splice(out, object, patch, found);
    } else {
        merge(out, object.unwrap_or("{}"), patch);
    }
}

/// [`top_level_keys`] of the JSON text `object` read from its text alone, without a
/// parse: `None` when that is not safe (an escape could spell a key) or it is not an object
///
/// Without escapes every quote opens or closes a string, so the structure is the brackets,
/// commas and quotes outside strings; a string is skipped with one `memchr` to its end,
/// which makes a large answer (its text is mostly in strings) cheap too.
fn keys_by_text(object: &str, keys: &[&str]) -> Option<u64> {
    debug_assert!(keys.len() <= 64);
    let bytes = object.as_bytes();
    if memchr::memchr(b'\\', bytes).is_some() {
        return None;
    }
    let start = bytes.iter().position(|b| !b.is_ascii_whitespace())?;
    if bytes[start] != b'{' {
        return None;
    }
    let mut found = 0u64;
    let mut depth = 0_usize;
    // The next string at the top level is a key (after `{` or `,` there).
    let mut key_next = false;
    let mut i = start;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let end = i + 1 + memchr::memchr(b'"', &bytes[i + 1..])?;
                if depth == 1 && key_next {
                    let key = &bytes[i + 1..end];
                    if let Some(k) = keys.iter().position(|k| k.as_bytes() == key) {
                        found |= 1 << k;
                    }
                    key_next = false;
                }
                i = end;
            }
            b'{' => {
                depth += 1;
                key_next = depth == 1;
            }
            b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b',' if depth == 1 => key_next = true,
            _ => {}
        }
        i += 1;
    }
    Some(found)
}

/// Writes `patch`'s members (but those whose bit is set in `present`: bit `i + 1` for
/// member `i`) and its `_meta`, then the members of `object`, which has no `_meta`
fn splice(out: &mut Vec<u8>, object: Option<&str>, patch: &Patch<'_>, present: u64) {
    out.push(b'{');
    let mut first = true;
    for (i, (key, value)) in patch.members.iter().enumerate() {
        if i < 63 && present & (1 << (i + 1)) != 0 {
            continue;
        }
        if !first {
            out.push(b',');
        }
        first = false;
        write_json_str(out, key);
        out.push(b':');
        out.extend_from_slice(value);
    }
    if !patch.meta.is_empty() {
        if !first {
            out.push(b',');
        }
        first = false;
        out.extend_from_slice(b"\"_meta\":{");
        for (i, (key, value)) in patch.meta.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_json_str(out, key);
            out.push(b':');
            out.extend_from_slice(value);
        }
        out.push(b'}');
    }
    let rest = object.map_or("}", |o| o.trim().strip_prefix('{').unwrap_or("}"));
    let body = rest.trim_start();
    if !body.starts_with('}') && !first {
        out.push(b',');
    }
    out.extend_from_slice(body.as_bytes());
}

fn merge(out: &mut Vec<u8>, object: &str, patch: &Patch<'_>) {
    let Ok(mut map) = serde_json::from_str::<Map<String, Value>>(object) else {
        out.extend_from_slice(object.as_bytes());
        return;
    };
    for (key, value) in patch.members {
        if !map.contains_key(*key)
            && let Ok(v) = serde_json::from_slice::<Value>(value)
        {
            map.insert((*key).to_owned(), v);
        }
    }
    if !patch.meta.is_empty() {
        let meta = map
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if !meta.is_object() {
            *meta = Value::Object(Map::new());
        }
        if let Value::Object(meta) = meta {
            for (key, value) in patch.meta {
                if (patch.meta_wins || !meta.contains_key(*key))
                    && let Ok(v) = serde_json::from_slice::<Value>(value)
                {
                    meta.insert((*key).to_owned(), v);
                }
            }
        }
    }
    serde_json::to_writer(&mut *out, &map).expect("writing JSON to a Vec cannot fail");
}

/// Writes `s` as a JSON string literal
pub(crate) fn write_json_str(out: &mut Vec<u8>, s: &str) {
    serde_json::to_writer(&mut *out, s).expect("writing JSON to a Vec cannot fail");
}

/// Whether `json` (already valid JSON) is an object
pub(crate) fn is_object(json: &str) -> bool {
    json.trim_start().starts_with('{')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_top_level_keys_only() {
        let keys = ["_meta", "resultType"];
        assert_eq!(top_level_keys(r#"{"a":{"_meta":1}}"#, &keys), Some(0));
        assert_eq!(top_level_keys(r#"{"_meta":{},"x":[1,2]}"#, &keys), Some(1));
        assert_eq!(
            top_level_keys(r#"{"resultType":"complete","_meta":null}"#, &keys),
            Some(3)
        );
        assert_eq!(top_level_keys(r#"{"\u005fmeta":1}"#, &keys), Some(1));
        assert_eq!(top_level_keys("[1]", &keys), None);
    }

    fn patched(object: Option<&str>, patch: &Patch<'_>) -> String {
        let mut out = Vec::new();
        write_patched(&mut out, object, patch);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn splices_when_nothing_to_merge() {
        let p = Patch {
            members: &[("k", b"2")],
            meta: &[],
            meta_wins: false,
        };
        assert_eq!(patched(Some(r#" { "a" : 1 } "#), &p), r#"{"k":2,"a" : 1 }"#);
        assert_eq!(patched(Some("{ }"), &p), r#"{"k":2}"#);
        assert_eq!(patched(None, &p), r#"{"k":2}"#);
        let p = Patch {
            members: &[],
            meta: &[("m", b"1")],
            meta_wins: true,
        };
        assert_eq!(
            patched(Some(r#"{"a":1}"#), &p),
            r#"{"_meta":{"m":1},"a":1}"#
        );
        assert_eq!(patched(Some("{}"), &p), r#"{"_meta":{"m":1}}"#);
        let p = Patch {
            members: &[],
            meta: &[],
            meta_wins: true,
        };
        assert_eq!(patched(Some("{}"), &p), "{}");
        assert_eq!(patched(Some("[1]"), &p), "[1]");
    }

    #[test]
    fn merges_into_existing_meta_or_members() {
        let p = Patch {
            members: &[("resultType", b"\"complete\"")],
            meta: &[("k", b"\"v\"")],
            meta_wins: false,
        };
        let v: Value =
            serde_json::from_str(&patched(Some(r#"{"_meta":{"a":1,"k":0},"b":2}"#), &p)).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"_meta":{"a":1,"k":0},"b":2,"resultType":"complete"})
        );
        let v: Value =
            serde_json::from_str(&patched(Some(r#"{"resultType":"input_required"}"#), &p)).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"_meta":{"k":"v"},"resultType":"input_required"})
        );
        let p = Patch {
            members: &[],
            meta: &[("k", b"\"v\"")],
            meta_wins: true,
        };
        let v: Value = serde_json::from_str(&patched(Some(r#"{"_meta":{"k":0}}"#), &p)).unwrap();
        assert_eq!(v, serde_json::json!({"_meta":{"k":"v"}}));
    }

    #[test]
    fn splices_the_members_an_object_without_meta_lacks() {
        let p = Patch {
            members: &[("resultType", b"\"complete\""), ("ttlMs", b"0")],
            meta: &[("k", b"\"v\"")],
            meta_wins: false,
        };
        // Its own `resultType` stays, once; the lacking `ttlMs` and the `_meta` go in front.
        assert_eq!(
            patched(Some(r#"{"resultType":"input_required","a":1}"#), &p),
            r#"{"ttlMs":0,"_meta":{"k":"v"},"resultType":"input_required","a":1}"#
        );
        assert_eq!(
            patched(Some(r#"{"ttlMs":5,"resultType":"x"}"#), &p),
            r#"{"_meta":{"k":"v"},"ttlMs":5,"resultType":"x"}"#
        );
    }

    fn json_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let word = prop_oneof![
            Just("_meta".to_owned()),
            Just("resultType".to_owned()),
            "[a-z_{}\\[\\],: ]{0,6}",
        ];
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i32>().prop_map(Value::from),
            word.clone().prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, move |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                proptest::collection::vec((word.clone(), inner), 0..5)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #[test]
        fn reading_keys_from_the_text_agrees_with_the_parse(
            members in proptest::collection::vec(
                (proptest::prop_oneof![
                    proptest::strategy::Just("_meta".to_owned()),
                    proptest::strategy::Just("resultType".to_owned()),
                    "[a-z_{}]{1,4}",
                ], json_value()),
                0..6,
            ),
            pretty: bool,
        ) {
            let object = Value::Object(members.into_iter().collect());
            let text = if pretty {
                serde_json::to_string_pretty(&object).unwrap()
            } else {
                serde_json::to_string(&object).unwrap()
            };
            let keys = ["_meta", "resultType", "a"];
            let by_text = keys_by_text(&text, &keys);
            proptest::prop_assert!(by_text.is_some(), "{}", text);
            proptest::prop_assert_eq!(by_text, top_level_keys(&text, &keys), "{}", text);
        }
    }

    #[test]
    fn decides_from_the_text_only_when_that_is_safe() {
        let keys = ["_meta", "resultType"];
        let by_text = |o: &str| keys_by_text(o, &keys);
        assert_eq!(by_text(r#"{"a":1,"b":"meta"}"#), Some(0));
        assert_eq!(by_text(r#" {"resultType":1, "_meta" : {}} "#), Some(0b11));
        // Only top-level keys count: not values, not nested keys, not parts of strings.
        assert_eq!(by_text(r#"{"a":"_meta"}"#), Some(0));
        assert_eq!(
            by_text(r#"{"a":{"_meta":1},"b":[{"resultType":2},"_meta"]}"#),
            Some(0)
        );
        assert_eq!(by_text(r#"{"a":[1,{"b":2}],"resultType":"x"}"#), Some(0b10));
        assert_eq!(
            by_text(r#"{"resultTypes":1,"x_meta":2,"_met":"a,b:{"}"#),
            Some(0)
        );
        assert_eq!(by_text(r#"{"a":"}","_meta":"]"}"#), Some(0b01));
        assert_eq!(by_text("{}"), Some(0));
        // An escape (it could spell a key), or not an object: parse to know.
        assert_eq!(by_text(r#"{"\u005fmeta":1}"#), None);
        assert_eq!(by_text(r#"{"a":"\n"}"#), None);
        assert_eq!(by_text("[1]"), None);
        assert_eq!(by_text("5"), None);
        // It agrees with the parse wherever it answers.
        for o in [
            r#"{"content":[{"type":"text","text":"hello world"}],"resultType":"complete"}"#,
            r#"{"_meta":{"resultType":1},"isError":false,"x":[[],{},"_meta"]}"#,
            r#"{ "resultType" : null , "_meta" : null }"#,
        ] {
            assert_eq!(by_text(o), top_level_keys(o, &keys), "{o}");
        }
        // The escaped key is still found (and merged) through the parse.
        let p = Patch {
            members: &[],
            meta: &[("k", b"1")],
            meta_wins: true,
        };
        let v: Value =
            serde_json::from_str(&patched(Some(r#"{"\u005fmeta":{"a":2}}"#), &p)).unwrap();
        assert_eq!(v, serde_json::json!({"_meta":{"a":2,"k":1}}));
        // A value that merely contains the key's text is spliced correctly.
        let v: Value = serde_json::from_str(&patched(Some(r#"{"t":"\"_meta\""}"#), &p)).unwrap();
        assert_eq!(v, serde_json::json!({"_meta":{"k":1},"t":"\"_meta\""}));
    }
}
