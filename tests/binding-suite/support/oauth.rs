//! OAuth on 127.0.0.1: HS256 access tokens, the rules and JWT validation of a protected
//! resource, the checks every protected server must pass (metadata, 401 and 403 with the
//! right `WWW-Authenticate`, a good token reaching the MCP server), and a minimal
//! authorization server for a public client on a thread of its own

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use jsonwebtoken::{Algorithm, EncodingKey, Header, Validation};
use mcp_sansio::auth::BearerChallenge;
use mcp_sansio::http::protected::ResourceServer;
use serde_json::{Value, json};
use sha2::Digest;

use super::raw_http::raw;

pub(crate) const SECRET: &[u8] = b"test-secret";
pub(crate) const SCOPE: &str = "mcp:read";
/// Never fetched: the headless user agent stops at it
pub(crate) const REDIRECT: &str = "http://127.0.0.1:1/callback";

/// A free port on 127.0.0.1 (the resource URL names it before the server binds)
pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn now() -> i64 {
    i64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs(),
    )
    .unwrap()
}

/// An HS256 access token for `resource` from `issuer`, `serial` telling apart tokens issued
/// in the same second
pub(crate) fn token(
    issuer: &str,
    resource: &str,
    scope: &str,
    lifetime: i64,
    serial: usize,
) -> String {
    let claims = json!({
        "iss": issuer, "aud": resource, "sub": "u", "scope": scope,
        "iat": now(), "exp": now() + lifetime, "n": serial,
    });
    jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims,
        &EncodingKey::from_secret(SECRET).unwrap(),
    )
    .unwrap()
}

/// An HS256 access token for `resource` from `issuer`, for user `subject` of the OAuth
/// client `client_id`, granting `scope` (space separated), valid for ten minutes
pub(crate) fn user_token(
    issuer: &str,
    resource: &str,
    subject: &str,
    client_id: &str,
    scope: &str,
) -> String {
    let claims = json!({
        "iss": issuer, "aud": resource, "sub": subject, "client_id": client_id,
        "scope": scope, "iat": now(), "exp": now() + 600,
    });
    jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims,
        &EncodingKey::from_secret(SECRET).unwrap(),
    )
    .unwrap()
}

/// The rules of the resource at `resource` trusting `issuer`: [`SCOPE`] required
pub(crate) fn rules(resource: &str, issuer: &str) -> ResourceServer {
    ResourceServer::new(resource, issuer)
        .unwrap()
        .required_scopes(&[SCOPE])
}

/// How the resource at `resource` validates `issuer`'s HS256 tokens: audience, issuer, no
/// leeway
pub(crate) fn validation(resource: &str, issuer: &str) -> Validation {
    let mut validation = Validation::new(Algorithm::HS256);
    validation.set_audience(&[resource]);
    validation.set_issuer(&[issuer]);
    validation.leeway = 0;
    validation
}

/// POSTs an initialize (or GETs) with an optional `Authorization`: status, the
/// `WWW-Authenticate` header and the JSON body (or the first SSE event's)
pub(crate) fn request(
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
    let (status, headers, body) = raw(url, method, &headers, body.as_bytes());
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

/// The server protecting `resource` with [`rules`] for `issuer`'s tokens serves its
/// metadata, refuses missing, bad, expired, foreign and under-scoped tokens with 401 or 403
/// and the right challenge, and lets a good token reach the MCP server (named `protected`)
pub(crate) fn tokens_are_checked(resource: &str, issuer: &str) {
    let metadata_url = resource.replace("/mcp", "/.well-known/oauth-protected-resource/mcp");

    // The metadata is public.
    let (status, _, doc) = request(&metadata_url, "GET", None);
    assert_eq!(status, 200);
    assert_eq!(doc["resource"], resource);
    assert_eq!(doc["authorization_servers"], json!([issuer]));
    assert_eq!(doc["scopes_supported"], json!([SCOPE]));

    // No token, on POST and on GET: 401 pointing at the metadata, with the scope to ask for.
    for method in ["POST", "GET"] {
        let (status, www, _) = request(resource, method, None);
        assert_eq!(status, 401, "{method}");
        let c = challenge(www);
        assert_eq!(c.resource_metadata.as_deref(), Some(metadata_url.as_str()));
        assert_eq!(c.scope.as_deref(), Some(SCOPE));
        assert_eq!(c.error, None);
    }

    // Garbage, expired, and another resource's tokens: 401 invalid_token.
    for (bad, why) in [
        ("Bearer not-a-jwt".to_owned(), "invalid"),
        (
            format!("Bearer {}", token(issuer, resource, SCOPE, -120, 0)),
            "expired",
        ),
        (
            format!(
                "Bearer {}",
                token(issuer, "http://127.0.0.1:9/mcp", SCOPE, 600, 0)
            ),
            "not for this resource",
        ),
    ] {
        let (status, www, body) = request(resource, "POST", Some(&bad));
        assert_eq!(status, 401, "{why}");
        let c = challenge(www);
        assert_eq!(c.error.as_deref(), Some("invalid_token"), "{why}");
        assert!(c.error_description.unwrap().contains(why), "{why}");
        assert_eq!(c.resource_metadata.as_deref(), Some(metadata_url.as_str()));
        assert_eq!(body["error"], "invalid_token");
    }

    // Not a bearer token at all: as if there were none.
    let (status, www, _) = request(resource, "POST", Some("Basic dTpw"));
    assert_eq!(status, 401);
    assert_eq!(challenge(www).error, None);

    // A valid token without the scope: 403 insufficient_scope.
    let under = format!("Bearer {}", token(issuer, resource, "mcp:other", 600, 0));
    let (status, www, _) = request(resource, "POST", Some(&under));
    assert_eq!(status, 403);
    let c = challenge(www);
    assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
    assert_eq!(c.scope.as_deref(), Some(SCOPE));

    // A good token reaches the MCP server.
    let good = format!(
        "Bearer {}",
        token(issuer, resource, "mcp:read mcp:other", 600, 0)
    );
    let (status, www, body) = request(resource, "POST", Some(&good));
    assert_eq!(status, 200, "{body}");
    assert!(www.is_none());
    assert_eq!(body["result"]["serverInfo"]["name"], "protected");
}

/// What the authorization server saw
#[derive(Default)]
pub(crate) struct Seen {
    /// `METHOD path` of every request, in order
    pub(crate) requests: Vec<String>,
    /// The PKCE challenge and `resource` of the authorization request
    pub(crate) challenge: Option<String>,
    pub(crate) resource_at_authorize: Option<String>,
    /// Whether the token request's verifier matched the challenge
    pub(crate) pkce_ok: bool,
    pub(crate) resource_at_token: Option<String>,
    /// The `scope` of each authorization request, in order (`None`: none asked for)
    pub(crate) scopes_asked: Vec<Option<String>>,
}

/// A minimal OAuth 2.1 authorization server on 127.0.0.1, for a public client: metadata
/// (RFC 8414), dynamic registration, an authorization endpoint that approves at once
/// (redirect with `code`, `state` and `iss`), and a token endpoint that checks the PKCE
/// verifier and issues a JWT for the requested resource granting the scopes the
/// authorization request asked for ([`SCOPE`] when it asked for none). It stops when
/// dropped.
pub(crate) struct AuthorizationServer {
    pub(crate) issuer: String,
    pub(crate) seen: Arc<Mutex<Seen>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl AuthorizationServer {
    pub(crate) fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let issuer = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Seen::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (issuer, seen, stop) = (issuer.clone(), Arc::clone(&seen), Arc::clone(&stop));
            thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    if let Ok(stream) = stream {
                        let _ = serve_one(stream, &issuer, &seen);
                    }
                }
            })
        };
        Self {
            issuer,
            seen,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for AuthorizationServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.issuer.trim_start_matches("http://"));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The pairs of an `application/x-www-form-urlencoded` text (a form body or a query)
pub(crate) fn form(text: &str) -> HashMap<String, String> {
    form_urlencoded::parse(text.as_bytes())
        .into_owned()
        .collect()
}

/// Answers one request (the clients send `Connection: close`)
fn serve_one(mut stream: TcpStream, issuer: &str, seen: &Mutex<Seen>) -> std::io::Result<()> {
    let mut all = Vec::new();
    let mut buf = [0u8; 4096];
    let (method, target, body) = loop {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        all.extend_from_slice(&buf[..n]);
        let Some(end) = all.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&all[..end]).into_owned();
        let mut lines = head.split("\r\n");
        let mut request_line = lines.next().unwrap_or_default().split(' ');
        let length: usize = lines
            .filter_map(|l| l.split_once(':'))
            .find(|(n, _)| n.trim().eq_ignore_ascii_case("content-length"))
            .map_or(0, |(_, v)| v.trim().parse().unwrap());
        if all.len() >= end + 4 + length {
            let body = String::from_utf8_lossy(&all[end + 4..end + 4 + length]).into_owned();
            let method = request_line.next().unwrap_or_default().to_owned();
            let target = request_line.next().unwrap_or_default().to_owned();
            break (method, target, body);
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
            s.scopes_asked.push(q.get("scope").cloned());
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
                // What the last authorization request asked for is granted
                let scope = s.scopes_asked.last().cloned().flatten();
                let scope = scope.unwrap_or_else(|| SCOPE.to_owned());
                (
                    200,
                    None,
                    json!({
                        "access_token": token(issuer, &resource, &scope, 600, 0),
                        "token_type": "Bearer",
                        "expires_in": 600,
                        "scope": scope,
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
    stream.write_all(response.as_bytes())?;
    stream.flush()
}
