//! What every workload shares: the tool arguments, the requests in flight, the timing of
//! runs, the era's name

use std::sync::Mutex;
use std::time::Instant;

use mcp_sansio::EraMode;

/// The tool arguments of every workload
pub(crate) const ARGS: &str = r#"{"text":"hello world"}"#;

/// Requests in flight in W2
pub(crate) const IN_FLIGHT: usize = 64;

/// Heap allocations per call of each run of the last [`time_runs`] (every thread)
static ALLOCS_PER_CALL: Mutex<Vec<f64>> = Mutex::new(Vec::new());

/// Times `runs` runs of `n` calls each; returns calls per second of each run, and records
/// the heap allocations per call of each run (every thread: client and server together) for
/// [`allocs_per_call`]
pub(crate) fn time_runs(runs: usize, n: usize, mut run: impl FnMut(usize)) -> Vec<f64> {
    // One short warm-up run, not counted.
    run((n / 10).max(1));
    let mut allocs = Vec::with_capacity(runs);
    let rates = (0..runs)
        .map(|_| {
            let before = crate::alloc::allocations();
            let start = Instant::now();
            run(n);
            let elapsed = start.elapsed().as_secs_f64();
            allocs.push((crate::alloc::allocations() - before) as f64 / n as f64);
            n as f64 / elapsed
        })
        .collect();
    *ALLOCS_PER_CALL.lock().unwrap_or_else(|e| e.into_inner()) = allocs;
    rates
}

/// The heap allocations per call of each run of the last [`time_runs`]
pub(crate) fn allocs_per_call() -> Vec<f64> {
    ALLOCS_PER_CALL
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
}

/// The protocol version an era's runs speak
pub(crate) fn era_name(era: EraMode) -> &'static str {
    match era {
        EraMode::Modern => "2026-07-28",
        _ => "2025-11-25",
    }
}
