//! The binding suite (`tests/binding-suite/` at the workspace root), run on tokio: the
//! suite's tests are written once against `binding` and `rt`, declared here, and the async
//! dialect

use mcp_sansio_tokio as binding;

/// How the suite's handlers and calls are spelled on an async binding
#[macro_use]
#[path = "../../tests/binding-suite/dialect/asynchronous.rs"]
mod dialect;

#[path = "../../tests/binding-suite/mod.rs"]
mod suite;

/// The suite's runtime: tokio, one thread per test as `#[tokio::test]` has it
mod rt {
    use std::time::Duration;

    use tokio::io::{DuplexStream, ReadHalf, WriteHalf};
    use tokio::sync::mpsc;

    /// The child-process command `Client::spawn` takes
    pub(crate) type Command = tokio::process::Command;
    /// The keepalive the suite's HTTP servers send on quiet streams: the default
    #[cfg(feature = "http")]
    pub(crate) const HTTP_KEEPALIVE: Option<Duration> = None;
    /// The everything-server example's name (`cargo test` builds it beside the tests)
    #[cfg(feature = "http")]
    pub(crate) const EVERYTHING_SERVER: &str = "everything-server";

    /// Runs `future` to its end on a fresh current-thread runtime with IO and time
    pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
            .block_on(future)
    }

    /// One end of an in-memory pipe
    pub(crate) type Reader = ReadHalf<DuplexStream>;
    /// The other way
    pub(crate) type Writer = WriteHalf<DuplexStream>;

    /// An in-memory pipe pair: (client reader, client writer), (server reader, server writer)
    pub(crate) fn pipes() -> ((Reader, Writer), (Reader, Writer)) {
        let (client, server) = tokio::io::duplex(64 * 1024);
        (tokio::io::split(client), tokio::io::split(server))
    }

    /// A spawned task
    pub(crate) struct Task<T>(tokio::task::JoinHandle<T>);

    impl<T> Task<T> {
        /// Its output (its panic, if it panicked)
        pub(crate) async fn join(self) -> T {
            self.0.await.expect("the task ends without a panic")
        }

        /// Drops its future and waits until it is gone
        pub(crate) async fn abort(self) {
            self.0.abort();
            let _ = self.0.await;
        }

        /// Lets it run on its own
        pub(crate) fn detach(self) {}
    }

    pub(crate) fn spawn<F>(future: F) -> Task<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        Task(tokio::spawn(future))
    }

    pub(crate) async fn sleep(duration: Duration) {
        tokio::time::sleep(duration).await;
    }

    /// `future`'s output, or `None` when it takes longer than `limit`
    pub(crate) async fn timeout<F: Future>(limit: Duration, future: F) -> Option<F::Output> {
        tokio::time::timeout(limit, future).await.ok()
    }

    /// Runs blocking `work` (raw HTTP) on a thread of its own, off the runtime
    #[cfg(feature = "http")]
    pub(crate) async fn unblock<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
        tokio::task::spawn_blocking(work)
            .await
            .expect("the blocking work ends without a panic")
    }

    /// The sending side of the channels the binding reports through
    pub(crate) type Sender<T> = mpsc::UnboundedSender<T>;

    /// The receiving side
    pub(crate) struct Receiver<T>(mpsc::UnboundedReceiver<T>);

    impl<T> Receiver<T> {
        /// The next value, or `None` once every sender is gone
        pub(crate) async fn recv(&mut self) -> Option<T> {
            self.0.recv().await
        }

        /// The next value if one is queued
        pub(crate) fn try_recv(&mut self) -> Option<T> {
            self.0.try_recv().ok()
        }
    }

    /// An unbounded channel of the binding's kind
    pub(crate) fn channel<T>() -> (Sender<T>, Receiver<T>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (tx, Receiver(rx))
    }
}
