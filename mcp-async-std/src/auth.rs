//! OAuth for the HTTP client: what the sans-IO [`OAuthClient`](mcp_sansio::auth::OAuthClient)
//! needs from the outside
//!
//! The flow itself is [`mcp_sansio::auth`]'s; this module supplies its inputs: OS randomness,
//! a [`UserAgent`] that takes the authorization URL to the redirect (a browser opener in a
//! desktop app; [`headless_user_agent`] in tests and the conformance client), a
//! `private_key_jwt` signer ([`JwtSigner`]), a DPoP key ([`DpopKey`]), and the HTTP requests themselves.

pub use mcp_sansio_runtime::auth::StoreFactory;
use mcp_sansio_runtime::auth::asynchronous;
pub use mcp_sansio_runtime::auth::asynchronous::{
    OAuthOptions, Protection, TokenVerifier, UserAgent, jwt_verifier,
};
pub use mcp_sansio_runtime::auth::{DpopKey, JwtSigner, VerifiedToken};

use crate::http_client::perform;

/// A user agent without a browser: GETs the authorization URL and follows redirects (up
/// to 10, without sending anything but the GET) until one points at `redirect_uri`, then
/// returns that URL. For tests, the conformance suite, and authorization servers that
/// approve without a login page.
pub fn headless_user_agent(redirect_uri: impl Into<String>) -> UserAgent {
    asynchronous::headless(redirect_uri.into(), perform)
}
