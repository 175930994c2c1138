//! OAuth on plain threads: what the sans-IO [`OAuthClient`](mcp_sansio::auth::OAuthClient)
//! needs from the outside, and the resource-server gate in front of a protected HTTP server
//!
//! The flow itself is [`mcp_sansio::auth`]'s; this module supplies its inputs: OS randomness,
//! a [`UserAgent`] that takes the authorization URL to the redirect (a browser opener in a
//! desktop app; [`headless_user_agent`] in tests and the conformance client), a
//! `private_key_jwt` signer ([`JwtSigner`]), a DPoP key ([`DpopKey`]), and the HTTP requests themselves (`ureq`,
//! `http://`, and `https://` with the `tls` feature). On the server side, [`Protection`] applies
//! [`mcp_sansio::http::protected`]'s rules with a [`TokenVerifier`] that is a plain function.

use mcp_sansio::auth::{AuthRequest, AuthResponse};
pub use mcp_sansio_runtime::auth::StoreFactory;
pub use mcp_sansio_runtime::auth::blocking::{
    OAuthOptions, Protection, TokenVerifier, UserAgent, jwt_verifier,
};
pub use mcp_sansio_runtime::auth::{DpopKey, JwtSigner, VerifiedToken};
use mcp_sansio_runtime::auth::{MAX_RESPONSE_BODY, REQUEST_TIMEOUT, blocking};
use mcp_sansio_runtime::http::header_list;

/// The agent for authorization requests: every status is the flow's to judge, redirects
/// are never followed, and each request has a deadline; `https://` trusts the platform's
/// roots (with the `tls` feature)
pub(crate) fn agent() -> ureq::Agent {
    let config = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .no_delay(true)
        // As in the other bindings, authorization requests go straight to their server
        // (ureq would read the proxy environment on its own otherwise)
        .proxy(None)
        .timeout_global(Some(REQUEST_TIMEOUT));
    #[cfg(feature = "tls")]
    let config = config.tls_config(crate::client_tls::platform_tls());
    config.build().into()
}

/// A user agent without a browser: GETs the authorization URL and follows redirects (up
/// to 10, without sending anything but the GET) until one points at `redirect_uri`, then
/// returns that URL (whose query holds `code`, `state` and `iss`) without fetching it. For
/// tests, the conformance suite, and authorization servers that approve without a login
/// page.
pub fn headless_user_agent(redirect_uri: impl Into<String>) -> UserAgent {
    let agent = agent();
    blocking::headless(redirect_uri.into(), move |request| perform(&agent, request))
}

/// Performs one authorization request over HTTP (HTTPS too, with the `tls` feature; blocking); a transport failure, a
/// timeout or an oversized body becomes [`AuthResponse::failed`]
pub(crate) fn perform(agent: &ureq::Agent, request: AuthRequest) -> AuthResponse {
    let method = request.method.as_str();
    let url = request.url.as_str();
    let Ok(http_request) =
        mcp_sansio_runtime::http::request(method, url, request.headers, request.body)
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
        .limit(MAX_RESPONSE_BODY as u64)
        .read_to_vec()
    {
        Ok(body) => AuthResponse::new(status, headers, body),
        Err(_) => AuthResponse::failed(),
    }
}
