//! The outbound byte queue: whole frames, stored back to back in one buffer

use std::collections::VecDeque;

/// Frame appended to the caller's buffer by [`Session::poll_transmit`](super::Session::poll_transmit)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
#[must_use = "the frame was appended to the buffer and must be written to the transport"]
pub struct Transmit {
    /// Number of bytes appended at the end of the caller's buffer (one JSON-RPC message or
    /// batch, followed by `\n`)
    pub len: usize,
}

/// Frames waiting to be written
#[derive(Debug, Default)]
pub(crate) struct TransmitQueue {
    buf: Vec<u8>,
    head: usize,
    ends: VecDeque<usize>,
}

impl TransmitQueue {
    /// Bytes waiting
    pub(crate) fn len(&self) -> usize {
        self.buf.len() - self.head
    }

    /// Starts a frame: the caller appends to the returned buffer, then calls [`Self::finish`]
    pub(crate) fn start(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// Ends the frame started last
    pub(crate) fn finish(&mut self) {
        self.buf.push(b'\n');
        self.ends.push_back(self.buf.len());
    }

    pub(crate) fn pop_into(&mut self, out: &mut Vec<u8>) -> Option<Transmit> {
        let end = self.ends.pop_front()?;
        out.extend_from_slice(&self.buf[self.head..end]);
        let len = end - self.head;
        self.head = end;
        if self.ends.is_empty() {
            self.buf.clear();
            self.head = 0;
        }
        Some(Transmit { len })
    }
}
