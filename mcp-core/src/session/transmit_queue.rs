//! The outbound byte queue: whole frames, stored back to back in one buffer, each with the
//! inbound request it belongs to

use std::collections::VecDeque;

use crate::jsonrpc::RequestId;

/// Frame appended to the caller's buffer by [`Session::poll_transmit`](super::Session::poll_transmit)
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
#[must_use = "the frame was appended to the buffer and must be written to the transport"]
pub struct Transmit {
    /// Number of bytes appended at the end of the caller's buffer (one JSON-RPC message or
    /// batch, followed by `\n`)
    pub len: usize,
    /// Which inbound request the frame belongs to, for transports that carry each request's
    /// answer on its own stream (Streamable HTTP); byte-stream transports ignore it
    pub relation: Relation,
}

/// How an outbound frame relates to the requests the peer sent us
///
/// Streamable HTTP answers each POSTed request on that POST's response, and sends what the
/// handler produces while it runs (progress, logs sent with
/// [`Inbound::send_notification`](super::Inbound::send_notification), input requests
/// asked with [`Inbound::ask_input`](super::Inbound::ask_input), a listen stream's
/// notifications) on the same response before the answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Relation {
    /// Not tied to an inbound request: our own requests and notifications (list changes,
    /// task status, cancellations), and errors to messages without a usable id
    #[default]
    Unrelated,
    /// Sent while the inbound request with this JSON-RPC id is being handled; its answer (or,
    /// for `subscriptions/listen`, more notifications) follows
    During(RequestId),
    /// The answer (result or error) to the inbound request with this JSON-RPC id; nothing
    /// related to it follows
    Answer(RequestId),
}

/// Frames waiting to be written
#[derive(Debug, Default)]
pub(crate) struct TransmitQueue {
    buf: Vec<u8>,
    head: usize,
    ends: VecDeque<(usize, Relation)>,
}

impl TransmitQueue {
    /// Releases spare capacity (idle sessions)
    pub(crate) fn shrink_to_fit(&mut self) {
        self.buf.shrink_to_fit();
        self.ends.shrink_to_fit();
    }

    /// Bytes waiting
    pub(crate) fn len(&self) -> usize {
        self.buf.len() - self.head
    }

    /// Starts a frame: the caller appends to the returned buffer, then calls [`Self::finish`]
    pub(crate) fn start(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// Ends the frame started last; it is unrelated to any inbound request
    pub(crate) fn finish(&mut self) {
        self.finish_as(Relation::Unrelated);
    }

    /// Ends the frame started last, which belongs to an inbound request as `relation` says
    pub(crate) fn finish_as(&mut self, relation: Relation) {
        self.buf.push(b'\n');
        self.ends.push_back((self.buf.len(), relation));
    }

    pub(crate) fn pop_into(&mut self, out: &mut Vec<u8>) -> Option<Transmit> {
        let (end, relation) = self.ends.pop_front()?;
        out.extend_from_slice(&self.buf[self.head..end]);
        let len = end - self.head;
        self.head = end;
        if self.ends.is_empty() {
            self.buf.clear();
            self.head = 0;
        }
        Some(Transmit { len, relation })
    }
}
