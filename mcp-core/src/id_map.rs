//! Hash maps keyed by ids this library hands out itself
//!
//! The session, the server and the HTTP rules look requests, runs, exchanges and sessions up
//! by ids they allocate themselves ([`OutboundId`](crate::session::OutboundId),
//! [`InboundId`](crate::session::InboundId), [`ExchangeId`](crate::http::ExchangeId),
//! [`SessionKey`](crate::http::SessionKey), ...): sequential numbers, or a slot and a
//! generation. std's `HashMap` hashes them with SipHash, keyed at random against a peer
//! that picks keys to collide; for keys no peer picks that is ~200 instructions a lookup
//! for nothing (several lookups a message). [`IdMap`] hashes them with one multiplication.
//!
//! Only for keys the library chooses. A map keyed by a peer's values (JSON-RPC request ids,
//! `Mcp-Session-Id`s, task ids, names) keeps std's keyed hasher.

use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, Hash, Hasher};

/// A `HashMap` for keys this library allocates itself (see the [module](self))
pub type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

/// An empty [`IdMap`]
pub fn id_map<K, V>() -> IdMap<K, V> {
    HashMap::default()
}

/// Gives a map's memory back after a burst (the shared 2026 session runs thousands of
/// handlers at once, then none): a map of more than 64 slots a quarter full or less shrinks
/// to half
pub fn shrink<K: Hash + Eq, V, S: BuildHasher>(map: &mut HashMap<K, V, S>) {
    if map.capacity() > 64 && map.len() * 4 <= map.capacity() {
        map.shrink_to(map.len() * 2);
    }
}

/// The [`IdMap`] hasher: each integer written is added and multiplied by an odd constant
/// (the `FxHasher` of rustc-hash 2); `finish` rotates the well-mixed high bits down to
/// where `hashbrown` takes the bucket from
#[derive(Debug, Default, Clone, Copy)]
pub struct IdHasher(u64);

/// Odd, so multiplying by it is a bijection: distinct ids never share a hash
const K: u64 = 0xf135_7aea_2e62_a9c5;

impl IdHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = self.0.wrapping_add(word).wrapping_mul(K);
    }
}

impl Hasher for IdHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0.rotate_left(26)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::hash::BuildHasher;

    fn hash_of<T: Hash>(value: &T) -> u64 {
        BuildHasherDefault::<IdHasher>::default().hash_one(value)
    }

    #[test]
    fn sequential_ids_spread_over_the_buckets_hashbrown_takes() {
        // hashbrown takes the bucket from the low bits and a tag from the top 7: for the ids
        // a session hands out (0, 1, 2, ...) both must vary, or lookups degrade to scans.
        // 4,096 keys in the 8,192 buckets hashbrown gives them: random hashes would fill
        // 8192 * (1 - e^-0.5) = 3,223 of them.
        let n = 4096u64;
        let buckets: HashSet<u64> = (0..n).map(|i| hash_of(&i) & (2 * n - 1)).collect();
        assert!(buckets.len() > 3_100, "{} distinct buckets", buckets.len());
        let tags: HashSet<u64> = (0..n).map(|i| hash_of(&i) >> 57).collect();
        assert_eq!(tags.len(), 128);
    }

    #[test]
    fn distinct_integers_hash_apart_and_equal_ones_alike() {
        assert_eq!(hash_of(&7u64), hash_of(&7u64));
        assert_ne!(hash_of(&7u64), hash_of(&8u64));
        // A slot and a generation, as `InboundId` derives its hash.
        assert_ne!(hash_of(&(1u32, 2u32)), hash_of(&(2u32, 1u32)));
        // Bytes past a multiple of eight count too.
        let bytes = |b: &[u8]| {
            let mut h = IdHasher::default();
            h.write(b);
            h.finish()
        };
        assert_ne!(bytes(&[1; 9]), bytes(&[1; 8]));
        assert_ne!(bytes(&[1, 2, 3]), bytes(&[1, 2, 4]));
    }

    #[test]
    fn an_id_map_finds_what_it_holds() {
        let mut map = id_map();
        for i in 0..10_000u64 {
            map.insert(i, i * 2);
        }
        for i in (0..10_000u64).step_by(3) {
            assert_eq!(map.remove(&i), Some(i * 2));
        }
        assert_eq!(map.get(&4), Some(&8));
        assert_eq!(map.get(&3), None);
        assert_eq!(map.len(), 10_000 - 3_334);
    }
}
