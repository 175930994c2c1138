//! The framing codecs (newline-delimited JSON and server-sent events) fed arbitrary bytes at
//! arbitrary split points
//!
//! Oracle: nothing panics; every ndjson frame is within the limit and holds no newline; the
//! frames and errors are the same however the input is split (whole, byte by byte, or at the
//! fuzzer's cut points); the same holds for SSE events; each SSE event's data is within its
//! limit.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_sansio::codec::{LineCodec, SseDecoder};

const LIMIT: usize = 256;

fn lines(chunks: &[&[u8]]) -> Vec<Result<String, String>> {
    let mut codec = LineCodec::new(LIMIT);
    let mut out = Vec::new();
    let mut take = |codec: &mut LineCodec, out: &mut Vec<_>| {
        while let Some(f) = codec.next_frame() {
            let f = f.map(str::to_owned).map_err(|e| format!("{e:?}"));
            if let Ok(text) = &f {
                assert!(text.len() <= LIMIT, "frame over the limit");
                assert!(!text.contains('\n'), "a frame holds a newline");
            }
            out.push(f);
        }
        assert!(codec.buffered() <= LIMIT + 1 + chunks.iter().map(|c| c.len()).max().unwrap_or(0));
    };
    for c in chunks {
        codec.push(c);
        take(&mut codec, &mut out);
    }
    while let Some(f) = codec.finish() {
        out.push(f.map(str::to_owned).map_err(|e| format!("{e:?}")));
    }
    out
}

fn events(chunks: &[&[u8]]) -> Vec<String> {
    let mut decoder = SseDecoder::new(LIMIT);
    let mut out = Vec::new();
    let take = |d: &mut SseDecoder, out: &mut Vec<String>| {
        while let Some(e) = d.next_event() {
            if let Ok(e) = &e {
                assert!(e.data.len() <= LIMIT, "event data over the limit");
            }
            out.push(format!("{e:?}"));
        }
    };
    for c in chunks {
        decoder.push(c);
        take(&mut decoder, &mut out);
    }
    decoder.finish();
    take(&mut decoder, &mut out);
    out.push(format!("{:?} {:?}", decoder.last_event_id(), decoder.retry()));
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&cut, data)) = data.split_first() else {
        return;
    };
    let step = usize::from(cut % 32) + 1;
    let whole = [data];
    let bytes: Vec<&[u8]> = data.chunks(1).collect();
    let cuts: Vec<&[u8]> = data.chunks(step).collect();
    let reference = lines(&whole);
    assert_eq!(lines(&bytes), reference, "ndjson: byte by byte differs from whole");
    assert_eq!(lines(&cuts), reference, "ndjson: split by {step} differs from whole");
    let reference = events(&whole);
    assert_eq!(events(&bytes), reference, "sse: byte by byte differs from whole");
    assert_eq!(events(&cuts), reference, "sse: split by {step} differs from whole");
});
