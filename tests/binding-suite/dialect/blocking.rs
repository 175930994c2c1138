//! The binding suite's dialect for mcp-sansio-blocking: handlers are plain closures run on
//! the server's worker threads, a call blocks until its outcome, a call in the background is
//! a `PendingCall` that dropping cancels. The words are the async dialect's
//! (`asynchronous.rs` beside this file), so each test of the suite is written once for both:
//! the suite's `async` blocks and functions never wait here (every call in them blocks
//! instead), and `rt::block_on` polls them once.

#![allow(dead_code)] // not every binding's suite uses every word

use std::sync::Arc;

use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::schema::{InputRequests, InputResponses};
use mcp_sansio::{Progress, RequestOptions};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::binding::{CallWatch, CancelHandle, Client, ClientError, InputHandler, PendingCall};

/// The outcome of a call: the blocking call itself (`.await` in the async dialect)
macro_rules! aw {
    ($call:expr) => {
        $call
    };
}

/// A handler, `handler!([shared, ..]; |cx, args| { body })`: a plain closure running `body`
/// on a worker thread, borrowing the `shared` values it captured
macro_rules! handler {
    ([$($shared:ident),*]; |$cx:ident, $args:ident $(: $ty:ty)?| $body:block) => {
        move |$cx, $args $(: $ty)?| $body
    };
    (|$cx:ident, $args:ident $(: $ty:ty)?| $body:block) => {
        move |$cx, $args $(: $ty)?| $body
    };
    (|$cx:ident, $a:ident, $b:ident| $body:block) => {
        move |$cx, $a, $b| $body
    };
}

/// Sleeps in a handler for `duration` on its cancellation token: a cancelled handler
/// returns at once (with the `Cancelled` error), dropping what it holds, as an aborted
/// async handler does
macro_rules! nap {
    ($cx:ident, $duration:expr) => {
        $cx.sleep($duration)?
    };
}

/// The suite's own helpers that make calls: `dialect_fn! { async fn name(..) -> T { .. } }`
/// is a plain `fn` here (its calls block), that `async fn` in the async dialect
macro_rules! dialect_fn {
    ($(
        $(#[$meta:meta])*
        $vis:vis async fn $name:ident ($($params:tt)*) $(-> $ret:ty)? $body:block
    )*) => {
        $(
            $(#[$meta])*
            $vis fn $name($($params)*) $(-> $ret)? $body
        )*
    };
}

/// A server middleware, `middleware!([shared, ..]; |call, next| { body })`: a plain closure
/// taking `&Call` (the async dialect's takes the `Call` and is async); in `body`,
/// `pass!(next, call)` is the outcome of the rest of the chain
macro_rules! middleware {
    ([$($shared:ident),*]; |$call:ident, $next:ident| $body:block) => {
        move |$call: &crate::binding::middleware::Call,
              $next: crate::binding::middleware::Next<'_>| $body
    };
}

/// The rest of a server chain run with `call`: its outcome
macro_rules! pass {
    ($next:ident, $call:ident) => {
        $next.run($call)
    };
}

/// A client middleware, `client_middleware!([shared, ..]; |call, next| { body })`; in
/// `body`, `send!(next, call)` runs the rest of the chain (as often as the body likes)
macro_rules! client_middleware {
    ([$($shared:ident),*]; |$call:ident, $next:ident| $body:block) => {
        move |$call: crate::binding::middleware::ClientCall,
              $next: &crate::binding::middleware::ClientNext<'_>| $body
    };
}

/// The rest of a client chain run with `call`: the request's outcome
macro_rules! send {
    ($next:ident, $call:expr) => {
        $next.run($call)
    };
}

/// Items only the async bindings have: nothing here
macro_rules! only_async {
    ($($item:item)*) => {};
}

/// A call running in the background: join it for its outcome, or abort it (drop it), which
/// cancels the request
pub(crate) struct Call(PendingCall);

impl Call {
    /// Its outcome
    pub(crate) fn join(self) -> Result<Box<RawValue>, ClientError> {
        self.0.wait()
    }

    /// Cancels it by dropping it
    pub(crate) fn abort(self) {
        drop(self.0);
    }
}

/// `client.start(..)`: its cancel handle and the call
pub(crate) fn start(
    client: &Client,
    method: &str,
    params: Option<Box<RawValue>>,
    options: RequestOptions,
    watch: CallWatch,
) -> (CancelHandle, Call) {
    let call = client.start(method, params, options, watch);
    (call.cancel_handle(), Call(call))
}

/// Tool `name` called with `arguments` in the background, its progress reported to
/// `progress` (the blocking `call_tool_with` cannot be dropped half way: this is
/// `start` with the same request)
pub(crate) fn call_tool_with(
    client: &Client,
    name: &str,
    arguments: Map<String, Value>,
    progress: crate::rt::Sender<Progress>,
) -> Call {
    let params = json!({"name": name, "arguments": arguments});
    let params = serde_json::value::to_raw_value(&params).expect("JSON");
    let mut watch = CallWatch::default();
    watch.progress = Some(progress);
    let options = RequestOptions::default().with_progress();
    start(client, "tools/call", Some(params), options, watch).1
}

/// A client's input handler answering every input request with `answer`
pub(crate) fn input_handler(
    answer: impl Fn(&InputRequests) -> Result<InputResponses, ErrorObject> + Send + Sync + 'static,
) -> InputHandler {
    Arc::new(move |requests: InputRequests| answer(&requests))
}
