//! `server::SchemaValidator` and `Catalog::check_call`: argument validation, and schemas
//! that try to make us hang, recurse, or fetch

use mcp_sansio::jsonrpc::code;
use mcp_sansio::schema::{CallToolParams, ContentBlock, Tool};
use mcp_sansio::server::{
    CallCheck, Catalog, CatalogConfig, CatalogError, SchemaError, SchemaLimits, SchemaValidator,
};
use serde_json::{Map, Value, json};

fn object(value: Value) -> Map<String, Value> {
    value.as_object().expect("an object").clone()
}

fn calculator() -> Catalog {
    let mut catalog = Catalog::default();
    let schema = object(json!({
        "type": "object",
        "properties": {
            "expression": {"type": "string", "minLength": 1},
            "precision": {"type": "integer", "minimum": 0}
        },
        "required": ["expression"],
        "additionalProperties": false
    }));
    catalog.add_tool(Tool::new("calculate", schema)).unwrap();
    let no_args = object(json!({"type": "object"}));
    catalog.add_tool(Tool::new("ping", no_args)).unwrap();
    catalog
}

fn call(name: &str, arguments: Option<Value>) -> CallToolParams {
    let params = CallToolParams::new(name);
    match arguments {
        Some(args) => params.with_arguments(object(args)),
        None => params,
    }
}

fn error_text(check: CallCheck) -> String {
    match check {
        CallCheck::InvalidArguments(result) => {
            assert!(result.is_error());
            assert_eq!(result.content.len(), 1);
            match &result.content[0] {
                ContentBlock::Text(text) => text.text.clone(),
                other => panic!("{other:?}"),
            }
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn valid_arguments_pass() {
    let catalog = calculator();
    let tool = catalog
        .check_call(&call("calculate", Some(json!({"expression": "1+1"}))))
        .unwrap();
    assert_eq!(tool.name, "calculate");
    assert!(
        catalog
            .check_call(&call(
                "calculate",
                Some(json!({"expression": "2*3", "precision": 2}))
            ))
            .is_ok()
    );
}

#[test]
fn unknown_tools_are_invalid_params_naming_the_tool() {
    let catalog = calculator();
    match catalog.check_call(&call("nope", None)).unwrap_err() {
        CallCheck::UnknownTool(error) => {
            assert_eq!(error.code, code::INVALID_PARAMS);
            assert_eq!(error.message, "Unknown tool: nope");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn invalid_arguments_are_an_error_result_listing_every_problem() {
    let catalog = calculator();
    let text = error_text(
        catalog
            .check_call(&call(
                "calculate",
                Some(json!({"precision": -1, "extra": true})),
            ))
            .unwrap_err(),
    );
    assert!(
        text.starts_with("Invalid arguments for tool calculate:"),
        "{text}"
    );
    // Three problems, one line each, each with the instance path.
    assert_eq!(text.lines().count(), 4, "{text}");
    assert!(
        text.contains("\n- /: ") && text.contains("expression"),
        "{text}"
    );
    assert!(text.contains("\n- /precision: "), "{text}");
    assert!(text.contains("extra"), "{text}");

    let text = error_text(
        catalog
            .check_call(&call("calculate", Some(json!({"expression": 12}))))
            .unwrap_err(),
    );
    assert!(
        text.contains("/expression: 12 is not of type \"string\""),
        "{text}"
    );
}

#[test]
fn missing_arguments_are_checked_as_an_empty_object() {
    let catalog = calculator();
    // No required properties: fine without `arguments`.
    assert!(catalog.check_call(&call("ping", None)).is_ok());
    assert!(catalog.check_call(&call("ping", Some(json!({})))).is_ok());
    // Required properties: the same error as for `{}`.
    let missing = error_text(catalog.check_call(&call("calculate", None)).unwrap_err());
    let empty = error_text(
        catalog
            .check_call(&call("calculate", Some(json!({}))))
            .unwrap_err(),
    );
    assert_eq!(missing, empty);
    assert!(
        missing.contains("\"expression\" is a required property"),
        "{missing}"
    );
}

#[test]
fn the_number_of_reported_errors_is_bounded() {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for i in 0..50 {
        properties.insert(format!("p{i}"), json!({"type": "string"}));
        required.push(json!(format!("p{i}")));
    }
    let schema = json!({"type": "object", "properties": properties, "required": required});
    let validator = SchemaValidator::compile(&schema, &SchemaLimits::default()).unwrap();
    let mut wrong = Map::new();
    for i in 0..50 {
        wrong.insert(format!("p{i}"), json!(i));
    }
    let errors = validator.validate(&Value::Object(wrong)).unwrap_err();
    assert_eq!(errors.len(), SchemaLimits::default().max_errors);
}

#[test]
fn a_backtracking_pattern_validates_in_linear_time() {
    let mut catalog = Catalog::default();
    let schema = object(json!({
        "type": "object",
        "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}},
        "patternProperties": {"^(x+x+)+y$": {"type": "string"}}
    }));
    catalog.add_tool(Tool::new("evil", schema)).unwrap();
    // A backtracking engine takes about 2^n steps on this; the regex engine is linear.
    let long = format!("{}!", "a".repeat(100_000));
    let key = "x".repeat(50_000);
    let text = error_text(
        catalog
            .check_call(&call("evil", Some(json!({"s": long, key: 1}))))
            .unwrap_err(),
    );
    assert!(text.contains("/s: "), "{text}");
    assert!(
        catalog
            .check_call(&call("evil", Some(json!({"s": "a".repeat(100_000)}))))
            .is_ok()
    );
}

#[test]
fn patterns_the_linear_engine_cannot_run_are_refused() {
    for pattern in ["(a)\\1", "foo(?=bar)", "(?<!x)y"] {
        let schema = json!({"type": "string", "pattern": pattern});
        assert!(
            matches!(
                SchemaValidator::compile(&schema, &SchemaLimits::default()),
                Err(SchemaError::Invalid(_))
            ),
            "{pattern}"
        );
    }
    // A regex whose compiled form is over the size limit.
    let mut limits = SchemaLimits::default();
    limits.max_regex_bytes = 1024;
    let schema = json!({"type": "string", "pattern": "\\w{1000}"});
    assert!(matches!(
        SchemaValidator::compile(&schema, &limits),
        Err(SchemaError::Invalid(_))
    ));
}

#[test]
fn huge_schemas_are_refused_before_compiling() {
    let mut properties = Map::new();
    for i in 0..5000 {
        properties.insert(format!("property_{i}"), json!({"type": "string"}));
    }
    let schema = object(json!({"type": "object", "properties": properties}));
    let mut catalog = Catalog::default();
    let error = catalog
        .add_tool(Tool::new("huge", schema.clone()))
        .unwrap_err();
    assert_eq!(
        error,
        CatalogError::InvalidSchema {
            tool: "huge".into(),
            error: SchemaError::TooLarge { limit: 64 * 1024 }
        }
    );
    assert!(error.to_string().contains("max_bytes"), "{error}");
    // The limit is configurable.
    let mut config = CatalogConfig::new();
    config.schema_limits.max_bytes = 1024 * 1024;
    let mut catalog = Catalog::new(config);
    catalog.add_tool(Tool::new("huge", schema)).unwrap();
}

#[test]
fn deeply_nested_schemas_are_refused_before_compiling() {
    // 120 levels: close to the most serde_json parses from the wire (128).
    let text = format!(
        "{}{{\"type\": \"string\"}}{}",
        "{\"type\": \"object\", \"properties\": {\"x\": ".repeat(60),
        "}}".repeat(60)
    );
    let schema: Map<String, Value> = serde_json::from_str(&text).unwrap();
    let mut catalog = Catalog::default();
    let error = catalog.add_tool(Tool::new("deep", schema)).unwrap_err();
    assert_eq!(
        error,
        CatalogError::InvalidSchema {
            tool: "deep".into(),
            error: SchemaError::TooDeep { limit: 32 }
        }
    );
    assert!(error.to_string().contains("max_depth"), "{error}");

    // Just within the limit compiles.
    let mut nested = json!({"type": "string"});
    for _ in 0..15 {
        nested = json!({"type": "object", "properties": {"x": nested}});
    }
    assert!(
        Catalog::default()
            .add_tool(Tool::new("ok", object(nested)))
            .is_ok()
    );
}

#[test]
fn remote_refs_are_refused_at_registration() {
    for reference in [
        "https://example.com/schema.json",
        "http://127.0.0.1:1/schema.json",
        "file:///etc/passwd",
        "other.json#/defs/x",
    ] {
        let schema = object(json!({
            "type": "object",
            "properties": {"x": {"$ref": reference}}
        }));
        let mut catalog = Catalog::default();
        match catalog.add_tool(Tool::new("remote", schema)) {
            Err(CatalogError::InvalidSchema {
                error: SchemaError::Invalid(why),
                ..
            }) => assert!(!why.is_empty()),
            other => panic!("{reference}: {other:?}"),
        }
    }
    // A custom meta-schema would need fetching too.
    let schema = object(json!({"$schema": "https://example.com/meta", "type": "object"}));
    assert!(
        Catalog::default()
            .add_tool(Tool::new("meta", schema))
            .is_err()
    );
}

#[test]
fn local_refs_and_known_dialects_work() {
    // The conformance suite's 2020-12 tool, verbatim.
    let schema = object(
        json!({"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
     "$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},
     "properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},
     "allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],
     "if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},
     "then":{"required":["phone"]},"else":{"required":["email"]},
     "additionalProperties":false}),
    );
    let mut catalog = Catalog::default();
    catalog
        .add_tool(Tool::new("json_schema_2020_12_tool", schema))
        .unwrap();
    let ok = json!({"name": "Ada", "email": "a@example.com", "address": {"city": "London"}});
    assert!(
        catalog
            .check_call(&call("json_schema_2020_12_tool", Some(ok)))
            .is_ok()
    );
    let bad = json!({"contactMethod": "phone", "email": "a@example.com", "address": {"city": 1}});
    let text = error_text(
        catalog
            .check_call(&call("json_schema_2020_12_tool", Some(bad)))
            .unwrap_err(),
    );
    assert!(text.contains("/address/city"), "{text}");

    // Draft-07 is recognised from `$schema`.
    let draft7 = object(json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "definitions": {"n": {"type": "integer"}},
        "properties": {"n": {"$ref": "#/definitions/n"}}
    }));
    catalog.add_tool(Tool::new("draft7", draft7)).unwrap();
    assert!(
        catalog
            .check_call(&call("draft7", Some(json!({"n": "x"}))))
            .is_err()
    );
}

#[test]
fn recursive_local_refs_are_fine() {
    let schema = json!({
        "type": "object",
        "properties": {"child": {"$ref": "#"}, "v": {"type": "integer"}}
    });
    let validator = SchemaValidator::compile(&schema, &SchemaLimits::default()).unwrap();
    let mut instance = json!({"v": 1});
    for _ in 0..50 {
        instance = json!({"child": instance});
    }
    assert!(validator.is_valid(&instance));
    let mut bad = json!({"v": "x"});
    for _ in 0..3 {
        bad = json!({"child": bad});
    }
    let errors = validator.validate(&bad).unwrap_err();
    assert_eq!(
        errors,
        ["/child/child/child/v: \"x\" is not of type \"integer\""]
    );
}
