//! An MCP server protected by OAuth bearer tokens, verified as JWTs
//!
//! ```text
//! cargo run -p mcp-sansio-tokio --example jwt-protected-server -- serve 4100
//! cargo run -p mcp-sansio-tokio --example jwt-protected-server -- mint 4100 "mcp:read" 3600
//! ```
//!
//! `serve PORT` listens on `127.0.0.1:PORT/mcp` and publishes Protected Resource Metadata at
//! `/.well-known/oauth-protected-resource/mcp` naming the authorization server
//! `http://127.0.0.1:<PORT+1>` (an authorization server would issue the tokens; here `mint`
//! stands in for it). Every request needs `Authorization: Bearer <JWT>` signed with HS256 and
//! the shared secret (`MCP_JWT_SECRET`, default `example-secret`), issued by that
//! authorization server, for this resource (`aud`), unexpired, with scope `mcp:read`.
//! Missing or invalid tokens get 401, a token without `mcp:read` gets 403
//! `insufficient_scope`, each with a `WWW-Authenticate` challenge. The tool `hello` greets
//! the token's subject (`sub`); `purge` also needs `mcp:admin` (403 `insufficient_scope`
//! naming it otherwise: a client steps up by asking for it).
//!
//! `mint PORT SCOPE SECONDS` prints a token for that server (negative seconds: expired).

use std::net::SocketAddr;
use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use mcp_sansio::http::HttpConfig;
use mcp_sansio::http::protected::ResourceServer;
use mcp_sansio::schema::{CallToolResult, Tool};
use mcp_sansio::server::EntryKind;
use mcp_sansio::{Implementation, ServerConfig};
use mcp_sansio_tokio::{Protection, Server, jwt_verifier};
use serde_json::{Map, json};

type Error = Box<dyn std::error::Error>;

fn secret() -> Vec<u8> {
    std::env::var("MCP_JWT_SECRET")
        .unwrap_or_else(|_| "example-secret".into())
        .into_bytes()
}

fn resource(port: u16) -> String {
    format!("http://127.0.0.1:{port}/mcp")
}

fn issuer(port: u16) -> String {
    format!("http://127.0.0.1:{}", port.wrapping_add(1))
}

async fn serve(port: u16) -> Result<(), Error> {
    let rules = ResourceServer::new(&resource(port), &issuer(port))
        .ok_or("not an http URL")?
        .required_scopes(&["mcp:read"]);
    let mut validation = Validation::new(Algorithm::HS256);
    validation.set_audience(&[resource(port)]);
    validation.set_issuer(&[issuer(port)]);
    validation.leeway = 0;
    validation.validate_nbf = true;
    let verifier = jwt_verifier(DecodingKey::from_secret(&secret())?, validation);

    let server = Server::builder(ServerConfig::new(Implementation::new(
        "jwt-protected-server",
        env!("CARGO_PKG_VERSION"),
    )))
    // Each caller is told who they are: the handler reads the verified token's principal.
    .tool(Tool::new("hello", Map::new()), |cx, _args| async move {
        let who = cx.principal().and_then(|p| p.subject.clone());
        let who = who.unwrap_or_else(|| "stranger".into());
        Ok(CallToolResult::text(format!("hello, {who}")))
    })?
    // Only tokens with `mcp:admin` may call this one: others get 403 insufficient_scope.
    .tool(Tool::new("purge", Map::new()), |cx, _args| async move {
        let who = cx.principal().and_then(|p| p.subject.clone());
        Ok(CallToolResult::text(format!(
            "purged, on behalf of {who:?}"
        )))
    })?
    .require_scopes(EntryKind::Tool, "purge", ["mcp:admin"])?
    .build();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let handle = server
        .serve_http_protected(
            addr,
            HttpConfig::default(),
            Protection::new(rules, verifier),
        )
        .await?;
    eprintln!("serving {} (protected)", resource(port));
    handle.wait().await;
    Ok(())
}

fn mint(port: u16, scope: &str, seconds: i64) -> Result<String, Error> {
    let now = SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs() as i64;
    let claims = json!({
        "iss": issuer(port),
        "aud": resource(port),
        "sub": std::env::var("MCP_JWT_SUBJECT").unwrap_or_else(|_| "example-user".into()),
        "scope": scope,
        "iat": now,
        "exp": now + seconds,
    });
    Ok(jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims,
        &EncodingKey::from_secret(&secret())?,
    )?)
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

#[tokio::main]
async fn main() -> Result<(), Error> {
    init_logging();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let port =
        |i: usize| -> Result<u16, Error> { Ok(args.get(i).map_or(Ok(4100), |p| p.parse())?) };
    match args.first().map(String::as_str) {
        Some("serve") => serve(port(1)?).await,
        Some("mint") => {
            let scope = args.get(2).map_or("mcp:read", String::as_str);
            let seconds = args.get(3).map_or(Ok(3600), |s| s.parse())?;
            println!("{}", mint(port(1)?, scope, seconds)?);
            Ok(())
        }
        _ => Err("usage: jwt-protected-server serve PORT | mint PORT SCOPE SECONDS".into()),
    }
}
