//! Why authorization failed

/// Why an authorization flow failed (its messages never include tokens or secrets)
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// The Protected Resource Metadata names a different resource than the server
    #[error("the protected resource metadata names resource {resource:?}, not this server")]
    ResourceMismatch {
        /// The `resource` the metadata published
        resource: String,
    },
    /// The Protected Resource Metadata lists no authorization server
    #[error("the protected resource metadata lists no authorization server")]
    NoAuthorizationServer,
    /// No authorization server metadata was found at any well-known location
    #[error("no authorization server metadata for issuer {issuer:?}")]
    MetadataNotFound {
        /// The issuer identifier
        issuer: String,
    },
    /// The metadata's `issuer` differs from the issuer its URL was built from (RFC 8414 §3.3)
    #[error("authorization server metadata claims issuer {found:?}, expected {expected:?}")]
    MetadataIssuerMismatch {
        /// The issuer the URL was built from
        expected: String,
        /// The metadata's `issuer`
        found: String,
    },
    /// The authorization server does not offer PKCE with S256
    #[error("the authorization server does not support PKCE S256")]
    PkceUnsupported,
    /// No way to identify this client to the server: not pre-registered for it, no Client
    /// ID Metadata Document support, and no registration endpoint
    #[error("no client registration is possible with {issuer:?}")]
    NoClientRegistration {
        /// The issuer
        issuer: String,
    },
    /// The grant needs an endpoint or a credential the configuration does not provide
    #[error("not configured: {0}")]
    NotConfigured(&'static str),
    /// An endpoint answered with an error
    #[error("{endpoint} endpoint answered HTTP {status}{}", error.as_ref().map(|e| format!(" ({e})")).unwrap_or_default())]
    Endpoint {
        /// `registration`, `token`, `token exchange`, ...
        endpoint: &'static str,
        /// The HTTP status (0: no response)
        status: u16,
        /// The OAuth `error` code, if the body had one
        error: Option<String>,
    },
    /// A response body was not what the endpoint must return
    #[error("{endpoint} endpoint returned an invalid body: {reason}")]
    InvalidResponse {
        /// Which endpoint
        endpoint: &'static str,
        /// What was wrong
        reason: String,
    },
    /// The authorization response carried an error (the user or server refused)
    #[error("authorization was refused: {error}")]
    AuthorizationDenied {
        /// The `error` parameter
        error: String,
    },
    /// The authorization response is not the answer to our request: wrong or missing
    /// `state`, no `code`, or an `iss` that does not match (RFC 9207)
    #[error("rejected the authorization response: {0}")]
    InvalidAuthorizationResponse(&'static str),
    /// The user agent could not complete the authorization step
    #[error("the user agent failed: {0}")]
    UserAgent(String),
    /// The signer of client assertions failed
    #[error("could not sign the client assertion: {0}")]
    Assertion(String),
    /// The DPoP signer failed
    #[error("could not sign the DPoP proof: {0}")]
    DpopProof(String),
    /// A server kept asking for a DPoP nonce (RFC 9449 §8, §9): it refused the proof
    /// carrying the nonce it had just supplied, or supplied none
    #[error("DPoP nonce: {0}")]
    DpopNonce(&'static str),
    /// The server kept refusing fresh tokens: the retry limit is reached
    #[error("gave up after {attempts} authorization attempts")]
    RetryLimit {
        /// Authorizations tried since the last successful request
        attempts: u32,
    },
    /// An auth challenge without enough information to start (e.g. an unparsable URL)
    #[error("cannot authorize: {0}")]
    Unusable(&'static str),
}
