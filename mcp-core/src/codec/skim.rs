//! What a message too large to keep says about itself: its size, its top-level `id` and
//! whether it has a `method`, read in constant memory as its bytes pass by

use crate::jsonrpc::RequestId;

/// Bytes of an `id` value kept at the most (an id longer than this is not told)
const MAX_ID: usize = 128;
/// Bytes of a member name kept: enough to tell `id`, `method`, `result` and `error`
const MAX_KEY: usize = 8;

/// A streaming reader of one JSON-RPC message's top level
///
/// Tracks strings, escapes and nesting depth only; members inside nested values are not
/// looked at. A message that is not an object yields nothing.
#[derive(Debug, Clone, Default)]
pub(crate) struct Skim {
    size: u64,
    /// The last byte fed: a line's `\r` before its `\n` is not counted
    last: u8,
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// At depth 1, a string here is a member name
    want_key: bool,
    reading_key: bool,
    key: Vec<u8>,
    /// The member whose value is being read at depth 1
    member: Member,
    /// The raw bytes of the `id` value, while and after it is read
    id: Vec<u8>,
    id_state: IdState,
    method: bool,
    not_object: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Member {
    #[default]
    Other,
    Id,
    Method,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum IdState {
    #[default]
    None,
    Reading,
    Done,
    Lost,
}

/// What a skimmed message told
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Skimmed {
    /// Its size in bytes
    pub(crate) size: u64,
    /// Its top-level `id`, if it had a number or a short string there
    pub(crate) id: Option<RequestId>,
    /// Whether it had a top-level `method` (a request or a notification)
    pub(crate) method: bool,
}

impl Skim {
    /// Reads the next bytes of the message
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        self.size += bytes.len() as u64;
        if let Some(&b) = bytes.last() {
            self.last = b;
        }
        if self.not_object {
            return;
        }
        for &b in bytes {
            self.byte(b);
        }
    }

    /// What the message told, once its last byte was fed
    pub(crate) fn finish(&self) -> Skimmed {
        let id = match self.id_state {
            IdState::Done | IdState::Reading => {
                serde_json::from_slice::<RequestId>(self.id.trim_ascii()).ok()
            }
            IdState::None | IdState::Lost => None,
        };
        Skimmed {
            size: self.size - u64::from(self.last == b'\r'),
            id,
            method: self.method,
        }
    }

    fn byte(&mut self, b: u8) {
        let capturing = self.id_state == IdState::Reading;
        if capturing {
            let ends = !self.in_string && self.depth == 1 && (b == b',' || b == b'}');
            if ends {
                self.id_state = IdState::Done;
            } else if self.id.len() < MAX_ID {
                self.id.push(b);
            } else {
                self.id_state = IdState::Lost;
                self.id.clear();
            }
        }
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                if self.reading_key {
                    self.reading_key = false;
                    self.member = match self.key.as_slice() {
                        b"id" => Member::Id,
                        b"method" => Member::Method,
                        _ => Member::Other,
                    };
                }
                return;
            }
            if self.reading_key && self.key.len() <= MAX_KEY {
                self.key.push(b);
            }
            return;
        }
        match b {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.want_key {
                    self.want_key = false;
                    self.reading_key = true;
                    self.key.clear();
                }
            }
            b'{' | b'[' => {
                if self.depth == 0 && b == b'[' {
                    // A batch: not told.
                    self.not_object = true;
                }
                self.depth += 1;
                if self.depth == 1 {
                    self.want_key = true;
                }
            }
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            b':' if self.depth == 1 => match self.member {
                Member::Id if self.id_state == IdState::None => self.id_state = IdState::Reading,
                Member::Method => self.method = true,
                _ => {}
            },
            b',' if self.depth == 1 => self.want_key = true,
            b' ' | b'\t' | b'\r' | b'\n' => {}
            _ if self.depth == 0 => self.not_object = true,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skim(text: &str, chunk: usize) -> Skimmed {
        let mut s = Skim::default();
        for piece in text.as_bytes().chunks(chunk) {
            s.feed(piece);
        }
        s.finish()
    }

    #[test]
    fn a_responses_id_is_told_whatever_the_chunking() {
        let big = "x".repeat(10_000);
        let text = format!(r#"{{"jsonrpc":"2.0","id":42,"result":{{"text":"{big}","id":7}}}}"#);
        for chunk in [1, 3, 64, 100_000] {
            let told = skim(&text, chunk);
            assert_eq!(told.id, Some(RequestId::Number(42)), "{chunk}");
            assert!(!told.method);
            assert_eq!(told.size, text.len() as u64);
        }
    }

    #[test]
    fn an_id_after_the_payload_and_a_string_id_are_told_too() {
        let text =
            r#"{"result":{"content":[{"type":"text","text":"a \"quoted\" id:1"}]}, "id" : "abc" }"#;
        assert_eq!(skim(text, 5).id, Some(RequestId::String("abc".into())));
    }

    #[test]
    fn a_request_is_told_by_its_method() {
        let told = skim(
            r#"{"jsonrpc":"2.0","method":"tools/call","id":3,"params":{}}"#,
            7,
        );
        assert!(told.method);
        assert_eq!(told.id, Some(RequestId::Number(3)));
    }

    #[test]
    fn garbage_and_batches_tell_nothing() {
        for text in [
            "not json at all",
            r#"[{"id":1,"result":{}}]"#,
            r#"{"id":{"nested":1}}"#,
        ] {
            let told = skim(text, 4);
            assert_eq!(told.id, None, "{text}");
            assert!(!told.method, "{text}");
        }
    }
}
