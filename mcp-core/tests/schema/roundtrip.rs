//! Unknown fields and `_meta` survive parse → serialize, at the top level and nested

use mcp_sansio::schema::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

fn survives<T: DeserializeOwned + Serialize>(json: Value) -> T {
    let typed: T = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(serde_json::to_value(&typed).unwrap(), json);
    typed
}

const META: &str = "example.com/m";

#[test]
fn tool_inside_list_tools_result() {
    let r: ListToolsResult = survives(json!({
        "tools": [{
            "name": "t", "inputSchema": {"type": "object", "if": {"required": ["a"]}, "then": {}},
            "outputSchema": {"oneOf": [{"type": "string"}]},
            "annotations": {"readOnlyHint": true, "futureHint": 1},
            "execution": {"taskSupport": "optional", "later": true},
            "icons": [{"src": "x", "future": 2}],
            "_meta": {META: 1}, "futureToolField": [1, 2]
        }],
        "nextCursor": "n", "resultType": "complete", "ttlMs": 5, "cacheScope": "private",
        "_meta": {META: 2}, "futureResultField": {"a": 1}
    }));
    let tool = &r.tools[0];
    assert_eq!(tool.extra["futureToolField"], json!([1, 2]));
    assert_eq!(tool.meta.as_ref().unwrap()[META], 1);
    assert_eq!(tool.annotations.as_ref().unwrap().extra["futureHint"], 1);
    assert!(tool.input_schema.contains_key("if"));
    assert_eq!(r.meta.as_ref().unwrap()[META], 2);
    assert_eq!(r.extra["futureResultField"], json!({"a": 1}));
}

#[test]
fn content_inside_call_tool_result() {
    let r: CallToolResult = survives(json!({
        "content": [
            {"type": "text", "text": "hi", "_meta": {META: 1}, "annotations": {"priority": 1, "x": 0}, "future": true},
            {"type": "resource_link", "uri": "file:///a", "name": "a", "_meta": {META: 2}, "future": 3},
            {"type": "resource", "resource": {"uri": "file:///b", "blob": "AA==", "_meta": {META: 3}, "f": 1}},
            {"type": "audio", "data": "AA==", "mimeType": "audio/wav", "f": 4}
        ],
        "structuredContent": [1, "two"],
        "isError": false,
        "_meta": {META: 4},
        "future": null
    }));
    let ContentBlock::Text(t) = &r.content[0] else {
        panic!("text first")
    };
    assert_eq!(t.extra["future"], true);
    assert_eq!(t.meta.as_ref().unwrap()[META], 1);
    assert_eq!(r.extra["future"], Value::Null);
}

#[test]
fn sampling_and_elicitation_nested() {
    let _: CreateMessageParams = survives(json!({
        "messages": [{"role": "user", "content": [
            {"type": "tool_use", "id": "1", "name": "n", "input": {}, "_meta": {META: 1}, "f": 1},
            {"type": "tool_result", "toolUseId": "1", "content": [{"type": "text", "text": "r", "g": 2}], "h": 3}
        ], "_meta": {META: 2}, "i": 4}],
        "maxTokens": 10, "modelPreferences": {"hints": [{"name": "m", "j": 5}], "k": 6},
        "toolChoice": {"mode": "auto", "l": 7}, "_meta": {META: 3}, "m": 8
    }));
    let _: ElicitParams = survives(json!({
        "mode": "form", "message": "m",
        "requestedSchema": {"type": "object", "properties": {
            "a": {"type": "string", "enum": ["x"], "enumNames": ["X"], "f": 1},
            "b": {"type": "array", "items": {"anyOf": [{"const": "x", "title": "X", "g": 2}]}},
            "c": {"type": "integer", "minimum": 1, "h": 3}
        }, "required": ["a"], "i": 4},
        "_meta": {META: 1}, "j": 5
    }));
    let _: ElicitParams = survives(
        json!({"mode": "url", "message": "m", "url": "https://x", "elicitationId": "e", "_meta": {META: 1}, "k": 6}),
    );
}

#[test]
fn tasks_capabilities_and_mrtr() {
    let _: GetTaskResult = survives(json!({
        "resultType": "complete", "taskId": "t", "status": "completed", "createdAt": "a",
        "lastUpdatedAt": "b", "ttlMs": null, "result": {"content": []}, "_meta": {META: 1}, "f": 1
    }));
    let t: Task = survives(json!({
        "taskId": "t", "status": "working", "createdAt": "a", "lastUpdatedAt": "b", "ttl": 5, "pollInterval": 1
    }));
    assert_eq!(t.lifetime_ms(), Some(Some(5)));
    let _: ext_tasks::CreateTaskResult = survives(json!({
        "resultType": "task", "taskId": "t", "status": "working", "createdAt": "a", "lastUpdatedAt": "b", "ttlMs": 1
    }));
    let caps: ServerCapabilities = survives(json!({
        "tools": {"listChanged": true, "f": 1}, "extensions": {"io.modelcontextprotocol/tasks": {}}, "future": {}
    }));
    assert!(
        caps.extensions
            .as_ref()
            .is_some_and(|e| e.contains_key(ext_tasks::EXTENSION_ID))
    );
    let _: InputRequiredResult = survives(json!({
        "resultType": "input_required", "requestState": "s",
        "inputRequests": {"a": {"method": "roots/list"}, "b": {"method": "elicitation/create",
            "params": {"mode": "url", "message": "m", "url": "https://x"}}},
        "_meta": {META: 1}, "f": 1
    }));
}

#[test]
fn fitting_to_legacy_removes_modern_only_result_fields() {
    let mut r = ListToolsResult::new(vec![]).with_cache(10, CacheScope::Public);
    r.fit_to(mcp_sansio::ProtocolVersion::V2025_06_18);
    assert_eq!(serde_json::to_value(&r).unwrap(), json!({"tools": []}));
    r.fit_to(mcp_sansio::ProtocolVersion::V2026_07_28);
    assert_eq!(r.result_type, Some(ResultType::Complete));
}
