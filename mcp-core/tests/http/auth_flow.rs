//! The client flow against recorded HTTP exchanges: canned responses by URL, a scripted
//! user agent, no network

use crate::common;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use common::origin;
use mcp_sansio::auth::*;
use sha2::{Digest, Sha256};

fn pkce_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

fn with_query(base: &str, params: &[(&str, &str)]) -> String {
    let mut q = form_urlencoded::Serializer::new(String::new());
    for (k, v) in params {
        q.append_pair(k, v);
    }
    format!("{base}?{}", q.finish())
}

/// The first well-known metadata URL of an issuer (RFC 8414, path inserted)
fn first_metadata_url(issuer: &str) -> String {
    let (scheme, rest) = issuer.split_once("://").unwrap();
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    format!("{scheme}://{host}/.well-known/oauth-authorization-server{path}")
}

const MCP: &str = "http://rs.test/mcp";
const PRM_PATH: &str = "http://rs.test/.well-known/oauth-protected-resource/mcp";
const PRM_ROOT: &str = "http://rs.test/.well-known/oauth-protected-resource";
const AS: &str = "http://as.test";
const AS_META: &str = "http://as.test/.well-known/oauth-authorization-server";
const REDIRECT: &str = "http://localhost:3000/callback";

fn ok(body: Value) -> AuthResponse {
    AuthResponse::new(
        200,
        vec![("Content-Type".into(), "application/json".into())],
        body.to_string().into_bytes(),
    )
}

fn status(code: u16, body: Value) -> AuthResponse {
    AuthResponse::new(code, Vec::new(), body.to_string().into_bytes())
}

fn as_meta(issuer: &str) -> Value {
    json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "registration_endpoint": format!("{issuer}/register"),
        "response_types_supported": ["code"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "authorization_response_iss_parameter_supported": true,
    })
}

fn prm(resource: &str, issuer: &str) -> Value {
    json!({"resource": resource, "authorization_servers": [issuer]})
}

fn form(request: &AuthRequest) -> HashMap<String, String> {
    form_urlencoded::parse(&request.body).into_owned().collect()
}

fn query(url: &str) -> HashMap<String, String> {
    form_urlencoded::parse(url.split_once('?').map_or("", |(_, q)| q).as_bytes())
        .into_owned()
        .collect()
}

/// What the user agent does with an authorization URL
type Agent = Box<dyn FnMut(&str) -> Result<String, String>>;

/// Redirects back with a code, the request's state, and `iss`
fn agent_with_iss(iss: Option<&str>) -> Agent {
    let iss = iss.map(str::to_owned);
    Box::new(move |url| {
        let q = query(url);
        let mut params = vec![("code", "the-code".to_owned())];
        if let Some(s) = q.get("state") {
            params.push(("state", s.clone()));
        }
        if let Some(i) = &iss {
            params.push(("iss", i.clone()));
        }
        let pairs: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
        Ok(with_query(REDIRECT, &pairs))
    })
}

/// Canned responses by `METHOD url`; the last response of a route repeats; anything else
/// is a 404
struct Recorded {
    routes: HashMap<String, Vec<AuthResponse>>,
    agent: Agent,
    log: Vec<AuthRequest>,
    authorize_urls: Vec<String>,
}

impl Recorded {
    fn new() -> Self {
        Self {
            routes: HashMap::new(),
            agent: agent_with_iss(Some(AS)),
            log: Vec::new(),
            authorize_urls: Vec::new(),
        }
    }

    fn on(mut self, method: &str, url: &str, response: AuthResponse) -> Self {
        self.routes
            .entry(format!("{method} {url}"))
            .or_default()
            .push(response);
        self
    }

    /// The usual authorization server at `issuer`: metadata, registration, tokens
    fn with_as(self, issuer: &str, meta: Value) -> Self {
        let meta_url = first_metadata_url(issuer);
        self.on("GET", &meta_url, ok(meta))
            .on(
                "POST",
                &format!("{issuer}/register"),
                AuthResponse::new(
                    201,
                    Vec::new(),
                    json!({"client_id": "dyn-client"}).to_string().into_bytes(),
                ),
            )
            .on(
                "POST",
                &format!("{issuer}/token"),
                ok(json!({"access_token": "tok-1", "token_type": "Bearer", "expires_in": 3600})),
            )
    }

    fn urls(&self) -> Vec<String> {
        self.log
            .iter()
            .map(|r| format!("{} {}", r.method.as_str(), r.url))
            .collect()
    }

    fn requests_to(&self, url: &str) -> Vec<&AuthRequest> {
        self.log.iter().filter(|r| r.url == url).collect()
    }

    /// Performs every action until the flow ends; returns its event
    fn drive(&mut self, auth: &mut OAuthClient, now: Instant) -> AuthEvent {
        for _ in 0..50 {
            match auth.poll_action() {
                Some(AuthAction::Fetch(request)) => {
                    let key = format!("{} {}", request.method.as_str(), request.url);
                    let response = match self.routes.get_mut(&key) {
                        Some(list) if list.len() > 1 => list.remove(0),
                        Some(list) => list[0].clone(),
                        None => status(404, json!({"error": "not_found"})),
                    };
                    self.log.push(request);
                    auth.handle_response(now, response);
                }
                Some(AuthAction::Authorize { url }) => {
                    self.authorize_urls.push(url.clone());
                    match (self.agent)(&url) {
                        Ok(redirect) => auth.handle_redirect(now, &redirect),
                        Err(e) => auth.handle_user_agent_error(e),
                    }
                }
                Some(other) => panic!("unexpected action {other:?}"),
                None => {
                    return auth.poll_event().expect("a flow without actions has ended");
                }
            }
        }
        panic!("the flow did not end");
    }
}

fn client() -> OAuthClient {
    let mut config = OAuthConfig::new(REDIRECT);
    config.client_name = "test".into();
    OAuthClient::new(config, MCP, [1; 32])
}

fn challenge_401(auth: &mut OAuthClient, now: Instant, www: &str) -> Verdict {
    let sent = auth.authorization();
    auth.handle_mcp_response(now, 401, [www], sent.as_deref())
}

const WWW: &str = r#"Bearer error="invalid_token", resource_metadata="http://rs.test/.well-known/oauth-protected-resource/mcp""#;

#[test]
fn full_authorization_code_flow() {
    let now = origin();
    let mut net = Recorded::new()
        .on("GET", PRM_PATH, ok(prm(MCP, AS)))
        .with_as(AS, as_meta(AS));
    let mut auth = client();
    assert_eq!(auth.authorization(), None);
    assert_eq!(challenge_401(&mut auth, now, WWW), Verdict::Retry);
    assert!(auth.is_busy());
    assert_eq!(net.drive(&mut auth, now), AuthEvent::Authorized);
    assert!(!auth.is_busy());
    assert_eq!(auth.authorization().as_deref(), Some("Bearer tok-1"));
    assert_eq!(
        net.urls(),
        [
            format!("GET {PRM_PATH}"),
            format!("GET {AS_META}"),
            format!("POST {AS}/register"),
            format!("POST {AS}/token"),
        ]
    );
    // Registration: a native public client that wants refresh tokens.
    let reg: Value = serde_json::from_slice(&net.log[2].body).unwrap();
    assert_eq!(reg["application_type"], "native");
    assert_eq!(reg["redirect_uris"], json!([REDIRECT]));
    assert_eq!(reg["token_endpoint_auth_method"], "none");
    assert!(
        reg["grant_types"]
            .as_array()
            .unwrap()
            .contains(&json!("refresh_token"))
    );
    // Authorization: PKCE S256 and the resource; the token request proves the verifier.
    let q = query(&net.authorize_urls[0]);
    assert_eq!(q["response_type"], "code");
    assert_eq!(q["client_id"], "dyn-client");
    assert_eq!(q["code_challenge_method"], "S256");
    assert_eq!(q["resource"], MCP);
    assert!(!q.contains_key("scope"));
    let t = form(&net.log[3]);
    assert_eq!(t["grant_type"], "authorization_code");
    assert_eq!(t["code"], "the-code");
    assert_eq!(t["redirect_uri"], REDIRECT);
    assert_eq!(t["client_id"], "dyn-client");
    assert_eq!(t["resource"], MCP);
    assert_eq!(pkce_challenge(&t["code_verifier"]), q["code_challenge"]);
    assert!(net.log[3].header("Authorization").is_none());
    // Success resets nothing visible but is accepted.
    assert_eq!(
        auth.handle_mcp_response(now, 200, [], None),
        Verdict::Proceed
    );
}

#[test]
fn discovery_falls_back_in_the_specified_order() {
    // PRM: the advertised URL fails, the path-based one fails, the root one has a pathless
    // resource. AS: a path issuer whose metadata is only at the OIDC path-appended URL.
    let issuer = "http://as.test/tenant1";
    let now = origin();
    let mut net = Recorded::new()
        .on("GET", PRM_ROOT, ok(prm("http://rs.test", issuer)))
        .on(
            "GET",
            "http://as.test/tenant1/.well-known/openid-configuration",
            ok(as_meta(issuer)),
        )
        .on(
            "POST",
            "http://as.test/tenant1/register",
            ok(json!({"client_id": "c"})),
        )
        .on(
            "POST",
            "http://as.test/tenant1/token",
            ok(json!({"access_token": "t"})),
        );
    net.agent = agent_with_iss(Some(issuer));
    let mut auth = client();
    let www = r#"Bearer resource_metadata="http://rs.test/custom/metadata.json""#;
    assert_eq!(challenge_401(&mut auth, now, www), Verdict::Retry);
    assert_eq!(net.drive(&mut auth, now), AuthEvent::Authorized);
    assert_eq!(
        net.urls()[..6],
        [
            "GET http://rs.test/custom/metadata.json",
            &format!("GET {PRM_PATH}"),
            &format!("GET {PRM_ROOT}"),
            "GET http://as.test/.well-known/oauth-authorization-server/tenant1",
            "GET http://as.test/.well-known/openid-configuration/tenant1",
            "GET http://as.test/tenant1/.well-known/openid-configuration",
        ]
    );
    assert!(
        net.requests_to(AS_META).is_empty(),
        "never the root document of a path issuer"
    );
    // The pathless resource is sent exactly as published (no trailing slash added).
    assert_eq!(query(&net.authorize_urls[0])["resource"], "http://rs.test");
    assert_eq!(form(&net.log[7])["resource"], "http://rs.test");
}

#[test]
fn a_server_without_metadata_uses_the_2025_03_26_endpoints() {
    let now = origin();
    let mut net = Recorded::new()
        .on(
            "POST",
            "http://rs.test/register",
            ok(json!({"client_id": "legacy"})),
        )
        .on(
            "POST",
            "http://rs.test/token",
            ok(json!({"access_token": "t"})),
        );
    net.agent = agent_with_iss(None);
    let mut auth = client();
    assert_eq!(challenge_401(&mut auth, now, "Bearer"), Verdict::Retry);
    assert_eq!(net.drive(&mut auth, now), AuthEvent::Authorized);
    assert_eq!(
        net.urls(),
        [
            format!("GET {PRM_PATH}"),
            format!("GET {PRM_ROOT}"),
            "GET http://rs.test/.well-known/oauth-authorization-server".to_owned(),
            "GET http://rs.test/.well-known/openid-configuration".to_owned(),
            "POST http://rs.test/register".to_owned(),
            "POST http://rs.test/token".to_owned(),
        ]
    );
    assert!(net.authorize_urls[0].starts_with("http://rs.test/authorize?"));
    assert_eq!(form(&net.log[5])["resource"], MCP);
}

#[test]
fn mismatched_metadata_issuer_or_resource_stops_the_flow() {
    let now = origin();
    let mut evil = as_meta(AS);
    evil["issuer"] = json!("https://attacker.example.com");
    let mut net = Recorded::new()
        .on("GET", PRM_PATH, ok(prm(MCP, AS)))
        .with_as(AS, evil);
    let mut auth = client();
    challenge_401(&mut auth, now, WWW);
    assert!(matches!(
        net.drive(&mut auth, now),
        AuthEvent::Failed(AuthError::MetadataIssuerMismatch { .. })
    ));
    assert!(net.requests_to(&format!("{AS}/register")).is_empty());
    assert!(net.authorize_urls.is_empty());

    let mut net = Recorded::new()
        .on("GET", PRM_PATH, ok(prm("https://evil.example.com/mcp", AS)))
        .with_as(AS, as_meta(AS));
    let mut auth = client();
    challenge_401(&mut auth, now, WWW);
    assert_eq!(
        net.drive(&mut auth, now),
        AuthEvent::Failed(AuthError::ResourceMismatch {
            resource: "https://evil.example.com/mcp".into()
        })
    );
    assert_eq!(net.log.len(), 1);
}

#[test]
fn iss_is_compared_exactly() {
    let now = origin();
    let cases: [(bool, Option<&str>, bool); 5] = [
        // (advertised, iss in the redirect, accepted)
        (true, Some(AS), true),
        (false, None, true),
        (true, None, false),
        (true, Some("https://evil.example.com"), false),
        (false, Some("http://as.test/"), false),
    ];
    for (advertised, iss, accepted) in cases {
        let mut meta = as_meta(AS);
        meta["authorization_response_iss_parameter_supported"] = json!(advertised);
        let mut net = Recorded::new()
            .on("GET", PRM_PATH, ok(prm(MCP, AS)))
            .with_as(AS, meta);
        net.agent = agent_with_iss(iss);
        let mut auth = client();
        challenge_401(&mut auth, now, WWW);
        let event = net.drive(&mut auth, now);
        let token_requests = net.requests_to(&format!("{AS}/token")).len();
        if accepted {
            assert_eq!(event, AuthEvent::Authorized, "{advertised} {iss:?}");
            assert_eq!(token_requests, 1);
        } else {
            assert!(
                matches!(
                    event,
                    AuthEvent::Failed(AuthError::InvalidAuthorizationResponse(_))
                ),
                "{advertised} {iss:?}: {event:?}"
            );
            assert_eq!(token_requests, 0, "the code is never exchanged");
        }
    }
    // A forged state is refused too.
    let mut net = Recorded::new()
        .on("GET", PRM_PATH, ok(prm(MCP, AS)))
        .with_as(AS, as_meta(AS));
    net.agent = Box::new(|_| {
        Ok(format!(
            "{REDIRECT}?code=c&state=forged&iss=http%3A%2F%2Fas.test"
        ))
    });
    let mut auth = client();
    challenge_401(&mut auth, now, WWW);
    assert!(matches!(net.drive(&mut auth, now), AuthEvent::Failed(_)));
    assert!(net.requests_to(&format!("{AS}/token")).is_empty());
}

fn refreshable(net: Recorded) -> Recorded {
    net.on("GET", PRM_PATH, ok(prm(MCP, AS)))
        .with_as(AS, as_meta(AS))
        .on(
            "POST",
            &format!("{AS}/token"),
            ok(json!({"access_token": "tok-1", "refresh_token": "ref-1", "expires_in": 100})),
        )
}

#[test]
fn refresh_before_expiry_and_on_401_always_with_resource() {
    let t0 = origin();
    let mut net = refreshable(Recorded::new());
    // The first token request answers with tok-1, refreshes with tok-2 and then tok-3.
    let token_url = format!("POST {AS}/token");
    net.routes.get_mut(&token_url).unwrap().remove(0);
    net.routes.get_mut(&token_url).unwrap().extend([
        ok(json!({"access_token": "tok-2", "expires_in": 100})),
        ok(json!({"access_token": "tok-3", "refresh_token": "ref-3", "expires_in": 100})),
    ]);
    let mut auth = client();
    challenge_401(&mut auth, t0, WWW);
    assert_eq!(net.drive(&mut auth, t0), AuthEvent::Authorized);
    assert_eq!(auth.authorization().as_deref(), Some("Bearer tok-1"));

    // Not yet due (100 s left, margin 60 s); then due at +50 s.
    assert_eq!(auth.poll_timeout(), Some(t0 + Duration::from_secs(40)));
    assert!(!auth.refresh_if_due(t0 + Duration::from_secs(10)));
    let t1 = t0 + Duration::from_secs(50);
    assert!(auth.refresh_if_due(t1));
    assert_eq!(net.drive(&mut auth, t1), AuthEvent::Authorized);
    let refresh = form(net.log.last().unwrap());
    assert_eq!(refresh["grant_type"], "refresh_token");
    assert_eq!(refresh["refresh_token"], "ref-1");
    assert_eq!(refresh["resource"], MCP);
    assert_eq!(auth.authorization().as_deref(), Some("Bearer tok-2"));
    // The refresh token is kept when the response does not rotate it.
    assert_eq!(
        auth.tokens().unwrap().refresh_token.unwrap().expose(),
        "ref-1"
    );

    // A 401 for the current token refreshes instead of re-authorizing.
    let before = net.log.len();
    assert_eq!(challenge_401(&mut auth, t1, WWW), Verdict::Retry);
    assert_eq!(net.drive(&mut auth, t1), AuthEvent::Authorized);
    assert_eq!(net.log.len(), before + 1);
    assert_eq!(form(net.log.last().unwrap())["grant_type"], "refresh_token");
    assert_eq!(auth.authorization().as_deref(), Some("Bearer tok-3"));
    assert_eq!(net.authorize_urls.len(), 1);
}

#[test]
fn a_refused_refresh_falls_back_to_a_new_authorization() {
    let t0 = origin();
    let mut net = refreshable(Recorded::new());
    let token_url = format!("POST {AS}/token");
    net.routes.get_mut(&token_url).unwrap().remove(0);
    net.routes.get_mut(&token_url).unwrap().extend([
        status(400, json!({"error": "invalid_grant"})),
        ok(json!({"access_token": "fresh"})),
    ]);
    let mut auth = client();
    challenge_401(&mut auth, t0, WWW);
    assert_eq!(net.drive(&mut auth, t0), AuthEvent::Authorized);
    challenge_401(&mut auth, t0, WWW);
    assert_eq!(net.drive(&mut auth, t0), AuthEvent::Authorized);
    assert_eq!(auth.authorization().as_deref(), Some("Bearer fresh"));
    assert_eq!(net.authorize_urls.len(), 2);
    // The registration with this issuer is reused.
    assert_eq!(net.requests_to(&format!("{AS}/register")).len(), 1);
}

#[test]
fn a_stale_401_is_retried_without_a_flow() {
    let now = origin();
    let mut net = Recorded::new()
        .on("GET", PRM_PATH, ok(prm(MCP, AS)))
        .with_as(AS, as_meta(AS));
    let mut auth = client();
    challenge_401(&mut auth, now, WWW);
    // A second request failed while the flow ran: it waits for the same flow.
    assert_eq!(
        auth.handle_mcp_response(now, 401, [WWW], None),
        Verdict::Retry
    );
    assert_eq!(net.drive(&mut auth, now), AuthEvent::Authorized);
    let before = net.log.len();
    // A 401 for a request sent before the token arrived: just resend.
    assert_eq!(
        auth.handle_mcp_response(now, 401, [WWW], None),
        Verdict::Retry
    );
    assert!(!auth.is_busy());
    assert_eq!(auth.poll_action(), None);
    assert_eq!(net.log.len(), before);
}

#[test]
fn scope_selection() {
    let now = origin();
    // From the challenge.
    let mut net = Recorded::new()
        .on("GET", PRM_PATH, ok(json!({"resource": MCP, "authorization_servers": [AS], "scopes_supported": ["a", "b"]})))
        .with_as(AS, as_meta(AS));
    let mut auth = client();
    challenge_401(&mut auth, now, &format!("{WWW}, scope=\"mcp:basic\""));
    net.drive(&mut auth, now);
    assert_eq!(query(&net.authorize_urls[0])["scope"], "mcp:basic");
    // Else every scope the resource supports, plus offline_access where the AS lists it.
    let mut meta = as_meta(AS);
    meta["scopes_supported"] = json!(["a", "offline_access"]);
    let mut net = Recorded::new()
        .on("GET", PRM_PATH, ok(json!({"resource": MCP, "authorization_servers": [AS], "scopes_supported": ["a", "b"]})))
        .with_as(AS, meta);
    let mut auth = client();
    challenge_401(&mut auth, now, WWW);
    net.drive(&mut auth, now);
    assert_eq!(query(&net.authorize_urls[0])["scope"], "a b offline_access");
    let reg: Value =
        serde_json::from_slice(&net.requests_to(&format!("{AS}/register"))[0].body).unwrap();
    assert_eq!(reg["scope"], "a b offline_access");
}

#[test]
fn step_up_unions_scopes_and_the_retry_limit_stops_the_loop() {
    let now = origin();
    let mut net = Recorded::new()
        .on("GET", PRM_PATH, ok(prm(MCP, AS)))
        .with_as(AS, as_meta(AS));
    let mut auth = client();
    challenge_401(&mut auth, now, &format!("{WWW}, scope=\"mcp:basic\""));
    assert_eq!(net.drive(&mut auth, now), AuthEvent::Authorized);
    assert_eq!(
        auth.handle_mcp_response(now, 200, [], None),
        Verdict::Proceed
    );
    // A 403 without insufficient_scope is not an authorization matter.
    assert_eq!(
        auth.handle_mcp_response(now, 403, ["Bearer error=\"forbidden\""], None),
        Verdict::Proceed
    );
    let www403 = format!(
        "Bearer error=\"insufficient_scope\", scope=\"mcp:write\", resource_metadata=\"{PRM_PATH}\""
    );
    let sent = auth.authorization();
    assert_eq!(
        auth.handle_mcp_response(now, 403, [www403.as_str()], sent.as_deref()),
        Verdict::Retry
    );
    assert_eq!(net.drive(&mut auth, now), AuthEvent::Authorized);
    assert_eq!(
        query(&net.authorize_urls[1])["scope"],
        "mcp:basic mcp:write"
    );

    // A server that always answers 403: at most max_attempts (3) authorizations in a row.
    let mut auth = client();
    let mut net = Recorded::new()
        .on("GET", PRM_PATH, ok(prm(MCP, AS)))
        .with_as(AS, as_meta(AS));
    challenge_401(&mut auth, now, WWW);
    net.drive(&mut auth, now);
    let mut verdict = Verdict::Retry;
    for _ in 0..10 {
        let sent = auth.authorization();
        verdict = auth.handle_mcp_response(now, 403, [www403.as_str()], sent.as_deref());
        if verdict != Verdict::Retry {
            break;
        }
        assert_eq!(net.drive(&mut auth, now), AuthEvent::Authorized);
    }
    assert_eq!(
        verdict,
        Verdict::Fail(AuthError::RetryLimit { attempts: 3 })
    );
    assert_eq!(net.authorize_urls.len(), 3);
}

#[test]
fn token_endpoint_authentication_methods() {
    let now = origin();
    for (method, secret) in [
        ("client_secret_basic", Some("s3cret")),
        ("client_secret_post", Some("s3cret")),
        ("none", None),
    ] {
        let mut meta = as_meta(AS);
        meta["token_endpoint_auth_methods_supported"] = json!([method]);
        let mut reg = json!({"client_id": "id:x", "token_endpoint_auth_method": method});
        if let Some(s) = secret {
            reg["client_secret"] = json!(s);
        }
        let mut net = Recorded::new()
            .on("GET", PRM_PATH, ok(prm(MCP, AS)))
            .on("POST", &format!("{AS}/register"), status(201, reg))
            .with_as(AS, meta);
        let mut auth = client();
        challenge_401(&mut auth, now, WWW);
        assert_eq!(net.drive(&mut auth, now), AuthEvent::Authorized, "{method}");
        let dcr: Value =
            serde_json::from_slice(&net.requests_to(&format!("{AS}/register"))[0].body).unwrap();
        assert_eq!(dcr["token_endpoint_auth_method"], method);
        let token = net.requests_to(&format!("{AS}/token"))[0];
        let f = form(token);
        match method {
            "client_secret_basic" => {
                // RFC 6749 §2.3.1: form-encoded id and secret, then base64.
                assert_eq!(
                    token.header("Authorization"),
                    Some("Basic aWQlM0F4OnMzY3JldA==")
                );
                assert!(!f.contains_key("client_secret"));
            }
            "client_secret_post" => {
                assert_eq!(f["client_id"], "id:x");
                assert_eq!(f["client_secret"], "s3cret");
                assert!(token.header("Authorization").is_none());
            }
            _ => {
                assert_eq!(f["client_id"], "id:x");
                assert!(!f.contains_key("client_secret"));
                assert!(token.header("Authorization").is_none());
            }
        }
    }
}

struct FakeSigner;

impl ClientAssertion for FakeSigner {
    fn assertion(&self, client_id: &str, audience: &str) -> Result<String, String> {
        Ok(format!("jwt({client_id},{audience})"))
    }
    fn algorithm(&self) -> &str {
        "ES256"
    }
}

#[test]
fn client_credentials_with_private_key_jwt_or_basic() {
    let now = origin();
    let mut meta = as_meta(AS);
    meta["token_endpoint_auth_methods_supported"] = json!(["private_key_jwt"]);
    let mut net = Recorded::new()
        .on("GET", PRM_PATH, ok(prm(MCP, AS)))
        .with_as(AS, meta);
    let mut config = OAuthConfig::new(REDIRECT);
    config.grant = Grant::ClientCredentials;
    config.pre_registered = vec![PreRegistered::new("svc", None)];
    config.assertion_signer = Some(Arc::new(FakeSigner));
    let mut auth = OAuthClient::new(config, MCP, [2; 32]);
    challenge_401(&mut auth, now, WWW);
    assert_eq!(net.drive(&mut auth, now), AuthEvent::Authorized);
    assert!(net.authorize_urls.is_empty());
    assert!(net.requests_to(&format!("{AS}/register")).is_empty());
    let f = form(net.log.last().unwrap());
    assert_eq!(f["grant_type"], "client_credentials");
    assert_eq!(f["client_assertion"], format!("jwt(svc,{AS})"));
    assert_eq!(
        f["client_assertion_type"],
        "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    );
    assert_eq!(f["resource"], MCP);

    let mut meta = as_meta(AS);
    meta["token_endpoint_auth_methods_supported"] = json!(["client_secret_basic"]);
    let mut net = Recorded::new()
        .on("GET", PRM_PATH, ok(prm(MCP, AS)))
        .with_as(AS, meta);
    let mut config = OAuthConfig::new(REDIRECT);
    config.grant = Grant::ClientCredentials;
    config.pre_registered = vec![PreRegistered::new("svc", Some(Secret::new("pw"))).issuer(AS)];
    let mut auth = OAuthClient::new(config, MCP, [2; 32]);
    auth.start(now);
    assert_eq!(net.drive(&mut auth, now), AuthEvent::Authorized);
    let token = net.log.last().unwrap();
    assert_eq!(token.header("Authorization"), Some("Basic c3ZjOnB3"));
    assert_eq!(form(token)["grant_type"], "client_credentials");
}

#[test]
fn identity_assertion_grant_exchanges_at_the_idp_first() {
    let now = origin();
    let mut meta = as_meta(AS);
    meta["token_endpoint_auth_methods_supported"] = json!(["client_secret_basic"]);
    let mut net = Recorded::new()
        .on("GET", PRM_PATH, ok(prm(MCP, AS)))
        .on(
            "POST",
            "http://idp.test/token",
            ok(json!({"access_token": "the-id-jag", "token_type": "N_A"})),
        )
        .with_as(AS, meta);
    let grant = Grant::IdentityAssertion(IdentityAssertion::new(
        "http://idp.test/token",
        "idp-client",
        Secret::new("id-token"),
    ));
    let mut config = OAuthConfig::new(REDIRECT);
    config.grant = grant;
    config.pre_registered = vec![PreRegistered::new("mcp-client", Some(Secret::new("pw")))];
    let mut auth = OAuthClient::new(config, MCP, [3; 32]);
    challenge_401(&mut auth, now, WWW);
    assert_eq!(net.drive(&mut auth, now), AuthEvent::Authorized);
    let exchange = form(&net.requests_to("http://idp.test/token")[0].clone());
    assert_eq!(
        exchange["grant_type"],
        "urn:ietf:params:oauth:grant-type:token-exchange"
    );
    assert_eq!(
        exchange["requested_token_type"],
        "urn:ietf:params:oauth:token-type:id-jag"
    );
    assert_eq!(exchange["subject_token"], "id-token");
    assert_eq!(exchange["audience"], AS);
    assert_eq!(exchange["resource"], MCP);
    let grant = form(net.requests_to(&format!("{AS}/token"))[0]);
    assert_eq!(
        grant["grant_type"],
        "urn:ietf:params:oauth:grant-type:jwt-bearer"
    );
    assert_eq!(grant["assertion"], "the-id-jag");
}

#[test]
fn client_id_metadata_document_replaces_registration() {
    let now = origin();
    let mut meta = as_meta(AS);
    meta["client_id_metadata_document_supported"] = json!(true);
    let mut net = Recorded::new()
        .on("GET", PRM_PATH, ok(prm(MCP, AS)))
        .with_as(AS, meta);
    let mut config = OAuthConfig::new(REDIRECT);
    config.client_metadata_url = Some("https://client.example/metadata.json".into());
    let mut auth = OAuthClient::new(config, MCP, [4; 32]);
    challenge_401(&mut auth, now, WWW);
    assert_eq!(net.drive(&mut auth, now), AuthEvent::Authorized);
    assert!(net.requests_to(&format!("{AS}/register")).is_empty());
    assert_eq!(
        query(&net.authorize_urls[0])["client_id"],
        "https://client.example/metadata.json"
    );
}

#[test]
fn a_new_authorization_server_gets_a_new_registration() {
    let now = origin();
    let as2 = "http://as2.test";
    let mut net = Recorded::new()
        .on("GET", PRM_PATH, ok(prm(MCP, AS)))
        .on("GET", PRM_PATH, ok(prm(MCP, as2)))
        .on(
            "POST",
            &format!("{AS}/register"),
            ok(json!({"client_id": "as1-id", "client_secret": "as1-secret"})),
        )
        .on(
            "POST",
            &format!("{as2}/register"),
            ok(json!({"client_id": "as2-id"})),
        )
        .with_as(AS, as_meta(AS))
        .with_as(as2, as_meta(as2));
    let mut auth = client();
    challenge_401(&mut auth, now, WWW);
    assert_eq!(net.drive(&mut auth, now), AuthEvent::Authorized);
    net.agent = agent_with_iss(Some(as2));
    assert_eq!(challenge_401(&mut auth, now, WWW), Verdict::Retry);
    assert_eq!(net.drive(&mut auth, now), AuthEvent::Authorized);
    assert_eq!(net.requests_to(&format!("{as2}/register")).len(), 1);
    assert_eq!(query(&net.authorize_urls[1])["client_id"], "as2-id");
    for r in net.log.iter().filter(|r| r.url.starts_with(as2)) {
        let text = String::from_utf8_lossy(&r.body);
        assert!(
            !text.contains("as1-"),
            "AS1 credentials leaked to AS2: {text}"
        );
        assert!(r.header("Authorization").is_none());
    }
}

#[test]
fn failures_are_reported_and_nothing_secret_is_printed() {
    let now = origin();
    let mut net = Recorded::new()
        .on("GET", PRM_PATH, ok(prm(MCP, AS)))
        .with_as(AS, as_meta(AS))
        .on(
            "POST",
            &format!("{AS}/token"),
            status(400, json!({"error": "invalid_grant"})),
        );
    net.routes
        .get_mut(&format!("POST {AS}/token"))
        .unwrap()
        .remove(0);
    let mut auth = client();
    challenge_401(&mut auth, now, WWW);
    assert_eq!(
        net.drive(&mut auth, now),
        AuthEvent::Failed(AuthError::Endpoint {
            endpoint: "token",
            status: 400,
            error: Some("invalid_grant".into())
        })
    );
    // Garbage everywhere: every input is survived, and the flow still ends.
    let mut net = Recorded::new()
        .on(
            "GET",
            PRM_PATH,
            AuthResponse::new(200, Vec::new(), b"{not json".to_vec()),
        )
        .on(
            "GET",
            PRM_ROOT,
            ok(json!({"resource": MCP, "authorization_servers": []})),
        );
    let mut auth = client();
    challenge_401(&mut auth, now, WWW);
    assert_eq!(
        net.drive(&mut auth, now),
        AuthEvent::Failed(AuthError::NoAuthorizationServer)
    );
    // Inputs outside a flow are ignored.
    auth.handle_response(now, AuthResponse::failed());
    auth.handle_redirect(now, "garbage");
    auth.handle_user_agent_error("x");
    assert_eq!(auth.poll_event(), None);

    let mut net = Recorded::new()
        .on("GET", PRM_PATH, ok(prm(MCP, AS)))
        .with_as(AS, as_meta(AS))
        .on(
            "POST",
            &format!("{AS}/token"),
            ok(json!({"access_token": "very-secret-token", "refresh_token": "very-secret-refresh"})),
        );
    net.routes
        .get_mut(&format!("POST {AS}/token"))
        .unwrap()
        .remove(0);
    let mut auth = client();
    challenge_401(&mut auth, now, WWW);
    net.drive(&mut auth, now);
    let shown = format!("{auth:?} {:?} {:?}", auth.tokens(), net.log);
    assert!(!shown.contains("very-secret"), "{shown}");
}

#[test]
fn a_failing_user_agent_fails_the_flow() {
    let now = origin();
    let mut net = Recorded::new()
        .on("GET", PRM_PATH, ok(prm(MCP, AS)))
        .with_as(AS, as_meta(AS));
    net.agent = Box::new(|_| Err("no browser".into()));
    let mut auth = client();
    challenge_401(&mut auth, now, WWW);
    assert_eq!(
        net.drive(&mut auth, now),
        AuthEvent::Failed(AuthError::UserAgent("no browser".into()))
    );
    // An error redirect is a refusal.
    let mut net = Recorded::new()
        .on("GET", PRM_PATH, ok(prm(MCP, AS)))
        .with_as(AS, as_meta(AS));
    net.agent = Box::new(|_| Ok(format!("{REDIRECT}?error=access_denied")));
    let mut auth = client();
    challenge_401(&mut auth, now, WWW);
    assert_eq!(
        net.drive(&mut auth, now),
        AuthEvent::Failed(AuthError::AuthorizationDenied {
            error: "access_denied".into()
        })
    );
}
