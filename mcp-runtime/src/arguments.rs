//! A typed tool's two ends: its `inputSchema` derived from a Rust type, and its arguments
//! decoded into that type (used by every builder and by the `#[tool]` macros' code)

use mcp_sansio::jsonrpc::ErrorObject;
#[cfg(feature = "schemars")]
use mcp_sansio::schema::Tool;
#[cfg(feature = "schemars")]
use mcp_sansio::server::CatalogError;
use serde_json::{Map, Value};

/// A tool whose `inputSchema` is derived from `A` with `schemars`
///
/// # Errors
/// [`CatalogError::InputSchemaNotObject`] when the schema is no object.
#[cfg(feature = "schemars")]
pub fn typed_tool<A: schemars::JsonSchema>(
    name: &str,
    description: &str,
) -> Result<Tool, CatalogError> {
    let schema = serde_json::to_value(schemars::schema_for!(A)).unwrap_or_default();
    let Value::Object(mut schema) = schema else {
        return Err(CatalogError::InputSchemaNotObject {
            tool: name.to_owned(),
        });
    };
    schema
        .entry("type")
        .or_insert_with(|| Value::from("object"));
    Ok(Tool::new(name, schema).with_description(description))
}

/// A typed tool's arguments, decoded (-32602 when they do not decode)
///
/// # Errors
/// Invalid params.
pub fn decode_arguments<A: serde::de::DeserializeOwned>(
    args: Map<String, Value>,
) -> Result<A, ErrorObject> {
    serde_json::from_value(Value::Object(args))
        .map_err(|e| ErrorObject::invalid_params(format!("invalid arguments: {e}")))
}
