//! Framing: newline-delimited JSON and server-sent events
