//! OAuth on plain threads: what the sans-IO [`OAuthClient`](mcp_core::auth::OAuthClient)
//! needs from the outside, and the resource-server gate in front of a protected HTTP server
//!
//! The flow itself is [`mcp_core::auth`]'s; this module supplies its inputs: OS randomness,
//! a [`UserAgent`] that takes the authorization URL to the redirect (a browser opener in a
//! desktop app; [`headless_user_agent`] in tests and the conformance client), a
//! `private_key_jwt` signer ([`JwtSigner`]), and the HTTP requests themselves (`ureq`,
//! plain `http://`). On the server side, [`Protection`] applies
//! [`mcp_core::auth::resource`]'s rules with a [`TokenVerifier`] that is a plain function.

use std::sync::Arc;
use std::time::Duration;

use jsonwebtoken::{DecodingKey, Validation};
use mcp_core::auth::{AuthRequest, AuthResponse};
use mcp_shared::auth::Headless;
pub use mcp_shared::auth::{JwtSigner, VerifiedToken};
use mcp_shared::http::header_list;

/// The largest response body accepted from an authorization endpoint
const MAX_BODY: u64 = 1024 * 1024;
/// How long one authorization request may take
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Takes the user to an authorization URL and returns the URL the authorization server
/// finally redirected to (the redirect URI with `code`, `state`, `iss`), or why not; it
/// runs on a thread of its own and may block
pub type UserAgent = Arc<dyn Fn(String) -> Result<String, String> + Send + Sync>;

pub use mcp_shared::auth::StoreFactory;

/// OAuth for an HTTP client connection ([`crate::ClientOptions::auth`]): the flow's
/// configuration, the [`UserAgent`] that follows the authorization step, and where tokens
/// are kept (default: in memory)
pub type OAuthOptions = mcp_shared::auth::OAuthOptions<UserAgent>;

/// The agent for authorization requests: every status is the flow's to judge, redirects
/// are never followed, and each request has a deadline
pub(crate) fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(REQUEST_TIMEOUT))
        .build()
        .into()
}

/// A user agent without a browser: GETs the authorization URL and follows redirects (up
/// to 10, without sending anything but the GET) until one points at `redirect_uri`, then
/// returns that URL (whose query holds `code`, `state` and `iss`) without fetching it. For
/// tests, the conformance suite, and authorization servers that approve without a login
/// page.
pub fn headless_user_agent(redirect_uri: impl Into<String>) -> UserAgent {
    let redirect_uri: String = redirect_uri.into();
    let agent = agent();
    Arc::new(move |url: String| {
        Headless::follow_blocking(&redirect_uri, url, |request| perform(&agent, request))
    })
}

/// Performs one authorization request over plain HTTP (blocking); a transport failure, a
/// timeout or an oversized body becomes [`AuthResponse::failed`]
pub(crate) fn perform(agent: &ureq::Agent, request: AuthRequest) -> AuthResponse {
    let method = request.method.as_str();
    let url = request.url.as_str();
    let Ok(http_request) = mcp_shared::http::request(method, url, request.headers, request.body)
    else {
        return AuthResponse::failed();
    };
    let Ok(response) = agent.run(http_request) else {
        return AuthResponse::failed();
    };
    let status = response.status().as_u16();
    let headers = header_list(response.headers());
    match response
        .into_body()
        .with_config()
        .limit(MAX_BODY)
        .read_to_vec()
    {
        Ok(body) => AuthResponse::new(status, headers, body),
        Err(_) => AuthResponse::failed(),
    }
}

/// Checks a bearer token (by introspection, JWT validation, a lookup): the valid token's
/// grants, or why it is invalid (expired, wrong audience, unknown), which goes into the
/// 401's `error_description`
///
/// It runs on the request's own thread, so it may block (an introspection call).
pub type TokenVerifier = Arc<dyn Fn(&str) -> Result<VerifiedToken, String> + Send + Sync>;

/// A protected HTTP server's authorization: the resource-server rules and the
/// [`TokenVerifier`]
/// ([`Server::serve_http_protected`](crate::Server::serve_http_protected))
///
/// GET on the metadata path answers the Protected Resource Metadata; every other request
/// needs a bearer token the verifier accepts and that grants the required scopes, or is
/// answered 401 (missing or invalid token) or 403 (`insufficient_scope`) with the
/// `WWW-Authenticate` challenge that points clients at the metadata.
pub type Protection = mcp_shared::auth::Protection<TokenVerifier>;

/// A [`TokenVerifier`] for JWT access tokens: the signature with `key`, `exp`, and the
/// audience (the resource identifier) and issuer per `validation`; scopes from the `scope`
/// claim (space separated) or `scp` (an array)
pub fn jwt_verifier(key: DecodingKey, validation: Validation) -> TokenVerifier {
    Arc::new(move |token: &str| mcp_shared::auth::verify_jwt(token, &key, &validation))
}
