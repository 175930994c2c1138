//! The metadata documents discovery reads: Protected Resource Metadata (RFC 9728) and
//! Authorization Server Metadata (RFC 8414 / OpenID Connect Discovery)

use serde::{Deserialize, Serialize};

/// Protected Resource Metadata (RFC 9728 §2): the fields authorization uses
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub(crate) struct ProtectedResourceMetadata {
    /// The resource identifier; sent as the `resource` parameter byte for byte
    pub resource: String,
    /// Issuer identifiers of the authorization servers that protect this resource
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// Scopes the resource understands
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// How bearer tokens may be presented (`header`)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_methods_supported: Option<Vec<String>>,
}

impl ProtectedResourceMetadata {
    /// A document for `resource` protected by the authorization server `issuer`
    pub(crate) fn new(resource: impl Into<String>, issuer: impl Into<String>) -> Self {
        Self {
            resource: resource.into(),
            authorization_servers: vec![issuer.into()],
            scopes_supported: None,
            bearer_methods_supported: Some(vec!["header".into()]),
        }
    }
}

/// Authorization Server Metadata (RFC 8414 §2): the fields this client uses
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub(crate) struct AuthServerMetadata {
    /// The issuer identifier; must equal the one the metadata URL was built from
    pub issuer: String,
    /// Where the user agent is sent to authorize
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_endpoint: Option<String>,
    /// Where codes, refresh tokens and grants are exchanged for tokens
    pub token_endpoint: String,
    /// Dynamic Client Registration (RFC 7591)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration_endpoint: Option<String>,
    /// Scopes the server issues
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// Client authentication methods at the token endpoint (absent: `client_secret_basic`)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// PKCE methods (`S256` is required)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// Grant types
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_types_supported: Option<Vec<String>>,
    /// RFC 9207: the authorization response always carries `iss`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_response_iss_parameter_supported: Option<bool>,
    /// Client ID Metadata Documents: an https URL may serve as `client_id`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id_metadata_document_supported: Option<bool>,
    /// RFC 9449 §5.1: the JWS algorithms the server accepts in DPoP proofs
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
}

impl AuthServerMetadata {
    /// The 2025-03-26 fallback for a server without any metadata: `/authorize`, `/token`
    /// and `/register` at the root of `origin`
    pub(crate) fn fallback(origin: &str) -> Self {
        Self {
            issuer: origin.to_owned(),
            authorization_endpoint: Some(format!("{origin}/authorize")),
            token_endpoint: format!("{origin}/token"),
            registration_endpoint: Some(format!("{origin}/register")),
            scopes_supported: None,
            token_endpoint_auth_methods_supported: None,
            code_challenge_methods_supported: Some(vec!["S256".into()]),
            grant_types_supported: None,
            authorization_response_iss_parameter_supported: None,
            client_id_metadata_document_supported: None,
            dpop_signing_alg_values_supported: None,
        }
    }

    pub(crate) fn supports_auth_method(&self, method: &str) -> bool {
        match &self.token_endpoint_auth_methods_supported {
            Some(list) => list.iter().any(|m| m == method),
            None => method == "client_secret_basic",
        }
    }

    pub(crate) fn supports_scope(&self, scope: &str) -> bool {
        self.scopes_supported
            .as_ref()
            .is_some_and(|s| s.iter().any(|x| x == scope))
    }
}
