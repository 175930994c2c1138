//! The kernel's own channels: runtime-neutral `async-channel`s between the application's
//! handles, the handlers and the actors
//!
//! An `async-channel` keeps its queue while any sender lives, even after its receiver is
//! dropped; an actor that ends therefore [`close_and_drain`]s its receivers, so that a reply
//! channel inside a queued message closes and its caller stops waiting.

use std::pin::Pin;
use std::task::{Context, Poll};

pub use async_channel::{Receiver, Sender};

/// A channel for one reply
pub fn oneshot<T>() -> (Sender<T>, Receiver<T>) {
    async_channel::bounded(1)
}

/// Waits for the one reply; `None` when the sender went away
pub async fn reply<T>(rx: Receiver<T>) -> Option<T> {
    rx.recv().await.ok()
}

/// Closes a channel and drops what is queued in it (see the module's docs)
pub fn close_and_drain<T>(rx: &Receiver<T>) {
    rx.close();
    while rx.try_recv().is_ok() {}
}

/// Polls for the next message (for a binding's own `poll_*` functions, such as a response
/// body's); `None` once every sender is gone
pub fn poll_recv<T>(rx: Pin<&mut Receiver<T>>, cx: &mut Context<'_>) -> Poll<Option<T>> {
    futures_lite::Stream::poll_next(rx, cx)
}
