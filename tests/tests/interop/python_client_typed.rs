//! The official Python SDK's client → our weather example written with the macros
//! (`mcp-tokio/examples/weather.rs`): it sees the derived `outputSchema`, gets
//! `structuredContent` that validates against it (the SDK's own check and `jsonschema`'s,
//! Draft 2020-12), and answers the typed elicitation (2026: `input_required`, then the retry)

use std::process::Command;

use mcp_interop::{TEST_DEADLINE, python, run_peer};
use serde_json::{Value, json};

/// `mcp-python/tests/sdk_typed_client.py MODE <weather>`: its summary
fn typed_client(mode: &str) -> Value {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../mcp-python/tests/sdk_typed_client.py");
    let mut command = Command::new(python());
    command
        .arg(script)
        .arg(mode)
        .arg(mcp_interop::weather_example());
    let output = run_peer(command, TEST_DEADLINE);
    let Some(line) = output
        .stdout
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("TYPED-SUMMARY "))
    else {
        panic!("the SDK client printed no summary\n{output}");
    };
    let summary: Value = serde_json::from_str(line).expect("a JSON summary");
    assert!(summary.get("fatal").is_none(), "{summary}\n{output}");
    summary
}

fn assert_typed(s: &Value, version: &str) {
    assert_eq!(s["protocol_version"], version);
    assert_eq!(
        s["output_schema"],
        json!({
            "type": "object",
            "properties": {
                "temperature": {"type": "number", "format": "double", "description": "Temperature in the units asked for"},
                "conditions": {"type": "string"},
                "humidity": {"type": "number", "format": "double"}
            },
            "required": ["temperature", "conditions", "humidity"]
        }),
        "{s:#}"
    );
    let structured =
        json!({"temperature": 22.5, "conditions": "Partly cloudy in Porto", "humidity": 65.0});
    assert_eq!(s["structured"], structured, "{s:#}");
    let mirror: Value = serde_json::from_str(s["texts"][0].as_str().unwrap_or_default()).unwrap();
    assert_eq!(
        mirror, structured,
        "the text block mirrors structuredContent"
    );
    assert_eq!(s["validated"], true, "{s:#}");
    assert_eq!(s["is_error"], false, "{s:#}");
    let form = &s["requested_schema"];
    assert_eq!(form["type"], "object", "{s:#}");
    assert_eq!(form["properties"]["city"]["type"], "string", "{s:#}");
    assert_eq!(form["properties"]["nights"]["type"], "integer", "{s:#}");
    assert_eq!(
        form["properties"]["units"]["enum"],
        json!(["metric", "imperial"]),
        "{s:#}"
    );
    assert_eq!(form["required"], json!(["city", "nights"]), "{s:#}");
    assert_eq!(
        s["trip"],
        json!(["3 nights in Lisbon: Partly cloudy in Lisbon, 72.5"]),
        "{s:#}"
    );
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn python_client_legacy_sees_the_typed_weather_tools() {
    assert_typed(&typed_client("legacy"), "2025-11-25");
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn python_client_modern_sees_the_typed_weather_tools() {
    assert_typed(&typed_client("modern"), "2026-07-28");
}
