//! OAuth for the HTTP client: what the sans-IO [`OAuthClient`](mcp_sansio::auth::OAuthClient)
//! needs from the outside
//!
//! The flow itself is [`mcp_sansio::auth`]'s; this module supplies its inputs: OS randomness,
//! a [`UserAgent`] that takes the authorization URL to the redirect (a browser opener in a
//! desktop app; [`headless_user_agent`] in tests and the conformance client), a
//! `private_key_jwt` signer ([`JwtSigner`]), a DPoP key ([`DpopKey`]), and the HTTP requests themselves.

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use mcp_sansio::auth::{AuthRequest, AuthResponse};
pub use mcp_sansio_runtime::auth::StoreFactory;
pub use mcp_sansio_runtime::auth::asynchronous::{
    OAuthOptions, Protection, TokenVerifier, UserAgent, jwt_verifier,
};
pub use mcp_sansio_runtime::auth::{DpopKey, JwtSigner, VerifiedToken};
use mcp_sansio_runtime::auth::{MAX_RESPONSE_BODY, REQUEST_TIMEOUT, asynchronous};
use mcp_sansio_runtime::http::header_list;

use crate::http_client::Net;

/// A user agent without a browser: GETs the authorization URL and follows redirects (up
/// to 10, without sending anything but the GET) until one points at `redirect_uri`, then
/// returns that URL. For tests, the conformance suite, and authorization servers that
/// approve without a login page.
pub fn headless_user_agent(redirect_uri: impl Into<String>) -> UserAgent {
    let net: Net =
        hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
            .build(crate::http_client::Connector::platform());
    asynchronous::headless(redirect_uri.into(), move |request| {
        let net = net.clone();
        async move { perform(&net, request).await }
    })
}

/// Performs one authorization request (HTTPS too, with the `tls` feature); a transport failure or timeout
/// becomes [`AuthResponse::failed`]
pub(crate) async fn perform(net: &Net, request: AuthRequest) -> AuthResponse {
    let body = Full::new(Bytes::from(request.body));
    let Ok(http_request) = mcp_sansio_runtime::http::request(
        request.method.as_str(),
        request.url.as_str(),
        request.headers,
        body,
    ) else {
        return AuthResponse::failed();
    };
    let fetch = async {
        let response = net.request(http_request).await.ok()?;
        let status = response.status().as_u16();
        let headers = header_list(response.headers());
        let body = Limited::new(response.into_body(), MAX_RESPONSE_BODY)
            .collect()
            .await
            .ok()?
            .to_bytes()
            .to_vec();
        Some(AuthResponse::new(status, headers, body))
    };
    tokio::time::timeout(REQUEST_TIMEOUT, fetch)
        .await
        .ok()
        .flatten()
        .unwrap_or_else(AuthResponse::failed)
}
