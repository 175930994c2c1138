//! The attribute macros of the mcp-sansio bindings: `#[tool]`, `#[tool_router]`,
//! `#[prompt]` and `#[resource]` turn functions into typed MCP tools, prompts and resources
//!
//! Use them through a binding with its `macros` feature (`mcp_sansio_tokio::tool`,
//! `mcp_sansio_async_std::tool`, `mcp_sansio_blocking::tool`, and the same for the others):
//! each binding's entry point here generates code against that binding, so the generated code
//! names only the crate the user already depends on.
//!
//! What `#[tool]` makes of
//!
//! ```text
//! /// Gets the weather of a city
//! #[tool(read_only, title = "Weather")]
//! async fn get_weather(cx: Context, city: String, days: Option<u32>) -> Result<Forecast, String>
//! ```
//!
//! - the function stays as it is (call it in a test);
//! - a type of the same name (`get_weather {}`, a braced struct: it lives beside the function)
//!   registers the tool: `builder.register(get_weather {})?`, or several at once with the
//!   binding's `tools![get_weather, other]`;
//! - the tool's name is the function's (or `name = ".."`), its description the doc comment (or
//!   `description = ".."`), `title`, and the hints `read_only`, `destructive`, `idempotent`,
//!   `open_world` (each `= false` to say so explicitly);
//! - `scopes = ["mcp:admin", ..]`: the OAuth scopes a caller needs (registering the tool also
//!   calls the builder's `require_scopes`): a caller whose verified principal lacks one is
//!   refused before the function runs (HTTP: `403` with the `insufficient_scope` step-up
//!   challenge; other transports, and callers without a principal: the JSON-RPC error
//!   -32003);
//! - the arguments: each parameter is one argument, or a single parameter named `args` is the
//!   whole arguments object (a type deriving `Deserialize` and `JsonSchema`); the `inputSchema`
//!   is derived with `schemars`; a parameter whose type is named `Context` gets the handler's
//!   context;
//! - the result: `String`, `&str`, `()` and `CallToolResult` are content as they are; any other
//!   type (`Serialize + JsonSchema`) is structured: its `outputSchema` is derived and its value
//!   goes in `structuredContent` (under `result` when it is no object) with its JSON text as the
//!   text block; `Result<T, E>` turns `Err(e)` into `isError: true` with `e`'s text (`E` =
//!   `ErrorObject`: a JSON-RPC error instead).
//!
//! `#[tool_router]` on an `impl` block makes each of its `#[tool]` methods (taking `&self`) a
//! tool of a value of the type: `builder.register(Weather { key })?` registers them all, the
//! value shared by their calls.
//!
//! `#[prompt]` on a function whose parameters are the prompt's arguments (`String`, or
//! `Option<String>` for an optional one) returning a `String` (one user message),
//! `PromptMessage`, `Vec<PromptMessage>` or `GetPromptResult` (or a `Result` of one).
//!
//! `#[resource("scheme://path/{id}", mime_type = "text/plain")]` on a function returning a
//! `String` (the text) or `ReadResourceResult` (or a `Result` of one): a URI with `{variables}`
//! is a template, each variable a parameter of that name parsed with `FromStr`; a parameter
//! named `uri` gets the URI read.
//!
//! `#[prompt]` and `#[resource]` take `name`, `title`, `description` (`#[resource]` also
//! `mime_type`) and `scopes = [".."]` as `#[tool]` does: the scopes required of the prompt's,
//! the resource's or the template's callers.
//!
//! Every handler may take the handler's `Context` as a parameter anywhere in the list (at
//! most one): `cx.request()` is the request as received (its caller's principal, headers,
//! `_meta`), `cx.principal()` who sent it.
//!
//! ```text
//! /// Wipes the cache
//! #[tool(destructive, scopes = ["mcp:admin"])]
//! async fn wipe(cx: Context) -> String {
//!     let who = cx.principal().and_then(|p| p.subject.clone());
//!     format!("wiped by {}", who.unwrap_or_default())
//! }
//!
//! #[prompt(scopes = ["prompts:read"])]
//! fn review(code: String) -> String { format!("Review this:\n{code}") }
//!
//! #[resource("files:///{path}", scopes = ["files:read"])]
//! fn file(path: String) -> Result<String, std::io::Error> { std::fs::read_to_string(path) }
//! ```
//!
//! A setting the macro does not know, or of the wrong kind (`scopes = "mcp:admin"`), is a
//! compile error naming what is expected.

mod common;
mod other;
mod tool;

use proc_macro::TokenStream;
use quote::quote;

use common::Binding;

macro_rules! entries {
    ($($name:ident => $expand:path, $binding:ident($krate:tt);)*) => {
        $(
            #[doc = concat!("`", stringify!($name), "`: see the crate's docs")]
            #[proc_macro_attribute]
            pub fn $name(attr: TokenStream, item: TokenStream) -> TokenStream {
                let binding = Binding::$binding(quote!(::$krate));
                match $expand(&binding, attr.into(), item.into()) {
                    Ok(tokens) => tokens.into(),
                    Err(e) => e.to_compile_error().into(),
                }
            }
        )*
    };
}

entries! {
    tool_tokio => tool::tool, Async(mcp_sansio_tokio);
    tool_async_std => tool::tool, Async(mcp_sansio_async_std);
    tool_blocking => tool::tool, Blocking(mcp_sansio_blocking);
    tool_router_tokio => tool::router, Async(mcp_sansio_tokio);
    tool_router_async_std => tool::router, Async(mcp_sansio_async_std);
    tool_router_blocking => tool::router, Blocking(mcp_sansio_blocking);
    prompt_tokio => other::prompt, Async(mcp_sansio_tokio);
    prompt_async_std => other::prompt, Async(mcp_sansio_async_std);
    prompt_blocking => other::prompt, Blocking(mcp_sansio_blocking);
    resource_tokio => other::resource, Async(mcp_sansio_tokio);
    resource_async_std => other::resource, Async(mcp_sansio_async_std);
    resource_blocking => other::resource, Blocking(mcp_sansio_blocking);
}
