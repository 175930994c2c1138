//! `#[tool]` (the `macros` feature): the definitions it derives (names, descriptions, hints,
//! input and output schemas) and the results it converts, through a real client over an
//! in-memory pipe pair, in both eras; and the scopes `scopes = [..]` requires of the callers
//! of a macro-made tool, prompt, resource or template (over a byte stream and over protected
//! HTTP)

use crate::binding::{Client, Context, Server, prompt, resource, tool, tool_router, tools};
use crate::rt;
use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::{ClientConfig, EraMode, Implementation, ProtocolVersion, ServerConfig};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// A forecast
#[derive(Serialize, JsonSchema)]
struct Forecast {
    /// The city
    city: String,
    /// Degrees Celsius
    temperature: f64,
    conditions: String,
}

dialect_fn! {
/// Gets the weather of a city
#[tool(read_only, open_world = false, title = "Weather")]
async fn get_weather(city: String, days: Option<u32>) -> Result<Forecast, String> {
    if city.is_empty() {
        return Err("no city given".into());
    }
    Ok(Forecast {
        city,
        temperature: 21.5 + f64::from(days.unwrap_or(0)),
        conditions: "sunny".into(),
    })
}
}

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    /// The first term
    a: f64,
    /// The second term
    b: f64,
}

dialect_fn! {
/// Adds two numbers
#[tool(idempotent)]
async fn add(cx: Context, args: AddArgs) -> String {
    let _ = cx.task_offered();
    (args.a + args.b).to_string()
}
}

/// Counts to `n`
#[tool(name = "count")]
fn count_to(n: u32) -> Vec<u32> {
    (1..=n).collect()
}

dialect_fn! {
/// Always refuses (a JSON-RPC error, not a tool error)
#[tool(destructive)]
async fn refuse() -> Result<String, ErrorObject> {
    Err(ErrorObject::invalid_params("refused"))
}
}

fn server() -> Server {
    Server::builder(ServerConfig::new(Implementation::new("macros", "1.0")))
        .register(tools![get_weather, add, count_to, refuse])
        .expect("the tools register")
        .build()
}

dialect_fn! {
    async fn client(era: EraMode) -> Client {
        let (read, write) = crate::suite::serve(server());
        let mut config = ClientConfig::new(Implementation::new("macros-test", "1.0"));
        config.era = era;
        aw!(Client::connect(read, write, config)).unwrap()
    }
}

fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

#[test]
fn tool_definitions_are_derived() {
    rt::block_on(async { aw!(definitions()) });
}

dialect_fn! {
async fn definitions() {
    let client = aw!(client(EraMode::Legacy(ProtocolVersion::V2025_11_25)));
    let tools = aw!(client.list_tools()).unwrap();
    let by_name = |name: &str| {
        let tool = tools.iter().find(|t| t.name == name).unwrap();
        serde_json::to_value(tool).unwrap()
    };
    assert_eq!(
        by_name("get_weather"),
        json!({
            "name": "get_weather",
            "title": "Weather",
            "description": "Gets the weather of a city",
            "annotations": {"readOnlyHint": true, "openWorldHint": false},
            "inputSchema": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": ["integer", "null"], "format": "uint32", "minimum": 0}
                },
                "required": ["city"]
            },
            "outputSchema": {
                "description": "A forecast",
                "type": "object",
                "properties": {
                    "city": {"description": "The city", "type": "string"},
                    "temperature": {"description": "Degrees Celsius", "type": "number", "format": "double"},
                    "conditions": {"type": "string"}
                },
                "required": ["city", "temperature", "conditions"]
            }
        })
    );
    let add = by_name("add");
    assert_eq!(add["description"], "Adds two numbers");
    assert_eq!(add["annotations"], json!({"idempotentHint": true}));
    assert_eq!(
        add["inputSchema"]["properties"]["a"],
        json!({"description": "The first term", "type": "number", "format": "double"})
    );
    assert!(add.get("outputSchema").is_none(), "text results have no schema");
    // A list is no object: it goes under `result`.
    let count = by_name("count");
    assert_eq!(count["description"], "Counts to `n`");
    assert_eq!(count["outputSchema"]["required"], json!(["result"]));
    assert_eq!(count["outputSchema"]["properties"]["result"]["type"], "array");
    assert_eq!(by_name("refuse")["annotations"], json!({"destructiveHint": true}));
    aw!(client.close());
}
}

#[test]
fn results_are_converted_in_both_eras() {
    rt::block_on(async { aw!(results()) });
}

dialect_fn! {
async fn results() {
    for era in [EraMode::Legacy(ProtocolVersion::V2025_11_25), EraMode::Modern] {
        let client = aw!(client(era));
        let weather = aw!(client.call_tool("get_weather", args(json!({"city": "Paris", "days": 2})))).unwrap();
        let expected = json!({"city": "Paris", "temperature": 23.5, "conditions": "sunny"});
        assert_eq!(weather.structured_content, Some(expected.clone()), "{era:?}");
        let mirror: Value = serde_json::from_str(weather.content[0].as_text().unwrap()).unwrap();
        assert_eq!(mirror, expected, "the text block mirrors the structured value");
        assert!(!weather.is_error());

        let failed = aw!(client.call_tool("get_weather", args(json!({"city": ""})))).unwrap();
        assert!(failed.is_error(), "{era:?}: Err is a tool error");
        assert_eq!(failed.content[0].as_text(), Some("no city given"));

        let sum = aw!(client.call_tool("add", args(json!({"a": 2, "b": 3.5})))).unwrap();
        assert_eq!(sum.content[0].as_text(), Some("5.5"));
        assert_eq!(sum.structured_content, None);

        let counted = aw!(client.call_tool("count", args(json!({"n": 3})))).unwrap();
        assert_eq!(counted.structured_content, Some(json!({"result": [1, 2, 3]})));

        let refused = aw!(client.call_tool("refuse", Map::new()));
        let message = format!("{:?}", refused.expect_err("a JSON-RPC error"));
        assert!(message.contains("refused"), "{message}");

        // The arguments are checked against the derived schema, precisely.
        let wrong = aw!(client.call_tool("get_weather", args(json!({"city": 42}))));
        let message = match wrong {
            Ok(result) => result.content[0].as_text().unwrap_or_default().to_owned(),
            Err(e) => e.to_string(),
        };
        assert!(message.contains("/city"), "{era:?}: {message}");
        aw!(client.close());
    }
}
}

#[test]
fn the_function_stays_callable() {
    assert_eq!(count_to(2), [1, 2]);
}

/// A counter whose tools share it (`#[tool_router]`)
struct Counter {
    count: std::sync::atomic::AtomicU64,
    step: u64,
}

#[tool_router]
impl Counter {
    /// Adds the step, returns the count
    #[tool(name = "bump")]
    fn bump_by_step(&self) -> u64 {
        self.count
            .fetch_add(self.step, std::sync::atomic::Ordering::SeqCst)
            + self.step
    }

    /// The count, as text
    #[tool(read_only)]
    fn read(&self, prefix: Option<String>) -> String {
        let count = self.count.load(std::sync::atomic::Ordering::SeqCst);
        format!("{}{count}", prefix.unwrap_or_default())
    }

    /// Not a tool: no attribute
    #[allow(dead_code)]
    fn helper(&self) -> u64 {
        self.step
    }
}

/// Asks to greet someone
#[prompt(title = "Greeting")]
fn greeting(name: String, tone: Option<String>) -> String {
    format!(
        "Greet {name} in a {} tone.",
        tone.as_deref().unwrap_or("friendly")
    )
}

/// A fixed text
#[resource("test://static", mime_type = "text/plain")]
fn static_text() -> String {
    "Hello from a macro".into()
}

/// An item by number
#[resource("test://items/{id}", name = "item")]
fn item(id: u32, uri: String) -> Result<String, String> {
    if id == 0 {
        return Err("there is no item 0".into());
    }
    Ok(format!("item {id} at {uri}"))
}

fn everything() -> Server {
    let counter = Counter {
        count: std::sync::atomic::AtomicU64::new(0),
        step: 5,
    };
    Server::builder(ServerConfig::new(Implementation::new("macros-more", "1.0")))
        .register(counter)
        .and_then(|b| b.register(tools![greeting, static_text, item]))
        .expect("everything registers")
        .build()
}

dialect_fn! {
    async fn more(era: EraMode) {
        let (read, write) = crate::suite::serve(everything());
        let mut config = ClientConfig::new(Implementation::new("macros-test", "1.0"));
        config.era = era;
        let client = aw!(Client::connect(read, write, config)).unwrap();

        // The impl block's tools share their value.
        let tools = aw!(client.list_tools()).unwrap();
        let mut names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, ["bump", "read"], "{era:?}: `helper` is no tool");
        for expected in [5, 10] {
            let bumped = aw!(client.call_tool("bump", Map::new())).unwrap();
            assert_eq!(bumped.structured_content, Some(json!({"result": expected})));
        }
        let read = aw!(client.call_tool("read", args(json!({"prefix": "n="})))).unwrap();
        assert_eq!(read.content[0].as_text(), Some("n=10"));

        // The prompt: its arguments from the parameters
        let prompts = aw!(client.list_prompts()).unwrap();
        let prompt = serde_json::to_value(&prompts[0]).unwrap();
        assert_eq!(
            prompt,
            json!({
                "name": "greeting", "title": "Greeting", "description": "Asks to greet someone",
                "arguments": [{"name": "name", "required": true}, {"name": "tone", "required": false}]
            })
        );
        let mut params = mcp_sansio::schema::GetPromptParams::new("greeting");
        params.arguments = Some([("name".to_owned(), "Ada".to_owned())].into());
        let got = aw!(client.get_prompt(params)).unwrap();
        let message = serde_json::to_value(&got.messages[0]).unwrap();
        assert_eq!(message["content"]["text"], "Greet Ada in a friendly tone.");
        let missing = aw!(client.get_prompt(mcp_sansio::schema::GetPromptParams::new("greeting")));
        assert!(format!("{missing:?}").contains("name"), "{missing:?}");

        // The resource and the template
        let resources = aw!(client.list_resources()).unwrap();
        assert_eq!(resources[0].uri, "test://static");
        assert_eq!(resources[0].mime_type.as_deref(), Some("text/plain"));
        let text = aw!(client.read_resource("test://static")).unwrap();
        let text = serde_json::to_value(&text.contents[0]).unwrap();
        assert_eq!(text["text"], "Hello from a macro");
        assert_eq!(text["mimeType"], "text/plain");
        let seven = aw!(client.read_resource("test://items/7")).unwrap();
        let seven = serde_json::to_value(&seven.contents[0]).unwrap();
        assert_eq!(seven["text"], "item 7 at test://items/7");
        let bad = aw!(client.read_resource("test://items/seven"));
        assert!(format!("{bad:?}").contains("does not parse"), "{bad:?}");
        let zero = aw!(client.read_resource("test://items/0"));
        assert!(format!("{zero:?}").contains("there is no item 0"), "{zero:?}");
        aw!(client.close());
    }
}

#[test]
fn tool_routers_prompts_and_resources_in_both_eras() {
    for era in [
        EraMode::Legacy(ProtocolVersion::V2025_11_25),
        EraMode::Modern,
    ] {
        rt::block_on(async { aw!(more(era)) });
    }
}

// ---------------------------------------------------------------------------------------
// Scopes: what `scopes = [..]` requires of a macro-made entry's callers
// ---------------------------------------------------------------------------------------

dialect_fn! {
/// Empties the cache: administrators only; says who asked (the `Context` after the
/// arguments)
#[tool(destructive, scopes = ["mcp:admin"])]
async fn wipe(reason: String, cx: Context) -> String {
    let who = cx.principal().and_then(|p| p.subject.clone());
    let scopes = cx.request().principal().map(|p| p.scopes.join(" "));
    format!(
        "wiped ({reason}) by {} with {}",
        who.unwrap_or_default(),
        scopes.unwrap_or_default()
    )
}
}

dialect_fn! {
/// Who calls: anyone may ask
#[tool(read_only)]
async fn whoami(cx: Context) -> String {
    cx.principal()
        .and_then(|p| p.subject.clone())
        .unwrap_or_else(|| "anonymous".into())
}
}

/// Asks for an audit of a subject: auditors who are administrators only
#[prompt(scopes = ["audit:read", "mcp:admin"])]
fn audit(cx: Context, subject: String) -> String {
    let by = cx.principal().and_then(|p| p.subject.clone());
    format!("Audit {subject} for {}.", by.unwrap_or_default())
}

/// A secret file, by name
#[resource("secret://files/{name}", scopes = ["files:read"])]
fn secret(name: String, cx: Context) -> String {
    let by = cx.principal().and_then(|p| p.subject.clone());
    format!("the secret {name}, read by {}", by.unwrap_or_default())
}

/// The secret files' index
#[resource("secret://index", scopes = ["files:read"], mime_type = "text/plain")]
fn secret_index() -> String {
    "plans.txt".into()
}

/// A console whose tools have their own scopes (`#[tool_router]`)
struct Console;

#[tool_router]
impl Console {
    /// Stops the service
    #[tool(scopes = ["mcp:admin", "ops:write"])]
    fn halt(&self) -> String {
        "halted".into()
    }

    /// The service's state: anyone may read it
    #[tool(read_only)]
    fn state(&self) -> String {
        "running".into()
    }
}

/// A server of the scoped entries
fn scoped() -> Server {
    Server::builder(ServerConfig::new(Implementation::new(
        "macros-scoped",
        "1.0",
    )))
    .register(tools![wipe, whoami, audit, secret, secret_index])
    .and_then(|b| b.register(Console))
    .expect("the scoped entries register")
    .build()
}

/// The scopes the refusal `outcome` names (it must be `-32003 insufficient_scope`)
fn refused<T: std::fmt::Debug>(outcome: Result<T, crate::binding::ClientError>) -> Vec<String> {
    use mcp_sansio::CallError;
    match outcome {
        Err(crate::binding::ClientError::Call(CallError::Remote(e))) => {
            assert_eq!(e.code, mcp_sansio::server::INSUFFICIENT_SCOPE, "{e:?}");
            let data: Value = e.data().expect("data").expect("JSON data");
            assert_eq!(data["error"], "insufficient_scope", "{data}");
            serde_json::from_value(data["requiredScopes"].clone()).expect("a list of scopes")
        }
        other => panic!("expected -32003 insufficient_scope, got {other:?}"),
    }
}

dialect_fn! {
    async fn unauthenticated(era: EraMode) {
        let (read, write) = crate::suite::serve(scoped());
        let mut config = ClientConfig::new(Implementation::new("macros-test", "1.0"));
        config.era = era;
        let client = aw!(Client::connect(read, write, config)).unwrap();

        // Listed (nothing hides them), but refused to a caller without a principal.
        let tools = aw!(client.list_tools()).unwrap();
        let mut names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, ["halt", "state", "whoami", "wipe"], "{era:?}");
        let wiped = aw!(client.call_tool("wipe", args(json!({"reason": "full"}))));
        assert_eq!(refused(wiped), ["mcp:admin"], "{era:?}");
        let halted = aw!(client.call_tool("halt", Map::new()));
        assert_eq!(refused(halted), ["mcp:admin", "ops:write"], "{era:?}");
        let mut params = mcp_sansio::schema::GetPromptParams::new("audit");
        params.arguments = Some([("subject".to_owned(), "billing".to_owned())].into());
        assert_eq!(refused(aw!(client.get_prompt(params))), ["audit:read", "mcp:admin"]);
        let file = aw!(client.read_resource("secret://files/plans"));
        assert_eq!(refused(file), ["files:read"], "{era:?}: the template's scopes");
        let index = aw!(client.read_resource("secret://index"));
        assert_eq!(refused(index), ["files:read"], "{era:?}: the resource's scopes");

        // What requires nothing is served; its handler sees no principal.
        let who = aw!(client.call_tool("whoami", Map::new())).unwrap();
        assert_eq!(who.content[0].as_text(), Some("anonymous"), "{era:?}");
        let state = aw!(client.call_tool("state", Map::new())).unwrap();
        assert_eq!(state.content[0].as_text(), Some("running"), "{era:?}");
        aw!(client.close());
    }
}

#[test]
fn scoped_entries_are_refused_over_a_byte_stream_without_a_principal() {
    for era in [
        EraMode::Legacy(ProtocolVersion::V2025_11_25),
        EraMode::Modern,
    ] {
        rt::block_on(async { aw!(unauthenticated(era)) });
    }
}

#[cfg(feature = "auth")]
mod over_http {
    //! Through a protected HTTP server, the principal comes from the access token: the
    //! scoped entries are refused (`403 insufficient_scope` naming the server's and the
    //! entry's scopes, before the session) to a token without their scopes and served to
    //! one with them, the handlers reading the principal

    use std::net::SocketAddr;
    use std::time::Duration;

    use jsonwebtoken::DecodingKey;
    use mcp_sansio::CallError;
    use mcp_sansio::auth::BearerChallenge;
    use mcp_sansio::http::HttpConfig;
    use mcp_sansio::schema::GetPromptParams;
    use mcp_sansio::{ClientConfig, EraMode, Implementation, ProtocolVersion};
    use serde_json::{Map, Value, json};

    use super::{args, scoped};
    use crate::binding::{Client, ClientError, ClientOptions, Protection, jwt_verifier};
    use crate::rt;
    use crate::suite::support::oauth::{SECRET, free_port, rules, token, validation};
    use crate::suite::support::raw_http::raw;

    const ISSUER: &str = "http://127.0.0.1:1";

    dialect_fn! {
        /// A client of `resource` whose requests carry a token granting `scope`
        async fn client(resource: &str, scope: &str, era: EraMode) -> Client {
            let bearer = format!("Bearer {}", token(ISSUER, resource, scope, 600, 0));
            let options = ClientOptions::default().header("Authorization", bearer);
            let mut config = ClientConfig::new(Implementation::new("macros-http", "1.0"));
            config.era = era;
            aw!(rt::timeout(
                Duration::from_secs(20),
                Client::connect_http(resource, config, options),
            ))
            .expect("connects in time")
            .expect("connects")
        }

        async fn tokens(era: EraMode) {
            let (handle, resource) = aw!(protected());

            // The server's own scope only: the scoped entries are refused at the HTTP level
            // (the status and its challenge: `step_up_challenges`), not by a handler.
            let reader = aw!(client(&resource, "mcp:read", era));
            let who = aw!(reader.call_tool("whoami", Map::new())).unwrap();
            assert_eq!(who.content[0].as_text(), Some("u"), "{era:?}: the token's subject");
            let wiped = aw!(reader.call_tool("wipe", args(json!({"reason": "full"}))));
            refused_by_http(wiped.map(|_| ()), era);
            let halted = aw!(reader.call_tool("halt", Map::new()));
            refused_by_http(halted.map(|_| ()), era);
            let mut params = GetPromptParams::new("audit");
            params.arguments = Some([("subject".to_owned(), "billing".to_owned())].into());
            let audit = aw!(reader.get_prompt(params.clone()));
            refused_by_http(audit.map(|_| ()), era);
            let file = aw!(reader.read_resource("secret://files/plans"));
            refused_by_http(file.map(|_| ()), era);
            let index = aw!(reader.read_resource("secret://index"));
            refused_by_http(index.map(|_| ()), era);
            aw!(reader.close());

            // A token with every scope: served, and the handlers see its principal.
            let all = "mcp:read mcp:admin audit:read files:read ops:write";
            let admin = aw!(client(&resource, all, era));
            let wiped = aw!(admin.call_tool("wipe", args(json!({"reason": "full"})))).unwrap();
            assert_eq!(
                wiped.content[0].as_text(),
                Some(format!("wiped (full) by u with {all}").as_str()),
                "{era:?}"
            );
            let halted = aw!(admin.call_tool("halt", Map::new())).unwrap();
            assert_eq!(halted.content[0].as_text(), Some("halted"), "{era:?}");
            let audit = aw!(admin.get_prompt(params)).unwrap();
            let message = serde_json::to_value(&audit.messages[0]).unwrap();
            assert_eq!(message["content"]["text"], "Audit billing for u.", "{era:?}");
            let file = aw!(admin.read_resource("secret://files/plans")).unwrap();
            let file = serde_json::to_value(&file.contents[0]).unwrap();
            assert_eq!(file["text"], "the secret plans, read by u", "{era:?}");
            let index = aw!(admin.read_resource("secret://index")).unwrap();
            let index = serde_json::to_value(&index.contents[0]).unwrap();
            assert_eq!(index["text"], "plans.txt", "{era:?}");
            aw!(admin.close());

            // One scope short of the tool router's pair is still too few.
            let partial = aw!(client(&resource, "mcp:read mcp:admin", era));
            let halted = aw!(partial.call_tool("halt", Map::new()));
            refused_by_http(halted.map(|_| ()), era);
            aw!(partial.close());
            aw!(handle.shutdown());
        }

        /// A protected server of the scoped entries: its handle and its resource URL
        async fn protected() -> (crate::binding::HttpServerHandle, String) {
            let port = free_port();
            let resource = format!("http://127.0.0.1:{port}/mcp");
            let verifier = jwt_verifier(
                DecodingKey::from_secret(SECRET).unwrap(),
                validation(&resource, ISSUER),
            );
            let handle = aw!(scoped().serve_http_protected(
                SocketAddr::from(([127, 0, 0, 1], port)),
                HttpConfig::default(),
                Protection::new(rules(&resource, ISSUER), verifier),
            ))
            .unwrap();
            (handle, resource)
        }
    }

    /// A call the HTTP server refused before any session saw it: a transport failure, no
    /// JSON-RPC answer
    fn refused_by_http(outcome: Result<(), ClientError>, era: EraMode) {
        match outcome {
            Err(ClientError::Call(CallError::Transport(_))) => {}
            other => panic!("{era:?}: expected the HTTP refusal, got {other:?}"),
        }
    }

    /// The status and `WWW-Authenticate` challenge of `method` with `params`, sent raw in a
    /// 2025 session of a token granting `scope`
    fn raw_call(resource: &str, scope: &str, method: &str, params: Value) -> (u16, Option<String>) {
        let bearer = format!("Bearer {}", token(ISSUER, resource, scope, 600, 0));
        let mut headers = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Authorization", bearer.as_str()),
        ];
        let init = json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "1"}},
        });
        let (status, answer, _) = raw(resource, "POST", &headers, init.to_string().as_bytes());
        assert_eq!(status, 200, "initialize");
        let sid = answer["mcp-session-id"].clone();
        headers.push(("Mcp-Session-Id", sid.as_str()));
        headers.push(("MCP-Protocol-Version", "2025-11-25"));
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let (status, _, _) = raw(
            resource,
            "POST",
            &headers,
            initialized.to_string().as_bytes(),
        );
        assert_eq!(status, 202, "initialized");
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": method, "params": params});
        let (status, answer, _) = raw(resource, "POST", &headers, call.to_string().as_bytes());
        (status, answer.get("www-authenticate").cloned())
    }

    #[test]
    fn step_up_challenges_name_the_scopes_the_attributes_declared() {
        rt::block_on(async {
            let (handle, resource) = aw!(protected());
            aw!(rt::unblock(move || {
                for (method, params, needed) in [
                    (
                        "tools/call",
                        json!({"name": "wipe", "arguments": {"reason": "x"}}),
                        "mcp:read mcp:admin",
                    ),
                    (
                        "tools/call",
                        json!({"name": "halt", "arguments": {}}),
                        "mcp:read mcp:admin ops:write",
                    ),
                    (
                        "prompts/get",
                        json!({"name": "audit", "arguments": {"subject": "x"}}),
                        "mcp:read audit:read mcp:admin",
                    ),
                    (
                        "resources/read",
                        json!({"uri": "secret://files/plans"}),
                        "mcp:read files:read",
                    ),
                    (
                        "resources/read",
                        json!({"uri": "secret://index"}),
                        "mcp:read files:read",
                    ),
                ] {
                    let (status, www) = raw_call(&resource, "mcp:read", method, params.clone());
                    assert_eq!(status, 403, "{method} {params}");
                    let challenge =
                        BearerChallenge::from_headers([www.expect("a challenge").as_str()])
                            .expect("a Bearer challenge");
                    assert_eq!(
                        challenge.error.as_deref(),
                        Some("insufficient_scope"),
                        "{params}"
                    );
                    assert_eq!(challenge.scope.as_deref(), Some(needed), "{params}");
                }
                // What requires nothing, and the scoped entries with their scopes, pass.
                let (status, _) = raw_call(
                    &resource,
                    "mcp:read",
                    "tools/call",
                    json!({"name": "state", "arguments": {}}),
                );
                assert_eq!(status, 200);
                let (status, _) = raw_call(
                    &resource,
                    "mcp:read mcp:admin",
                    "tools/call",
                    json!({"name": "wipe", "arguments": {"reason": "x"}}),
                );
                assert_eq!(status, 200);
            }));
            aw!(handle.shutdown());
        });
    }

    #[test]
    fn scoped_entries_need_a_token_with_their_scopes() {
        for era in [
            EraMode::Legacy(ProtocolVersion::V2025_11_25),
            EraMode::Modern,
        ] {
            rt::block_on(async { aw!(tokens(era)) });
        }
    }
}
