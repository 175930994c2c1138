//! What the kernel needs of an async runtime: spawning, one timer, the application's
//! channels, and the clock
//!
//! This is the whole difference between the async bindings: `mcp-sansio-tokio` and
//! `mcp-sansio-async-std` each implement [`Runtime`] for a unit type, and the kernel's
//! `Client`, `Server`, `Context` and connection actors are generic over it. Policy (what a
//! connection does with notifications, input requests, inbound requests) is not here: it is
//! plain values ([`App`](crate::peer::App), [`ClientOptions`](crate::client::ClientOptions)).
//! The kernel's own channels (commands, replies, handler messages) are runtime-neutral
//! ([`chan`](crate::chan)); only the channels the application hands in are the runtime's.
//!
//! Sized like quinn's `Runtime`: a clock, a spawner and a timer, with the channel type a
//! user of the binding sees standing in for quinn's UDP socket.

use std::future::Future;
use std::time::Instant;

/// An async runtime, as the kernel sees it
pub trait Runtime: Sized + Send + Sync + 'static {
    /// A task started by [`spawn_run`](Self::spawn_run); [`stop`](Self::stop) ends it
    type Run: Send + 'static;
    /// An actor's one timer: it completes at the instant [`reset`](Self::reset) last set
    type Timer: Future + Send + Unpin;
    /// The sending half of an unbounded channel of the runtime: the application's
    /// channels (notifications, progress, task status, stderr lines) are these
    type Sender<T: Send + 'static>: Clone + Send + Sync + 'static;

    /// The core's clock (tokio's, so paused-time tests drive the protocol's timeouts)
    fn now() -> Instant;
    /// Runs `future` on a task of its own, to its end
    fn spawn<F: Future<Output = ()> + Send + 'static>(future: F);
    /// Runs a handler on a task of its own, until it ends or is stopped
    fn spawn_run<F: Future<Output = ()> + Send + 'static>(future: F) -> Self::Run;
    /// Stops a handler run: its future is dropped at its next `.await`
    fn stop(run: Self::Run);
    /// Whether [`spawn_run`](Self::spawn_run), called here, may run a handler's first step
    /// at once (before it returns): a connection's loop then looks for the answer before it
    /// waits. `false` unless a runtime does so.
    fn runs_first_step_at_once() -> bool {
        false
    }
    /// A timer that is not set yet (it must not be awaited before [`reset`](Self::reset))
    fn timer() -> Self::Timer;
    /// Sets `timer` to complete at `at`
    fn reset(timer: &mut Self::Timer, at: Instant);
    /// Sends without waiting; `false` when the receiver went away
    fn send<T: Send + 'static>(tx: &Self::Sender<T>, value: T) -> bool;
}
