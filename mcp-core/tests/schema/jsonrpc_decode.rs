//! Every classification rule of `jsonrpc::decode`, as a table

use mcp_sansio::jsonrpc::{Decoded, Invalid, Message, RequestId, code, decode};

/// One line per decoded entry, so the table reads like the rules.
fn describe(entry: &Result<Message, Invalid>) -> String {
    let id = |id: Option<&RequestId>| id.map_or("-".to_owned(), ToString::to_string);
    let raw = |raw: Option<&serde_json::value::RawValue>| raw.map_or("-", |r| r.get()).to_owned();
    match entry {
        Ok(Message::Request(r)) => format!(
            "request id={} method={:?} params={}",
            r.id,
            r.method,
            raw(r.params.as_deref())
        ),
        Ok(Message::Notification(n)) => {
            format!(
                "notification method={:?} params={}",
                n.method,
                raw(n.params.as_deref())
            )
        }
        Ok(Message::Response(r)) => match &r.outcome {
            Ok(result) => format!("result id={} {}", id(r.id.as_ref()), result.get()),
            Err(e) => format!(
                "error id={} code={} message={:?} data={}",
                id(r.id.as_ref()),
                e.code,
                e.message,
                raw(e.data.as_deref())
            ),
        },
        Ok(other) => format!("unexpected {other:?}"),
        Err(invalid) => format!(
            "{} id={} code={} {}",
            if invalid.answerable { "reply" } else { "drop" },
            id(invalid.id.as_ref()),
            invalid.error.code,
            invalid.error.message
        ),
    }
}

fn single(frame: &str) -> String {
    match decode(frame) {
        Decoded::Single(entry) => describe(&entry),
        other => format!("unexpected {other:?}"),
    }
}

/// Compares exactly, or by prefix when `want` ends with "...".
fn check(frame: &str, got: &str, want: &str) {
    let ok = match want.strip_suffix("...") {
        Some(prefix) => got.starts_with(prefix),
        None => got == want,
    };
    assert!(ok, "frame: {frame}\n got: {got}\nwant: {want}");
}

const IR: i64 = code::INVALID_REQUEST;

#[test]
fn classification_table() {
    let table: &[(&str, String)] = &[
        // Requests and notifications
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"request id=1 method="ping" params=-"#.into(),
        ),
        (
            r#"{"jsonrpc":"2.0","id":"a","method":"m","params":{"x":[1]}}"#,
            r#"request id="a" method="m" params={"x":[1]}"#.into(),
        ),
        (
            r#"{"jsonrpc":"2.0","id":-5,"method":"m","params":[1,2]}"#,
            r#"request id=-5 method="m" params=[1,2]"#.into(),
        ),
        (
            r#"{"jsonrpc":"2.0","id":9223372036854775807,"method":"m"}"#,
            r#"request id=9223372036854775807 method="m" params=-"#.into(),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"notification method="notifications/initialized" params=-"#.into(),
        ),
        (
            r#"  {"method":"m","jsonrpc":"2.0","extra":{"deep":[1,{}]},"params":{}}  "#,
            r#"notification method="m" params={}"#.into(),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{}}"#,
            r#"request id=1 method="tools/call" params={}"#.into(),
        ),
        (
            r#"{"jsonrpc":"2.0","id":"\u00e9\ud83d\ude00","method":"\u0074ools/call"}"#,
            r#"request id="é😀" method="tools/call" params=-"#.into(),
        ),
        (
            r#"{"\u006aSONrpc":"1","jsonrpc":"\u0032.0","id":1,"method":"m"}"#,
            r#"request id=1 method="m" params=-"#.into(),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"m","result":{}}"#,
            r#"request id=1 method="m" params=-"#.into(),
        ),
        // Bad ids on a request: INVALID_REQUEST without an id
        (
            r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#,
            format!(
                "reply id=- code={IR} Invalid request: id must be a string or an integer, not null"
            ),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#,
            format!(
                "reply id=- code={IR} Invalid request: id must be a string or an integer, not a number with a fraction or an exponent"
            ),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1.0,"method":"m"}"#,
            format!(
                "reply id=- code={IR} Invalid request: id must be a string or an integer, not a number with a fraction or an exponent"
            ),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1e2,"method":"m"}"#,
            format!(
                "reply id=- code={IR} Invalid request: id must be a string or an integer, not a number with a fraction or an exponent"
            ),
        ),
        (
            r#"{"jsonrpc":"2.0","id":true,"method":"m"}"#,
            format!(
                "reply id=- code={IR} Invalid request: id must be a string or an integer, not a boolean"
            ),
        ),
        (
            r#"{"jsonrpc":"2.0","id":{},"method":"m"}"#,
            format!(
                "reply id=- code={IR} Invalid request: id must be a string or an integer, not an object"
            ),
        ),
        (
            r#"{"jsonrpc":"2.0","id":[1],"method":"m"}"#,
            format!(
                "reply id=- code={IR} Invalid request: id must be a string or an integer, not an array"
            ),
        ),
        (
            r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"m"}"#,
            format!(
                "reply id=- code={IR} Invalid request: id must be a string or an integer between -2^63 and 2^63-1"
            ),
        ),
        (
            r#"{"jsonrpc":"2.0","id":-9223372036854775809,"method":"m"}"#,
            format!(
                "reply id=- code={IR} Invalid request: id must be a string or an integer between -2^63 and 2^63-1"
            ),
        ),
        (
            r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"m"}"#,
            format!(
                "reply id=- code={IR} Invalid request: id must be a string or an integer between -2^63 and 2^63-1"
            ),
        ),
        // jsonrpc member
        (
            r#"{"jsonrpc":"1.0","id":1,"method":"m"}"#,
            format!(r#"reply id=1 code={IR} Invalid request: "jsonrpc" must be "2.0""#),
        ),
        (
            r#"{"jsonrpc":2.0,"id":1,"method":"m"}"#,
            format!(r#"reply id=1 code={IR} Invalid request: "jsonrpc" must be "2.0""#),
        ),
        (
            r#"{"id":"x","method":"m"}"#,
            format!(
                r#"reply id="x" code={IR} Invalid request: "jsonrpc" is missing; it must be "2.0""#
            ),
        ),
        (
            r#"{"jsonrpc":null,"method":"m"}"#,
            format!(r#"reply id=- code={IR} Invalid request: "jsonrpc" must be "2.0""#),
        ),
        // method and params
        (
            r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
            format!(r#"reply id=1 code={IR} Invalid request: "method" must be a string"#),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":null}"#,
            format!(r#"reply id=1 code={IR} Invalid request: "method" must be a string"#),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":"str"}"#,
            format!(
                r#"reply id=1 code={IR} Invalid request: "params" must be an object or an array"#
            ),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":null}"#,
            format!(
                r#"reply id=1 code={IR} Invalid request: "params" must be an object or an array"#
            ),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"m","params":3}"#,
            format!(
                r#"reply id=- code={IR} Invalid request: "params" must be an object or an array"#
            ),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1}"#,
            format!(r#"reply id=1 code={IR} Invalid request: "method" is missing"#),
        ),
        (
            r#"{}"#,
            format!(
                r#"reply id=- code={IR} Invalid request: "jsonrpc" is missing; it must be "2.0""#
            ),
        ),
        // duplicate members
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}"#,
            format!(r#"reply id=1 code={IR} Invalid request: "method" appears more than once"#),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"a"}"#,
            format!(r#"reply id=- code={IR} Invalid request: "id" appears more than once"#),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"result":1,"result":2}"#,
            format!(r#"drop id=1 code={IR} Invalid response: "result" appears more than once"#),
        ),
        // Responses
        (
            r#"{"jsonrpc":"2.0","id":1,"result":{"ok":true}}"#,
            r#"result id=1 {"ok":true}"#.into(),
        ),
        (
            r#"{"jsonrpc":"2.0","id":"r","result":null}"#,
            r#"result id="r" null"#.into(),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found: x"}}"#,
            r#"error id=1 code=-32601 message="Method not found: x" data=-"#.into(),
        ),
        (
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"at":3}}}"#,
            r#"error id=- code=-32700 message="Parse error" data={"at":3}"#.into(),
        ),
        (
            r#"{"jsonrpc":"2.0","error":{"code":1,"message":"m","data":null,"more":1}}"#,
            r#"error id=- code=1 message="m" data=null"#.into(),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}"#,
            format!(r#"drop id=1 code={IR} Invalid response: it has both "result" and "error""#),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":"1","message":"m"}}"#,
            format!(
                r#"drop id=1 code={IR} Invalid response: "error" must have an integer "code" and a string "message" (invalid type: string..."#
            ),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":1.0,"message":"m"}}"#,
            format!(
                r#"drop id=1 code={IR} Invalid response: "error" must have an integer "code"..."#
            ),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":1}}"#,
            format!(
                r#"drop id=1 code={IR} Invalid response: "error" must have an integer "code" and a string "message" (missing field `message`..."#
            ),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"error":"boom"}"#,
            format!(
                r#"drop id=1 code={IR} Invalid response: "error" must be an object, not a string"#
            ),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"error":[1,"m"]}"#,
            format!(
                r#"drop id=1 code={IR} Invalid response: "error" must be an object, not an array"#
            ),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1.5,"error":{"code":1,"message":"m"}}"#,
            format!(
                "drop id=- code={IR} Invalid response: id must be a string or an integer, not a number with a fraction or an exponent or null"
            ),
        ),
        (
            r#"{"jsonrpc":"2.0","result":{}}"#,
            format!(r#"drop id=- code={IR} Invalid response: a result needs an "id""#),
        ),
        (
            r#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
            format!(
                "drop id=- code={IR} Invalid response: id must be a string or an integer, not null"
            ),
        ),
        (
            r#"{"jsonrpc":"2.0","id":true,"result":{}}"#,
            format!(
                "drop id=- code={IR} Invalid response: id must be a string or an integer, not a boolean"
            ),
        ),
        (
            r#"{"jsonrpc":"1.0","id":1,"result":{}}"#,
            format!(r#"drop id=1 code={IR} Invalid response: "jsonrpc" must be "2.0""#),
        ),
        // Not an object
        (
            "42",
            format!(
                "reply id=- code={IR} Invalid request: a message must be a JSON object, not a number"
            ),
        ),
        (
            r#""str""#,
            format!(
                "reply id=- code={IR} Invalid request: a message must be a JSON object, not a string"
            ),
        ),
        (
            "null",
            format!(
                "reply id=- code={IR} Invalid request: a message must be a JSON object, not null"
            ),
        ),
        (
            " true ",
            format!(
                "reply id=- code={IR} Invalid request: a message must be a JSON object, not a boolean"
            ),
        ),
        (
            "[]",
            format!("reply id=- code={IR} Invalid request: the batch is empty"),
        ),
        (
            " [ ] ",
            format!("reply id=- code={IR} Invalid request: the batch is empty"),
        ),
        // Not JSON
        (
            "",
            format!(
                "reply id=- code={} Parse error: EOF while parsing a value...",
                code::PARSE_ERROR
            ),
        ),
        (
            "   ",
            format!("reply id=- code={} Parse error: EOF...", code::PARSE_ERROR),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"m""#,
            format!(
                "reply id=- code={} Parse error: EOF while parsing an object...",
                code::PARSE_ERROR
            ),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"m"} x"#,
            format!(
                "reply id=- code={} Parse error: trailing characters...",
                code::PARSE_ERROR
            ),
        ),
        (
            r#"{"jsonrpc":"2.0",}"#,
            format!("reply id=- code={} Parse error: ...", code::PARSE_ERROR),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"id":2,"#,
            format!("reply id=- code={} Parse error: ...", code::PARSE_ERROR),
        ),
        (
            "[1,",
            format!("reply id=- code={} Parse error: ...", code::PARSE_ERROR),
        ),
        (
            "nul",
            format!("reply id=- code={} Parse error: ...", code::PARSE_ERROR),
        ),
        (
            "\u{feff}{}",
            format!("reply id=- code={} Parse error: ...", code::PARSE_ERROR),
        ),
        // Lone surrogate escapes fit the JSON grammar; they fail only where a string is read.
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"\ud800"}"#,
            format!(
                r#"reply id=1 code={IR} Invalid request: "method" has an unpaired surrogate escape"#
            ),
        ),
        (
            r#"{"jsonrpc":"2.0","id":"\udc00x","method":"m"}"#,
            format!(
                "reply id=- code={IR} Invalid request: id must be a string or an integer, and this string has an unpaired surrogate escape"
            ),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"m","params":{"\ud800":"\udfff"}}"#,
            r#"notification method="m" params={"\ud800":"\udfff"}"#.into(),
        ),
    ];
    for (frame, want) in table {
        check(frame, &single(frame), want);
    }
}

#[test]
fn batch_with_mixed_entries() {
    let frame = r#"[
        {"jsonrpc":"2.0","id":1,"method":"a","params":{"k" : "v"}},
        1,
        {"jsonrpc":"2.0","method":"n"},
        {"jsonrpc":"2.0","id":null,"method":"b"},
        [],
        {"jsonrpc":"2.0","id":2,"result":[]},
        {"jsonrpc":"2.0","id":3,"result":1,"error":{"code":1,"message":"m"}},
        {"jsonrpc":"2.0","id":4,"method":"c","method":"c"}
    ]"#;
    let Decoded::Batch(entries) = decode(frame) else {
        panic!("not a batch: {:?}", decode(frame));
    };
    let got: Vec<String> = entries.iter().map(describe).collect();
    assert_eq!(
        got,
        [
            r#"request id=1 method="a" params={"k" : "v"}"#.to_owned(),
            format!(
                "reply id=- code={IR} Invalid request: a batch entry must be a JSON object, not a number"
            ),
            r#"notification method="n" params=-"#.to_owned(),
            format!(
                "reply id=- code={IR} Invalid request: id must be a string or an integer, not null"
            ),
            format!(
                "reply id=- code={IR} Invalid request: a batch entry must be a JSON object, not an array"
            ),
            "result id=2 []".to_owned(),
            format!(r#"drop id=3 code={IR} Invalid response: it has both "result" and "error""#),
            format!(r#"reply id=4 code={IR} Invalid request: "method" appears more than once"#),
        ]
    );
}

#[test]
fn single_entry_batch_is_still_a_batch() {
    let Decoded::Batch(entries) = decode(r#"[{"jsonrpc":"2.0","method":"n"}]"#) else {
        panic!("not a batch");
    };
    assert_eq!(entries.len(), 1);
    let Decoded::Batch(entries) = decode("[1]") else {
        panic!("not a batch");
    };
    check(
        "[1]",
        &describe(&entries[0]),
        &format!(
            "reply id=- code={IR} Invalid request: a batch entry must be a JSON object, not a number"
        ),
    );
}

#[test]
fn deep_nesting_does_not_overflow() {
    // Unbalanced: a parse error, not a stack overflow.
    for open in [
        "[",
        "{\"a\":",
        "{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":[",
    ] {
        let frame = format!("{}{}", open, "[".repeat(10_000));
        check(
            &frame,
            &single(&frame),
            &format!("reply id=- code={} Parse error: EOF...", code::PARSE_ERROR),
        );
    }
    // Balanced: valid JSON, skipped without recursion and kept raw.
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let frame = format!(r#"{{"jsonrpc":"2.0","method":"m","params":{deep}}}"#);
    let Decoded::Single(Ok(Message::Notification(n))) = decode(&frame) else {
        panic!("deep params not accepted");
    };
    assert_eq!(n.params.as_deref().map(|p| p.get()), Some(deep.as_str()));
    let Decoded::Batch(entries) = decode(&deep) else {
        panic!("not a batch");
    };
    assert_eq!(entries.len(), 1);
    assert!(
        entries[0]
            .as_ref()
            .is_err_and(|e| e.answerable && e.error.code == IR)
    );
}

#[test]
fn raw_values_are_kept_byte_for_byte() {
    let params = "{\"a\" : 1,\n \"b\":[ 1.50, 1e3, \"\\u00e9\" ] }";
    let frame = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{params}}}"#);
    let Decoded::Single(Ok(Message::Request(r))) = decode(&frame) else {
        panic!("not a request");
    };
    assert_eq!(r.params.unwrap().get(), params);

    let data = r#"{ "why" : "x" }"#;
    let result = "[ 1.0 ,2 ]";
    let frame = format!(
        r#"[{{"jsonrpc":"2.0","id":1,"result":{result}}},{{"jsonrpc":"2.0","id":2,"error":{{"code":1,"message":"m","data":{data}}}}}]"#
    );
    let Decoded::Batch(entries) = decode(&frame) else {
        panic!("not a batch");
    };
    let [Ok(Message::Response(ok)), Ok(Message::Response(err))] = &entries[..] else {
        panic!("not two responses: {entries:?}");
    };
    assert_eq!(ok.outcome.as_ref().unwrap().get(), result);
    let error = err.outcome.as_ref().unwrap_err();
    assert_eq!(error.data.as_deref().unwrap().get(), data);
}
