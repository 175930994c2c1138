//! Reusing results the server marked cacheable (`ttlMs` and `cacheScope`, 2026-07-28)
//!
//! A [`ResultCache`] keeps the results of `server/discover`, `tools/list`, `prompts/list`,
//! `resources/list`, `resources/templates/list` and `resources/read` for as long as the
//! server's `ttlMs` hint says they are fresh, partitioned by `cacheScope`, bounded in entries
//! and bytes, and invalidated by the list-changed and resource-updated notifications.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The methods whose results extend `CacheableResult` in the 2026-07-28 schema
const CACHEABLE: [&str; 6] = [
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];

/// Who may see an entry: everyone, or one authorization context
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Scope {
    Public,
    Private(String),
}

/// One cached request: scope, method and canonical params
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    scope: Scope,
    method: String,
    params: String,
}

#[derive(Debug)]
struct Entry {
    result: Box<RawValue>,
    /// The first instant at which the entry is stale
    expires: Instant,
    /// When it was stored, on the cache's tick counter (the newest visible entry wins)
    stored: u64,
    /// When it was last stored or returned, on the same counter (the key in `recency`)
    used: u64,
    /// The `uri` param of a `resources/read`, for `notifications/resources/updated`
    uri: Option<String>,
    /// What the entry counts against `max_bytes`
    bytes: usize,
}

/// A bounded client-side cache of results the server marked cacheable
///
/// Offer every result of a request with [`store`](Self::store), ask
/// [`get`](Self::get) before sending a request, and pass every server notification to
/// [`invalidate`](Self::invalidate). Results are kept only when the method is cacheable,
/// `ttlMs` is positive and `cacheScope` is `"public"` or `"private"`; results without these
/// hints (servers before 2026-07-28), `input_required` results and task results are never
/// kept. A `"private"` entry is visible only in the authorization context that stored it
/// (see [`set_context`](Self::set_context)); a `"public"` one in every context.
///
/// Requests are compared by method and canonical params: object key order and the
/// top-level `_meta` member do not matter, and absent params equal `{}`.
///
/// Bounded by entries and by bytes (the result JSON plus the canonical params); when a new
/// entry needs room, expired entries go first, then the least recently used. Expired entries
/// are never returned and are otherwise dropped lazily, so [`len`](Self::len) may count them
/// until [`purge_expired`](Self::purge_expired).
///
/// ```
/// # use mcp_sansio::client::ResultCache;
/// # use serde_json::value::RawValue;
/// # let t0 = std::time::Instant::now();
/// let mut cache = ResultCache::new();
/// let result = RawValue::from_string(r#"{"tools":[],"ttlMs":60000,"cacheScope":"public"}"#.into())?;
/// assert!(cache.store(t0, "tools/list", None, &result));
/// assert_eq!(cache.get(t0, "tools/list", None).map(RawValue::get), Some(result.get()));
/// assert_eq!(cache.invalidate("notifications/tools/list_changed", None), 1);
/// assert!(cache.get(t0, "tools/list", None).is_none());
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug)]
pub struct ResultCache {
    max_entries: usize,
    max_bytes: usize,
    context: String,
    entries: BTreeMap<Key, Entry>,
    /// `Entry::used` to key, oldest first
    recency: BTreeMap<u64, Key>,
    tick: u64,
    bytes: usize,
}

impl Default for ResultCache {
    fn default() -> Self {
        Self::new()
    }
}

impl ResultCache {
    /// The default bound on entries
    pub const DEFAULT_MAX_ENTRIES: usize = 256;
    /// The default bound on cached bytes (4 MiB)
    pub const DEFAULT_MAX_BYTES: usize = 4 * 1024 * 1024;

    /// An empty cache with the default bounds, in the empty authorization context
    pub fn new() -> Self {
        Self::with_limits(Self::DEFAULT_MAX_ENTRIES, Self::DEFAULT_MAX_BYTES)
    }

    /// An empty cache holding at most `max_entries` entries and `max_bytes` bytes (the result
    /// JSON plus the canonical params of each entry); a zero bound caches nothing
    pub fn with_limits(max_entries: usize, max_bytes: usize) -> Self {
        Self {
            max_entries,
            max_bytes,
            context: String::new(),
            entries: BTreeMap::new(),
            recency: BTreeMap::new(),
            tick: 0,
            bytes: 0,
        }
    }

    /// Sets the authorization context that `"private"` entries belong to (e.g. a hash of the
    /// access token; the empty string until set)
    ///
    /// Call it whenever the credentials change. Private entries of other contexts become
    /// invisible (they stay until evicted, and reappear if their context comes back); public
    /// entries stay shared.
    pub fn set_context(&mut self, context: impl Into<String>) {
        self.context = context.into();
    }

    /// The current authorization context
    pub fn context(&self) -> &str {
        &self.context
    }

    /// A fresh cached result for this request, if any
    ///
    /// Call it before sending a `method` request with `params`. Looks at the current
    /// context's private entry and the public entry for the request; of those still fresh at
    /// `now`, returns the one stored last and marks it recently used. Expired entries met on
    /// the way are dropped.
    pub fn get(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<&RawValue>,
    ) -> Option<&RawValue> {
        if !is_cacheable(method) {
            return None;
        }
        let params = canonical_params(params)?;
        let private = Key {
            scope: Scope::Private(self.context.clone()),
            method: method.to_owned(),
            params,
        };
        let public = Key {
            scope: Scope::Public,
            ..private.clone()
        };
        let mut best: Option<(u64, Key)> = None;
        for key in [private, public] {
            let stored = match self.entries.get(&key) {
                Some(entry) if now < entry.expires => entry.stored,
                Some(_) => {
                    self.remove(&key);
                    continue;
                }
                None => continue,
            };
            if best.as_ref().is_none_or(|(newest, _)| stored > *newest) {
                best = Some((stored, key));
            }
        }
        let (_, key) = best?;
        self.touch(&key);
        self.entries.get(&key).map(|entry| &*entry.result)
    }

    /// Offers the result of a `method` request with `params`, received at `now`; returns
    /// whether it was stored
    ///
    /// Call it with every successful result. It is stored when `method` is cacheable, the
    /// result is an object with an integer `ttlMs` > 0 and a `cacheScope` of `"public"` or
    /// `"private"`, its `resultType` is absent or `"complete"` (never `input_required` or
    /// `task`), a `resources/read` names its `uri`, and the entry fits the byte bound. It
    /// replaces the entry for the same request and scope (and context, if private), and
    /// evicts expired then least recently used entries to make room. Otherwise nothing
    /// changes.
    pub fn store(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<&RawValue>,
        result: &RawValue,
    ) -> bool {
        if !is_cacheable(method) {
            return false;
        }
        let Some((ttl, scope)) = caching_hints(result.get()) else {
            return false;
        };
        let Some(expires) = now.checked_add(ttl) else {
            return false;
        };
        let Some(canonical) = canonical_params(params) else {
            return false;
        };
        let uri = if method == "resources/read" {
            let Some(uri) = params.and_then(|p| param_uri(p.get())) else {
                return false;
            };
            Some(uri)
        } else {
            None
        };
        let bytes = result.get().len() + canonical.len();
        if self.max_entries == 0 || bytes > self.max_bytes {
            return false;
        }
        let key = Key {
            scope: match scope {
                CacheScope::Public => Scope::Public,
                CacheScope::Private => Scope::Private(self.context.clone()),
            },
            method: method.to_owned(),
            params: canonical,
        };
        self.remove(&key);
        if self.entries.len() >= self.max_entries || self.bytes + bytes > self.max_bytes {
            self.purge_expired(now);
        }
        while self.entries.len() >= self.max_entries || self.bytes + bytes > self.max_bytes {
            let (_, oldest) = self
                .recency
                .pop_first()
                .expect("over a bound, so some entry is cached");
            self.remove(&oldest);
        }
        self.tick += 1;
        self.recency.insert(self.tick, key.clone());
        self.bytes += bytes;
        self.entries.insert(
            key,
            Entry {
                result: result.to_owned(),
                expires,
                stored: self.tick,
                used: self.tick,
                uri,
                bytes,
            },
        );
        true
    }

    /// Drops the entries a server notification makes stale; returns how many went
    ///
    /// Call it with every notification's `method` and `params`; others are ignored.
    /// `notifications/tools/list_changed` drops `tools/list`,
    /// `notifications/prompts/list_changed` drops `prompts/list`,
    /// `notifications/resources/list_changed` drops `resources/list` and
    /// `resources/templates/list`, in every scope and context. `notifications/resources/updated`
    /// with `{uri}` drops every `resources/read` of that URI, of a resource under it
    /// (`uri` + `/`…) and of a resource it is under (the updated URI "might be a
    /// sub-resource" of the one read).
    pub fn invalidate(&mut self, method: &str, params: Option<&RawValue>) -> usize {
        let stale: Vec<Key> = match method {
            "notifications/tools/list_changed" => self.keys_of(&["tools/list"]),
            "notifications/prompts/list_changed" => self.keys_of(&["prompts/list"]),
            "notifications/resources/list_changed" => {
                self.keys_of(&["resources/list", "resources/templates/list"])
            }
            "notifications/resources/updated" => {
                let Some(updated) = params.and_then(|p| param_uri(p.get())) else {
                    return 0;
                };
                self.entries
                    .iter()
                    .filter(|(_, entry)| {
                        entry.uri.as_deref().is_some_and(|read| {
                            is_within(read, &updated) || is_within(&updated, read)
                        })
                    })
                    .map(|(key, _)| key.clone())
                    .collect()
            }
            _ => return 0,
        };
        for key in &stale {
            self.remove(key);
        }
        stale.len()
    }

    /// Drops every entry stale at `now`; returns how many went
    pub fn purge_expired(&mut self, now: Instant) -> usize {
        let stale: Vec<Key> = self
            .entries
            .iter()
            .filter(|(_, entry)| now >= entry.expires)
            .map(|(key, _)| key.clone())
            .collect();
        for key in &stale {
            self.remove(key);
        }
        stale.len()
    }

    /// Drops every entry, in every context
    pub fn clear(&mut self) {
        self.entries.clear();
        self.recency.clear();
        self.bytes = 0;
    }

    /// How many entries are held, in every context, including expired ones not yet dropped
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no entry is held
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// How many bytes the held entries count against the byte bound
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    fn keys_of(&self, methods: &[&str]) -> Vec<Key> {
        self.entries
            .keys()
            .filter(|key| methods.contains(&key.method.as_str()))
            .cloned()
            .collect()
    }

    fn touch(&mut self, key: &Key) {
        self.tick += 1;
        let entry = self.entries.get_mut(key).expect("touched keys are cached");
        self.recency.remove(&entry.used);
        entry.used = self.tick;
        self.recency.insert(self.tick, key.clone());
    }

    fn remove(&mut self, key: &Key) {
        if let Some(entry) = self.entries.remove(key) {
            self.recency.remove(&entry.used);
            self.bytes -= entry.bytes;
        }
    }
}

enum CacheScope {
    Public,
    Private,
}

fn is_cacheable(method: &str) -> bool {
    CACHEABLE.contains(&method)
}

/// `ttlMs` (positive) and `cacheScope` of a complete result, if it may be cached
fn caching_hints(result: &str) -> Option<(Duration, CacheScope)> {
    let Ok(Value::Object(result)) = serde_json::from_str::<Value>(result) else {
        return None;
    };
    match result.get("resultType") {
        None => {}
        Some(Value::String(kind)) if kind == "complete" => {}
        Some(_) => return None,
    }
    let ttl = result.get("ttlMs")?.as_u64().filter(|&ms| ms > 0)?;
    let scope = match result.get("cacheScope")?.as_str()? {
        "public" => CacheScope::Public,
        "private" => CacheScope::Private,
        _ => return None,
    };
    Some((Duration::from_millis(ttl), scope))
}

/// The `uri` member of an object of params
fn param_uri(params: &str) -> Option<String> {
    match serde_json::from_str::<Value>(params).ok()? {
        Value::Object(mut params) => match params.remove("uri")? {
            Value::String(uri) => Some(uri),
            _ => None,
        },
        _ => None,
    }
}

/// Whether `inner` is `outer` or a resource under it
fn is_within(inner: &str, outer: &str) -> bool {
    inner.strip_prefix(outer).is_some_and(|rest| {
        rest.is_empty() || rest.starts_with('/') || (outer.ends_with('/') && !outer.is_empty())
    })
}

/// Params as a comparable string: keys sorted at every depth, the top-level `_meta`
/// removed, absent params as `{}`; `None` for params that are not JSON
fn canonical_params(params: Option<&RawValue>) -> Option<String> {
    let value = match params {
        None => Value::Object(Map::new()),
        Some(raw) => match serde_json::from_str::<Value>(raw.get()).ok()? {
            Value::Object(mut members) => {
                members.remove("_meta");
                Value::Object(members)
            }
            other => other,
        },
    };
    let mut out = String::new();
    write_canonical(&value, &mut out);
    Some(out)
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        Value::Object(members) => {
            let mut sorted: Vec<(&String, &Value)> = members.iter().collect();
            sorted.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (name, member)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(name.clone()).to_string());
                out.push(':');
                write_canonical(member, out);
            }
            out.push('}');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}
