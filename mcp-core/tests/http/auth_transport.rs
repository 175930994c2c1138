//! The HTTP client transport with an OAuth client: a challenged request waits for the flow
//! and is resent with the token; nothing else is sent meanwhile; a failed flow fails it

use crate::common;

use std::sync::Arc;
use std::time::Instant;

use common::origin;
use mcp_sansio::auth::{AuthAction, AuthResponse, OAuthClient, OAuthConfig};
use mcp_sansio::http::{ClientTransport, HttpMethod, HttpRequest};
use mcp_sansio::{
    ClientConfig, ClientEvent, ClientSession, EraMode, Implementation, ProtocolVersion,
};
use serde_json::{Value, json};

const MCP: &str = "http://rs.test/mcp";
const WWW: &str =
    r#"Bearer resource_metadata="http://rs.test/.well-known/oauth-protected-resource/mcp""#;

fn session(now: Instant) -> ClientSession {
    let mut config = ClientConfig::new(Implementation::new("t", "1"));
    config.era = EraMode::Legacy(ProtocolVersion::V2025_11_25);
    ClientSession::new(Arc::new(config), now)
}

fn transport() -> ClientTransport {
    let auth = OAuthClient::new(OAuthConfig::new("http://localhost:3000/cb"), MCP, [9; 32]);
    ClientTransport::new().with_auth(auth)
}

fn header<'a>(request: &'a HttpRequest, name: &str) -> Option<&'a str> {
    request
        .headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

fn json_response(status: u16, body: Value) -> AuthResponse {
    AuthResponse::new(status, Vec::new(), body.to_string().into_bytes())
}

/// Answers the flow's requests like a well-behaved authorization server; the token
/// endpoint answers `token_status`
fn run_flow(
    transport: &mut ClientTransport,
    session: &mut ClientSession,
    now: Instant,
    token_status: u16,
) -> Vec<String> {
    let mut seen = Vec::new();
    for _ in 0..20 {
        let Some(action) = transport.poll_auth_action() else {
            break;
        };
        assert!(
            transport.poll_request().is_none(),
            "nothing is sent while authorizing"
        );
        match action {
            AuthAction::Fetch(request) => {
                seen.push(request.url.clone());
                let response = match request.url.as_str() {
                    "http://rs.test/.well-known/oauth-protected-resource/mcp" => json_response(
                        200,
                        json!({"resource": MCP, "authorization_servers": ["http://as.test"]}),
                    ),
                    "http://as.test/.well-known/oauth-authorization-server" => json_response(
                        200,
                        json!({
                            "issuer": "http://as.test",
                            "authorization_endpoint": "http://as.test/authorize",
                            "token_endpoint": "http://as.test/token",
                            "registration_endpoint": "http://as.test/register",
                            "code_challenge_methods_supported": ["S256"],
                            "token_endpoint_auth_methods_supported": ["none"],
                        }),
                    ),
                    "http://as.test/register" => json_response(201, json!({"client_id": "c"})),
                    "http://as.test/token" if token_status == 200 => {
                        json_response(200, json!({"access_token": "tok"}))
                    }
                    "http://as.test/token" => {
                        json_response(token_status, json!({"error": "invalid_grant"}))
                    }
                    _ => json_response(404, json!({})),
                };
                transport.handle_auth_response(now, response, session);
            }
            AuthAction::Authorize { url } => {
                seen.push("authorize".into());
                let state = url
                    .split(['?', '&'])
                    .find_map(|kv| kv.strip_prefix("state="))
                    .unwrap()
                    .to_owned();
                let redirect = format!("http://localhost:3000/cb?code=x&state={state}");
                transport.handle_auth_redirect(now, &redirect, session);
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    seen
}

#[test]
fn a_challenged_request_is_resent_with_the_token() {
    let now = origin();
    let mut session = session(now);
    let mut transport = transport();
    transport.pull(&mut session);
    let first = transport.poll_request().expect("the initialize POST");
    assert_eq!(first.method, HttpMethod::Post);
    assert_eq!(header(&first, "authorization"), None);

    transport.handle_head(
        now,
        first.stream,
        401,
        &[("WWW-Authenticate", WWW)][..],
        &mut session,
    );
    assert_eq!(
        transport.poll_abort(),
        Some(first.stream),
        "the 401 body is dropped"
    );
    // Whatever still arrives for the old stream is ignored.
    transport.handle_body(now, first.stream, b"{\"error\":\"x\"}", &mut session);
    transport.handle_end(now, first.stream, &mut session);
    assert!(session.poll_event().is_none());

    let seen = run_flow(&mut transport, &mut session, now, 200);
    assert_eq!(seen.len(), 5, "{seen:?}");
    let again = transport
        .poll_request()
        .expect("the initialize POST, resent");
    assert_ne!(again.stream, first.stream);
    assert_eq!(again.body, first.body);
    assert_eq!(header(&again, "authorization"), Some("Bearer tok"));
    assert!(transport.poll_request().is_none());
    assert!(transport.auth().unwrap().authorization().is_some());
    // The token never shows in debug output.
    let shown = format!("{again:?} {transport:?}");
    assert!(!shown.contains("Bearer tok"), "{shown}");
}

#[test]
fn a_failed_authorization_fails_the_request() {
    let now = origin();
    let mut session = session(now);
    let mut transport = transport();
    transport.pull(&mut session);
    let first = transport.poll_request().unwrap();
    transport.handle_head(
        now,
        first.stream,
        401,
        &[("WWW-Authenticate", WWW)][..],
        &mut session,
    );
    run_flow(&mut transport, &mut session, now, 400);
    assert!(transport.poll_request().is_none(), "not resent");
    // The initialize request ended with the authorization error: the session closes.
    let mut closed = false;
    while let Some(event) = session.poll_event() {
        if let ClientEvent::Closed { reason, .. } = event {
            let text = format!("{reason:?}");
            assert!(text.contains("authorization failed"), "{text}");
            closed = true;
        }
    }
    assert!(closed);
}
