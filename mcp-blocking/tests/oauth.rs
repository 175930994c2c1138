//! OAuth on plain threads, on 127.0.0.1, beyond what the binding suite's `protected.rs`
//! checks for every binding (a protected server refusing bad tokens; a public client
//! authorizing with PKCE): a blocking client registers as a confidential client
//! (`client_secret_basic`) with an in-test authorization server (401, discovery, dynamic
//! registration, authorization code with PKCE, token, the retried request) and refreshes its
//! token when the server stops accepting it; a refused authorization fails the connection

mod common;

use std::collections::{HashMap, HashSet};
use std::io::Cursor;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use jsonwebtoken::DecodingKey;
use mcp_sansio::auth::OAuthConfig;
use mcp_sansio::http::HttpConfig;
use mcp_sansio::schema::{CallToolResult, Tool};
use mcp_sansio::{ClientConfig, EraMode, Implementation, ProtocolVersion, ServerConfig};
use mcp_sansio_blocking::{
    Client, ClientOptions, HttpServerHandle, OAuthOptions, Protection, Server, TokenVerifier,
    headless_user_agent, jwt_verifier,
};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use common::support::oauth::{REDIRECT, SCOPE, SECRET, form, free_port, rules, token, validation};

const CLIENT_ID: &str = "client-1";
const CLIENT_SECRET: &str = "client-1-secret";

/// Tokens the protected server no longer accepts
type Revoked = Arc<Mutex<HashSet<String>>>;

/// A blocking MCP server at `/mcp` accepting `issuer`'s JWTs with [`SCOPE`], minus the
/// revoked ones
fn protected(issuer: &str, revoked: Revoked) -> (HttpServerHandle, String) {
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let jwt = jwt_verifier(
        DecodingKey::from_secret(SECRET).unwrap(),
        validation(&resource, issuer),
    );
    let verifier: TokenVerifier = Arc::new(move |token: &str| {
        if revoked.lock().unwrap().contains(token) {
            return Err("the token was revoked".into());
        }
        jwt(token)
    });
    let server = Server::builder(ServerConfig::new(Implementation::new("protected", "1.0")))
        .tool(Tool::new("hello", Map::new()), |_cx, _args| {
            Ok(CallToolResult::text("hello"))
        })
        .unwrap()
        .build();
    let handle = server
        .serve_http_protected(
            SocketAddr::from(([127, 0, 0, 1], port)),
            HttpConfig::default(),
            Protection::new(rules(&resource, issuer), verifier),
        )
        .unwrap();
    (handle, resource)
}

/// What the authorization server remembers
#[derive(Default)]
struct AsState {
    /// The resource it issues tokens for
    resource: String,
    /// Every request it answered, as `METHOD /path` (`token` requests with their grant)
    log: Vec<String>,
    /// Authorization codes: code → (PKCE challenge, scope)
    codes: HashMap<String, (String, String)>,
    /// Refresh tokens it issued
    refresh: HashSet<String>,
    /// Access tokens it issued, in order
    issued: Vec<String>,
}

/// A small OAuth 2.1 authorization server on 127.0.0.1: RFC 8414 metadata, dynamic client
/// registration (a confidential client, `client_secret_basic`), authorization code with
/// PKCE S256 approved without a login page, and the token endpoint (`authorization_code`,
/// `refresh_token`), checking `resource` everywhere
struct AuthServer {
    issuer: String,
    state: Arc<Mutex<AsState>>,
    http: Arc<tiny_http::Server>,
    thread: Option<JoinHandle<()>>,
}

impl AuthServer {
    fn start() -> Self {
        let http = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let port = http.server_addr().to_ip().unwrap().port();
        let issuer = format!("http://127.0.0.1:{port}");
        let state = Arc::new(Mutex::new(AsState::default()));
        let thread = {
            let http = Arc::clone(&http);
            let state = Arc::clone(&state);
            let issuer = issuer.clone();
            thread::spawn(move || {
                // Ends when `unblock` makes `recv` fail
                while let Ok(mut request) = http.recv() {
                    let (status, headers, body) = answer(&issuer, &state, &mut request);
                    let headers = headers
                        .iter()
                        .map(|(n, v)| tiny_http::Header::from_bytes(*n, v.as_bytes()).unwrap())
                        .collect();
                    let length = body.len();
                    let response = tiny_http::Response::new(
                        tiny_http::StatusCode(status),
                        headers,
                        Cursor::new(body),
                        Some(length),
                        None,
                    );
                    let _ = request.respond(response);
                }
            })
        };
        Self {
            issuer,
            state,
            http,
            thread: Some(thread),
        }
    }

    fn log(&self) -> Vec<String> {
        self.state.lock().unwrap().log.clone()
    }
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        self.http.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

type Answer = (u16, Vec<(&'static str, String)>, Vec<u8>);

fn json_answer(status: u16, body: &Value) -> Answer {
    (
        status,
        vec![("Content-Type", "application/json".into())],
        body.to_string().into_bytes(),
    )
}

fn oauth_error(error: &str) -> Answer {
    json_answer(400, &json!({ "error": error }))
}

fn answer(issuer: &str, state: &Mutex<AsState>, request: &mut tiny_http::Request) -> Answer {
    let method = request.method().as_str().to_owned();
    let url = request.url().to_owned();
    let (path, query) = url.split_once('?').unwrap_or((&url, ""));
    let path = path.to_owned();
    let query = form(query);
    let authorization = request
        .headers()
        .iter()
        .find(|h| h.field.equiv("Authorization"))
        .map(|h| h.value.as_str().to_owned());
    let mut body = String::new();
    request.as_reader().read_to_string(&mut body).unwrap();
    let mut state = state.lock().unwrap();
    let entry = match (method.as_str(), path.as_str()) {
        ("POST", "/token") => format!(
            "POST /token {}",
            form(&body).get("grant_type").map_or("-", String::as_str)
        ),
        _ => format!("{method} {path}"),
    };
    state.log.push(entry);
    match (method.as_str(), path.as_str()) {
        ("GET", "/.well-known/oauth-authorization-server") => json_answer(
            200,
            &json!({
                "issuer": issuer,
                "authorization_endpoint": format!("{issuer}/authorize"),
                "token_endpoint": format!("{issuer}/token"),
                "registration_endpoint": format!("{issuer}/register"),
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic"],
                "authorization_response_iss_parameter_supported": true,
            }),
        ),
        ("POST", "/register") => {
            let Ok(metadata) = serde_json::from_str::<Value>(&body) else {
                return oauth_error("invalid_client_metadata");
            };
            if metadata["redirect_uris"] != json!([REDIRECT])
                || metadata["token_endpoint_auth_method"] != "client_secret_basic"
            {
                return oauth_error("invalid_client_metadata");
            }
            json_answer(
                201,
                &json!({
                    "client_id": CLIENT_ID,
                    "client_secret": CLIENT_SECRET,
                    "redirect_uris": [REDIRECT],
                    "token_endpoint_auth_method": "client_secret_basic",
                }),
            )
        }
        ("GET", "/authorize") => {
            let q = |k: &str| query.get(k).map(String::as_str).unwrap_or_default();
            if q("response_type") != "code"
                || q("client_id") != CLIENT_ID
                || q("redirect_uri") != REDIRECT
                || q("code_challenge_method") != "S256"
                || q("code_challenge").is_empty()
                || q("state").is_empty()
                || q("resource") != state.resource
            {
                return oauth_error("invalid_request");
            }
            let code = format!("code-{}", state.log.len());
            state.codes.insert(
                code.clone(),
                (q("code_challenge").to_owned(), q("scope").to_owned()),
            );
            let location: String = form_urlencoded::Serializer::new(format!("{REDIRECT}?"))
                .append_pair("code", &code)
                .append_pair("state", q("state"))
                .append_pair("iss", issuer)
                .finish();
            (302, vec![("Location", location)], Vec::new())
        }
        ("POST", "/token") => {
            let expected = format!(
                "Basic {}",
                STANDARD.encode(format!("{CLIENT_ID}:{CLIENT_SECRET}"))
            );
            if authorization.as_deref() != Some(expected.as_str()) {
                return json_answer(401, &json!({"error": "invalid_client"}));
            }
            let f = form(&body);
            let p = |k: &str| f.get(k).map(String::as_str).unwrap_or_default();
            if p("resource") != state.resource {
                return oauth_error("invalid_target");
            }
            let scope = match p("grant_type") {
                "authorization_code" => {
                    let Some((challenge, scope)) = state.codes.remove(p("code")) else {
                        return oauth_error("invalid_grant");
                    };
                    let computed = URL_SAFE_NO_PAD.encode(Sha256::digest(p("code_verifier")));
                    if computed != challenge || p("redirect_uri") != REDIRECT {
                        return oauth_error("invalid_grant");
                    }
                    scope
                }
                "refresh_token" => {
                    if !state.refresh.remove(p("refresh_token")) {
                        return oauth_error("invalid_grant");
                    }
                    SCOPE.to_owned()
                }
                _ => return oauth_error("unsupported_grant_type"),
            };
            let serial = state.issued.len();
            let access = token(issuer, &state.resource, &scope, 3600, serial);
            let refresh = format!("refresh-{serial}");
            state.issued.push(access.clone());
            state.refresh.insert(refresh.clone());
            json_answer(
                200,
                &json!({
                    "access_token": access,
                    "token_type": "Bearer",
                    "expires_in": 3600,
                    "refresh_token": refresh,
                    "scope": scope,
                }),
            )
        }
        _ => (404, Vec::new(), Vec::new()),
    }
}

fn client_config(era: EraMode) -> ClientConfig {
    let mut config = ClientConfig::new(Implementation::new("oauth-test-client", "1.0"));
    config.era = era;
    config.timeouts.request = Some(Duration::from_secs(30));
    config
}

#[test]
fn a_client_authorizes_and_refreshes_in_both_eras() {
    for (era, version) in [
        (
            EraMode::Legacy(ProtocolVersion::V2025_11_25),
            ProtocolVersion::V2025_11_25,
        ),
        (EraMode::Modern, ProtocolVersion::V2026_07_28),
    ] {
        let auth = AuthServer::start();
        let revoked = Revoked::default();
        let (handle, resource) = protected(&auth.issuer, Arc::clone(&revoked));
        auth.state.lock().unwrap().resource = resource.clone();

        let options = ClientOptions::default().auth(OAuthOptions::new(
            OAuthConfig::new(REDIRECT),
            headless_user_agent(REDIRECT),
        ));
        let client = Client::connect_http(&resource, client_config(era), options)
            .unwrap_or_else(|e| panic!("{era:?}: {e}"));
        assert_eq!(client.peer().version, version);
        let result = client.call_tool("hello", Map::new()).unwrap();
        assert_eq!(result.content[0].as_text(), Some("hello"));
        // Discovery, registration, the authorization step, one code exchange.
        assert_eq!(
            auth.log(),
            [
                "GET /.well-known/oauth-authorization-server",
                "POST /register",
                "GET /authorize",
                "POST /token authorization_code",
            ],
            "{era:?}"
        );

        // The server stops accepting the token: the client refreshes it (with no new
        // authorization) and the call goes through.
        let first = auth.state.lock().unwrap().issued[0].clone();
        revoked.lock().unwrap().insert(first);
        let result = client.call_tool("hello", Map::new()).unwrap();
        assert_eq!(result.content[0].as_text(), Some("hello"));
        let log = auth.log();
        assert_eq!(log.len(), 5, "{era:?}: {log:?}");
        assert_eq!(log[4], "POST /token refresh_token");
        assert_eq!(auth.state.lock().unwrap().issued.len(), 2);

        client.close();
        handle.shutdown();
    }
}

#[test]
fn a_refused_authorization_fails_the_connection() {
    let auth = AuthServer::start();
    let (handle, resource) = protected(&auth.issuer, Revoked::default());
    // The authorization server knows another resource: it refuses the authorization step.
    auth.state.lock().unwrap().resource = "http://127.0.0.1:9/mcp".into();
    let options = ClientOptions::default().auth(OAuthOptions::new(
        OAuthConfig::new(REDIRECT),
        headless_user_agent(REDIRECT),
    ));
    let era = EraMode::Legacy(ProtocolVersion::V2025_11_25);
    let outcome = Client::connect_http(&resource, client_config(era), options);
    let error = outcome.expect_err("no connection without a token");
    let error = error.to_string();
    assert!(error.contains("authorization failed"), "{error}");
    assert!(error.contains("HTTP 400"), "{error}");
    // No token was ever issued.
    assert!(auth.state.lock().unwrap().issued.is_empty());
    handle.shutdown();
}
