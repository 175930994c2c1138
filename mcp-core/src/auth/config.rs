//! How the OAuth client identifies itself and which grant it uses

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::tokens::Secret;

/// How tokens are obtained
#[derive(Clone)]
#[non_exhaustive]
pub enum Grant {
    /// Authorization code with PKCE (a user authorizes in a browser, or the injected user
    /// agent follows the redirect); refresh tokens are used when issued
    AuthorizationCode,
    /// Client credentials (machine to machine): needs a [`PreRegistered`] client with a
    /// secret or a [`ClientAssertion`] signer
    ClientCredentials,
    /// An RFC 7523 JWT bearer grant with a ready assertion (workload identity)
    JwtBearer {
        /// The signed JWT the workload was given
        assertion: Secret,
    },
    /// Enterprise-managed authorization: exchange an identity provider's ID token for an
    /// identity assertion grant (RFC 8693 token exchange, `id-jag`), then present it at the
    /// authorization server as a JWT bearer grant
    IdentityAssertion(IdentityAssertion),
}

impl fmt::Debug for Grant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::AuthorizationCode => "AuthorizationCode",
            Self::ClientCredentials => "ClientCredentials",
            Self::JwtBearer { .. } => "JwtBearer",
            Self::IdentityAssertion(_) => "IdentityAssertion",
        })
    }
}

/// The identity provider side of [`Grant::IdentityAssertion`]
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct IdentityAssertion {
    /// The identity provider's token endpoint
    pub idp_token_endpoint: String,
    /// This client's id at the identity provider
    pub idp_client_id: String,
    /// This client's secret at the identity provider, if it has one (sent in the body)
    pub idp_client_secret: Option<Secret>,
    /// The user's ID token from the identity provider
    pub id_token: Secret,
}

impl IdentityAssertion {
    /// Exchange `id_token` at `idp_token_endpoint` as `idp_client_id`
    pub fn new(
        idp_token_endpoint: impl Into<String>,
        idp_client_id: impl Into<String>,
        id_token: Secret,
    ) -> Self {
        Self {
            idp_token_endpoint: idp_token_endpoint.into(),
            idp_client_id: idp_client_id.into(),
            idp_client_secret: None,
            id_token,
        }
    }
}

/// A client registered ahead of time with an authorization server
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PreRegistered {
    /// The issuer it is registered with; `None`: any (used where nothing else applies)
    pub issuer: Option<String>,
    /// The client id
    pub client_id: String,
    /// The client secret, for confidential clients
    pub client_secret: Option<Secret>,
}

impl PreRegistered {
    /// A client registered as `client_id` (with any issuer until [`Self::issuer`] says)
    pub fn new(client_id: impl Into<String>, client_secret: Option<Secret>) -> Self {
        Self {
            issuer: None,
            client_id: client_id.into(),
            client_secret,
        }
    }

    /// Restricts it to one issuer
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }
}

/// Signs `private_key_jwt` client assertions (RFC 7523 §2.2); the binding or the
/// application supplies it, so mcp-sansio holds no private-key crypto and reads no clock
pub trait ClientAssertion: Send + Sync {
    /// A signed JWT with `iss` = `sub` = `client_id`, `aud` = `audience` (the
    /// authorization server's issuer), a fresh `jti`, and `iat`/`exp` from the signer's clock
    fn assertion(&self, client_id: &str, audience: &str) -> Result<String, String>;
    /// The JWS algorithm it signs with (`ES256`, `RS256`, ...)
    fn algorithm(&self) -> &str;
}

/// The claims of one DPoP proof (RFC 9449 §4.2) a [`DpopSigner`] signs, besides the `jti`
/// and `iat` it adds itself
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct DpopClaims<'a> {
    /// `htm`: the HTTP method of the request (`POST`, `GET`, ...)
    pub htm: &'a str,
    /// `htu`: the request URL without query and fragment
    pub htu: &'a str,
    /// `ath`: base64url(SHA-256(access token)), on requests that present a token
    pub ath: Option<&'a str>,
    /// `nonce`: the latest `DPoP-Nonce` the server supplied, if any
    pub nonce: Option<&'a str>,
}

impl<'a> DpopClaims<'a> {
    /// Claims for a request with method `htm` to `htu`, without `ath` or `nonce`
    pub fn new(htm: &'a str, htu: &'a str) -> Self {
        Self {
            htm,
            htu,
            ath: None,
            nonce: None,
        }
    }

    /// With `ath` (or without)
    #[must_use]
    pub fn ath(mut self, ath: Option<&'a str>) -> Self {
        self.ath = ath;
        self
    }

    /// With `nonce` (or without)
    #[must_use]
    pub fn nonce(mut self, nonce: Option<&'a str>) -> Self {
        self.nonce = nonce;
        self
    }
}

/// Signs DPoP proofs (RFC 9449) with one key pair for the client's lifetime (tokens are
/// bound to it); the binding supplies it, so mcp-sansio holds no private-key crypto, reads
/// no clock and makes no randomness
pub trait DpopSigner: Send + Sync {
    /// A signed proof JWT: header `typ` = `dpop+jwt`, `alg`, and `jwk` = the public key;
    /// claims `htm`, `htu`, `ath` and `nonce` as given, a fresh unique `jti`, and `iat` from
    /// the signer's clock
    fn proof(&self, claims: DpopClaims<'_>) -> Result<String, String>;
    /// The JWS algorithm it signs with (`ES256`, ...)
    fn algorithm(&self) -> &str;
}

/// DCR's `application_type` (OpenID Connect Registration, required on 2026-07-28)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ApplicationType {
    /// A native or command-line application (redirects to localhost or a custom scheme)
    Native,
    /// A web application
    Web,
}

/// Configuration of an [`OAuthClient`](super::OAuthClient)
#[derive(Clone)]
#[non_exhaustive]
pub struct OAuthConfig {
    /// How tokens are obtained
    pub grant: Grant,
    /// The redirect URI of the authorization code grant
    pub redirect_uri: String,
    /// `client_name` for Dynamic Client Registration
    pub client_name: String,
    /// `application_type` for Dynamic Client Registration
    pub application_type: ApplicationType,
    /// An https URL serving this client's Client ID Metadata Document; used as the
    /// `client_id` where the server advertises `client_id_metadata_document_supported`
    pub client_metadata_url: Option<String>,
    /// Pre-registered clients (by issuer)
    pub pre_registered: Vec<PreRegistered>,
    /// Signs `private_key_jwt` assertions, where the server supports that method
    pub assertion_signer: Option<Arc<dyn ClientAssertion>>,
    /// Signs DPoP proofs: with one, tokens are DPoP-bound (RFC 9449) wherever the
    /// authorization server lists its algorithm in `dpop_signing_alg_values_supported` or
    /// the resource server challenges with the `DPoP` scheme; `None`: bearer tokens only
    pub dpop_signer: Option<Arc<dyn DpopSigner>>,
    /// Scopes to request when neither the challenge nor the metadata name any
    pub default_scopes: Vec<String>,
    /// Ask for `offline_access` (a refresh token) when the server lists it
    pub request_offline_access: bool,
    /// How many authorizations in a row may fail to produce an accepted token (401 or
    /// 403 again) before the request fails
    pub max_attempts: u32,
    /// Refresh this long before the access token expires
    pub refresh_margin: Duration,
}

impl OAuthConfig {
    /// Authorization code with PKCE, redirecting to `redirect_uri`
    pub fn new(redirect_uri: impl Into<String>) -> Self {
        Self {
            grant: Grant::AuthorizationCode,
            redirect_uri: redirect_uri.into(),
            client_name: "mcp-client".into(),
            application_type: ApplicationType::Native,
            client_metadata_url: None,
            pre_registered: Vec::new(),
            assertion_signer: None,
            dpop_signer: None,
            default_scopes: Vec::new(),
            request_offline_access: true,
            max_attempts: 3,
            refresh_margin: Duration::from_secs(60),
        }
    }
}

impl fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("grant", &self.grant)
            .field("redirect_uri", &self.redirect_uri)
            .field("client_name", &self.client_name)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("pre_registered", &self.pre_registered)
            .field("assertion_signer", &self.assertion_signer.is_some())
            .field("dpop_signer", &self.dpop_signer.is_some())
            .finish_non_exhaustive()
    }
}
