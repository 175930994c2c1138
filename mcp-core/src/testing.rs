//! A deterministic test kit: a [`ClientSession`] and a [`ServerSession`] joined in memory, on a
//! fake clock
//!
//! Enable the `testing` feature. Nothing sleeps: time moves only when the test calls
//! [`Pair::advance`], and timers fire at the exact instants the sessions asked for. Bytes can
//! be delivered whole, byte by byte or at seeded random split points, and either direction can
//! be paused to stage races.
//!
//! ```
//! use std::time::{Duration, Instant};
//! use mcp_sansio::testing::Pair;
//! use mcp_sansio::{ClientEvent, ProtocolVersion};
//!
//! let mut pair = Pair::legacy(Instant::now(), ProtocolVersion::V2025_11_25);
//! pair.drive();
//! assert!(matches!(pair.client_events().as_slice(), [ClientEvent::Ready { .. }]));
//! pair.advance(Duration::from_secs(5));
//! ```

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::session::{
    ClientConfig, ClientEvent, ClientSession, EraMode, Role, ServerConfig, ServerEvent,
    ServerSession, Session,
};
use crate::{Implementation, ProtocolVersion};

/// Which end of a [`Pair`] a message came from or goes to
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Side {
    /// The client session
    Client,
    /// The server session
    Server,
}

/// How bytes are cut when moved between the sessions
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Chunking {
    /// Everything queued, in one `handle_bytes` call
    Whole,
    /// One byte per `handle_bytes` call
    ByteByByte,
    /// Random split points from a seeded generator (the same seed always cuts the same way)
    Random(u64),
}

/// A client and a server session joined by in-memory pipes, on a fake clock
#[derive(Debug)]
pub struct Pair {
    /// The client session
    pub client: ClientSession,
    /// The server session
    pub server: ServerSession,
    /// The fake clock's current instant
    pub now: Instant,
    /// How bytes are cut on their way
    pub chunking: Chunking,
    client_events: VecDeque<ClientEvent>,
    server_events: VecDeque<ServerEvent>,
    to_client: Vec<u8>,
    to_server: Vec<u8>,
    paused_to_client: bool,
    paused_to_server: bool,
    transcript: Vec<(Side, String)>,
    rng: u64,
}

impl Pair {
    /// A pair from two configurations; nothing is moved until [`drive`](Self::drive)
    pub fn new(now: Instant, client: ClientConfig, server: ServerConfig) -> Self {
        Self {
            client: ClientSession::new(Arc::new(client), now),
            server: ServerSession::new(Arc::new(server), now),
            now,
            chunking: Chunking::Whole,
            client_events: VecDeque::new(),
            server_events: VecDeque::new(),
            to_client: Vec::new(),
            to_server: Vec::new(),
            paused_to_client: false,
            paused_to_server: false,
            transcript: Vec::new(),
            rng: 0x9E37_79B9_7F4A_7C15,
        }
    }

    /// A client configuration with every client capability (`roots`, `sampling`,
    /// `elicitation`) in the given era mode
    pub fn client_config(era: EraMode) -> ClientConfig {
        let mut c = ClientConfig::new(Implementation::new("test-client", "1.0.0"));
        c.capabilities = json!({"roots": {"listChanged": true}, "sampling": {}, "elicitation": {}});
        c.era = era;
        c
    }

    /// A server configuration with tools, resources (with subscriptions), prompts, logging and
    /// completions
    pub fn server_config() -> ServerConfig {
        let mut s = ServerConfig::new(Implementation::new("test-server", "1.0.0"));
        s.capabilities = json!({
            "tools": {"listChanged": true},
            "resources": {"subscribe": true, "listChanged": true},
            "prompts": {},
            "logging": {},
            "completions": {}
        });
        s
    }

    /// A pair whose client will use the legacy handshake offering `version`
    pub fn legacy(now: Instant, version: ProtocolVersion) -> Self {
        Self::new(
            now,
            Self::client_config(EraMode::Legacy(version)),
            Self::server_config(),
        )
    }

    /// A pair whose client uses the modern era (2026-07-28)
    pub fn modern(now: Instant) -> Self {
        Self::new(
            now,
            Self::client_config(EraMode::Modern),
            Self::server_config(),
        )
    }

    /// Moves bytes both ways and collects events until both sessions are quiet
    ///
    /// Does not move the clock. Paused directions keep their bytes.
    pub fn drive(&mut self) {
        loop {
            let mut moved = false;
            let mut buf = Vec::new();
            while self.client.poll_transmit(&mut buf).is_some() {
                self.transcript.push((Side::Client, frame_text(&buf)));
                self.to_server.extend_from_slice(&buf);
                buf.clear();
            }
            while self.server.poll_transmit(&mut buf).is_some() {
                self.transcript.push((Side::Server, frame_text(&buf)));
                self.to_client.extend_from_slice(&buf);
                buf.clear();
            }
            if !self.paused_to_server && !self.to_server.is_empty() {
                let bytes = std::mem::take(&mut self.to_server);
                self.deliver(Side::Server, &bytes);
                moved = true;
            }
            if !self.paused_to_client && !self.to_client.is_empty() {
                let bytes = std::mem::take(&mut self.to_client);
                self.deliver(Side::Client, &bytes);
                moved = true;
            }
            while let Some(e) = self.client.poll_event() {
                self.client_events.push_back(e);
                moved = true;
            }
            while let Some(e) = self.server.poll_event() {
                self.server_events.push_back(e);
                moved = true;
            }
            // What is due now (input that waited while a side was behind) is handled now.
            if self.client.poll_timeout().is_some_and(|t| t <= self.now) {
                self.client.handle_timeout(self.now);
                moved = true;
            }
            if self.server.poll_timeout().is_some_and(|t| t <= self.now) {
                self.server.handle_timeout(self.now);
                moved = true;
            }
            if !moved {
                return;
            }
        }
    }

    fn deliver(&mut self, to: Side, bytes: &[u8]) {
        let now = self.now;
        let mut chunks = Vec::new();
        match self.chunking {
            Chunking::Whole => chunks.push(bytes),
            Chunking::ByteByByte => chunks.extend(bytes.chunks(1)),
            Chunking::Random(seed) => {
                if self.rng == 0x9E37_79B9_7F4A_7C15 {
                    self.rng ^= seed;
                }
                let mut rest = bytes;
                while !rest.is_empty() {
                    let n = 1 + (self.next_random() as usize % rest.len().min(64));
                    let (head, tail) = rest.split_at(n);
                    chunks.push(head);
                    rest = tail;
                }
            }
        }
        for chunk in chunks {
            match to {
                Side::Client => self.client.handle_bytes(now, chunk),
                Side::Server => self.server.handle_bytes(now, chunk),
            }
        }
    }

    fn next_random(&mut self) -> u64 {
        // xorshift64*: deterministic and good enough for split points
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Moves the clock forward by `by`, firing every timer at its own deadline on the way,
    /// and drives after each
    pub fn advance(&mut self, by: Duration) {
        let target = self.now + by;
        loop {
            let next = [self.client.poll_timeout(), self.server.poll_timeout()]
                .into_iter()
                .flatten()
                .min();
            match next {
                Some(t) if t <= target => {
                    self.now = self.now.max(t);
                    self.client.handle_timeout(self.now);
                    self.server.handle_timeout(self.now);
                    self.drive();
                }
                _ => break,
            }
        }
        self.now = target;
        self.client.handle_timeout(target);
        self.server.handle_timeout(target);
        self.drive();
    }

    /// Stops delivering bytes to `to` until [`resume`](Self::resume); they are kept in order
    pub fn pause(&mut self, to: Side) {
        match to {
            Side::Client => self.paused_to_client = true,
            Side::Server => self.paused_to_server = true,
        }
    }

    /// Delivers held bytes to `to` again (on the next [`drive`](Self::drive))
    pub fn resume(&mut self, to: Side) {
        match to {
            Side::Client => self.paused_to_client = false,
            Side::Server => self.paused_to_server = false,
        }
    }

    /// Throws away the bytes held for `to` (a lossy pipe)
    pub fn discard_held(&mut self, to: Side) {
        match to {
            Side::Client => self.to_client.clear(),
            Side::Server => self.to_server.clear(),
        }
    }

    /// Bytes held for `to` (written by the other side, not yet delivered)
    pub fn held_len(&self, to: Side) -> usize {
        match to {
            Side::Client => self.to_client.len(),
            Side::Server => self.to_server.len(),
        }
    }

    /// Keeps only the first `len` bytes held for `to`: a writer that died in the middle of
    /// a write
    pub fn truncate_held(&mut self, to: Side, len: usize) {
        match to {
            Side::Client => self.to_client.truncate(len),
            Side::Server => self.to_server.truncate(len),
        }
    }

    /// Feeds raw bytes to one session as if the other had sent them, then drives
    pub fn inject(&mut self, to: Side, bytes: &[u8]) {
        self.deliver(to, bytes);
        self.drive();
    }

    /// Takes the events the client emitted so far
    pub fn client_events(&mut self) -> Vec<ClientEvent> {
        self.client_events.drain(..).collect()
    }

    /// Takes the events the server emitted so far
    pub fn server_events(&mut self) -> Vec<ServerEvent> {
        self.server_events.drain(..).collect()
    }

    /// Every message moved so far, with the side that sent it, oldest first
    pub fn transcript(&self) -> &[(Side, String)] {
        &self.transcript
    }

    /// Takes the transcript
    pub fn take_transcript(&mut self) -> Vec<(Side, String)> {
        std::mem::take(&mut self.transcript)
    }

    /// The messages `side` sent so far (in the [`transcript`](Self::transcript)), parsed,
    /// oldest first
    ///
    /// # Panics
    ///
    /// If a frame is not JSON (the sessions only write JSON).
    pub fn sent_by(&self, side: Side) -> Vec<Value> {
        self.transcript
            .iter()
            .filter(|(s, _)| *s == side)
            .map(|(_, text)| {
                serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
            })
            .collect()
    }
}

/// One session driven by hand: fed JSON lines as if from a (possibly misbehaving) peer, its
/// output read back as JSON, on a fake clock
///
/// Where [`Pair`] joins two real sessions, `Wire` plays the peer itself: the test writes
/// exactly the bytes the peer sends, so it can send what no correct peer would.
///
/// ```
/// use std::time::Instant;
/// use mcp_sansio::testing::{Pair, Wire};
///
/// let mut server = Wire::server(Pair::server_config(), Instant::now());
/// server.feed_line("{not json");
/// let out = server.one_out();
/// assert_eq!(out["error"]["code"], -32700);
/// ```
#[derive(Debug)]
pub struct Wire<R: Role> {
    /// The session under test
    pub session: Session<R>,
    /// The fake clock: every input is given this instant
    pub now: Instant,
}

impl Wire<crate::session::role::Server> {
    /// A fresh server session
    pub fn server(config: ServerConfig, now: Instant) -> Self {
        Self {
            session: ServerSession::new(Arc::new(config), now),
            now,
        }
    }
}

impl Wire<crate::session::role::Client> {
    /// A fresh client session (its first output is its handshake)
    pub fn client(config: ClientConfig, now: Instant) -> Self {
        Self {
            session: ClientSession::new(Arc::new(config), now),
            now,
        }
    }
}

impl<R: Role> Wire<R> {
    /// Feeds one message as a line
    pub fn feed(&mut self, message: &Value) {
        self.feed_line(&message.to_string());
    }

    /// Feeds one hand-written line (a newline is appended)
    pub fn feed_line(&mut self, line: &str) {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        self.session.handle_bytes(self.now, &bytes);
    }

    /// Feeds bytes exactly as they are
    pub fn feed_bytes(&mut self, bytes: &[u8]) {
        self.session.handle_bytes(self.now, bytes);
    }

    /// Moves the clock on and fires the timers due
    pub fn advance(&mut self, by: Duration) {
        self.now += by;
        self.session.handle_timeout(self.now);
    }

    /// Everything transmitted since the last call, one text per transmit, newline stripped
    ///
    /// # Panics
    ///
    /// If a transmit is not exactly one line ending in a newline, or `Transmit::len` does not
    /// count the bytes it appended.
    pub fn out_lines(&mut self) -> Vec<String> {
        let mut lines = Vec::new();
        let mut buf = Vec::new();
        while let Some(t) = self.session.poll_transmit(&mut buf) {
            assert_eq!(t.len, buf.len(), "Transmit::len counts the appended bytes");
            assert_eq!(buf.last(), Some(&b'\n'), "every transmit ends in a newline");
            let text = std::str::from_utf8(&buf[..buf.len() - 1]).expect("output is UTF-8");
            assert!(!text.contains('\n'), "one message per transmit: {text}");
            lines.push(text.to_owned());
            buf.clear();
        }
        lines
    }

    /// Everything transmitted since the last call, parsed
    ///
    /// # Panics
    ///
    /// As [`out_lines`](Self::out_lines), and if a line is not JSON.
    pub fn out(&mut self) -> Vec<Value> {
        self.out_lines()
            .iter()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect()
    }

    /// Exactly one message transmitted since the last call
    ///
    /// # Panics
    ///
    /// If there is not exactly one.
    pub fn one_out(&mut self) -> Value {
        let mut out = self.out();
        assert_eq!(out.len(), 1, "expected one message, got {out:#?}");
        out.pop().expect("one")
    }

    /// Every event queued since the last call
    pub fn events(&mut self) -> Vec<R::Event> {
        drain_events(&mut self.session)
    }

    /// Calls `handle_timeout` if `poll_timeout` is due at the fake clock's instant, as a
    /// binding's timer would; whether it was
    pub fn handle_due(&mut self) -> bool {
        let due = self.session.poll_timeout().is_some_and(|t| t <= self.now);
        if due {
            self.session.handle_timeout(self.now);
        }
        due
    }
}

/// Raw JSON of any serializable value: `raw(json!({...}))` for `send_request_raw`,
/// `respond_raw` and the like
///
/// # Panics
///
/// If `value` does not serialize (a map with non-string keys).
pub fn raw(value: impl Serialize) -> Box<RawValue> {
    serde_json::value::to_raw_value(&value).expect("the value serializes to JSON")
}

/// Takes every event `session` has queued, oldest first
pub fn drain_events<R: Role>(session: &mut Session<R>) -> Vec<R::Event> {
    std::iter::from_fn(|| session.poll_event()).collect()
}

fn frame_text(buf: &[u8]) -> String {
    String::from_utf8_lossy(buf).trim_end().to_owned()
}
