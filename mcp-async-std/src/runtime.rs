//! async-std and smol as the runtime layer (`mcp-sansio-runtime`) sees them: tasks run on
//! smol's global executor ([`smol::spawn`]) and dropping a handler's [`Task`] cancels it,
//! which is how a cancelled request stops its handler; one `async_io::Timer` per actor; the
//! application's channels are `async-channel`s, sent to without waiting

use std::future::Future;
use std::time::Instant;

use async_channel::Sender;
use smol::Task;

/// async-std and smol as the runtime layer (`mcp-sansio-runtime`) sees them
#[derive(Debug, Clone, Copy)]
pub struct AsyncStd;

impl mcp_sansio_runtime::Runtime for AsyncStd {
    type Run = Task<()>;
    type Timer = async_io::Timer;
    type Sender<T: Send + 'static> = Sender<T>;

    /// The monotonic clock that `async_io::Timer` sleeps on
    fn now() -> Instant {
        Instant::now()
    }
    fn spawn<F: Future<Output = ()> + Send + 'static>(future: F) {
        smol::spawn(future).detach();
    }
    fn spawn_run<F: Future<Output = ()> + Send + 'static>(future: F) -> Task<()> {
        smol::spawn(future)
    }
    fn stop(run: Task<()>) {
        drop(run);
    }
    fn timer() -> async_io::Timer {
        async_io::Timer::never()
    }
    fn reset(timer: &mut async_io::Timer, at: Instant) {
        timer.set_at(at);
    }
    fn send<T: Send + 'static>(tx: &Sender<T>, value: T) -> bool {
        tx.try_send(value).is_ok()
    }
}

/// What a client connection does with what the server sends besides responses
///
/// The channels are `async-channel`'s (`async_channel::unbounded()`, the same type as
/// `smol::channel` and `async_std::channel`). The connection never waits on them: a message
/// that does not fit a full bounded channel is dropped, so prefer unbounded ones. Its fields
/// and methods are listed below.
pub type ClientOptions = mcp_sansio_runtime::client::ClientOptions<AsyncStd>;
