//! W1 on rmcp 3.11, in process: the peer of `mcp-bench w1 --binding tokio-ct` (scripts/bench-all)
//!
//! ```text
//! rmcp-w1 [--n N] [--runs R]
//! ```
//!
//! An rmcp client and an rmcp server (the `echo` tool of `bench/peers/rmcp-echo`) over an
//! in-memory `tokio::io::duplex` on a current-thread tokio runtime. After the handshake
//! (`initialize` with the legacy 2025-11-25 version), `n` sequential `tools/call` round trips
//! of `echo` with `{"text":"hello world"}`, answered with one text content; one warm-up run of
//! `n / 10` calls, then `runs` timed runs.
//!
//! Prints one JSON line in the shape of `mcp-bench w1`: `workload`, `binding` (`rmcp`), `era`
//! (the negotiated protocol version), `n`, `runs`, `calls_per_s` `{median, min, max}` over the
//! runs, `peak_rss_kib`, and `allocs_per_call`: heap allocations (calls to alloc and realloc,
//! every thread, client and server together) per round trip, the median over the runs.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientConfig, ContentBlock,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig,
    Tool,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData, RoleClient, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};

/// The system allocator, counting calls to alloc and realloc on every thread
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is forwarded to `System` unchanged; only a counter is updated.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on to `System`.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is passed on to `System`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on to `System`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on to `System`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// The tool arguments of every workload (as `mcp-bench`'s)
const ARGS: &str = r#"{"text":"hello world"}"#;

const USAGE: &str = "usage: rmcp-w1 [--n N] [--runs R]";

#[derive(Clone)]
struct Echo {
    tool: Tool,
}

impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult {
            tools: vec![self.tool.clone()],
            ..Default::default()
        })
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("text"))
            .and_then(|t| t.as_str())
            .unwrap_or_default()
            .to_owned();
        Ok(CallToolResponse::Complete(CallToolResult::success(vec![
            ContentBlock::text(text),
        ])))
    }
}

/// The client: rmcp's defaults, asking for the legacy 2025-11-25 version (the era of
/// `mcp-bench w1`'s default)
#[derive(Clone)]
struct Bench;

impl ClientHandler for Bench {
    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.protocol_version = ProtocolVersion::V_2025_11_25;
        info
    }
}

fn echo_tool() -> Tool {
    let Value::Object(schema) = json!({
        "type": "object", "properties": {"text": {"type": "string"}}
    }) else {
        unreachable!()
    };
    Tool::new("echo", "Echoes the text back", std::sync::Arc::new(schema))
}

/// Connects a client to a server over a duplex; the server runs on a task of its own
async fn connect() -> Result<RunningService<RoleClient, Bench>, String> {
    let (a, b) = tokio::io::duplex(256 * 1024);
    let server = Echo { tool: echo_tool() };
    let serving = tokio::spawn(async move {
        match server.serve(b).await {
            Ok(running) => {
                let _ = running.waiting().await;
            }
            Err(e) => eprintln!("rmcp-w1: the server's handshake: {e}"),
        }
    });
    let client = Bench.serve(a).await.map_err(|e| e.to_string());
    if client.is_err() {
        serving.abort();
    }
    client
}

/// `n` sequential calls
async fn calls(client: &RunningService<RoleClient, Bench>, n: usize) -> Result<(), String> {
    for _ in 0..n {
        let args: Map<String, Value> = serde_json::from_str(ARGS).map_err(|e| e.to_string())?;
        let result = client
            .call_tool(CallToolRequestParams::new("echo").with_arguments(args))
            .await
            .map_err(|e| e.to_string())?;
        if result.content.len() != 1 {
            return Err(format!("echo answered {} contents", result.content.len()));
        }
        black_box(result);
    }
    Ok(())
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let m = xs.len() / 2;
    if xs.len() % 2 == 1 {
        xs[m]
    } else {
        (xs[m - 1] + xs[m]) / 2.0
    }
}

/// The process's peak resident set (VmHWM) in KiB, where /proc has it
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn options() -> Result<(usize, usize), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mut n, mut runs) = (50_000, 5);
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--n" => n = value.parse().map_err(|_| format!("bad --n `{value}`"))?,
            "--runs" => runs = value.parse().map_err(|_| format!("bad --runs `{value}`"))?,
            _ => return Err(format!("unknown flag `{flag}`")),
        }
    }
    if n == 0 || runs == 0 {
        return Err("--n and --runs must be at least 1".into());
    }
    Ok((n, runs))
}

fn run(n: usize, runs: usize) -> Result<Value, String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async {
        let client = connect().await?;
        let era = client
            .peer_info()
            .map(|info| info.protocol_version.to_string())
            .unwrap_or_else(|| "unknown".into());
        // One short warm-up run, not counted (as mcp-bench's).
        calls(&client, (n / 10).max(1)).await?;
        let (mut rates, mut allocs) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
        for _ in 0..runs {
            let before = ALLOCATIONS.load(Ordering::Relaxed);
            let start = Instant::now();
            calls(&client, n).await?;
            let elapsed = start.elapsed().as_secs_f64();
            let after = ALLOCATIONS.load(Ordering::Relaxed);
            rates.push(n as f64 / elapsed);
            allocs.push((after - before) as f64 / n as f64);
        }
        let _ = client.cancel().await;
        let (lo, hi) = rates.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), r| {
            (lo.min(*r), hi.max(*r))
        });
        Ok(json!({
            "workload": "w1",
            "binding": "rmcp",
            "era": era,
            "n": n,
            "runs": runs,
            "calls_per_s": {
                "median": median(rates).round(),
                "min": lo.round(),
                "max": hi.round(),
            },
            "allocs_per_call": (median(allocs) * 100.0).round() / 100.0,
            "peak_rss_kib": peak_rss_kib(),
            "runner": "rmcp-w1",
        }))
    })
}

fn main() -> ExitCode {
    let (n, runs) = match options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("rmcp-w1: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(n, runs) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("rmcp-w1: {e}");
            ExitCode::FAILURE
        }
    }
}
