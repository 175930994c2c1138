//! OAuth for the HTTP client: what the sans-IO [`OAuthClient`](mcp_sansio::auth::OAuthClient)
//! needs from the outside
//!
//! The flow itself is [`mcp_sansio::auth`]'s; this module supplies its inputs: OS randomness,
//! a [`UserAgent`] that takes the authorization URL to the redirect (a browser opener in a
//! desktop app; [`headless_user_agent`] in tests and the conformance client), a
//! `private_key_jwt` signer ([`JwtSigner`]), a DPoP key ([`DpopKey`]), and the HTTP requests themselves.

use mcp_sansio::auth::{AuthRequest, AuthResponse};
pub use mcp_sansio_runtime::auth::StoreFactory;
pub use mcp_sansio_runtime::auth::asynchronous::{
    OAuthOptions, Protection, TokenVerifier, UserAgent, jwt_verifier,
};
pub use mcp_sansio_runtime::auth::{DpopKey, JwtSigner, VerifiedToken};
use mcp_sansio_runtime::auth::{MAX_RESPONSE_BODY, REQUEST_TIMEOUT, asynchronous};

use crate::h1::{self, Body, Conn, Target};

/// A user agent without a browser: GETs the authorization URL and follows redirects (up
/// to 10, without sending anything but the GET) until one points at `redirect_uri`, then
/// returns that URL. For tests, the conformance suite, and authorization servers that
/// approve without a login page.
pub fn headless_user_agent(redirect_uri: impl Into<String>) -> UserAgent {
    asynchronous::headless(redirect_uri.into(), perform)
}

/// Performs one authorization request (over TLS for `https://`, with the `tls` feature), on
/// its own connection; a transport failure, a malformed response or a timeout becomes
/// [`AuthResponse::failed`]
pub(crate) async fn perform(request: AuthRequest) -> AuthResponse {
    h1::within(REQUEST_TIMEOUT, fetch(request))
        .await
        .flatten()
        .unwrap_or_else(AuthResponse::failed)
}

async fn fetch(request: AuthRequest) -> Option<AuthResponse> {
    let target = Target::parse(&request.url).ok()?;
    let method = request.method.as_str();
    let mut message = target
        .head(method, &request.headers, request.body.len(), true)
        .ok()?
        .into_bytes();
    message.extend_from_slice(&request.body);
    // `https://` trusts the platform's roots (or `SSL_CERT_FILE` / `SSL_CERT_DIR`'s)
    #[cfg(feature = "tls")]
    let tls = match target.tls {
        true => Some(futures_rustls::TlsConnector::from(
            mcp_sansio_runtime::tls::client_config(&Default::default()).ok()?,
        )),
        false => None,
    };
    #[cfg(feature = "tls")]
    let stream = crate::http_client::open(&target, None, &request.url, tls.as_ref())
        .await
        .ok()?;
    #[cfg(not(feature = "tls"))]
    let stream = crate::http_client::open(&target, None, &request.url)
        .await
        .ok()?;
    let mut conn = Conn::new(stream);
    conn.send(&message).await.ok()?;
    let head = conn.read_response().await.ok()?;
    let framing = h1::response_framing(method, head.status, &head.headers).ok()?;
    let body = conn
        .body_to_end(&mut Body::new(framing), MAX_RESPONSE_BODY)
        .await
        .ok()??;
    Some(AuthResponse::new(head.status, head.headers, body))
}
