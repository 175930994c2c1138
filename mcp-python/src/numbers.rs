//! The numbers Python sees for the core's opaque ids (HTTP exchanges, client streams)

use std::collections::HashMap;
use std::hash::Hash;

/// A two-way map between the core's ids and small numbers, handed out from 1 and never
/// reused
pub(crate) struct Numbers<K> {
    next: u64,
    numbers: HashMap<K, u64>,
    ids: HashMap<u64, K>,
}

impl<K: Copy + Eq + Hash> Numbers<K> {
    pub(crate) fn new() -> Self {
        Self {
            next: 1,
            numbers: HashMap::new(),
            ids: HashMap::new(),
        }
    }

    /// The number of `id`, given on first sight
    pub(crate) fn number(&mut self, id: K) -> u64 {
        if let Some(n) = self.numbers.get(&id) {
            return *n;
        }
        let n = self.next;
        self.next += 1;
        self.numbers.insert(id, n);
        self.ids.insert(n, id);
        n
    }

    /// The id behind a number still in use
    pub(crate) fn id(&self, number: u64) -> Option<K> {
        self.ids.get(&number).copied()
    }

    /// Forgets a number (its exchange or stream ended)
    pub(crate) fn retire(&mut self, number: u64) {
        if let Some(id) = self.ids.remove(&number) {
            self.numbers.remove(&id);
        }
    }
}
