//! `#[tool]` (the `macros` feature): the definitions it derives (names, descriptions, hints,
//! input and output schemas) and the results it converts, through a real client over an
//! in-memory pipe pair, in both eras

use crate::binding::{Client, Context, Server, tool, tools};
use crate::rt;
use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::{ClientConfig, EraMode, Implementation, ProtocolVersion, ServerConfig};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// A forecast
#[derive(Serialize, JsonSchema)]
struct Forecast {
    /// The city
    city: String,
    /// Degrees Celsius
    temperature: f64,
    conditions: String,
}

dialect_fn! {
/// Gets the weather of a city
#[tool(read_only, open_world = false, title = "Weather")]
async fn get_weather(city: String, days: Option<u32>) -> Result<Forecast, String> {
    if city.is_empty() {
        return Err("no city given".into());
    }
    Ok(Forecast {
        city,
        temperature: 21.5 + f64::from(days.unwrap_or(0)),
        conditions: "sunny".into(),
    })
}
}

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    /// The first term
    a: f64,
    /// The second term
    b: f64,
}

dialect_fn! {
/// Adds two numbers
#[tool(idempotent)]
async fn add(cx: Context, args: AddArgs) -> String {
    let _ = cx.task_offered();
    (args.a + args.b).to_string()
}
}

/// Counts to `n`
#[tool(name = "count")]
fn count_to(n: u32) -> Vec<u32> {
    (1..=n).collect()
}

dialect_fn! {
/// Always refuses (a JSON-RPC error, not a tool error)
#[tool(destructive)]
async fn refuse() -> Result<String, ErrorObject> {
    Err(ErrorObject::invalid_params("refused"))
}
}

fn server() -> Server {
    Server::builder(ServerConfig::new(Implementation::new("macros", "1.0")))
        .register(tools![get_weather, add, count_to, refuse])
        .expect("the tools register")
        .build()
}

dialect_fn! {
    async fn client(era: EraMode) -> Client {
        let (read, write) = crate::suite::serve(server());
        let mut config = ClientConfig::new(Implementation::new("macros-test", "1.0"));
        config.era = era;
        aw!(Client::connect(read, write, config)).unwrap()
    }
}

fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

#[test]
fn tool_definitions_are_derived() {
    rt::block_on(async { aw!(definitions()) });
}

dialect_fn! {
async fn definitions() {
    let client = aw!(client(EraMode::Legacy(ProtocolVersion::V2025_11_25)));
    let tools = aw!(client.list_tools()).unwrap();
    let by_name = |name: &str| {
        let tool = tools.iter().find(|t| t.name == name).unwrap();
        serde_json::to_value(tool).unwrap()
    };
    assert_eq!(
        by_name("get_weather"),
        json!({
            "name": "get_weather",
            "title": "Weather",
            "description": "Gets the weather of a city",
            "annotations": {"readOnlyHint": true, "openWorldHint": false},
            "inputSchema": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": ["integer", "null"], "format": "uint32", "minimum": 0}
                },
                "required": ["city"]
            },
            "outputSchema": {
                "description": "A forecast",
                "type": "object",
                "properties": {
                    "city": {"description": "The city", "type": "string"},
                    "temperature": {"description": "Degrees Celsius", "type": "number", "format": "double"},
                    "conditions": {"type": "string"}
                },
                "required": ["city", "temperature", "conditions"]
            }
        })
    );
    let add = by_name("add");
    assert_eq!(add["description"], "Adds two numbers");
    assert_eq!(add["annotations"], json!({"idempotentHint": true}));
    assert_eq!(
        add["inputSchema"]["properties"]["a"],
        json!({"description": "The first term", "type": "number", "format": "double"})
    );
    assert!(add.get("outputSchema").is_none(), "text results have no schema");
    // A list is no object: it goes under `result`.
    let count = by_name("count");
    assert_eq!(count["description"], "Counts to `n`");
    assert_eq!(count["outputSchema"]["required"], json!(["result"]));
    assert_eq!(count["outputSchema"]["properties"]["result"]["type"], "array");
    assert_eq!(by_name("refuse")["annotations"], json!({"destructiveHint": true}));
    aw!(client.close());
}
}

#[test]
fn results_are_converted_in_both_eras() {
    rt::block_on(async { aw!(results()) });
}

dialect_fn! {
async fn results() {
    for era in [EraMode::Legacy(ProtocolVersion::V2025_11_25), EraMode::Modern] {
        let client = aw!(client(era));
        let weather = aw!(client.call_tool("get_weather", args(json!({"city": "Paris", "days": 2})))).unwrap();
        let expected = json!({"city": "Paris", "temperature": 23.5, "conditions": "sunny"});
        assert_eq!(weather.structured_content, Some(expected.clone()), "{era:?}");
        let mirror: Value = serde_json::from_str(weather.content[0].as_text().unwrap()).unwrap();
        assert_eq!(mirror, expected, "the text block mirrors the structured value");
        assert!(!weather.is_error());

        let failed = aw!(client.call_tool("get_weather", args(json!({"city": ""})))).unwrap();
        assert!(failed.is_error(), "{era:?}: Err is a tool error");
        assert_eq!(failed.content[0].as_text(), Some("no city given"));

        let sum = aw!(client.call_tool("add", args(json!({"a": 2, "b": 3.5})))).unwrap();
        assert_eq!(sum.content[0].as_text(), Some("5.5"));
        assert_eq!(sum.structured_content, None);

        let counted = aw!(client.call_tool("count", args(json!({"n": 3})))).unwrap();
        assert_eq!(counted.structured_content, Some(json!({"result": [1, 2, 3]})));

        let refused = aw!(client.call_tool("refuse", Map::new()));
        let message = format!("{:?}", refused.expect_err("a JSON-RPC error"));
        assert!(message.contains("refused"), "{message}");

        // The arguments are checked against the derived schema, precisely.
        let wrong = aw!(client.call_tool("get_weather", args(json!({"city": 42}))));
        let message = match wrong {
            Ok(result) => result.content[0].as_text().unwrap_or_default().to_owned(),
            Err(e) => e.to_string(),
        };
        assert!(message.contains("/city"), "{era:?}: {message}");
        aw!(client.close());
    }
}
}

#[test]
fn the_function_stays_callable() {
    assert_eq!(count_to(2), [1, 2]);
}
