//! Server-sent events: every input fed whole, byte by byte and at random splits.

use mcp_sansio::codec::{FrameError, SseDecoder, SseEvent, encode_comment, encode_event};
use proptest::prelude::*;

/// Everything observable after decoding a stream.
#[derive(Debug, PartialEq)]
struct Decoded {
    events: Vec<Result<SseEvent, FrameError>>,
    last_event_id: Option<String>,
    retry: Option<u64>,
}

/// Feeds `chunks` one by one, draining after each, then finishes the stream.
fn run(max: usize, chunks: &[&[u8]]) -> Decoded {
    let mut decoder = SseDecoder::new(max);
    let mut events = Vec::new();
    for chunk in chunks {
        decoder.push(chunk);
        while let Some(event) = decoder.next_event() {
            events.push(event);
        }
    }
    decoder.finish();
    assert_eq!(decoder.next_event(), None);
    Decoded {
        events,
        last_event_id: decoder.last_event_id().map(str::to_owned),
        retry: decoder.retry(),
    }
}

/// Splits `input` at the sorted cut points.
fn split_at<'a>(input: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut chunks = Vec::new();
    let mut last = 0;
    for &cut in cuts {
        chunks.push(&input[last..cut]);
        last = cut;
    }
    chunks.push(&input[last..]);
    chunks
}

/// Small deterministic generator for random split points.
fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// Decodes `input` whole, byte by byte and at 20 random splittings; all must agree.
fn decode(max: usize, input: &[u8]) -> Decoded {
    let whole = run(max, &[input]);
    let bytes: Vec<&[u8]> = input.chunks(1).collect();
    assert_eq!(run(max, &bytes), whole, "byte by byte");
    let mut seed = 0x9E37_79B9_7F4A_7C15 ^ input.len() as u64;
    for _ in 0..20 {
        let mut cuts: Vec<usize> = (0..1 + xorshift(&mut seed) % 5)
            .map(|_| (xorshift(&mut seed) % (input.len() as u64 + 1)) as usize)
            .collect();
        cuts.sort_unstable();
        assert_eq!(
            run(max, &split_at(input, &cuts)),
            whole,
            "split at {cuts:?}"
        );
    }
    whole
}

fn events(input: &str) -> Vec<Result<SseEvent, FrameError>> {
    decode(1000, input.as_bytes()).events
}

/// Builds the expected event (the struct is non-exhaustive outside the crate).
fn ev(event: Option<&str>, data: &str, id: Option<&str>, retry: Option<u64>) -> SseEvent {
    let mut out = Vec::new();
    encode_event(&mut out, event, id, data, retry);
    let mut decoder = SseDecoder::new(usize::MAX);
    decoder.push(&out);
    let got = decoder.next_event().expect("one event").expect("valid");
    assert_eq!(got.event.as_deref(), event.filter(|e| !e.is_empty()));
    assert_eq!(got.data, data);
    assert_eq!(got.id.as_deref(), id.filter(|i| !i.is_empty()));
    assert_eq!(got.retry, retry);
    got
}

fn data(d: &str) -> Result<SseEvent, FrameError> {
    Ok(ev(None, d, None, None))
}

#[test]
fn simple_event_with_all_fields() {
    assert_eq!(
        events("event: update\nid: 7\nretry: 1500\ndata: {\"x\":1}\n\n"),
        [Ok(ev(Some("update"), "{\"x\":1}", Some("7"), Some(1500)))]
    );
}

#[test]
fn multi_line_data_joined_with_newlines() {
    assert_eq!(
        events("data: one\ndata:two\ndata\ndata:  four\n\n"),
        [data("one\ntwo\n\n four")]
    );
}

#[test]
fn comments_are_ignored() {
    assert_eq!(
        events(": keep-alive\n\ndata: a\n: in the middle\ndata: b\n\n:\n\n"),
        [data("a\nb")]
    );
}

#[test]
fn all_line_endings_accepted() {
    assert_eq!(
        events("data: a\r\n\r\ndata: b\r\rdata: c\n\ndata: d\r\ndata: e\r\r\n"),
        [data("a"), data("b"), data("c"), data("d\ne")]
    );
}

#[test]
fn cr_only_line_endings_split_across_chunks() {
    let input = b"data: a\rdata: b\r\rid: 3\r\r";
    let split = run(
        1000,
        &[b"data: a\r", b"data: b\r", b"\r", b"id: 3\r", b"\r"],
    );
    assert_eq!(split.events, [data("a\nb")]);
    assert_eq!(split.last_event_id.as_deref(), Some("3"));
    assert_eq!(decode(1000, input), split);
    // A CR ending one chunk and an LF starting the next make a single line ending.
    let crlf = run(1000, &[b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]);
    assert_eq!(crlf.events, [data("a\nb")]);
}

#[test]
fn event_dispatched_as_soon_as_its_cr_arrives() {
    let mut decoder = SseDecoder::new(1000);
    decoder.push(b"data: now\r\r");
    assert_eq!(decoder.next_event(), Some(data("now")));
}

#[test]
fn bom_at_start_is_skipped() {
    assert_eq!(events("\u{feff}data: a\n\n"), [data("a")]);
    // Only one, and only at the very start.
    assert_eq!(
        events("\u{feff}\u{feff}data: a\n\ndata: b\n\n"),
        [data("b")]
    );
    assert_eq!(events("data: a\n\n\u{feff}data: b\n\n"), [data("a")]);
    // A stream shorter than a BOM, or starting like one.
    assert_eq!(events("\n"), []);
    assert_eq!(decode(1000, b"\xEF\xBB").events, []);
}

#[test]
fn field_without_colon_has_empty_value() {
    assert_eq!(events("data\n\n"), [data("")]);
    assert_eq!(events("data\ndata\n\n"), [data("\n")]);
    assert_eq!(
        events("event\ndata: x\n\n"),
        [data("x")],
        "empty event type means message"
    );
}

#[test]
fn only_one_leading_space_is_stripped() {
    assert_eq!(events("data:  x \n\n"), [data(" x ")]);
    assert_eq!(events("data:x:y\n\n"), [data("x:y")]);
}

#[test]
fn unknown_fields_are_ignored() {
    assert_eq!(events("foo: bar\ndata: a\nData: b\n\n"), [data("a")]);
}

#[test]
fn event_without_data_not_dispatched_but_id_recorded() {
    let decoded = decode(1000, b"id: prime-1\n\n");
    assert_eq!(decoded.events, []);
    assert_eq!(decoded.last_event_id.as_deref(), Some("prime-1"));
    let decoded = decode(1000, b"id: 1\nevent: x\nretry: 10\n\ndata: a\n\n");
    assert_eq!(decoded.events, [data("a")], "event type does not leak");
    assert_eq!(decoded.last_event_id.as_deref(), Some("1"));
    assert_eq!(decoded.retry, Some(10));
}

#[test]
fn last_event_id_persists_and_is_reported_only_with_its_event() {
    let decoded = decode(1000, b"id: 1\ndata: a\n\ndata: b\n\n");
    assert_eq!(
        decoded.events,
        [Ok(ev(None, "a", Some("1"), None)), data("b")]
    );
    assert_eq!(decoded.last_event_id.as_deref(), Some("1"));
}

#[test]
fn id_with_empty_value_resets() {
    let decoded = decode(1000, b"id: 1\ndata: a\n\nid\ndata: b\n\n");
    assert_eq!(
        decoded.events,
        [Ok(ev(None, "a", Some("1"), None)), data("b")]
    );
    assert_eq!(decoded.last_event_id, None);
    assert_eq!(decode(1000, b"id: 1\n\nid:\n\n").last_event_id, None);
}

#[test]
fn id_with_nul_is_ignored() {
    let decoded = decode(1000, b"id: 1\n\nid: a\0b\ndata: x\n\n");
    assert_eq!(decoded.events, [data("x")]);
    assert_eq!(decoded.last_event_id.as_deref(), Some("1"));
}

#[test]
fn id_of_an_incomplete_event_is_discarded_at_finish() {
    let decoded = decode(1000, b"id: 1\n\nid: 2\ndata: x\n");
    assert_eq!(decoded.events, []);
    assert_eq!(decoded.last_event_id.as_deref(), Some("1"));
}

#[test]
fn retry_with_non_digits_ignored() {
    let decoded = decode(
        1000,
        b"retry: 100\n\nretry: 1e3\nretry: -5\nretry: +5\nretry: 5 \nretry:\nretry: 99999999999999999999999\ndata: x\n\n",
    );
    assert_eq!(decoded.events, [data("x")]);
    assert_eq!(decoded.retry, Some(100));
    assert_eq!(decode(1000, b"retry:250\n\n").retry, Some(250));
}

#[test]
fn incomplete_event_discarded_at_finish() {
    assert_eq!(events("data: a\n\ndata: b\n"), [data("a")]);
    assert_eq!(events("data: a\n\ndata: b"), [data("a")]);
}

#[test]
fn decoder_reusable_after_finish() {
    let mut decoder = SseDecoder::new(1000);
    decoder.push(b"id: 4\ndata: a\n\ndata: lost");
    decoder.finish();
    decoder.push(b"\xEF\xBB\xBFdata: b\n\n");
    assert_eq!(
        decoder.next_event(),
        Some(Ok(ev(None, "a", Some("4"), None)))
    );
    assert_eq!(decoder.next_event(), Some(data("b")));
    assert_eq!(decoder.last_event_id(), Some("4"));
}

#[test]
fn oversize_event_reported_once_and_skipped() {
    let big = "x".repeat(100);
    let input = format!("data: a\n\nid: 9\ndata: {big}\ndata: more\nid: 10\n\ndata: b\n\n");
    let decoded = decode(50, input.as_bytes());
    assert_eq!(decoded.events, [data("a"), Err(too_long(50)), data("b")]);
    // Fields of the skipped event after the overflow are not applied, nor is its id.
    assert_eq!(decoded.last_event_id, None);
}

#[test]
fn event_size_limit_is_inclusive() {
    // "data: " + 4 bytes = 10 bytes of field lines.
    assert_eq!(decode(10, b"data: abcd\n\n").events, [data("abcd")]);
    assert_eq!(
        decode(10, b"data: abcde\n\ndata: ok\n\n").events,
        [Err(too_long(10)), data("ok")]
    );
    // The limit is per event, over all of its lines.
    assert_eq!(
        decode(10, b"data: ab\ndata: c\n\n").events,
        [Err(too_long(10))]
    );
}

#[test]
fn long_comments_do_not_count() {
    let input = format!(": {}\ndata: ok\n\n", "c".repeat(500));
    assert_eq!(decode(10, input.as_bytes()).events, [data("ok")]);
}

#[test]
fn oversize_event_is_dropped_as_it_arrives() {
    let mut decoder = SseDecoder::new(64);
    decoder.push(b"data: ");
    for _ in 0..1000 {
        decoder.push(b"0123456789");
    }
    assert_eq!(decoder.next_event(), Some(Err(too_long(64))));
    decoder.push(b"\ndata: more\n\ndata: next\n\n");
    assert_eq!(decoder.next_event(), Some(data("next")));
    assert_eq!(decoder.next_event(), None);
}

#[test]
fn invalid_utf8_line_skips_its_event() {
    assert_eq!(
        decode(1000, b"data: a\ndata: \xff\ndata: c\n\ndata: d\n\n").events,
        [Err(FrameError::InvalidUtf8), data("d")]
    );
}

#[test]
fn encode_writes_expected_bytes() {
    let mut out = Vec::new();
    encode_event(&mut out, Some("msg"), Some("1"), "a\nb", Some(30));
    encode_event(&mut out, None, None, "", None);
    encode_comment(&mut out, "ping");
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "event: msg\nid: 1\nretry: 30\ndata: a\ndata: b\n\ndata:\n\n: ping\n\n"
    );
}

proptest! {
    #![proptest_config(crate::common::beside_source(ProptestConfig::default()))]
    #[test]
    fn events_round_trip_at_any_split(
        sent in prop::collection::vec(
            (
                prop::option::of("[^\r\n]{0,8}"),
                prop::option::of("[^\r\n\0]{0,8}"),
                "[^\r]{0,30}",
                prop::option::of(any::<u64>()),
            ),
            0..8,
        ),
        comment in "[^\r\n]{0,8}",
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let mut input = Vec::new();
        let mut expected = Vec::new();
        let mut last_id = None;
        let mut last_retry = None;
        for (event, id, data, retry) in &sent {
            encode_comment(&mut input, &comment);
            encode_event(&mut input, event.as_deref(), id.as_deref(), data, *retry);
            if let Some(id) = id {
                last_id = Some(id.clone()).filter(|i| !i.is_empty());
            }
            last_retry = retry.or(last_retry);
            expected.push(Ok(ev(event.as_deref(), data, id.as_deref(), *retry)));
        }
        let mut cuts: Vec<usize> = cuts.iter().map(|i| i.index(input.len() + 1)).collect();
        cuts.sort_unstable();
        let decoded = run(usize::MAX, &split_at(&input, &cuts));
        prop_assert_eq!(decoded.events, expected);
        prop_assert_eq!(decoded.last_event_id, last_id);
        prop_assert_eq!(decoded.retry, last_retry);
    }

    #[test]
    fn garbage_never_panics_and_splits_agree(
        max in 0usize..64,
        input in prop::collection::vec(
            prop::sample::select(b"\n\r :adtiyr\xEF\xBB\xBF\xff\0".to_vec()),
            0..300,
        ),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let mut cuts: Vec<usize> = cuts.iter().map(|i| i.index(input.len() + 1)).collect();
        cuts.sort_unstable();
        prop_assert_eq!(run(max, &split_at(&input, &cuts)), run(max, &[&input]));
    }
}

fn too_long(limit: usize) -> FrameError {
    FrameError::TooLong {
        limit,
        size: None,
        id: None,
        request: false,
    }
}
