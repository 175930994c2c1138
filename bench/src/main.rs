//! `mcp-bench`: the scriptable benchmark runner
//!
//! ```text
//! mcp-bench <w1|w2|w3|limit|threads|pingpong|fanout|pipes|mem> [--binding <core|tokio-ct|tokio-mt|async-std|blocking>]
//!           [--n N] [--runs R] [--era <legacy|modern>]
//! ```
//!
//! Prints one JSON line: the workload, binding, era, `n`, `runs`, `calls_per_s` as
//! `{"median", "min", "max"}` over the runs (`limit` adds `rt_per_s`, the same figure under
//! its own name), `peak_rss_kib` (this process's VmHWM after the runs) and `runner` (`all`, or
//! `core-only` when built with `--no-default-features`); W1 and W2 add `allocs_per_call`, the
//! heap allocations (calls to alloc, alloc_zeroed and realloc by every thread: client and server
//! together) per round trip, median over the runs. `mem` prints the
//! bytes per idle session and per request in flight, from a counting allocator.
//!
//! - `w1`: sequential `tools/call` round trips, tool `echo`, arguments
//!   `{"text":"hello world"}`, result one text content;
//! - `w2`: the same with 64 requests in flight;
//! - `w3`: W1 over real stdio to a child process (this binary, `serve --binding ..`);
//! - `limit`: serde_json parsing and writing the very bytes a core W1 round trip moves (the
//!   request and the response, each parsed once and written once), no protocol logic.
//! - `threads`: the floor of a thread-per-connection binding: a line through the four thread
//!   hand-offs of an mcp-sansio-blocking W1 call (caller, server reader, worker, client reader), no MCP.
//! - `pingpong`: the floor of any client and server on two threads: a line written by the
//!   caller, echoed by the server's one thread, read back by the caller (two hand-offs), no MCP.
//! - `fanout`: the floor of a threaded W2: 64 caller threads at once, each line echoed by the
//!   server's one thread and handed back to its caller by the client's reader thread; no MCP.
//! - `pipes`: the floor of W3: a line written to a child process's stdin, echoed to its
//!   stdout by blocking reads and writes (this binary, `echo`), read back; no MCP.
//!
//! Adding a binding is one arm in [`run`] (and in [`serve`] for W3).

mod alloc;
#[cfg(feature = "async-std")]
mod async_std_binding;
#[cfg(feature = "blocking")]
mod blocking_binding;
mod common;
mod core_binding;
mod threads_limit;
#[cfg(feature = "tokio")]
mod tokio_binding;

use std::process::ExitCode;

use common::{allocs_per_call, era_name, time_runs};

use mcp_sansio::{EraMode, ProtocolVersion};
use serde_json::json;

#[global_allocator]
static ALLOC: alloc::Counting = alloc::Counting;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Workload {
    W1,
    W2,
    W3,
    Limit,
    Threads,
    PingPong,
    Fanout,
    Pipes,
    Mem,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Binding {
    Core,
    TokioCt,
    TokioMt,
    AsyncStd,
    Blocking,
}

impl Binding {
    fn name(self) -> &'static str {
        match self {
            Self::Core => "core",
            Self::TokioCt => "tokio-ct",
            Self::TokioMt => "tokio-mt",
            Self::AsyncStd => "async-std",
            Self::Blocking => "blocking",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        [
            Self::Core,
            Self::TokioCt,
            Self::TokioMt,
            Self::AsyncStd,
            Self::Blocking,
        ]
        .into_iter()
        .find(|b| b.name() == s)
    }
}

struct Options {
    workload: Workload,
    binding: Binding,
    n: usize,
    runs: usize,
    era: EraMode,
}

const USAGE: &str = "usage: mcp-bench <w1|w2|w3|limit|threads|pingpong|fanout|pipes|mem> [--binding <core|tokio-ct|tokio-mt|async-std|blocking>] [--n N] [--runs R] [--era <legacy|modern>]\n       mcp-bench serve --binding <core|tokio-ct|tokio-mt|async-std|blocking> [--era ..]   (the W3 child)";

fn parse(args: &[String]) -> Result<(Option<Workload>, Options), String> {
    let mut it = args.iter();
    let first = it.next().ok_or("missing the workload")?;
    let workload = match first.as_str() {
        "w1" => Some(Workload::W1),
        "w2" => Some(Workload::W2),
        "w3" => Some(Workload::W3),
        "limit" => Some(Workload::Limit),
        "threads" => Some(Workload::Threads),
        "pingpong" => Some(Workload::PingPong),
        "fanout" => Some(Workload::Fanout),
        "pipes" => Some(Workload::Pipes),
        "mem" => Some(Workload::Mem),
        "serve" => None,
        other => return Err(format!("unknown workload `{other}`")),
    };
    let mut o = Options {
        workload: workload.unwrap_or(Workload::W3),
        binding: Binding::Core,
        n: 0,
        runs: 5,
        era: EraMode::Legacy(ProtocolVersion::V2025_11_25),
    };
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--binding" => {
                o.binding = Binding::parse(value).ok_or(format!("unknown binding `{value}`"))?;
            }
            "--n" => o.n = value.parse().map_err(|_| format!("bad --n `{value}`"))?,
            "--runs" => o.runs = value.parse().map_err(|_| format!("bad --runs `{value}`"))?,
            "--era" => {
                o.era = match value.as_str() {
                    "legacy" => EraMode::Legacy(ProtocolVersion::V2025_11_25),
                    "modern" => EraMode::Modern,
                    _ => return Err(format!("unknown era `{value}`")),
                }
            }
            _ => return Err(format!("unknown flag `{flag}`")),
        }
    }
    if o.runs == 0 {
        return Err("--runs must be at least 1".into());
    }
    if o.n == 0 {
        o.n = match (o.workload, o.binding) {
            (Workload::Limit, _) => 500_000,
            (Workload::Threads | Workload::PingPong | Workload::Fanout, _) => 50_000,
            (Workload::W3 | Workload::Pipes, _) => 20_000,
            (_, Binding::Core) => 200_000,
            _ => 50_000,
        };
    }
    Ok((workload, o))
}

/// The median of non-empty figures
fn median(mut figures: Vec<f64>) -> f64 {
    figures.sort_by(f64::total_cmp);
    if figures.len() % 2 == 1 {
        figures[figures.len() / 2]
    } else {
        (figures[figures.len() / 2 - 1] + figures[figures.len() / 2]) / 2.0
    }
}

fn summary(mut rates: Vec<f64>) -> serde_json::Value {
    rates.sort_by(f64::total_cmp);
    let (min, max) = (rates[0], rates[rates.len() - 1]);
    json!({"median": median(rates).round(), "min": min.round(), "max": max.round()})
}

/// Runs one workload on one binding; `Err` when the binding fails (a call or the W3 child)
fn run(o: &Options) -> Result<Vec<f64>, String> {
    let (n, runs, era) = (o.n, o.runs, o.era);
    match (o.workload, o.binding) {
        (Workload::Limit, _) => Ok(time_runs(runs, n, |n| core_binding::limit(era, n))),
        (Workload::Threads, _) => Ok(time_runs(runs, n, threads_limit::round_trips)),
        (Workload::PingPong, _) => Ok(time_runs(runs, n, threads_limit::ping_pong)),
        (Workload::Fanout, _) => Ok(time_runs(runs, n, threads_limit::fanout)),
        (Workload::Pipes, _) => threads_limit::pipes(runs, n),
        (Workload::W1, Binding::Core) => Ok(core_binding::w1(era, runs, n)),
        (Workload::W2, Binding::Core) => Ok(core_binding::w2(era, runs, n)),
        (Workload::W3, Binding::Core) => core_binding::w3(era, runs, n),
        #[cfg(feature = "tokio")]
        (w, Binding::TokioCt | Binding::TokioMt) => {
            let multi = o.binding == Binding::TokioMt;
            tokio_binding::run(w == Workload::W1, w == Workload::W3, multi, era, runs, n)
        }
        #[cfg(feature = "blocking")]
        (w, Binding::Blocking) => {
            blocking_binding::run(w == Workload::W1, w == Workload::W3, o.era, runs, n)
        }
        #[cfg(feature = "async-std")]
        (w, Binding::AsyncStd) => {
            async_std_binding::run(w == Workload::W1, w == Workload::W3, o.era, runs, n)
        }
        (Workload::Mem, _) => unreachable!("handled before"),
        #[allow(unreachable_patterns)] // with every binding built, no binding reaches here
        (_, b) => Err(not_built(b)),
    }
}

/// The W3 child: serve stdio with the binding
fn serve(o: &Options) -> Result<(), String> {
    match o.binding {
        Binding::Core => core_binding::serve_stdio(),
        #[cfg(feature = "tokio")]
        Binding::TokioCt | Binding::TokioMt => {
            tokio_binding::serve_stdio(o.binding == Binding::TokioMt);
            Ok(())
        }
        #[cfg(feature = "blocking")]
        Binding::Blocking => {
            blocking_binding::serve_stdio();
            Ok(())
        }
        #[cfg(feature = "async-std")]
        Binding::AsyncStd => {
            async_std_binding::serve_stdio();
            Ok(())
        }
        #[allow(unreachable_patterns)] // with every binding built, no binding reaches here
        b => Err(not_built(b)),
    }
}

/// Which bindings this runner links: `all`, or `core-only` (`--no-default-features`), whose
/// process RSS carries no other binding's code
const RUNNER: &str = if cfg!(any(
    feature = "tokio",
    feature = "async-std",
    feature = "blocking"
)) {
    if cfg!(all(
        feature = "tokio",
        feature = "async-std",
        feature = "blocking"
    )) {
        "all"
    } else {
        "some"
    }
} else {
    "core-only"
};

/// The error for a binding this runner was built without (`--no-default-features`)
#[cfg_attr(
    all(feature = "tokio", feature = "async-std", feature = "blocking"),
    allow(dead_code)
)]
fn not_built(b: Binding) -> String {
    format!(
        "this mcp-bench was built without the `{}` binding (build it with default features)",
        b.name()
    )
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("echo") {
        threads_limit::echo();
        return ExitCode::SUCCESS;
    }
    let (workload, o) = match parse(&args) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("mcp-bench: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let Some(workload) = workload else {
        return match serve(&o) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("mcp-bench: {e}");
                ExitCode::FAILURE
            }
        };
    };
    if workload == Workload::Mem {
        println!("{}", core_binding::memory(o.era));
        return ExitCode::SUCCESS;
    }
    let rates = match run(&o) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("mcp-bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    let name = match workload {
        Workload::W1 => "w1",
        Workload::W2 => "w2",
        Workload::W3 => "w3",
        Workload::Limit => "limit",
        Workload::Threads => "threads",
        Workload::PingPong => "pingpong",
        Workload::Fanout => "fanout",
        Workload::Pipes => "pipes",
        Workload::Mem => "mem",
    };
    let rates = summary(rates);
    let mut line = json!({
        "workload": name,
        "binding": o.binding.name(),
        "era": era_name(o.era),
        "n": o.n,
        "runs": o.runs,
        "calls_per_s": rates,
        "peak_rss_kib": alloc::peak_rss_kib(),
        "runner": RUNNER,
    });
    if matches!(workload, Workload::W1 | Workload::W2) {
        // Every thread's allocations (client and server together) per round trip, median
        // over the runs, to two decimals
        let allocs = allocs_per_call();
        if !allocs.is_empty() {
            line["allocs_per_call"] = json!((median(allocs) * 100.0).round() / 100.0);
        }
    }
    if workload == Workload::Limit {
        line["rt_per_s"] = line["calls_per_s"].clone();
        line["binding"] = json!("serde_json");
    }
    if matches!(
        workload,
        Workload::Threads | Workload::PingPong | Workload::Fanout | Workload::Pipes
    ) {
        line["rt_per_s"] = line["calls_per_s"].clone();
        let floor = if workload == Workload::Pipes {
            "bare-processes"
        } else {
            "bare-threads"
        };
        line["binding"] = json!(floor);
    }
    println!("{line}");
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(args: &str) -> Options {
        let args: Vec<String> = args.split_whitespace().map(str::to_owned).collect();
        parse(&args).expect("valid arguments").1
    }

    #[test]
    fn every_built_workload_runs_and_reports_positive_rates() {
        for args in [
            "w1 --binding core --n 200 --runs 2",
            "w1 --binding core --n 200 --runs 1 --era modern",
            "w2 --binding core --n 256 --runs 1",
            "limit --n 200 --runs 1 --era modern",
            "threads --n 200 --runs 1",
            "pingpong --n 200 --runs 1",
            "fanout --n 256 --runs 1",
            "w1 --binding tokio-ct --n 50 --runs 1",
            "w2 --binding tokio-mt --n 128 --runs 1",
            "w1 --binding blocking --n 50 --runs 1",
            "w2 --binding blocking --n 128 --runs 1",
            "w1 --binding async-std --n 50 --runs 1",
            "w2 --binding async-std --n 128 --runs 1",
        ] {
            let o = options(args);
            let built = match o.binding {
                Binding::Core => true,
                Binding::TokioCt | Binding::TokioMt => cfg!(feature = "tokio"),
                Binding::AsyncStd => cfg!(feature = "async-std"),
                Binding::Blocking => cfg!(feature = "blocking"),
            };
            if !built {
                assert!(
                    run(&o).is_err_and(|e| e.contains("built without")),
                    "{args}"
                );
                continue;
            }
            let rates = run(&o).unwrap_or_else(|e| panic!("{args}: {e}"));
            assert!(
                !rates.is_empty() && rates.iter().all(|r| *r > 0.0),
                "{args}: {rates:?}"
            );
            if matches!(o.workload, Workload::W1 | Workload::W2) {
                // Every round trip allocates something (at least the caller's arguments).
                let allocs = allocs_per_call();
                assert!(
                    allocs.len() == o.runs && allocs.iter().all(|a| *a > 0.0),
                    "{args}: {allocs:?}"
                );
            }
        }
    }

    #[test]
    fn the_summary_is_median_min_max() {
        let s = summary(vec![3.0, 1.0, 2.0]);
        assert_eq!(s, json!({"median": 2.0, "min": 1.0, "max": 3.0}));
    }

    #[test]
    fn memory_figures_are_plausible() {
        let m = core_binding::memory(EraMode::Modern);
        for side in ["client", "server"] {
            let idle = m["idle_session_bytes"][side].as_f64().expect("a number");
            let warm = m["in_flight_request_bytes"][side]
                .as_f64()
                .expect("a number");
            let cold = m["in_flight_request_bytes_cold_tables"][side]
                .as_f64()
                .expect("a number");
            assert!(idle > 100.0 && idle < 64_000.0, "{m}");
            // Warm tables may need nothing new per request; cold ones grow.
            assert!((0.0..16_000.0).contains(&warm), "{m}");
            assert!(cold > 0.0 && cold < 16_000.0 && cold >= warm, "{m}");
        }
    }
}
