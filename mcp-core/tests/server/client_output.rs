//! `OutputValidator`: tool results against the output schemas of `tools/list`, including
//! schemas a hostile server might send

use mcp_sansio::client::{
    ObserveWarning, OutputError, OutputLimits, OutputValidator, SchemaProblem,
};
use mcp_sansio::schema::{CallToolResult, ListToolsResult, ResultType, Tool};
use serde_json::{Map, Value, json};

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

fn tool(name: &str, output: Option<Value>) -> Tool {
    let t = Tool::new(name, Map::new());
    match output {
        Some(schema) => t.with_output_schema(obj(schema)),
        None => t,
    }
}

fn weather_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "temperature": {"type": "number"},
            "conditions": {"type": "string", "enum": ["sunny", "rain"]}
        },
        "required": ["temperature"]
    })
}

fn observed(tools: Vec<Tool>) -> OutputValidator {
    let mut v = OutputValidator::new();
    let warnings = v.observe_tools(&ListToolsResult::new(tools));
    assert!(warnings.is_empty(), "{warnings:?}");
    v
}

fn unverifiable(v: &mut OutputValidator, schema: Value) -> SchemaProblem {
    let warnings = v.observe_tools(&ListToolsResult::new(vec![tool("t", Some(schema))]));
    let [ObserveWarning::Unverifiable { tool, problem }] = warnings.as_slice() else {
        panic!("expected one Unverifiable warning: {warnings:?}");
    };
    assert_eq!(tool, "t");
    match v.check("t", &CallToolResult::structured(json!({}))) {
        Err(OutputError::Unverifiable { tool, problem: p }) => {
            assert_eq!(tool, "t");
            assert_eq!(&p, problem);
        }
        other => panic!("expected Unverifiable: {other:?}"),
    }
    problem.clone()
}

#[test]
fn valid_structured_content_passes() {
    let v = observed(vec![tool("weather", Some(weather_schema()))]);
    let r = CallToolResult::structured(json!({"temperature": 21.5, "conditions": "sunny"}));
    assert_eq!(v.check("weather", &r), Ok(()));
}

#[test]
fn invalid_structured_content_names_tool_path_and_message() {
    let v = observed(vec![tool("weather", Some(weather_schema()))]);
    let r = CallToolResult::structured(json!({"temperature": "warm", "conditions": "snow"}));
    let err = v.check("weather", &r).unwrap_err();
    let OutputError::Invalid { tool, errors } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(tool, "weather");
    let paths: Vec<&str> = errors.iter().map(|e| e.instance_path.as_str()).collect();
    assert!(paths.contains(&"/temperature"), "{paths:?}");
    assert!(paths.contains(&"/conditions"), "{paths:?}");
    assert!(errors.iter().all(|e| !e.message.is_empty()));
    let text = err.to_string();
    assert!(
        text.contains("`weather`") && text.contains("/temperature"),
        "{text}"
    );

    let missing = CallToolResult::structured(json!({}));
    let err = v.check("weather", &missing).unwrap_err();
    let OutputError::Invalid { errors, .. } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(errors[0].instance_path, "");
    assert!(err.to_string().contains("(root)"), "{err}");
}

#[test]
fn missing_structured_content_is_an_error() {
    let v = observed(vec![tool("weather", Some(weather_schema()))]);
    assert_eq!(
        v.check("weather", &CallToolResult::text("21 degrees")),
        Err(OutputError::MissingStructuredContent {
            tool: "weather".into()
        })
    );
}

#[test]
fn error_results_are_not_checked() {
    let v = observed(vec![tool("weather", Some(weather_schema()))]);
    assert_eq!(v.check("weather", &CallToolResult::error("boom")), Ok(()));
    let mut r = CallToolResult::structured(json!({"temperature": "nope"}));
    r.is_error = Some(true);
    assert_eq!(v.check("weather", &r), Ok(()));
    // isError: false is a success and is checked
    r.is_error = Some(false);
    assert!(v.check("weather", &r).is_err());
}

#[test]
fn non_final_results_are_not_checked() {
    let v = observed(vec![tool("weather", Some(weather_schema()))]);
    for rt in [ResultType::InputRequired, ResultType::Task] {
        let mut r = CallToolResult::new(vec![]);
        r.result_type = Some(rt);
        assert_eq!(v.check("weather", &r), Ok(()));
    }
    let mut r = CallToolResult::new(vec![]);
    r.result_type = Some(ResultType::Complete);
    assert!(v.check("weather", &r).is_err());
}

#[test]
fn unknown_tools_and_tools_without_output_schema_pass() {
    let v = observed(vec![tool("plain", None)]);
    assert!(!v.contains("plain"));
    assert_eq!(v.check("plain", &CallToolResult::text("x")), Ok(()));
    assert_eq!(v.check("never-listed", &CallToolResult::text("x")), Ok(()));
    assert_eq!(
        v.check("never-listed", &CallToolResult::structured(json!(42))),
        Ok(())
    );
}

#[test]
fn non_object_output_schema_2026() {
    // 2026-07-28 allows any JSON value as structuredContent
    let v = observed(vec![tool(
        "list",
        Some(json!({"type": "array", "items": {"type": "integer"}})),
    )]);
    assert_eq!(
        v.check("list", &CallToolResult::structured(json!([1, 2]))),
        Ok(())
    );
    let err = v
        .check("list", &CallToolResult::structured(json!([1, "x"])))
        .unwrap_err();
    assert!(err.to_string().contains("/1"), "{err}");
}

#[test]
fn later_lists_replace_and_clear_forgets() {
    let mut v = observed(vec![tool("weather", Some(weather_schema()))]);
    let bad = CallToolResult::structured(json!({"temperature": "warm"}));
    assert!(v.check("weather", &bad).is_err());
    // the tool now declares a string temperature
    let w = v.observe_tools(&ListToolsResult::new(vec![tool(
        "weather",
        Some(json!({"properties": {"temperature": {"type": "string"}}})),
    )]));
    assert!(w.is_empty());
    assert_eq!(v.check("weather", &bad), Ok(()));
    // and then no output schema at all
    v.observe_tools(&ListToolsResult::new(vec![tool("weather", None)]));
    assert!(v.is_empty());
    assert_eq!(v.check("weather", &CallToolResult::text("x")), Ok(()));

    let mut v = observed(vec![
        tool("a", Some(weather_schema())),
        tool("b", Some(weather_schema())),
    ]);
    assert_eq!(v.len(), 2);
    v.forget("a");
    assert!(!v.contains("a") && v.contains("b"));
    v.clear();
    assert!(v.is_empty());
}

#[test]
fn schemas_that_do_not_compile_are_reported_not_panicked() {
    let mut v = OutputValidator::new();
    for schema in [
        json!({"type": "no-such-type"}),
        json!({"type": "string", "pattern": "(unclosed"}),
        json!({"minLength": -1}),
        json!({"$schema": "https://example.com/custom-meta-schema", "type": "object"}),
    ] {
        let problem = unverifiable(&mut v, schema.clone());
        assert!(
            matches!(problem, SchemaProblem::Compile(ref m) if !m.is_empty()),
            "{schema}: {problem:?}"
        );
    }
}

#[test]
fn remote_refs_are_never_fetched() {
    let mut v = OutputValidator::new();
    // Port 9 (discard) on localhost: if anything tried, it would fail, not hang; but the
    // validator is offline, so it is a compile error either way, without I/O.
    let problem = unverifiable(
        &mut v,
        json!({"properties": {"user": {"$ref": "http://127.0.0.1:9/canary/profile-schema.json"}}}),
    );
    let SchemaProblem::Compile(message) = problem else {
        panic!("{problem:?}");
    };
    assert!(message.contains("canary"), "{message}");

    // local references resolve
    let v = observed(vec![tool(
        "t",
        Some(json!({
            "$defs": {"name": {"type": "string", "minLength": 1}},
            "properties": {"name": {"$ref": "#/$defs/name"}}
        })),
    )]);
    assert_eq!(
        v.check("t", &CallToolResult::structured(json!({"name": "a"}))),
        Ok(())
    );
    assert!(
        v.check("t", &CallToolResult::structured(json!({"name": ""})))
            .is_err()
    );
}

#[test]
fn lookaround_patterns_need_the_backtracking_engine_and_are_rejected() {
    let mut v = OutputValidator::new();
    let problem = unverifiable(&mut v, json!({"type": "string", "pattern": "^(?=a)a$"}));
    assert!(matches!(problem, SchemaProblem::Compile(_)), "{problem:?}");
}

#[test]
fn backtracking_prone_regex_completes() {
    // Catastrophic for a backtracking engine; linear for `regex`. Asserts completion only.
    let v = observed(vec![tool(
        "t",
        Some(json!({
            "type": "object",
            "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}
        })),
    )]);
    let long = format!("{}!", "a".repeat(100_000));
    let err = v
        .check("t", &CallToolResult::structured(json!({ "s": long })))
        .unwrap_err();
    let OutputError::Invalid { errors, .. } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(errors[0].instance_path, "/s");
    assert!(errors[0].message.len() < 400, "long values are cut");
    let ok = "a".repeat(100_000);
    assert_eq!(
        v.check("t", &CallToolResult::structured(json!({ "s": ok }))),
        Ok(())
    );
}

#[test]
fn huge_regexes_are_rejected() {
    let mut v = OutputValidator::new();
    let problem = unverifiable(
        &mut v,
        json!({"type": "string", "pattern": "a{1000}{1000}"}),
    );
    assert!(matches!(problem, SchemaProblem::Compile(_)), "{problem:?}");
}

#[test]
fn deep_schemas_are_not_compiled() {
    // deeper than serde_json parses from the wire (128), shallow enough to drop on a test
    // thread's stack
    let mut schema = json!({"type": "string"});
    for _ in 0..200 {
        schema = json!({"type": "object", "properties": {"x": schema}});
    }
    let mut v = OutputValidator::new();
    let problem = unverifiable(&mut v, schema);
    assert_eq!(problem, SchemaProblem::TooDeep { max: 64 });

    // deep arrays count too
    let mut schema = json!({"type": "string"});
    for _ in 0..100 {
        schema = json!({"anyOf": [schema]});
    }
    assert!(matches!(
        unverifiable(&mut v, schema),
        SchemaProblem::TooDeep { .. }
    ));
}

#[test]
fn huge_schemas_are_not_compiled() {
    let mut v = OutputValidator::new();
    let properties: Map<String, Value> = (0..20_000)
        .map(|i| (format!("p{i}"), json!({"type": "string"})))
        .collect();
    let problem = unverifiable(&mut v, json!({"type": "object", "properties": properties}));
    assert_eq!(problem, SchemaProblem::TooLarge);

    let problem = unverifiable(
        &mut v,
        json!({"type": "string", "description": "x".repeat(1 << 20)}),
    );
    assert_eq!(problem, SchemaProblem::TooLarge);

    // just inside the limits still compiles
    let limits = OutputLimits::default();
    let properties: Map<String, Value> = (0..limits.max_schema_nodes / 3)
        .map(|i| (format!("p{i}"), json!({"type": "string"})))
        .collect();
    observed(vec![tool(
        "ok",
        Some(json!({"type": "object", "properties": properties})),
    )]);
}

#[test]
fn recursive_schemas_terminate() {
    // self-referencing definitions: a tree; and a `$ref` cycle that never reaches a keyword
    let v = observed(vec![tool(
        "tree",
        Some(json!({
            "$defs": {"node": {
                "type": "object",
                "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}
            }},
            "$ref": "#/$defs/node"
        })),
    )]);
    let mut deep = json!({});
    for _ in 0..100 {
        deep = json!({"children": [deep]});
    }
    assert_eq!(v.check("tree", &CallToolResult::structured(deep)), Ok(()));

    let mut v = OutputValidator::new();
    let warnings = v.observe_tools(&ListToolsResult::new(vec![tool(
        "loop",
        Some(json!({
            "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
            "$ref": "#/$defs/a"
        })),
    )]));
    // Either outcome is acceptable as long as it returns: unverifiable, or checkable.
    let _ = (
        warnings,
        v.check("loop", &CallToolResult::structured(json!({}))),
    );
}

#[test]
fn cache_is_bounded() {
    let mut limits = OutputLimits::default();
    limits.max_tools = 2;
    let mut v = OutputValidator::with_limits(limits);
    let warnings = v.observe_tools(&ListToolsResult::new(vec![
        tool("a", Some(weather_schema())),
        tool("b", Some(weather_schema())),
        tool("plain", None),
        tool("c", Some(weather_schema())),
    ]));
    assert_eq!(
        warnings,
        vec![ObserveWarning::CacheFull { tool: "c".into() }]
    );
    assert_eq!(v.len(), 2);
    assert!(v.contains("a") && v.contains("b") && !v.contains("c"));
    // an update of a cached tool still fits
    let w = v.observe_tools(&ListToolsResult::new(vec![tool("a", Some(json!({})))]));
    assert!(w.is_empty());
    // after forgetting one, a new one fits
    v.forget("b");
    let w = v.observe_tools(&ListToolsResult::new(vec![tool(
        "c",
        Some(weather_schema()),
    )]));
    assert!(w.is_empty());
    assert!(v.contains("c"));
}

#[test]
fn error_count_is_capped() {
    let properties: Map<String, Value> = (0..50)
        .map(|i| (format!("p{i}"), json!({"type": "string"})))
        .collect();
    let v = observed(vec![tool(
        "t",
        Some(json!({"type": "object", "properties": properties})),
    )]);
    let content: Map<String, Value> = (0..50).map(|i| (format!("p{i}"), json!(i))).collect();
    let err = v
        .check("t", &CallToolResult::structured(Value::Object(content)))
        .unwrap_err();
    let OutputError::Invalid { errors, .. } = err else {
        panic!()
    };
    assert_eq!(errors.len(), OutputLimits::default().max_errors);
}

#[test]
fn validator_is_send_and_sync() {
    // (not UnwindSafe: jsonschema's compiled validators are trait objects without that bound)
    fn assert_bounds<T: Send + Sync>() {}
    assert_bounds::<OutputValidator>();
}
