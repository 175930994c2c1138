//! Shared setup of the fuzz targets: a pair driven to Ready, then one side fed the input
//!
//! Oracle: nothing panics, and every frame the fuzzed session writes is one line of valid
//! JSON-RPC (`mcp_sansio::jsonrpc::decode` accepts every message in it).

use std::time::{Duration, Instant};

use mcp_sansio::jsonrpc::{self, Decoded};
use mcp_sansio::session::{Role, TASKS_EXTENSION};
use mcp_sansio::testing::Pair;
use mcp_sansio::{EraMode, ProtocolVersion, RequestOptions, Session};
use serde_json::json;

/// A ready pair chosen by `selector`: era, tasks, state key; the client has requests in
/// flight so fuzzed responses can match them
pub fn ready_pair(selector: u8) -> Pair {
    let era = match selector % 4 {
        0 => EraMode::Modern,
        1 => EraMode::Legacy(ProtocolVersion::V2025_11_25),
        2 => EraMode::Legacy(ProtocolVersion::V2025_03_26),
        _ => EraMode::Auto,
    };
    let mut client = Pair::client_config(era);
    let mut server = Pair::server_config();
    if selector & 4 != 0 {
        client.capabilities["extensions"] = json!({ TASKS_EXTENSION: {} });
        client.capabilities["tasks"] = json!({"requests": {"elicitation": {"create": {}}}});
        server.capabilities["extensions"] = json!({ TASKS_EXTENSION: {} });
        server.capabilities["tasks"] =
            json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}});
    }
    if selector & 8 != 0 {
        server.state_key = Some([3; 32]);
    }
    #[allow(clippy::disallowed_methods)]
    let now = Instant::now();
    let mut pair = Pair::new(now, client, server);
    pair.drive();
    let params = serde_json::value::RawValue::from_string(r#"{"name":"t"}"#.into()).unwrap();
    for as_task in [false, true] {
        let mut o = RequestOptions::default();
        if as_task {
            o = o.as_task(None);
        }
        let _ = pair
            .client
            .send_request_raw(pair.now, "tools/call", Some(params.clone()), o);
    }
    pair.drive();
    pair
}

/// Drains a session, checking every frame
pub fn drain<R: Role>(s: &mut Session<R>) {
    let mut buf = Vec::new();
    while let Some(t) = s.poll_transmit(&mut buf) {
        assert_eq!(t.len, buf.len());
        assert_eq!(buf.last(), Some(&b'\n'));
        let text = std::str::from_utf8(&buf[..buf.len() - 1]).expect("UTF-8 output");
        assert!(!text.contains('\n'), "one frame per line: {text}");
        match jsonrpc::decode(text) {
            Decoded::Single(m) => assert!(m.is_ok(), "invalid JSON-RPC written: {text}"),
            Decoded::Batch(items) => {
                assert!(items.iter().all(Result::is_ok), "invalid batch: {text}")
            }
            _ => {}
        }
        buf.clear();
    }
    while s.poll_event().is_some() {}
}

/// Feeds `data` to `s` in chunks cut by the data's own bytes, then a timeout and EOF
pub fn feed<R: Role>(s: &mut Session<R>, now: Instant, data: &[u8]) {
    let (cut, data) = data.split_first().unwrap_or((&0, &[]));
    let step = usize::from(*cut % 64) + 1;
    for chunk in data.chunks(step) {
        s.handle_bytes(now, chunk);
        drain(s);
    }
    s.handle_timeout(now + Duration::from_secs(30));
    drain(s);
    s.handle_eof(now + Duration::from_secs(31));
    drain(s);
    s.handle_timeout(now + Duration::from_secs(3600));
    drain(s);
}
