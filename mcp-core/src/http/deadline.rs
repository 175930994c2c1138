//! How long a connection may take to send a request: the header-read, body-read and idle
//! keep-alive deadlines of [`HttpConfig`], as a small machine per connection
//!
//! A binding with its own HTTP/1.1 framing keeps one [`ReadDeadline`] per connection, tells
//! it where the connection is (head started, head read, body read, response written) and
//! waits for its reads no longer than [`ReadDeadline::deadline`]; when that passes,
//! [`ReadDeadline::expiry`] says what to do. A binding on an HTTP library maps the three
//! durations onto the library's own timeouts.

use std::time::Instant;

use super::config::HttpConfig;

/// What a connection is waiting for
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadPhase {
    /// The rest of a request head ([`HttpConfig::header_read_timeout`])
    Head,
    /// The rest of a request body ([`HttpConfig::body_read_timeout`])
    Body,
    /// Nothing: a response is being written (no read deadline)
    Responding,
    /// The next request on a kept-alive connection ([`HttpConfig::keep_alive_timeout`])
    Idle,
}

/// What the binding does when a connection's read deadline passed
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Expiry {
    /// Answer `408 Request Timeout` (with `Connection: close`), then close
    RequestTimeout,
    /// Close the connection without a response (an idle keep-alive connection)
    Close,
}

impl Expiry {
    /// The status to answer before closing, if any
    pub fn status(self) -> Option<u16> {
        match self {
            Self::RequestTimeout => Some(408),
            Self::Close => None,
        }
    }
}

/// One connection's read deadline
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadDeadline {
    phase: ReadPhase,
    since: Instant,
}

impl ReadDeadline {
    /// A connection accepted at `now`: its first request head is due
    pub fn accepted(now: Instant) -> Self {
        Self {
            phase: ReadPhase::Head,
            since: now,
        }
    }

    /// What the connection waits for
    pub fn phase(&self) -> ReadPhase {
        self.phase
    }

    /// The first byte of a request arrived on an idle connection (a later request's head
    /// is due); in any other phase nothing changes
    pub fn head_started(&mut self, now: Instant) {
        if self.phase == ReadPhase::Idle {
            self.set(ReadPhase::Head, now);
        }
    }

    /// The request head is complete: its body is due
    pub fn head_read(&mut self, now: Instant) {
        self.set(ReadPhase::Body, now);
    }

    /// The request body is complete: no read deadline while the response is written
    pub fn body_read(&mut self, now: Instant) {
        self.set(ReadPhase::Responding, now);
    }

    /// The response ended and the connection stays open: the idle deadline runs
    pub fn response_written(&mut self, now: Instant) {
        self.set(ReadPhase::Idle, now);
    }

    /// When the current wait ends, under `config`'s deadlines; `None` while responding
    pub fn deadline(&self, config: &HttpConfig) -> Option<Instant> {
        let limit = match self.phase {
            ReadPhase::Head => config.header_read_timeout,
            ReadPhase::Body => config.body_read_timeout,
            ReadPhase::Idle => config.keep_alive_timeout,
            ReadPhase::Responding => return None,
        };
        Some(self.since + limit)
    }

    /// What to do once [`deadline`](Self::deadline) passed: 408 for a request that did not
    /// arrive in time, a silent close for an idle connection
    pub fn expiry(&self) -> Expiry {
        match self.phase {
            ReadPhase::Idle => Expiry::Close,
            _ => Expiry::RequestTimeout,
        }
    }

    /// Whether the deadline passed at `now`
    pub fn expired(&self, config: &HttpConfig, now: Instant) -> bool {
        self.deadline(config).is_some_and(|d| now >= d)
    }

    fn set(&mut self, phase: ReadPhase, now: Instant) {
        self.phase = phase;
        self.since = now;
    }
}
