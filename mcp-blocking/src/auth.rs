//! OAuth on plain threads: what the sans-IO [`OAuthClient`] needs from the outside, and the
//! resource-server gate in front of a protected HTTP server
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
use mcp_core::auth::resource::{Gate, ResourceServer};
use mcp_core::auth::{AuthRequest, AuthResponse, OAuthClient, OAuthConfig, TokenStore};
use mcp_core::http::HttpResponse;
use mcp_shared::auth::absolute;
pub use mcp_shared::auth::{JwtSigner, VerifiedToken};

/// The largest response body accepted from an authorization endpoint
const MAX_BODY: u64 = 1024 * 1024;
/// How long one authorization request may take
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// How many redirects [`headless_user_agent`] follows before giving up
const MAX_REDIRECTS: usize = 10;

/// Takes the user to an authorization URL and returns the URL the authorization server
/// finally redirected to (the redirect URI with `code`, `state`, `iss`), or why not; it
/// runs on a thread of its own and may block
pub type UserAgent = Arc<dyn Fn(String) -> Result<String, String> + Send + Sync>;

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
        let mut url = url;
        for _ in 0..MAX_REDIRECTS {
            if url.starts_with(&redirect_uri) {
                return Ok(url);
            }
            let response = perform(&agent, AuthRequest::get(url.as_str()));
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
}

/// Performs one authorization request over plain HTTP (blocking); a transport failure, a
/// timeout or an oversized body becomes [`AuthResponse::failed`]
pub(crate) fn perform(agent: &ureq::Agent, request: AuthRequest) -> AuthResponse {
    let mut builder = ureq::http::Request::builder()
        .method(request.method.as_str())
        .uri(request.url.as_str());
    for (name, value) in &request.headers {
        builder = builder.header(name, value);
    }
    let Ok(http_request) = builder.body(request.body) else {
        return AuthResponse::failed();
    };
    let Ok(response) = agent.run(http_request) else {
        return AuthResponse::failed();
    };
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .filter_map(|(n, v)| Some((n.as_str().to_owned(), v.to_str().ok()?.to_owned())))
        .collect();
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

/// A protected HTTP server's authorization: the resource-server rules and the verifier
/// ([`Server::serve_http_protected`](crate::Server::serve_http_protected))
///
/// GET on the metadata path answers the Protected Resource Metadata; every other request
/// needs a bearer token the verifier accepts and that grants the required scopes, or is
/// answered 401 (missing or invalid token) or 403 (`insufficient_scope`) with the
/// `WWW-Authenticate` challenge that points clients at the metadata.
#[derive(Clone)]
pub struct Protection {
    rules: Arc<ResourceServer>,
    verifier: TokenVerifier,
}

impl std::fmt::Debug for Protection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Protection")
            .field("rules", &self.rules)
            .finish_non_exhaustive()
    }
}

/// The answer to a request the MCP server does not see: status, headers, body
pub(crate) type Refusal = (u16, Vec<(String, String)>, Vec<u8>);

impl Protection {
    /// Protects with `rules` (resource, issuer, required scopes) and `verifier`
    pub fn new(rules: ResourceServer, verifier: TokenVerifier) -> Self {
        Self {
            rules: Arc::new(rules),
            verifier,
        }
    }

    /// The answer to a request before the MCP server sees it: `None` lets it through
    pub(crate) fn check(
        &self,
        method: &str,
        path: &str,
        headers: &[(String, String)],
    ) -> Option<Refusal> {
        let token = match self.rules.gate(method, path, headers) {
            Gate::Answer(answer) => return Some(parts(answer)),
            Gate::Verify(token) => token,
        };
        let verified = (self.verifier)(token);
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
    Arc::new(move |token: &str| {
        let data = jsonwebtoken::decode::<serde_json::Value>(token, &key, &validation).map_err(
            |e| match e.kind() {
                jsonwebtoken::errors::ErrorKind::ExpiredSignature => {
                    "the token has expired".to_owned()
                }
                jsonwebtoken::errors::ErrorKind::InvalidAudience => {
                    "the token is not for this resource".to_owned()
                }
                _ => "the token is invalid".to_owned(),
            },
        )?;
        let claims = data.claims;
        let scopes = match (&claims["scope"], &claims["scp"]) {
            (serde_json::Value::String(s), _) => s.split_whitespace().map(str::to_owned).collect(),
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
