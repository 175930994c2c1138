//! OAuth glue: the client's options, the `private_key_jwt` signer, a headless user agent's
//! redirect following, and on the server side JWT access-token verification and the
//! protected server's gate
//!
//! What differs between the bindings is how an HTTP request is performed and how a user
//! agent or token verifier is called (a future or a plain function); those stay generic
//! here.

use std::future::Future;
use std::ops::Deref;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use mcp_sansio::auth::{
    AuthRequest, AuthResponse, ClientAssertion, DpopClaims, DpopSigner, OAuthClient, OAuthConfig,
    TokenStore,
};
use mcp_sansio::http::protected::{Gate, ResourceServer};
use mcp_sansio::http::{Headers, HttpResponse, Principal};

/// The largest response body accepted from an authorization endpoint
pub const MAX_RESPONSE_BODY: usize = 1024 * 1024;
/// How long one authorization request may take
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The OAuth types of the async bindings (mcp-sansio-tokio, mcp-sansio-async-std), which run user agents
/// and token verifiers as futures
pub mod asynchronous {
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::Arc;

    use jsonwebtoken::{DecodingKey, Validation};
    use mcp_sansio::auth::{AuthRequest, AuthResponse};

    use super::{Headless, VerifiedToken, verify_jwt};

    /// A boxed future that may move between threads
    pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

    /// Takes the user to an authorization URL and returns the URL the authorization server
    /// finally redirected to (the redirect URI with `code`, `state`, `iss`), or why not
    pub type UserAgent = Arc<dyn Fn(String) -> BoxFuture<Result<String, String>> + Send + Sync>;

    /// Follows the authorization step at `url` with the connection's user agent: the
    /// redirect URL it reached, or why not (a connection without one says so)
    ///
    /// # Errors
    /// The user agent's failure, or "no user agent".
    pub async fn authorize(agent: Option<UserAgent>, url: String) -> Result<String, String> {
        match agent {
            Some(agent) => agent(url).await,
            None => Err("no user agent".into()),
        }
    }

    /// OAuth for an HTTP client connection (`ClientOptions::auth`): the flow's
    /// configuration, the [`UserAgent`] that follows the authorization step, and where
    /// tokens are kept (default: in memory)
    pub type OAuthOptions = super::OAuthOptions<UserAgent>;

    /// Checks a bearer token (by introspection, JWT validation, a lookup): the valid
    /// token's grants, or why it is invalid (expired, wrong audience, unknown), which goes
    /// into the 401's `error_description`
    pub type TokenVerifier =
        Arc<dyn Fn(String) -> BoxFuture<Result<VerifiedToken, String>> + Send + Sync>;

    /// A protected HTTP server's authorization (`Server::serve_http_protected`): the
    /// resource-server rules and the [`TokenVerifier`]
    ///
    /// GET on the metadata path answers the Protected Resource Metadata; every other
    /// request needs a bearer token the verifier accepts and that grants the required
    /// scopes, or is answered 401 (missing or invalid token) or 403 (`insufficient_scope`)
    /// with the `WWW-Authenticate` challenge that points clients at the metadata.
    pub type Protection = super::Protection<TokenVerifier>;

    /// A [`TokenVerifier`] for JWT access tokens: the signature with `key`, `exp` and `nbf`
    /// (always, with `validation`'s leeway), and the audience (the resource identifier) and
    /// issuer per `validation`; scopes from the `scope` claim (space separated) or `scp` (an
    /// array)
    pub fn jwt_verifier(key: DecodingKey, mut validation: Validation) -> TokenVerifier {
        // A token is no good before its `nbf`, whatever the caller's `Validation` says.
        validation.validate_nbf = true;
        let key = Arc::new(key);
        let validation = Arc::new(validation);
        Arc::new(move |token: String| {
            let key = Arc::clone(&key);
            let validation = Arc::clone(&validation);
            Box::pin(async move { verify_jwt(&token, &key, &validation) })
        })
    }

    /// A headless [`UserAgent`] ([`Headless`]) that performs its GETs with `perform`
    pub fn headless<P, Fut>(redirect_uri: String, perform: P) -> UserAgent
    where
        P: Fn(AuthRequest) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = AuthResponse> + Send + 'static,
    {
        Arc::new(move |url: String| {
            let redirect_uri = redirect_uri.clone();
            let perform = perform.clone();
            Box::pin(async move { Headless::follow(&redirect_uri, url, perform).await })
        })
    }
}

/// The OAuth types of the blocking binding (mcp-sansio-blocking), which calls user agents and
/// token verifiers as plain functions on threads of their own
pub mod blocking {
    use std::sync::Arc;

    use jsonwebtoken::{DecodingKey, Validation};
    use mcp_sansio::auth::{AuthRequest, AuthResponse};

    use super::{Headless, VerifiedToken, verify_jwt};

    /// Takes the user to an authorization URL and returns the URL the authorization server
    /// finally redirected to (the redirect URI with `code`, `state`, `iss`), or why not; it
    /// runs on a thread of its own and may block
    pub type UserAgent = Arc<dyn Fn(String) -> Result<String, String> + Send + Sync>;

    /// OAuth for an HTTP client connection (`ClientOptions::auth`): the flow's
    /// configuration, the [`UserAgent`] that follows the authorization step, and where
    /// tokens are kept (default: in memory)
    pub type OAuthOptions = super::OAuthOptions<UserAgent>;

    /// Checks a bearer token (by introspection, JWT validation, a lookup): the valid
    /// token's grants, or why it is invalid (expired, wrong audience, unknown), which goes
    /// into the 401's `error_description`
    ///
    /// It runs on the request's own thread, so it may block (an introspection call).
    pub type TokenVerifier = Arc<dyn Fn(&str) -> Result<VerifiedToken, String> + Send + Sync>;

    /// A protected HTTP server's authorization (`Server::serve_http_protected`): the
    /// resource-server rules and the [`TokenVerifier`]
    ///
    /// GET on the metadata path answers the Protected Resource Metadata; every other
    /// request needs a bearer token the verifier accepts and that grants the required
    /// scopes, or is answered 401 (missing or invalid token) or 403 (`insufficient_scope`)
    /// with the `WWW-Authenticate` challenge that points clients at the metadata.
    pub type Protection = super::Protection<TokenVerifier>;

    /// A [`TokenVerifier`] for JWT access tokens: the signature with `key`, `exp` and `nbf`
    /// (always, with `validation`'s leeway), and the audience (the resource identifier) and
    /// issuer per `validation`; scopes from the `scope` claim (space separated) or `scp` (an
    /// array)
    pub fn jwt_verifier(key: DecodingKey, mut validation: Validation) -> TokenVerifier {
        // A token is no good before its `nbf`, whatever the caller's `Validation` says.
        validation.validate_nbf = true;
        Arc::new(move |token: &str| verify_jwt(token, &key, &validation))
    }

    /// A headless [`UserAgent`] ([`Headless`]) that performs its GETs with `perform`
    pub fn headless(
        redirect_uri: String,
        perform: impl Fn(AuthRequest) -> AuthResponse + Send + Sync + 'static,
    ) -> UserAgent {
        Arc::new(move |url: String| Headless::follow_blocking(&redirect_uri, url, &perform))
    }
}

/// Makes a fresh token store for each connection
pub type StoreFactory = Arc<dyn Fn() -> Box<dyn TokenStore> + Send + Sync>;

/// OAuth for an HTTP client connection, with the binding's user agent `U` (a function that
/// takes the user to an authorization URL and returns where the authorization server
/// finally redirected to)
#[derive(Clone)]
#[non_exhaustive]
pub struct OAuthOptions<U> {
    /// The flow's configuration
    pub config: OAuthConfig,
    /// Follows the authorization step
    pub user_agent: U,
    /// Where tokens are kept (default: in memory)
    pub store: Option<StoreFactory>,
    /// DPoP (RFC 9449) where the servers offer it (default: on): each client gets a fresh
    /// [`DpopKey`] unless `config.dpop_signer` already holds a signer
    pub dpop: bool,
}

impl<U> std::fmt::Debug for OAuthOptions<U> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthOptions")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl<U> OAuthOptions<U> {
    /// Authorize with `config`, sending the user through `user_agent`
    pub fn new(config: OAuthConfig, user_agent: U) -> Self {
        Self {
            config,
            user_agent,
            store: None,
            dpop: true,
        }
    }

    /// Bearer tokens only: no DPoP even where the servers offer it
    #[must_use]
    pub fn without_dpop(mut self) -> Self {
        self.dpop = false;
        self.config.dpop_signer = None;
        self
    }

    /// The OAuth client for the server at `url`, seeded with OS randomness, with a fresh
    /// [`DpopKey`] unless DPoP is off
    ///
    /// # Errors
    /// No OS randomness.
    pub fn client(&self, url: &str) -> Result<OAuthClient, String> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|e| format!("no OS randomness: {e}"))?;
        let store = self.store.as_ref().map(|f| f());
        let mut config = self.config.clone();
        if self.dpop && config.dpop_signer.is_none() {
            config.dpop_signer = Some(Arc::new(DpopKey::generate()?));
        }
        Ok(match store {
            Some(store) => OAuthClient::with_store(config, url, seed, store),
            None => OAuthClient::new(config, url, seed),
        })
    }
}

/// How many redirects a headless user agent follows before giving up
const MAX_REDIRECTS: usize = 10;

/// A user agent without a browser, sans IO: GETs the authorization URL and follows
/// redirects (up to 10, sending nothing but the GET) until one points at the redirect URI,
/// and ends with that URL (whose query holds `code`, `state` and `iss`) without fetching it
#[derive(Debug, Clone)]
pub struct Headless {
    redirect_uri: String,
    url: String,
    hops: usize,
}

/// What a [`Headless`] user agent does next
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Perform this request and pass its response to [`Headless::step`]
    Fetch(AuthRequest),
    /// The end: the redirect URL reached, or why not
    Done(Result<String, String>),
}

impl Headless {
    /// Starts at the authorization `url`, looking for `redirect_uri`
    pub fn new(redirect_uri: &str, url: String) -> Self {
        Self {
            redirect_uri: redirect_uri.to_owned(),
            url,
            hops: 0,
        }
    }

    /// The next step, given the response to the last [`Step::Fetch`] (`None` at first)
    pub fn step(&mut self, response: Option<&AuthResponse>) -> Step {
        if let Some(response) = response {
            let location = response.header("location");
            match (response.status, location) {
                (300..=399, Some(location)) => self.url = absolute(&self.url, location),
                (0, _) => return Step::Done(Err("the authorization server did not answer".into())),
                (status, _) => {
                    return Step::Done(Err(format!(
                        "the authorization URL answered HTTP {status}"
                    )));
                }
            }
        }
        if self.url.starts_with(&self.redirect_uri) {
            return Step::Done(Ok(std::mem::take(&mut self.url)));
        }
        if self.hops == MAX_REDIRECTS {
            return Step::Done(Err("too many redirects".into()));
        }
        self.hops += 1;
        Step::Fetch(AuthRequest::get(self.url.as_str()))
    }

    /// Follows the redirects from `url` with `perform` (which turns a transport failure into
    /// [`AuthResponse::failed`])
    ///
    /// # Errors
    /// The authorization server did not answer, answered without a redirect, or redirected
    /// too often.
    pub async fn follow<F, Fut>(
        redirect_uri: &str,
        url: String,
        mut perform: F,
    ) -> Result<String, String>
    where
        F: FnMut(AuthRequest) -> Fut,
        Fut: Future<Output = AuthResponse>,
    {
        let mut agent = Self::new(redirect_uri, url);
        let mut response = None;
        loop {
            match agent.step(response.as_ref()) {
                Step::Fetch(request) => response = Some(perform(request).await),
                Step::Done(result) => return result,
            }
        }
    }

    /// [`follow`](Self::follow) with a blocking `perform`
    ///
    /// # Errors
    /// As [`follow`](Self::follow).
    pub fn follow_blocking(
        redirect_uri: &str,
        url: String,
        mut perform: impl FnMut(AuthRequest) -> AuthResponse,
    ) -> Result<String, String> {
        let mut agent = Self::new(redirect_uri, url);
        let mut response = None;
        loop {
            match agent.step(response.as_ref()) {
                Step::Fetch(request) => response = Some(perform(request)),
                Step::Done(result) => return result,
            }
        }
    }
}

/// A protected HTTP server's authorization: the resource-server rules and the binding's
/// token verifier `V`
///
/// GET on the metadata path answers the Protected Resource Metadata; every other request
/// needs a bearer token the verifier accepts and that grants the required scopes, or is
/// answered 401 (missing or invalid token) or 403 (`insufficient_scope`) with the
/// `WWW-Authenticate` challenge that points clients at the metadata.
#[derive(Clone)]
pub struct Protection<V> {
    rules: Arc<ResourceServer>,
    verifier: V,
}

impl<V> std::fmt::Debug for Protection<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Protection")
            .field("rules", &self.rules)
            .finish_non_exhaustive()
    }
}

/// What a protected server does with a request before the MCP server sees it
#[derive(Debug)]
pub enum Check<'a, V> {
    /// Answer this instead (the metadata document, or 401)
    Answer(HttpResponse),
    /// Verify this bearer token with the verifier, then ask [`Protection::verdict`]
    Verify(&'a V, &'a str),
}

impl<V> Protection<V> {
    /// Protects with `rules` (resource, issuer, required scopes) and `verifier`
    pub fn new(rules: ResourceServer, verifier: V) -> Self {
        Self {
            rules: Arc::new(rules),
            verifier,
        }
    }

    /// The resource-server rules (the HTTP server words its per-entry `403` with them:
    /// `HttpServer::set_resource_server`)
    pub fn rules(&self) -> &Arc<ResourceServer> {
        &self.rules
    }

    /// The first look at a request for `path`
    pub fn check<'a>(
        &'a self,
        method: &str,
        path: &str,
        headers: &'a (impl Headers + ?Sized),
    ) -> Check<'a, V> {
        match self.rules.gate(method, path, headers) {
            Gate::Answer(answer) => Check::Answer(answer),
            Gate::Verify(token) => Check::Verify(&self.verifier, token),
        }
    }

    /// The answer to a request before the MCP server sees it, with an async verifier:
    /// `Err` answers it instead; `Ok` lets it through with the principal of its token, for
    /// the core's [`Source`](mcp_sansio::http::Source) (its sessions are bound to it)
    ///
    /// # Errors
    /// The response to send instead: the metadata document, 401 or 403.
    pub async fn admit<F, Fut>(
        &self,
        method: &str,
        path: &str,
        headers: &(impl Headers + ?Sized),
    ) -> Result<Principal, HttpResponse>
    where
        V: Deref<Target = F>,
        F: Fn(String) -> Fut + ?Sized,
        Fut: Future<Output = Result<VerifiedToken, String>>,
    {
        match self.check(method, path, headers) {
            Check::Answer(answer) => Err(crate::trace::unauthorized(answer, None)),
            Check::Verify(verifier, token) => self.admitted(&verifier(token.to_owned()).await),
        }
    }

    /// [`admit`](Self::admit) with a blocking verifier
    pub fn admit_blocking<F>(
        &self,
        method: &str,
        path: &str,
        headers: &(impl Headers + ?Sized),
    ) -> Result<Principal, HttpResponse>
    where
        V: Deref<Target = F>,
        F: Fn(&str) -> Result<VerifiedToken, String> + ?Sized,
    {
        match self.check(method, path, headers) {
            Check::Answer(answer) => Err(crate::trace::unauthorized(answer, None)),
            Check::Verify(verifier, token) => self.admitted(&verifier(token)),
        }
    }

    /// [`verdict`](Self::verdict) as [`admit`](Self::admit) answers it
    fn admitted(
        &self,
        verified: &Result<VerifiedToken, String>,
    ) -> Result<Principal, HttpResponse> {
        let why = verified.as_ref().err().map(String::as_str);
        if let Some(denial) = self.verdict(verified) {
            return Err(crate::trace::unauthorized(denial, why));
        }
        match verified {
            Ok(token) => Ok(token.principal()),
            Err(why) => Err(crate::trace::unauthorized(
                self.rules.invalid_token(why).into(),
                Some(why),
            )),
        }
    }

    /// The answer after the verifier judged the token: `None` lets the request through
    pub fn verdict(&self, verified: &Result<VerifiedToken, String>) -> Option<HttpResponse> {
        let granted = verified
            .as_ref()
            .map(|v| v.scopes.as_slice())
            .map_err(String::as_str);
        self.rules.verdict(granted)
    }
}

/// Signs `private_key_jwt` client assertions (RFC 7523) with a PEM private key
pub struct JwtSigner {
    key: EncodingKey,
    algorithm: Algorithm,
    name: String,
}

impl std::fmt::Debug for JwtSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtSigner")
            .field("algorithm", &self.name)
            .finish_non_exhaustive()
    }
}

impl JwtSigner {
    /// A signer for `algorithm` (`ES256`, `ES384`, `RS256`, `PS256`, `EdDSA`, ...) with a
    /// PKCS#8 (or SEC1 / PKCS#1) PEM private key
    ///
    /// # Errors
    /// An unknown algorithm, or a key that does not parse for it.
    pub fn from_pem(algorithm: &str, pem: &[u8]) -> Result<Self, String> {
        let alg: Algorithm = algorithm
            .parse()
            .map_err(|_| format!("unknown algorithm {algorithm:?}"))?;
        let key = match alg {
            Algorithm::ES256 | Algorithm::ES384 => EncodingKey::from_ec_pem(pem),
            Algorithm::EdDSA => EncodingKey::from_ed_pem(pem),
            Algorithm::RS256
            | Algorithm::RS384
            | Algorithm::RS512
            | Algorithm::PS256
            | Algorithm::PS384
            | Algorithm::PS512 => EncodingKey::from_rsa_pem(pem),
            _ => return Err(format!("{algorithm} is not an asymmetric algorithm")),
        }
        .map_err(|e| format!("the private key does not parse: {e}"))?;
        Ok(Self {
            key,
            algorithm: alg,
            name: algorithm.to_owned(),
        })
    }
}

impl ClientAssertion for JwtSigner {
    fn assertion(&self, client_id: &str, audience: &str) -> Result<String, String> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_err(|e| e.to_string())?
            .as_secs();
        let mut jti = [0u8; 16];
        getrandom::fill(&mut jti).map_err(|e| e.to_string())?;
        let jti: String = jti.iter().map(|b| format!("{b:02x}")).collect();
        let claims = serde_json::json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + 300,
            "jti": jti,
        });
        jsonwebtoken::encode(&Header::new(self.algorithm), &claims, &self.key)
            .map_err(|e| e.to_string())
    }

    fn algorithm(&self) -> &str {
        &self.name
    }
}

/// A DPoP key (RFC 9449): an ES256 (P-256) key pair made from OS randomness, kept in
/// memory for its lifetime, that signs DPoP proofs with its public key as the `jwk` header
///
/// [`OAuthOptions::client`] makes one per client unless DPoP is turned off; tokens bound
/// to it are useless with another key, so a persistent token store needs the same key
/// ([`secret_bytes`](Self::secret_bytes) and [`from_secret_bytes`](Self::from_secret_bytes)).
pub struct DpopKey {
    key: p256::ecdsa::SigningKey,
    /// The public JWK (`kty`, `crv`, `x`, `y`)
    jwk: serde_json::Value,
}

impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DpopKey")
            .field("jwk", &self.jwk)
            .finish_non_exhaustive()
    }
}

impl DpopKey {
    /// A fresh key pair from OS randomness
    ///
    /// # Errors
    /// No OS randomness.
    pub fn generate() -> Result<Self, String> {
        loop {
            let mut secret = [0u8; 32];
            getrandom::fill(&mut secret).map_err(|e| format!("no OS randomness: {e}"))?;
            // Out of range (zero or beyond the group order) with probability ~2^-128.
            if let Ok(key) = p256::ecdsa::SigningKey::from_slice(&secret) {
                return Ok(Self::from_signing_key(key));
            }
        }
    }

    fn from_signing_key(key: p256::ecdsa::SigningKey) -> Self {
        let point = key.verifying_key().to_sec1_point(false);
        let coordinate = |c: Option<&[u8]>| URL_SAFE_NO_PAD.encode(c.unwrap_or_default());
        let jwk = serde_json::json!({
            "kty": "EC",
            "crv": "P-256",
            "x": coordinate(point.x().map(|x| x.as_slice())),
            "y": coordinate(point.y().map(|y| y.as_slice())),
        });
        Self { key, jwk }
    }

    /// The key pair from its 32-byte private scalar, as [`secret_bytes`](Self::secret_bytes)
    /// gave it: a client that keeps DPoP-bound tokens across restarts (a persistent token
    /// store) must sign with the same key, so it stores these bytes beside the tokens and
    /// sets the key as `OAuthConfig::dpop_signer`
    ///
    /// # Errors
    /// Not 32 bytes, or not a valid P-256 private scalar (zero, or beyond the group order).
    pub fn from_secret_bytes(secret: &[u8]) -> Result<Self, String> {
        if secret.len() != 32 {
            return Err(format!(
                "a P-256 private key is 32 bytes, not {}",
                secret.len()
            ));
        }
        p256::ecdsa::SigningKey::from_slice(secret)
            .map(Self::from_signing_key)
            .map_err(|_| "not a valid P-256 private key".to_owned())
    }

    /// The 32-byte private scalar, to store (as secret as the tokens it binds) and give back
    /// to [`from_secret_bytes`](Self::from_secret_bytes)
    pub fn secret_bytes(&self) -> [u8; 32] {
        let mut secret = [0u8; 32];
        secret.copy_from_slice(self.key.to_bytes().as_slice());
        secret
    }

    /// The public key as a JWK (`kty` `EC`, `crv` `P-256`, `x`, `y`)
    pub fn public_jwk(&self) -> &serde_json::Value {
        &self.jwk
    }
}

impl DpopSigner for DpopKey {
    fn proof(&self, claims: DpopClaims<'_>) -> Result<String, String> {
        use p256::ecdsa::signature::Signer;

        let iat = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_err(|e| e.to_string())?
            .as_secs();
        let mut jti = [0u8; 16];
        getrandom::fill(&mut jti).map_err(|e| e.to_string())?;
        let header = serde_json::json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk});
        let mut body = serde_json::json!({
            "jti": URL_SAFE_NO_PAD.encode(jti),
            "htm": claims.htm,
            "htu": claims.htu,
            "iat": iat,
        });
        if let Some(ath) = claims.ath {
            body["ath"] = ath.into();
        }
        if let Some(nonce) = claims.nonce {
            body["nonce"] = nonce.into();
        }
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(body.to_string())
        );
        // JWS ES256: the fixed-size r || s (RFC 7518 §3.4), not DER.
        let signature: p256::ecdsa::Signature = self.key.sign(input.as_bytes());
        Ok(format!(
            "{input}.{}",
            URL_SAFE_NO_PAD.encode(signature.to_bytes())
        ))
    }

    fn algorithm(&self) -> &str {
        "ES256"
    }
}

/// What a binding's token verifier learned from a valid token
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct VerifiedToken {
    /// The scopes the token grants
    pub scopes: Vec<String>,
    /// The user it stands for (`sub`), if known
    pub subject: Option<String>,
    /// The OAuth client it was issued to (`client_id`, or `azp`), if known
    pub client_id: Option<String>,
    /// The token's claims, as decoded (a JWT's payload), if the verifier keeps them; the
    /// handlers read them from the principal ([`Principal::claims`])
    pub claims: Option<serde_json::Value>,
}

impl VerifiedToken {
    /// A valid token granting `scopes`
    pub fn new(scopes: Vec<String>) -> Self {
        Self {
            scopes,
            subject: None,
            client_id: None,
            claims: None,
        }
    }

    /// Who it belongs to, as the handlers see it: its subject and client id (its identity:
    /// a 2025 session it creates answers only requests with a token of the same principal,
    /// others get 404; a task it starts answers only them), its scopes and its claims
    pub fn principal(&self) -> Principal {
        let mut principal = Principal::new(self.subject.clone(), self.client_id.clone())
            .with_scopes(self.scopes.clone());
        if let Some(claims) = &self.claims {
            principal = principal.with_claims(claims.clone());
        }
        principal
    }
}

/// Verifies a JWT access token: the signature with `key`, `exp`, and the audience (the
/// resource identifier) and issuer per `validation`; scopes from the `scope` claim (space
/// separated) or `scp` (an array)
///
/// # Errors
/// Why the token is invalid, in words fit for the 401's `error_description`.
pub fn verify_jwt(
    token: &str,
    key: &DecodingKey,
    validation: &Validation,
) -> Result<VerifiedToken, String> {
    let data = jsonwebtoken::decode::<serde_json::Value>(token, key, validation).map_err(|e| {
        match e.kind() {
            jsonwebtoken::errors::ErrorKind::ExpiredSignature => "the token has expired".to_owned(),
            jsonwebtoken::errors::ErrorKind::ImmatureSignature => {
                "the token is not valid yet".to_owned()
            }
            jsonwebtoken::errors::ErrorKind::InvalidAudience => {
                "the token is not for this resource".to_owned()
            }
            _ => "the token is invalid".to_owned(),
        }
    })?;
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
    verified.client_id = claims["client_id"]
        .as_str()
        .or_else(|| claims["azp"].as_str())
        .map(str::to_owned);
    verified.claims = Some(claims);
    Ok(verified)
}

/// `location` resolved against `base` (absolute URLs and absolute paths)
pub fn absolute(base: &str, location: &str) -> String {
    if location.contains("://") {
        return location.to_owned();
    }
    let origin_end = base
        .find("://")
        .and_then(|i| base[i + 3..].find('/').map(|j| i + 3 + j))
        .unwrap_or(base.len());
    format!("{}{}", &base[..origin_end], location)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_locations() {
        assert_eq!(
            absolute("http://a:1/x/y?q", "/cb?code=1"),
            "http://a:1/cb?code=1"
        );
        assert_eq!(absolute("http://a:1", "/cb"), "http://a:1/cb");
        assert_eq!(absolute("http://a:1/x", "http://b/cb"), "http://b/cb");
    }

    fn redirect(to: &str) -> AuthResponse {
        AuthResponse::new(302, vec![("location".into(), to.into())], Vec::new())
    }

    #[test]
    fn headless_follows_redirects_to_the_redirect_uri() {
        let mut agent = Headless::new("http://app/cb", "http://as/authorize?x".into());
        assert_eq!(
            agent.step(None),
            Step::Fetch(AuthRequest::get("http://as/authorize?x"))
        );
        assert_eq!(
            agent.step(Some(&redirect("/login"))),
            Step::Fetch(AuthRequest::get("http://as/login"))
        );
        assert_eq!(
            agent.step(Some(&redirect("http://app/cb?code=1&state=s"))),
            Step::Done(Ok("http://app/cb?code=1&state=s".into()))
        );
    }

    #[test]
    fn headless_stops_on_errors_and_loops() {
        let mut agent = Headless::new("http://app/cb", "http://as/a".into());
        agent.step(None);
        let ok = AuthResponse::new(200, Vec::new(), Vec::new());
        assert_eq!(
            agent.step(Some(&ok)),
            Step::Done(Err("the authorization URL answered HTTP 200".into()))
        );
        let mut agent = Headless::new("http://app/cb", "http://as/a".into());
        agent.step(None);
        assert_eq!(
            agent.step(Some(&AuthResponse::failed())),
            Step::Done(Err("the authorization server did not answer".into()))
        );
        let mut agent = Headless::new("http://app/cb", "http://as/a".into());
        let mut step = agent.step(None);
        let mut fetches = 0;
        while let Step::Fetch(_) = step {
            fetches += 1;
            step = agent.step(Some(&redirect("/a")));
        }
        assert_eq!(fetches, MAX_REDIRECTS);
        assert_eq!(step, Step::Done(Err("too many redirects".into())));
        // Already at the redirect URI: nothing to fetch
        let mut agent = Headless::new("http://app/cb", "http://app/cb?code=2".into());
        assert_eq!(
            agent.step(None),
            Step::Done(Ok("http://app/cb?code=2".into()))
        );
    }
}

#[cfg(test)]
mod dpop_tests {
    use super::*;

    fn part(jwt: &str, i: usize) -> serde_json::Value {
        let raw = URL_SAFE_NO_PAD
            .decode(jwt.split('.').nth(i).expect("three parts"))
            .expect("base64url");
        serde_json::from_slice(&raw).expect("JSON")
    }

    fn claims<'a>(htu: &'a str, ath: Option<&'a str>, nonce: Option<&'a str>) -> DpopClaims<'a> {
        DpopClaims::new("POST", htu).ath(ath).nonce(nonce)
    }

    #[test]
    fn a_proof_verifies_with_its_embedded_public_key_and_has_the_claims() {
        let key = DpopKey::generate().unwrap();
        let ath = "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo";
        let proof = key
            .proof(claims("http://as.test/token", Some(ath), Some("n-1")))
            .unwrap();
        let header = part(&proof, 0);
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(header["alg"], "ES256");
        let jwk = &header["jwk"];
        assert_eq!(jwk, key.public_jwk());
        assert_eq!((&jwk["kty"], &jwk["crv"]), (&"EC".into(), &"P-256".into()));
        assert!(jwk.get("d").is_none(), "no private key in the header");

        // An independent check: jsonwebtoken verifies the signature with the JWK's x, y.
        let decoding =
            DecodingKey::from_ec_components(jwk["x"].as_str().unwrap(), jwk["y"].as_str().unwrap())
                .unwrap();
        let mut validation = Validation::new(Algorithm::ES256);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        validation.validate_aud = false;
        let body = jsonwebtoken::decode::<serde_json::Value>(&proof, &decoding, &validation)
            .expect("the signature verifies")
            .claims;
        assert_eq!(body["htm"], "POST");
        assert_eq!(body["htu"], "http://as.test/token");
        assert_eq!(body["ath"], ath);
        assert_eq!(body["nonce"], "n-1");
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        assert!(body["iat"].as_u64().unwrap().abs_diff(now) < 60);
        assert!(body["jti"].as_str().unwrap().len() >= 16);

        // A tampered proof does not verify; another key's proof does not verify either.
        let mut tampered = proof.clone();
        tampered.insert(proof.find('.').unwrap() + 2, 'A');
        assert!(
            jsonwebtoken::decode::<serde_json::Value>(&tampered, &decoding, &validation).is_err()
        );
        let other = DpopKey::generate().unwrap();
        assert_ne!(other.public_jwk(), key.public_jwk());
        let foreign = other
            .proof(claims("http://as.test/token", None, None))
            .unwrap();
        assert!(
            jsonwebtoken::decode::<serde_json::Value>(&foreign, &decoding, &validation).is_err()
        );
    }

    #[test]
    fn every_proof_is_fresh_and_omits_what_is_not_given() {
        let key = DpopKey::generate().unwrap();
        let a = part(
            &key.proof(claims("http://rs.test/mcp", None, None)).unwrap(),
            1,
        );
        let b = part(
            &key.proof(claims("http://rs.test/mcp", None, None)).unwrap(),
            1,
        );
        assert_ne!(a["jti"], b["jti"]);
        assert!(a.get("ath").is_none() && a.get("nonce").is_none(), "{a}");
    }

    #[test]
    fn a_key_restored_from_its_secret_bytes_signs_as_the_same_key() {
        let key = DpopKey::generate().unwrap();
        let restored = DpopKey::from_secret_bytes(&key.secret_bytes()).unwrap();
        assert_eq!(restored.public_jwk(), key.public_jwk());
        assert_eq!(restored.secret_bytes(), key.secret_bytes());
        let other = DpopKey::generate().unwrap();
        assert_ne!(other.public_jwk(), key.public_jwk());
        assert!(DpopKey::from_secret_bytes(&[0u8; 32]).is_err());
        assert!(DpopKey::from_secret_bytes(&[1u8; 31]).is_err());
        assert!(DpopKey::from_secret_bytes(&[0xffu8; 32]).is_err());
    }

    #[test]
    fn oauth_options_give_each_client_a_dpop_key_unless_turned_off() {
        let options = OAuthOptions::new(OAuthConfig::new("http://localhost/cb"), ());
        assert!(options.dpop);
        let off = options.clone().without_dpop();
        assert!(!off.dpop && off.config.dpop_signer.is_none());
        assert!(options.client("http://rs.test/mcp").is_ok());
    }

    #[test]
    fn the_jwt_verifier_refuses_a_token_before_its_nbf() {
        use jsonwebtoken::{Algorithm, EncodingKey};
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let mint = |nbf: u64| {
            let claims = serde_json::json!({"sub": "a", "exp": now + 7200, "nbf": nbf});
            jsonwebtoken::encode(
                &Header::new(Algorithm::HS256),
                &claims,
                &EncodingKey::from_secret(b"k").unwrap(),
            )
            .unwrap()
        };
        let mut validation = Validation::new(Algorithm::HS256);
        validation.required_spec_claims.clear();
        // The caller forgot nbf; the verifier checks it anyway.
        validation.validate_nbf = false;
        let verify = blocking::jwt_verifier(DecodingKey::from_secret(b"k").unwrap(), validation);
        assert_eq!(
            verify(&mint(now + 3600)).unwrap_err(),
            "the token is not valid yet"
        );
        assert_eq!(
            verify(&mint(now - 60)).unwrap().subject.as_deref(),
            Some("a")
        );
    }
}
