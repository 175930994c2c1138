//! OAuth glue: the `private_key_jwt` signer, JWT access-token verification, and redirect
//! resolution for headless user agents

use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use mcp_core::auth::ClientAssertion;

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

/// What a binding's token verifier learned from a valid token
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct VerifiedToken {
    /// The scopes the token grants
    pub scopes: Vec<String>,
    /// Who it was issued to (`sub` or the client id), if known
    pub subject: Option<String>,
}

impl VerifiedToken {
    /// A valid token granting `scopes`
    pub fn new(scopes: Vec<String>) -> Self {
        Self {
            scopes,
            subject: None,
        }
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
}
