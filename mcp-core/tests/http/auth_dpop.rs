//! DPoP (RFC 9449) in the OAuth client: proofs at the token endpoint and on MCP requests,
//! the `DPoP` scheme, `use_dpop_nonce` retries at the authorization and resource servers,
//! and bearer flows unchanged where DPoP is not offered. A fake signer writes each proof's
//! claims as JSON (with a counter as `jti`), so the tests read exactly what was asked for.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use common::origin;
use mcp_sansio::auth::*;
use mcp_sansio::http::{ClientTransport, HttpMethod, HttpRequest};
use mcp_sansio::{
    ClientConfig, ClientEvent, ClientSession, EraMode, Implementation, ProtocolVersion,
};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const MCP: &str = "http://rs.test/mcp";
const PRM: &str = "http://rs.test/.well-known/oauth-protected-resource/mcp";
const AS: &str = "http://as.test";
const AS_META: &str = "http://as.test/.well-known/oauth-authorization-server";
const TOKEN: &str = "http://as.test/token";
const REDIRECT: &str = "http://localhost:3000/callback";
const WWW: &str =
    r#"Bearer resource_metadata="http://rs.test/.well-known/oauth-protected-resource/mcp""#;
const NONCE_401: &str = r#"DPoP error="use_dpop_nonce", error_description="nonce required""#;

/// Writes the claims it is given as JSON; `jti` counts up
#[derive(Default)]
struct FakeSigner {
    next: AtomicU64,
    fail: bool,
}

impl DpopSigner for FakeSigner {
    fn proof(&self, c: DpopClaims<'_>) -> Result<String, String> {
        if self.fail {
            return Err("the key is gone".into());
        }
        let jti = self.next.fetch_add(1, Ordering::SeqCst);
        Ok(json!({
            "jti": jti.to_string(), "htm": c.htm, "htu": c.htu, "ath": c.ath, "nonce": c.nonce,
        })
        .to_string())
    }

    fn algorithm(&self) -> &str {
        "ES256"
    }
}

fn config(signer: Option<FakeSigner>) -> OAuthConfig {
    let mut config = OAuthConfig::new(REDIRECT);
    config.dpop_signer = signer.map(|s| Arc::new(s) as Arc<dyn DpopSigner>);
    config
}

fn client_at(url: &str, signer: Option<FakeSigner>) -> OAuthClient {
    OAuthClient::new(config(signer), url, [3; 32])
}

fn json_response(status: u16, headers: &[(&str, &str)], body: Value) -> AuthResponse {
    let headers = headers
        .iter()
        .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
        .collect();
    AuthResponse::new(status, headers, body.to_string().into_bytes())
}

fn as_meta(dpop_algs: Option<Value>) -> Value {
    let mut meta = json!({
        "issuer": AS,
        "authorization_endpoint": "http://as.test/authorize",
        "token_endpoint": TOKEN,
        "registration_endpoint": "http://as.test/register",
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
    });
    if let Some(algs) = dpop_algs {
        meta["dpop_signing_alg_values_supported"] = algs;
    }
    meta
}

fn dpop_token() -> AuthResponse {
    json_response(
        200,
        &[],
        json!({"access_token": "tok-1", "token_type": "DPoP", "expires_in": 3600}),
    )
}

fn nonce_400(nonce: Option<&str>) -> AuthResponse {
    let headers: Vec<(&str, &str)> = nonce.map(|n| ("DPoP-Nonce", n)).into_iter().collect();
    json_response(400, &headers, json!({"error": "use_dpop_nonce"}))
}

/// A fake network: discovery and registration answer as usual; the token endpoint answers
/// from `tokens` in order (the last one repeats)
struct Net {
    meta: Value,
    tokens: Vec<AuthResponse>,
    log: Vec<AuthRequest>,
}

impl Net {
    fn new(meta: Value, tokens: Vec<AuthResponse>) -> Self {
        Self {
            meta,
            tokens,
            log: Vec::new(),
        }
    }

    fn answer(&mut self, request: &AuthRequest) -> AuthResponse {
        self.log.push(request.clone());
        match request.url.as_str() {
            PRM => json_response(
                200,
                &[],
                json!({"resource": MCP, "authorization_servers": [AS]}),
            ),
            AS_META => json_response(200, &[], self.meta.clone()),
            "http://as.test/register" => json_response(201, &[], json!({"client_id": "c"})),
            TOKEN if self.tokens.len() > 1 => self.tokens.remove(0),
            TOKEN => self.tokens[0].clone(),
            _ => json_response(404, &[], json!({})),
        }
    }

    fn redirect(url: &str) -> String {
        let state = url
            .split(['?', '&'])
            .find_map(|kv| kv.strip_prefix("state="))
            .unwrap();
        format!("{REDIRECT}?code=the-code&state={state}")
    }

    /// Runs the flow to its end
    fn drive(&mut self, auth: &mut OAuthClient, now: Instant) -> AuthEvent {
        for _ in 0..30 {
            match auth.poll_action() {
                Some(AuthAction::Fetch(request)) => {
                    let response = self.answer(&request);
                    auth.handle_response(now, response);
                }
                Some(AuthAction::Authorize { url }) => {
                    auth.handle_redirect(now, &Self::redirect(&url))
                }
                Some(other) => panic!("unexpected {other:?}"),
                None => return auth.poll_event().expect("the flow ended"),
            }
        }
        panic!("the flow did not end");
    }

    fn token_requests(&self) -> Vec<&AuthRequest> {
        self.log.iter().filter(|r| r.url == TOKEN).collect()
    }
}

fn claims(proof: &str) -> Value {
    serde_json::from_str(proof).expect("a fake proof")
}

fn form(request: &AuthRequest) -> Vec<(String, String)> {
    form_urlencoded::parse(&request.body).into_owned().collect()
}

fn ath(token: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes()))
}

/// A client authorized against an authorization server that offers DPoP
fn authorized(now: Instant) -> OAuthClient {
    let mut auth = client_at(MCP, Some(FakeSigner::default()));
    let mut net = Net::new(as_meta(Some(json!(["ES256"]))), vec![dpop_token()]);
    assert_eq!(
        auth.handle_mcp_response(now, 401, [WWW], None),
        Verdict::Retry
    );
    assert_eq!(net.drive(&mut auth, now), AuthEvent::Authorized);
    auth
}

#[test]
fn the_token_request_carries_a_proof_and_the_resource_gets_the_dpop_scheme() {
    let now = origin();
    let mut auth = client_at(MCP, Some(FakeSigner::default()));
    let mut net = Net::new(as_meta(Some(json!(["ES256", "RS256"]))), vec![dpop_token()]);
    assert_eq!(
        auth.handle_mcp_response(now, 401, [WWW], None),
        Verdict::Retry
    );
    assert_eq!(net.drive(&mut auth, now), AuthEvent::Authorized);

    let token = net.token_requests();
    assert_eq!(token.len(), 1);
    let proof = claims(
        token[0]
            .header("DPoP")
            .expect("a DPoP proof at the token endpoint"),
    );
    assert_eq!(proof["htm"], "POST");
    assert_eq!(proof["htu"], TOKEN);
    assert_eq!(proof["ath"], Value::Null, "no token is presented there");
    assert_eq!(proof["nonce"], Value::Null);
    // No other request carries a proof.
    assert!(
        net.log
            .iter()
            .filter(|r| r.url != TOKEN)
            .all(|r| r.header("DPoP").is_none())
    );

    let tokens = auth.tokens().unwrap();
    assert!(tokens.dpop);
    assert_eq!(auth.authorization().as_deref(), Some("DPoP tok-1"));
    // Each MCP request gets a fresh proof for its method, bound to the token.
    let first = claims(&auth.dpop_proof("POST").expect("a proof"));
    let second = claims(&auth.dpop_proof("GET").expect("a proof"));
    assert_eq!(first["htm"], "POST");
    assert_eq!(second["htm"], "GET");
    assert_eq!(first["htu"], MCP);
    assert_eq!(first["ath"], ath("tok-1"));
    assert_ne!(first["jti"], second["jti"], "a fresh jti per request");
    assert_ne!(first["jti"], proof["jti"]);
}

#[test]
fn htu_leaves_out_query_and_fragment() {
    let now = origin();
    let url = "http://rs.test/mcp?tenant=a#frag";
    let mut auth = client_at(url, Some(FakeSigner::default()));
    let mut net = Net::new(as_meta(Some(json!(["ES256"]))), vec![dpop_token()]);
    net.meta["token_endpoint"] = json!("http://as.test/token?x=1");
    assert_eq!(
        auth.handle_mcp_response(now, 401, ["DPoP"], None),
        Verdict::Retry
    );
    for _ in 0..30 {
        match auth.poll_action() {
            Some(AuthAction::Fetch(r)) if r.url.starts_with("http://as.test/token") => {
                assert_eq!(claims(r.header("DPoP").unwrap())["htu"], TOKEN);
                net.log.push(r);
                auth.handle_response(now, dpop_token());
            }
            Some(AuthAction::Fetch(r)) if r.url.contains("oauth-protected-resource") => {
                let body = json!({"resource": MCP, "authorization_servers": [AS]});
                auth.handle_response(now, json_response(200, &[], body));
            }
            Some(AuthAction::Fetch(r)) => {
                let response = net.answer(&r);
                auth.handle_response(now, response);
            }
            Some(AuthAction::Authorize { url }) => auth.handle_redirect(now, &Net::redirect(&url)),
            _ => break,
        }
    }
    assert_eq!(auth.poll_event(), Some(AuthEvent::Authorized));
    let token = net.log.iter().filter(|r| r.url.starts_with(TOKEN)).count();
    assert_eq!(token, 1);
    assert_eq!(claims(&auth.dpop_proof("POST").unwrap())["htu"], MCP);
}

#[test]
fn bearer_flows_are_unchanged_where_dpop_is_not_offered() {
    let now = origin();
    let bearer = json_response(
        200,
        &[],
        json!({"access_token": "tok-1", "token_type": "Bearer"}),
    );
    for signer in [None, Some(FakeSigner::default())] {
        let mut auth = client_at(MCP, signer);
        let mut net = Net::new(as_meta(None), vec![bearer.clone()]);
        assert_eq!(
            auth.handle_mcp_response(now, 401, [WWW], None),
            Verdict::Retry
        );
        assert_eq!(net.drive(&mut auth, now), AuthEvent::Authorized);
        assert!(net.log.iter().all(|r| r.header("DPoP").is_none()));
        assert!(!auth.tokens().unwrap().dpop);
        assert_eq!(auth.authorization().as_deref(), Some("Bearer tok-1"));
        assert_eq!(auth.dpop_proof("POST"), None);
    }
    // A server that takes the proof but issues a bearer token: the token is a bearer token.
    let mut auth = client_at(MCP, Some(FakeSigner::default()));
    let mut net = Net::new(as_meta(Some(json!(["ES256"]))), vec![bearer]);
    assert_eq!(
        auth.handle_mcp_response(now, 401, [WWW], None),
        Verdict::Retry
    );
    assert_eq!(net.drive(&mut auth, now), AuthEvent::Authorized);
    assert!(net.token_requests()[0].header("DPoP").is_some());
    assert_eq!(auth.authorization().as_deref(), Some("Bearer tok-1"));
    assert_eq!(auth.dpop_proof("POST"), None);
    // An algorithm the signer does not have: no DPoP.
    let mut auth = client_at(MCP, Some(FakeSigner::default()));
    let mut net = Net::new(as_meta(Some(json!(["EdDSA"]))), vec![dpop_token()]);
    assert_eq!(
        auth.handle_mcp_response(now, 401, [WWW], None),
        Verdict::Retry
    );
    assert_eq!(net.drive(&mut auth, now), AuthEvent::Authorized);
    assert!(net.token_requests()[0].header("DPoP").is_none());
    assert!(!auth.tokens().unwrap().dpop);
}

#[test]
fn a_dpop_challenge_from_the_resource_server_turns_dpop_on() {
    let now = origin();
    let mut auth = client_at(MCP, Some(FakeSigner::default()));
    let mut net = Net::new(as_meta(None), vec![dpop_token()]);
    let www = format!(r#"DPoP algs="ES256", resource_metadata="{PRM}""#);
    assert_eq!(
        auth.handle_mcp_response(now, 401, [www.as_str()], None),
        Verdict::Retry
    );
    assert_eq!(net.drive(&mut auth, now), AuthEvent::Authorized);
    assert_eq!(
        net.log[0].url, PRM,
        "the DPoP challenge's resource_metadata is used"
    );
    assert!(net.token_requests()[0].header("DPoP").is_some());
    assert_eq!(auth.authorization().as_deref(), Some("DPoP tok-1"));
}

#[test]
fn use_dpop_nonce_at_the_token_endpoint_is_retried_once_with_the_nonce() {
    let now = origin();
    let mut auth = client_at(MCP, Some(FakeSigner::default()));
    let ok = json_response(
        200,
        &[("DPoP-Nonce", "as-2")],
        json!({"access_token": "tok-1", "token_type": "DPoP", "refresh_token": "r"}),
    );
    let mut net = Net::new(
        as_meta(Some(json!(["ES256"]))),
        vec![nonce_400(Some("as-1")), ok],
    );
    assert_eq!(
        auth.handle_mcp_response(now, 401, [WWW], None),
        Verdict::Retry
    );
    assert_eq!(net.drive(&mut auth, now), AuthEvent::Authorized);
    let token = net.token_requests();
    assert_eq!(token.len(), 2, "one retry");
    let (first, second) = (
        claims(token[0].header("DPoP").unwrap()),
        claims(token[1].header("DPoP").unwrap()),
    );
    assert_eq!(first["nonce"], Value::Null);
    assert_eq!(second["nonce"], "as-1");
    assert_ne!(first["jti"], second["jti"]);
    assert_eq!(form(token[0]), form(token[1]), "the same grant is resent");
    // The nonce of the successful answer is the one the next token request (a refresh) uses.
    assert_eq!(
        auth.handle_mcp_response(now, 401, [WWW], Some("DPoP tok-1")),
        Verdict::Retry
    );
    let Some(AuthAction::Fetch(refresh)) = auth.poll_action() else {
        panic!("a refresh")
    };
    assert!(form(&refresh).contains(&("grant_type".into(), "refresh_token".into())));
    assert_eq!(claims(refresh.header("DPoP").unwrap())["nonce"], "as-2");
}

#[test]
fn a_second_use_dpop_nonce_at_the_token_endpoint_is_an_error() {
    let now = origin();
    for (responses, expect) in [
        (vec![nonce_400(Some("n1")), nonce_400(Some("n2"))], 2),
        (vec![nonce_400(None)], 1),
    ] {
        let mut auth = client_at(MCP, Some(FakeSigner::default()));
        let mut net = Net::new(as_meta(Some(json!(["ES256"]))), responses);
        assert_eq!(
            auth.handle_mcp_response(now, 401, [WWW], None),
            Verdict::Retry
        );
        let event = net.drive(&mut auth, now);
        assert!(
            matches!(event, AuthEvent::Failed(AuthError::DpopNonce(_))),
            "{event:?}"
        );
        assert_eq!(net.token_requests().len(), expect, "no loop");
        assert!(!auth.is_busy());
    }
}

#[test]
fn use_dpop_nonce_at_the_resource_server_resends_with_the_latest_nonce() {
    let now = origin();
    let mut auth = authorized(now);
    let sent = auth.authorization();
    auth.handle_dpop_nonce("rs-1");
    assert_eq!(
        auth.handle_mcp_response(now, 401, [NONCE_401], sent.as_deref()),
        Verdict::RetryWithNonce
    );
    assert!(!auth.is_busy(), "no new authorization");
    let proof = claims(&auth.dpop_proof("POST").unwrap());
    assert_eq!(proof["nonce"], "rs-1");
    assert_eq!(proof["ath"], ath("tok-1"));
    // A later nonce (on any response) replaces it.
    auth.handle_dpop_nonce("rs-2");
    assert_eq!(claims(&auth.dpop_proof("POST").unwrap())["nonce"], "rs-2");
    // Asking for a nonce without supplying one is an error, not a loop.
    let mut fresh = authorized(now);
    let verdict = fresh.handle_mcp_response(now, 401, [NONCE_401], None);
    assert!(
        matches!(verdict, Verdict::Fail(AuthError::DpopNonce(_))),
        "{verdict:?}"
    );
}

#[test]
fn a_failing_signer_is_a_clear_error() {
    let now = origin();
    let signer = FakeSigner {
        fail: true,
        ..FakeSigner::default()
    };
    let mut auth = client_at(MCP, Some(signer));
    let mut net = Net::new(as_meta(Some(json!(["ES256"]))), vec![dpop_token()]);
    assert_eq!(
        auth.handle_mcp_response(now, 401, [WWW], None),
        Verdict::Retry
    );
    let event = net.drive(&mut auth, now);
    assert!(
        matches!(&event, AuthEvent::Failed(AuthError::DpopProof(e)) if e.contains("key is gone")),
        "{event:?}"
    );
    assert!(net.token_requests().is_empty());
}

// --- through the HTTP client transport ---

fn session(now: Instant) -> ClientSession {
    let mut config = ClientConfig::new(Implementation::new("t", "1"));
    config.era = EraMode::Legacy(ProtocolVersion::V2025_11_25);
    ClientSession::new(Arc::new(config), now)
}

fn header<'a>(request: &'a HttpRequest, name: &str) -> Option<&'a str> {
    request
        .headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// The transport after the flow: the initialize POST resent with a DPoP-bound token
fn authorized_transport(
    now: Instant,
    session: &mut ClientSession,
) -> (ClientTransport, HttpRequest) {
    let auth = client_at(MCP, Some(FakeSigner::default()));
    let mut transport = ClientTransport::new().with_auth(auth);
    transport.pull(session);
    let first = transport.poll_request().expect("the initialize POST");
    assert_eq!(header(&first, "DPoP"), None, "no token, no proof");
    transport.handle_head(
        now,
        first.stream,
        401,
        &[("WWW-Authenticate", WWW)][..],
        session,
    );
    let mut net = Net::new(as_meta(Some(json!(["ES256"]))), vec![dpop_token()]);
    for _ in 0..30 {
        match transport.poll_auth_action() {
            Some(AuthAction::Fetch(request)) => {
                let response = net.answer(&request);
                transport.handle_auth_response(now, response, session);
            }
            Some(AuthAction::Authorize { url }) => {
                transport.handle_auth_redirect(now, &Net::redirect(&url), session);
            }
            Some(other) => panic!("unexpected {other:?}"),
            None => break,
        }
    }
    let again = transport
        .poll_request()
        .expect("the initialize POST, resent");
    assert_eq!(again.body, first.body);
    (transport, again)
}

#[test]
fn the_transport_sends_the_dpop_scheme_and_a_fresh_proof_per_request() {
    let now = origin();
    let mut session = session(now);
    let (mut transport, again) = authorized_transport(now, &mut session);
    assert_eq!(again.method, HttpMethod::Post);
    assert_eq!(header(&again, "Authorization"), Some("DPoP tok-1"));
    let proof = claims(header(&again, "DPoP").expect("a proof"));
    assert_eq!(
        (&proof["htm"], &proof["htu"]),
        (&json!("POST"), &json!(MCP))
    );
    assert_eq!(proof["ath"], ath("tok-1"));
    // Debug output shows neither the token nor the proof.
    let shown = format!("{again:?}");
    assert!(
        !shown.contains("tok-1") && !shown.contains("jti"),
        "{shown}"
    );

    // The RS wants a nonce: the request goes again at once, with it, and a new jti.
    transport.handle_head(
        now,
        again.stream,
        401,
        &[("WWW-Authenticate", NONCE_401), ("DPoP-Nonce", "rs-1")][..],
        &mut session,
    );
    let aborts: Vec<_> = std::iter::from_fn(|| transport.poll_abort()).collect();
    assert!(aborts.contains(&again.stream), "the 401 body is dropped");
    assert!(
        transport.poll_auth_action().is_none(),
        "no new authorization"
    );
    let third = transport.poll_request().expect("resent with the nonce");
    assert_eq!(third.body, again.body);
    let retried = claims(header(&third, "DPoP").unwrap());
    assert_eq!(retried["nonce"], "rs-1");
    assert_ne!(retried["jti"], proof["jti"]);
    assert_eq!(header(&third, "Authorization"), Some("DPoP tok-1"));
}

#[test]
fn a_second_use_dpop_nonce_for_one_request_fails_it() {
    let now = origin();
    let mut session = session(now);
    let (mut transport, again) = authorized_transport(now, &mut session);
    transport.handle_head(
        now,
        again.stream,
        401,
        &[("WWW-Authenticate", NONCE_401), ("DPoP-Nonce", "rs-1")][..],
        &mut session,
    );
    let third = transport.poll_request().expect("resent with the nonce");
    transport.handle_head(
        now,
        third.stream,
        401,
        &[("WWW-Authenticate", NONCE_401), ("DPoP-Nonce", "rs-2")][..],
        &mut session,
    );
    assert!(transport.poll_request().is_none(), "no loop");
    assert!(transport.poll_auth_action().is_none());
    let mut closed = false;
    while let Some(event) = session.poll_event() {
        if let ClientEvent::Closed { reason, .. } = event {
            let text = format!("{reason:?}");
            assert!(text.contains("DPoP nonce"), "{text}");
            closed = true;
        }
    }
    assert!(closed, "the initialize request failed with the nonce error");
}

#[test]
fn a_bearer_token_meeting_a_dpop_nonce_challenge_authorizes_again_with_dpop() {
    let now = origin();
    let mut auth = client_at(MCP, Some(FakeSigner::default()));
    let bearer = json_response(
        200,
        &[],
        json!({"access_token": "tok-b", "token_type": "Bearer"}),
    );
    let mut net = Net::new(as_meta(None), vec![bearer, dpop_token()]);
    assert_eq!(
        auth.handle_mcp_response(now, 401, [WWW], None),
        Verdict::Retry
    );
    assert_eq!(net.drive(&mut auth, now), AuthEvent::Authorized);
    assert_eq!(auth.authorization().as_deref(), Some("Bearer tok-b"));
    // The server wants DPoP after all: a new flow, this time with proofs.
    let www = format!(r#"DPoP error="use_dpop_nonce", resource_metadata="{PRM}""#);
    auth.handle_dpop_nonce("rs-1");
    let verdict = auth.handle_mcp_response(now, 401, [www.as_str()], Some("Bearer tok-b"));
    assert_eq!(verdict, Verdict::Retry);
    assert_eq!(net.drive(&mut auth, now), AuthEvent::Authorized);
    assert!(net.token_requests()[1].header("DPoP").is_some());
    assert_eq!(auth.authorization().as_deref(), Some("DPoP tok-1"));
    assert_eq!(claims(&auth.dpop_proof("POST").unwrap())["nonce"], "rs-1");
}
