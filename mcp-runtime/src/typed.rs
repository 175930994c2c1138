//! What the `#[tool]` attribute macro (crate `mcp-sansio-macros`) generates code against:
//! a tool's definition from its Rust types (the `inputSchema` from the arguments, the
//! `outputSchema` from the result), the conversion of a handler's return value to a
//! `CallToolResult`, and [`Register`], which puts a macro-made tool into a binding's
//! `ServerBuilder` in one call
//!
//! The bindings re-export it (hidden) as `__macros`; nothing here is needed by hand.

use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::schema::{CallToolResult, Tool, ToolAnnotations};
pub use mcp_sansio::server::{CatalogError, EntryKind};
use serde_json::{Map, Value};

pub use schemars;
pub use serde;

/// Something that registers itself into a server builder `B` (a tool made by `#[tool]`,
/// or a tuple of them)
pub trait Register<B>: Sized {
    /// Adds itself to `builder`, with the scopes it requires (`scopes = [..]`: the
    /// builder's `require_scopes`)
    ///
    /// # Errors
    /// [`CatalogError`] as the builder's `tool` (`prompt`, `resource`, ...).
    fn register(self, builder: B) -> Result<B, CatalogError>;
}

macro_rules! tuples {
    ($($name:ident)+) => {
        impl<Builder, $($name: Register<Builder>),+> Register<Builder> for ($($name,)+) {
            #[allow(non_snake_case)]
            fn register(self, builder: Builder) -> Result<Builder, CatalogError> {
                let ($($name,)+) = self;
                $(let builder = $name.register(builder)?;)+
                Ok(builder)
            }
        }
    };
}

tuples!(A);
tuples!(A B);
tuples!(A B C);
tuples!(A B C D);
tuples!(A B C D E);
tuples!(A B C D E F);
tuples!(A B C D E F G);
tuples!(A B C D E F G H);
tuples!(A B C D E F G H I);
tuples!(A B C D E F G H I J);
tuples!(A B C D E F G H I J K);
tuples!(A B C D E F G H I J K L);

/// What `#[tool(..)]` says of a tool besides its types
#[derive(Debug, Clone, Copy, Default)]
pub struct Attributes {
    /// Its name
    pub name: &'static str,
    /// Its title
    pub title: Option<&'static str>,
    /// Its description (the attribute's, or the doc comment)
    pub description: Option<&'static str>,
    /// `read_only`
    pub read_only: bool,
    /// `destructive`
    pub destructive: Option<bool>,
    /// `idempotent`
    pub idempotent: bool,
    /// `open_world`
    pub open_world: Option<bool>,
}

/// How a tool's value is put into `structuredContent`
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// As it is (its schema is an object)
    Object,
    /// Under `result`, since `structuredContent` is an object before 2026 (its schema is
    /// not an object: a number, a list)
    Wrapped,
}

/// The JSON Schema of `T` as an object (a JSON Schema document, `$schema` left out)
fn schema_of<T: schemars::JsonSchema>() -> Map<String, Value> {
    let schema = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default();
    let Value::Object(mut schema) = schema else {
        return Map::new();
    };
    schema.remove("$schema");
    schema
}

/// Whether a schema describes objects only
fn is_object(schema: &Map<String, Value>) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

/// A tool whose `inputSchema` is derived from `A`
///
/// # Errors
/// [`CatalogError::InputSchemaNotObject`] when `A` is no struct (no object).
pub fn tool<A: schemars::JsonSchema>(attributes: &Attributes) -> Result<Tool, CatalogError> {
    let mut schema = schema_of::<A>();
    if !is_object(&schema) {
        return Err(CatalogError::InputSchemaNotObject {
            tool: attributes.name.to_owned(),
        });
    }
    // The derived schema's title is the Rust type's name: of no use to a model.
    schema.remove("title");
    let mut tool = Tool::new(attributes.name, schema);
    tool.title = attributes.title.map(str::to_owned);
    tool.description = attributes.description.map(str::to_owned);
    let mut annotations = ToolAnnotations::default();
    annotations.read_only_hint = attributes.read_only.then_some(true);
    annotations.destructive_hint = attributes.destructive;
    annotations.idempotent_hint = attributes.idempotent.then_some(true);
    annotations.open_world_hint = attributes.open_world;
    if annotations != ToolAnnotations::default() {
        tool.annotations = Some(annotations);
    }
    Ok(tool)
}

/// Adds the `outputSchema` derived from `T` to `tool`; how values go into
/// `structuredContent`
pub fn with_output<T: schemars::JsonSchema>(tool: &mut Tool) -> Output {
    let mut schema = schema_of::<T>();
    schema.remove("title");
    if is_object(&schema) {
        tool.output_schema = Some(schema);
        return Output::Object;
    }
    // `$defs` stay at the top, where the `$ref`s inside point.
    let defs = schema.remove("$defs");
    let mut wrapper = Map::new();
    wrapper.insert("type".into(), "object".into());
    let mut properties = Map::new();
    properties.insert("result".into(), Value::Object(schema));
    wrapper.insert("properties".into(), Value::Object(properties));
    wrapper.insert("required".into(), Value::from(vec!["result"]));
    if let Some(defs) = defs {
        wrapper.insert("$defs".into(), defs);
    }
    tool.output_schema = Some(wrapper);
    Output::Wrapped
}

/// A value for `structuredContent` (its JSON text mirrored in a text block, as the spec
/// recommends)
///
/// # Errors
/// -32603 when the value does not serialize.
pub fn structured<T: serde::Serialize>(
    value: &T,
    output: Output,
) -> Result<CallToolResult, ErrorObject> {
    let value = serde_json::to_value(value).map_err(ErrorObject::internal_error)?;
    let value = match output {
        Output::Object => value,
        Output::Wrapped => {
            let mut wrapper = Map::new();
            wrapper.insert("result".into(), value);
            Value::Object(wrapper)
        }
    };
    Ok(CallToolResult::structured(value))
}

/// What a tool returns that is no structured value: text, nothing, or a result built by
/// hand
pub trait Unstructured {
    /// As a result
    fn into_result(self) -> CallToolResult;
}

impl Unstructured for CallToolResult {
    fn into_result(self) -> CallToolResult {
        self
    }
}

impl Unstructured for String {
    fn into_result(self) -> CallToolResult {
        CallToolResult::text(self)
    }
}

impl Unstructured for &str {
    fn into_result(self) -> CallToolResult {
        CallToolResult::text(self)
    }
}

impl Unstructured for () {
    fn into_result(self) -> CallToolResult {
        CallToolResult::new(Vec::new())
    }
}

/// A tool's error the model should see: `isError: true` with its text
pub fn failed(error: &impl std::fmt::Display) -> CallToolResult {
    CallToolResult::error(error.to_string())
}

/// A typed tool's arguments, decoded (-32602 when they do not decode)
///
/// # Errors
/// Invalid params.
pub fn arguments<A: serde::de::DeserializeOwned>(
    args: Map<String, Value>,
) -> Result<A, ErrorObject> {
    crate::arguments::decode_arguments(args)
}

// ---------------------------------------------------------------------------------------
// Prompts and resources (`#[prompt]`, `#[resource]`)
// ---------------------------------------------------------------------------------------

use std::collections::BTreeMap;

use mcp_sansio::schema::{
    GetPromptResult, Prompt, PromptArgument, PromptMessage, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate,
};
use mcp_sansio::server::uri_template::Variables;

/// What `#[prompt(..)]` says of a prompt
#[derive(Debug, Clone, Copy, Default)]
pub struct PromptAttributes {
    /// Its name
    pub name: &'static str,
    /// Its title
    pub title: Option<&'static str>,
    /// Its description (the attribute's, or the doc comment)
    pub description: Option<&'static str>,
    /// Its arguments: name, and whether it is required (a parameter that is no `Option`)
    pub arguments: &'static [(&'static str, bool)],
}

/// A prompt's definition
pub fn prompt(attributes: &PromptAttributes) -> Prompt {
    let mut prompt = Prompt::new(attributes.name);
    prompt.title = attributes.title.map(str::to_owned);
    prompt.description = attributes.description.map(str::to_owned);
    if !attributes.arguments.is_empty() {
        let arguments = attributes
            .arguments
            .iter()
            .map(|(name, required)| PromptArgument::new(*name).required(*required))
            .collect();
        prompt = prompt.with_arguments(arguments);
    }
    prompt
}

/// A required prompt argument (-32602 naming it when it is missing)
///
/// # Errors
/// Invalid params.
pub fn prompt_argument(
    arguments: &BTreeMap<String, String>,
    name: &str,
) -> Result<String, ErrorObject> {
    arguments
        .get(name)
        .cloned()
        .ok_or_else(|| ErrorObject::invalid_params(format!("missing argument `{name}`")))
}

/// What a prompt function returns
pub trait IntoPrompt {
    /// As a `prompts/get` result
    fn into_prompt(self) -> GetPromptResult;
}

impl IntoPrompt for GetPromptResult {
    fn into_prompt(self) -> GetPromptResult {
        self
    }
}

impl IntoPrompt for Vec<PromptMessage> {
    fn into_prompt(self) -> GetPromptResult {
        GetPromptResult::new(self)
    }
}

impl IntoPrompt for PromptMessage {
    fn into_prompt(self) -> GetPromptResult {
        GetPromptResult::new(vec![self])
    }
}

/// Text: one user message
impl IntoPrompt for String {
    fn into_prompt(self) -> GetPromptResult {
        GetPromptResult::new(vec![PromptMessage::user(self)])
    }
}

/// What `#[resource(..)]` says of a resource or template
#[derive(Debug, Clone, Copy, Default)]
pub struct ResourceAttributes {
    /// Its URI, or URI template (with `{variables}`)
    pub uri: &'static str,
    /// Its name
    pub name: &'static str,
    /// Its title
    pub title: Option<&'static str>,
    /// Its description (the attribute's, or the doc comment)
    pub description: Option<&'static str>,
    /// Its MIME type
    pub mime_type: Option<&'static str>,
}

/// A fixed resource's definition
pub fn resource(attributes: &ResourceAttributes) -> Resource {
    let mut resource = Resource::new(attributes.uri, attributes.name);
    resource.title = attributes.title.map(str::to_owned);
    resource.description = attributes.description.map(str::to_owned);
    resource.mime_type = attributes.mime_type.map(str::to_owned);
    resource
}

/// A resource template's definition
pub fn resource_template(attributes: &ResourceAttributes) -> ResourceTemplate {
    let mut template = ResourceTemplate::new(attributes.uri, attributes.name);
    template.title = attributes.title.map(str::to_owned);
    template.description = attributes.description.map(str::to_owned);
    template.mime_type = attributes.mime_type.map(str::to_owned);
    template
}

/// A template variable as a `T` (-32602 naming it when it is missing or does not parse)
///
/// # Errors
/// Invalid params.
pub fn variable<T>(variables: &Variables, name: &str) -> Result<T, ErrorObject>
where
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    let text = variables
        .get_str(name)
        .ok_or_else(|| ErrorObject::invalid_params(format!("the URI has no `{name}`")))?;
    text.parse().map_err(|e| {
        ErrorObject::invalid_params(format!("`{name}` = {text:?} does not parse: {e}"))
    })
}

/// What a resource function returns
pub trait IntoContents {
    /// As a `resources/read` result for `uri`, of `mime_type`
    fn into_contents(self, uri: String, mime_type: Option<&str>) -> ReadResourceResult;
}

impl IntoContents for ReadResourceResult {
    fn into_contents(self, _: String, _: Option<&str>) -> ReadResourceResult {
        self
    }
}

/// Text
impl IntoContents for String {
    fn into_contents(self, uri: String, mime_type: Option<&str>) -> ReadResourceResult {
        let mut contents = ResourceContents::text(uri, self);
        if let Some(mime) = mime_type {
            contents = contents.with_mime_type(mime);
        }
        ReadResourceResult::new(vec![contents])
    }
}

/// An error of a prompt or resource function that is no `ErrorObject`: -32603 with its text
pub fn internal(error: &impl std::fmt::Display) -> ErrorObject {
    ErrorObject::internal_error(error)
}
