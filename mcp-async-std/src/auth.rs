//! OAuth for the HTTP client: what the sans-IO [`OAuthClient`] needs from the outside
//!
//! The flow itself is [`mcp_core::auth`]'s; this module supplies its inputs: OS randomness,
//! a [`UserAgent`] that takes the authorization URL to the redirect (a browser opener in a
//! desktop app; [`headless_user_agent`] in tests and the conformance client), a
//! `private_key_jwt` signer ([`JwtSigner`]), and the HTTP requests themselves.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use async_net::TcpStream;
use jsonwebtoken::{DecodingKey, Validation};
use mcp_core::auth::resource::{Gate, ResourceServer};
use mcp_core::auth::{AuthRequest, AuthResponse, OAuthClient, OAuthConfig, TokenStore};
use mcp_core::http::HttpResponse;
use mcp_shared::auth::absolute;
pub use mcp_shared::auth::{JwtSigner, VerifiedToken};

use crate::h1::{self, Body, Conn, Target};

/// The largest response body accepted from an authorization endpoint
const MAX_BODY: usize = 1024 * 1024;
/// How long one authorization request may take
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Takes the user to an authorization URL and returns the URL the authorization server
/// finally redirected to (the redirect URI with `code`, `state`, `iss`), or why not
pub type UserAgent = Arc<
    dyn Fn(String) -> Pin<Box<dyn Future<Output = Result<String, String>> + Send>> + Send + Sync,
>;

/// Makes a fresh token store for each connection
pub type StoreFactory = Arc<dyn Fn() -> Box<dyn TokenStore> + Send + Sync>;

/// OAuth for an HTTP client connection ([`crate::ClientOptions::auth`])
#[derive(Clone)]
#[non_exhaustive]
pub struct OAuthOptions {
    /// The flow's configuration
    pub config: OAuthConfig,
    /// Follows the authorization step
    pub user_agent: UserAgent,
    /// Where tokens are kept (default: in memory)
    pub store: Option<StoreFactory>,
}

impl std::fmt::Debug for OAuthOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthOptions")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl OAuthOptions {
    /// Authorize with `config`, sending the user through `user_agent`
    pub fn new(config: OAuthConfig, user_agent: UserAgent) -> Self {
        Self {
            config,
            user_agent,
            store: None,
        }
    }

    /// The OAuth client for the server at `url`, seeded with OS randomness
    pub(crate) fn client(&self, url: &str) -> Result<OAuthClient, String> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|e| format!("no OS randomness: {e}"))?;
        let store = self.store.as_ref().map(|f| f());
        Ok(match store {
            Some(store) => OAuthClient::with_store(self.config.clone(), url, seed, store),
            None => OAuthClient::new(self.config.clone(), url, seed),
        })
    }
}

/// A user agent without a browser: GETs the authorization URL and follows redirects (up
/// to 10, without sending anything but the GET) until one points at `redirect_uri`, then
/// returns that URL. For tests, the conformance suite, and authorization servers that
/// approve without a login page.
pub fn headless_user_agent(redirect_uri: impl Into<String>) -> UserAgent {
    let redirect_uri: String = redirect_uri.into();
    Arc::new(move |url: String| {
        let redirect_uri = redirect_uri.clone();
        Box::pin(async move {
            let mut url = url;
            for _ in 0..10 {
                if url.starts_with(&redirect_uri) {
                    return Ok(url);
                }
                let request = AuthRequest::get(url.as_str());
                let response = perform(request).await;
                let location = response.header("location").map(str::to_owned);
                match (response.status, location) {
                    (300..=399, Some(location)) => url = absolute(&url, &location),
                    (0, _) => return Err("the authorization server did not answer".into()),
                    (status, _) => {
                        return Err(format!("the authorization URL answered HTTP {status}"));
                    }
                }
            }
            if url.starts_with(&redirect_uri) {
                Ok(url)
            } else {
                Err("too many redirects".into())
            }
        })
    })
}

/// Performs one authorization request over plain HTTP, on its own connection; a transport
/// failure, a malformed response or a timeout becomes [`AuthResponse::failed`]
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
    let stream = TcpStream::connect((target.host.as_str(), target.port))
        .await
        .ok()?;
    let mut conn = Conn::new(stream);
    conn.send(&message).await.ok()?;
    let head = conn.read_response().await.ok()?;
    let framing = h1::response_framing(method, head.status, &head.headers).ok()?;
    let body = conn
        .body_to_end(&mut Body::new(framing), MAX_BODY)
        .await
        .ok()??;
    Some(AuthResponse::new(head.status, head.headers, body))
}

/// Checks a bearer token (by introspection, JWT validation, a lookup): the valid token's
/// grants, or why it is invalid (expired, wrong audience, unknown), which goes into the
/// 401's `error_description`
pub type TokenVerifier = Arc<
    dyn Fn(String) -> Pin<Box<dyn Future<Output = Result<VerifiedToken, String>> + Send>>
        + Send
        + Sync,
>;

/// A protected HTTP server's authorization: the resource-server rules and the verifier
/// ([`Server::serve_http_protected`](crate::Server::serve_http_protected))
///
/// GET on the metadata path answers the Protected Resource Metadata; every other request
/// needs a bearer token the verifier accepts and that grants the required scopes, or is
/// answered 401 (missing or invalid token) or 403 (`insufficient_scope`) with the
/// `WWW-Authenticate` challenge that points clients at the metadata.
#[derive(Clone)]
pub struct Protection {
    pub(crate) rules: Arc<ResourceServer>,
    pub(crate) verifier: TokenVerifier,
}

impl std::fmt::Debug for Protection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Protection")
            .field("rules", &self.rules)
            .finish_non_exhaustive()
    }
}

impl Protection {
    /// Protects with `rules` (resource, issuer, required scopes) and `verifier`
    pub fn new(rules: ResourceServer, verifier: TokenVerifier) -> Self {
        Self {
            rules: Arc::new(rules),
            verifier,
        }
    }

    /// The answer to a request before the MCP server sees it: `None` lets it through
    pub(crate) async fn check(
        &self,
        method: &str,
        path: &str,
        headers: &[(String, String)],
    ) -> Option<HttpResponse> {
        let token = match self.rules.gate(method, path, headers) {
            Gate::Answer(answer) => return Some(answer),
            Gate::Verify(token) => token,
        };
        let verified = (self.verifier)(token.to_owned()).await;
        let granted = verified
            .as_ref()
            .map(|v| v.scopes.as_slice())
            .map_err(String::as_str);
        self.rules.verdict(granted)
    }
}

/// A [`TokenVerifier`] for JWT access tokens: the signature with `key`, `exp`, and the
/// audience (the resource identifier) and issuer per `validation`; scopes from the `scope`
/// claim (space separated) or `scp` (an array)
pub fn jwt_verifier(key: DecodingKey, validation: Validation) -> TokenVerifier {
    let key = Arc::new(key);
    let validation = Arc::new(validation);
    Arc::new(move |token: String| {
        let key = Arc::clone(&key);
        let validation = Arc::clone(&validation);
        Box::pin(async move {
            let data = jsonwebtoken::decode::<serde_json::Value>(&token, &key, &validation)
                .map_err(|e| match e.kind() {
                    jsonwebtoken::errors::ErrorKind::ExpiredSignature => {
                        "the token has expired".to_owned()
                    }
                    jsonwebtoken::errors::ErrorKind::InvalidAudience => {
                        "the token is not for this resource".to_owned()
                    }
                    _ => "the token is invalid".to_owned(),
                })?;
            let claims = data.claims;
            let scopes = match (&claims["scope"], &claims["scp"]) {
                (serde_json::Value::String(s), _) => {
                    s.split_whitespace().map(str::to_owned).collect()
                }
                (_, serde_json::Value::Array(a)) => a
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect(),
                _ => Vec::new(),
            };
            let mut verified = VerifiedToken::new(scopes);
            verified.subject = claims["sub"].as_str().map(str::to_owned);
            Ok(verified)
        })
    })
}
