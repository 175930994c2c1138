//! Typed access is cheap: decoding a `tools/call` request's params reads only the params
//! text the envelope decoder already cut out, never the envelope again
//!
//! `cargo bench -p mcp-sansio --bench typed`

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_sansio::jsonrpc::{self, Decoded, Message};
use mcp_sansio::schema::CallToolParams;
use mcp_sansio::schema::method::{CallTool, Method};
use serde::Deserialize;

const FRAME: &str = r#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"_meta":{"progressToken":42,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{},"elicitation":{}},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"}},"name":"echo","arguments":{"text":"hello world"}}}"#;

/// What a decoder without a raw envelope would do: parse the whole message into types
#[derive(Deserialize)]
#[allow(dead_code)]
struct WholeRequest {
    jsonrpc: String,
    id: jsonrpc::RequestId,
    method: String,
    params: CallToolParams,
}

fn typed(c: &mut Criterion) {
    let mut group = c.benchmark_group("tools_call_decode");
    group.bench_function("envelope_only", |b| {
        b.iter(|| black_box(jsonrpc::decode(black_box(FRAME))));
    });
    let Decoded::Single(Ok(Message::Request(request))) = jsonrpc::decode(FRAME) else {
        panic!("a request")
    };
    let params = request.params.expect("params");
    group.bench_function("typed_params_from_raw", |b| {
        b.iter(|| {
            let p: <CallTool as Method>::Params =
                serde_json::from_str(black_box(params.get())).expect("valid");
            black_box(p)
        });
    });
    group.bench_function("envelope_then_typed_params", |b| {
        b.iter(|| {
            let Decoded::Single(Ok(Message::Request(r))) = jsonrpc::decode(black_box(FRAME)) else {
                panic!("a request")
            };
            let p: CallToolParams =
                serde_json::from_str(r.params.as_deref().expect("params").get()).expect("valid");
            black_box(p)
        });
    });
    group.bench_function("whole_message_typed_serde", |b| {
        b.iter(|| {
            black_box(serde_json::from_str::<WholeRequest>(black_box(FRAME)).expect("valid"))
        });
    });
    group.finish();
}

criterion_group!(benches, typed);
criterion_main!(benches);
