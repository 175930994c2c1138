//! `ResultCache`: freshness on a fake clock, scopes and contexts, canonical params, what is
//! never cached, invalidation by notifications, bounds, and a model-checked property test

use crate::common;

use std::time::{Duration, Instant};

use common::{origin, raw};
use mcp_sansio::client::ResultCache;
use proptest::prelude::*;
use serde_json::value::RawValue;
use serde_json::{Value, json};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A cacheable result tagged with `id`
fn hinted(id: u64, ttl: u64, scope: &str) -> Box<RawValue> {
    raw(json!({"id": id, "ttlMs": ttl, "cacheScope": scope}))
}

fn id_of(result: Option<&RawValue>) -> Option<u64> {
    result.map(|r| {
        serde_json::from_str::<Value>(r.get()).unwrap()["id"]
            .as_u64()
            .unwrap()
    })
}

fn read(uri: &str) -> Box<RawValue> {
    raw(json!({"uri": uri}))
}

// --- freshness ------------------------------------------------------------------------------

#[test]
fn fresh_for_ttl_after_receipt_then_expired_and_dropped() {
    let t0 = origin();
    let mut cache = ResultCache::new();
    assert!(cache.store(t0, "tools/list", None, &hinted(1, 1000, "public")));
    assert_eq!(id_of(cache.get(t0, "tools/list", None)), Some(1));
    assert_eq!(id_of(cache.get(t0 + ms(999), "tools/list", None)), Some(1));
    assert_eq!(cache.len(), 1);
    assert!(cache.get(t0 + ms(1000), "tools/list", None).is_none());
    assert!(cache.is_empty(), "the expired entry is dropped when met");
    // storing again starts a new freshness window
    assert!(cache.store(
        t0 + ms(5000),
        "tools/list",
        None,
        &hinted(2, 1000, "public")
    ));
    assert_eq!(id_of(cache.get(t0 + ms(5500), "tools/list", None)), Some(2));
}

#[test]
fn purge_expired_drops_only_stale_entries() {
    let t0 = origin();
    let mut cache = ResultCache::new();
    assert!(cache.store(t0, "tools/list", None, &hinted(1, 100, "public")));
    assert!(cache.store(t0, "prompts/list", None, &hinted(2, 1000, "public")));
    assert_eq!(cache.len(), 2, "expired entries are dropped lazily");
    assert_eq!(cache.purge_expired(t0 + ms(100)), 1);
    assert_eq!(cache.len(), 1);
    assert_eq!(
        id_of(cache.get(t0 + ms(100), "prompts/list", None)),
        Some(2)
    );
}

#[test]
fn ttl_zero_and_missing_or_invalid_hints_are_not_cached() {
    let t0 = origin();
    let mut cache = ResultCache::new();
    let refused = [
        json!({"tools": [], "ttlMs": 0, "cacheScope": "public"}),
        json!({"tools": []}),
        json!({"tools": [], "ttlMs": 1000}),
        json!({"tools": [], "cacheScope": "public"}),
        json!({"tools": [], "ttlMs": 1000, "cacheScope": "shared"}),
        json!({"tools": [], "ttlMs": 1000, "cacheScope": null}),
        json!({"tools": [], "ttlMs": -1, "cacheScope": "public"}),
        json!({"tools": [], "ttlMs": 1.5, "cacheScope": "public"}),
        json!({"tools": [], "ttlMs": "1000", "cacheScope": "public"}),
        json!([{"ttlMs": 1000, "cacheScope": "public"}]),
    ];
    for result in refused {
        assert!(
            !cache.store(t0, "tools/list", None, &raw(result.clone())),
            "{result}"
        );
        assert!(cache.get(t0, "tools/list", None).is_none(), "{result}");
    }
    assert!(cache.is_empty());
}

// --- scopes and contexts --------------------------------------------------------------------

#[test]
fn public_entries_are_shared_across_contexts() {
    let t0 = origin();
    let mut cache = ResultCache::new();
    cache.set_context("alice");
    assert!(cache.store(t0, "tools/list", None, &hinted(1, 1000, "public")));
    cache.set_context("bob");
    assert_eq!(cache.context(), "bob");
    assert_eq!(id_of(cache.get(t0, "tools/list", None)), Some(1));
}

#[test]
fn private_entries_are_partitioned_by_context() {
    let t0 = origin();
    let mut cache = ResultCache::new();
    cache.set_context("alice");
    assert!(cache.store(
        t0,
        "resources/read",
        Some(&read("file:///me")),
        &hinted(1, 1000, "private")
    ));
    cache.set_context("bob");
    assert!(
        cache
            .get(t0, "resources/read", Some(&read("file:///me")))
            .is_none()
    );
    assert!(cache.store(
        t0,
        "resources/read",
        Some(&read("file:///me")),
        &hinted(2, 1000, "private")
    ));
    assert_eq!(
        id_of(cache.get(t0, "resources/read", Some(&read("file:///me")))),
        Some(2)
    );
    assert_eq!(cache.len(), 2);
    cache.set_context("alice");
    assert_eq!(
        id_of(cache.get(t0, "resources/read", Some(&read("file:///me")))),
        Some(1)
    );
    // the default context is the empty string, distinct from both
    cache.set_context("");
    assert!(
        cache
            .get(t0, "resources/read", Some(&read("file:///me")))
            .is_none()
    );
}

#[test]
fn the_newest_fresh_visible_entry_wins() {
    let t0 = origin();
    let mut cache = ResultCache::new();
    cache.set_context("alice");
    assert!(cache.store(t0, "tools/list", None, &hinted(1, 10_000, "public")));
    assert!(cache.store(t0, "tools/list", None, &hinted(2, 1000, "private")));
    assert_eq!(id_of(cache.get(t0, "tools/list", None)), Some(2));
    cache.set_context("bob");
    assert_eq!(id_of(cache.get(t0, "tools/list", None)), Some(1));
    cache.set_context("alice");
    // once the private one is stale, the older public one is still fresh by its own hint
    assert_eq!(id_of(cache.get(t0 + ms(1000), "tools/list", None)), Some(1));
    assert_eq!(cache.len(), 1);
}

#[test]
fn storing_again_replaces_the_entry_for_the_same_request_and_scope() {
    let t0 = origin();
    let mut cache = ResultCache::new();
    assert!(cache.store(t0, "tools/list", None, &hinted(1, 1000, "public")));
    let before = cache.bytes();
    assert!(cache.store(t0, "tools/list", None, &hinted(2, 1000, "public")));
    assert_eq!(cache.len(), 1);
    assert_eq!(cache.bytes(), before);
    assert_eq!(id_of(cache.get(t0, "tools/list", None)), Some(2));
}

// --- canonical params -----------------------------------------------------------------------

#[test]
fn params_compare_canonically() {
    let t0 = origin();
    let mut cache = ResultCache::new();
    let stored = RawValue::from_string(
        r#"{"cursor":"p2","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"filter":{"b":1,"a":[{"y":2,"x":1}]}}"#.into(),
    )
    .unwrap();
    assert!(cache.store(t0, "tools/list", Some(&stored), &hinted(1, 1000, "public")));
    let reordered = RawValue::from_string(
        r#"{ "filter" : {"a":[{"x":1,"y":2}],"b":1}, "cursor":"p2" }"#.into(),
    )
    .unwrap();
    assert_eq!(
        id_of(cache.get(t0, "tools/list", Some(&reordered))),
        Some(1)
    );
    let other_meta = raw(
        json!({"cursor": "p2", "filter": {"a": [{"x": 1, "y": 2}], "b": 1}, "_meta": {"progressToken": 7}}),
    );
    assert_eq!(
        id_of(cache.get(t0, "tools/list", Some(&other_meta))),
        Some(1)
    );
    // array order, values and other members still matter
    for different in [
        json!({"cursor": "p3", "filter": {"a": [{"x": 1, "y": 2}], "b": 1}}),
        json!({"cursor": "p2", "filter": {"a": [{"x": 1, "y": 2}], "b": 2}}),
        json!({"cursor": "p2", "filter": {"a": [{"x": 1, "y": 2}], "b": 1}, "extra": true}),
        json!({"cursor": "p2"}),
    ] {
        assert!(
            cache
                .get(t0, "tools/list", Some(&raw(different.clone())))
                .is_none(),
            "{different}"
        );
    }
    // the same params under another method are another request
    assert!(cache.get(t0, "prompts/list", Some(&reordered)).is_none());
}

#[test]
fn absent_params_equal_empty_params_and_meta_only() {
    let t0 = origin();
    let mut cache = ResultCache::new();
    assert!(cache.store(t0, "server/discover", None, &hinted(1, 1000, "public")));
    assert_eq!(
        id_of(cache.get(t0, "server/discover", Some(&raw(json!({}))))),
        Some(1)
    );
    let meta_only = raw(
        json!({"_meta": {"io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"}}}),
    );
    assert_eq!(
        id_of(cache.get(t0, "server/discover", Some(&meta_only))),
        Some(1)
    );
    assert!(cache.store(
        t0,
        "prompts/list",
        Some(&meta_only),
        &hinted(2, 1000, "public")
    ));
    assert_eq!(id_of(cache.get(t0, "prompts/list", None)), Some(2));
}

// --- never cached ---------------------------------------------------------------------------

#[test]
fn input_required_and_task_results_are_never_cached() {
    let t0 = origin();
    let mut cache = ResultCache::new();
    let params = read("file:///x");
    for kind in ["input_required", "task", "something_new"] {
        let result = raw(json!({
            "resultType": kind,
            "inputRequests": {},
            "task": {"taskId": "t"},
            "ttlMs": 1000,
            "cacheScope": "public"
        }));
        assert!(
            !cache.store(t0, "resources/read", Some(&params), &result),
            "{kind}"
        );
        assert!(cache.get(t0, "resources/read", Some(&params)).is_none());
    }
    let complete = raw(
        json!({"resultType": "complete", "contents": [], "ttlMs": 1000, "cacheScope": "public"}),
    );
    assert!(cache.store(t0, "resources/read", Some(&params), &complete));
    assert_eq!(cache.len(), 1);
}

#[test]
fn non_cacheable_methods_are_never_cached() {
    let t0 = origin();
    let mut cache = ResultCache::new();
    let params = raw(json!({"name": "echo", "arguments": {}}));
    for method in [
        "tools/call",
        "prompts/get",
        "completion/complete",
        "tasks/get",
        "tasks/result",
        "subscriptions/listen",
        "initialize",
        "ping",
        "sampling/createMessage",
        "tools/List",
    ] {
        assert!(
            !cache.store(t0, method, Some(&params), &hinted(1, 1000, "public")),
            "{method}"
        );
        assert!(cache.get(t0, method, Some(&params)).is_none(), "{method}");
    }
    assert!(cache.is_empty());
}

#[test]
fn every_cacheable_method_is_cached() {
    let t0 = origin();
    let mut cache = ResultCache::new();
    for (id, method) in (1..).zip([
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
    ]) {
        assert!(
            cache.store(t0, method, None, &hinted(id, 1000, "public")),
            "{method}"
        );
        assert_eq!(id_of(cache.get(t0, method, None)), Some(id));
    }
    assert!(cache.store(
        t0,
        "resources/read",
        Some(&read("file:///r")),
        &hinted(9, 1000, "private")
    ));
    assert_eq!(cache.len(), 6);
}

#[test]
fn a_resource_read_without_a_uri_is_not_cached() {
    let t0 = origin();
    let mut cache = ResultCache::new();
    assert!(!cache.store(t0, "resources/read", None, &hinted(1, 1000, "public")));
    assert!(!cache.store(
        t0,
        "resources/read",
        Some(&raw(json!({"uri": 3}))),
        &hinted(1, 1000, "public")
    ));
    assert!(cache.is_empty());
}

// --- invalidation ---------------------------------------------------------------------------

/// A cache with every list (two pages of tools, one private) and three reads
fn populated(t0: Instant) -> ResultCache {
    let mut cache = ResultCache::new();
    let page2 = raw(json!({"cursor": "2"}));
    cache.set_context("alice");
    assert!(cache.store(t0, "server/discover", None, &hinted(1, 1000, "public")));
    assert!(cache.store(t0, "tools/list", None, &hinted(2, 1000, "public")));
    assert!(cache.store(t0, "tools/list", Some(&page2), &hinted(3, 1000, "private")));
    assert!(cache.store(t0, "prompts/list", None, &hinted(4, 1000, "public")));
    assert!(cache.store(t0, "resources/list", None, &hinted(5, 1000, "public")));
    assert!(cache.store(
        t0,
        "resources/templates/list",
        None,
        &hinted(6, 1000, "public")
    ));
    for (id, uri) in (7..).zip([
        "file:///a",
        "file:///a/b",
        "file:///a/b/c",
        "file:///ab",
        "file:///z",
    ]) {
        assert!(cache.store(
            t0,
            "resources/read",
            Some(&read(uri)),
            &hinted(id, 1000, "public")
        ));
    }
    cache.set_context("bob");
    assert_eq!(cache.len(), 11);
    cache
}

fn cached_ids(cache: &mut ResultCache, now: Instant) -> Vec<u64> {
    let mut ids = Vec::new();
    for context in ["alice", "bob"] {
        cache.set_context(context);
        for method in [
            "server/discover",
            "tools/list",
            "prompts/list",
            "resources/list",
            "resources/templates/list",
        ] {
            ids.extend(id_of(cache.get(now, method, None)));
        }
        ids.extend(id_of(cache.get(
            now,
            "tools/list",
            Some(&raw(json!({"cursor": "2"}))),
        )));
        for uri in [
            "file:///a",
            "file:///a/b",
            "file:///a/b/c",
            "file:///ab",
            "file:///z",
        ] {
            ids.extend(id_of(cache.get(now, "resources/read", Some(&read(uri)))));
        }
    }
    ids.sort_unstable();
    ids.dedup();
    ids
}

#[test]
fn tools_list_changed_drops_every_tools_list_page_in_every_context() {
    let t0 = origin();
    let mut cache = populated(t0);
    assert_eq!(
        cache.invalidate("notifications/tools/list_changed", None),
        2
    );
    assert_eq!(cached_ids(&mut cache, t0), [1, 4, 5, 6, 7, 8, 9, 10, 11]);
}

#[test]
fn prompts_list_changed_drops_prompts_list() {
    let t0 = origin();
    let mut cache = populated(t0);
    assert_eq!(
        cache.invalidate("notifications/prompts/list_changed", Some(&raw(json!({})))),
        1
    );
    assert_eq!(cached_ids(&mut cache, t0), [1, 2, 3, 5, 6, 7, 8, 9, 10, 11]);
}

#[test]
fn resources_list_changed_drops_resource_and_template_lists_but_not_reads() {
    let t0 = origin();
    let mut cache = populated(t0);
    assert_eq!(
        cache.invalidate("notifications/resources/list_changed", None),
        2
    );
    assert_eq!(cached_ids(&mut cache, t0), [1, 2, 3, 4, 7, 8, 9, 10, 11]);
}

#[test]
fn resources_updated_drops_the_uri_the_resources_under_it_and_those_it_is_under() {
    let t0 = origin();
    let mut cache = populated(t0);
    // file:///a/b: itself, file:///a/b/c under it, file:///a above it; not file:///ab
    let updated = raw(json!({"uri": "file:///a/b", "_meta": {}}));
    assert_eq!(
        cache.invalidate("notifications/resources/updated", Some(&updated)),
        3
    );
    assert_eq!(cached_ids(&mut cache, t0), [1, 2, 3, 4, 5, 6, 10, 11]);
    assert_eq!(
        cache.invalidate("notifications/resources/updated", Some(&read("file:///z"))),
        1
    );
    assert_eq!(
        cache.invalidate("notifications/resources/updated", Some(&read("file:///z"))),
        0
    );
    assert_eq!(cached_ids(&mut cache, t0), [1, 2, 3, 4, 5, 6, 10]);
}

#[test]
fn other_notifications_and_malformed_updates_drop_nothing() {
    let t0 = origin();
    let mut cache = populated(t0);
    assert_eq!(cache.invalidate("notifications/resources/updated", None), 0);
    assert_eq!(
        cache.invalidate(
            "notifications/resources/updated",
            Some(&raw(json!({"uri": 1})))
        ),
        0
    );
    assert_eq!(
        cache.invalidate("notifications/resources/updated", Some(&read("file:///q"))),
        0
    );
    assert_eq!(cache.invalidate("notifications/message", None), 0);
    assert_eq!(cache.invalidate("notifications/progress", None), 0);
    assert_eq!(cache.invalidate("tools/list", None), 0);
    assert_eq!(cache.len(), 11);
    cache.clear();
    assert!(cache.is_empty());
    assert_eq!(cache.bytes(), 0);
    assert_eq!(cached_ids(&mut cache, t0), Vec::<u64>::new());
}

// --- bounds ---------------------------------------------------------------------------------

fn page(n: u64) -> Box<RawValue> {
    raw(json!({"cursor": n.to_string()}))
}

#[test]
fn least_recently_used_entry_goes_at_the_entry_bound() {
    let t0 = origin();
    let mut cache = ResultCache::with_limits(2, usize::MAX);
    assert!(cache.store(t0, "tools/list", Some(&page(1)), &hinted(1, 1000, "public")));
    assert!(cache.store(t0, "tools/list", Some(&page(2)), &hinted(2, 1000, "public")));
    // using page 1 makes page 2 the least recently used
    assert_eq!(id_of(cache.get(t0, "tools/list", Some(&page(1)))), Some(1));
    assert!(cache.store(t0, "tools/list", Some(&page(3)), &hinted(3, 1000, "public")));
    assert_eq!(cache.len(), 2);
    assert!(cache.get(t0, "tools/list", Some(&page(2))).is_none());
    assert_eq!(id_of(cache.get(t0, "tools/list", Some(&page(1)))), Some(1));
    assert_eq!(id_of(cache.get(t0, "tools/list", Some(&page(3)))), Some(3));
}

#[test]
fn expired_entries_go_before_fresh_ones() {
    let t0 = origin();
    let mut cache = ResultCache::with_limits(2, usize::MAX);
    assert!(cache.store(t0, "tools/list", Some(&page(1)), &hinted(1, 5000, "public")));
    assert!(cache.store(t0, "tools/list", Some(&page(2)), &hinted(2, 100, "public")));
    assert!(cache.store(
        t0 + ms(200),
        "tools/list",
        Some(&page(3)),
        &hinted(3, 1000, "public")
    ));
    assert_eq!(
        id_of(cache.get(t0 + ms(200), "tools/list", Some(&page(1)))),
        Some(1)
    );
    assert_eq!(
        id_of(cache.get(t0 + ms(200), "tools/list", Some(&page(3)))),
        Some(3)
    );
}

#[test]
fn least_recently_used_entries_go_at_the_byte_bound() {
    let t0 = origin();
    let big = |id: u64| {
        raw(json!({"id": id, "ttlMs": 1000, "cacheScope": "public", "pad": "x".repeat(100)}))
    };
    let entry_bytes = big(1).get().len() + r#"{"cursor":"1"}"#.len();
    let mut cache = ResultCache::with_limits(100, 3 * entry_bytes);
    for n in 1..=3 {
        assert!(cache.store(t0, "tools/list", Some(&page(n)), &big(n)));
    }
    assert_eq!(cache.bytes(), 3 * entry_bytes);
    assert_eq!(id_of(cache.get(t0, "tools/list", Some(&page(1)))), Some(1));
    // one more needs room: page 2 is the least recently used
    assert!(cache.store(t0, "tools/list", Some(&page(4)), &big(4)));
    assert_eq!(cache.len(), 3);
    assert!(cache.get(t0, "tools/list", Some(&page(2))).is_none());
    // a result twice the size of the others evicts two
    let huge = raw(
        json!({"id": 5, "ttlMs": 1000, "cacheScope": "public", "pad": "x".repeat(100 + entry_bytes)}),
    );
    assert!(cache.store(t0, "tools/list", Some(&page(5)), &huge));
    assert_eq!(cache.len(), 2);
    assert!(cache.bytes() <= 3 * entry_bytes);
    assert_eq!(id_of(cache.get(t0, "tools/list", Some(&page(5)))), Some(5));
    assert_eq!(id_of(cache.get(t0, "tools/list", Some(&page(1)))), None);
}

#[test]
fn an_entry_larger_than_the_byte_bound_is_refused_without_evicting() {
    let t0 = origin();
    let mut cache = ResultCache::with_limits(10, 200);
    assert!(cache.store(t0, "tools/list", None, &hinted(1, 1000, "public")));
    let huge = raw(json!({"ttlMs": 1000, "cacheScope": "public", "pad": "x".repeat(300)}));
    assert!(!cache.store(t0, "prompts/list", None, &huge));
    assert_eq!(cache.len(), 1);
    let mut nothing = ResultCache::with_limits(0, 1 << 20);
    assert!(!nothing.store(t0, "tools/list", None, &hinted(1, 1000, "public")));
    assert!(nothing.is_empty());
}

// --- random sequences against a model -------------------------------------------------------

const METHODS: [&str; 7] = [
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "tools/call",
];
const URIS: [&str; 4] = ["file:///a", "file:///a/b", "file:///a/b/c", "file:///c"];
const CONTEXTS: [&str; 3] = ["", "alice", "bob"];
const KINDS: [Option<&str>; 4] = [None, Some("complete"), Some("input_required"), Some("task")];
const SCOPES: [Option<&str>; 3] = [Some("public"), Some("private"), None];

#[derive(Debug, Clone)]
enum Op {
    Store {
        method: usize,
        page: usize,
        ttl: u64,
        scope: usize,
        kind: usize,
        pad: usize,
        meta: bool,
    },
    Get {
        method: usize,
        page: usize,
        meta: bool,
    },
    Invalidate {
        which: usize,
        uri: usize,
    },
    Advance(u64),
    SetContext(usize),
    Clear,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..METHODS.len(), 0..URIS.len(), prop_oneof![Just(0u64), 1..3000u64], 0..SCOPES.len(), 0..KINDS.len(), 0..120usize, any::<bool>())
            .prop_map(|(method, page, ttl, scope, kind, pad, meta)| Op::Store { method, page, ttl, scope, kind, pad, meta }),
        4 => (0..METHODS.len(), 0..URIS.len(), any::<bool>()).prop_map(|(method, page, meta)| Op::Get { method, page, meta }),
        1 => (0..5usize, 0..URIS.len()).prop_map(|(which, uri)| Op::Invalidate { which, uri }),
        2 => (0..1500u64).prop_map(Op::Advance),
        1 => (0..CONTEXTS.len()).prop_map(Op::SetContext),
        1 => Just(Op::Clear),
    ]
}

/// The params of request `page` of `method`, with a `_meta` (which must not matter) or not
fn params(method: usize, page: usize, meta: bool) -> Option<Box<RawValue>> {
    let mut params = if METHODS[method] == "resources/read" {
        json!({"uri": URIS[page]})
    } else if page == 0 {
        if !meta {
            return None;
        }
        json!({})
    } else {
        json!({"cursor": page.to_string()})
    };
    if meta {
        params["_meta"] = json!({"progressToken": page});
    }
    Some(raw(params))
}

fn related(a: &str, b: &str) -> bool {
    a == b || a.starts_with(&format!("{b}/")) || b.starts_with(&format!("{a}/"))
}

/// What was stored and is still held (the model does not track evictions)
#[derive(Debug)]
struct Record {
    id: u64,
    method: usize,
    page: usize,
    /// `None` when public, else the private context
    context: Option<usize>,
    expires: Instant,
}

struct Model {
    now: Instant,
    context: usize,
    /// In store order: the newest last
    records: Vec<Record>,
    next_id: u64,
}

impl Model {
    fn visible(&self, r: &Record, method: usize, page: usize) -> bool {
        r.method == method && r.page == page && r.context.is_none_or(|c| c == self.context)
    }

    fn matches(&self, which: usize, uri: usize, r: &Record) -> bool {
        let m = METHODS[r.method];
        match which {
            0 => m == "tools/list",
            1 => m == "prompts/list",
            2 => m == "resources/list" || m == "resources/templates/list",
            3 => m == "resources/read" && related(URIS[r.page], URIS[uri]),
            _ => false,
        }
    }
}

const NOTIFICATIONS: [&str; 5] = [
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/resources/list_changed",
    "notifications/resources/updated",
    "notifications/message",
];

/// Runs `ops`; with `exact`, the cache must match the model exactly (the bounds are never
/// reached), else every returned result must be one the model allows
fn run(
    ops: &[Op],
    mut cache: ResultCache,
    max_entries: usize,
    max_bytes: usize,
    exact: bool,
) -> Result<(), TestCaseError> {
    let mut m = Model {
        now: origin(),
        context: 0,
        records: Vec::new(),
        next_id: 1,
    };
    for op in ops {
        match *op {
            Op::Store {
                method,
                page,
                ttl,
                scope,
                kind,
                pad,
                meta,
            } => {
                let id = m.next_id;
                m.next_id += 1;
                let mut result = json!({"id": id, "pad": "x".repeat(pad), "ttlMs": ttl});
                if let Some(scope) = SCOPES[scope] {
                    result["cacheScope"] = json!(scope);
                }
                if let Some(kind) = KINDS[kind] {
                    result["resultType"] = json!(kind);
                }
                let cacheable = METHODS[method] != "tools/call"
                    && ttl > 0
                    && SCOPES[scope].is_some()
                    && KINDS[kind].is_none_or(|k| k == "complete");
                let stored = cache.store(
                    m.now,
                    METHODS[method],
                    params(method, page, meta).as_deref(),
                    &raw(result),
                );
                if exact || !cacheable {
                    prop_assert_eq!(stored, cacheable);
                }
                if stored {
                    let context = (SCOPES[scope] == Some("private")).then_some(m.context);
                    m.records.retain(|r| {
                        !(r.method == method && r.page == page && r.context == context)
                    });
                    m.records.push(Record {
                        id,
                        method,
                        page,
                        context,
                        expires: m.now + ms(ttl),
                    });
                }
            }
            Op::Get { method, page, meta } => {
                let got = id_of(cache.get(
                    m.now,
                    METHODS[method],
                    params(method, page, meta).as_deref(),
                ));
                let expected = m
                    .records
                    .iter()
                    .rfind(|r| m.visible(r, method, page) && m.now < r.expires)
                    .map(|r| r.id);
                if let Some(got) = got {
                    let record = m.records.iter().find(|r| r.id == got);
                    prop_assert!(
                        record.is_some(),
                        "returned {} which was replaced, invalidated or cleared",
                        got
                    );
                    let record = record.unwrap();
                    prop_assert!(
                        m.visible(record, method, page),
                        "returned {:?} for another request or context",
                        record
                    );
                    prop_assert!(m.now < record.expires, "returned expired {:?}", record);
                }
                if exact {
                    prop_assert_eq!(got, expected);
                    // the cache drops the expired entries it met; so does the model
                    let (now, context) = (m.now, m.context);
                    m.records.retain(|r| {
                        !(r.method == method
                            && r.page == page
                            && r.context.is_none_or(|c| c == context)
                            && now >= r.expires)
                    });
                }
            }
            Op::Invalidate { which, uri } => {
                let params = (which == 3).then(|| raw(json!({"uri": URIS[uri]})));
                let dropped = cache.invalidate(NOTIFICATIONS[which], params.as_deref());
                let before = m.records.len();
                let keep: Vec<bool> = m
                    .records
                    .iter()
                    .map(|r| !m.matches(which, uri, r))
                    .collect();
                let mut keep = keep.into_iter();
                m.records.retain(|_| keep.next().unwrap());
                if exact {
                    prop_assert_eq!(dropped, before - m.records.len());
                }
            }
            Op::Advance(n) => m.now += ms(n),
            Op::SetContext(c) => {
                m.context = c;
                cache.set_context(CONTEXTS[c]);
            }
            Op::Clear => {
                cache.clear();
                m.records.clear();
            }
        }
        prop_assert!(cache.len() <= max_entries);
        prop_assert!(cache.bytes() <= max_bytes);
        if exact {
            prop_assert_eq!(cache.len(), m.records.len());
            prop_assert_eq!(cache.is_empty(), m.records.is_empty());
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(common::beside_source(ProptestConfig { cases: 512, ..ProptestConfig::default() }))]

    /// Unbounded in practice: the cache is exactly the model
    #[test]
    fn random_sequences_match_the_model(ops in proptest::collection::vec(op(), 1..80)) {
        run(&ops, ResultCache::new(), ResultCache::DEFAULT_MAX_ENTRIES, ResultCache::DEFAULT_MAX_BYTES, true)?;
    }

    /// Tight bounds: never an expired, replaced, invalidated or foreign entry, never over a bound
    #[test]
    fn random_sequences_under_tight_bounds_stay_sound(
        ops in proptest::collection::vec(op(), 1..120),
        max_entries in 1..6usize,
        max_bytes in 60..500usize,
    ) {
        run(&ops, ResultCache::with_limits(max_entries, max_bytes), max_entries, max_bytes, false)?;
    }
}
