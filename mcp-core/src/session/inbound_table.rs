//! Requests the peer sent us and we have not answered yet

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde_json::Value;
use serde_json::value::RawValue;

use super::ids::InboundId;
use crate::jsonrpc::RequestId;
use crate::version::ProtocolVersion;

/// One unanswered inbound request
#[derive(Debug)]
pub(crate) struct InEntry {
    pub(crate) wire_id: RequestId,
    /// The peer's progress token, if it asked for progress
    pub(crate) progress_token: Option<RequestId>,
    pub(crate) last_progress: Option<f64>,
    /// The JSON-RPC batch this request came in, if any
    pub(crate) batch: Option<u32>,
    /// A modern-era request to a server: its result gets the era's envelope
    pub(crate) modern: bool,
    /// The version the request was made in: results are fitted to it
    pub(crate) version: ProtocolVersion,
    /// A modern request's own client capabilities (legacy ones use the session's)
    pub(crate) peer_caps: Option<Arc<Value>>,
    /// For modern `tools/call`, `prompts/get`, `resources/read`: the method, which may end
    /// in `input_required`
    pub(crate) mrtr_method: Option<&'static str>,
    /// Input answers a modern retry brought (from `requestState` and `inputResponses`)
    pub(crate) answers: Option<Box<Answers>>,
    /// Live input requests (legacy) still waiting for the client
    pub(crate) asks: u16,
    /// The client offered a task for this request: `Some(requested ttl in ms)`
    pub(crate) task_offered: Option<Option<u64>>,
    /// Client side: a server's input request, surfaced as `Event::InputRequired`
    pub(crate) live_input: bool,
    /// A modern request of a cacheable method: its result gets caching hints
    pub(crate) cacheable: bool,
    /// Who sent it (its task, its sealed state are bound to the principal)
    pub(crate) caller: Option<Arc<super::Caller>>,
}

#[derive(Debug)]
struct Slot {
    generation: u32,
    entry: Option<InEntry>,
}

/// Slots an empty table keeps rather than giving them back
const SPARE_SLOTS: usize = 64;

/// A slab of unanswered inbound requests, indexed by [`InboundId`] and by wire id
#[derive(Debug, Default)]
pub(crate) struct InboundTable {
    slots: Vec<Slot>,
    free: Vec<u32>,
    by_wire: WireIndex,
    /// The generation new slots start at: above every generation handed out for slots
    /// given back (so a stale id never matches a slot made again at its index)
    floor: u32,
}

impl InboundTable {
    /// Releases spare capacity (idle sessions); slots stay (their generations keep stale
    /// responders stale)
    pub(crate) fn shrink_to_fit(&mut self) {
        self.slots.shrink_to_fit();
        self.free.shrink_to_fit();
        self.by_wire.shrink_to_fit();
    }

    pub(crate) fn len(&self) -> usize {
        self.by_wire.len()
    }

    pub(crate) fn contains_wire(&self, wire_id: &RequestId) -> bool {
        self.by_wire.get(wire_id).is_some()
    }

    pub(crate) fn by_wire(&self, wire_id: &RequestId) -> Option<InboundId> {
        self.by_wire.get(wire_id)
    }

    /// Stores a new request; the caller checked that its wire id is not in use
    pub(crate) fn insert(&mut self, entry: InEntry) -> InboundId {
        let wire_id = entry.wire_id.clone();
        let id = if let Some(slot) = self.free.pop() {
            let s = &mut self.slots[slot as usize];
            s.entry = Some(entry);
            InboundId {
                slot,
                generation: s.generation,
            }
        } else {
            let slot =
                u32::try_from(self.slots.len()).expect("inbound slots are bounded by limits");
            self.slots.push(Slot {
                generation: self.floor,
                entry: Some(entry),
            });
            InboundId {
                slot,
                generation: self.floor,
            }
        };
        self.by_wire.insert(wire_id, id);
        id
    }

    /// The version of a request still in flight
    pub(crate) fn version_of(&self, id: InboundId) -> Option<ProtocolVersion> {
        let s = self.slots.get(id.slot as usize)?;
        if s.generation != id.generation {
            return None;
        }
        s.entry.as_ref().map(|e| e.version)
    }

    pub(crate) fn get(&self, id: InboundId) -> Option<&InEntry> {
        let s = self.slots.get(id.slot as usize)?;
        if s.generation != id.generation {
            return None;
        }
        s.entry.as_ref()
    }

    pub(crate) fn get_mut(&mut self, id: InboundId) -> Option<&mut InEntry> {
        let s = self.slots.get_mut(id.slot as usize)?;
        if s.generation != id.generation {
            return None;
        }
        s.entry.as_mut()
    }

    /// Removes a request (answered, cancelled, or abandoned); `None` if it was already gone
    pub(crate) fn remove(&mut self, id: InboundId) -> Option<InEntry> {
        let s = self.slots.get_mut(id.slot as usize)?;
        if s.generation != id.generation {
            return None;
        }
        let entry = s.entry.take()?;
        s.generation = s.generation.wrapping_add(1);
        self.free.push(id.slot);
        self.by_wire.remove(&entry.wire_id);
        if self.by_wire.is_empty() && self.slots.len() > SPARE_SLOTS {
            self.give_back();
        }
        Some(entry)
    }

    /// After a burst: an empty table gives its slots back (the shared 2026 session of an
    /// HTTP server sees thousands of requests at once, then none)
    fn give_back(&mut self) {
        // Every current generation is one past any handed out for its slot.
        let top = self.slots.iter().map(|s| s.generation).max().unwrap_or(0);
        self.floor = self.floor.max(top);
        self.slots = Vec::new();
        self.free = Vec::new();
        self.by_wire = WireIndex::default();
    }

    /// Removes every request
    pub(crate) fn clear(&mut self) {
        for (i, s) in self.slots.iter_mut().enumerate() {
            if s.entry.take().is_some() {
                s.generation = s.generation.wrapping_add(1);
                self.free.push(u32::try_from(i).expect("bounded"));
            }
        }
        self.by_wire.clear();
    }
}

/// The wire ids of the requests in flight, to their slots
///
/// A short list while there are few, searched in order: the usual case (a 2026 request alone
/// on its connection's lane, a client's handful in flight), where hashing a peer's id with
/// std's keyed hasher three times a request (insert, lookup, remove) cost more than the
/// search. Past [`FEW`] a hash map (keyed: the ids are the peer's), until the table empties.
#[derive(Debug)]
enum WireIndex {
    Few(Vec<(RequestId, InboundId)>),
    Many(HashMap<RequestId, InboundId>),
}

/// The most ids [`WireIndex`] searches in order
const FEW: usize = 8;

impl Default for WireIndex {
    fn default() -> Self {
        Self::Few(Vec::new())
    }
}

impl WireIndex {
    fn len(&self) -> usize {
        match self {
            Self::Few(few) => few.len(),
            Self::Many(many) => many.len(),
        }
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn get(&self, wire_id: &RequestId) -> Option<InboundId> {
        match self {
            Self::Few(few) => few.iter().find(|(w, _)| w == wire_id).map(|&(_, id)| id),
            Self::Many(many) => many.get(wire_id).copied(),
        }
    }

    /// Adds an id not in use
    fn insert(&mut self, wire_id: RequestId, id: InboundId) {
        match self {
            Self::Few(few) if few.len() < FEW => few.push((wire_id, id)),
            Self::Few(few) => {
                let mut many: HashMap<RequestId, InboundId> = few.drain(..).collect();
                many.insert(wire_id, id);
                *self = Self::Many(many);
            }
            Self::Many(many) => {
                many.insert(wire_id, id);
            }
        }
    }

    fn remove(&mut self, wire_id: &RequestId) {
        match self {
            Self::Few(few) => {
                if let Some(i) = few.iter().position(|(w, _)| w == wire_id) {
                    few.swap_remove(i);
                }
            }
            Self::Many(many) => {
                many.remove(wire_id);
                if many.is_empty() {
                    *self = Self::default();
                }
            }
        }
    }

    fn clear(&mut self) {
        *self = Self::default();
    }

    fn shrink_to_fit(&mut self) {
        match self {
            Self::Few(few) => few.shrink_to_fit(),
            Self::Many(many) => many.shrink_to_fit(),
        }
    }
}

/// Answers to input requests gathered so far for one request, by key, as raw JSON
pub(crate) type Answers = BTreeMap<String, Box<RawValue>>;

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(n: i64) -> InEntry {
        InEntry {
            wire_id: RequestId::Number(n),
            progress_token: None,
            last_progress: None,
            batch: None,
            modern: true,
            version: ProtocolVersion::V2026_07_28,
            peer_caps: None,
            mrtr_method: None,
            answers: None,
            asks: 0,
            task_offered: None,
            live_input: false,
            cacheable: false,
            caller: None,
        }
    }

    #[test]
    fn an_emptied_table_gives_its_slots_back_and_old_ids_stay_stale() {
        let mut table = InboundTable::default();
        let old: Vec<InboundId> = (0..1000).map(|n| table.insert(entry(n))).collect();
        for id in &old {
            assert!(table.remove(*id).is_some());
        }
        assert!(table.slots.is_empty(), "the burst's slots went back");
        let new: Vec<InboundId> = (0..1000).map(|n| table.insert(entry(n))).collect();
        for id in &old {
            assert!(table.get(*id).is_none(), "a stale id matches nothing");
            assert!(table.remove(*id).is_none());
        }
        assert_eq!(table.len(), 1000);
        assert!(new.iter().all(|id| table.get(*id).is_some()));
    }

    proptest::proptest! {
        /// Whether the ids in flight are few (searched in order) or many (hashed), and across
        /// the changes between the two, a wire id finds the request it was given to, and only
        /// while that request is in the table.
        #[test]
        fn wire_ids_find_their_requests_whether_few_or_many(
            ops in proptest::collection::vec((0u8..10, 0i64..24), 1..200),
        ) {
            let wire = |n: i64| {
                if n % 3 == 0 { RequestId::String(format!("r{n}").into()) } else { RequestId::Number(n) }
            };
            let mut table = InboundTable::default();
            let mut model: HashMap<RequestId, InboundId> = HashMap::new();
            for (op, n) in ops {
                let w = wire(n);
                match op {
                    0..=5 if !model.contains_key(&w) => {
                        let mut e = entry(0);
                        e.wire_id = w.clone();
                        model.insert(w, table.insert(e));
                    }
                    9 => table.clear(),
                    _ => {
                        if let Some(id) = model.remove(&w) {
                            let gone = table.remove(id).map(|e| e.wire_id);
                            proptest::prop_assert_eq!(gone, Some(w.clone()));
                        }
                    }
                }
                if op == 9 {
                    model.clear();
                }
                proptest::prop_assert_eq!(table.len(), model.len());
                for k in 0..24 {
                    let w = wire(k);
                    proptest::prop_assert_eq!(table.by_wire(&w), model.get(&w).copied());
                    proptest::prop_assert_eq!(table.contains_wire(&w), model.contains_key(&w));
                }
                for (w, id) in &model {
                    proptest::prop_assert_eq!(table.get(*id).map(|e| &e.wire_id), Some(w));
                }
            }
        }
    }
}
