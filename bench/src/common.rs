//! What every workload shares: the tool arguments, the requests in flight, the timing of
//! runs, the era's name

use std::time::Instant;

use mcp_sansio::EraMode;

/// The tool arguments of every workload
pub(crate) const ARGS: &str = r#"{"text":"hello world"}"#;

/// Requests in flight in W2
pub(crate) const IN_FLIGHT: usize = 64;

/// Times `runs` runs of `n` calls each; returns calls per second of each run
pub(crate) fn time_runs(runs: usize, n: usize, mut run: impl FnMut(usize)) -> Vec<f64> {
    // One short warm-up run, not counted.
    run((n / 10).max(1));
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            run(n);
            n as f64 / start.elapsed().as_secs_f64()
        })
        .collect()
}

/// The protocol version an era's runs speak
pub(crate) fn era_name(era: EraMode) -> &'static str {
    match era {
        EraMode::Modern => "2026-07-28",
        _ => "2025-11-25",
    }
}
