//! OAuth on 127.0.0.1: a server protected by a JWT verifier answers the Protected Resource
//! Metadata and refuses missing, invalid, expired, foreign and under-scoped tokens with 401
//! or 403 and the right `WWW-Authenticate`; and our client, challenged by it, discovers a
//! small authorization server, registers, authorizes with PKCE through the headless user
//! agent, gets a token and calls the tool

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use jsonwebtoken::DecodingKey;
use mcp_sansio::auth::OAuthConfig;
use mcp_sansio::http::HttpConfig;
use mcp_sansio::schema::{CallToolResult, Tool};
use mcp_sansio::{ClientConfig, Implementation, ServerConfig};
use serde_json::Map;

use super::slow_tool;
use super::support::oauth::{
    AuthorizationServer, REDIRECT, SECRET, free_port, rules, tokens_are_checked, validation,
};
use super::support::shares::{one_user_cannot_take_the_capacity, sessions_belong_to_their_user};
use crate::binding::{
    Client, ClientOptions, HttpServerHandle, OAuthOptions, Protection, Server, headless_user_agent,
    jwt_verifier,
};
use crate::rt;

dialect_fn! {
    /// A server named `protected` with one tool, `hello`, behind `issuer`'s tokens: its handle
    /// and its resource URL
    async fn protected(issuer: &str) -> (HttpServerHandle, String) {
        aw!(protected_with(issuer, HttpConfig::default()))
    }

    /// [`protected`] under `config`, with `slow` too (progress, then a long wait)
    async fn protected_with(issuer: &str, config: HttpConfig) -> (HttpServerHandle, String) {
        let port = free_port();
        let resource = format!("http://127.0.0.1:{port}/mcp");
        let verifier = jwt_verifier(
            DecodingKey::from_secret(SECRET).unwrap(),
            validation(&resource, issuer),
        );
        let server = Server::builder(ServerConfig::new(Implementation::new("protected", "1.0")))
            .tool(
                Tool::new("hello", Map::new()),
                handler!(|_cx, _args| { Ok(CallToolResult::text("hello")) }),
            )
            .unwrap();
        let server = slow_tool(server, Arc::default()).build();
        let handle = aw!(server.serve_http_protected(
            SocketAddr::from(([127, 0, 0, 1], port)),
            config,
            Protection::new(rules(&resource, issuer), verifier),
        ))
        .unwrap();
        (handle, resource)
    }
}

#[test]
fn tokens_are_checked_before_the_mcp_server_runs() {
    rt::block_on(async {
        let issuer = "http://127.0.0.1:1";
        let (handle, resource) = aw!(protected(issuer));
        // The raw requests block: they go from a thread of their own.
        aw!(rt::unblock(move || tokens_are_checked(&resource, issuer)));
        aw!(handle.shutdown());
    });
}

#[test]
fn a_refused_token_is_logged_with_its_reason_and_never_itself() {
    use super::support::capture;
    use super::support::oauth::request;

    capture::install();
    rt::block_on(async {
        let (handle, resource) = aw!(protected("http://127.0.0.1:1"));
        let bad = "Bearer not-a-jwt-but-a-secret-3e1d";
        let (status, _, _) = aw!(rt::unblock(move || request(&resource, "POST", Some(bad))));
        assert_eq!(status, 401);
        aw!(handle.shutdown());
    });
    let records = capture::of_http();
    let refused: Vec<_> = records
        .iter()
        .filter(|r| r.name == "unauthorized" && r.field("status") == Some("401"))
        .collect();
    assert!(
        refused
            .iter()
            .any(|r| r.level == tracing::Level::INFO && r.field("reason").is_some()),
        "an invalid token's refusal, with its reason: {refused:#?}"
    );
    for r in &records {
        assert!(!r.text().contains("a-secret-3e1d"), "the token in {r:#?}");
    }
}

#[test]
fn a_session_answers_only_the_user_whose_token_made_it() {
    rt::block_on(async {
        let issuer = "http://127.0.0.1:1";
        let (handle, resource) = aw!(protected(issuer));
        aw!(rt::unblock(move || sessions_belong_to_their_user(
            &resource, issuer
        )));
        aw!(handle.shutdown());
    });
}

#[test]
fn one_user_cannot_take_the_requests_in_progress_from_any_address() {
    rt::block_on(async {
        let issuer = "http://127.0.0.1:1";
        let mut config = HttpConfig::default();
        config.max_in_flight_per_principal = 1;
        if let Some(keepalive) = rt::HTTP_KEEPALIVE {
            config.keepalive = Some(keepalive);
        }
        let (handle, resource) = aw!(protected_with(issuer, config));
        aw!(rt::unblock(move || one_user_cannot_take_the_capacity(
            &resource, issuer
        )));
        aw!(handle.shutdown());
    });
}

#[test]
fn our_client_authorizes_with_pkce_and_calls_the_protected_server() {
    rt::block_on(async {
        let authorization = AuthorizationServer::start();
        let (handle, resource) = aw!(protected(&authorization.issuer));

        let auth = OAuthOptions::new(OAuthConfig::new(REDIRECT), headless_user_agent(REDIRECT));
        let config = ClientConfig::new(Implementation::new("oauth-client", "1.0"));
        let client = aw!(rt::timeout(
            Duration::from_secs(30),
            Client::connect_http(&resource, config, ClientOptions::default().auth(auth)),
        ))
        .expect("connects in time")
        .expect("connects after authorizing");
        let result = aw!(client.call_tool("hello", Map::new())).unwrap();
        assert_eq!(result.content[0].as_text(), Some("hello"));
        aw!(client.close());
        aw!(handle.shutdown());

        let seen = authorization.seen.lock().unwrap();
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
