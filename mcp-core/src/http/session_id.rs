//! Where session ids come from: the binding's randomness, injected, behind an optional
//! routing tag naming the process that issued them

use std::fmt;
use std::str::FromStr;

/// A source of fresh, unguessable session ids (2025 wire)
///
/// The core has no randomness; the binding implements this with its OS random generator.
/// Ids must be visible ASCII (0x21–0x7E) and unique; ids that are not are refused and the
/// `initialize` fails with 500. With [`HttpConfig::node`](super::HttpConfig::node) set, the
/// server puts `<node>.` before each id this source makes.
pub trait SessionIdSource {
    /// The next session id
    fn next_session_id(&mut self) -> String;
}

/// Any closure producing 16 random bytes is a source: the id is their 32 hex digits
impl<F: FnMut() -> [u8; 16]> SessionIdSource for F {
    fn next_session_id(&mut self) -> String {
        session_id_from_bytes(self())
    }
}

/// A session id from 16 random bytes: 32 lowercase hex digits
pub fn session_id_from_bytes(bytes: [u8; 16]) -> String {
    format!("{:032x}", u128::from_be_bytes(bytes))
}

/// Whether `id` may be a session id: non-empty visible ASCII
pub(crate) fn is_valid_session_id(id: &str) -> bool {
    !id.is_empty() && id.bytes().all(|b| (0x21..=0x7E).contains(&b))
}

/// The name of one server process among several behind a load balancer, put before every
/// 2025-wire session id it issues as `<node>.<random hex>`
/// ([`HttpConfig::node`](super::HttpConfig::node))
///
/// A proxy that cannot learn sticky sessions from a response (nginx open source) routes a
/// request to the process its `Mcp-Session-Id` names, for example with a `map` on
/// `^a\.` (the repository's `deploy/nginx/mcp.conf`). A name is 1 to 32 characters of
/// `A-Z`, `a-z`, `0-9`, `_` and `-`: no dot, so the first dot of an id ends it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NodeTag(String);

/// Why a [`NodeTag`] was refused
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidNodeTag(String);

impl fmt::Display for InvalidNodeTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid node name {:?}: 1 to 32 characters of A-Z, a-z, 0-9, '_' and '-'",
            self.0
        )
    }
}

impl std::error::Error for InvalidNodeTag {}

impl NodeTag {
    /// The longest name
    pub const MAX_LEN: usize = 32;

    /// `name` as a node tag, if it is 1 to 32 characters of `[A-Za-z0-9_-]`
    pub fn new(name: &str) -> Result<Self, InvalidNodeTag> {
        let ok = !name.is_empty()
            && name.len() <= Self::MAX_LEN
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if ok {
            Ok(Self(name.to_owned()))
        } else {
            Err(InvalidNodeTag(name.to_owned()))
        }
    }

    /// The name
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `id` with this tag before it: `<node>.<id>`
    pub(crate) fn tag(&self, id: &str) -> String {
        format!("{}.{id}", self.0)
    }
}

impl FromStr for NodeTag {
    type Err = InvalidNodeTag;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::new(s)
    }
}

impl fmt::Display for NodeTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_names_are_1_to_32_of_letters_digits_underscore_and_hyphen() {
        for good in ["a", "b-2", "node_7", "Z", &"x".repeat(32)] {
            assert_eq!(NodeTag::new(good).unwrap().as_str(), good);
            assert_eq!(good.parse::<NodeTag>().unwrap().to_string(), good);
        }
        for bad in ["", "a.b", "a b", "é", "a/b", "a:1", &"x".repeat(33)] {
            let err = NodeTag::new(bad).unwrap_err();
            assert!(err.to_string().contains("1 to 32 characters"), "{err}");
        }
    }

    #[test]
    fn a_tagged_id_is_the_name_a_dot_and_the_id() {
        let tag = NodeTag::new("a").unwrap();
        let id = tag.tag(&session_id_from_bytes([0xAB; 16]));
        assert_eq!(id, format!("a.{}", "ab".repeat(16)));
        assert!(is_valid_session_id(&id));
    }
}
