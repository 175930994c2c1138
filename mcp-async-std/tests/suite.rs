//! The binding suite (`tests/binding-suite/` at the workspace root), run on smol's
//! executor, which async-std is built on: the suite's tests are written once against
//! `binding` and `rt`, declared here, and the async dialect

use mcp_sansio_async_std as binding;

/// How the suite's handlers and calls are spelled on an async binding
#[macro_use]
#[path = "../../tests/binding-suite/dialect/asynchronous.rs"]
mod dialect;

#[path = "../../tests/binding-suite/mod.rs"]
mod suite;

/// The suite's runtime: `smol::block_on` for the test, smol's global executor for tasks
mod rt {
    use std::time::Duration;

    use futures_lite::FutureExt;

    /// The child-process command `Client::spawn` takes
    pub(crate) type Command = async_process::Command;
    /// The keepalive the suite's HTTP servers send on quiet streams: the default
    #[cfg(feature = "http")]
    pub(crate) const HTTP_KEEPALIVE: Option<Duration> = None;
    /// The everything-server example's name (`cargo test` builds it beside the tests)
    #[cfg(feature = "http")]
    pub(crate) const EVERYTHING_SERVER: &str = "everything-server-async-std";

    /// Runs `future` to its end on this thread
    pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
        smol::block_on(future)
    }

    /// One end of an in-memory pipe
    pub(crate) type Reader = piper::Reader;
    /// The other way
    pub(crate) type Writer = piper::Writer;

    /// Two in-memory pipes, one each way: (client reader, client writer), (server reader,
    /// server writer)
    pub(crate) fn pipes() -> ((Reader, Writer), (Reader, Writer)) {
        let (to_client_r, to_client_w) = piper::pipe(64 * 1024);
        let (to_server_r, to_server_w) = piper::pipe(64 * 1024);
        ((to_client_r, to_server_w), (to_server_r, to_client_w))
    }

    /// A spawned task
    pub(crate) struct Task<T>(smol::Task<T>);

    impl<T> Task<T> {
        /// Its output (its panic, if it panicked)
        pub(crate) async fn join(self) -> T {
            self.0.await
        }

        /// Drops its future and waits until it is gone
        pub(crate) async fn abort(self) {
            let _ = self.0.cancel().await;
        }

        /// Lets it run on its own
        pub(crate) fn detach(self) {
            self.0.detach();
        }
    }

    pub(crate) fn spawn<F>(future: F) -> Task<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        Task(smol::spawn(future))
    }

    pub(crate) async fn sleep(duration: Duration) {
        async_io::Timer::after(duration).await;
    }

    /// `future`'s output, or `None` when it takes longer than `limit`
    pub(crate) async fn timeout<F: Future>(limit: Duration, future: F) -> Option<F::Output> {
        async { Some(future.await) }
            .or(async {
                async_io::Timer::after(limit).await;
                None
            })
            .await
    }

    /// Runs blocking `work` (raw HTTP) on a thread of its own, off the executor
    #[cfg(feature = "http")]
    pub(crate) async fn unblock<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
        blocking::unblock(work).await
    }

    /// The sending side of the channels the binding reports through
    pub(crate) type Sender<T> = async_channel::Sender<T>;

    /// The receiving side
    pub(crate) struct Receiver<T>(async_channel::Receiver<T>);

    impl<T> Receiver<T> {
        /// The next value, or `None` once every sender is gone
        pub(crate) async fn recv(&mut self) -> Option<T> {
            self.0.recv().await.ok()
        }

        /// The next value if one is queued
        pub(crate) fn try_recv(&mut self) -> Option<T> {
            self.0.try_recv().ok()
        }
    }

    /// An unbounded channel of the binding's kind
    pub(crate) fn channel<T>() -> (Sender<T>, Receiver<T>) {
        let (tx, rx) = async_channel::unbounded();
        (tx, Receiver(rx))
    }
}

/// The same calls as the suite's, on async-std's own `block_on`
#[test]
fn typed_calls_in_every_era_mode_on_async_std() {
    async_std::task::block_on(async {
        for (era, version) in suite::support::ERAS {
            suite::duplex::typed_calls(era, version).await;
        }
    });
}
