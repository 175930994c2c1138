//! The binding suite's dialect for the async bindings (mcp-sansio-tokio, mcp-sansio-async-std):
//! handlers are async closures, a call is a future to await, a call in the background is a
//! spawned task that aborting drops (which cancels the request). The blocking binding's
//! dialect (`blocking.rs` beside this file) spells the same words for threads, so each test
//! of the suite is written once for both.
//!
//! Each binding's `tests/suite.rs` includes one dialect with `#[macro_use]` before the suite,
//! so the macros are in scope there; the functions are `crate::dialect::...`.

#![allow(dead_code)] // not every binding's suite uses every word

use std::sync::Arc;

use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::schema::{CallToolResult, InputRequests, InputResponses};
use mcp_sansio::{Progress, RequestOptions};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::binding::{CallWatch, CancelHandle, Client, ClientError, InputHandler};

/// The outcome of a call: `aw!(client.list_tools())` is `client.list_tools().await` here,
/// the blocking call itself in the blocking dialect
macro_rules! aw {
    ($call:expr) => {
        $call.await
    };
}

/// A handler, `handler!([shared, ..]; |cx, args| { body })`: here an async closure whose
/// future owns a clone of each `shared` value (the blocking dialect's closure runs `body`
/// itself, on a worker thread). `args` may carry a type (`args: AddArgs`, typed tools).
macro_rules! handler {
    ([$($shared:ident),*]; |$cx:ident, $args:ident $(: $ty:ty)?| $body:block) => {
        move |$cx, $args $(: $ty)?| {
            $(let $shared = ::std::clone::Clone::clone(&$shared);)*
            async move $body
        }
    };
    (|$cx:ident, $args:ident $(: $ty:ty)?| $body:block) => {
        handler!([]; |$cx, $args $(: $ty)?| $body)
    };
    (|$cx:ident, $a:ident, $b:ident| $body:block) => {
        move |$cx, $a, $b| async move $body
    };
}

/// Sleeps in a handler for `duration`: here until the future is dropped (a cancelled
/// handler is aborted); the blocking dialect's handler sleeps on its cancellation token and
/// returns early when cancelled
macro_rules! nap {
    ($cx:ident, $duration:expr) => {
        crate::rt::sleep($duration).await
    };
}

/// The suite's own helpers that make calls: `dialect_fn! { async fn name(..) -> T { .. } }`
/// is that `async fn` here, and a plain `fn` in the blocking dialect
macro_rules! dialect_fn {
    ($(
        $(#[$meta:meta])*
        $vis:vis async fn $name:ident ($($params:tt)*) $(-> $ret:ty)? $body:block
    )*) => {
        $(
            $(#[$meta])*
            $vis async fn $name($($params)*) $(-> $ret)? $body
        )*
    };
}

/// A server middleware, `middleware!([shared, ..]; |call, next| { body })`: here an async
/// closure taking the `Call` by value (the blocking dialect's closure takes `&Call`); in
/// `body`, `pass!(next, call)` is the outcome of the rest of the chain
macro_rules! middleware {
    ([$($shared:ident),*]; |$call:ident, $next:ident| $body:block) => {
        move |$call: crate::binding::middleware::Call, $next: crate::binding::middleware::Next| {
            $(let $shared = ::std::clone::Clone::clone(&$shared);)*
            async move $body
        }
    };
}

/// The rest of a server chain run with `call`: its outcome
macro_rules! pass {
    ($next:ident, $call:ident) => {
        $next.run(::std::clone::Clone::clone(&$call)).await
    };
}

/// A client middleware, `client_middleware!([shared, ..]; |call, next| { body })`; in
/// `body`, `send!(next, call)` runs the rest of the chain (as often as the body likes)
macro_rules! client_middleware {
    ([$($shared:ident),*]; |$call:ident, $next:ident| $body:block) => {
        move |$call: crate::binding::middleware::ClientCall,
              $next: crate::binding::middleware::ClientNext| {
            $(let $shared = ::std::clone::Clone::clone(&$shared);)*
            async move $body
        }
    };
}

/// The rest of a client chain run with `call`: the request's outcome
macro_rules! send {
    ($next:ident, $call:expr) => {
        $next.clone().run($call).await
    };
}

/// Items only the async bindings have: what hangs on futures being lazy
macro_rules! only_async {
    ($($item:item)*) => {
        $($item)*
    };
}

/// A call running in the background (a spawned task): join it for its outcome, or abort it,
/// which drops its future and so cancels the request
pub(crate) struct Call<T>(crate::rt::Task<Result<T, ClientError>>);

impl<T> Call<T> {
    /// Its outcome
    pub(crate) async fn join(self) -> Result<T, ClientError> {
        self.0.join().await
    }

    /// Cancels it by dropping it, and waits until it is gone
    pub(crate) async fn abort(self) {
        self.0.abort().await;
    }
}

/// `client.start(..)` run in the background: its cancel handle and the call
pub(crate) fn start(
    client: &Client,
    method: &str,
    params: Option<Box<RawValue>>,
    options: RequestOptions,
    watch: CallWatch,
) -> (CancelHandle, Call<Box<RawValue>>) {
    let (handle, call) = client.start(method, params, options, watch);
    (handle, Call(crate::rt::spawn(call)))
}

/// `client.call_tool_with(name, arguments, ..)` run in the background, its progress reported
/// to `progress`
pub(crate) fn call_tool_with(
    client: &Client,
    name: &str,
    arguments: Map<String, Value>,
    progress: crate::rt::Sender<Progress>,
) -> Call<CallToolResult> {
    let client = client.clone();
    let name = name.to_owned();
    Call(crate::rt::spawn(async move {
        client
            .call_tool_with(&name, arguments, RequestOptions::default(), progress)
            .await
    }))
}

/// A client's input handler answering every input request with `answer`
pub(crate) fn input_handler(
    answer: impl Fn(&InputRequests) -> Result<InputResponses, ErrorObject> + Send + Sync + 'static,
) -> InputHandler {
    Arc::new(move |requests: InputRequests| Box::pin(std::future::ready(answer(&requests))))
}
