//! Newline-delimited JSON framing, as used by the stdio transport
//!
//! Each message is one line of UTF-8 JSON ending in `\n` (a `\r\n` ending is accepted too).
//! [`LineCodec`] splits incoming bytes into such lines; [`encode_frame`] writes one.

use std::collections::VecDeque;

use super::error::{FrameError, too_long_told};
use super::skim::{Skim, Skimmed};

/// Splits a byte stream into newline-terminated frames, bounded in memory.
///
/// Create one per connection, [`push`](Self::push) every chunk read from the transport, then
/// call [`next_frame`](Self::next_frame) until it returns `None`. At end of input call
/// [`finish`](Self::finish) until it returns `None` to collect a last line that had no newline.
///
/// A line longer than the limit is dropped as it arrives (never buffered whole) and reported
/// once as [`FrameError::TooLong`]; blank and whitespace-only lines are skipped silently.
#[derive(Debug, Clone)]
pub struct LineCodec {
    /// Received bytes; `buf[start..]` is unconsumed.
    buf: Vec<u8>,
    /// Start of the first unconsumed line.
    start: usize,
    /// Just past the last `\n` in `buf` (or `start` when there is none): `buf[tail..]` is the
    /// partial line and holds no `\n`, so it never needs scanning again.
    tail: usize,
    /// Positions in `buf` where a dropped oversize line stood, in order, with what its
    /// bytes told (`None` while it is still being discarded); each is reported as
    /// `TooLong` once reading reaches it and its end was seen.
    dropped_at: VecDeque<(usize, Option<Skimmed>)>,
    /// The current partial line was dropped for being too long: discard input up to and
    /// including its `\n`, skimming it as it passes.
    discarding: Option<Box<Skim>>,
    max_frame_len: usize,
}

impl LineCodec {
    /// Releases the buffer's spare capacity (an idle connection keeps only what is unread)
    pub(crate) fn shrink_to_fit(&mut self) {
        self.compact();
        self.buf.shrink_to_fit();
        self.dropped_at.shrink_to_fit();
    }

    /// Creates an empty codec that accepts frames of at most `max_frame_len` bytes.
    ///
    /// The limit excludes the line terminator. Memory use stays around `max_frame_len` plus
    /// the size of one pushed chunk, whatever the peer sends.
    pub fn new(max_frame_len: usize) -> Self {
        Self {
            buf: Vec::new(),
            start: 0,
            tail: 0,
            dropped_at: VecDeque::new(),
            discarding: None,
            max_frame_len,
        }
    }

    /// Appends bytes read from the transport.
    ///
    /// Call it with each chunk as it is read, then drain [`next_frame`](Self::next_frame).
    /// It never fails: if the current partial line grows past the limit, what was buffered of
    /// it is dropped, a [`FrameError::TooLong`] is queued for that line, and input is
    /// discarded up to and including the line's next `\n`.
    pub fn push(&mut self, data: &[u8]) {
        let mut data = data;
        if let Some(skim) = &mut self.discarding {
            match memchr::memchr(b'\n', data) {
                None => {
                    skim.feed(data);
                    return;
                }
                Some(i) => {
                    skim.feed(&data[..i]);
                    self.end_discarding();
                    data = &data[i + 1..];
                }
            }
        }
        if data.is_empty() {
            return;
        }
        if self.start > 0 && self.start >= self.buf.len() / 2 {
            self.compact();
        }
        let old_len = self.buf.len();
        self.buf.extend_from_slice(data);
        // Scan backwards: only the new partial line is read here; the complete lines before
        // it are scanned once, forwards, by `next_frame`.
        if let Some(i) = memchr::memrchr(b'\n', data) {
            self.tail = old_len + i + 1;
        }
        // One byte of slack: a line of exactly the limit may still be waiting for the `\n`
        // of its `\r\n`.
        if self.buf.len() - self.tail > self.max_frame_len.saturating_add(1) {
            let mut skim = Box::<Skim>::default();
            skim.feed(&self.buf[self.tail..]);
            self.buf.truncate(self.tail);
            self.dropped_at.push_back((self.tail, None));
            self.discarding = Some(skim);
        }
    }

    /// The dropped line ended: what it told goes with its `TooLong`
    fn end_discarding(&mut self) {
        if let Some(skim) = self.discarding.take()
            && let Some((_, told)) = self.dropped_at.back_mut()
        {
            *told = Some(skim.finish());
        }
    }

    /// Returns the next complete frame, without its `\n` or `\r\n`.
    ///
    /// Call it after [`push`](Self::push) until it returns `None`, which means more bytes are
    /// needed. A line over the limit yields [`FrameError::TooLong`] and one that is not UTF-8
    /// yields [`FrameError::InvalidUtf8`]; reading continues with the next line either way.
    /// Blank lines and lines of only spaces, tabs and `\r` are skipped (unless over the limit).
    pub fn next_frame(&mut self) -> Option<Result<&str, FrameError>> {
        let line = self.next_line()?;
        Some(self.as_frame(line))
    }

    /// Ends the input: returns the remaining frames, then a last line that had no newline.
    ///
    /// Call it when the transport reports end of input, repeatedly until it returns `None`.
    /// It yields whatever [`next_frame`](Self::next_frame) still would, then the unterminated
    /// last line (a trailing `\r` is dropped) or its error, unless that line is blank.
    /// Once it has returned `None` the codec is empty and may be reused.
    pub fn finish(&mut self) -> Option<Result<&str, FrameError>> {
        let line = match self.next_line() {
            Some(line) => line,
            None => self.last_line()?,
        };
        Some(self.as_frame(line))
    }

    /// Returns how many received bytes are not yet consumed.
    ///
    /// Use it for backpressure accounting: after `next_frame` has returned `None` this is the
    /// partial last line, never more than `max_frame_len + 1` bytes.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.start
    }

    /// Finds the next complete non-blank line: its byte range, or why it was rejected.
    fn next_line(&mut self) -> Option<Result<(usize, usize), FrameError>> {
        loop {
            if let Some((at, told)) = self.dropped_at.front()
                && *at == self.start
            {
                // A line still being dropped is reported once its end was seen.
                let told = told.clone()?;
                self.dropped_at.pop_front();
                return Some(Err(self.too_long_told(told)));
            }
            if self.start == self.tail {
                self.compact();
                return None;
            }
            let begin = self.start;
            let newline = begin
                + memchr::memchr(b'\n', &self.buf[begin..self.tail])
                    .expect("buf[..tail] ends with a newline");
            self.start = newline + 1;
            let end = if newline > begin && self.buf[newline - 1] == b'\r' {
                newline - 1
            } else {
                newline
            };
            if let Some(line) = self.check(begin, end) {
                return Some(line);
            }
        }
    }

    /// Takes the unterminated partial line at end of input, unless it is blank.
    ///
    /// Only called once `next_line` has returned `None` (and so compacted the buffer).
    fn last_line(&mut self) -> Option<Result<(usize, usize), FrameError>> {
        if self.discarding.is_some() {
            // The input ended inside a dropped line: report it with what it told.
            self.end_discarding();
            if let Some((_, Some(told))) = self.dropped_at.pop_front() {
                return Some(Err(self.too_long_told(told)));
            }
        }
        let begin = self.start;
        let mut end = self.buf.len();
        self.start = end;
        self.tail = end;
        if end > begin && self.buf[end - 1] == b'\r' {
            end -= 1;
        }
        self.check(begin, end)
    }

    /// Turns a line's byte range into the frame text.
    fn as_frame(&self, line: Result<(usize, usize), FrameError>) -> Result<&str, FrameError> {
        let (begin, end) = line?;
        std::str::from_utf8(&self.buf[begin..end]).map_err(|_| FrameError::InvalidUtf8)
    }

    fn too_long_told(&self, told: Skimmed) -> FrameError {
        FrameError::TooLong {
            limit: self.max_frame_len,
            size: Some(told.size),
            id: told.id,
            request: told.method,
        }
    }

    /// Checks the line `buf[begin..end]` (terminator removed): `None` when it is blank.
    fn check(&self, begin: usize, end: usize) -> Option<Result<(usize, usize), FrameError>> {
        let line = &self.buf[begin..end];
        if line.len() > self.max_frame_len {
            Some(Err(too_long_told(self.max_frame_len, line)))
        } else if line.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r')) {
            None
        } else {
            Some(Ok((begin, end)))
        }
    }

    /// Forgets the consumed bytes at the front of the buffer, keeping its capacity.
    fn compact(&mut self) {
        let consumed = self.start;
        if consumed == 0 {
            return;
        }
        self.buf.drain(..consumed);
        self.start = 0;
        self.tail -= consumed;
        for (at, _) in &mut self.dropped_at {
            *at -= consumed;
        }
    }
}

/// Appends one frame to `out`: the serialized JSON message and a `\n`.
///
/// Call it with the bytes of one JSON value serialized without newlines (as
/// `serde_json::to_writer` produces); write `out` to the transport when convenient.
pub fn encode_frame(out: &mut Vec<u8>, json: &[u8]) {
    debug_assert!(
        !json.contains(&b'\n'),
        "a newline-delimited frame must not contain a newline"
    );
    out.reserve(json.len() + 1);
    out.extend_from_slice(json);
    out.push(b'\n');
}
