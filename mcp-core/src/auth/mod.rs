//! OAuth 2.1 authorization for MCP over HTTP, sans IO
//!
//! Client side: [`OAuthClient`] decides every HTTP request of the authorization flow and
//! what each response means; the binding performs the requests ([`AuthAction`]), hands the
//! authorization URL to a user agent (a browser, or a headless one that reads the redirect),
//! and resends MCP requests with [`OAuthClient::authorization`]. Nothing here reads a clock
//! or makes randomness: `now` and a seed come in as arguments, and `private_key_jwt`
//! assertions and DPoP proofs come from a caller-supplied [`ClientAssertion`] and
//! [`DpopSigner`].
//!
//! Resource-server side: [`crate::http::protected`] builds the `WWW-Authenticate` challenges and the
//! Protected Resource Metadata document a protected server answers with.
//!
//! ```
//! use std::time::Instant;
//! use mcp_sansio::auth::{AuthAction, OAuthClient, OAuthConfig, Verdict};
//!
//! let now = Instant::now();
//! let mut auth = OAuthClient::new(
//!     OAuthConfig::new("http://localhost:3000/callback"),
//!     "https://mcp.example.com/mcp",
//!     [7; 32], // OS randomness in real use
//! );
//! // The MCP request came back 401: a flow starts.
//! let www = r#"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp""#;
//! assert_eq!(auth.handle_mcp_response(now, 401, [www], None), Verdict::Retry);
//! let Some(AuthAction::Fetch(request)) = auth.poll_action() else { panic!() };
//! assert_eq!(request.url, "https://mcp.example.com/.well-known/oauth-protected-resource/mcp");
//! // ... perform it, then `auth.handle_response(now, response)`, and so on.
//! ```

mod challenge;
mod client;
mod config;
mod error;
mod http;
mod metadata;
mod pkce;
mod tokens;
pub(crate) mod url;

pub use challenge::BearerChallenge;
pub use client::{AuthAction, AuthEvent, OAuthClient, Verdict};
pub use config::{
    ApplicationType, ClientAssertion, DpopClaims, DpopSigner, Grant, IdentityAssertion,
    OAuthConfig, PreRegistered,
};
pub use error::AuthError;
pub use http::{AuthMethod, AuthRequest, AuthResponse};
pub(crate) use metadata::ProtectedResourceMetadata;
pub use tokens::{InMemoryTokenStore, Secret, TokenStore, Tokens};
