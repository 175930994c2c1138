//! Per-connection server state: `server::Subscriptions` and `server::LogFilter`

use mcp_core::jsonrpc::code;
use mcp_core::schema::{LoggingLevel, Meta, PaginatedParams};
use mcp_core::server::{LogFilter, Subscriptions};
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
fn subscriptions_are_bounded() {
    let mut subs = Subscriptions::new(2);
    assert_eq!(subs.limit(), 2);
    subs.subscribe("test://a").unwrap();
    subs.subscribe("test://b").unwrap();
    // Subscribing again to a held URI is not one more.
    subs.subscribe("test://a").unwrap();
    let error = subs.subscribe("test://c").unwrap_err();
    assert_eq!(error.code, code::INVALID_PARAMS);
    assert!(error.message.contains("limit is 2"), "{}", error.message);
    assert_eq!(
        error.data::<serde_json::Value>().unwrap().unwrap(),
        json!({"limit": 2})
    );
    assert_eq!(subs.len(), 2);
    assert!(!subs.is_subscribed("test://c"));
    // Making room lets it in.
    assert!(subs.unsubscribe("test://a"));
    assert!(!subs.unsubscribe("test://a"));
    subs.subscribe("test://c").unwrap();
    assert_eq!(subs.iter().collect::<Vec<_>>(), ["test://b", "test://c"]);
    assert_eq!(
        Subscriptions::default().limit(),
        Subscriptions::DEFAULT_LIMIT
    );
    assert!(Subscriptions::new(0).subscribe("test://a").is_err());
}

#[test]
fn updated_says_whether_to_notify() {
    let mut subs = Subscriptions::default();
    assert!(subs.is_empty());
    subs.subscribe("file:///project").unwrap();
    subs.subscribe("test://watched-resource").unwrap();
    subs.subscribe("https://example.com/dir/").unwrap();

    assert!(subs.updated("test://watched-resource"));
    assert!(subs.is_subscribed("test://watched-resource"));
    // Sub-resources of a subscribed URI.
    assert!(subs.updated("file:///project/src/main.rs"));
    assert!(subs.updated("https://example.com/dir/page"));
    assert!(!subs.is_subscribed("file:///project/src/main.rs"));
    // Not a sub-resource: only a shared prefix, or a parent.
    assert!(!subs.updated("file:///project-other/x"));
    assert!(!subs.updated("file:///"));
    assert!(!subs.updated("test://watched"));
    assert!(!subs.updated("test://watched-resource-2"));
    assert!(!subs.updated("test://other"));
    subs.unsubscribe("file:///project");
    assert!(!subs.updated("file:///project/src/main.rs"));
}

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
