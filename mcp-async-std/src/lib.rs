//! Model Context Protocol clients and servers on async-std and smol
//!
//! `mcp-sansio-async-std` runs [`mcp_sansio`], a sans-IO implementation of the
//! [Model Context Protocol](https://modelcontextprotocol.io), on the runtime-neutral
//! `futures-io` traits and the smol family of crates (`async-io`, `async-net`,
//! `async-process`, `async-channel`, `blocking`), so the same code serves async-std and smol
//! programs, and needs no tokio. One actor task owns each connection's `Session` (no lock
//! around the core), reads and writes the transport, and sleeps until the core's next deadline
//! with `async_io::Timer`; every protocol decision is the core's. So both ends speak every
//! protocol version of both eras: the legacy one (2024-11-05 to 2025-11-25, one `initialize`
//! handshake per connection) and the modern one (2026-07-28: no handshake, `server/discover`,
//! every request carries its version). One server serves both at once.
//!
//! - [`Server`]: tools, resources, resource templates and prompts as async functions, registered
//!   on a [`ServerBuilder`]; served over stdio, any `AsyncRead`/`AsyncWrite` pair, or Streamable
//!   HTTP (HTTP/1.1 framed by this crate over `httparse`, not hyper, so not even the `tokio`
//!   crate is in the tree; the README's "HTTP stack" section says why). Handlers get a
//!   [`Context`] to report progress, log, and ask the client for input; a cancelled request
//!   drops its handler.
//! - [`Client`]: starts a server as a child process (killed on drop, reaped) and talks to it
//!   over stdio, or connects over any byte stream or to a Streamable HTTP endpoint; typed calls
//!   with pagination followed; dropping a call's future cancels the request, a
//!   [`CancelHandle`] cancels it from anywhere.
//!
//! The API is `mcp-sansio-tokio`'s, name for name. The protocol's types (the schema of every
//! message, [`ServerConfig`](mcp_sansio::ServerConfig), [`ClientConfig`](mcp_sansio::ClientConfig),
//! errors) are `mcp-sansio`'s, re-exported here as [`mcp_sansio`].
//!
//! Actors and handlers run on smol's global executor (`smol::spawn`), which drives itself on
//! its own threads: it works the same whether the application runs async-std, smol, or only
//! `futures_lite::future::block_on`. It has one thread unless `SMOL_THREADS` says more, so a
//! handler that computes for long should hand that work to `blocking::unblock`. Channels in
//! this API are `async-channel`'s (the same type as `async_std::channel` and `smol::channel`).
//! **async-std is discontinued upstream** (its authors recommend smol); this crate depends on
//! smol's crates, not on async-std, so it keeps working for both.
//!
//! # A server over stdio
//!
//! An MCP client (a desktop app, an agent) starts the server as a child process and speaks to it
//! on stdin and stdout:
//!
//! ```no_run
//! use mcp_sansio_async_std::Server;
//! use mcp_sansio_async_std::mcp_sansio::schema::{CallToolResult, Tool};
//! use mcp_sansio_async_std::mcp_sansio::{Implementation, ServerConfig};
//! use serde_json::json;
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
//!     let echo = Tool::new("echo", schema.as_object().cloned().unwrap_or_default())
//!         .with_description("Says its text back");
//!     let server = Server::builder(ServerConfig::new(Implementation::new("echo-server", "1.0")))
//!         .tool(echo, |_cx, args| async move {
//!             Ok(CallToolResult::text(args["text"].as_str().unwrap_or_default()))
//!         })?
//!         .build();
//!     // Until the client closes stdin; `async_std::task::block_on` works the same way
//!     smol::block_on(server.serve_stdio());
//!     Ok(())
//! }
//! ```
//!
//! The builder checks each entry (a valid, unique name; an `inputSchema` that compiles) and
//! returns a [`CatalogError`](mcp_sansio::server::CatalogError) otherwise; the catalog then
//! answers the list requests, paginates, and validates arguments before a handler runs (invalid
//! ones are an `isError` result). [`Server::serve`] serves any other byte stream, and one
//! [`Server`] serves as many connections as you like. [`ServerBuilder`] lists every method:
//! resources, templates, prompts, completions, logging.
//!
//! # A client over stdio
//!
//! [`Client::spawn`] starts a server as a child process and waits for the handshake or
//! discovery:
//!
//! ```no_run
//! use mcp_sansio_async_std::Client;
//! use mcp_sansio_async_std::mcp_sansio::{ClientConfig, Implementation};
//! use serde_json::{Map, json};
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     smol::block_on(async {
//!         let command = async_process::Command::new("my-mcp-server");
//!         let config = ClientConfig::new(Implementation::new("my-client", "1.0"));
//!         let client = Client::spawn(command, config).await?;
//!         println!("protocol {}", client.peer().version);
//!         for tool in client.list_tools().await? {
//!             println!("{}: {}", tool.name, tool.description.as_deref().unwrap_or_default());
//!         }
//!         let mut args = Map::new();
//!         args.insert("text".into(), json!("hello"));
//!         let result = client.call_tool("echo", args).await?;
//!         println!("{:?}", result.content[0].as_text());
//!         client.close().await;
//!         Ok(())
//!     })
//! }
//! ```
//!
//! (`async_process::Command` is `smol::process::Command`.)
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
//! stateless requests), and [`Client::connect_http`] connects to an `http://` endpoint (or an
//! `https://` one with the `tls` feature, also on by default) with the same API as over
//! stdio. This runs as is:
//!
//! ```
//! use mcp_sansio_async_std::mcp_sansio::schema::{CallToolResult, Tool};
//! use mcp_sansio_async_std::mcp_sansio::{ClientConfig, Implementation, ServerConfig};
//! use mcp_sansio_async_std::{Client, ClientOptions, Server};
//! use serde_json::Map;
//!
//! # #[cfg(feature = "http")]
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     smol::block_on(async {
//!         let server = Server::builder(ServerConfig::new(Implementation::new("hello", "1.0")))
//!             .tool(Tool::new("hello", Map::new()), |_cx, _args| async {
//!                 Ok(CallToolResult::text("Hello over HTTP"))
//!             })?
//!             .build();
//!         // Port 0: any free port; the handle says which. Runs until shutdown (or drop).
//!         let handle = server.serve_http("127.0.0.1:0".parse()?).await?;
//!         let url = format!("http://{}/mcp", handle.local_addr());
//!
//!         let config = ClientConfig::new(Implementation::new("my-client", "1.0"));
//!         let client = Client::connect_http(&url, config, ClientOptions::default()).await?;
//!         let result = client.call_tool("hello", Map::new()).await?;
//!         assert_eq!(result.content[0].as_text(), Some("Hello over HTTP"));
//!
//!         client.close().await;
//!         handle.shutdown().await;
//!         Ok(())
//!     })
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
//! use mcp_sansio_async_std::mcp_sansio::schema::{
//!     CallToolResult, ElicitParams, ElicitResult, ElicitValue, ElicitationSchema, InputRequest,
//!     InputRequests, InputResponse, LoggingLevel, PrimitiveSchema, StringSchema, Tool,
//! };
//! use mcp_sansio_async_std::mcp_sansio::{
//!     ClientConfig, Implementation, Progress, RequestOptions, ServerConfig,
//! };
//! use mcp_sansio_async_std::{Client, ClientOptions, InputHandler, Server};
//! use serde_json::{Map, json};
//!
//! # #[cfg(feature = "http")]
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
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
//!     smol::block_on(async {
//!         // Over HTTP here; a child process or a byte stream work the same way
//!         let handle = server.serve_http("127.0.0.1:0".parse()?).await?;
//!         let url = format!("http://{}/mcp", handle.local_addr());
//!         let options = ClientOptions::default().input(answer);
//!         let client = Client::connect_http(&url, config, options).await?;
//!
//!         let (progress, reports) = smol::channel::unbounded();
//!         let result = client
//!             .call_tool_with("greet", Map::new(), RequestOptions::default(), progress)
//!             .await?;
//!         assert_eq!(result.content[0].as_text(), Some("Hello, Ada!"));
//!         let first = reports.try_recv()?; // progress arrives before the result
//!         assert_eq!((first.progress, first.total), (1.0, Some(3.0)));
//!         client.close().await;
//!         handle.shutdown().await;
//!         Ok(())
//!     })
//! }
//! # #[cfg(not(feature = "http"))]
//! # fn main() {}
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
//! use mcp_sansio_async_std::mcp_sansio::{Implementation, ServerConfig};
//! use mcp_sansio_async_std::{Server, tool, tools};
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
//! use mcp_sansio_async_std::mcp_sansio::{Implementation, ServerConfig};
//! use mcp_sansio_async_std::{Context, Server, prompt, resource, tool, tools};
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
//! use mcp_sansio_async_std::Server;
//! use mcp_sansio_async_std::mcp_sansio::schema::CallToolResult;
//! use mcp_sansio_async_std::mcp_sansio::{Implementation, ServerConfig};
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
//! use mcp_sansio_async_std::mcp_sansio::schema::{CallToolResult, InputResponse, Tool};
//! use mcp_sansio_async_std::mcp_sansio::{
//!     ClientConfig, EraMode, Implementation, ProtocolVersion, ServerConfig,
//! };
//! use mcp_sansio_async_std::{Client, ClientOptions, Elicited, InputHandler, Server};
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
//! # smol::block_on(async {
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
//! for a task-backed call). [`Client::start`](Client#method.start) sends a request and returns
//! a [`CancelHandle`] with the future of its outcome; a [`CallWatch`] receives its progress and
//! task status. On the server, a cancelled request (by the client, or its connection closing)
//! drops the handler's task, so its future stops at its next `.await`:
//!
//! ```
//! use std::time::Duration;
//!
//! use mcp_sansio_async_std::mcp_sansio::schema::{CallToolResult, Tool};
//! use mcp_sansio_async_std::mcp_sansio::{
//!     CallError, ClientConfig, Implementation, Progress, RequestOptions, ServerConfig,
//! };
//! use mcp_sansio_async_std::{CallWatch, Client, ClientError, ClientOptions, Server};
//! use serde_json::Map;
//!
//! # #[cfg(feature = "http")]
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let server = Server::builder(ServerConfig::new(Implementation::new("slow", "1.0")))
//!         .tool(Tool::new("slow", Map::new()), |cx, _args| async move {
//!             cx.progress(Progress::new(1.0).message("started"));
//!             smol::Timer::after(Duration::from_secs(3600)).await; // dropped here
//!             Ok(CallToolResult::text("finally"))
//!         })?
//!         .build();
//!     smol::block_on(async {
//! #       let handle = server.serve_http("127.0.0.1:0".parse()?).await?;
//! #       let url = format!("http://{}/mcp", handle.local_addr());
//! #       let config = ClientConfig::new(Implementation::new("my-client", "1.0"));
//!         // ... served to `client` as above
//! #       let client = Client::connect_http(&url, config, ClientOptions::default()).await?;
//!         let (progress, reports) = smol::channel::unbounded();
//!         let mut watch = CallWatch::default();
//!         watch.progress = Some(progress);
//!         let params = serde_json::value::to_raw_value(&serde_json::json!({"name": "slow"}))?;
//!         let options = RequestOptions::default().with_progress();
//!         let (cancel, call) = client.start("tools/call", Some(params), options, watch);
//!         let call = smol::spawn(call); // the request is sent when its future first runs
//!         reports.recv().await?; // the handler is running
//!         cancel.cancel(); // from any task or thread
//!         let outcome = call.await;
//!         assert!(matches!(outcome, Err(ClientError::Call(CallError::Cancelled))));
//! #       client.close().await;
//! #       handle.shutdown().await;
//!         Ok(())
//!     })
//! }
//! # #[cfg(not(feature = "http"))]
//! # fn main() {}
//! ```
//!
//! # Testing your server
//!
//! [`Client::in_memory`](Client::in_memory) connects a client to a built [`Server`] in this
//! process: no child process, socket or port, and the same sessions, handlers and bytes as
//! over a real connection (both eras; [`Client::in_memory_with`](Client::in_memory_with)
//! takes the input handler that answers elicitations, and the notification channel). smol and
//! async-std have no paused clock, so handlers sleep and requests time out on the real clock:
//! keep a test's durations short, as here, where a 50 ms timeout meets a tool that sleeps for
//! a minute (the tool's run is dropped when the request is cancelled).
//!
//! ```
//! use std::time::{Duration, Instant};
//!
//! use mcp_sansio_async_std::mcp_sansio::schema::{CallToolResult, Tool};
//! use mcp_sansio_async_std::mcp_sansio::{
//!     CallError, ClientConfig, Implementation, Progress, RequestOptions, ServerConfig,
//! };
//! use mcp_sansio_async_std::{Client, ClientError, Server};
//! use serde_json::{Map, json};
//!
//! fn server() -> Server {
//!     let schema = json!({"type": "object", "properties": {"seconds": {"type": "integer"}}});
//!     Server::builder(ServerConfig::new(Implementation::new("slow-server", "1.0")))
//!         .tool(Tool::new("wait", schema.as_object().cloned().unwrap()), |cx, args| async move {
//!             let seconds = args["seconds"].as_u64().unwrap_or(0);
//!             cx.progress(Progress::new(0.0).total(seconds as f64));
//!             smol::Timer::after(Duration::from_secs(seconds)).await;
//!             Ok(CallToolResult::text(format!("waited {seconds} s")))
//!         })
//!         .unwrap()
//!         .build()
//! }
//!
//! # fn main() {
//! smol::block_on(async {
//!     let config = ClientConfig::new(Implementation::new("test", "1.0"));
//!     let client = Client::in_memory(&server(), config).await.unwrap();
//!
//!     let (progress, reports) = smol::channel::unbounded();
//!     let args = json!({"seconds": 0}).as_object().cloned().unwrap();
//!     let result = client
//!         .call_tool_with("wait", args, RequestOptions::default(), progress)
//!         .await
//!         .unwrap();
//!     assert_eq!(result.content[0].as_text(), Some("waited 0 s"));
//!     assert_eq!(reports.try_recv().unwrap().total, Some(0.0));
//!
//!     // A short timeout against a minute-long tool, on the real clock
//!     let start = Instant::now();
//!     let (progress, _reports) = smol::channel::unbounded();
//!     let args = json!({"seconds": 60}).as_object().cloned().unwrap();
//!     let options = RequestOptions::default().timeout(Duration::from_millis(50));
//!     let outcome = client.call_tool_with("wait", args, options, progress).await;
//!     assert!(matches!(outcome, Err(ClientError::Call(CallError::TimedOut))));
//!     assert!(start.elapsed() < Duration::from_secs(10));
//! });
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
//! token refresh, scope step-up, DPoP) is `mcp_sansio::auth`'s, and this crate performs its
//! HTTP requests.
//!
//! ```no_run
//! # #[cfg(feature = "auth")]
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # smol::block_on(async {
//! use mcp_sansio_async_std::mcp_sansio::auth::OAuthConfig;
//! use mcp_sansio_async_std::mcp_sansio::{ClientConfig, Implementation};
//! use mcp_sansio_async_std::{Client, ClientOptions, OAuthOptions, headless_user_agent};
//!
//! let redirect = "http://127.0.0.1:8765/callback";
//! let oauth = OAuthOptions::new(OAuthConfig::new(redirect), headless_user_agent(redirect));
//! let config = ClientConfig::new(Implementation::new("my-client", "1.0"));
//! let options = ClientOptions::default().auth(oauth);
//! let client = Client::connect_http("http://127.0.0.1:3001/mcp", config, options).await?;
//! # let _ = client;
//! # Ok(())
//! # })
//! # }
//! # #[cfg(not(feature = "auth"))]
//! # fn main() {}
//! ```
//!
//! A server becomes an OAuth protected resource with
//! `Server::serve_http_protected(addr, config, Protection::new(rules, verifier))`: it serves
//! the Protected Resource Metadata and answers requests without a valid token 401 or 403
//! before any MCP processing; `jwt_verifier` checks JWT bearer tokens.
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
//! | `http` | on | Streamable HTTP: [`Client::connect_http`], [`Server::serve_http`], `serve_http_with`, [`HttpServerHandle`] |
//! | `tls` | on | HTTPS: `https://` URLs for [`Client::connect_http`] (`futures-rustls` over `async-net`, no tokio; the platform's roots, `SSL_CERT_FILE` / `SSL_CERT_DIR`, and [`HttpOptions::root_certificates`]; the server's certificate and name always verified), [`Server::serve_https`] / `serve_https_with` with a [`TlsIdentity`] (`futures-rustls`; the handshake within `header_read_timeout`); rustls on ring; implies `http`. Without it an `https://` URL is refused ("https:// needs the `tls` feature") |
//! | `auth` | off | OAuth 2.1 for HTTP clients (`ClientOptions::auth`, `OAuthOptions`, `headless_user_agent`, `JwtSigner`, `DpopKey`) and protected servers (`Server::serve_http_protected`, `Protection`, `jwt_verifier`); implies `http` |
//! | `schemars` | on | [`ServerBuilder::typed_tool`](ServerBuilder#method.typed_tool): tools whose arguments are a Rust type |
//!
//! Without `http`: stdio, child processes and byte streams only
//! (`default-features = false, features = ["schemars"]`).
//!
//! # Examples
//!
//! In the crate's `examples/` directory of the repository:
//!
//! - `smol-hello.rs`: a server on Streamable HTTP and a client that lists and calls its tool,
//!   on smol (`cargo run -p mcp-sansio-async-std --example smol-hello`);
//! - `everything-server-async-std/`: a server with a few of everything, the same command line
//!   as `mcp-sansio-tokio`'s (stdio; `-- --http 127.0.0.1:3000`; `--conformance` for the
//!   fixtures of the official conformance suite, which it passes).
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "auth")]
pub mod auth;
pub mod client;
/// A server's Streamable HTTP endpoint, for any HTTP stack: hand it a request whose body
/// was read, write the [`Response`](endpoint::Response) it gives (whole, or a
/// [`BodyStream`](endpoint::BodyStream) of pieces to write and flush as they come; dropping
/// the stream tells the server the client went away)
///
/// [`Server::http_endpoint`] makes one; [`Server::serve_http`] drives the same entry point
/// with the binding's own HTTP/1.1. The `endpoint-async-h1` example serves it with async-h1.
#[cfg(feature = "http")]
pub mod endpoint;
#[cfg(feature = "http")]
mod h1;
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
pub use mcp_sansio_macros::prompt_async_std as prompt;
/// `#[resource("uri")]`: a function as a resource, or a template whose variables are its
/// parameters
#[cfg(feature = "macros")]
pub use mcp_sansio_macros::resource_async_std as resource;
/// `#[tool]`: a function as a typed tool (see the crate's docs, "Typed tools")
#[cfg(feature = "macros")]
pub use mcp_sansio_macros::tool_async_std as tool;
/// `#[tool_router]`: the `#[tool]` methods of an impl block, registered with a value
#[cfg(feature = "macros")]
pub use mcp_sansio_macros::tool_router_async_std as tool_router;
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
/// async-std and smol as the runtime layer sees it: the type that implements
/// [`Runtime`](mcp_sansio_runtime::Runtime) and [`RuntimeIo`](mcp_sansio_runtime::RuntimeIo)
pub use runtime::AsyncStd;
pub use runtime::ClientOptions;
pub use server::{Context, Server, ServerBuilder};

/// The README (for crates.io), whose example (on Streamable HTTP) runs as a doc test too
#[cfg(all(doctest, feature = "http"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
