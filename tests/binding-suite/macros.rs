//! `#[tool]` (the `macros` feature): the definitions it derives (names, descriptions, hints,
//! input and output schemas) and the results it converts, through a real client over an
//! in-memory pipe pair, in both eras

use crate::binding::{Client, Context, Server, prompt, resource, tool, tool_router, tools};
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

/// A counter whose tools share it (`#[tool_router]`)
struct Counter {
    count: std::sync::atomic::AtomicU64,
    step: u64,
}

#[tool_router]
impl Counter {
    /// Adds the step, returns the count
    #[tool(name = "bump")]
    fn bump_by_step(&self) -> u64 {
        self.count
            .fetch_add(self.step, std::sync::atomic::Ordering::SeqCst)
            + self.step
    }

    /// The count, as text
    #[tool(read_only)]
    fn read(&self, prefix: Option<String>) -> String {
        let count = self.count.load(std::sync::atomic::Ordering::SeqCst);
        format!("{}{count}", prefix.unwrap_or_default())
    }

    /// Not a tool: no attribute
    #[allow(dead_code)]
    fn helper(&self) -> u64 {
        self.step
    }
}

/// Asks to greet someone
#[prompt(title = "Greeting")]
fn greeting(name: String, tone: Option<String>) -> String {
    format!(
        "Greet {name} in a {} tone.",
        tone.as_deref().unwrap_or("friendly")
    )
}

/// A fixed text
#[resource("test://static", mime_type = "text/plain")]
fn static_text() -> String {
    "Hello from a macro".into()
}

/// An item by number
#[resource("test://items/{id}", name = "item")]
fn item(id: u32, uri: String) -> Result<String, String> {
    if id == 0 {
        return Err("there is no item 0".into());
    }
    Ok(format!("item {id} at {uri}"))
}

fn everything() -> Server {
    let counter = Counter {
        count: std::sync::atomic::AtomicU64::new(0),
        step: 5,
    };
    Server::builder(ServerConfig::new(Implementation::new("macros-more", "1.0")))
        .register(counter)
        .and_then(|b| b.register(tools![greeting, static_text, item]))
        .expect("everything registers")
        .build()
}

dialect_fn! {
    async fn more(era: EraMode) {
        let (read, write) = crate::suite::serve(everything());
        let mut config = ClientConfig::new(Implementation::new("macros-test", "1.0"));
        config.era = era;
        let client = aw!(Client::connect(read, write, config)).unwrap();

        // The impl block's tools share their value.
        let tools = aw!(client.list_tools()).unwrap();
        let mut names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, ["bump", "read"], "{era:?}: `helper` is no tool");
        for expected in [5, 10] {
            let bumped = aw!(client.call_tool("bump", Map::new())).unwrap();
            assert_eq!(bumped.structured_content, Some(json!({"result": expected})));
        }
        let read = aw!(client.call_tool("read", args(json!({"prefix": "n="})))).unwrap();
        assert_eq!(read.content[0].as_text(), Some("n=10"));

        // The prompt: its arguments from the parameters
        let prompts = aw!(client.list_prompts()).unwrap();
        let prompt = serde_json::to_value(&prompts[0]).unwrap();
        assert_eq!(
            prompt,
            json!({
                "name": "greeting", "title": "Greeting", "description": "Asks to greet someone",
                "arguments": [{"name": "name", "required": true}, {"name": "tone", "required": false}]
            })
        );
        let mut params = mcp_sansio::schema::GetPromptParams::new("greeting");
        params.arguments = Some([("name".to_owned(), "Ada".to_owned())].into());
        let got = aw!(client.get_prompt(params)).unwrap();
        let message = serde_json::to_value(&got.messages[0]).unwrap();
        assert_eq!(message["content"]["text"], "Greet Ada in a friendly tone.");
        let missing = aw!(client.get_prompt(mcp_sansio::schema::GetPromptParams::new("greeting")));
        assert!(format!("{missing:?}").contains("name"), "{missing:?}");

        // The resource and the template
        let resources = aw!(client.list_resources()).unwrap();
        assert_eq!(resources[0].uri, "test://static");
        assert_eq!(resources[0].mime_type.as_deref(), Some("text/plain"));
        let text = aw!(client.read_resource("test://static")).unwrap();
        let text = serde_json::to_value(&text.contents[0]).unwrap();
        assert_eq!(text["text"], "Hello from a macro");
        assert_eq!(text["mimeType"], "text/plain");
        let seven = aw!(client.read_resource("test://items/7")).unwrap();
        let seven = serde_json::to_value(&seven.contents[0]).unwrap();
        assert_eq!(seven["text"], "item 7 at test://items/7");
        let bad = aw!(client.read_resource("test://items/seven"));
        assert!(format!("{bad:?}").contains("does not parse"), "{bad:?}");
        let zero = aw!(client.read_resource("test://items/0"));
        assert!(format!("{zero:?}").contains("there is no item 0"), "{zero:?}");
        aw!(client.close());
    }
}

#[test]
fn tool_routers_prompts_and_resources_in_both_eras() {
    for era in [
        EraMode::Legacy(ProtocolVersion::V2025_11_25),
        EraMode::Modern,
    ] {
        rt::block_on(async { aw!(more(era)) });
    }
}
