//! The runtime layer of the `mcp-sansio` bindings: one async MCP API, generic over a small
//! `Runtime` trait
//!
//! `mcp-sansio-runtime` is where the async bindings' user API is implemented and documented,
//! once: the [`Client`] with its typed calls, the [`Server`], its
//! [`ServerBuilder`](server::ServerBuilder) and the handler [`Context`](server::Context),
//! [`ClientOptions`](client::ClientOptions), the connection and HTTP actors, the Streamable
//! HTTP endpoint, the task stores and the OAuth pieces. All of it is generic over [`Runtime`]
//! (spawn, a handler run it can stop, one timer, the application's channel type, now), and
//! none of it is protocol logic: every protocol decision is [`mcp_sansio`]'s, the sans-IO core.
//! A binding is a `Runtime` implementation plus its IO ([`RuntimeIo`], and `HttpIo` and
//! `TlsIo` behind the `http` and `tls` features): `mcp-sansio-tokio` and
//! `mcp-sansio-async-std` are exactly that, and name this API for their runtime;
//! `mcp-sansio-blocking` shares the per-connection plumbing ([`peer::Plumbing`]) and keeps its
//! threads.
//!
//! **Users** depend on a binding, not on this crate: the bindings pin it to an exact version
//! and re-export what their users see, and the repository's guide (`guide/`) shows it at work by
//! task. **Binding authors** read on: this page is what a fourth binding needs.
//!
//! # The API, and the names the bindings give it
//!
//! A binding names the generic types for its runtime (`pub type Client =
//! mcp_sansio_runtime::Client<Tokio>;`) and re-exports [`api`] whole, the part that does not
//! depend on the runtime:
//!
//! | a binding's name | here | what it is |
//! |---|---|---|
//! | `Client` | [`Client<R>`](Client) | a connection to one server: `connect`, `connect_with`, `spawn`, `spawn_with`, `in_memory`, `in_memory_with`, `connect_http`; then `list_tools`, `call_tool`, `call_tool_with`, `read_resource`, `get_prompt`, `complete`, `request::<M>`, `request_raw`, `start` (with a [`CancelHandle`](client::CancelHandle) and a [`CallWatch`](client::CallWatch)), `notify`, `with_headers`, `close` |
//! | `ClientOptions` | [`client::ClientOptions<R>`] | the input handler (elicitation, sampling, roots), the notification and stderr channels, HTTP options, OAuth |
//! | `Server`, `ServerBuilder` | [`Server<R>`](Server), [`server::ServerBuilder<R, Server<R>>`](server::ServerBuilder) | tools, resources, templates, prompts, completions, logging, `list_changed`, `tasks`, `require_scopes`, `hide_forbidden`, `task_store`; `serve`, `serve_stdio`, `serve_http*`, `serve_https*`, `http_endpoint`; the built server changes its catalog while it serves (`add_tool`, `remove_tool`, ..., `notify_resource_updated`) |
//! | `Context` | [`server::Context<R>`] | a handler's request: `progress`, `log`, `ask`, `elicit::<T>`, `sample_text`, `task_offered`, `run_as_task`, `request()` ([`RequestInfo`](request::RequestInfo)), `principal()` |
//! | `ClientError`, `ConnectError`, `InputHandler`, `Elicited`, `StartedTask`, `TaskStatusUpdate`, `RequestInfo`, `Principal`, `HttpOptions`, `TlsIdentity`, `store::*`, ... | [`api`] | the runtime-independent rest, re-exported whole |
//! | `HttpServerHandle`, `HttpEndpoint` | the binding's own (`HttpIo`'s associated types) | a running HTTP server; the endpoint to mount in an app (tokio's is a `tower::Service`) |
//!
//! The typed calls are sans-IO exchanges ([`calls`]): each says which request to send and reads
//! what comes back, so a `Client` only moves bytes. Here `call_tool`, answered by hand:
//!
//! ```
//! use mcp_sansio::RequestOptions;
//! use mcp_sansio_runtime::calls::{self, Exchange, Next};
//! use serde_json::value::RawValue;
//!
//! let mut call = calls::call_tool("echo", serde_json::Map::new(), RequestOptions::default());
//! let Next::Send(request) = call.step(None)? else { unreachable!("a call sends first") };
//! assert_eq!(request.method, "tools/call");
//! assert_eq!(request.params.get(), r#"{"name":"echo","arguments":{}}"#);
//!
//! // A binding sends `request` and feeds the result back
//! let result = RawValue::from_string(r#"{"content":[{"type":"text","text":"hi"}]}"#.into())?;
//! let Next::Done(result) = call.step(Some(result))? else { unreachable!("one request") };
//! assert_eq!(result.content[0].as_text(), Some("hi"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The `Runtime` trait
//!
//! [`Runtime`] is all this layer asks of an async runtime, sized like quinn's: `now()` (the
//! core's clock), `spawn` (a task to its end), `spawn_run` and `stop` (a handler run, and
//! stopping it when its request is cancelled: its future is dropped at its next `.await`;
//! `runs_first_step_at_once`, `false` unless `spawn_run` may finish a run before it returns),
//! `timer` and `reset` (one timer per actor, moved to the core's next deadline), and `Sender<T>`
//! with `send` (the channels the application hands in: notifications, progress, task status,
//! stderr lines). The layer's own channels are runtime-neutral ([`chan`]). The two bindings
//! implement it on a unit type:
//!
//! | | tokio (`mcp-tokio/src/runtime.rs`) | async-std and smol (`mcp-async-std/src/runtime.rs`) |
//! |---|---|---|
//! | `now()` | `tokio::time::Instant::now().into_std()`, so paused-time tests drive the protocol's timeouts | `Instant::now()` |
//! | `spawn` | `tokio::spawn(future)` | `smol::spawn(future).detach()` |
//! | `Run`, `spawn_run`, `stop` | `Option<AbortHandle>`: `tokio::spawn(future).abort_handle()`, `run.abort()`; on a current-thread runtime the first poll happens at once, and a run done then is `None` | `smol::Task<()>`: `smol::spawn(future)`, dropped |
//! | `Timer`, `timer`, `reset` | `Pin<Box<Sleep>>`: `sleep_until(now)`, `timer.as_mut().reset(at)` | `async_io::Timer`: `Timer::never()`, `timer.set_at(at)` |
//! | `Sender<T>`, `send` | `tokio::sync::mpsc::UnboundedSender<T>`, `tx.send(v).is_ok()` | `async_channel::Sender<T>`, `tx.try_send(v).is_ok()` |
//!
//! # What IO a binding supplies
//!
//! Beside [`Runtime`], a binding implements for the same unit type:
//!
//! - [`RuntimeIo`]: its byte streams as the layer's (`futures-io`'s [`driver::AsyncRead`] and
//!   [`driver::AsyncWrite`]; `type Io<T>` and `io(stream)`: tokio's binding wraps `tokio::io`
//!   types in a small `Compat`, a `futures-io` runtime names `T` itself), `serve_stdio` (this
//!   process's stdin and stdout; the layer's `stdio` module gives them as pipes an event loop
//!   can drive, on Unix), and child processes (`Command`, `Child`, `ChildIn`, `ChildOut`,
//!   `start_child` with the child killed when its `Child` is dropped, `program`,
//!   `child_exit`). With it, [`Server::serve`], [`Server::serve_stdio`],
//!   [`Client::connect`], [`Client::spawn`] and [`Client::in_memory`] work: the layer's
//!   [`driver`] owns each session in one actor task that reads, feeds the core, drains its
//!   outputs, writes, and sleeps on the `Runtime`'s timer until the core's deadline.
//! - `HttpIo` (feature `http`): its HTTP stack. `serve_http` accepts connections and reads
//!   requests (hyper, or the layer's HTTP/1.1 framing `h1` over the runtime's sockets), within
//!   the deadlines and caps of the core's `HttpConfig`, and hands each request to the layer's
//!   `endpoint`, behind which the `http_server` actor owns every session (a 2026 request
//!   that needs no shared session runs on the connection's own task instead, on a pooled
//!   core `Lane`: the private `lane` module); `http_endpoint`
//!   gives that endpoint in the binding's shape; `connect_http` performs the requests the
//!   core's `ClientTransport` asks for and reports them to the `http_client` actor
//!   (`http_options`, `tunnel` and `net_error` hold the proxy, timeouts and error wording every
//!   binding shares). `TCP_NODELAY`, one write per response piece.
//! - `TlsIo` (feature `tls`): the acceptor of an HTTPS server for a `TlsIdentity`; the `tls`
//!   module builds the rustls configurations.
//!
//! The OAuth pieces (`auth`, feature `auth`: client options, the headless user agent, JWT
//! signing and verification, DPoP keys, the protected server's gate) and the stores need
//! nothing more of a binding.
//!
//! # A fourth binding, in one page
//!
//! A `Runtime` on plain threads (each task a thread, a small `block_on`, a timer thread): with
//! it, this layer's server and client run, in memory, with nothing else. A real binding uses its
//! runtime's tasks and timers, and adds its IO as above (`mcp-tokio/src/io.rs` is tokio's,
//! about 150 lines).
//!
//! ```
//! use std::future::Future;
//! use std::pin::pin;
//! use std::sync::atomic::{AtomicBool, Ordering};
//! use std::sync::{Arc, Condvar, Mutex, mpsc};
//! use std::task::{Context, Poll, Wake, Waker};
//! use std::thread::{self, Thread};
//! use std::time::Instant;
//!
//! use mcp_sansio::schema::{CallToolResult, Tool};
//! use mcp_sansio::{ClientConfig, Implementation, ServerConfig};
//! use mcp_sansio_runtime::client::ClientOptions;
//! use mcp_sansio_runtime::{Runtime, Server};
//!
//! /// Each task a thread of its own
//! struct Threads;
//!
//! struct Unpark(Thread);
//! impl Wake for Unpark {
//!     fn wake(self: Arc<Self>) {
//!         self.0.unpark();
//!     }
//! }
//!
//! /// Polls `future` on this thread until it is done, or until `stop` is set
//! fn block_on<F: Future>(future: F, stop: &AtomicBool) -> Option<F::Output> {
//!     let mut future = pin!(future);
//!     let waker = Waker::from(Arc::new(Unpark(thread::current())));
//!     let mut cx = Context::from_waker(&waker);
//!     while !stop.load(Ordering::Acquire) {
//!         if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
//!             return Some(out);
//!         }
//!         thread::park();
//!     }
//!     None // stopped: the future is dropped here
//! }
//!
//! /// A timer's deadline and the task to wake at it, and the condition its thread waits on
//! type Shared = Arc<(Mutex<(Option<Instant>, Option<Waker>)>, Condvar)>;
//!
//! /// One timer: a thread that wakes the actor when the deadline comes
//! struct Timer(Shared);
//!
//! impl Future for Timer {
//!     type Output = ();
//!     fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
//!         let mut state = self.0.0.lock().unwrap();
//!         match state.0 {
//!             Some(at) if at <= Instant::now() => Poll::Ready(()),
//!             _ => {
//!                 state.1 = Some(cx.waker().clone());
//!                 Poll::Pending
//!             }
//!         }
//!     }
//! }
//!
//! impl Runtime for Threads {
//!     type Run = (Arc<AtomicBool>, Thread);
//!     type Timer = Timer;
//!     type Sender<T: Send + 'static> = mpsc::Sender<T>;
//!
//!     fn now() -> Instant {
//!         Instant::now()
//!     }
//!     fn spawn<F: Future<Output = ()> + Send + 'static>(future: F) {
//!         thread::spawn(move || block_on(future, &AtomicBool::new(false)));
//!     }
//!     fn spawn_run<F: Future<Output = ()> + Send + 'static>(future: F) -> Self::Run {
//!         let stop = Arc::new(AtomicBool::new(false));
//!         let flag = Arc::clone(&stop);
//!         let run = thread::spawn(move || block_on(future, &flag));
//!         (stop, run.thread().clone())
//!     }
//!     fn stop((stop, thread): Self::Run) {
//!         stop.store(true, Ordering::Release);
//!         thread.unpark();
//!     }
//!     fn timer() -> Timer {
//!         let shared: Shared = Arc::new((Mutex::new((None, None)), Condvar::new()));
//!         let watch = Arc::downgrade(&shared);
//!         thread::spawn(move || {
//!             // Sleeps until the deadline (or a new one), wakes the actor; ends with the timer
//!             while let Some(shared) = watch.upgrade() {
//!                 let (lock, moved) = &*shared;
//!                 let state = lock.lock().unwrap();
//!                 let wait = state.0.map(|at| at.saturating_duration_since(Instant::now()));
//!                 let mut state = match wait {
//!                     Some(wait) if wait.is_zero() => state,
//!                     Some(wait) => moved.wait_timeout(state, wait).unwrap().0,
//!                     None => moved.wait_timeout(state, std::time::Duration::from_millis(100)).unwrap().0,
//!                 };
//!                 if state.0.is_some_and(|at| at <= Instant::now()) {
//!                     if let Some(waker) = state.1.take() {
//!                         waker.wake();
//!                     }
//!                 }
//!             }
//!         });
//!         Timer(shared)
//!     }
//!     fn reset(timer: &mut Timer, at: Instant) {
//!         timer.0.0.lock().unwrap().0 = Some(at);
//!         timer.0.1.notify_one();
//!     }
//!     fn send<T: Send + 'static>(tx: &mpsc::Sender<T>, value: T) -> bool {
//!         tx.send(value).is_ok()
//!     }
//! }
//!
//! // The layer's server and client on that runtime: a binding's `Server` and `Client`
//! let server = Server::<Threads>::builder(ServerConfig::new(Implementation::new("threads", "1.0")))
//!     .tool(Tool::new("hello", serde_json::Map::new()), |_cx, _args| async {
//!         Ok(CallToolResult::text("hello from a thread"))
//!     })?
//!     .build();
//! let answer = block_on(
//!     async {
//!         let config = ClientConfig::new(Implementation::new("me", "1.0"));
//!         let options = ClientOptions::<Threads>::default();
//!         // `Client::in_memory(&server, config)` once the runtime also implements `RuntimeIo`
//!         let client = mcp_sansio_runtime::driver::in_memory(server.core(), config, &options).await?;
//!         let result = client.call_tool("hello", serde_json::Map::new()).await?;
//!         client.close().await;
//!         Ok::<_, Box<dyn std::error::Error>>(result)
//!     },
//!     &AtomicBool::new(false),
//! );
//! let result = answer.expect("not stopped")?;
//! assert_eq!(result.content[0].as_text(), Some("hello from a thread"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What is here
//!
//! - [`runtime`] and [`io`]: the [`Runtime`] trait and the IO traits a binding implements;
//! - [`api`]: what every binding re-exports whole;
//! - [`Client`] (its typed calls as sans-IO exchanges in [`calls`]; its options and errors in
//!   [`client`]) and [`Server`] (built by [`server::ServerBuilder`]);
//! - [`server`]: the [`Registry`](server::Registry) every binding's builder fills (the blocking
//!   one's too), the async builder, handler `Context` and dispatcher, `Live`, the catalog a
//!   server changes while it serves, and [`ServerCore`](server::ServerCore), what a server is
//!   to a binding's IO (`RuntimeIo::serve_stdio` and `HttpIo::serve_http` take it); [`push`]: the hub of a server's live connections that its
//!   changes go through;
//! - [`request`]: what a handler reads of its request; [`elicit`] and [`sample`]: typed input
//!   from the user and the text of a sampling;
//! - [`peer`]: the per-connection state every binding's actor runs (calls in flight, handler
//!   runs, the messages between them and the actor), shared with the blocking binding through
//!   [`peer::Plumbing`];
//! - [`driver`]: the actor that owns one session over a byte stream; [`memory`]: in-memory
//!   connections; [`chan`]: the layer's runtime-neutral channels; `stdio` (Unix);
//! - [`store`] and `redis_store` (feature `redis`): the task stores; [`trace`]: every span and
//!   event the bindings emit through `tracing` (names, targets, levels, fields); [`otel`]:
//!   distributed traces across the call (features `otel` and `otlp`: the W3C trace context
//!   in a request's `_meta`, an OTLP/HTTP exporter); [`meter`]: the metrics every binding
//!   records (feature `metrics`); [`middleware`]: the server and client chains around every
//!   request, written once (the blocking binding runs the same steps on its threads);
//! - `http`, `http_client`, `http_server`, `endpoint`, `h1`, `http_options`, `tunnel`,
//!   `net_error` (feature `http`): the Streamable HTTP actors, the endpoint, the HTTP/1.1
//!   framing the async-std and blocking bindings use, and the client plumbing; `tls`
//!   (feature `tls`); `auth` (feature `auth`); `typed` (feature `schemars`): what the attribute
//!   macros generate code against.
//!
//! The API follows the bindings' needs, and the bindings pin this crate to an exact version:
//! depend on a binding for a stable surface.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

mod alarm;
pub mod api;
mod arguments;
#[cfg(feature = "auth")]
pub mod auth;
pub mod calls;
pub mod chan;
pub mod client;
mod connecting;
pub mod driver;
pub mod elicit;
#[cfg(feature = "http")]
pub mod endpoint;
mod error;
#[cfg(feature = "http")]
pub mod h1;
#[cfg(feature = "http")]
pub mod http;
#[cfg(feature = "http")]
pub mod http_client;
#[cfg(feature = "http")]
pub mod http_options;
#[cfg(feature = "http")]
pub mod http_server;
pub mod io;
#[cfg(feature = "http")]
pub mod lane;
pub mod memory;
pub mod meter;
pub mod middleware;
#[cfg(feature = "http")]
pub mod net_error;
pub mod otel;
pub mod peer;
pub mod push;
#[cfg(feature = "redis")]
pub mod redis_store;
pub mod request;
pub mod runtime;
pub mod sample;
pub mod server;
mod serving;
#[cfg(unix)]
pub mod stdio;
pub mod store;
#[cfg(feature = "tls")]
pub mod tls;
pub mod trace;
#[cfg(feature = "http")]
pub mod tunnel;
#[cfg(feature = "schemars")]
pub mod typed;

pub use client::Client;
#[cfg(feature = "http")]
pub use io::HttpIo;
#[cfg(feature = "tls")]
pub use io::TlsIo;
pub use io::{RuntimeIo, StartedChild};
pub use runtime::Runtime;
pub use serving::Server;

/// The README (for crates.io), whose examples run as doc tests too
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
