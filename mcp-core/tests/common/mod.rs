//! Helpers shared by the integration tests
#![allow(dead_code, unreachable_pub)]

use std::time::Instant;

use serde_json::value::RawValue;

/// An arbitrary origin for the fake clock; nothing reads the real clock after this
#[allow(clippy::disallowed_methods)]
pub fn origin() -> Instant {
    Instant::now()
}

/// Raw JSON from a `serde_json::Value`
pub fn raw(v: serde_json::Value) -> Box<RawValue> {
    RawValue::from_string(v.to_string()).unwrap()
}
