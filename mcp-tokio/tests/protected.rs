//! A server protected by a JWT verifier on 127.0.0.1: the Protected Resource Metadata is
//! served; missing, invalid, expired, foreign and under-scoped tokens get 401 or 403 with
//! the right `WWW-Authenticate`; a good token reaches the MCP server

use std::net::SocketAddr;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client as Hyper;
use hyper_util::rt::TokioExecutor;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use mcp_sansio::auth::BearerChallenge;
use mcp_sansio::auth::resource::ResourceServer;
use mcp_sansio::http::HttpConfig;
use mcp_sansio::schema::{CallToolResult, Tool};
use mcp_sansio::{Implementation, ServerConfig};
use mcp_sansio_tokio::{HttpServerHandle, Protection, Server, jwt_verifier};
use serde_json::{Map, Value, json};

const SECRET: &[u8] = b"test-secret";
const ISSUER: &str = "http://127.0.0.1:1";

/// A free port on 127.0.0.1 (the resource URL names it before the server binds)
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn protected() -> (HttpServerHandle, String) {
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let rules = ResourceServer::new(&resource, ISSUER)
        .unwrap()
        .required_scopes(&["mcp:read"]);
    let mut validation = Validation::new(Algorithm::HS256);
    validation.set_audience(&[resource.as_str()]);
    validation.set_issuer(&[ISSUER]);
    validation.leeway = 0;
    let verifier = jwt_verifier(DecodingKey::from_secret(SECRET).unwrap(), validation);
    let server = Server::builder(ServerConfig::new(Implementation::new("protected", "1.0")))
        .tool(Tool::new("hello", Map::new()), |_cx, _args| async move {
            Ok(CallToolResult::text("hello"))
        })
        .unwrap()
        .build();
    let handle = server
        .serve_http_protected(
            SocketAddr::from(([127, 0, 0, 1], port)),
            HttpConfig::default(),
            Protection::new(rules, verifier),
        )
        .await
        .unwrap();
    (handle, resource)
}

fn token(resource: &str, scope: &str, lifetime: i64) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let claims = json!({
        "iss": ISSUER, "aud": resource, "sub": "u", "scope": scope,
        "iat": now, "exp": now + lifetime,
    });
    jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims,
        &EncodingKey::from_secret(SECRET).unwrap(),
    )
    .unwrap()
}

async fn request(
    url: &str,
    method: &str,
    authorization: Option<&str>,
) -> (u16, Option<String>, Value) {
    let net = Hyper::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}},
    });
    let mut builder = hyper::Request::builder()
        .method(method)
        .uri(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream");
    if let Some(a) = authorization {
        builder = builder.header("Authorization", a);
    }
    let body = if method == "POST" {
        Bytes::from(body.to_string())
    } else {
        Bytes::new()
    };
    let response = net
        .request(builder.body(Full::new(body)).unwrap())
        .await
        .unwrap();
    let status = response.status().as_u16();
    let www = response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned());
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8_lossy(&bytes);
    // A JSON body, or the JSON of the first SSE data line.
    let json = serde_json::from_str(&text).unwrap_or_else(|_| {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .find_map(|d| serde_json::from_str(d.trim()).ok())
            .unwrap_or(Value::Null)
    });
    (status, www, json)
}

fn challenge(www: Option<String>) -> BearerChallenge {
    BearerChallenge::from_headers([www.expect("a WWW-Authenticate header").as_str()])
        .expect("a Bearer challenge")
}

#[tokio::test]
async fn tokens_are_checked_before_the_mcp_server_runs() {
    let (handle, resource) = protected().await;
    let metadata_url = resource.replace("/mcp", "/.well-known/oauth-protected-resource/mcp");

    // The metadata is public.
    let (status, _, doc) = request(&metadata_url, "GET", None).await;
    assert_eq!(status, 200);
    assert_eq!(doc["resource"], resource.as_str());
    assert_eq!(doc["authorization_servers"], json!([ISSUER]));
    assert_eq!(doc["scopes_supported"], json!(["mcp:read"]));

    // No token: 401 pointing at the metadata, with the scope to ask for.
    let (status, www, _) = request(&resource, "POST", None).await;
    assert_eq!(status, 401);
    let c = challenge(www);
    assert_eq!(c.resource_metadata.as_deref(), Some(metadata_url.as_str()));
    assert_eq!(c.scope.as_deref(), Some("mcp:read"));

    // Garbage, expired, and another resource's tokens: 401 invalid_token.
    for (bad, why) in [
        ("Bearer not-a-jwt".to_owned(), "invalid"),
        (
            format!("Bearer {}", token(&resource, "mcp:read", -120)),
            "expired",
        ),
        (
            format!(
                "Bearer {}",
                token("http://127.0.0.1:9/mcp", "mcp:read", 600)
            ),
            "not for this resource",
        ),
    ] {
        let (status, www, body) = request(&resource, "POST", Some(&bad)).await;
        assert_eq!(status, 401, "{why}");
        let c = challenge(www);
        assert_eq!(c.error.as_deref(), Some("invalid_token"), "{why}");
        assert!(c.error_description.unwrap().contains(why), "{why}");
        assert_eq!(c.resource_metadata.as_deref(), Some(metadata_url.as_str()));
        assert_eq!(body["error"], "invalid_token");
    }

    // A valid token without the scope: 403 insufficient_scope.
    let under = format!("Bearer {}", token(&resource, "mcp:other", 600));
    let (status, www, _) = request(&resource, "POST", Some(&under)).await;
    assert_eq!(status, 403);
    let c = challenge(www);
    assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
    assert_eq!(c.scope.as_deref(), Some("mcp:read"));

    // A good token reaches the MCP server.
    let good = format!("Bearer {}", token(&resource, "mcp:read mcp:other", 600));
    let (status, www, body) = request(&resource, "POST", Some(&good)).await;
    assert_eq!(status, 200, "{body}");
    assert!(www.is_none());
    assert_eq!(body["result"]["serverInfo"]["name"], "protected");
    handle.shutdown().await;
}
