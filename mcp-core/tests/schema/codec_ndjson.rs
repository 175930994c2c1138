//! Newline-delimited JSON framing: every input fed whole, byte by byte and at random splits.

use mcp_sansio::codec::{FrameError, LineCodec, encode_frame};
use mcp_sansio::jsonrpc::RequestId;
use proptest::prelude::*;

type Out = Vec<Result<String, FrameError>>;

/// Feeds `chunks` one by one, draining after each, then drains `finish`.
fn run(max: usize, chunks: &[&[u8]]) -> Out {
    let mut codec = LineCodec::new(max);
    let mut out = Vec::new();
    for chunk in chunks {
        codec.push(chunk);
        assert!(codec.buffered() <= max + 1 + chunk.len());
        while let Some(frame) = codec.next_frame() {
            out.push(plain(frame.map(str::to_owned)));
        }
        assert!(codec.buffered() <= max + 1, "partial line bounded");
    }
    while let Some(frame) = codec.finish() {
        out.push(plain(frame.map(str::to_owned)));
    }
    assert_eq!(codec.buffered(), 0);
    assert!(codec.next_frame().is_none());
    out
}

/// The frame with what an oversize line told left out (these tests are about framing; the
/// skimmed fields have tests of their own below)
fn plain(frame: Result<String, FrameError>) -> Result<String, FrameError> {
    match frame {
        Err(FrameError::TooLong { limit, .. }) => Err(too_long_error(limit)),
        other => other,
    }
}

fn too_long_error(limit: usize) -> FrameError {
    FrameError::TooLong {
        limit,
        size: None,
        id: None,
        request: false,
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
fn decode(max: usize, input: &[u8]) -> Out {
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

fn ok(s: &str) -> Result<String, FrameError> {
    Ok(s.to_owned())
}

fn too_long(limit: usize) -> Result<String, FrameError> {
    Err(too_long_error(limit))
}

#[test]
fn lf_and_crlf_endings() {
    assert_eq!(
        decode(100, b"{\"a\":1}\n{\"b\":2}\r\n[3]\n"),
        [ok("{\"a\":1}"), ok("{\"b\":2}"), ok("[3]")]
    );
}

#[test]
fn blank_and_whitespace_lines_are_skipped() {
    assert_eq!(
        decode(100, b"\n\r\n  \n\t \r\n{}\n \r \n\r\r\n[]\n\n"),
        [ok("{}"), ok("[]")]
    );
}

#[test]
fn leading_and_trailing_spaces_are_kept_in_frames() {
    assert_eq!(decode(100, b" {} \n"), [ok(" {} ")]);
}

#[test]
fn frame_of_exactly_the_limit_is_accepted() {
    let line = "x".repeat(10);
    let input = format!("{line}\n{line}\r\n");
    assert_eq!(decode(10, input.as_bytes()), [ok(&line), ok(&line)]);
}

#[test]
fn frame_one_over_the_limit_is_rejected() {
    let input = format!("{}\n{}\r\nok\n", "x".repeat(11), "y".repeat(11));
    assert_eq!(
        decode(10, input.as_bytes()),
        [too_long(10), too_long(10), ok("ok")]
    );
}

#[test]
fn oversize_line_reported_once_and_next_line_arrives() {
    let input = format!("first\n{}\nsecond\n", "z".repeat(1000));
    assert_eq!(
        decode(16, input.as_bytes()),
        [ok("first"), too_long(16), ok("second")]
    );
}

#[test]
fn consecutive_oversize_lines_each_reported() {
    let input = format!("{0}\n{0}\na\n{0}", "q".repeat(50));
    assert_eq!(
        decode(8, input.as_bytes()),
        [too_long(8), too_long(8), ok("a"), too_long(8)]
    );
}

#[test]
fn oversize_whitespace_line_is_still_too_long() {
    let input = format!("{}\n{{}}\n", " ".repeat(50));
    assert_eq!(decode(8, input.as_bytes()), [too_long(8), ok("{}")]);
}

#[test]
fn oversize_line_is_dropped_as_it_arrives() {
    let mut codec = LineCodec::new(8);
    for _ in 0..1000 {
        codec.push(b"0123456789");
        assert!(codec.buffered() <= 10);
    }
    // Reported once its end is seen, with its size.
    assert_eq!(codec.next_frame(), None);
    codec.push(b"789\n{}\n");
    assert_eq!(
        codec.next_frame(),
        Some(Err(FrameError::TooLong {
            limit: 8,
            size: Some(10_003),
            id: None,
            request: false
        }))
    );
    assert_eq!(codec.next_frame(), Some(Ok("{}")));
    assert_eq!(codec.next_frame(), None);
    assert_eq!(codec.buffered(), 0);
}

#[test]
fn an_oversize_line_tells_its_size_id_and_method_however_it_arrives() {
    let payload = "y".repeat(5000);
    let answer = format!("{{\"jsonrpc\":\"2.0\",\"id\":17,\"result\":{{\"t\":\"{payload}\"}}}}");
    let request =
        format!("{{\"jsonrpc\":\"2.0\",\"id\":\"r-1\",\"method\":\"x\",\"params\":\"{payload}\"}}");
    let input = format!("{answer}\r\n{request}\n{{}}\n");
    let expected = [
        Err(FrameError::TooLong {
            limit: 100,
            size: Some(answer.len() as u64),
            id: Some(RequestId::Number(17)),
            request: false,
        }),
        Err(FrameError::TooLong {
            limit: 100,
            size: Some(request.len() as u64),
            id: Some(RequestId::String("r-1".into())),
            request: true,
        }),
        ok("{}"),
    ];
    let input = input.as_bytes();
    for chunk in [input.len(), 1, 7, 64, 101] {
        let mut codec = LineCodec::new(100);
        let mut out = Vec::new();
        for piece in input.chunks(chunk) {
            codec.push(piece);
            while let Some(frame) = codec.next_frame() {
                out.push(frame.map(str::to_owned));
            }
        }
        assert_eq!(out, expected, "chunks of {chunk}");
    }
    // Cut off by the end of input: what arrived is told.
    let mut codec = LineCodec::new(100);
    codec.push(&input[..300]);
    assert_eq!(codec.next_frame(), None);
    assert_eq!(
        codec.finish(),
        Some(Err(FrameError::TooLong {
            limit: 100,
            size: Some(300),
            id: Some(RequestId::Number(17)),
            request: false
        }))
    );
}

#[test]
fn invalid_utf8_line_then_good_line() {
    assert_eq!(
        decode(100, b"{\"a\":\"\xff\xfe\"}\n{\"b\":1}\n"),
        [Err(FrameError::InvalidUtf8), ok("{\"b\":1}")]
    );
}

#[test]
fn multibyte_utf8_survives_splits() {
    assert_eq!(
        decode(100, "{\"é\":\"日本\"}\n".as_bytes()),
        [ok("{\"é\":\"日本\"}")]
    );
}

#[test]
fn finish_returns_unterminated_last_line() {
    assert_eq!(decode(100, b"{}\n[1]"), [ok("{}"), ok("[1]")]);
    assert_eq!(decode(100, b"{}\n[1]\r"), [ok("{}"), ok("[1]")]);
    assert_eq!(decode(4, b"[1]\r"), [ok("[1]")]);
    assert_eq!(decode(4, b"12345"), [too_long(4)]);
    assert_eq!(
        decode(100, b"{}\n\xc3"),
        [ok("{}"), Err(FrameError::InvalidUtf8)]
    );
}

#[test]
fn finish_without_trailing_data() {
    assert_eq!(decode(100, b"{}\n"), [ok("{}")]);
    assert_eq!(decode(100, b"{}\n  \t"), [ok("{}")]);
    assert_eq!(decode(100, b""), []);
}

#[test]
fn finish_yields_frames_not_yet_taken_then_empties() {
    let mut codec = LineCodec::new(100);
    codec.push(b"a\nb\nc");
    assert_eq!(codec.finish(), Some(Ok("a")));
    assert_eq!(codec.finish(), Some(Ok("b")));
    assert_eq!(codec.finish(), Some(Ok("c")));
    assert_eq!(codec.finish(), None);
    assert_eq!(codec.buffered(), 0);
    codec.push(b"d\n");
    assert_eq!(codec.next_frame(), Some(Ok("d")));
}

#[test]
fn frames_pushed_without_draining_keep_their_order() {
    let mut codec = LineCodec::new(4);
    codec.push(b"a\n");
    codec.push(b"toolong");
    codec.push(b"!\nb\nlonger");
    codec.push(b"\nc\n");
    let mut got = Vec::new();
    while let Some(frame) = codec.next_frame() {
        got.push(plain(frame.map(str::to_owned)));
    }
    assert_eq!(got, [ok("a"), too_long(4), ok("b"), too_long(4), ok("c")]);
}

#[test]
fn encode_frame_appends_newline() {
    let mut out = b"{}\n".to_vec();
    encode_frame(&mut out, b"[1,2]");
    assert_eq!(out, b"{}\n[1,2]\n");
}

#[test]
fn error_messages_are_readable() {
    assert_eq!(too_long_error(5).to_string(), "message larger than 5 bytes");
    assert_eq!(
        FrameError::InvalidUtf8.to_string(),
        "message is not valid UTF-8"
    );
}

/// The frames a list of strings should decode to: blank ones vanish, and one trailing
/// `\r` is lost, as `\r\n` is a line ending.
fn expected_frames(frames: &[String]) -> Out {
    frames
        .iter()
        .filter(|f| !f.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\r')))
        .map(|f| Ok(f.strip_suffix('\r').unwrap_or(f).to_owned()))
        .collect()
}

proptest! {
    #![proptest_config(crate::common::beside_source(ProptestConfig::default()))]
    #[test]
    fn frames_round_trip_at_any_split(
        frames in prop::collection::vec("[^\n]{0,40}", 0..12),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let mut input = Vec::new();
        for frame in &frames {
            encode_frame(&mut input, frame.as_bytes());
        }
        let mut cuts: Vec<usize> = cuts.iter().map(|i| i.index(input.len() + 1)).collect();
        cuts.sort_unstable();
        let got = run(200, &split_at(&input, &cuts));
        prop_assert_eq!(got, expected_frames(&frames));
    }

    #[test]
    fn garbage_never_panics_and_stays_bounded(
        max in 0usize..64,
        chunks in prop::collection::vec(
            prop::collection::vec(prop::sample::select(vec![b'\n', b'\r', b' ', b'a', b'{', 0xff]), 0..100),
            0..20,
        ),
    ) {
        let chunks: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
        let got = run(max, &chunks);
        let whole: Vec<u8> = chunks.concat();
        prop_assert_eq!(got, run(max, &[&whole]));
    }

    #[test]
    fn arbitrary_bytes_never_panic(
        max in 0usize..64,
        input in prop::collection::vec(any::<u8>(), 0..400),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let mut cuts: Vec<usize> = cuts.iter().map(|i| i.index(input.len() + 1)).collect();
        cuts.sort_unstable();
        prop_assert_eq!(run(max, &split_at(&input, &cuts)), run(max, &[&input]));
    }
}
