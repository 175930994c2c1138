//! Tokens, the secret wrapper that keeps them out of logs, and where they are kept

use std::collections::HashMap;
use std::fmt;
use std::time::Instant;

/// A secret string (token, client secret): `Debug` and `Display` print `***`, so it never
/// reaches a log by accident; [`Secret::expose`] reads it
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The secret itself (for the one place that must send it)
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// The tokens one authorization produced
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Tokens {
    /// The access token, sent as `Authorization: Bearer ...` (or `DPoP ...`)
    pub access_token: Secret,
    /// The token is DPoP-bound (`token_type` `DPoP`, RFC 9449): it is presented with the
    /// `DPoP` scheme and a proof of the key it is bound to
    pub dpop: bool,
    /// The refresh token, if the server issued one
    pub refresh_token: Option<Secret>,
    /// When the access token expires (from `expires_in`), if the server said
    pub expires_at: Option<Instant>,
    /// The granted scope (the response's `scope`, else the requested one)
    pub scope: Option<String>,
    /// The issuer of the authorization server that issued them
    pub issuer: String,
}

impl Tokens {
    /// Tokens issued by `issuer`
    pub fn new(access_token: Secret, issuer: impl Into<String>) -> Self {
        Self {
            access_token,
            dpop: false,
            refresh_token: None,
            expires_at: None,
            scope: None,
            issuer: issuer.into(),
        }
    }
}

/// Where an [`OAuthClient`](super::OAuthClient) keeps tokens, keyed by the resource
/// identifier; implement it to persist tokens (a keychain, a file), or use
/// [`InMemoryTokenStore`]
pub trait TokenStore: Send + Sync {
    /// The tokens for a resource, if any
    fn load(&self, resource: &str) -> Option<Tokens>;
    /// Keeps the tokens for a resource, replacing older ones
    fn save(&mut self, resource: &str, tokens: Tokens);
    /// Forgets the tokens of a resource
    fn remove(&mut self, resource: &str);
}

/// The default [`TokenStore`]: a map in memory, gone with the process
#[derive(Debug, Default)]
pub struct InMemoryTokenStore {
    tokens: HashMap<String, Tokens>,
}

impl TokenStore for InMemoryTokenStore {
    fn load(&self, resource: &str) -> Option<Tokens> {
        self.tokens.get(resource).cloned()
    }

    fn save(&mut self, resource: &str, tokens: Tokens) {
        self.tokens.insert(resource.to_owned(), tokens);
    }

    fn remove(&mut self, resource: &str) {
        self.tokens.remove(resource);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_do_not_print() {
        let t = Tokens::new(Secret::new("tok-123"), "http://as");
        let shown = format!("{t:?} {}", t.access_token);
        assert!(!shown.contains("tok-123"), "{shown}");
        assert_eq!(t.access_token.expose(), "tok-123");
    }
}
