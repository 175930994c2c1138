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

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::connect::HttpConnector;
use jsonwebtoken::{DecodingKey, Validation};
use mcp_core::auth::resource::{Gate, ResourceServer};
use mcp_core::auth::{AuthRequest, AuthResponse, OAuthClient, OAuthConfig, TokenStore};
use mcp_core::http::HttpResponse;
use mcp_shared::auth::absolute;
pub use mcp_shared::auth::{JwtSigner, VerifiedToken};

type Net = hyper_util::client::legacy::Client<HttpConnector, Full<Bytes>>;

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
    let net: Net =
        hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
            .build_http();
    Arc::new(move |url: String| {
        let net = net.clone();
        let redirect_uri = redirect_uri.clone();
        Box::pin(async move {
            let mut url = url;
            for _ in 0..10 {
                if url.starts_with(&redirect_uri) {
                    return Ok(url);
                }
                let request = AuthRequest::get(url.as_str());
                let response = perform(&net, request).await;
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

/// Performs one authorization request over plain HTTP; a transport failure or timeout
/// becomes [`AuthResponse::failed`]
pub(crate) async fn perform(net: &Net, request: AuthRequest) -> AuthResponse {
    let mut builder = hyper::Request::builder()
        .method(request.method.as_str())
        .uri(request.url.as_str());
    for (name, value) in &request.headers {
        builder = builder.header(name, value);
    }
    let Ok(http_request) = builder.body(Full::new(Bytes::from(request.body))) else {
        return AuthResponse::failed();
    };
    let fetch = async {
        let response = net.request(http_request).await.ok()?;
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .filter_map(|(n, v)| Some((n.as_str().to_owned(), v.to_str().ok()?.to_owned())))
            .collect();
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
    ) -> Option<(u16, Vec<(String, String)>, Vec<u8>)> {
        let token = match self.rules.gate(method, path, headers) {
            Gate::Answer(answer) => return Some(parts(answer)),
            Gate::Verify(token) => token,
        };
        let verified = (self.verifier)(token.to_owned()).await;
        let granted = verified
            .as_ref()
            .map(|v| v.scopes.as_slice())
            .map_err(String::as_str);
        self.rules.verdict(granted).map(parts)
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
        Box::pin(async move { mcp_shared::auth::verify_jwt(&token, &key, &validation) })
    })
}

/// A gate's answer as the HTTP front end writes it
fn parts(answer: HttpResponse) -> (u16, Vec<(String, String)>, Vec<u8>) {
    let headers = answer
        .headers
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value))
        .collect();
    (answer.status, headers, answer.body)
}
