//! One logical event stream of a session: the messages for one POSTed request, or the
//! standalone GET stream, with per-stream event ids and a bounded replay buffer
//!
//! Event ids are `<stream>-<seq>`: the stream number within the session and the message's
//! sequence number within the stream (from 1; 0 is the priming event). `Last-Event-ID` thus
//! names the stream to resume and where, and a resumption never replays another stream's
//! messages.

use std::collections::VecDeque;

use super::ExchangeId;
use crate::jsonrpc::RequestId;

/// The standalone GET stream's number; POST streams count from 1
pub(crate) const STANDALONE: u64 = 0;

#[derive(Debug)]
pub(crate) struct EventStream {
    /// Messages kept for delivery and replay, oldest first, by sequence number
    events: VecDeque<(u64, Vec<u8>)>,
    next_seq: u64,
    /// The last sequence number written to an exchange (or named by `Last-Event-ID`)
    pub(crate) delivered: u64,
    /// The HTTP response currently carrying the stream
    pub(crate) attached: Option<ExchangeId>,
    /// The answer is queued: nothing follows it
    pub(crate) finished: bool,
    /// 2026 wire: the id the client gave the request (the session sees another one)
    pub(crate) client_id: Option<RequestId>,
    /// 2026 wire: the id the session knows the request by
    pub(crate) internal_id: Option<RequestId>,
    limit: usize,
    /// Messages dropped unsent because the buffer was full
    pub(crate) lost: u64,
}

impl EventStream {
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            events: VecDeque::new(),
            next_seq: 1,
            delivered: 0,
            attached: None,
            finished: false,
            client_id: None,
            internal_id: None,
            limit: limit.max(1),
            lost: 0,
        }
    }

    /// Appends a message; beyond the limit the oldest is dropped (counted in `lost` when it
    /// had not been delivered)
    pub(crate) fn push(&mut self, message: Vec<u8>) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.events.push_back((seq, message));
        while self.events.len() > self.limit {
            if let Some((old, _)) = self.events.pop_front()
                && old > self.delivered
            {
                self.lost += 1;
            }
        }
        seq
    }

    /// The messages after `delivered`, in order
    pub(crate) fn undelivered(&self) -> Vec<(u64, Vec<u8>)> {
        self.events
            .iter()
            .filter(|(seq, _)| *seq > self.delivered)
            .cloned()
            .collect()
    }

    /// Every message was written and the answer among them
    pub(crate) fn done(&self) -> bool {
        self.finished && self.delivered + 1 >= self.next_seq
    }

    /// Drops the messages already written (a stream that is never resumed)
    pub(crate) fn forget_delivered(&mut self) {
        while self
            .events
            .front()
            .is_some_and(|(seq, _)| *seq <= self.delivered)
        {
            self.events.pop_front();
        }
    }

    /// The sequence number of the last message, 0 before any
    pub(crate) fn last_seq(&self) -> u64 {
        self.next_seq - 1
    }
}

/// `<stream>-<seq>`
pub(crate) fn event_id(stream: u64, seq: u64) -> String {
    format!("{stream}-{seq}")
}

/// The stream and sequence number a `Last-Event-ID` names, if it is one of ours
pub(crate) fn parse_event_id(id: &str) -> Option<(u64, u64)> {
    let (stream, seq) = id.trim().split_once('-')?;
    Some((stream.parse().ok()?, seq.parse().ok()?))
}
