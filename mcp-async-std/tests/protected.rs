//! OAuth on 127.0.0.1: a server protected by a JWT verifier answers the Protected Resource
//! Metadata and refuses missing, invalid, expired, foreign and under-scoped tokens with 401
//! or 403 and the right `WWW-Authenticate`; and our client, challenged by it, discovers a
//! small authorization server (the fixture below), registers, authorizes with PKCE through
//! the headless user agent, gets a token and calls the tool

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

mod common;

use base64::Engine;
use futures_lite::{AsyncReadExt, AsyncWriteExt};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use mcp_sansio::auth::resource::ResourceServer;
use mcp_sansio::auth::{BearerChallenge, OAuthConfig};
use mcp_sansio::http::HttpConfig;
use mcp_sansio::schema::{CallToolResult, Tool};
use mcp_sansio::{ClientConfig, Implementation, ServerConfig};
use mcp_sansio_async_std::{
    Client, ClientOptions, HttpServerHandle, OAuthOptions, Protection, Server, headless_user_agent,
    jwt_verifier,
};
use serde_json::{Map, Value, json};
use sha2::Digest;

const SECRET: &[u8] = b"test-secret";
const REDIRECT: &str = "http://127.0.0.1:1/callback";

/// A free port on 127.0.0.1 (the resource URL names it before the server binds)
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn protected(issuer: &str) -> (HttpServerHandle, String) {
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let rules = ResourceServer::new(&resource, issuer)
        .unwrap()
        .required_scopes(&["mcp:read"]);
    let mut validation = Validation::new(Algorithm::HS256);
    validation.set_audience(&[resource.as_str()]);
    validation.set_issuer(&[issuer]);
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

fn token(issuer: &str, resource: &str, scope: &str, lifetime: i64) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let claims = json!({
        "iss": issuer, "aud": resource, "sub": "u", "scope": scope,
        "iat": now, "exp": now + lifetime,
    });
    jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims,
        &EncodingKey::from_secret(SECRET).unwrap(),
    )
    .unwrap()
}

/// POSTs an initialize (or GETs) with an optional `Authorization`: status, the
/// `WWW-Authenticate` header and the JSON body (or the first SSE event's)
async fn request(
    url: &str,
    method: &str,
    authorization: Option<&str>,
) -> (u16, Option<String>, Value) {
    let init = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}},
    });
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    if let Some(a) = authorization {
        headers.push(("Authorization", a));
    }
    let body = if method == "POST" {
        init.to_string()
    } else {
        String::new()
    };
    let (status, headers, body) = common::raw(url, method, &headers, body).await;
    let text = String::from_utf8_lossy(&body);
    let json = serde_json::from_str(&text).unwrap_or_else(|_| {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .find_map(|d| serde_json::from_str(d.trim()).ok())
            .unwrap_or(Value::Null)
    });
    (status, headers.get("www-authenticate").cloned(), json)
}

fn challenge(www: Option<String>) -> BearerChallenge {
    BearerChallenge::from_headers([www.expect("a WWW-Authenticate header").as_str()])
        .expect("a Bearer challenge")
}

#[test]
fn tokens_are_checked_before_the_mcp_server_runs() {
    smol::block_on(async {
        let issuer = "http://127.0.0.1:1";
        let (handle, resource) = protected(issuer).await;
        let metadata_url = resource.replace("/mcp", "/.well-known/oauth-protected-resource/mcp");

        // The metadata is public.
        let (status, _, doc) = request(&metadata_url, "GET", None).await;
        assert_eq!(status, 200);
        assert_eq!(doc["resource"], resource.as_str());
        assert_eq!(doc["authorization_servers"], json!([issuer]));
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
                format!("Bearer {}", token(issuer, &resource, "mcp:read", -120)),
                "expired",
            ),
            (
                format!(
                    "Bearer {}",
                    token(issuer, "http://127.0.0.1:9/mcp", "mcp:read", 600)
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
        let under = format!("Bearer {}", token(issuer, &resource, "mcp:other", 600));
        let (status, www, _) = request(&resource, "POST", Some(&under)).await;
        assert_eq!(status, 403);
        let c = challenge(www);
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(c.scope.as_deref(), Some("mcp:read"));

        // A good token reaches the MCP server.
        let good = format!(
            "Bearer {}",
            token(issuer, &resource, "mcp:read mcp:other", 600)
        );
        let (status, www, body) = request(&resource, "POST", Some(&good)).await;
        assert_eq!(status, 200, "{body}");
        assert!(www.is_none());
        assert_eq!(body["result"]["serverInfo"]["name"], "protected");
        handle.shutdown().await;
    });
}

/// What the authorization server fixture saw
#[derive(Default)]
struct Seen {
    /// `METHOD path` of every request, in order
    requests: Vec<String>,
    /// The PKCE challenge and `resource` of the authorization request
    challenge: Option<String>,
    resource_at_authorize: Option<String>,
    /// Whether the token request's verifier matched the challenge
    pkce_ok: bool,
    resource_at_token: Option<String>,
}

/// A minimal OAuth 2.1 authorization server on 127.0.0.1: metadata (RFC 8414), dynamic
/// registration, an authorization endpoint that approves at once (redirect with `code`,
/// `state` and `iss`), and a token endpoint that checks the PKCE verifier and issues a JWT
/// for the requested resource
async fn authorization_server(seen: Arc<Mutex<Seen>>) -> (String, smol::Task<()>) {
    let listener = async_net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", listener.local_addr().unwrap());
    let task = {
        let issuer = issuer.clone();
        smol::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let seen = Arc::clone(&seen);
                let issuer = issuer.clone();
                smol::spawn(async move {
                    let _ = serve_one(stream, &issuer, &seen).await;
                })
                .detach();
            }
        })
    };
    (issuer, task)
}

fn form(text: &str) -> HashMap<String, String> {
    form_urlencoded::parse(text.as_bytes())
        .into_owned()
        .collect()
}

/// Answers one request (the clients send `Connection: close`)
async fn serve_one(
    mut stream: async_net::TcpStream,
    issuer: &str,
    seen: &Mutex<Seen>,
) -> std::io::Result<()> {
    let mut all = Vec::new();
    let mut buf = [0u8; 4096];
    let (method, target, body) = loop {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        all.extend_from_slice(&buf[..n]);
        let mut fields = [httparse::EMPTY_HEADER; 32];
        let mut request = httparse::Request::new(&mut fields);
        if let Ok(httparse::Status::Complete(len)) = request.parse(&all) {
            let length: usize = request
                .headers
                .iter()
                .find(|h| h.name.eq_ignore_ascii_case("content-length"))
                .map_or(0, |h| {
                    std::str::from_utf8(h.value).unwrap().parse().unwrap()
                });
            if all.len() >= len + length {
                let body = String::from_utf8_lossy(&all[len..len + length]).into_owned();
                break (
                    request.method.unwrap().to_owned(),
                    request.path.unwrap().to_owned(),
                    body,
                );
            }
        }
    };
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    seen.lock()
        .unwrap()
        .requests
        .push(format!("{method} {path}"));
    let (status, location, json) = match (method.as_str(), path) {
        ("GET", "/.well-known/oauth-authorization-server") => (
            200,
            None,
            json!({
                "issuer": issuer,
                "authorization_endpoint": format!("{issuer}/authorize"),
                "token_endpoint": format!("{issuer}/token"),
                "registration_endpoint": format!("{issuer}/register"),
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
            }),
        ),
        ("POST", "/register") => {
            let mut doc: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            doc["client_id"] = json!("registered-client");
            doc["token_endpoint_auth_method"] = json!("none");
            (201, None, doc)
        }
        ("GET", "/authorize") => {
            let q = form(query);
            let mut s = seen.lock().unwrap();
            s.challenge = q.get("code_challenge").cloned();
            s.resource_at_authorize = q.get("resource").cloned();
            assert_eq!(q["code_challenge_method"], "S256");
            assert_eq!(q["client_id"], "registered-client");
            let back = format!(
                "{}?code=the-code&state={}&iss={}",
                q["redirect_uri"],
                q.get("state").cloned().unwrap_or_default(),
                issuer
            );
            (302, Some(back), Value::Null)
        }
        ("POST", "/token") => {
            let f = form(&body);
            let mut s = seen.lock().unwrap();
            let digest = sha2::Sha256::digest(f["code_verifier"].as_bytes());
            let expected = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest);
            s.pkce_ok = s.challenge.as_deref() == Some(expected.as_str());
            s.resource_at_token = f.get("resource").cloned();
            if f["grant_type"] != "authorization_code" || f["code"] != "the-code" || !s.pkce_ok {
                (400, None, json!({"error": "invalid_grant"}))
            } else {
                let resource = f["resource"].clone();
                (
                    200,
                    None,
                    json!({
                        "access_token": token(issuer, &resource, "mcp:read", 600),
                        "token_type": "Bearer",
                        "expires_in": 600,
                        "scope": "mcp:read",
                    }),
                )
            }
        }
        _ => (404, None, json!({"error": "not_found"})),
    };
    let body = if json.is_null() {
        String::new()
    } else {
        json.to_string()
    };
    let mut response = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if let Some(location) = location {
        response.push_str(&format!("Location: {location}\r\n"));
    }
    response.push_str("\r\n");
    response.push_str(&body);
    stream.write_all(response.as_bytes()).await?;
    stream.flush().await
}

#[test]
fn our_client_authorizes_with_pkce_and_calls_the_protected_server() {
    smol::block_on(async {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let (issuer, as_task) = authorization_server(Arc::clone(&seen)).await;
        let (handle, resource) = protected(&issuer).await;

        let auth = OAuthOptions::new(OAuthConfig::new(REDIRECT), headless_user_agent(REDIRECT));
        let config = ClientConfig::new(Implementation::new("oauth-client", "1.0"));
        let client = common::timeout(
            Duration::from_secs(30),
            Client::connect_http(&resource, config, ClientOptions::default().auth(auth)),
        )
        .await
        .expect("connects in time")
        .expect("connects after authorizing");
        let result = client.call_tool("hello", Map::new()).await.unwrap();
        assert_eq!(result.content[0].as_text(), Some("hello"));
        client.close().await;
        handle.shutdown().await;
        drop(as_task);

        let seen = seen.lock().unwrap();
        for step in [
            "GET /.well-known/oauth-authorization-server",
            "POST /register",
            "GET /authorize",
            "POST /token",
        ] {
            assert!(
                seen.requests.iter().any(|r| r == step),
                "{step} in {:?}",
                seen.requests
            );
        }
        assert!(seen.pkce_ok, "the verifier matches the S256 challenge");
        // RFC 8707: the resource is the server's, byte for byte, in both requests.
        assert_eq!(
            seen.resource_at_authorize.as_deref(),
            Some(resource.as_str())
        );
        assert_eq!(seen.resource_at_token.as_deref(), Some(resource.as_str()));
    });
}
