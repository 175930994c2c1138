//! tokio as the runtime layer (`mcp-sansio-runtime`) sees it: handler runs are tasks stopped
//! through their [`AbortHandle`] (on a current-thread runtime a handler's first step runs at
//! once, and one done then needs no task), one [`Sleep`] per actor, and the application's channels are
//! tokio's unbounded ones; with the client's options and the adapter from tokio's byte
//! streams to the kernel's (`futures-io`)

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;
use tokio::time::{Instant, Sleep};

/// The tokio runtime as the runtime layer (`mcp-sansio-runtime`) sees it
#[derive(Debug, Clone, Copy)]
pub struct Tokio;

impl mcp_sansio_runtime::Runtime for Tokio {
    type Run = Option<AbortHandle>;
    type Timer = Pin<Box<Sleep>>;
    type Sender<T: Send + 'static> = mpsc::UnboundedSender<T>;

    /// The core's clock as tokio sees it, so paused-time tests drive protocol timeouts
    fn now() -> std::time::Instant {
        Instant::now().into_std()
    }
    fn spawn<F: Future<Output = ()> + Send + 'static>(future: F) {
        tokio::spawn(future);
    }
    /// On a current-thread runtime the handler's first step runs at once, where the actor
    /// is: a handler that does not wait (most do not) is done without a task of its own
    /// (one allocation, a scheduling and a poll fewer a call). One that waits goes on as a
    /// task; its first poll there wakes whatever it waits on anew. On a multi-thread
    /// runtime every run is a task, so handlers run beside the actor.
    fn spawn_run<F: Future<Output = ()> + Send + 'static>(future: F) -> Option<AbortHandle> {
        if !Self::runs_first_step_at_once() {
            return Some(tokio::spawn(future).abort_handle());
        }
        let mut future = Box::pin(future);
        let mut cx = TaskContext::from_waker(std::task::Waker::noop());
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(()) => None,
            Poll::Pending => Some(tokio::spawn(future).abort_handle()),
        }
    }
    /// On a current-thread runtime
    fn runs_first_step_at_once() -> bool {
        tokio::runtime::Handle::try_current()
            .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread)
    }
    fn stop(run: Option<AbortHandle>) {
        if let Some(run) = run {
            run.abort();
        }
    }
    fn timer() -> Pin<Box<Sleep>> {
        Box::pin(tokio::time::sleep_until(Instant::now()))
    }
    fn reset(timer: &mut Pin<Box<Sleep>>, at: std::time::Instant) {
        timer.as_mut().reset(Instant::from_std(at));
    }
    fn send<T: Send + 'static>(tx: &mpsc::UnboundedSender<T>, value: T) -> bool {
        tx.send(value).is_ok()
    }
}

/// What a client connection does with what the server sends besides responses
///
/// The channels are tokio's unbounded ones (`tokio::sync::mpsc::unbounded_channel()`). Its
/// fields and methods are listed below.
pub type ClientOptions = mcp_sansio_runtime::client::ClientOptions<Tokio>;

/// A tokio reader or writer as the runtime layer's (`futures-io`) one
#[derive(Debug)]
pub struct Compat<T>(pub(crate) T);

impl<T: AsyncRead + Unpin> mcp_sansio_runtime::driver::AsyncRead for Compat<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let mut buf = ReadBuf::new(buf);
        match Pin::new(&mut self.0).poll_read(cx, &mut buf) {
            Poll::Ready(Ok(())) => Poll::Ready(Ok(buf.filled().len())),
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<T: AsyncWrite + Unpin> mcp_sansio_runtime::driver::AsyncWrite for Compat<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}
