//! The client for the MCP conformance suite's client mode (`conformance client --command`)
//!
//! The harness appends the mock server's URL as the last argument and names the scenario
//! in `MCP_CONFORMANCE_SCENARIO`; `MCP_CONFORMANCE_PROTOCOL_VERSION` picks the lifecycle
//! (`2026-07-28`: stateless, the modern era; anything else: the `initialize` handshake) and
//! `MCP_CONFORMANCE_CONTEXT` carries scenario data (the tool calls of `http-custom-headers`).
//! Exits 0 when the scenario's steps ran, non-zero for an unknown scenario or a failed step.
//! `scripts/conformance-client` runs it under the pinned harness.
//!
//! `auth/*` scenarios authorize with OAuth ([`OAuthOptions`]) and a headless user agent
//! that reads the code from the authorization server's redirect; the context supplies
//! pre-registered credentials, a signing key or assertions where the scenario has them.

use std::sync::Arc;

use mcp_sansio::auth::{Grant, IdentityAssertion, OAuthConfig, PreRegistered, Secret};
use mcp_sansio::http::validate_tool_headers;
use mcp_sansio::schema::{InputRequest, InputRequests, InputResponse, Tool};
use mcp_sansio::{ClientConfig, EraMode, Implementation, ProtocolVersion};
use mcp_sansio_tokio::{
    Client, ClientOptions, InputHandler, JwtSigner, OAuthOptions, headless_user_agent,
};
use serde_json::{Map, Value, json};

type Error = Box<dyn std::error::Error>;

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// Accepts every elicitation with the schema's defaults (and `confirmed: true` for boolean
/// properties without one); other input requests are declined with an error
fn elicitation_handler() -> InputHandler {
    Arc::new(|requests: InputRequests| {
        Box::pin(async move {
            let mut responses = mcp_sansio::schema::InputResponses::new();
            for (key, request) in requests {
                let InputRequest::Elicit(params) = request else {
                    return Err(mcp_sansio::ErrorObject::new(
                        -32601,
                        "this client only answers elicitation",
                    ));
                };
                let params = serde_json::to_value(params).unwrap_or_default();
                let mut content = Map::new();
                if let Some(props) = params["requestedSchema"]["properties"].as_object() {
                    for (name, prop) in props {
                        if let Some(default) = prop.get("default") {
                            content.insert(name.clone(), default.clone());
                        } else if prop["type"] == "boolean" {
                            content.insert(name.clone(), Value::Bool(true));
                        }
                    }
                }
                let answer: InputResponse =
                    serde_json::from_value(json!({"action": "accept", "content": content}))
                        .map_err(|e| mcp_sansio::ErrorObject::new(-32603, e.to_string()))?;
                responses.insert(key, answer);
            }
            Ok(responses)
        })
    })
}

/// A plausible value for a property of a tool's input schema
fn sample(prop: &Value) -> Value {
    match prop["type"].as_str() {
        Some("integer" | "number") => json!(1),
        Some("boolean") => json!(true),
        Some("object") => json!({}),
        Some("array") => json!([]),
        Some("null") => Value::Null,
        _ => json!("us-west-1"),
    }
}

fn sample_args(tool: &Tool) -> Map<String, Value> {
    tool.input_schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| props.iter().map(|(k, p)| (k.clone(), sample(p))).collect())
        .unwrap_or_default()
}

/// Where the mock authorization servers redirect to (nothing listens there: the headless
/// user agent stops at the redirect)
const REDIRECT_URI: &str = "http://localhost:3000/callback";
/// The Client ID Metadata Document URL offered where servers support CIMD
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// OAuth for an `auth/*` scenario, from `MCP_CONFORMANCE_CONTEXT` where it has credentials
fn oauth(scenario: &str) -> Result<OAuthOptions, Error> {
    let context: Value = match std::env::var("MCP_CONFORMANCE_CONTEXT") {
        Ok(text) => serde_json::from_str(&text)?,
        Err(_) => Value::Null,
    };
    let text = |key: &str| context[key].as_str().map(str::to_owned);
    let mut config = OAuthConfig::new(REDIRECT_URI);
    config.client_name = "mcp-tokio-everything-client".into();
    config.client_metadata_url = Some(CLIENT_METADATA_URL.into());
    if let Some(id) = text("client_id") {
        let mut client = PreRegistered::new(id, text("client_secret").map(Secret::new));
        if let Some(issuer) = text("issuer") {
            client = client.issuer(issuer);
        }
        config.pre_registered.push(client);
    }
    if let Some(pem) = text("private_key_pem") {
        let alg = text("signing_algorithm").unwrap_or_else(|| "ES256".into());
        config.assertion_signer = Some(Arc::new(JwtSigner::from_pem(&alg, pem.as_bytes())?));
    }
    config.grant = match scenario {
        "auth/client-credentials-jwt" | "auth/client-credentials-basic" => Grant::ClientCredentials,
        "auth/wif-jwt-bearer" => Grant::JwtBearer {
            assertion: Secret::new(text("valid_jwt").ok_or("the context has no valid_jwt")?),
        },
        "auth/enterprise-managed-authorization" => {
            Grant::IdentityAssertion(IdentityAssertion::new(
                text("idp_token_endpoint").ok_or("the context has no idp_token_endpoint")?,
                text("idp_client_id").ok_or("the context has no idp_client_id")?,
                Secret::new(text("idp_id_token").ok_or("the context has no idp_id_token")?),
            ))
        }
        _ => Grant::AuthorizationCode,
    };
    Ok(OAuthOptions::new(config, headless_user_agent(REDIRECT_URI)))
}

async fn run(scenario: &str, url: &str, modern: bool) -> Result<(), Error> {
    let mut config = ClientConfig::new(Implementation::new(
        "mcp-tokio-everything-client",
        env!("CARGO_PKG_VERSION"),
    ));
    config.era = if modern {
        EraMode::Modern
    } else {
        EraMode::Legacy(ProtocolVersion::V2025_11_25)
    };
    config.capabilities = json!({"elicitation": {}});
    let mut options = ClientOptions::default().input(elicitation_handler());
    if scenario.starts_with("auth/") {
        options = options.auth(oauth(scenario)?);
    }
    let client = Client::connect_http(url, config, options).await?;
    eprintln!(
        "connected: protocol {}, server {:?}",
        client.peer().version,
        client.peer().info.as_ref().map(|i| &i.name)
    );

    // The raw `initialize` and `request-metadata` mocks declare no `tools` capability, and
    // the library refuses to send `tools/*` to a server that did not declare it: their
    // checks only need the handshake or discovery, so stop there.
    let has_tools = client.peer().capabilities.get("tools").is_some();
    if !has_tools && matches!(scenario, "initialize" | "request-metadata") {
        eprintln!("the server declares no tools capability; done after connecting");
        client.close().await;
        return Ok(());
    }
    match scenario {
        auth if auth.starts_with("auth/") => {
            // The protected mock offers `test-tool`: list, then call each tool (a step-up
            // scenario challenges the call with 403 insufficient_scope).
            for tool in client.list_tools().await? {
                let result = client.call_tool(&tool.name, Map::new()).await?;
                eprintln!("{}: {:?}", tool.name, result.content);
            }
        }
        "initialize" | "json-schema-ref-no-deref" => {
            let tools = client.list_tools().await?;
            eprintln!("tools/list: {} tools", tools.len());
        }
        "tools_call" | "request-metadata" => {
            client.list_tools().await?;
            let result = client
                .call_tool("add_numbers", object(json!({"a": 5, "b": 3})))
                .await?;
            eprintln!("add_numbers: {:?}", result.content);
        }
        "elicitation-sep1034-client-defaults" => {
            client.list_tools().await?;
            let result = client
                .call_tool("test_client_elicitation_defaults", Map::new())
                .await?;
            eprintln!("result: {:?}", result.content);
        }
        "sse-retry" => {
            client.list_tools().await?;
            let result = client.call_tool("test_reconnection", Map::new()).await?;
            eprintln!("test_reconnection: {:?}", result.content);
        }
        "json-schema-2020-12-preservation" => {
            let tools = client.list_tools().await?;
            let schema = tools
                .iter()
                .find(|t| t.name == "json_schema_2020_12_tool")
                .ok_or("json_schema_2020_12_tool is not offered")?
                .input_schema
                .clone();
            let result = client
                .call_tool("json_schema_echo", object(json!({"schema": schema})))
                .await?;
            eprintln!("json_schema_echo: {:?}", result.content);
        }
        "sep-2322-client-request-state" => {
            client.list_tools().await?;
            for name in [
                "test_mrtr_echo_state",
                "test_mrtr_unrelated",
                "test_mrtr_no_state",
                "test_mrtr_no_result_type",
            ] {
                match client.call_tool(name, Map::new()).await {
                    Ok(r) => eprintln!("{name}: {:?}", r.content),
                    Err(e) => eprintln!("{name}: error: {e}"),
                }
            }
        }
        "http-standard-headers" => {
            let tools = client.list_tools().await?;
            for tool in &tools {
                client.call_tool(&tool.name, Map::new()).await?;
            }
            for resource in client.list_resources().await? {
                client.read_resource(&resource.uri).await?;
            }
            for prompt in client.list_prompts().await? {
                let params: mcp_sansio::schema::GetPromptParams =
                    serde_json::from_value(json!({"name": prompt.name}))?;
                client.get_prompt(params).await?;
            }
        }
        "http-custom-headers" => {
            client.list_tools().await?;
            let context: Value = serde_json::from_str(&std::env::var("MCP_CONFORMANCE_CONTEXT")?)?;
            let calls = context["toolCalls"]
                .as_array()
                .ok_or("MCP_CONFORMANCE_CONTEXT has no toolCalls")?;
            for call in calls {
                let name = call["name"].as_str().ok_or("a tool call without a name")?;
                let result = client
                    .call_tool(name, object(call["arguments"].clone()))
                    .await?;
                eprintln!("{name}: {:?}", result.content);
            }
        }
        "http-invalid-tool-headers" => {
            // Neither surface nor call a tool whose x-mcp-header annotations are invalid:
            // `list_tools` leaves them out on 2026-07-28 connections.
            for tool in client.list_tools().await? {
                debug_assert!(validate_tool_headers(&tool).is_ok());
                eprintln!("calling tool {}", tool.name);
                client.call_tool(&tool.name, sample_args(&tool)).await?;
            }
        }
        other => return Err(format!("unknown scenario {other:?}").into()),
    }
    client.close().await;
    Ok(())
}

/// Logs to stderr (stdout may be the stdio transport) as `RUST_LOG` says, nothing without it:
/// `RUST_LOG=mcp_sansio=debug` shows every session and request
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("off"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    init_logging();
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: everything-client <server-url>");
        return std::process::ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let modern = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").is_ok_and(|v| v == "2026-07-28");
    eprintln!("scenario {scenario:?}, modern {modern}, url {url}");
    match run(&scenario, &url, modern).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
