//! Server-sent events, as used by the Streamable HTTP transport
//!
//! [`SseDecoder`] interprets an event stream by the WHATWG HTML rules ("event stream
//! interpretation"); [`encode_event`] and [`encode_comment`] write one.

use std::collections::VecDeque;

use super::error::FrameError;

/// One dispatched server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SseEvent {
    /// The event type from the `event:` field; `None` means the default, `"message"`.
    pub event: Option<String>,
    /// The `data:` lines of the event joined with `\n`.
    pub data: String,
    /// The last event ID, if this event carried a (non-empty) `id:` field.
    pub id: Option<String>,
    /// The reconnection delay in milliseconds, if this event carried a valid `retry:` field.
    pub retry: Option<u64>,
}

/// Interprets a server-sent event stream, bounded in memory.
///
/// Create one per response body, [`push`](Self::push) every chunk read, then call
/// [`next_event`](Self::next_event) until it returns `None`. When the body ends call
/// [`finish`](Self::finish); the decoder keeps [`last_event_id`](Self::last_event_id) and
/// [`retry`](Self::retry) for the reconnection and may be fed the next stream.
#[derive(Debug, Clone)]
pub struct SseDecoder {
    /// The partial line received so far (lines are handled as soon as they end).
    line: Vec<u8>,
    /// The last byte was a `\r` ending a line: a `\n` right after it belongs to that line.
    after_cr: bool,
    /// No byte of the stream handled yet: a leading byte-order mark is still to be skipped.
    at_start: bool,
    /// The rest of the current line is dropped unread.
    dropping_line: bool,
    /// The current event is being skipped after an error, up to its blank line.
    skipping_event: bool,
    /// Bytes of the field lines of the current event so far.
    event_size: usize,
    /// Event type buffer; empty means `"message"`.
    event_type: String,
    /// Data buffer: each `data:` value followed by `\n`.
    data: String,
    /// Last event ID buffer: set by `id:` lines, committed at each blank line.
    id_buffer: Option<String>,
    /// Whether the current event had an accepted `id:` line.
    event_has_id: bool,
    /// The `retry:` value of the current event, if any.
    event_retry: Option<u64>,
    /// The last event ID string, as committed at the last blank line.
    last_event_id: Option<String>,
    /// The reconnection time from the last valid `retry:` field.
    retry: Option<u64>,
    /// Dispatched events and errors not yet returned.
    ready: VecDeque<Result<SseEvent, FrameError>>,
    max_event_size: usize,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

impl SseDecoder {
    /// Creates a decoder that accepts events of at most `max_event_size` bytes.
    ///
    /// The size of an event counts the bytes of its field lines (`data:`, `event:`, `id:`,
    /// `retry:` and unknown ones; comments and line terminators excluded). Memory use stays
    /// around `max_event_size` plus one pushed chunk and the events not yet taken.
    pub fn new(max_event_size: usize) -> Self {
        Self {
            line: Vec::new(),
            after_cr: false,
            at_start: true,
            dropping_line: false,
            skipping_event: false,
            event_size: 0,
            event_type: String::new(),
            data: String::new(),
            id_buffer: None,
            event_has_id: false,
            event_retry: None,
            last_event_id: None,
            retry: None,
            ready: VecDeque::new(),
            max_event_size,
        }
    }

    /// Appends bytes of the event stream and interprets every line they complete.
    ///
    /// Call it with each chunk as it is read, then drain [`next_event`](Self::next_event).
    /// It never fails: an oversize or non-UTF-8 event is queued as an error in stream order.
    pub fn push(&mut self, data: &[u8]) {
        let mut data = data;
        if self.at_start {
            let wanted = BOM.len() - self.line.len();
            let take = wanted.min(data.len());
            self.line.extend_from_slice(&data[..take]);
            data = &data[take..];
            if !BOM.starts_with(&self.line) {
                // Not a byte-order mark: those bytes are the start of the first line.
                self.at_start = false;
                let held = std::mem::take(&mut self.line);
                self.push_lines(&held);
                self.push_lines(data);
                return;
            }
            if self.line.len() < BOM.len() {
                return;
            }
            self.at_start = false;
            self.line.clear();
        }
        self.push_lines(data);
    }

    /// Returns the next dispatched event, or the error for a rejected event.
    ///
    /// Call it after [`push`](Self::push) until it returns `None`, which means more bytes are
    /// needed. [`FrameError::TooLong`] means an event outgrew the limit and
    /// [`FrameError::InvalidUtf8`] that one of its lines was not UTF-8; in both cases the rest
    /// of that event was skipped, its `id:` forgotten, and the events after it still arrive.
    /// (A `retry:` line before the bad one has already taken effect, as the standard says.)
    pub fn next_event(&mut self) -> Option<Result<SseEvent, FrameError>> {
        self.ready.pop_front()
    }

    /// Returns the last event ID, to send as `Last-Event-ID` when reconnecting.
    ///
    /// It is updated at each event's closing blank line, including events with no data
    /// (such as a priming event carrying only an `id:`); an empty `id:` resets it to `None`,
    /// and an `id:` containing U+0000 is ignored. It persists across [`finish`](Self::finish).
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_event_id.as_deref()
    }

    /// Returns the reconnection delay in milliseconds from the last valid `retry:` field.
    ///
    /// A `retry:` value that is not all ASCII digits (or overflows `u64`) is ignored. It
    /// persists across [`finish`](Self::finish).
    pub fn retry(&self) -> Option<u64> {
        self.retry
    }

    /// Ends the stream: an event without its closing blank line is discarded.
    ///
    /// Call it when the response body ends. Events already dispatched stay available from
    /// [`next_event`](Self::next_event); the decoder is then ready for the next stream.
    pub fn finish(&mut self) {
        self.line.clear();
        self.after_cr = false;
        self.at_start = true;
        self.dropping_line = false;
        self.reset_event();
        self.id_buffer.clone_from(&self.last_event_id);
    }

    /// Splits `data` into lines, handling each complete one and keeping the partial last one.
    fn push_lines(&mut self, mut data: &[u8]) {
        if self.after_cr && !data.is_empty() {
            self.after_cr = false;
            if data[0] == b'\n' {
                data = &data[1..];
            }
        }
        while let Some(i) = data.iter().position(|&b| b == b'\n' || b == b'\r') {
            if data[i] == b'\r' {
                match data.get(i + 1) {
                    Some(b'\n') => {
                        self.end_line(&data[..i]);
                        data = &data[i + 2..];
                        continue;
                    }
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            self.end_line(&data[..i]);
            data = &data[i + 1..];
        }
        self.extend_partial(data);
    }

    /// Adds bytes of a line whose end has not arrived, dropping the line if it is too long.
    fn extend_partial(&mut self, part: &[u8]) {
        if part.is_empty() || self.dropping_line {
            return;
        }
        let is_comment = self.line.first().or(part.first()) == Some(&b':');
        if self.skipping_event || is_comment {
            // Only whether the line is blank matters now, and it is not.
            self.line.clear();
            self.dropping_line = true;
            return;
        }
        if self.event_size + self.line.len() + part.len() > self.max_event_size {
            self.line.clear();
            self.dropping_line = true;
            self.reject_event(self.too_long());
            return;
        }
        self.line.extend_from_slice(part);
    }

    /// Handles one complete line: `rest` is its end, after any bytes held in `self.line`.
    fn end_line(&mut self, rest: &[u8]) {
        if self.dropping_line {
            self.dropping_line = false;
            self.line.clear();
            return;
        }
        if self.line.is_empty() {
            self.handle_line(rest);
        } else {
            let mut line = std::mem::take(&mut self.line);
            line.extend_from_slice(rest);
            self.handle_line(&line);
            line.clear();
            self.line = line;
        }
    }

    /// Interprets one complete line (terminator removed).
    fn handle_line(&mut self, line: &[u8]) {
        if line.is_empty() {
            self.dispatch();
            return;
        }
        if self.skipping_event || line[0] == b':' {
            return;
        }
        if self.event_size + line.len() > self.max_event_size {
            self.reject_event(self.too_long());
            return;
        }
        self.event_size += line.len();
        let Ok(line) = std::str::from_utf8(line) else {
            self.reject_event(FrameError::InvalidUtf8);
            return;
        };
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => {
                self.event_type.clear();
                self.event_type.push_str(value);
            }
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
            }
            "id" if !value.contains('\0') => {
                self.id_buffer = (!value.is_empty()).then(|| value.to_owned());
                self.event_has_id = true;
            }
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                if let Ok(ms) = value.parse() {
                    self.retry = Some(ms);
                    self.event_retry = Some(ms);
                }
            }
            _ => {}
        }
    }

    /// Handles a blank line: commits the event ID and dispatches the event if it has data.
    fn dispatch(&mut self) {
        if self.skipping_event {
            self.reset_event();
            return;
        }
        self.last_event_id.clone_from(&self.id_buffer);
        if !self.data.is_empty() {
            let mut data = std::mem::take(&mut self.data);
            data.pop();
            let event = SseEvent {
                event: (!self.event_type.is_empty()).then(|| self.event_type.clone()),
                data,
                id: if self.event_has_id {
                    self.last_event_id.clone()
                } else {
                    None
                },
                retry: self.event_retry,
            };
            self.ready.push_back(Ok(event));
        }
        self.reset_event();
    }

    /// Reports `error` for the current event and skips the rest of it, forgetting its id.
    fn reject_event(&mut self, error: FrameError) {
        self.ready.push_back(Err(error));
        self.skipping_event = true;
        self.id_buffer.clone_from(&self.last_event_id);
    }

    /// Clears the buffers of the current event.
    fn reset_event(&mut self) {
        self.skipping_event = false;
        self.event_size = 0;
        self.event_type.clear();
        self.data.clear();
        self.event_has_id = false;
        self.event_retry = None;
    }

    fn too_long(&self) -> FrameError {
        FrameError::too_long(self.max_event_size)
    }
}

/// Appends one event to `out`.
///
/// Writes `event:`, `id:` and `retry:` lines when given, one `data:` line per `\n`-separated
/// line of `data` (so `data` may span lines, and `""` still makes an event), then the blank
/// line that dispatches it. `event` and `id` must not contain line breaks, `data` no `\r`.
pub fn encode_event(
    out: &mut Vec<u8>,
    event: Option<&str>,
    id: Option<&str>,
    data: &str,
    retry: Option<u64>,
) {
    debug_assert!(
        !event.is_some_and(has_line_break),
        "an SSE event type must not contain a line break"
    );
    debug_assert!(
        !id.is_some_and(|id| has_line_break(id) || id.contains('\0')),
        "an SSE id must not contain a line break or U+0000"
    );
    debug_assert!(!data.contains('\r'), "SSE data must not contain '\\r'");
    if let Some(event) = event {
        write_field(out, "event", event);
    }
    if let Some(id) = id {
        write_field(out, "id", id);
    }
    if let Some(retry) = retry {
        write_field(out, "retry", &retry.to_string());
    }
    for line in data.split('\n') {
        write_field(out, "data", line);
    }
    out.push(b'\n');
}

/// Appends a comment to `out`, which receivers ignore.
///
/// Send one periodically as a keep-alive so that proxies do not close an idle stream.
/// `text` must not contain line breaks.
pub fn encode_comment(out: &mut Vec<u8>, text: &str) {
    debug_assert!(
        !has_line_break(text),
        "an SSE comment must not contain a line break"
    );
    out.extend_from_slice(b": ");
    out.extend_from_slice(text.as_bytes());
    out.extend_from_slice(b"\n\n");
}

/// Writes `name: value\n`, or `name:\n` for an empty value.
fn write_field(out: &mut Vec<u8>, name: &str, value: &str) {
    out.extend_from_slice(name.as_bytes());
    out.push(b':');
    if !value.is_empty() {
        out.push(b' ');
        out.extend_from_slice(value.as_bytes());
    }
    out.push(b'\n');
}

fn has_line_break(s: &str) -> bool {
    s.contains(['\n', '\r'])
}
