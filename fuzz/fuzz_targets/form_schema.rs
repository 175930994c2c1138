//! `ElicitationSchema::from_json_schema` fed arbitrary JSON
//!
//! Oracle: nothing panics; a form it returns names only fields of the schema's top-level
//! `properties` (through its `$ref`s; and requires only fields it holds), reads back from its own JSON as the same
//! value, and is its own restriction (restricting the form's JSON gives the form again).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_sansio::schema::ElicitationSchema;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(schema) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let Ok(form) = ElicitationSchema::from_json_schema(&schema) else {
        return;
    };
    // The top-level schema, through its `$ref`s
    let mut top = &schema;
    for _ in 0..32 {
        match top
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix('#'))
        {
            Some(pointer) => top = schema.pointer(pointer).expect("a form's $ref resolves"),
            None => break,
        }
    }
    let named = top.get("properties").and_then(Value::as_object);
    for name in form.properties.keys() {
        assert!(
            named.is_some_and(|p| p.contains_key(name)),
            "{name} is no property of {schema}"
        );
    }
    for name in form.required.iter().flatten() {
        assert!(
            form.properties.contains_key(name),
            "{name} is required but absent"
        );
    }
    let json = serde_json::to_value(&form).expect("a form serializes");
    let back: ElicitationSchema = serde_json::from_value(json.clone()).expect("a form reads back");
    assert_eq!(back, form, "round trip of {json}");
    let again = ElicitationSchema::from_json_schema(&json).expect("a form restricts");
    assert_eq!(again, form, "restriction of {json}");
});
