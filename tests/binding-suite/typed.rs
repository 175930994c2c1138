//! A tool with typed arguments: the schema comes from `schemars`, the handler gets the value

use mcp_sansio::schema::CallToolResult;
use mcp_sansio::{ClientConfig, Implementation, ServerConfig};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::support::object;
use crate::binding::{Client, Server};
use crate::rt;

#[derive(Deserialize, schemars::JsonSchema)]
struct AddArgs {
    /// The first number
    a: f64,
    /// The second number
    b: f64,
}

#[test]
fn typed_tool_schema_and_arguments() {
    rt::block_on(async {
        let server = Server::builder(ServerConfig::new(Implementation::new("typed", "1.0")))
            .typed_tool(
                "add",
                "Adds two numbers",
                handler!(|_cx, args: AddArgs| {
                    Ok(CallToolResult::text((args.a + args.b).to_string()))
                }),
            )
            .unwrap()
            .build();
        let (r, w) = super::serve(server);
        let config = ClientConfig::new(Implementation::new("c", "1"));
        let client = aw!(Client::connect(r, w, config)).unwrap();
        let tools = aw!(client.list_tools()).unwrap();
        let schema = Value::Object(tools[0].input_schema.clone());
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["properties"]["a"]["type"], "number");
        assert_eq!(schema["required"], json!(["a", "b"]));
        let args = object(json!({"a": 2, "b": 3.5}));
        let result = aw!(client.call_tool("add", args)).unwrap();
        assert_eq!(result.content[0].as_text(), Some("5.5"));
        // Arguments that fail the derived schema are a tool error.
        let result = aw!(client.call_tool("add", Map::new())).unwrap();
        assert!(result.is_error());
    });
}
