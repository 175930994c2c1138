//! The binding suite: the glue tests every async binding runs, written once against
//! `crate::binding` (the binding crate under test, `use mcp_sansio_tokio as binding;`) and
//! `crate::rt` (its runtime: `block_on`, `spawn`, `sleep`, `timeout`, `unblock`, channels,
//! an in-memory pipe pair, the child-process `Command`). Each binding's `tests/suite.rs`
//! declares those two and includes this folder with `#[path]`; DESIGN.md section 4: "one
//! shared suite of binding tests runs per binding".
//!
//! `support/` needs no runtime, so the blocking binding's tests include it too. Tests that
//! exercise one binding only (tokio's paused clock, the blocking pool and OS pipes, the
//! README examples) stay in that binding's `tests/`.

pub(crate) mod support;

mod child;
pub(crate) mod duplex;
#[cfg(feature = "http")]
mod http;
mod input;
mod logging;
#[cfg(feature = "auth")]
mod protected;
mod tasks;
#[cfg(feature = "schemars")]
mod typed;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use mcp_sansio::Progress;
use mcp_sansio::schema::{CallToolResult, Tool};
use serde_json::Map;

use crate::binding::ServerBuilder;

/// Sets its flag when dropped: a handler holding one was dropped (aborted) once it is set
pub(crate) struct Flag(pub(crate) Arc<AtomicBool>);

impl Drop for Flag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Waits (a couple of seconds at most) for `flag` to be set; whether it was
pub(crate) async fn wait_for(flag: &AtomicBool) -> bool {
    for _ in 0..400 {
        if flag.load(Ordering::SeqCst) {
            return true;
        }
        crate::rt::sleep(Duration::from_millis(5)).await;
    }
    false
}

/// The client's ends of an in-memory pipe pair whose other ends a spawned task serves
/// `server` on
pub(crate) fn serve(server: crate::binding::Server) -> (crate::rt::Reader, crate::rt::Writer) {
    let (client, (r, w)) = crate::rt::pipes();
    crate::rt::spawn(async move { server.serve(r, w).await }).detach();
    client
}

/// Adds `echo`, which answers its `text` (required by its schema)
pub(crate) fn echo_tool(builder: ServerBuilder) -> ServerBuilder {
    builder
        .tool(
            Tool::new("echo", support::echo_schema()),
            |_cx, args| async move {
                Ok(CallToolResult::text(
                    args["text"].as_str().unwrap_or_default(),
                ))
            },
        )
        .unwrap()
}

/// Adds `slow`, which reports three progress steps, then waits an hour, setting `aborted`
/// when it is dropped
pub(crate) fn slow_tool(builder: ServerBuilder, aborted: Arc<AtomicBool>) -> ServerBuilder {
    builder
        .tool(Tool::new("slow", Map::new()), move |cx, _args| {
            let aborted = Arc::clone(&aborted);
            async move {
                let _flag = Flag(aborted);
                for i in 1..=3 {
                    cx.progress(Progress::new(f64::from(i)).total(3.0));
                    crate::rt::sleep(Duration::from_millis(10)).await;
                }
                crate::rt::sleep(Duration::from_secs(3600)).await;
                Ok(CallToolResult::text("never"))
            }
        })
        .unwrap()
}

/// Adds `greet`, which asks for a name with `Context::ask` and greets it, counting its runs
/// in `runs`
pub(crate) fn greet_tool(builder: ServerBuilder, runs: Arc<AtomicUsize>) -> ServerBuilder {
    builder
        .tool(Tool::new("greet", Map::new()), move |cx, _args| {
            let runs = Arc::clone(&runs);
            async move {
                runs.fetch_add(1, Ordering::SeqCst);
                let answers = cx
                    .ask(support::name_request())
                    .await
                    .map_err(|e| e.to_error())?;
                Ok(support::greeting(&answers))
            }
        })
        .unwrap()
}
