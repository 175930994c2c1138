//! OAuth for the HTTP client: what the sans-IO [`OAuthClient`](mcp_core::auth::OAuthClient)
//! needs from the outside
//!
//! The flow itself is [`mcp_core::auth`]'s; this module supplies its inputs: OS randomness,
//! a [`UserAgent`] that takes the authorization URL to the redirect (a browser opener in a
//! desktop app; [`headless_user_agent`] in tests and the conformance client), a
//! `private_key_jwt` signer ([`JwtSigner`]), and the HTTP requests themselves.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::connect::HttpConnector;
use jsonwebtoken::{DecodingKey, Validation};
use mcp_core::auth::{AuthRequest, AuthResponse};
use mcp_shared::auth::Headless;
pub use mcp_shared::auth::{JwtSigner, VerifiedToken};
use mcp_shared::http::header_list;

type Net = hyper_util::client::legacy::Client<HttpConnector, Full<Bytes>>;

/// The largest response body accepted from an authorization endpoint
const MAX_BODY: usize = 1024 * 1024;
/// How long one authorization request may take
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Takes the user to an authorization URL and returns the URL the authorization server
/// finally redirected to (the redirect URI with `code`, `state`, `iss`), or why not
pub type UserAgent = mcp_shared::auth::AsyncUserAgent;

pub use mcp_shared::auth::StoreFactory;

/// OAuth for an HTTP client connection ([`crate::ClientOptions::auth`]): the flow's
/// configuration, the [`UserAgent`] that follows the authorization step, and where tokens
/// are kept (default: in memory)
pub type OAuthOptions = mcp_shared::auth::OAuthOptions<UserAgent>;

/// A user agent without a browser: GETs the authorization URL and follows redirects (up
/// to 10, without sending anything but the GET) until one points at `redirect_uri`, then
/// returns that URL. For tests, the conformance suite, and authorization servers that
/// approve without a login page.
pub fn headless_user_agent(redirect_uri: impl Into<String>) -> UserAgent {
    let redirect_uri: String = redirect_uri.into();
    let net: Net =
        hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
            .build_http();
    Arc::new(move |url: String| {
        let net = net.clone();
        let redirect_uri = redirect_uri.clone();
        Box::pin(async move {
            Headless::follow(&redirect_uri, url, |request| perform(&net, request)).await
        })
    })
}

/// Performs one authorization request over plain HTTP; a transport failure or timeout
/// becomes [`AuthResponse::failed`]
pub(crate) async fn perform(net: &Net, request: AuthRequest) -> AuthResponse {
    let body = Full::new(Bytes::from(request.body));
    let Ok(http_request) = mcp_shared::http::request(
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
        let body = Limited::new(response.into_body(), MAX_BODY)
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

/// Checks a bearer token (by introspection, JWT validation, a lookup): the valid token's
/// grants, or why it is invalid (expired, wrong audience, unknown), which goes into the
/// 401's `error_description`
pub type TokenVerifier = mcp_shared::auth::AsyncTokenVerifier;

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
    mcp_shared::auth::async_jwt_verifier(key, validation)
}
