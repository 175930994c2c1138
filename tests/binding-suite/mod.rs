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
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

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
