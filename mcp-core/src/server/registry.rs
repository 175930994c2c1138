//! An ordered, keyed store with cursor pagination: the shape shared by the catalog's tools,
//! resources, templates and prompts
//!
//! Entries sit in a `BTreeMap` under a *position* `(seq, key)`. In [`Order::ByKey`] `seq` is
//! always 0, so entries are sorted by key; in [`Order::Registration`] `seq` counts
//! registrations, so entries keep the order they were added in. A cursor is the position of
//! the last entry returned, base64url-encoded with a one-letter list tag: the next page starts
//! strictly after it, so removing entries between two pages neither skips nor repeats the
//! ones that remain.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

use crate::jsonrpc::{ErrorObject, code};

/// The order a catalog lists its entries in
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Order {
    /// Sorted by key (byte-wise: tool and prompt names, resource URIs, URI templates); the
    /// default
    #[default]
    ByKey,
    /// In the order they were registered (a re-registered entry moves to the end)
    Registration,
}

type Position = (u64, String);

/// One list of the catalog
#[derive(Debug)]
pub(crate) struct Registry<T> {
    tag: char,
    order: Order,
    next_seq: u64,
    /// key → (seq of its position, value)
    entries: BTreeMap<String, (u64, T)>,
    /// The listing order
    positions: BTreeSet<Position>,
}

impl<T> Registry<T> {
    /// An empty list whose cursors carry `tag`
    pub(crate) fn new(tag: char, order: Order) -> Self {
        Self {
            tag,
            order,
            next_seq: 1,
            entries: BTreeMap::new(),
            positions: BTreeSet::new(),
        }
    }

    pub(crate) fn contains(&self, key: &str) -> bool {
        self.entries.contains_key(key)
    }

    pub(crate) fn get(&self, key: &str) -> Option<&T> {
        self.entries.get(key).map(|(_, value)| value)
    }

    /// Adds an entry; the caller has checked that `key` is new
    pub(crate) fn insert(&mut self, key: String, value: T) {
        let seq = match self.order {
            Order::ByKey => 0,
            Order::Registration => {
                self.next_seq += 1;
                self.next_seq
            }
        };
        self.positions.insert((seq, key.clone()));
        self.entries.insert(key, (seq, value));
    }

    pub(crate) fn remove(&mut self, key: &str) -> Option<T> {
        let (seq, value) = self.entries.remove(key)?;
        self.positions.remove(&(seq, key.to_owned()));
        Some(value)
    }

    /// Every entry, in order
    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.positions.iter().map(|(_, key)| self.value(key))
    }

    fn value(&self, key: &str) -> &T {
        &self
            .entries
            .get(key)
            .expect("every position has its entry")
            .1
    }

    /// The page after `cursor` (the first page when `None`): up to `size` entries (at least
    /// one) and the cursor of the next page when more entries follow
    pub(crate) fn page(
        &self,
        cursor: Option<&str>,
        size: usize,
    ) -> Result<(Vec<&T>, Option<String>), ErrorObject> {
        let start = match cursor {
            None => Bound::Unbounded,
            Some(cursor) => Bound::Excluded(self.decode(cursor).ok_or_else(invalid_cursor)?),
        };
        let mut range = self.positions.range((start, Bound::Unbounded));
        let mut items = Vec::new();
        let mut last = None;
        for position in range.by_ref().take(size.max(1)) {
            items.push(self.value(&position.1));
            last = Some(position);
        }
        let next = match (last, range.next()) {
            (Some(position), Some(_)) => Some(self.encode(position)),
            _ => None,
        };
        Ok((items, next))
    }

    fn encode(&self, (seq, key): &Position) -> String {
        URL_SAFE_NO_PAD.encode(format!("{}{seq}:{key}", self.tag))
    }

    fn decode(&self, cursor: &str) -> Option<Position> {
        let text = String::from_utf8(URL_SAFE_NO_PAD.decode(cursor).ok()?).ok()?;
        let rest = text.strip_prefix(self.tag)?;
        let (seq, key) = rest.split_once(':')?;
        Some((seq.parse().ok()?, key.to_owned()))
    }
}

/// The error for a cursor this catalog did not issue: -32602 `Invalid cursor`
pub(crate) fn invalid_cursor() -> ErrorObject {
    ErrorObject::new(code::INVALID_PARAMS, "Invalid cursor")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_are_tagged_per_list() {
        let mut tools = Registry::new('t', Order::ByKey);
        let mut prompts = Registry::new('p', Order::ByKey);
        for key in ["a", "b"] {
            tools.insert(key.to_owned(), ());
            prompts.insert(key.to_owned(), ());
        }
        let (_, next) = tools.page(None, 1).unwrap();
        let next = next.unwrap();
        assert!(tools.page(Some(&next), 1).is_ok());
        assert_eq!(prompts.page(Some(&next), 1).unwrap_err(), invalid_cursor());
    }

    #[test]
    fn registration_order_survives_removal() {
        let mut r = Registry::new('t', Order::Registration);
        for key in ["c", "a", "b"] {
            r.insert(key.to_owned(), key);
        }
        let (page, next) = r.page(None, 1).unwrap();
        assert_eq!(page, [&"c"]);
        r.remove("c");
        r.remove("a");
        let (page, next) = r.page(next.as_deref(), 1).unwrap();
        assert_eq!(page, [&"b"]);
        assert!(next.is_none());
    }
}
