//! Memory of the HTTP rules, counted by a per-thread allocator: an idle 2025 session stays
//! small, and after a burst of 2026 requests the server gives its memory back

#![allow(unsafe_code)] // a GlobalAlloc wrapper is unsafe by definition; it only counts

use crate::http_kit;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::HashMap;

use http_kit::{Kit, modern};
use mcp_sansio::http::{HttpConfig, Source};
use serde_json::json;

thread_local! {
    /// Bytes this thread allocated minus those it freed (tests run on threads of their own)
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

fn add(bytes: isize) {
    let _ = LIVE.try_with(|l| l.set(l.get() + bytes));
}

fn live() -> isize {
    LIVE.with(Cell::get)
}

struct Counting;

// SAFETY: every call is forwarded to `System` unchanged; only a counter is updated.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is passed on to `System`.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            add(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is passed on to `System`.
        unsafe { System.dealloc(ptr, layout) };
        add(-(layout.size() as isize));
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is passed on to `System`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            add(layout.size() as isize);
        }
        p
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract is passed on to `System`.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            add(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

#[test]
fn an_idle_2025_session_costs_a_few_kilobytes() {
    let mut config = HttpConfig::default();
    config.max_sessions = 10_000;
    let mut kit = Kit::with_config(config);
    kit.source = Source::from_peer("10.0.0.1:1".parse().unwrap());
    kit.initialize();
    kit.exchanges = HashMap::new();
    let before = live();
    let n = 256;
    for _ in 0..n {
        kit.initialize();
        kit.exchanges = HashMap::new();
    }
    let per_session = (live() - before) / n;
    eprintln!("an idle 2025 session: {per_session} bytes");
    assert!(per_session < 8 * 1024, "{per_session} bytes a session");
}

#[test]
fn a_burst_of_2026_requests_gives_its_memory_back() {
    let mut config = HttpConfig::default();
    config.max_in_flight_per_peer = 10_000;
    config.max_in_flight_per_connection = 10_000;
    let mut kit = Kit::with_config(config);
    let call = |id: i64| modern(id, "tools/call", json!({"name": "slow", "arguments": {}}));
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "slow"),
    ];
    // Warm up: one request through, so lazily made tables exist.
    let _ = kit.post(&headers, &call(0));
    kit.finish("slow", "done");
    kit.exchanges = HashMap::new();
    let baseline = live();
    let burst = 2000;
    for id in 1..=burst {
        kit.source =
            Source::from_peer(format!("10.0.{}.{}:7", id / 250, id % 250).parse().unwrap());
        assert!(
            kit.post(&headers, &call(id)).is_err(),
            "request {id} in progress"
        );
    }
    let peak = live();
    while let Some(name) = kit.held.first().map(|h| h.2.clone()) {
        kit.finish(&name, "done");
    }
    kit.exchanges = HashMap::new();
    kit.held = Vec::new();
    assert_eq!(kit.http.in_flight(), 0);
    let after = live();
    eprintln!(
        "{burst} requests in progress: {} KiB over the baseline; after: {} KiB",
        (peak - baseline) / 1024,
        (after - baseline) / 1024
    );
    assert!(
        after - baseline < 64 * 1024,
        "{} bytes kept",
        after - baseline
    );
}
