//! The OAuth 2.1 client as a state machine: which HTTP request to make next, and what each
//! response means
//!
//! One flow runs at a time. It starts from a resource server's challenge
//! ([`OAuthClient::handle_mcp_response`] with a 401 or a 403 `insufficient_scope`), from
//! [`OAuthClient::start`], or from [`OAuthClient::refresh_if_due`], and goes:
//!
//! 1. Protected Resource Metadata: the challenge's `resource_metadata`, then
//!    `/.well-known/oauth-protected-resource/<path>`, then the root document. Its
//!    `resource` must cover the server URL; it becomes the `resource` parameter verbatim.
//!    No document at all: the 2025-03-26 rules (the server's origin is the authorization
//!    server; `/authorize`, `/token`, `/register` if it has no metadata either).
//! 2. Authorization server metadata (RFC 8414, then OpenID Connect, path-aware); its
//!    `issuer` must equal the issuer the URL was built from.
//! 3. A client identity: earlier registration with this issuer, a pre-registered client,
//!    a Client ID Metadata Document URL (when supported), or Dynamic Client Registration.
//!    Credentials are bound to their issuer and never offered to another.
//! 4. The grant: authorization code with PKCE S256 (the [`AuthAction::Authorize`] step hands
//!    the URL to a user agent; the redirect comes back through
//!    [`OAuthClient::handle_redirect`], where `state` and `iss` are checked), client
//!    credentials, a JWT bearer assertion, or an identity assertion obtained by token
//!    exchange at an identity provider.
//! 5. The tokens go to the [`TokenStore`]; [`AuthEvent::Authorized`] is emitted.
//!
//! Drain [`OAuthClient::poll_action`] after every input: perform each action and feed the
//! result back; [`OAuthClient::poll_event`] tells how the flow ended.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::challenge::{BearerChallenge, OAuthChallenge};
use super::config::{ApplicationType, DpopClaims, Grant, OAuthConfig};
use super::error::AuthError;
use super::http::{AuthRequest, AuthResponse};
use super::metadata::{AuthServerMetadata, ProtectedResourceMetadata};
use super::pkce::{Drbg, challenge as pkce_challenge};
use super::tokens::{InMemoryTokenStore, Secret, TokenStore, Tokens};
use super::url;

const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
const USE_DPOP_NONCE: &str = "use_dpop_nonce";

/// The next thing the binding must do for the flow
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthAction {
    /// Perform this HTTP request (without following redirects) and pass the response to
    /// [`OAuthClient::handle_response`] ([`AuthResponse::failed`] if none came)
    Fetch(AuthRequest),
    /// Send the user agent to this authorization URL; pass the URL it is finally
    /// redirected to (the redirect URI with `code`, `state`, `iss`) to
    /// [`OAuthClient::handle_redirect`], or report [`OAuthClient::handle_user_agent_error`]
    Authorize {
        /// The authorization request URL
        url: String,
    },
}

/// How a flow ended
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthEvent {
    /// New tokens are in the store: resend what was waiting
    Authorized,
    /// The flow failed; requests waiting for it fail with this error
    Failed(AuthError),
}

/// What to do with an MCP response, from [`OAuthClient::handle_mcp_response`]
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verdict {
    /// Not an authorization matter: handle the response as usual
    Proceed,
    /// Resend the request with [`OAuthClient::authorization`] once no flow runs
    /// ([`OAuthClient::is_busy`] is false; an [`AuthEvent`] tells when)
    Retry,
    /// Fail the request with this error
    Fail(AuthError),
    /// The resource server wants a DPoP proof with the nonce it just supplied (RFC 9449
    /// §9): resend the request at once with fresh [`OAuthClient::authorization`] and
    /// [`OAuthClient::dpop_proof`]; a request answered so twice in a row fails with
    /// [`AuthError::DpopNonce`]
    RetryWithNonce,
}

/// A client identity at one authorization server
#[derive(Clone)]
struct ClientId {
    id: String,
    secret: Option<Secret>,
    /// `token_endpoint_auth_method` the registration settled on
    method: Option<String>,
}

/// What a finished flow leaves for refreshing later
struct Context {
    meta: AuthServerMetadata,
    client: Option<ClientId>,
    resource: String,
    /// Token requests carry DPoP proofs
    dpop: bool,
}

/// What the running flow waits for
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Waiting {
    Prm,
    Metadata,
    Registration,
    Redirect,
    IdpExchange,
    Token,
    Refresh,
}

struct Flow {
    challenge: BearerChallenge,
    step_up: bool,
    waiting: Waiting,
    prm_candidates: VecDeque<String>,
    prm: Option<ProtectedResourceMetadata>,
    resource: String,
    /// No Protected Resource Metadata: the 2025-03-26 rules
    legacy: bool,
    issuer: String,
    meta_candidates: VecDeque<String>,
    meta: Option<AuthServerMetadata>,
    client: Option<ClientId>,
    scope: Option<String>,
    verifier: String,
    state: String,
    /// Token requests carry DPoP proofs
    dpop: bool,
    /// The last token request's form (before client authentication), to resend with a
    /// DPoP nonce
    token_form: Vec<(&'static str, String)>,
    /// The last token request was already resent with a nonce
    nonce_retried: bool,
}

/// A sans-IO OAuth 2.1 client for one MCP server
///
/// Create one per server URL with a seed of OS randomness; put
/// [`OAuthClient::authorization`] on every MCP request and pass every MCP response status
/// to [`OAuthClient::handle_mcp_response`].
pub struct OAuthClient {
    config: OAuthConfig,
    server_url: String,
    rng: Drbg,
    store: Box<dyn TokenStore>,
    /// Registered identities by issuer
    clients: HashMap<String, ClientId>,
    context: Option<Context>,
    flow: Option<Flow>,
    action: Option<AuthAction>,
    events: VecDeque<AuthEvent>,
    /// Authorizations since the last accepted request
    attempts: u32,
    /// The scope of the last authorization request
    requested_scope: Option<String>,
    /// The latest `DPoP-Nonce` of the authorization server
    as_nonce: Option<String>,
    /// The latest `DPoP-Nonce` of the resource server
    rs_nonce: Option<String>,
    /// The resource server challenged with the `DPoP` scheme
    rs_dpop: bool,
    /// Why the last DPoP proof for an MCP request could not be signed
    proof_error: Option<String>,
}

impl std::fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClient")
            .field("server_url", &self.server_url)
            .field("busy", &self.flow.is_some())
            .field("attempts", &self.attempts)
            .finish_non_exhaustive()
    }
}

impl OAuthClient {
    /// A client for the MCP server at `server_url`, keeping tokens in memory; `seed` must
    /// be fresh OS randomness (PKCE verifiers and `state` values are drawn from it)
    pub fn new(config: OAuthConfig, server_url: impl Into<String>, seed: [u8; 32]) -> Self {
        Self::with_store(
            config,
            server_url,
            seed,
            Box::new(InMemoryTokenStore::default()),
        )
    }

    /// Like [`OAuthClient::new`], keeping tokens in `store`
    pub fn with_store(
        config: OAuthConfig,
        server_url: impl Into<String>,
        seed: [u8; 32],
        store: Box<dyn TokenStore>,
    ) -> Self {
        Self {
            config,
            server_url: server_url.into(),
            rng: Drbg::new(seed),
            store,
            clients: HashMap::new(),
            context: None,
            flow: None,
            action: None,
            events: VecDeque::new(),
            attempts: 0,
            requested_scope: None,
            as_nonce: None,
            rs_nonce: None,
            rs_dpop: false,
            proof_error: None,
        }
    }

    /// Mixes more caller randomness into the seed (e.g. before each flow)
    pub fn add_entropy(&mut self, entropy: &[u8]) {
        self.rng.reseed(entropy);
    }

    fn store_key(&self) -> String {
        url::canonical_resource(&self.server_url)
    }

    /// The current tokens, if any
    pub fn tokens(&self) -> Option<Tokens> {
        self.store.load(&self.store_key())
    }

    /// The `Authorization` header value for MCP requests (`Bearer <token>`, or `DPoP
    /// <token>` for a DPoP-bound token), if a token is held; never log it
    pub fn authorization(&self) -> Option<String> {
        self.tokens().map(|t| {
            let scheme = if t.dpop { "DPoP" } else { "Bearer" };
            format!("{scheme} {}", t.access_token.expose())
        })
    }

    /// A fresh `DPoP` header value for an MCP request with HTTP `method` (`POST`, `GET`,
    /// `DELETE`) when the held token is DPoP-bound (RFC 9449 §7): the proof covers the
    /// server URL, the token (`ath`) and the resource server's latest nonce. `None` when
    /// the token is a bearer token, or when the signer failed (the request then fails
    /// with [`AuthError::DpopProof`] once the server refuses it).
    pub fn dpop_proof(&mut self, method: &str) -> Option<String> {
        let tokens = self.tokens().filter(|t| t.dpop)?;
        let signer = self.config.dpop_signer.clone()?;
        let ath = URL_SAFE_NO_PAD.encode(Sha256::digest(tokens.access_token.expose()));
        let htu = url::without_query(&self.server_url);
        let claims = DpopClaims {
            htm: method,
            htu: &htu,
            ath: Some(&ath),
            nonce: self.rs_nonce.as_deref(),
        };
        match signer.proof(claims) {
            Ok(proof) => {
                self.proof_error = None;
                Some(proof)
            }
            Err(e) => {
                self.proof_error = Some(e);
                None
            }
        }
    }

    /// A `DPoP-Nonce` header of an MCP response (of any status): later proofs for the
    /// resource server carry it (RFC 9449 §9)
    pub fn handle_dpop_nonce(&mut self, nonce: &str) {
        self.rs_nonce = Some(nonce.to_owned());
    }

    /// Whether a flow runs (requests should wait for its [`AuthEvent`])
    pub fn is_busy(&self) -> bool {
        self.flow.is_some()
    }

    /// The next action of the running flow; `None` when it waits for nothing or is done
    #[must_use]
    pub fn poll_action(&mut self) -> Option<AuthAction> {
        self.action.take()
    }

    /// How the last flow ended
    #[must_use]
    pub fn poll_event(&mut self) -> Option<AuthEvent> {
        self.events.pop_front()
    }

    /// Starts a flow before any challenge (e.g. a client credentials client that knows it
    /// needs a token); does nothing while a flow runs
    pub fn start(&mut self, now: Instant) {
        let _ = now;
        if self.flow.is_none() {
            self.begin(BearerChallenge::default(), false);
        }
    }

    /// When [`OAuthClient::refresh_if_due`] will next have work: the access token's expiry
    /// less the refresh margin, if a refresh token is held
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.flow.is_some() || self.context.is_none() {
            return None;
        }
        let tokens = self.tokens()?;
        tokens.refresh_token.as_ref()?;
        let at = tokens.expires_at?;
        Some(at.checked_sub(self.config.refresh_margin).unwrap_or(at))
    }

    /// Starts a refresh when the access token expires within the configured margin and a
    /// refresh token is held; returns whether a flow now runs (wait for it before sending)
    pub fn refresh_if_due(&mut self, now: Instant) -> bool {
        if self.flow.is_some() {
            return true;
        }
        let Some(tokens) = self.tokens() else {
            return false;
        };
        let due = tokens
            .expires_at
            .is_some_and(|at| at.saturating_duration_since(now) <= self.config.refresh_margin);
        if due && tokens.refresh_token.is_some() && self.context.is_some() {
            self.begin_refresh(BearerChallenge::default())
        } else {
            false
        }
    }

    /// Reads the status and `WWW-Authenticate` values of an MCP response: a 401, or a 403
    /// with `insufficient_scope`, starts (or joins) a flow and says [`Verdict::Retry`];
    /// success resets the retry count. `sent` is the `Authorization` value the request
    /// carried (a 401 for an older token than the current one is simply retried).
    pub fn handle_mcp_response<'a>(
        &mut self,
        now: Instant,
        status: u16,
        www_authenticate: impl IntoIterator<Item = &'a str>,
        sent: Option<&str>,
    ) -> Verdict {
        let _ = now;
        if (200..300).contains(&status) {
            self.attempts = 0;
            return Verdict::Proceed;
        }
        if status != 401 && status != 403 {
            return Verdict::Proceed;
        }
        let OAuthChallenge {
            params: challenge,
            dpop,
        } = OAuthChallenge::from_headers(www_authenticate);
        if status == 401
            && let Some(error) = self.proof_error.take()
        {
            return Verdict::Fail(AuthError::DpopProof(error));
        }
        if let Some(dpop) = dpop {
            // A bearer token meets a server that wants DPoP: the flow below gets a bound one.
            if status == 401
                && dpop.error.as_deref() == Some(USE_DPOP_NONCE)
                && self.tokens().is_some_and(|t| t.dpop)
            {
                return if self.rs_nonce.is_some() {
                    Verdict::RetryWithNonce
                } else {
                    Verdict::Fail(AuthError::DpopNonce(
                        "the resource server asked for a DPoP nonce without supplying one",
                    ))
                };
            }
            self.rs_dpop = true;
        }
        let step_up = status == 403;
        if step_up && challenge.error.as_deref() != Some("insufficient_scope") {
            return Verdict::Proceed;
        }
        if self.flow.is_some() {
            return Verdict::Retry;
        }
        let current = self.authorization();
        if !step_up && current.is_some() && current.as_deref() != sent {
            return Verdict::Retry;
        }
        self.attempts += 1;
        if self.attempts > self.config.max_attempts {
            let attempts = self.attempts - 1;
            self.attempts = 0;
            return Verdict::Fail(AuthError::RetryLimit { attempts });
        }
        if !step_up
            && self.tokens().is_some_and(|t| t.refresh_token.is_some())
            && self.context.is_some()
        {
            self.begin_refresh(challenge);
        } else {
            self.begin(challenge, step_up);
        }
        Verdict::Retry
    }

    /// The user agent finished the authorization step at `redirect_url`
    pub fn handle_redirect(&mut self, now: Instant, redirect_url: &str) {
        let _ = now;
        let Some(flow) = self.flow.as_mut() else {
            return;
        };
        if flow.waiting != Waiting::Redirect {
            return;
        }
        let params = url::query_params(redirect_url);
        let get = |name: &str| {
            params
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        };
        if let Some(error) = get("error") {
            let error = error.to_owned();
            return self.fail(AuthError::AuthorizationDenied { error });
        }
        if get("state") != Some(flow.state.as_str()) {
            return self.fail(AuthError::InvalidAuthorizationResponse(
                "state does not match the request",
            ));
        }
        let meta = flow
            .meta
            .as_ref()
            .expect("a redirect is awaited after metadata");
        match get("iss") {
            Some(iss) if iss != meta.issuer => {
                return self.fail(AuthError::InvalidAuthorizationResponse(
                    "iss does not match the authorization server's issuer",
                ));
            }
            None if meta.authorization_response_iss_parameter_supported == Some(true) => {
                return self.fail(AuthError::InvalidAuthorizationResponse(
                    "iss is missing though the authorization server sends it",
                ));
            }
            _ => {}
        }
        let Some(code) = get("code").map(str::to_owned) else {
            return self.fail(AuthError::InvalidAuthorizationResponse("no code"));
        };
        let form = vec![
            ("grant_type", "authorization_code".to_owned()),
            ("code", code),
            ("redirect_uri", self.config.redirect_uri.clone()),
            ("code_verifier", flow.verifier.clone()),
            ("resource", flow.resource.clone()),
        ];
        self.send_token_request(form, Waiting::Token);
    }

    /// The user agent could not complete the authorization step
    pub fn handle_user_agent_error(&mut self, reason: impl Into<String>) {
        if self
            .flow
            .as_ref()
            .is_some_and(|f| f.waiting == Waiting::Redirect)
        {
            self.fail(AuthError::UserAgent(reason.into()));
        }
    }

    /// The response to the last [`AuthAction::Fetch`]
    pub fn handle_response(&mut self, now: Instant, response: AuthResponse) {
        let Some(waiting) = self.flow.as_ref().map(|f| f.waiting) else {
            return;
        };
        match waiting {
            Waiting::Prm => self.on_prm(response),
            Waiting::Metadata => self.on_metadata(response),
            Waiting::Registration => self.on_registration(response),
            Waiting::IdpExchange => self.on_idp_exchange(response),
            Waiting::Token | Waiting::Refresh => self.on_token(now, response, waiting),
            Waiting::Redirect => {}
        }
    }

    // --- the flow ---

    fn begin(&mut self, challenge: BearerChallenge, step_up: bool) {
        let prm_candidates: VecDeque<String> =
            url::prm_candidates(&self.server_url, challenge.resource_metadata.as_deref()).into();
        let verifier = self.rng.token();
        let state = self.rng.token();
        self.flow = Some(Flow {
            challenge,
            step_up,
            waiting: Waiting::Prm,
            prm_candidates,
            prm: None,
            resource: url::canonical_resource(&self.server_url),
            legacy: false,
            issuer: String::new(),
            meta_candidates: VecDeque::new(),
            meta: None,
            client: None,
            scope: None,
            verifier,
            state,
            dpop: false,
            token_form: Vec::new(),
            nonce_retried: false,
        });
        if url::split(&self.server_url).is_none() {
            return self.fail(AuthError::Unusable("the server URL is not an http(s) URL"));
        }
        self.next_prm();
    }

    fn begin_refresh(&mut self, challenge: BearerChallenge) -> bool {
        let (Some(tokens), Some(context)) = (self.tokens(), self.context.as_ref()) else {
            return false;
        };
        let Some(refresh) = tokens.refresh_token else {
            return false;
        };
        self.flow = Some(Flow {
            challenge,
            step_up: false,
            waiting: Waiting::Refresh,
            prm_candidates: VecDeque::new(),
            prm: None,
            resource: context.resource.clone(),
            legacy: false,
            issuer: context.meta.issuer.clone(),
            meta_candidates: VecDeque::new(),
            meta: Some(context.meta.clone()),
            client: context.client.clone(),
            scope: tokens.scope.clone(),
            verifier: String::new(),
            state: String::new(),
            dpop: context.dpop,
            token_form: Vec::new(),
            nonce_retried: false,
        });
        let form = vec![
            ("grant_type", "refresh_token".to_owned()),
            ("refresh_token", refresh.expose().to_owned()),
            ("resource", context.resource.clone()),
        ];
        self.send_token_request(form, Waiting::Refresh);
        true
    }

    fn flow(&mut self) -> &mut Flow {
        self.flow.as_mut().expect("called while a flow runs")
    }

    fn fail(&mut self, error: AuthError) {
        self.flow = None;
        self.action = None;
        self.events.push_back(AuthEvent::Failed(error));
    }

    fn fetch(&mut self, request: AuthRequest, waiting: Waiting) {
        self.flow().waiting = waiting;
        self.action = Some(AuthAction::Fetch(request));
    }

    fn next_prm(&mut self) {
        if let Some(next) = self.flow().prm_candidates.pop_front() {
            return self.fetch(AuthRequest::get(next), Waiting::Prm);
        }
        // No Protected Resource Metadata: a 2025-03-26 server, its own authorization server.
        let origin = url::split(&self.server_url)
            .expect("checked when the flow began")
            .origin();
        let flow = self.flow();
        flow.legacy = true;
        flow.meta_candidates = url::as_metadata_candidates(&origin).into();
        flow.issuer = origin;
        self.next_metadata();
    }

    fn on_prm(&mut self, response: AuthResponse) {
        let prm = response
            .is_success()
            .then(|| serde_json::from_slice::<ProtectedResourceMetadata>(&response.body).ok())
            .flatten();
        let Some(prm) = prm else {
            return self.next_prm();
        };
        if !url::resource_covers(&prm.resource, &self.server_url) {
            return self.fail(AuthError::ResourceMismatch {
                resource: prm.resource,
            });
        }
        let Some(issuer) = prm.authorization_servers.first().cloned() else {
            return self.fail(AuthError::NoAuthorizationServer);
        };
        let flow = self.flow();
        flow.resource = prm.resource.clone();
        flow.meta_candidates = url::as_metadata_candidates(&issuer).into();
        flow.issuer = issuer;
        flow.prm = Some(prm);
        self.next_metadata();
    }

    fn next_metadata(&mut self) {
        if let Some(next) = self.flow().meta_candidates.pop_front() {
            return self.fetch(AuthRequest::get(next), Waiting::Metadata);
        }
        let flow = self.flow();
        if flow.legacy {
            // 2025-03-26: the default endpoints at the server's origin.
            flow.meta = Some(AuthServerMetadata::fallback(&flow.issuer));
            return self.after_metadata();
        }
        let issuer = flow.issuer.clone();
        self.fail(AuthError::MetadataNotFound { issuer })
    }

    fn on_metadata(&mut self, response: AuthResponse) {
        let meta = response
            .is_success()
            .then(|| serde_json::from_slice::<AuthServerMetadata>(&response.body).ok())
            .flatten();
        let Some(meta) = meta else {
            return self.next_metadata();
        };
        let flow = self.flow();
        if meta.issuer != flow.issuer {
            let expected = flow.issuer.clone();
            return self.fail(AuthError::MetadataIssuerMismatch {
                expected,
                found: meta.issuer,
            });
        }
        flow.meta = Some(meta);
        self.after_metadata();
    }

    fn after_metadata(&mut self) {
        let scope = self.select_scope();
        let grant = self.config.grant.clone();
        let dpop = self.config.dpop_signer.as_ref().is_some_and(|signer| {
            let meta = self.flow.as_ref().and_then(|f| f.meta.as_ref());
            let offered = meta
                .and_then(|m| m.dpop_signing_alg_values_supported.as_ref())
                .is_some_and(|algs| algs.iter().any(|a| a == signer.algorithm()));
            offered || self.rs_dpop
        });
        let flow = self.flow.as_mut().expect("a flow runs");
        flow.scope = scope;
        flow.dpop = dpop;
        let meta = flow.meta.clone().expect("metadata was just set");
        let issuer = flow.issuer.clone();
        if matches!(grant, Grant::AuthorizationCode) {
            let s256 = meta
                .code_challenge_methods_supported
                .as_ref()
                .is_some_and(|m| m.iter().any(|x| x == "S256"));
            if !s256 {
                return self.fail(AuthError::PkceUnsupported);
            }
        }
        // A client identity bound to this issuer.
        let known = self.clients.get(&issuer).cloned().or_else(|| {
            self.config
                .pre_registered
                .iter()
                .find(|p| p.issuer.as_deref() == Some(issuer.as_str()))
                .or_else(|| {
                    self.config
                        .pre_registered
                        .iter()
                        .find(|p| p.issuer.is_none())
                })
                .map(|p| ClientId {
                    id: p.client_id.clone(),
                    secret: p.client_secret.clone(),
                    method: None,
                })
        });
        if let Some(client) = known {
            self.flow().client = Some(client);
            return self.run_grant();
        }
        if !matches!(grant, Grant::AuthorizationCode) {
            if matches!(grant, Grant::JwtBearer { .. }) {
                // A workload assertion may identify the client by itself.
                return self.run_grant();
            }
            return self.fail(AuthError::NoClientRegistration { issuer });
        }
        if let Some(url) = self.config.client_metadata_url.clone()
            && meta.client_id_metadata_document_supported == Some(true)
        {
            self.flow().client = Some(ClientId {
                id: url,
                secret: None,
                method: Some("none".into()),
            });
            return self.run_grant();
        }
        let Some(endpoint) = meta.registration_endpoint.clone() else {
            return self.fail(AuthError::NoClientRegistration { issuer });
        };
        let method = ["none", "client_secret_basic", "client_secret_post"]
            .into_iter()
            .find(|m| meta.supports_auth_method(m))
            .unwrap_or("none");
        let mut body = json!({
            "client_name": self.config.client_name,
            "redirect_uris": [self.config.redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
            "application_type": match self.config.application_type {
                ApplicationType::Native => "native",
                ApplicationType::Web => "web",
            },
        });
        if let Some(scope) = &self.flow().scope {
            body["scope"] = Value::String(scope.clone());
        }
        self.fetch(
            AuthRequest::post_json(endpoint, &body),
            Waiting::Registration,
        );
    }

    fn on_registration(&mut self, response: AuthResponse) {
        let body: Option<Value> = serde_json::from_slice(&response.body).ok();
        if !response.is_success() {
            return self.fail(endpoint_error("registration", &response, body.as_ref()));
        }
        let Some(id) = body
            .as_ref()
            .and_then(|b| b["client_id"].as_str())
            .map(str::to_owned)
        else {
            return self.fail(AuthError::InvalidResponse {
                endpoint: "registration",
                reason: "no client_id".into(),
            });
        };
        let body = body.unwrap_or_default();
        let client = ClientId {
            id,
            secret: body["client_secret"].as_str().map(Secret::new),
            method: body["token_endpoint_auth_method"]
                .as_str()
                .map(str::to_owned),
        };
        let issuer = self.flow().issuer.clone();
        self.clients.insert(issuer, client.clone());
        self.flow().client = Some(client);
        self.run_grant();
    }

    fn run_grant(&mut self) {
        let grant = self.config.grant.clone();
        let flow = self.flow.as_ref().expect("a flow runs");
        let resource = flow.resource.clone();
        let scope = flow.scope.clone();
        let mut form: Vec<(&str, String)> = Vec::new();
        match grant {
            Grant::AuthorizationCode => {
                let meta = flow.meta.as_ref().expect("metadata precedes the grant");
                let Some(endpoint) = meta.authorization_endpoint.clone() else {
                    return self.fail(AuthError::NotConfigured(
                        "the authorization server has no authorization endpoint",
                    ));
                };
                let client_id = flow
                    .client
                    .as_ref()
                    .map(|c| c.id.clone())
                    .unwrap_or_default();
                let challenge = pkce_challenge(&flow.verifier);
                let state = flow.state.clone();
                let mut query = vec![
                    ("response_type", "code"),
                    ("client_id", client_id.as_str()),
                    ("redirect_uri", self.config.redirect_uri.as_str()),
                    ("code_challenge", challenge.as_str()),
                    ("code_challenge_method", "S256"),
                    ("state", state.as_str()),
                    ("resource", resource.as_str()),
                ];
                if let Some(scope) = &scope {
                    query.push(("scope", scope.as_str()));
                }
                let url = url::with_query(&endpoint, &query);
                self.requested_scope = scope.clone();
                self.flow().waiting = Waiting::Redirect;
                self.action = Some(AuthAction::Authorize { url });
                return;
            }
            Grant::ClientCredentials => {
                form.push(("grant_type", "client_credentials".into()));
            }
            Grant::JwtBearer { assertion } => {
                form.push(("grant_type", JWT_BEARER.into()));
                form.push(("assertion", assertion.expose().to_owned()));
            }
            Grant::IdentityAssertion(idp) => {
                let issuer = flow.issuer.clone();
                let mut exchange = vec![
                    ("grant_type", TOKEN_EXCHANGE),
                    ("requested_token_type", ID_JAG),
                    ("subject_token", idp.id_token.expose()),
                    ("subject_token_type", ID_TOKEN),
                    ("audience", issuer.as_str()),
                    ("resource", resource.as_str()),
                    ("client_id", idp.idp_client_id.as_str()),
                ];
                if let Some(secret) = &idp.idp_client_secret {
                    exchange.push(("client_secret", secret.expose()));
                }
                if let Some(scope) = &scope {
                    exchange.push(("scope", scope.as_str()));
                }
                let request = AuthRequest::post_form(&idp.idp_token_endpoint, &exchange);
                self.requested_scope = scope.clone();
                return self.fetch(request, Waiting::IdpExchange);
            }
        }
        form.push(("resource", resource));
        if let Some(scope) = scope.clone() {
            form.push(("scope", scope));
        }
        self.requested_scope = scope;
        self.send_token_request(form, Waiting::Token);
    }

    fn on_idp_exchange(&mut self, response: AuthResponse) {
        let body: Option<Value> = serde_json::from_slice(&response.body).ok();
        if !response.is_success() {
            return self.fail(endpoint_error("token exchange", &response, body.as_ref()));
        }
        let Some(assertion) = body
            .as_ref()
            .and_then(|b| b["access_token"].as_str())
            .map(str::to_owned)
        else {
            return self.fail(AuthError::InvalidResponse {
                endpoint: "token exchange",
                reason: "no access_token".into(),
            });
        };
        let flow = self.flow();
        let mut form = vec![
            ("grant_type", JWT_BEARER.to_owned()),
            ("assertion", assertion),
            ("resource", flow.resource.clone()),
        ];
        if let Some(scope) = flow.scope.clone() {
            form.push(("scope", scope));
        }
        self.send_token_request(form, Waiting::Token);
    }

    /// POSTs `form` to the token endpoint with this client's authentication
    fn send_token_request(&mut self, mut form: Vec<(&'static str, String)>, waiting: Waiting) {
        self.flow().token_form.clone_from(&form);
        let flow = self.flow.as_ref().expect("a flow runs");
        let meta = flow
            .meta
            .as_ref()
            .expect("metadata precedes token requests");
        let mut basic = None;
        if let Some(client) = &flow.client {
            match self.auth_method(meta, client) {
                "client_secret_basic" => {
                    let enc =
                        |s: &str| form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
                    let secret = client.secret.as_ref().map(Secret::expose).unwrap_or("");
                    let pair = format!("{}:{}", enc(&client.id), enc(secret));
                    basic = Some(format!("Basic {}", STANDARD.encode(pair)));
                }
                "client_secret_post" => {
                    form.push(("client_id", client.id.clone()));
                    let secret = client.secret.as_ref().map(Secret::expose).unwrap_or("");
                    form.push(("client_secret", secret.to_owned()));
                }
                "private_key_jwt" => {
                    let signer = self
                        .config
                        .assertion_signer
                        .clone()
                        .expect("private_key_jwt is chosen only with a signer");
                    match signer.assertion(&client.id, &meta.issuer) {
                        Ok(jwt) => {
                            form.push(("client_id", client.id.clone()));
                            form.push(("client_assertion_type", ASSERTION_TYPE.to_owned()));
                            form.push(("client_assertion", jwt));
                        }
                        Err(e) => return self.fail(AuthError::Assertion(e)),
                    }
                }
                _ => form.push(("client_id", client.id.clone())),
            }
        }
        let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let mut request = AuthRequest::post_form(&meta.token_endpoint, &pairs);
        if let Some(basic) = basic {
            request.headers.push(("Authorization".into(), basic));
        }
        if flow.dpop {
            let signer = self
                .config
                .dpop_signer
                .clone()
                .expect("DPoP is chosen only with a signer");
            let htu = url::without_query(&meta.token_endpoint);
            let claims = DpopClaims {
                htm: "POST",
                htu: &htu,
                ath: None,
                nonce: self.as_nonce.as_deref(),
            };
            match signer.proof(claims) {
                Ok(proof) => request.headers.push(("DPoP".into(), proof)),
                Err(e) => return self.fail(AuthError::DpopProof(e)),
            }
        }
        self.fetch(request, waiting);
    }

    /// The token endpoint authentication method for `client` at `meta`'s server
    fn auth_method(&self, meta: &AuthServerMetadata, client: &ClientId) -> &'static str {
        const KNOWN: [&str; 4] = [
            "client_secret_basic",
            "client_secret_post",
            "private_key_jwt",
            "none",
        ];
        let signer = self.config.assertion_signer.is_some();
        if let Some(m) = &client.method
            && let Some(known) = KNOWN.iter().find(|k| *k == m)
            && (*known != "private_key_jwt" || signer)
        {
            return known;
        }
        let mut prefs = Vec::new();
        if client.secret.is_some() {
            prefs.extend(["client_secret_basic", "client_secret_post"]);
        }
        if signer {
            prefs.push("private_key_jwt");
        }
        prefs.push("none");
        prefs
            .iter()
            .copied()
            .find(|m| meta.supports_auth_method(m))
            .unwrap_or(prefs[0])
    }

    fn on_token(&mut self, now: Instant, response: AuthResponse, waiting: Waiting) {
        let body: Option<Value> = serde_json::from_slice(&response.body).ok();
        if let Some(nonce) = response.header("dpop-nonce") {
            self.as_nonce = Some(nonce.to_owned());
        }
        let error = body.as_ref().and_then(|b| b["error"].as_str());
        if !response.is_success() && error == Some(USE_DPOP_NONCE) && self.flow().dpop {
            // RFC 9449 §8: resend once with the nonce the server just supplied.
            if response.header("dpop-nonce").is_none() {
                return self.fail(AuthError::DpopNonce(
                    "the authorization server asked for a DPoP nonce without supplying one",
                ));
            }
            if self.flow().nonce_retried {
                return self.fail(AuthError::DpopNonce(
                    "the authorization server refused the DPoP nonce it supplied",
                ));
            }
            let flow = self.flow();
            flow.nonce_retried = true;
            let form = flow.token_form.clone();
            return self.send_token_request(form, waiting);
        }
        let access = body
            .as_ref()
            .and_then(|b| b["access_token"].as_str())
            .filter(|_| response.is_success());
        let Some(access) = access else {
            if waiting == Waiting::Refresh {
                // The refresh token is spent or revoked: authorize from the start.
                let key = self.store_key();
                self.store.remove(&key);
                let challenge = self.flow().challenge.clone();
                self.flow = None;
                return self.begin(challenge, false);
            }
            let error = if response.is_success() {
                AuthError::InvalidResponse {
                    endpoint: "token",
                    reason: "no access_token".into(),
                }
            } else {
                endpoint_error("token", &response, body.as_ref())
            };
            return self.fail(error);
        };
        let body = body.as_ref().expect("an access token came in a body");
        let flow = self.flow.take().expect("a flow runs");
        let old = self.tokens();
        let expires_in = match &body["expires_in"] {
            Value::Number(n) => n.as_u64(),
            Value::String(s) => s.parse().ok(),
            _ => None,
        };
        let mut tokens = Tokens::new(Secret::new(access), flow.issuer.clone());
        tokens.dpop = flow.dpop
            && body["token_type"]
                .as_str()
                .is_some_and(|t| t.eq_ignore_ascii_case("dpop"));
        tokens.expires_at = expires_in.map(|s| now + Duration::from_secs(s));
        tokens.refresh_token = body["refresh_token"].as_str().map(Secret::new).or_else(|| {
            (waiting == Waiting::Refresh)
                .then(|| old.and_then(|o| o.refresh_token))
                .flatten()
        });
        tokens.scope = body["scope"]
            .as_str()
            .map(str::to_owned)
            .or(flow.scope.clone());
        let key = self.store_key();
        self.store.save(&key, tokens);
        self.context = Some(Context {
            meta: flow.meta.expect("metadata precedes tokens"),
            client: flow.client,
            resource: flow.resource,
            dpop: flow.dpop,
        });
        self.events.push_back(AuthEvent::Authorized);
    }

    /// Scopes to request: the challenge's, else the resource's `scopes_supported`, else the
    /// configured defaults; on step-up, together with the scopes asked for before; plus
    /// `offline_access` where the authorization server lists it and a refresh token helps
    fn select_scope(&self) -> Option<String> {
        let flow = self.flow.as_ref().expect("a flow runs");
        let mut scopes: Vec<String> = Vec::new();
        if flow.step_up
            && let Some(previous) = &self.requested_scope
        {
            scopes.extend(previous.split_whitespace().map(str::to_owned));
        }
        let fresh: Vec<String> = if let Some(s) = &flow.challenge.scope {
            s.split_whitespace().map(str::to_owned).collect()
        } else if let Some(s) = flow.prm.as_ref().and_then(|p| p.scopes_supported.clone()) {
            s
        } else {
            self.config.default_scopes.clone()
        };
        for s in fresh {
            if !scopes.contains(&s) {
                scopes.push(s);
            }
        }
        let offline = "offline_access";
        if matches!(self.config.grant, Grant::AuthorizationCode)
            && self.config.request_offline_access
            && flow
                .meta
                .as_ref()
                .is_some_and(|m| m.supports_scope(offline))
            && !scopes.iter().any(|s| s == offline)
        {
            scopes.push(offline.to_owned());
        }
        (!scopes.is_empty()).then(|| scopes.join(" "))
    }
}

fn endpoint_error(
    endpoint: &'static str,
    response: &AuthResponse,
    body: Option<&Value>,
) -> AuthError {
    AuthError::Endpoint {
        endpoint,
        status: response.status,
        error: body.and_then(|b| b["error"].as_str()).map(str::to_owned),
    }
}
