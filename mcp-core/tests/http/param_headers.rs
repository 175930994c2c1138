//! `x-mcp-header` validity (the `http-invalid-tool-headers` conformance rules), filtering
//! of `tools/list`, and the `Mcp-Param-*` value encoding (`http-custom-headers`,
//! `http-custom-header-server-validation`)

use mcp_sansio::http::{
    HeaderParam, HeaderValueError, ToolHeaderError, decode_header_value, encode_header_value,
    filter_tools_list, validate_tool_headers,
};
use mcp_sansio::schema::{ListToolsResult, Tool};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn tool(name: &str, properties: Value) -> Tool {
    let schema = json!({"type": "object", "properties": properties});
    match schema {
        Value::Object(m) => Tool::new(name, m),
        _ => unreachable!(),
    }
}

fn one(name: &str, ty: Value, header: Value) -> Tool {
    tool(name, json!({"p": {"type": ty, "x-mcp-header": header}}))
}

fn params(list: &[(&str, &str)]) -> Vec<HeaderParam> {
    // HeaderParam is non_exhaustive: build through validation of a matching tool
    let properties: Map<String, Value> = list
        .iter()
        .map(|(p, h)| {
            (
                (*p).to_owned(),
                json!({"type": "string", "x-mcp-header": h}),
            )
        })
        .collect();
    validate_tool_headers(&tool("x", Value::Object(properties))).unwrap()
}

#[test]
fn valid_annotations() {
    for ty in ["string", "integer", "boolean"] {
        let got = validate_tool_headers(&one("t", json!(ty), json!("Region"))).unwrap();
        assert_eq!(got.len(), 1, "{ty}");
        assert_eq!(got[0].property, "p");
        assert_eq!(got[0].header, "Mcp-Param-Region");
    }
    // every token character
    let got =
        validate_tool_headers(&one("t", json!("string"), json!("Az09!#$%&'*+-.^_`|~"))).unwrap();
    assert_eq!(got[0].header, "Mcp-Param-Az09!#$%&'*+-.^_`|~");
    // a type array of allowed types
    assert!(validate_tool_headers(&one("t", json!(["string", "integer"]), json!("X"))).is_ok());
    // `Method` is a fine name: it becomes Mcp-Param-Method, not Mcp-Method
    let got = validate_tool_headers(&one("t", json!("string"), json!("Method"))).unwrap();
    assert_eq!(got[0].header, "Mcp-Param-Method");
    // properties without the annotation, of any type, are ignored
    let t = tool(
        "t",
        json!({
            "query": {"type": "string"},
            "float_val": {"type": "number"},
            "obj": {"type": "object"},
            "region": {"type": "string", "x-mcp-header": "Region"},
            "count": {"type": "integer", "x-mcp-header": "Count"},
            "flag": {"type": "boolean", "x-mcp-header": "Flag"}
        }),
    );
    let mut got: Vec<String> = validate_tool_headers(&t)
        .unwrap()
        .into_iter()
        .map(|p| format!("{}={}", p.property, p.header))
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            "count=Mcp-Param-Count",
            "flag=Mcp-Param-Flag",
            "region=Mcp-Param-Region"
        ]
    );
    // no properties at all
    assert_eq!(validate_tool_headers(&tool("t", json!({}))), Ok(vec![]));
    assert_eq!(
        validate_tool_headers(&Tool::new("t", Map::new())),
        Ok(vec![])
    );
    assert_eq!(params(&[("a", "A")])[0].header, "Mcp-Param-A");
}

#[test]
fn not_empty() {
    assert_eq!(
        validate_tool_headers(&one("t", json!("string"), json!(""))),
        Err(ToolHeaderError::Empty {
            property: "p".into()
        })
    );
}

#[test]
fn primitive_only() {
    for ty in [
        json!("number"),
        json!("object"),
        json!("array"),
        json!("null"),
        json!(["string", "null"]),
        json!(["string", "number"]),
        json!([]),
    ] {
        let err = validate_tool_headers(&one("t", ty.clone(), json!("X"))).unwrap_err();
        assert_eq!(
            err,
            ToolHeaderError::NotPrimitive {
                property: "p".into(),
                found: Some(ty.to_string())
            },
            "{ty}"
        );
    }
    let untyped = tool("t", json!({"p": {"x-mcp-header": "X"}}));
    assert_eq!(
        validate_tool_headers(&untyped),
        Err(ToolHeaderError::NotPrimitive {
            property: "p".into(),
            found: None
        })
    );
}

#[test]
fn unique_case_insensitively() {
    let t = tool(
        "t",
        json!({
            "a": {"type": "string", "x-mcp-header": "MyField"},
            "b": {"type": "string", "x-mcp-header": "myfield"}
        }),
    );
    let err = validate_tool_headers(&t).unwrap_err();
    assert!(
        matches!(&err, ToolHeaderError::Duplicate { property, name, other }
            if property == "b" && name == "myfield" && other == "a"),
        "{err:?}"
    );
    let exact = tool(
        "t",
        json!({
            "a": {"type": "string", "x-mcp-header": "Same"},
            "b": {"type": "integer", "x-mcp-header": "Same"}
        }),
    );
    assert!(matches!(
        validate_tool_headers(&exact),
        Err(ToolHeaderError::Duplicate { .. })
    ));
}

#[test]
fn charset() {
    for (name, bad) in [
        ("My Field", ' '),
        ("My:Field", ':'),
        ("Région", 'é'),
        ("My\u{1}Field", '\u{1}'),
        ("Tab\tField", '\t'),
        ("Line\nBreak", '\n'),
        ("Del\u{7f}", '\u{7f}'),
        ("Quote\"", '"'),
        ("Paren(", '('),
        ("Slash/", '/'),
        ("世界", '世'),
    ] {
        let err = validate_tool_headers(&one("t", json!("string"), json!(name))).unwrap_err();
        assert_eq!(
            err,
            ToolHeaderError::InvalidCharacter {
                property: "p".into(),
                name: name.into(),
                character: bad
            },
            "{name:?}"
        );
    }
}

#[test]
fn annotation_must_be_a_string() {
    for header in [json!(1), json!(true), json!(null), json!(["X"]), json!({})] {
        assert_eq!(
            validate_tool_headers(&one("t", json!("string"), header.clone())),
            Err(ToolHeaderError::NotAString {
                property: "p".into()
            }),
            "{header}"
        );
    }
}

/// The tools of the `http-invalid-tool-headers` scenario: only `valid_tool` survives
#[test]
fn filter_tools_list_keeps_valid_tools_and_warns_for_the_rest() {
    let tools = vec![
        one("valid_tool", json!("string"), json!("Region")),
        one("empty", json!("string"), json!("")),
        one("on_object", json!("object"), json!("X")),
        one("on_array", json!("array"), json!("X")),
        one("on_null", json!("null"), json!("X")),
        one("on_number", json!("number"), json!("X")),
        tool(
            "duplicate",
            json!({
                "a": {"type": "string", "x-mcp-header": "MyField"},
                "b": {"type": "string", "x-mcp-header": "myfield"}
            }),
        ),
        one("space", json!("string"), json!("My Field")),
        one("colon", json!("string"), json!("My:Field")),
        one("non_ascii", json!("string"), json!("Région")),
        one("control", json!("string"), json!("My\u{0}Field")),
        tool("no_headers", json!({"q": {"type": "number"}})),
        one("integer_ok", json!("integer"), json!("Count")),
        one("boolean_ok", json!("boolean"), json!("Flag")),
    ];
    let mut list = ListToolsResult::new(tools);
    let warnings = filter_tools_list(&mut list);
    let kept: Vec<&str> = list.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        kept,
        ["valid_tool", "no_headers", "integer_ok", "boolean_ok"]
    );
    let warned: Vec<&str> = warnings.iter().map(|w| w.tool.as_str()).collect();
    assert_eq!(
        warned,
        [
            "empty",
            "on_object",
            "on_array",
            "on_null",
            "on_number",
            "duplicate",
            "space",
            "colon",
            "non_ascii",
            "control"
        ]
    );
    assert!(matches!(warnings[0].error, ToolHeaderError::Empty { .. }));
    assert!(matches!(
        warnings[4].error,
        ToolHeaderError::NotPrimitive { .. }
    ));
    assert!(matches!(
        warnings[5].error,
        ToolHeaderError::Duplicate { .. }
    ));
    assert!(matches!(
        warnings[9].error,
        ToolHeaderError::InvalidCharacter { .. }
    ));
    let text = warnings[8].to_string();
    assert!(
        text.contains("non_ascii") && text.contains("Région"),
        "{text}"
    );
}

/// `http-custom-headers`: what the client sends
#[test]
fn encode_table() {
    let cases: [(Value, Option<&str>); 17] = [
        (json!("us-west-1"), Some("us-west-1")),
        (json!("us west 1"), Some("us west 1")),
        (
            json!("Hello, 世界"),
            Some("=?base64?SGVsbG8sIOS4lueVjA==?="),
        ),
        (json!(" padded "), Some("=?base64?IHBhZGRlZCA=?=")),
        (json!(" leading"), Some("=?base64?IGxlYWRpbmc=?=")),
        (json!("trailing "), Some("=?base64?dHJhaWxpbmcg?=")),
        (json!("\n"), Some("=?base64?Cg==?=")),
        (json!("\r\n"), Some("=?base64?DQo=?=")),
        (json!("\tleading tab"), Some("=?base64?CWxlYWRpbmcgdGFi?=")),
        (json!(""), Some("")),
        (
            json!("=?base64?SGVsbG8=?="),
            Some("=?base64?PT9iYXNlNjQ/U0dWc2JHOD0/PQ==?="),
        ),
        (json!("SGVsbG8="), Some("SGVsbG8=")),
        (json!(42), Some("42")),
        (json!(-7), Some("-7")),
        (json!(true), Some("true")),
        (json!(false), Some("false")),
        (json!(null), None),
    ];
    for (value, want) in cases {
        assert_eq!(encode_header_value(&value).as_deref(), want, "{value}");
    }
    assert_eq!(encode_header_value(&json!([1])), None);
    assert_eq!(encode_header_value(&json!({"a": 1})), None);
    assert_eq!(encode_header_value(&json!(1.5)).as_deref(), Some("1.5"));
}

/// `http-custom-header-server-validation`: what the server accepts
#[test]
fn decode_table() {
    let ok = [
        ("=?base64?SGVsbG8=?=", "Hello"),
        ("SGVsbG8=", "SGVsbG8="),
        ("=?base64?SGVsbG8=", "=?base64?SGVsbG8="),
        ("us west 1", "us west 1"),
        ("", ""),
        ("=?base64??=", ""),
        ("=?base64?SGVsbG8sIOS4lueVjA==?=", "Hello, 世界"),
        ("=?BASE64?SGVsbG8=?=", "=?BASE64?SGVsbG8=?="),
        ("=?base64?=", "=?base64?="),
        ("42", "42"),
    ];
    for (header, want) in ok {
        assert_eq!(decode_header_value(header).as_deref(), Ok(want), "{header}");
    }
    for bad in [
        "=?base64?SGVsbG8?=",
        "=?base64?SGVs!!!bG8=?=",
        "=?base64?SGVs bG8=?=",
        "=?base64?SGVsbG8==?=",
        "=?base64?SGVsbG9=?=",
    ] {
        assert_eq!(
            decode_header_value(bad),
            Err(HeaderValueError::InvalidBase64),
            "{bad}"
        );
    }
    assert_eq!(
        decode_header_value("=?base64?/w==?="),
        Err(HeaderValueError::NotUtf8)
    );
}

fn header_safe(s: &str) -> bool {
    s.bytes().all(|b| b == b'\t' || (0x20..=0x7E).contains(&b))
        && !s.starts_with([' ', '\t'])
        && !s.ends_with([' ', '\t'])
}

proptest! {
    #![proptest_config(crate::common::beside_source(ProptestConfig::default()))]
    #[test]
    fn encode_then_decode_round_trips(s in any::<String>()) {
        let header = encode_header_value(&Value::String(s.clone())).unwrap();
        // what goes on the wire is a valid, unpadded HTTP field value
        prop_assert!(header_safe(&header), "{header:?}");
        prop_assert_eq!(decode_header_value(&header).unwrap(), s);
    }

    #[test]
    fn ascii_like_strings_round_trip(s in "[ -~\t\r\n]{0,40}") {
        let header = encode_header_value(&Value::String(s.clone())).unwrap();
        prop_assert!(header_safe(&header), "{header:?}");
        prop_assert_eq!(decode_header_value(&header).unwrap(), s);
    }

    #[test]
    fn decode_never_panics(s in any::<String>()) {
        let _ = decode_header_value(&s);
        let _ = decode_header_value(&format!("=?base64?{s}?="));
    }
}
