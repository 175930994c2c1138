//! Model Context Protocol clients and servers on tokio
//!
//! `mcp-sansio-tokio` runs [`mcp_sansio`], a sans-IO implementation of the
//! [Model Context Protocol](https://modelcontextprotocol.io), on tokio. One actor task owns each
//! connection's `Session` (no lock around the core), reads and writes the transport, and sleeps
//! until the core's next deadline; every protocol decision is the core's. So both ends speak
//! every protocol version of both eras: the legacy one (2024-11-05 to 2025-11-25, one
//! `initialize` handshake per connection) and the modern one (2026-07-28: no handshake,
//! `server/discover`, every request carries its version). One server serves both at once.
//!
//! - [`Server`]: tools, resources, resource templates and prompts as async functions, registered
//!   on a [`ServerBuilder`]; served over stdio, any `AsyncRead`/`AsyncWrite` pair, or Streamable
//!   HTTP (hyper). Handlers get a [`Context`] to report progress, log, and ask the client for
//!   input; a cancelled request aborts its handler.
//! - [`Client`]: starts a server as a child process and talks to it over stdio, or connects over
//!   any byte stream or to a Streamable HTTP endpoint; typed calls with pagination followed;
//!   dropping a call's future cancels the request, a [`CancelHandle`] cancels it from anywhere.
//!
//! The protocol's types (the schema of every message, [`ServerConfig`](mcp_sansio::ServerConfig),
//! [`ClientConfig`](mcp_sansio::ClientConfig), errors) are `mcp-sansio`'s, re-exported here as
//! [`mcp_sansio`] so this crate is the only dependency you need. Time comes from
//! `tokio::time::Instant`, so `#[tokio::test(start_paused = true)]` drives the protocol's
//! timeouts.
//!
//! # A server over stdio
//!
//! An MCP client (a desktop app, an agent) starts the server as a child process and speaks to it
//! on stdin and stdout:
//!
//! ```no_run
//! use mcp_sansio_tokio::Server;
//! use mcp_sansio_tokio::mcp_sansio::schema::{CallToolResult, Tool};
//! use mcp_sansio_tokio::mcp_sansio::{Implementation, ServerConfig};
//! use serde_json::json;
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
//!     let echo = Tool::new("echo", schema.as_object().cloned().unwrap_or_default())
//!         .with_description("Says its text back");
//!     let server = Server::builder(ServerConfig::new(Implementation::new("echo-server", "1.0")))
//!         .tool(echo, |_cx, args| async move {
//!             Ok(CallToolResult::text(args["text"].as_str().unwrap_or_default()))
//!         })?
//!         .build();
//!     server.serve_stdio().await; // until the client closes stdin
//!     Ok(())
//! }
//! ```
//!
//! The builder checks each entry (a valid, unique name; an `inputSchema` that compiles) and
//! returns a [`CatalogError`](mcp_sansio::server::CatalogError) otherwise; the catalog then
//! answers the list requests, paginates, and validates arguments before a handler runs (invalid
//! ones are an `isError` result). [`Server::serve`] serves any other byte stream (a socket's
//! halves, a `tokio::io::duplex`), and one [`Server`] serves as many connections as you like.
//! [`ServerBuilder`] lists every method: resources, templates, prompts, completions, logging.
//!
//! # A client over stdio
//!
//! [`Client::spawn`] starts a server as a child process (killed when the last clone of the
//! client goes) and waits for the handshake or discovery:
//!
//! ```no_run
//! use mcp_sansio_tokio::Client;
//! use mcp_sansio_tokio::mcp_sansio::{ClientConfig, Implementation};
//! use serde_json::{Map, json};
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let config = ClientConfig::new(Implementation::new("my-client", "1.0"));
//!     let client = Client::spawn(tokio::process::Command::new("my-mcp-server"), config).await?;
//!     println!("protocol {}", client.peer().version);
//!     for tool in client.list_tools().await? {
//!         println!("{}: {}", tool.name, tool.description.as_deref().unwrap_or_default());
//!     }
//!     let mut args = Map::new();
//!     args.insert("text".into(), json!("hello"));
//!     let result = client.call_tool("echo", args).await?;
//!     println!("{:?}", result.content[0].as_text());
//!     client.close().await;
//!     Ok(())
//! }
//! ```
//!
//! [`ClientConfig::era`](mcp_sansio::ClientConfig::era) picks the era:
//! [`EraMode::Auto`](mcp_sansio::EraMode::Auto) (the default: probe `server/discover`, fall back
//! to `initialize`), `Modern`, or `Legacy(version)`. [`Client::connect`] speaks over any byte
//! stream; [`Client::connect_with`] and [`Client::spawn_with`] take [`ClientOptions`]: an
//! [`InputHandler`] that answers the server's elicitation, sampling and roots requests, a
//! channel for its notifications (log messages, list changes, resource updates), and a channel
//! for a child's stderr lines. `Client` derefs to the typed calls: `list_tools`, `call_tool`,
//! `call_tool_with` (progress), `list_resources`, `read_resource`, `list_prompts`,
//! `get_prompt`, `complete`, `request` (any typed method), `request_raw`, `start` and `notify`.
//!
//! # Streamable HTTP
//!
//! With the `http` feature (on by default), [`Server::serve_http`] serves Streamable HTTP at any
//! path of an address, both wires on one URL (2025 sessions with their event streams, 2026
//! stateless requests), and [`Client::connect_http`] connects to an `http://` endpoint with the
//! same API as over stdio. This runs as is:
//!
//! ```
//! use mcp_sansio_tokio::mcp_sansio::schema::{CallToolResult, Tool};
//! use mcp_sansio_tokio::mcp_sansio::{ClientConfig, Implementation, ServerConfig};
//! use mcp_sansio_tokio::{Client, ClientOptions, Server};
//! use serde_json::Map;
//!
//! # #[cfg(feature = "http")]
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let server = Server::builder(ServerConfig::new(Implementation::new("hello-server", "1.0")))
//!         .tool(Tool::new("hello", Map::new()), |_cx, _args| async {
//!             Ok(CallToolResult::text("Hello over HTTP"))
//!         })?
//!         .build();
//!     // Port 0: any free port; the handle says which. Runs until shutdown (or the handle drops).
//!     let handle = server.serve_http("127.0.0.1:0".parse()?).await?;
//!     let url = format!("http://{}/mcp", handle.local_addr());
//!
//!     let config = ClientConfig::new(Implementation::new("my-client", "1.0"));
//!     let client = Client::connect_http(&url, config, ClientOptions::default()).await?;
//!     let result = client.call_tool("hello", Map::new()).await?;
//!     assert_eq!(result.content[0].as_text(), Some("Hello over HTTP"));
//!
//!     client.close().await;
//!     handle.shutdown().await;
//!     Ok(())
//! }
//! # #[cfg(not(feature = "http"))]
//! # fn main() {}
//! ```
//!
//! The default [`HttpConfig`](mcp_sansio::http::HttpConfig) lets only `localhost`, `127.0.0.1`
//! and `[::1]` be named by `Host` and `Origin` (DNS rebinding protection);
//! [`Server::serve_http_with`] takes another host policy and the limits. A quiet response gets
//! an SSE keepalive comment every 15 s (`HttpConfig::keepalive`), so proxies keep long calls open
//! and the server learns soon that a client went away, which cancels its request. The client
//! resumes a broken event stream with `Last-Event-ID`.
//!
//! # The connection edge: deadlines and caps
//!
//! Every accepted socket gets `TCP_NODELAY` (so does every socket the HTTP client connects),
//! and a response's head goes out with its first body bytes in one write. The server
//! enforces these [`HttpConfig`](mcp_sansio::http::HttpConfig) fields (defaults in
//! brackets; set them on the config given to [`Server::serve_http_with`]):
//!
//! | field | default | what happens |
//! |---|---|---|
//! | `header_read_timeout` | 10 s | a request head not complete this long after the accept (or after a later request's first byte) gets 408 and the connection closes |
//! | `body_read_timeout` | 30 s | a body not complete this long after its head gets 408 and the connection closes |
//! | `keep_alive_timeout` | 60 s | a kept-alive connection with no request for this long is closed |
//! | `max_connections` | 1024 | connections open at once; the next client waits in the listener's backlog until one closes |
//! | `accept_backoff` | 100 ms | the accept loop's pause when accepting fails for lack of file descriptors (`EMFILE`, `ENFILE`) or memory, instead of spinning |
//! | `max_body_size` | 4 MiB | a larger body gets 413 |
//! | `max_unwritten` | 1 MiB | an event stream whose client stopped reading is dropped (its connection closes; 2026: its call is cancelled) |
//!
//! Header hygiene is the core's: a request with no `Host` field or two, or a header value that is
//! not UTF-8, gets 400 with a JSON-RPC error naming the problem.
//!
//! How the server shares itself out (the core's rules, so every binding behaves the same;
//! each is an [`HttpConfig`](mcp_sansio::http::HttpConfig) field):
//!
//! | field | default | past it |
//! |---|---|---|
//! | `max_in_flight_per_connection` | 128 | 429 + `Retry-After` |
//! | `max_in_flight_per_peer` (one IPv4 address or IPv6 /64) | 1024 | 429 + `Retry-After` |
//! | `max_in_flight_per_principal` (one token subject and client id, protected servers) | 1024 | 429 + `Retry-After` |
//! | `max_in_flight` (the whole endpoint, both wires) | 4096 | 503 + `Retry-After` |
//! | `retry_after` | 1 s | the `Retry-After` value |
//! | `max_sessions` (2025 wire) | 1024 | the least recently used idle session is closed for the new client; 503 + `Retry-After` only when every session is busy |
//! | `idle_timeout` (2025 wire) | 30 min | the session is closed |
//!
//! A request is in progress from its POST until its answer is queued, the client cancels it
//! (2026: closes the response; 2025: `notifications/cancelled`) or its session ends; a 2025
//! session is busy (never evicted) while a request of it is in progress or a response of it
//! is open. Clients behind one proxy share its address's cap. On a protected server each
//! 2025 session belongs to the principal (token subject and client id) that created it: a
//! request for it with another user's valid token gets 404, like an unknown session.
//!
//! Several processes behind one load balancer: give each a name with
//! [`HttpConfig::with_node`](mcp_sansio::http::HttpConfig::with_node) (its 2025-wire session
//! ids are then `<node>.<hex>`, for a proxy's sticky routing, as in the repository's
//! `deploy/nginx/mcp.conf`) and one shared
//! [`ServerConfig::state_key`](mcp_sansio::ServerConfig::state_key).
//!
//! # Handlers and their Context
//!
//! Every handler gets a [`Context`] for its request, with the same code in both eras:
//!
//! - `cx.progress(Progress::new(done).total(all))` reports progress if the client asked for it
//!   (a no-op otherwise);
//! - `cx.log(level, data)` sends a log message if it passes the client's filter: the
//!   connection's `logging/setLevel` on legacy sessions (`info` until set; declare the
//!   capability with [`ServerBuilder::logging`](ServerBuilder#method.logging)), the request's
//!   own `_meta` log level on modern ones (nothing unless it asked);
//! - `cx.ask(requests).await` asks the client for input (elicitation, sampling, roots). Legacy
//!   sessions send live requests and wait for the answers. A modern request is answered with
//!   `input_required` and this run of the handler stops; the client answers and retries, and the
//!   handler runs again, when `ask` returns the answers at once. So ask before doing work that
//!   must not run twice. Modern asks need
//!   [`ServerConfig::state_key`](mcp_sansio::ServerConfig::state_key), the key that seals the
//!   retry's state;
//! - `cx.elicit::<T>(message).await` (feature `schemars`) asks the same way with a form
//!   derived from `T` (a struct of strings, numbers, booleans and unit enums deriving
//!   `Deserialize` and `schemars::JsonSchema`) and returns [`Elicited::Accepted`] with the
//!   values decoded, `Declined` or `Cancelled`; a `T` no form can express is an
//!   [`ElicitError`] naming the field, before anything is sent;
//! - `cx.sample_text(prompt, max_tokens).await` asks the client's model the same way and
//!   returns its answer's text (a [`SampleError`] otherwise);
//! - `cx.run_as_task(options).await` answers with a task now and keeps working (when
//!   `cx.task_offered()`): the client follows it as one slow call.
//!
//! Here a client answers the server's question and watches the progress:
//!
//! ```
//! use std::sync::Arc;
//!
//! use mcp_sansio_tokio::mcp_sansio::schema::{
//!     CallToolResult, ElicitParams, ElicitResult, ElicitValue, ElicitationSchema, InputRequest,
//!     InputRequests, InputResponse, LoggingLevel, PrimitiveSchema, StringSchema, Tool,
//! };
//! use mcp_sansio_tokio::mcp_sansio::{
//!     ClientConfig, Implementation, Progress, RequestOptions, ServerConfig,
//! };
//! use mcp_sansio_tokio::{Client, ClientOptions, InputHandler, Server};
//! use serde_json::{Map, json};
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let mut config = ServerConfig::new(Implementation::new("greeter", "1.0"));
//!     config.state_key = Some([7; 32]); // use 32 random bytes per deployment
//!     let server = Server::builder(config)
//!         .logging()
//!         .tool(Tool::new("greet", Map::new()), |cx, _args| async move {
//!             // Ask first: on a modern session the handler runs again with the answers
//!             let form = ElicitationSchema::new()
//!                 .with_property("name", PrimitiveSchema::String(StringSchema::default()), true);
//!             let mut requests = InputRequests::new();
//!             requests.insert(
//!                 "name".into(),
//!                 InputRequest::Elicit(ElicitParams::form("Who are you?", form)),
//!             );
//!             let answers = cx.ask(requests).await.map_err(|e| e.to_error())?;
//!             let name = match answers.get("name") {
//!                 Some(InputResponse::Elicit(ElicitResult { content: Some(content), .. })) => {
//!                     match content.get("name") {
//!                         Some(ElicitValue::String(name)) => name.clone(),
//!                         _ => "stranger".into(),
//!                     }
//!                 }
//!                 _ => return Ok(CallToolResult::error("no name given")),
//!             };
//!             cx.log(LoggingLevel::Info, json!({"greeting": name}));
//!             for step in 1..=3 {
//!                 cx.progress(Progress::new(f64::from(step)).total(3.0).message("composing"));
//!             }
//!             Ok(CallToolResult::text(format!("Hello, {name}!")))
//!         })?
//!         .build();
//!
//!     // The client's side: answer elicitations, and declare that it can
//!     let answer: InputHandler = Arc::new(|requests: InputRequests| {
//!         Box::pin(async move {
//!             let mut form = std::collections::BTreeMap::new();
//!             form.insert("name".to_owned(), ElicitValue::String("Ada".into()));
//!             let responses = requests
//!                 .into_keys()
//!                 .map(|key| (key, InputResponse::Elicit(ElicitResult::accept(form.clone()))))
//!                 .collect();
//!             Ok(responses)
//!         })
//!     });
//!     let mut config = ClientConfig::new(Implementation::new("my-client", "1.0"));
//!     config.capabilities = json!({"elicitation": {}});
//!
//!     // An in-memory connection (a child process or HTTP work the same way)
//!     let (client_io, server_io) = tokio::io::duplex(64 * 1024);
//!     tokio::spawn(async move {
//!         let (r, w) = tokio::io::split(server_io);
//!         server.serve(r, w).await;
//!     });
//!     let (r, w) = tokio::io::split(client_io);
//!     let client =
//!         Client::connect_with(r, w, config, ClientOptions::default().input(answer)).await?;
//!
//!     let (progress, mut reports) = tokio::sync::mpsc::unbounded_channel();
//!     let result = client
//!         .call_tool_with("greet", Map::new(), RequestOptions::default(), progress)
//!         .await?;
//!     assert_eq!(result.content[0].as_text(), Some("Hello, Ada!"));
//!     let first = reports.try_recv()?; // progress arrives before the result
//!     assert_eq!((first.progress, first.total), (1.0, Some(3.0)));
//!     Ok(())
//! }
//! ```
//!
//! A handler's error is an [`ErrorObject`](mcp_sansio::ErrorObject) (a JSON-RPC error);
//! a tool that fails in the domain sense returns `Ok(CallToolResult::error(..))` instead.
//!
//! # Typed tools
//!
//! With the `macros` feature (on by default), [`#[tool]`](macro@tool) makes a function a tool:
//! its parameters are the arguments (their `inputSchema` derived with `schemars`), its doc
//! comment the description, its result content (`String`, `()`, `CallToolResult`) or a
//! structured value (any `Serialize + JsonSchema` type: its `outputSchema` derived, the value in
//! `structuredContent` with its JSON text mirrored), an `Err` an `isError` result (an
//! `ErrorObject` error a JSON-RPC error). [`#[tool_router]`](macro@tool_router) does the same
//! for the `&self` methods of an `impl` block, [`#[prompt]`](macro@prompt) and
//! [`#[resource]`](macro@resource) for prompts, resources and templates; `register` adds
//! them (your crate needs `serde` and `schemars` for the derives):
//!
//! ```
//! use mcp_sansio_tokio::mcp_sansio::{Implementation, ServerConfig};
//! use mcp_sansio_tokio::{Server, tool, tools};
//!
//! #[derive(serde::Serialize, schemars::JsonSchema)]
//! struct Sum {
//!     /// The total
//!     total: f64,
//! }
//!
//! /// Adds two numbers
//! #[tool(read_only, idempotent)]
//! async fn add(a: f64, b: f64) -> Sum {
//!     Sum { total: a + b }
//! }
//!
//! /// Says hello
//! #[tool]
//! async fn greet(name: String) -> Result<String, String> {
//!     if name.is_empty() {
//!         return Err("no name".into());
//!     }
//!     Ok(format!("Hello, {name}!"))
//! }
//!
//! # #[cfg(feature = "macros")]
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Server::builder(ServerConfig::new(Implementation::new("calculator", "1.0")))
//!     .register(tools![add, greet])?
//!     .build();
//! # let _ = server;
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "macros"))]
//! # fn main() {}
//! ```
//!
//! A tool, prompt, resource or template may require OAuth scopes of its callers
//! (`scopes = [".."]`; registering it calls [`ServerBuilder::require_scopes`](ServerBuilder#method.require_scopes)): a
//! caller whose verified principal lacks one is refused before the function runs, over HTTP
//! with `403` and the `insufficient_scope` step-up challenge, elsewhere with the JSON-RPC
//! error [`INSUFFICIENT_SCOPE`](mcp_sansio::server::INSUFFICIENT_SCOPE) (-32003; a byte
//! stream's caller has no principal, so no scopes, unless the application gave it one). Any
//! handler may take its [`Context`] among its parameters: `cx.principal()` is who called,
//! `cx.request()` the request as received:
//!
//! ```
//! use mcp_sansio_tokio::mcp_sansio::{Implementation, ServerConfig};
//! use mcp_sansio_tokio::{Context, Server, prompt, resource, tool, tools};
//!
//! /// Empties the cache
//! #[tool(destructive, scopes = ["mcp:admin"])]
//! async fn wipe(cx: Context) -> String {
//!     let who = cx.principal().and_then(|p| p.subject.clone());
//!     format!("wiped by {}", who.unwrap_or_default())
//! }
//!
//! /// Asks for a review of some code
//! #[prompt(scopes = ["prompts:read", "code:read"])]
//! fn review(code: String) -> String {
//!     format!("Review this code:\n{code}")
//! }
//!
//! /// A note, by number
//! #[resource("notes://{id}", scopes = ["notes:read"])]
//! fn note(id: u32) -> String {
//!     format!("note {id}")
//! }
//!
//! # #[cfg(feature = "macros")]
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Server::builder(ServerConfig::new(Implementation::new("notes", "1.0")))
//!     .register(tools![wipe, review, note])?
//!     .build();
//! # let _ = server;
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "macros"))]
//! # fn main() {}
//! ```
//!
//! The builder form below is the escape hatch (a schema known only at run time, a handler
//! that is a closure).
//!
//! With the `schemars` feature (on by default),
//! [`ServerBuilder::typed_tool`](ServerBuilder#method.typed_tool) derives a tool's `inputSchema`
//! from a Rust type and hands the handler the decoded value (your crate needs `serde` and
//! `schemars` for the derives):
//!
//! ```
//! use mcp_sansio_tokio::Server;
//! use mcp_sansio_tokio::mcp_sansio::schema::CallToolResult;
//! use mcp_sansio_tokio::mcp_sansio::{Implementation, ServerConfig};
//!
//! /// What `add` takes
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct AddArgs {
//!     /// The first number
//!     a: f64,
//!     /// The second number
//!     b: f64,
//! }
//!
//! # #[cfg(feature = "schemars")]
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Server::builder(ServerConfig::new(Implementation::new("calculator", "1.0")))
//!     .typed_tool("add", "Adds two numbers", |_cx, args: AddArgs| async move {
//!         Ok(CallToolResult::text((args.a + args.b).to_string()))
//!     })?
//!     .build();
//! # let _ = server;
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "schemars"))]
//! # fn main() {}
//! ```
//!
//! The catalog checks the arguments against the derived schema first, so a call with a
//! missing or mistyped field is an `isError` result and the handler does not run.
//!
//! # Typed input from the user
//!
//! With the `schemars` feature, `cx.elicit::<T>(message).await` asks the user to fill in the
//! form derived from `T` (a flat struct of strings, numbers, booleans and unit enums, and
//! `Vec`s of such enums) and returns [`Elicited::Accepted`] with the values decoded, or
//! `Declined` or `Cancelled`; the same handler works in both eras. A `T` no form can express
//! (a nested struct, a `Vec<String>`, a map) is an [`ElicitError`] naming the field, before
//! anything is sent. `cx.sample_text(prompt, max_tokens).await` asks the client's model the
//! same way and returns its answer's text. Here an in-memory client answers the form:
//!
//! ```
//! use mcp_sansio_tokio::mcp_sansio::schema::{CallToolResult, InputResponse, Tool};
//! use mcp_sansio_tokio::mcp_sansio::{
//!     ClientConfig, EraMode, Implementation, ProtocolVersion, ServerConfig,
//! };
//! use mcp_sansio_tokio::{Client, ClientOptions, Elicited, InputHandler, Server};
//! use serde_json::{Map, json};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Booking {
//!     /// Who is coming
//!     name: String,
//!     /// How many seats
//!     seats: u8,
//!     /// Where to sit
//!     area: Option<Area>,
//! }
//!
//! #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
//! #[serde(rename_all = "lowercase")]
//! enum Area {
//!     Inside,
//!     Terrace,
//! }
//!
//! # #[cfg(feature = "schemars")]
//! # fn main() {
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let server = Server::builder(ServerConfig::new(Implementation::new("tables", "1.0")))
//!     .tool(Tool::new("book", Map::new()), |cx, _args| async move {
//!         Ok(match cx.elicit::<Booking>("Book a table").await? {
//!             Elicited::Accepted(b) => {
//!                 CallToolResult::text(format!("{} x{} {:?}", b.name, b.seats, b.area))
//!             }
//!             _ => CallToolResult::text("Nothing booked."), // declined or dismissed
//!         })
//!     })
//!     .unwrap()
//!     .build();
//!
//! // The client shows the form (its `requestedSchema`) and sends what the user typed
//! let answer: InputHandler = std::sync::Arc::new(|requests| {
//!     Box::pin(async move {
//!         let form = json!({"action": "accept", "content": {"name": "Ada", "seats": 2}});
//!         let form: InputResponse = serde_json::from_value(form).unwrap();
//!         Ok(requests.into_keys().map(|key| (key, form.clone())).collect())
//!     })
//! });
//! for era in [EraMode::Modern, EraMode::Legacy(ProtocolVersion::V2025_11_25)] {
//!     let mut config = ClientConfig::new(Implementation::new("test", "1.0"));
//!     config.era = era;
//!     let options = ClientOptions::default().input(answer.clone());
//!     let client = Client::in_memory_with(&server, config, options).await.unwrap();
//!     let result = client.call_tool("book", Map::new()).await.unwrap();
//!     assert_eq!(result.content[0].as_text(), Some("Ada x2 None"));
//! }
//! # });
//! # }
//! # #[cfg(not(feature = "schemars"))]
//! # fn main() {}
//! ```
//!
//! # Pushing changes
//!
//! A [`Server`] changes what it offers while it serves ([`Server::add_tool`],
//! [`Server::remove_tool`], and likewise `add_resource`, `add_resource_template`,
//! `add_prompt` and their `remove_*`) and tells every connection it serves (stdio, byte
//! streams and every HTTP session, both eras) what changed: the list-changed notifications of
//! a server built with [`list_changed`](ServerBuilder#method.list_changed), and
//! [`Server::notify_resource_updated`] for subscribers of a resource;
//! [`Server::notify_list_changed`] says so by hand.
//!
//! # Cancellation
//!
//! Dropping a call's future cancels the request (`notifications/cancelled`, or `tasks/cancel`
//! for a task-backed call). [`Client::start`](Client#method.start) sends a
//! request and returns a [`CancelHandle`] with the future of its outcome; a [`CallWatch`]
//! receives its progress and task status. On the server, a cancelled request (by the client, or
//! its connection closing) aborts the handler's task, so its future is dropped at its next
//! `.await`:
//!
//! ```
//! use std::time::Duration;
//!
//! use mcp_sansio_tokio::mcp_sansio::schema::{CallToolResult, Tool};
//! use mcp_sansio_tokio::mcp_sansio::{
//!     CallError, ClientConfig, Implementation, Progress, RequestOptions, ServerConfig,
//! };
//! use mcp_sansio_tokio::{CallWatch, Client, ClientError, Server};
//! use serde_json::Map;
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let server = Server::builder(ServerConfig::new(Implementation::new("slow", "1.0")))
//!         .tool(Tool::new("slow", Map::new()), |cx, _args| async move {
//!             cx.progress(Progress::new(1.0).message("started"));
//!             tokio::time::sleep(Duration::from_secs(3600)).await; // aborted here
//!             Ok(CallToolResult::text("finally"))
//!         })?
//!         .build();
//! #   let (client_io, server_io) = tokio::io::duplex(64 * 1024);
//! #   tokio::spawn(async move {
//! #       let (r, w) = tokio::io::split(server_io);
//! #       server.serve(r, w).await;
//! #   });
//! #   let (r, w) = tokio::io::split(client_io);
//! #   let config = ClientConfig::new(Implementation::new("my-client", "1.0"));
//!     // ... served to `client` as above
//! #   let client = Client::connect(r, w, config).await?;
//!     let (progress, mut reports) = tokio::sync::mpsc::unbounded_channel();
//!     let mut watch = CallWatch::default();
//!     watch.progress = Some(progress);
//!     let params = serde_json::value::to_raw_value(&serde_json::json!({"name": "slow"}))?;
//!     let options = RequestOptions::default().with_progress();
//!     let (cancel, call) = client.start("tools/call", Some(params), options, watch);
//!     let call = tokio::spawn(call); // the request is sent when its future first runs
//!     reports.recv().await; // the handler is running
//!     cancel.cancel(); // from any task or thread
//!     let outcome = call.await?;
//!     assert!(matches!(outcome, Err(ClientError::Call(CallError::Cancelled))));
//!     Ok(())
//! }
//! ```
//!
//! # Testing your server
//!
//! [`Client::in_memory`](Client::in_memory) connects a client to a built [`Server`] in this
//! process: no child process, socket or port, and the same sessions, handlers and bytes as
//! over a real connection (both eras; [`Client::in_memory_with`](Client::in_memory_with)
//! takes the input handler that answers elicitations, and the notification channel). Nothing
//! in it reads the wall clock, so under tokio's paused clock (`#[tokio::test(start_paused =
//! true)]`, tokio's `test-util` feature) a handler's sleeps and the client's request timeouts
//! jump ahead whenever every task is idle: a 30-second tool runs in no wall time, and a
//! timeout fires at its deadline, every run.
//!
//! ```
//! use std::time::Duration;
//!
//! use mcp_sansio_tokio::mcp_sansio::schema::{CallToolResult, Tool};
//! use mcp_sansio_tokio::mcp_sansio::{
//!     CallError, ClientConfig, Implementation, Progress, RequestOptions, ServerConfig,
//! };
//! use mcp_sansio_tokio::{Client, ClientError, Server};
//! use serde_json::Map;
//!
//! fn server() -> Server {
//!     Server::builder(ServerConfig::new(Implementation::new("slow-server", "1.0")))
//!         .tool(Tool::new("count", Map::new()), |cx, _args| async move {
//!             for second in 1..=30 {
//!                 tokio::time::sleep(Duration::from_secs(1)).await;
//!                 cx.progress(Progress::new(f64::from(second)).total(30.0));
//!             }
//!             Ok(CallToolResult::text("counted to 30"))
//!         })
//!         .unwrap()
//!         .build()
//! }
//!
//! // In a test: #[tokio::test(start_paused = true)] async fn counts() { .. }
//! # fn main() {
//! # tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true)
//! #     .build().unwrap().block_on(async {
//! let config = ClientConfig::new(Implementation::new("test", "1.0"));
//! let client = Client::in_memory(&server(), config).await.unwrap();
//! let start = tokio::time::Instant::now();
//!
//! // 30 seconds of the tool's time, with its progress, in no wall time
//! let (progress, mut reports) = tokio::sync::mpsc::unbounded_channel();
//! let result = client
//!     .call_tool_with("count", Map::new(), RequestOptions::default(), progress)
//!     .await
//!     .unwrap();
//! assert_eq!(result.content[0].as_text(), Some("counted to 30"));
//! assert_eq!(start.elapsed().as_secs(), 30);
//! assert_eq!(reports.try_recv().unwrap().progress, 1.0);
//!
//! // A 5-second timeout against the same tool fires at 5 seconds exactly
//! let start = tokio::time::Instant::now();
//! let (progress, _reports) = tokio::sync::mpsc::unbounded_channel();
//! let options = RequestOptions::default().timeout(Duration::from_secs(5));
//! let outcome = client.call_tool_with("count", Map::new(), options, progress).await;
//! assert!(matches!(outcome, Err(ClientError::Call(CallError::TimedOut))));
//! assert_eq!(start.elapsed(), Duration::from_secs(5));
//! # });
//! # }
//! ```
//!
//! # Authorization
//!
//! With the `auth` feature (off by default; it implies `http`), an HTTP client authorizes with
//! OAuth 2.1 when the server challenges it:
//! `ClientOptions::default().auth(OAuthOptions::new(config, user_agent))`, where the
//! `mcp_sansio::auth::OAuthConfig` says how to register and which grant to use, and the user
//! agent takes the authorization URL to the redirect (a browser in a
//! desktop app, `headless_user_agent` in tests); the flow itself (discovery, registration, PKCE,
//! token refresh, scope step-up, DPoP) is `mcp_sansio::auth`'s.
//!
//! ```no_run
//! # #[cfg(feature = "auth")]
//! # #[tokio::main]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_sansio_tokio::mcp_sansio::auth::OAuthConfig;
//! use mcp_sansio_tokio::mcp_sansio::{ClientConfig, Implementation};
//! use mcp_sansio_tokio::{Client, ClientOptions, OAuthOptions, headless_user_agent};
//!
//! let redirect = "http://127.0.0.1:8765/callback";
//! let oauth = OAuthOptions::new(OAuthConfig::new(redirect), headless_user_agent(redirect));
//! let config = ClientConfig::new(Implementation::new("my-client", "1.0"));
//! let options = ClientOptions::default().auth(oauth);
//! let client = Client::connect_http("http://127.0.0.1:3001/mcp", config, options).await?;
//! # let _ = client;
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "auth"))]
//! # fn main() {}
//! ```
//!
//! # Connecting to an HTTPS server
//!
//! An `https://` URL is served over TLS (the `tls` feature, on by default): the server's
//! certificate must chain to a root the platform trusts (on Linux the system bundle, or the
//! PEM file or directory `SSL_CERT_FILE` / `SSL_CERT_DIR` name) or one given in
//! [`HttpOptions::root_certificates`]; its name is checked against the URL's host. There is
//! no option to turn verification off. An API key the server issued goes on every request as
//! a header:
//!
//! ```no_run
//! use mcp_sansio::{ClientConfig, Implementation};
//! use mcp_sansio_tokio::{Client, ClientOptions, HttpOptions};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let config = ClientConfig::new(Implementation::new("my-client", "1.0"));
//! let options = ClientOptions::default()
//!     .header("Authorization", "Bearer KEY")
//!     // A private CA, besides the platform's roots (optional)
//!     .http(HttpOptions::default().root_certificates_pem(std::fs::read("ca.pem")?));
//! let client = Client::connect_http("https://mcp.example.com/mcp", config, options).await?;
//! for tool in client.list_tools().await? {
//!     println!("{}", tool.name);
//! }
//! # Ok(())
//! # }
//! ```
//!
//! A certificate that is not trusted, is for another name or has expired fails
//! `connect_http` with a [`ConnectError`] that says so ("TLS: the server's certificate is not
//! trusted (UnknownIssuer) for mcp.example.com:443: ..."). A server serves HTTPS with
//! `Server::serve_https(addr, TlsIdentity::from_pem(&chain_pem, &key_pem)?)`; the TLS
//! handshake counts toward [`HttpConfig::header_read_timeout`](mcp_sansio::http::HttpConfig)
//! and its connection toward `max_connections`.
//!
//! A server becomes an OAuth
//! protected resource with `Server::serve_http_protected(addr, config, Protection::new(rules,
//! verifier))`: it serves the Protected Resource Metadata and answers requests without a valid
//! token 401 or 403 before any MCP processing; `jwt_verifier` checks JWT bearer tokens. See
//! `examples/jwt-protected-server.rs` and `examples/everything-client.rs`.
//!
//! # Logging
//!
//! Connections, HTTP exchanges, sessions and requests are [`tracing`](https://docs.rs/tracing)
//! spans (`mcp.connection`, `mcp.http`, `mcp.session`, `mcp.request`) under targets that
//! start with `mcp_sansio`, with errors and refusals as events at their level; a handler runs
//! inside its request's span. Nothing is printed until the application installs a subscriber (the examples
//! install `tracing-subscriber`'s, which honours `RUST_LOG`, on stderr):
//! `RUST_LOG=mcp_sansio=debug` shows every session and request. No header value or token is
//! logged, and arguments and results only at TRACE. Every span, field and event:
//! [`mcp_sansio_runtime::trace`].
//!
//! # Features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `http` | on | Streamable HTTP: [`Client::connect_http`], [`Server::serve_http`], `serve_http_with`, [`HttpServerHandle`] (hyper) |
//! | `tls` | on | HTTPS: `https://` URLs for [`Client::connect_http`] (the platform's roots, `SSL_CERT_FILE` / `SSL_CERT_DIR`, and [`HttpOptions::root_certificates`]), [`Server::serve_https`] / `serve_https_with` with a [`TlsIdentity`] (rustls on ring, `tokio-rustls`); implies `http`. Without it an `https://` URL is refused ("https:// needs the `tls` feature") |
//! | `auth` | off | OAuth 2.1 for HTTP clients (`ClientOptions::auth`, `OAuthOptions`, `headless_user_agent`, `JwtSigner`, `DpopKey`) and protected servers (`Server::serve_http_protected`, `Protection`, `jwt_verifier`); implies `http` |
//! | `schemars` | on | [`ServerBuilder::typed_tool`](ServerBuilder#method.typed_tool): tools whose arguments are a Rust type |
//!
//! Without `http` the crate needs neither hyper nor an HTTP stack: stdio, child processes and
//! byte streams only (`default-features = false, features = ["schemars"]`).
//!
//! # Examples
//!
//! In the crate's `examples/` directory of the repository:
//!
//! - `everything-server/`: a server with a few of everything (tools with progress, input and
//!   tasks, a resource, a template, a prompt): `cargo run -p mcp-sansio-tokio --example
//!   everything-server` speaks on stdio, `-- --http 127.0.0.1:3000` serves Streamable HTTP,
//!   `-- --https 127.0.0.1:3443 chain.pem key.pem` the same over TLS, and
//!   `--conformance` adds the fixtures of the official conformance suite, which it passes;
//! - `demo.rs`: a client that starts a server as a child process (or connects to an `http://`
//!   or `https://` URL) and walks through a session, printing what happens;
//! - `everything-client.rs` (`auth`): the conformance suite's client, OAuth scenarios included;
//! - `jwt-protected-server.rs` (`auth`): a server that accepts JWT bearer tokens only.
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "auth")]
pub mod auth;
pub mod client;
#[cfg(feature = "http")]
pub mod endpoint;
#[cfg(feature = "http")]
mod http_client;
#[cfg(feature = "http")]
mod http_server;
mod io;
mod runtime;
pub mod server;

#[cfg(feature = "auth")]
pub use auth::{
    DpopKey, JwtSigner, OAuthOptions, Protection, TokenVerifier, UserAgent, VerifiedToken,
    headless_user_agent, jwt_verifier,
};
pub use client::{CallWatch, CancelHandle, Client};
#[cfg(feature = "http")]
pub use endpoint::HttpEndpoint;
#[cfg(feature = "http")]
pub use http_server::HttpServerHandle;
pub use mcp_sansio;
/// `#[prompt]`: a function as a prompt, its parameters the arguments
#[cfg(feature = "macros")]
pub use mcp_sansio_macros::prompt_tokio as prompt;
/// `#[resource("uri")]`: a function as a resource, or a template whose variables are its
/// parameters
#[cfg(feature = "macros")]
pub use mcp_sansio_macros::resource_tokio as resource;
/// `#[tool_router]`: the `#[tool]` methods of an impl block, registered with a value
#[cfg(feature = "macros")]
pub use mcp_sansio_macros::tool_router_tokio as tool_router;
/// `#[tool]`: a function as a typed tool (see the crate's docs, "Typed tools")
#[cfg(feature = "macros")]
pub use mcp_sansio_macros::tool_tokio as tool;
pub use mcp_sansio_runtime::api::*;
/// What `#[tool]`'s code is generated against
#[cfg(feature = "macros")]
#[doc(hidden)]
pub use mcp_sansio_runtime::typed as __macros;

/// Several `#[tool]` functions to register at once: `builder.register(tools![a, b])`
#[cfg(feature = "macros")]
#[macro_export]
macro_rules! tools {
    ($($tool:ident),+ $(,)?) => {
        ($($tool {},)+)
    };
}
pub use runtime::ClientOptions;
/// tokio as the runtime layer sees it: the type that implements
/// [`Runtime`](mcp_sansio_runtime::Runtime) and [`RuntimeIo`](mcp_sansio_runtime::RuntimeIo)
pub use runtime::Tokio;
pub use server::{Context, Server, ServerBuilder};

/// The README (for crates.io), whose examples run as doc tests too
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
