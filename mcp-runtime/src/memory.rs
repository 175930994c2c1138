//! In-memory connections: a client wired to a server in the same process, with no process,
//! socket or file descriptor (the bindings' `Client::in_memory`)
//!
//! A connection is two bounded byte [`pipe`]s, one each way, that both the async actors
//! (`futures-io`: a read waits on a waker) and the blocking binding's threads (`std::io`: a
//! read waits on a condition variable) can drive. The pipes touch no clock and no reactor,
//! so on a runtime whose clock can be paused (tokio's `start_paused`) an in-memory connection
//! lets the runtime jump time whenever every task is idle: a handler's long sleep and a
//! request's timeout then take no wall time.
//!
//! Each end closes when it is dropped (or closed, for a writer): the reader of a pipe whose
//! writer is gone reads what is left and then end of file; a write to a pipe whose reader is
//! gone fails with [`BrokenPipe`](io::ErrorKind::BrokenPipe).

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use futures_lite::{AsyncRead, AsyncWrite};

/// How many bytes a pipe holds before its writer waits: the size of one read of the actors'
/// buffer, so a burst is read in one go and a peer that stops reading stalls its writer
pub(crate) const PIPE_CAPACITY: usize = 64 * 1024;

/// The reading half of an in-memory [`pipe`]
#[derive(Debug)]
pub struct PipeReader(Arc<Shared>);

/// The writing half of an in-memory [`pipe`]
#[derive(Debug)]
pub struct PipeWriter(Arc<Shared>);

/// One end of an in-memory connection: what it reads and what it writes
pub type End = (PipeReader, PipeWriter);

/// A bounded in-memory byte pipe of `PIPE_CAPACITY` bytes (64 KiB)
pub fn pipe() -> (PipeReader, PipeWriter) {
    let shared = Arc::new(Shared::default());
    (PipeReader(Arc::clone(&shared)), PipeWriter(shared))
}

/// Two pipes crossed: the client's end and the server's end of one connection (what one
/// writes, the other reads)
pub fn connection() -> (End, End) {
    let (client_reads, server_writes) = pipe();
    let (server_reads, client_writes) = pipe();
    ((client_reads, client_writes), (server_reads, server_writes))
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    /// Signalled when bytes come in or the writer goes (for blocking readers)
    readable: Condvar,
    /// Signalled when room is made or the reader goes (for blocking writers)
    writable: Condvar,
}

#[derive(Debug, Default)]
struct State {
    bytes: VecDeque<u8>,
    reader_gone: bool,
    writer_gone: bool,
    reader_waker: Option<Waker>,
    writer_waker: Option<Waker>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // The state is consistent after every statement, so a panic elsewhere leaves it usable.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes what is there into `buf`: `Some(n)` (0 at end of file), or `None` when empty
    fn try_read(state: &mut State, buf: &mut [u8]) -> Option<usize> {
        if buf.is_empty() {
            return Some(0);
        }
        if state.bytes.is_empty() {
            return state.writer_gone.then_some(0);
        }
        let n = buf.len().min(state.bytes.len());
        for (slot, byte) in buf.iter_mut().zip(state.bytes.drain(..n)) {
            *slot = byte;
        }
        Some(n)
    }

    /// Puts what fits of `buf`: `Some(Ok(n))`, `Some(Err)` when the reader is gone, or
    /// `None` when full
    fn try_write(state: &mut State, buf: &[u8]) -> Option<io::Result<usize>> {
        if state.reader_gone {
            return Some(Err(io::ErrorKind::BrokenPipe.into()));
        }
        if buf.is_empty() {
            return Some(Ok(0));
        }
        let room = PIPE_CAPACITY - state.bytes.len();
        if room == 0 {
            return None;
        }
        let n = buf.len().min(room);
        state.bytes.extend(&buf[..n]);
        Some(Ok(n))
    }

    fn read_done(&self, mut state: MutexGuard<'_, State>) {
        let waker = state.writer_waker.take();
        drop(state);
        self.writable.notify_all();
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    fn write_done(&self, mut state: MutexGuard<'_, State>) {
        let waker = state.reader_waker.take();
        drop(state);
        self.readable.notify_all();
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    fn close_writer(&self) {
        let mut state = self.lock();
        state.writer_gone = true;
        self.write_done(state);
    }
}

impl AsyncRead for PipeReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let mut state = self.0.lock();
        match Shared::try_read(&mut state, buf) {
            Some(n) => {
                self.0.read_done(state);
                Poll::Ready(Ok(n))
            }
            None => {
                state.reader_waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

impl io::Read for PipeReader {
    /// Blocks until there are bytes to read or the writer is gone
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut state = self.0.lock();
        loop {
            if let Some(n) = Shared::try_read(&mut state, buf) {
                self.0.read_done(state);
                return Ok(n);
            }
            state = self
                .0
                .readable
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

impl Drop for PipeReader {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.reader_gone = true;
        state.bytes.clear();
        self.0.read_done(state);
    }
}

impl AsyncWrite for PipeWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let mut state = self.0.lock();
        match Shared::try_write(&mut state, buf) {
            Some(written) => {
                self.0.write_done(state);
                Poll::Ready(written)
            }
            None => {
                state.writer_waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.0.close_writer();
        Poll::Ready(Ok(()))
    }
}

impl io::Write for PipeWriter {
    /// Blocks until there is room or the reader is gone
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut state = self.0.lock();
        loop {
            if let Some(written) = Shared::try_write(&mut state, buf) {
                self.0.write_done(state);
                return written;
            }
            state = self
                .0
                .writable
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for PipeWriter {
    fn drop(&mut self) {
        self.0.close_writer();
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use futures_lite::future::block_on;
    use futures_lite::{AsyncReadExt, AsyncWriteExt};

    use super::{PIPE_CAPACITY, pipe};

    #[test]
    fn bytes_cross_then_end_of_file_once_the_writer_goes() {
        let (mut r, mut w) = pipe();
        block_on(AsyncWriteExt::write_all(&mut w, b"hello")).unwrap();
        drop(w);
        let mut got = Vec::new();
        block_on(AsyncReadExt::read_to_end(&mut r, &mut got)).unwrap();
        assert_eq!(got, b"hello");
    }

    #[test]
    fn a_full_pipe_makes_its_writer_wait_for_the_reader() {
        let (mut r, mut w) = pipe();
        let writer = std::thread::spawn(move || {
            Write::write_all(&mut w, &vec![7; 3 * PIPE_CAPACITY]).unwrap();
        });
        let mut got = Vec::new();
        Read::read_to_end(&mut r, &mut got).unwrap();
        writer.join().unwrap();
        assert_eq!(got.len(), 3 * PIPE_CAPACITY);
    }

    #[test]
    fn writing_to_a_pipe_whose_reader_is_gone_fails() {
        let (r, mut w) = pipe();
        drop(r);
        let e = Write::write(&mut w, b"x").unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe);
    }
}
