//! A counting allocator (live bytes, for the per-session and per-request figures; the number
//! of allocations of every thread, for the allocations per call) and the peak RSS of the
//! process

#![allow(unsafe_code)] // a GlobalAlloc wrapper is unsafe by definition; it only counts

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

/// Calls to `alloc`, `alloc_zeroed` and `realloc` by every thread since the process started
static ALLOCS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// Bytes allocated minus bytes freed by this thread (the measurements run on one thread,
    /// so other threads' allocations do not blur them)
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

fn counted() {
    ALLOCS.fetch_add(1, Ordering::Relaxed);
}

fn add(bytes: isize) {
    // `try_with`: nothing to count while the thread is being torn down.
    let _ = LIVE.try_with(|l| l.set(l.get() + bytes));
}

/// The system allocator, counting the bytes currently allocated
pub(crate) struct Counting;

// SAFETY: every call is forwarded to `System` unchanged; only a counter is updated.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is passed on to `System`.
        let p = unsafe { System.alloc(layout) };
        counted();
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
        counted();
        if !p.is_null() {
            add(layout.size() as isize);
        }
        p
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract is passed on to `System`.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        counted();
        if !p.is_null() {
            add(new_size as isize - layout.size() as isize);
        }
        p
    }
}

/// Bytes this thread allocated and has not freed
pub(crate) fn live() -> isize {
    LIVE.with(Cell::get)
}

/// Heap allocations (`alloc`, `alloc_zeroed`, `realloc`) by every thread so far
pub(crate) fn allocations() -> u64 {
    ALLOCS.load(Ordering::Relaxed)
}

/// The process's peak resident set (VmHWM) in KiB, where /proc has it
pub(crate) fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}
