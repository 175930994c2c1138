//! Per-connection server state: `server::LogFilter` (subscriptions are kept by the session:
//! see `session_subscriptions.rs`)

use mcp_sansio::jsonrpc::code;
use mcp_sansio::schema::{LoggingLevel, Meta, PaginatedParams};
use mcp_sansio::server::LogFilter;
use serde_json::json;
use serde_json::value::RawValue;

const LEVELS: [LoggingLevel; 8] = [
    LoggingLevel::Debug,
    LoggingLevel::Info,
    LoggingLevel::Notice,
    LoggingLevel::Warning,
    LoggingLevel::Error,
    LoggingLevel::Critical,
    LoggingLevel::Alert,
    LoggingLevel::Emergency,
];

#[test]
fn levels_follow_the_syslog_order() {
    for (i, low) in LEVELS.iter().enumerate() {
        let filter = LogFilter::at(*low);
        for (j, level) in LEVELS.iter().enumerate() {
            assert_eq!(
                filter.allows(*level),
                j >= i,
                "filter {low:?}, message {level:?}"
            );
        }
    }
}

#[test]
fn legacy_connections_start_at_info_until_set_level() {
    let mut filter = LogFilter::default();
    assert_eq!(filter, LogFilter::legacy());
    assert_eq!(filter.level(), Some(LoggingLevel::Info));
    assert!(!filter.allows(LoggingLevel::Debug));
    assert!(filter.allows(LoggingLevel::Info));
    assert!(filter.allows(LoggingLevel::Emergency));
    filter.set_level(LoggingLevel::Debug);
    assert!(filter.allows(LoggingLevel::Debug));
    filter.set_level(LoggingLevel::Error);
    assert!(!filter.allows(LoggingLevel::Warning));
    assert!(filter.allows(LoggingLevel::Critical));
}

#[test]
fn modern_requests_log_only_when_they_ask() {
    // No `_meta`, or no level in it: nothing at all.
    for filter in [
        LogFilter::from_meta(None).unwrap(),
        LogFilter::from_meta(Some(&Meta::new())).unwrap(),
        LogFilter::from_params(None).unwrap(),
    ] {
        assert_eq!(filter, LogFilter::off());
        assert_eq!(filter.level(), None);
        for level in LEVELS {
            assert!(!filter.allows(level));
        }
    }
    // A level in `_meta`.
    let params: PaginatedParams = serde_json::from_value(json!({
        "_meta": {"io.modelcontextprotocol/logLevel": "warning"}
    }))
    .unwrap();
    let filter = LogFilter::from_meta(params.meta.as_ref()).unwrap();
    assert_eq!(filter.level(), Some(LoggingLevel::Warning));
    assert!(!filter.allows(LoggingLevel::Notice));
    assert!(filter.allows(LoggingLevel::Warning));

    // From raw params, as a request arrives.
    let raw = RawValue::from_string(
        json!({"name": "t", "_meta": {"io.modelcontextprotocol/logLevel": "debug", "progressToken": 1}})
            .to_string(),
    )
    .unwrap();
    assert_eq!(
        LogFilter::from_params(Some(&raw)).unwrap().level(),
        Some(LoggingLevel::Debug)
    );
    let raw = RawValue::from_string(json!({"name": "t"}).to_string()).unwrap();
    assert_eq!(
        LogFilter::from_params(Some(&raw)).unwrap(),
        LogFilter::off()
    );
}

#[test]
fn an_unknown_modern_level_is_invalid_params() {
    let mut meta = Meta::new();
    meta.insert("io.modelcontextprotocol/logLevel".into(), json!("verbose"));
    let error = LogFilter::from_meta(Some(&meta)).unwrap_err();
    assert_eq!(error.code, code::INVALID_PARAMS);
    assert!(error.message.contains("verbose"), "{}", error.message);
    meta.insert("io.modelcontextprotocol/logLevel".into(), json!(3));
    assert!(LogFilter::from_meta(Some(&meta)).is_err());
}

/// Raw params say what their decoded `_meta` says: the same level, the same refusal, off
/// for a null level, no `_meta`, a `_meta` that is not an object, or params not an object
#[test]
fn raw_params_give_the_filter_their_decoded_meta_gives() {
    for text in [
        r#"{"_meta": {"io.modelcontextprotocol/logLevel": "error"}, "x": [1, {"a": 2}]}"#,
        r#"{"_meta": {"io.modelcontextprotocol/log\u004cevel": "info"}}"#,
        r#"{"_meta": {"io.modelcontextprotocol/logLevel": null}}"#,
        r#"{"_meta": {"io.modelcontextprotocol/logLevel": "verbose"}}"#,
        r#"{"_meta": {"io.modelcontextprotocol/logLevel": {"deep": [1]}}}"#,
        r#"{"_meta": {"other": 1}}"#,
        r#"{"_meta": 7}"#,
        r#"{"name": "t"}"#,
        "[1, 2]",
    ] {
        let raw = RawValue::from_string(text.to_owned()).unwrap();
        let decoded: serde_json::Value = serde_json::from_str(text).unwrap();
        let meta = decoded
            .get("_meta")
            .and_then(serde_json::Value::as_object)
            .cloned();
        let from_raw = LogFilter::from_params(Some(&raw));
        let from_meta = LogFilter::from_meta(meta.as_ref());
        match (from_raw, from_meta) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{text}"),
            (Err(a), Err(b)) => {
                assert_eq!(a.code, b.code, "{text}");
                assert_eq!(a.message, b.message, "{text}");
            }
            (a, b) => panic!("{text}: from raw {a:?}, from meta {b:?}"),
        }
    }
}
