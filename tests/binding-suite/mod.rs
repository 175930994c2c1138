//! The binding suite: the glue tests every binding runs, written once against
//! `crate::binding` (the binding crate under test, `use mcp_sansio_tokio as binding;`),
//! `crate::rt` (its runtime: `block_on`, `spawn`, `sleep`, `timeout`, `unblock`, channels,
//! an in-memory pipe pair, the child-process `Command`) and `crate::dialect` (how its
//! handlers and calls are spelled: `dialect/asynchronous.rs` for the async bindings, handlers
//! `async` and calls awaited; `dialect/blocking.rs` for mcp-blocking, handlers plain closures
//! on worker threads and calls blocking). Each binding's `tests/suite.rs` declares `binding`
//! and `rt`, includes its dialect with `#[macro_use]` and this folder with `#[path]`;
//! DESIGN.md section 4: "one shared suite of binding tests runs per binding".
//!
//! The dialect's words: `aw!(call)` is a call's outcome (`call.await`, or the blocking call);
//! `handler!([shared, ..]; |cx, args| { body })` a handler; `nap!(cx, duration)` a handler's
//! sleep that a cancellation ends (an async handler is dropped, a blocking one returns);
//! `only_async! { .. }` items the blocking binding has no counterpart for; `dialect::start`
//! and `dialect::call_tool_with` a call in the background, which `abort` cancels;
//! `dialect::input_handler` a client's input handler.
//!
//! `support/` needs no runtime, so the blocking binding's own tests include it too. Tests
//! that exercise one binding only (tokio's paused clock, the blocking pool and OS pipes, the
//! README examples) stay in that binding's `tests/`.

pub(crate) mod support;

mod big;
mod child;
pub(crate) mod duplex;
#[cfg(feature = "schemars")]
mod elicit;
#[cfg(feature = "http")]
mod headers;
#[cfg(feature = "http")]
mod hostile;
#[cfg(feature = "http")]
mod http;
#[cfg(feature = "tls")]
mod https;
mod identity;
mod in_memory;
mod input;
mod logging;
#[cfg(feature = "macros")]
mod macros;
#[cfg(feature = "metrics")]
mod metered;
#[cfg(feature = "auth")]
mod protected;
#[cfg(feature = "http")]
mod proxy;
mod push;
mod sample;
#[cfg(feature = "http")]
mod scale_out;
#[cfg(feature = "http")]
mod shares;
mod tasks;
mod traced;
#[cfg(feature = "schemars")]
mod typed;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use mcp_sansio::Progress;
use mcp_sansio::schema::{CallToolResult, Tool};
use serde_json::Map;

use crate::binding::ServerBuilder;

/// Sets its flag when dropped: a handler holding one was aborted (an async one dropped, a
/// blocking one returned early on its cancellation) once it is set
pub(crate) struct Flag(pub(crate) Arc<AtomicBool>);

impl Drop for Flag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

dialect_fn! {
    /// Waits (a couple of seconds at most) for `flag` to be set; whether it was
    pub(crate) async fn wait_for(flag: &AtomicBool) -> bool {
        for _ in 0..400 {
            if flag.load(Ordering::SeqCst) {
                return true;
            }
            aw!(crate::rt::sleep(Duration::from_millis(5)));
        }
        false
    }
}

/// The client's ends of an in-memory pipe pair whose other ends a spawned task serves
/// `server` on
pub(crate) fn serve(server: crate::binding::Server) -> (crate::rt::Reader, crate::rt::Writer) {
    let (client, (r, w)) = crate::rt::pipes();
    crate::rt::spawn(async move { aw!(server.serve(r, w)) }).detach();
    client
}

/// Adds `echo`, which answers its `text` (required by its schema)
pub(crate) fn echo_tool(builder: ServerBuilder) -> ServerBuilder {
    builder
        .tool(
            Tool::new("echo", support::echo_schema()),
            handler!(|_cx, args| {
                Ok(CallToolResult::text(
                    args["text"].as_str().unwrap_or_default(),
                ))
            }),
        )
        .unwrap()
}

/// Adds `slow`, which reports three progress steps, then waits an hour, setting `aborted`
/// when it is dropped (cancelled)
pub(crate) fn slow_tool(builder: ServerBuilder, aborted: Arc<AtomicBool>) -> ServerBuilder {
    builder
        .tool(
            Tool::new("slow", Map::new()),
            handler!([aborted]; |cx, _args| {
                let _flag = Flag(Arc::clone(&aborted));
                for i in 1..=3 {
                    cx.progress(Progress::new(f64::from(i)).total(3.0));
                    nap!(cx, Duration::from_millis(10));
                }
                nap!(cx, Duration::from_secs(3600));
                Ok(CallToolResult::text("never"))
            }),
        )
        .unwrap()
}

/// Adds `greet`, which asks for a name with `Context::ask` and greets it, counting its runs
/// in `runs`
pub(crate) fn greet_tool(builder: ServerBuilder, runs: Arc<AtomicUsize>) -> ServerBuilder {
    builder
        .tool(
            Tool::new("greet", Map::new()),
            handler!([runs]; |cx, _args| {
                runs.fetch_add(1, Ordering::SeqCst);
                let answers = aw!(cx.ask(support::name_request())).map_err(|e| e.to_error())?;
                Ok(support::greeting(&answers))
            }),
        )
        .unwrap()
}
