//! The binding suite (`tests/binding-suite/` at the workspace root), run on plain threads:
//! the suite's tests are written once against `binding` and `rt`, declared here, and the
//! blocking dialect (handlers are closures on the server's workers, calls block, a call in
//! the background is a `PendingCall`)

// `aw!(rt::timeout(limit, handle.shutdown()))` hands `rt::timeout` the outcome of a blocking
// call, `()` for some.
#![allow(clippy::unit_arg)]

use mcp_sansio_blocking as binding;

/// How the suite's handlers and calls are spelled on the blocking binding
#[macro_use]
#[path = "../../tests/binding-suite/dialect/blocking.rs"]
mod dialect;

#[path = "../../tests/binding-suite/mod.rs"]
mod suite;

/// The suite's "runtime" on threads: its futures never wait (every call in them blocks), so
/// `block_on` polls once; a task is a thread
mod rt {
    use std::io::{PipeReader, PipeWriter};
    use std::pin::pin;
    use std::sync::mpsc;
    use std::task::{Context, Poll, Waker};
    use std::thread::{self, JoinHandle};
    use std::time::Duration;

    /// The child-process command `Client::spawn` takes
    pub(crate) type Command = std::process::Command;
    /// The keepalive the suite's HTTP servers send on quiet streams: the server also looks
    /// for a client closing an open response every 250 ms, and at each write (the
    /// keepalive's), so a cancelled 2026 call's handler learns it soon
    #[cfg(feature = "http")]
    pub(crate) const HTTP_KEEPALIVE: Option<Duration> = Some(Duration::from_millis(200));
    /// The everything-server example's name (`cargo test` builds it beside the tests)
    #[cfg(feature = "http")]
    pub(crate) const EVERYTHING_SERVER: &str = "everything-server-blocking";

    /// Runs `future` on this thread: it blocks where an async one would wait, so it is
    /// ready the first time it is polled
    pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
        let mut future = pin!(future);
        match future
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
        {
            Poll::Ready(output) => output,
            Poll::Pending => panic!("the blocking dialect's futures never wait"),
        }
    }

    /// One end of an OS pipe
    pub(crate) type Reader = PipeReader;
    /// The other way
    pub(crate) type Writer = PipeWriter;

    /// Two OS pipes, one each way: (client reader, client writer), (server reader, server
    /// writer)
    pub(crate) fn pipes() -> ((Reader, Writer), (Reader, Writer)) {
        let (server_read, client_write) = std::io::pipe().expect("a pipe");
        let (client_read, server_write) = std::io::pipe().expect("a pipe");
        ((client_read, client_write), (server_read, server_write))
    }

    /// A spawned task: a thread
    pub(crate) struct Task<T>(JoinHandle<T>);

    impl<T> Task<T> {
        /// Its output (its panic, if it panicked)
        pub(crate) fn join(self) -> T {
            self.0.join().expect("the thread ends without a panic")
        }

        /// Lets it run on its own
        pub(crate) fn detach(self) {}
    }

    /// Runs `future` on a thread of its own
    pub(crate) fn spawn<F>(future: F) -> Task<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        Task(thread::spawn(move || block_on(future)))
    }

    pub(crate) fn sleep(duration: Duration) {
        thread::sleep(duration);
    }

    /// `outcome`, which the blocking call already waited for: a blocking call cannot be
    /// raced, so a call that hangs hangs the test (as in the binding's own tests)
    pub(crate) fn timeout<T>(limit: Duration, outcome: T) -> Option<T> {
        let _ = limit;
        Some(outcome)
    }

    /// Runs blocking `work` (raw HTTP): on this thread, as everything here
    #[cfg(feature = "http")]
    pub(crate) fn unblock<T>(work: impl FnOnce() -> T) -> T {
        work()
    }

    /// The sending side of the channels the binding reports through
    pub(crate) type Sender<T> = mpsc::Sender<T>;

    /// The receiving side
    pub(crate) struct Receiver<T>(mpsc::Receiver<T>);

    impl<T> Receiver<T> {
        /// The next value, or `None` once every sender is gone
        pub(crate) fn recv(&mut self) -> Option<T> {
            self.0.recv().ok()
        }

        /// The next value if one is queued
        pub(crate) fn try_recv(&mut self) -> Option<T> {
            self.0.try_recv().ok()
        }
    }

    /// An unbounded channel of the binding's kind
    pub(crate) fn channel<T>() -> (Sender<T>, Receiver<T>) {
        let (tx, rx) = mpsc::channel();
        (tx, Receiver(rx))
    }
}
