//! The kernel's own channels: runtime-neutral `async-channel`s between the application's
//! handles, the handlers and the actors
//!
//! An `async-channel` keeps its queue while any sender lives, even after its receiver is
//! dropped; an actor that ends therefore `close_and_drain`s its receivers, so that a reply
//! channel inside a queued message closes and its caller stops waiting.

#[cfg(feature = "http")]
use std::pin::Pin;
#[cfg(feature = "http")]
use std::task::{Context, Poll};

pub use async_channel::{Receiver, Sender};

/// The sending half of a one-reply channel: `send` consumes it; dropping it unsent tells the
/// receiver no reply comes
pub(crate) type OneSender<T> = futures_channel::oneshot::Sender<T>;
/// The receiving half of a one-reply channel (see [`reply`])
pub(crate) type OneReceiver<T> = futures_channel::oneshot::Receiver<T>;

/// A channel for one reply
///
/// `futures-channel`'s oneshot: one allocation and an atomic hand-over, no lock and no listener
/// list (a reply crosses threads on every call on a multi-threaded runtime).
pub fn oneshot<T>() -> (OneSender<T>, OneReceiver<T>) {
    futures_channel::oneshot::channel()
}

/// Waits for the one reply; `None` when the sender went away
pub async fn reply<T>(rx: OneReceiver<T>) -> Option<T> {
    rx.await.ok()
}

/// The sending half of an actor's inbox of handler messages (unbounded: a handler never waits)
pub(crate) type QueueSender<T> = futures_channel::mpsc::UnboundedSender<T>;
/// An actor's inbox of handler messages (see [`queue`])
pub(crate) type QueueReceiver<T> = futures_channel::mpsc::UnboundedReceiver<T>;

/// An actor's inbox: `futures-channel`'s unbounded queue, lock-free with one waker (it is
/// polled on every turn of the actor's loop, and written from the handlers' tasks)
pub fn queue<T>() -> (QueueSender<T>, QueueReceiver<T>) {
    futures_channel::mpsc::unbounded()
}

/// The next message of an inbox; `None` once every sender is gone
pub async fn next<T>(rx: &mut QueueReceiver<T>) -> Option<T> {
    futures_lite::StreamExt::next(rx).await
}

/// Closes an inbox and drops what is queued in it
pub(crate) fn close_queue<T>(rx: &mut QueueReceiver<T>) {
    rx.close();
    while rx.try_recv().is_ok() {}
}

/// Closes a channel and drops what is queued in it (see the module's docs)
#[cfg(feature = "http")]
pub(crate) fn close_and_drain<T>(rx: &Receiver<T>) {
    rx.close();
    while rx.try_recv().is_ok() {}
}

/// Polls for the next message (for a binding's own `poll_*` functions, such as a response
/// body's); `None` once every sender is gone
#[cfg(feature = "http")]
pub(crate) fn poll_recv<T>(rx: Pin<&mut Receiver<T>>, cx: &mut Context<'_>) -> Poll<Option<T>> {
    futures_lite::Stream::poll_next(rx, cx)
}
