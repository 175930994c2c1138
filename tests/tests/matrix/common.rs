//! What every cell of the matrix shares: the servers, transports and eras, the client
//! configuration, the summary each client scenario fills in, and the assertions on it

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use mcp_interop::{
    ServerProcess, TEST_DEADLINE, everything_http_server, everything_https_server,
    everything_server, everything_server_async_std, everything_server_blocking,
};
use mcp_sansio::schema::{
    CallToolResult, GetPromptResult, InputRequests, InputResponses, ReadResourceResult,
    ResourceContents, TaskStatus,
};
use mcp_sansio::{
    ClientConfig, EraMode, ErrorObject, Implementation, Progress, ProtocolVersion, TASKS_EXTENSION,
};
use serde_json::{Map, Value, json};

/// The binding an everything-server example is built on
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ServerBinding {
    Tokio,
    AsyncStd,
    Blocking,
}

impl ServerBinding {
    /// The example binary (`scripts/interop-setup` builds all three)
    pub(crate) fn binary(self) -> PathBuf {
        match self {
            Self::Tokio => everything_server(),
            Self::AsyncStd => everything_server_async_std(),
            Self::Blocking => everything_server_blocking(),
        }
    }

    /// The name the server gives itself (`serverInfo.name`)
    pub(crate) fn server_name(self) -> &'static str {
        match self {
            Self::Tokio => "mcp-tokio-everything",
            Self::AsyncStd => "mcp-async-std-everything",
            Self::Blocking => "mcp-blocking-everything",
        }
    }
}

/// How the client reaches the server
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transport {
    /// The client starts the server as its child and talks over its stdin and stdout
    Stdio,
    /// The test starts the server with `--http 127.0.0.1:0`; the client connects to its URL
    Http,
    /// The test makes a CA and a certificate for 127.0.0.1, starts the server with `--https
    /// 127.0.0.1:0 chain.pem key.pem`; the client connects to its URL trusting the CA
    Https,
    /// The test starts the `axum-app` example (the tokio server's endpoint mounted at `/mcp`
    /// in an axum app); the client connects to its URL (tokio server only)
    Mounted,
}

/// The protocol era the client insists on (no `Auto`: each cell pins its era)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Era {
    /// `initialize` at 2025-11-25
    Legacy,
    /// `server/discover` and per-request `_meta` at 2026-07-28
    Modern,
}

impl Era {
    pub(crate) fn mode(self) -> EraMode {
        match self {
            Self::Legacy => EraMode::Legacy(ProtocolVersion::V2025_11_25),
            Self::Modern => EraMode::Modern,
        }
    }

    pub(crate) fn version(self) -> ProtocolVersion {
        match self {
            Self::Legacy => ProtocolVersion::V2025_11_25,
            Self::Modern => ProtocolVersion::V2026_07_28,
        }
    }
}

/// Where a client scenario connects to
#[derive(Debug, Clone)]
pub(crate) enum Target {
    /// Spawn this binary (no arguments: stdio)
    Stdio(PathBuf),
    /// Connect to this Streamable HTTP URL
    Http(String),
    /// Connect to this `https://` URL, trusting the CA of this PEM
    Https { url: String, ca: String },
}

/// One cell of the matrix, as a client scenario sees it
#[derive(Debug, Clone)]
pub(crate) struct Case {
    pub(crate) target: Target,
    pub(crate) era: Era,
}

/// The client configuration of every scenario: the pinned era, elicitation (for `ask_name`)
/// and the tasks extension (so 2026 servers may run `long_job` as a task)
pub(crate) fn config(era: Era) -> ClientConfig {
    let mut config = ClientConfig::new(Implementation::new("mcp-interop-matrix", "0.1.0"));
    config.era = era.mode();
    config.capabilities = json!({
        "elicitation": {},
        "extensions": {TASKS_EXTENSION: {}},
    });
    // A silent peer fails its request with a clear error well before the test's deadline.
    config.timeouts.request = Some(Duration::from_secs(20));
    // Unused with a pinned era; generous in case a cell ever uses Auto on a loaded machine.
    config.discover_timeout = Duration::from_secs(20);
    config
}

/// The name the input handler gives when `ask_name` asks
pub(crate) const USER_NAME: &str = "Ada";

/// The "user" of every client: accepts each elicitation with `{"name": "Ada"}`
pub(crate) fn answer_user(requests: InputRequests) -> Result<InputResponses, ErrorObject> {
    requests
        .into_keys()
        .map(|key| {
            let answer =
                serde_json::from_value(json!({"action": "accept", "content": {"name": USER_NAME}}))
                    .map_err(ErrorObject::internal_error)?;
            Ok((key, answer))
        })
        .collect()
}

/// How long a scenario waits for something that must come (a progress report before it
/// cancels); far longer than it takes, and shorter than the test's deadline
pub(crate) const WAIT: Duration = Duration::from_secs(20);

/// `slow` runs this many steps in the progress check
pub(crate) const SLOW_STEPS: u64 = 3;
/// `slow` is asked for this many steps (5 seconds) in the cancellation check, which
/// cancels it after its first progress report
pub(crate) const CANCELLED_STEPS: u64 = 50;
/// `long_job` runs this many milliseconds
pub(crate) const LONG_JOB_MS: u64 = 300;

/// How a call ended, in terms every binding's error maps to
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Ending {
    /// A result
    Result(Call),
    /// A JSON-RPC error from the server
    Remote(i64),
    /// Cancelled by us
    Cancelled,
    /// Anything else (the binding's error, shown)
    Other(String),
}

/// The part of a `tools/call` result the scenario checks
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Call {
    pub(crate) texts: Vec<String>,
    pub(crate) is_error: bool,
}

impl From<&CallToolResult> for Call {
    fn from(result: &CallToolResult) -> Self {
        Self {
            texts: result
                .content
                .iter()
                .filter_map(|b| b.as_text())
                .map(str::to_owned)
                .collect(),
            is_error: result.is_error == Some(true),
        }
    }
}

/// What one client saw of one server; each client scenario fills it in through its own API
#[derive(Debug)]
pub(crate) struct Summary {
    pub(crate) version: ProtocolVersion,
    pub(crate) server_name: Option<String>,
    /// Tool names, sorted
    pub(crate) tools: Vec<String>,
    pub(crate) echo: Call,
    pub(crate) add: Call,
    pub(crate) slow: Call,
    pub(crate) progress: Vec<Progress>,
    /// How the `slow` call cancelled after its first progress report ended
    pub(crate) cancelled: Ending,
    /// Progress reports the cancelled call saw (at least the first)
    pub(crate) cancelled_progress: usize,
    pub(crate) ask_name: Call,
    pub(crate) long_job: Call,
    /// The task statuses the client reported while `long_job` ran
    pub(crate) long_job_statuses: Vec<TaskStatus>,
    /// `(uri, text)` of each content of `resources/read test://static-text`
    pub(crate) static_resource: Vec<(String, String)>,
    /// `(uri, text)` of each content of `resources/read test://template/42/data`
    pub(crate) template: Vec<(String, String)>,
    /// `(role, text)` of each message of `prompts/get greeting {name: Ada}`
    pub(crate) prompt: Vec<(String, String)>,
    pub(crate) unknown_tool: Ending,
}

/// The `(uri, text)` pairs of a read
pub(crate) fn contents(read: &ReadResourceResult) -> Vec<(String, String)> {
    read.contents
        .iter()
        .map(|c| match c {
            ResourceContents::Text(t) => (t.uri.clone(), t.text.clone()),
            ResourceContents::Blob(b) => (b.uri.clone(), format!("(blob {})", b.blob)),
            other => (String::new(), format!("(unexpected {other:?})")),
        })
        .collect()
}

/// The `(role, text)` pairs of a prompt
pub(crate) fn messages(prompt: &GetPromptResult) -> Vec<(String, String)> {
    prompt
        .messages
        .iter()
        .map(|m| {
            let role = serde_json::to_value(m.role).unwrap_or(Value::Null);
            let text = m.content.as_text().unwrap_or("(not text)");
            (role.as_str().unwrap_or("?").to_owned(), text.to_owned())
        })
        .collect()
}

/// The arguments of `prompts/get greeting`
pub(crate) fn greeting() -> mcp_sansio::schema::GetPromptParams {
    let mut params = mcp_sansio::schema::GetPromptParams::new("greeting");
    params.arguments = Some([("name".to_owned(), USER_NAME.to_owned())].into());
    params
}

/// A JSON object from a `json!` literal
pub(crate) fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("arguments must be an object, not {other}"),
    }
}

/// The `tools/call` params of a raw call (for `start`, which takes raw params)
pub(crate) fn call_params(name: &str, arguments: Value) -> Box<serde_json::value::RawValue> {
    serde_json::value::to_raw_value(&json!({"name": name, "arguments": arguments}))
        .expect("params serialize")
}

/// Decodes a raw `tools/call` result
pub(crate) fn decode_call(raw: &serde_json::value::RawValue) -> Result<Call, String> {
    serde_json::from_str::<CallToolResult>(raw.get())
        .map(|r| Call::from(&r))
        .map_err(|e| format!("invalid tools/call result: {e}: {}", raw.get()))
}

/// Asserts everything the scenario saw of `server` in `era`
pub(crate) fn assert_summary(s: &Summary, server: ServerBinding, era: Era) {
    let ctx = format!("\nsummary: {s:#?}");
    assert_eq!(s.version, era.version(), "negotiated version{ctx}");
    assert_eq!(
        s.server_name.as_deref(),
        Some(server.server_name()),
        "server name{ctx}"
    );
    assert_eq!(
        s.tools,
        [
            "add",
            "admin_echo",
            "ask_name",
            "echo",
            "long_job",
            "slow",
            "whoami"
        ],
        "tools/list{ctx}"
    );
    assert_eq!(s.echo, text_call("hello from the matrix"), "echo{ctx}");
    assert_eq!(s.add, text_call("5.5"), "add{ctx}");

    assert_eq!(
        s.slow,
        text_call(&format!("done after {SLOW_STEPS} steps")),
        "slow{ctx}"
    );
    let values: Vec<f64> = s.progress.iter().map(|p| p.progress).collect();
    assert!(
        values.windows(2).all(|w| w[0] < w[1]),
        "progress must strictly increase: {values:?}{ctx}"
    );
    #[allow(clippy::cast_precision_loss)]
    let expected: Vec<f64> = (1..=SLOW_STEPS).map(|i| i as f64).collect();
    assert_eq!(values, expected, "every progress value, in order{ctx}");
    for (i, p) in s.progress.iter().enumerate() {
        #[allow(clippy::cast_precision_loss)]
        let total = SLOW_STEPS as f64;
        assert_eq!(p.total, Some(total), "progress total{ctx}");
        assert_eq!(
            p.message.as_deref(),
            Some(format!("step {} of {SLOW_STEPS}", i + 1).as_str()),
            "progress message{ctx}"
        );
    }

    assert_eq!(s.cancelled, Ending::Cancelled, "the cancelled call{ctx}");
    assert!(
        s.cancelled_progress >= 1,
        "it ran before it was cancelled{ctx}"
    );

    assert_eq!(
        s.ask_name,
        text_call(&format!("Hello, {USER_NAME}!")),
        "ask_name answered through the input handler{ctx}"
    );

    assert_eq!(
        s.long_job,
        text_call(&format!("finished after {LONG_JOB_MS} ms")),
        "long_job{ctx}"
    );
    match era {
        // The server runs it as a task for a client with the tasks extension; the client
        // follows the task to its result and reports its status on the way.
        Era::Modern => assert_eq!(
            s.long_job_statuses.first(),
            Some(&TaskStatus::Working),
            "long_job runs as a task{ctx}"
        ),
        // The everything-servers declare only the 2026 tasks extension, not the 2025
        // `tasks` capability, so a 2025 call is answered directly.
        Era::Legacy => assert_eq!(s.long_job_statuses, [], "no task on a 2025 connection{ctx}"),
    }

    assert_eq!(
        s.static_resource,
        [(
            "test://static-text".to_owned(),
            "Hello from a static resource".to_owned()
        )],
        "resources/read static{ctx}"
    );
    assert_eq!(
        s.template,
        [(
            "test://template/42/data".to_owned(),
            "Data for 42".to_owned()
        )],
        "resources/read template{ctx}"
    );
    assert_eq!(
        s.prompt,
        [("user".to_owned(), format!("Say hello to {USER_NAME}."))],
        "prompts/get{ctx}"
    );

    let failed = match &s.unknown_tool {
        Ending::Remote(code) => *code == -32602,
        Ending::Result(call) => call.is_error,
        _ => false,
    };
    assert!(failed, "an unknown tool must fail (-32602 or isError){ctx}");
}

fn text_call(text: &str) -> Call {
    Call {
        texts: vec![text.to_owned()],
        is_error: false,
    }
}

/// Runs one cell: starts the server for HTTP (the client spawns it for stdio), runs the
/// client's scenario on a thread of its own and asserts its summary
///
/// The test fails when the scenario takes longer than [`TEST_DEADLINE`]; the HTTP server
/// belongs to this thread, so it is killed then too (a stdio child is killed when its
/// client is dropped, or gets end-of-file on its stdin when the test process ends).
pub(crate) fn run(
    scenario: fn(Case) -> Summary,
    server: ServerBinding,
    transport: Transport,
    era: Era,
) {
    let (target, http_server): (Target, Option<ServerProcess>) = match transport {
        Transport::Stdio => (Target::Stdio(server.binary()), None),
        Transport::Http => {
            let (process, url) = everything_http_server(&server.binary());
            (Target::Http(url), Some(process))
        }
        Transport::Https => {
            let pki = mcp_interop::Pki::new();
            let (process, url) = everything_https_server(&server.binary(), &pki.chain, &pki.key);
            let ca = pki.ca.clone();
            (Target::Https { url, ca }, Some(process))
        }
        Transport::Mounted => {
            assert_eq!(
                server,
                ServerBinding::Tokio,
                "only the tokio server is mounted"
            );
            let (process, url) = mcp_interop::axum_app_server();
            (Target::Http(url), Some(process))
        }
    };
    let (done, finished) = mpsc::channel();
    let runner = std::thread::spawn(move || {
        let summary = scenario(Case { target, era });
        let _ = done.send(summary);
    });
    let summary = match finished.recv_timeout(TEST_DEADLINE) {
        Ok(summary) => {
            runner.join().expect("the scenario thread");
            summary
        }
        // The scenario panicked: show its panic
        Err(mpsc::RecvTimeoutError::Disconnected) => match runner.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => unreachable!("the scenario sends its summary before it ends"),
        },
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("the scenario did not end within {TEST_DEADLINE:?}")
        }
    };
    drop(http_server);
    assert_summary(&summary, server, era);
}
