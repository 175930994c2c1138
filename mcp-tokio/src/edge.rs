//! A hyper connection's edge on tokio: its read deadlines, watched
//!
//! The core's [`ReadDeadline`] says when a connection's head, body or keep-alive wait is
//! late; this module is the IO around it, shared by this crate's HTTP server and by anyone
//! serving HTTP/1.1 with hyper beside it (mcp-python's Rust front end does):
//!
//! - a [`Watch`] per connection holds its deadline; its task waits on
//!   [`Watch::expired`] beside hyper's connection future;
//! - [`Watched`] wraps the socket hyper reads: the first bytes of a request on an idle
//!   connection start its head deadline;
//! - [`Done`] goes with a response body: dropped (written or abandoned), the connection is
//!   idle again;
//! - [`late_writer`] and [`late`]: the 408 of a late head, written through a second
//!   descriptor of the socket (hyper owns the stream itself).

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::Instant;

use mcp_sansio::http::{Expiry, HttpConfig, ReadDeadline, ReadPhase};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::Notify;

/// One connection's [`ReadDeadline`], moved by its reads and its exchanges, and waited on
/// by its task
#[derive(Debug)]
pub struct Watch {
    deadline: Mutex<ReadDeadline>,
    moved: Notify,
}

impl Watch {
    /// The watch of a connection accepted at `now`
    pub fn new(now: Instant) -> Self {
        Self {
            deadline: Mutex::new(ReadDeadline::accepted(now)),
            moved: Notify::new(),
        }
    }

    fn deadline(&self) -> MutexGuard<'_, ReadDeadline> {
        self.deadline.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Moves the deadline (`head_read`, `body_read`, ...); the task waiting on
    /// [`expired`](Self::expired) looks again if it changed
    pub fn update(&self, change: impl FnOnce(&mut ReadDeadline)) {
        let mut deadline = self.deadline();
        let before = *deadline;
        change(&mut deadline);
        if *deadline != before {
            self.moved.notify_one();
        }
    }

    /// Returns once the deadline passed, with what to do
    ///
    /// A body's deadline is not watched here: the exchange reading the body answers 408
    /// itself.
    pub async fn expired(&self, config: &HttpConfig) -> Expiry {
        // One timer for the whole wait, moved with the deadline: a new one per move was a
        // registration and a removal in tokio's timer wheel, and the deadline moves about
        // four times a request.
        let sleep = tokio::time::sleep_until(tokio::time::Instant::now());
        tokio::pin!(sleep);
        let mut armed = None;
        loop {
            let (due, expiry) = {
                let d = self.deadline();
                let due = d.deadline(config).filter(|_| d.phase() != ReadPhase::Body);
                (due, d.expiry())
            };
            match due {
                None => self.moved.notified().await,
                Some(due) => {
                    if armed != Some(due) {
                        sleep.as_mut().reset(due.into());
                        armed = Some(due);
                    }
                    tokio::select! {
                        biased;
                        () = self.moved.notified() => {}
                        () = sleep.as_mut() => {
                            if self.deadline().expired(config, Instant::now()) {
                                return expiry;
                            }
                            // Fired but not late (the deadline moved): armed again above.
                            armed = None;
                        }
                    }
                }
            }
        }
    }
}

/// Goes with a response's body: dropped with it (written, or abandoned), the connection is
/// idle again
#[derive(Debug, Default)]
pub struct Done(Option<Arc<Watch>>);

impl Done {
    /// The guard of a response on the connection `watch` watches
    pub fn new(watch: &Arc<Watch>) -> Self {
        Self(Some(Arc::clone(watch)))
    }
}

impl Drop for Done {
    fn drop(&mut self) {
        if let Some(watch) = self.0.take() {
            watch.update(|d| {
                if d.phase() != ReadPhase::Idle {
                    d.response_written(Instant::now());
                }
            });
        }
    }
}

/// A connection's stream as hyper reads and writes it: every read that brings the first
/// bytes of a request to an idle connection starts its head deadline
#[derive(Debug)]
pub struct Watched<S> {
    io: S,
    watch: Arc<Watch>,
    shutdown: bool,
}

impl<S> Watched<S> {
    /// `io` (a socket, a TLS session) watched by `watch`
    pub fn new(io: S, watch: Arc<Watch>) -> Self {
        Self {
            io,
            watch,
            shutdown: true,
        }
    }

    /// Shutting the stream down does nothing: the socket closes when its last descriptor
    /// does (a [`late_writer`] holds another, for the late answer)
    #[must_use]
    pub fn without_shutdown(mut self) -> Self {
        self.shutdown = false;
        self
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let read = Pin::new(&mut this.io).poll_read(cx, buf);
        if matches!(read, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            this.watch.update(|d| d.head_started(Instant::now()));
        }
        read
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !this.shutdown {
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.io).poll_shutdown(cx)
    }
}

/// A second descriptor of a connection's socket, for the late answer
#[cfg(unix)]
pub fn late_writer(stream: &TcpStream) -> Option<std::net::TcpStream> {
    use std::os::fd::AsFd;
    let fd = stream.as_fd().try_clone_to_owned().ok()?;
    Some(std::net::TcpStream::from(fd))
}

/// A second descriptor of a connection's socket, for the late answer
#[cfg(windows)]
pub fn late_writer(stream: &TcpStream) -> Option<std::net::TcpStream> {
    use std::os::windows::io::AsSocket;
    let socket = stream.as_socket().try_clone_to_owned().ok()?;
    Some(std::net::TcpStream::from(socket))
}

/// The response to a request that came too late (`status`, 408), closing the connection
pub fn late(status: u16) -> Vec<u8> {
    format!("HTTP/1.1 {status} Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
        .into_bytes()
}
