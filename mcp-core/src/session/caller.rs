//! Who sent a request: the verified principal of its access token, and what the transport
//! knows of it (HTTP headers, the 2025 session id)
//!
//! A binding hands the session a [`Caller`] with each message
//! ([`Session::handle_message_as`](super::Session::handle_message_as)), or once for a whole
//! byte-stream connection ([`Session::set_caller`](super::Session::set_caller)). The session
//! gives it to every request of that message ([`InboundRequest::caller`](super::InboundRequest::caller))
//! and binds what outlives the request to its principal: a task answers only its creator's
//! `tasks/*` requests, a sealed `requestState` only its creator's retry. Another principal
//! is refused exactly as an unknown id is.

use std::any::Any;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::panic::RefUnwindSafe;
use std::sync::Arc;

use hmac::{Hmac, KeyInit, Mac};
use serde_json::Value;
use sha2::Sha256;

use super::HeaderFields;

/// Who an access token was issued to, as the binding's token verifier found: the user
/// (`sub`), the OAuth client (`client_id`, or `azp`), the scopes it grants, and whatever
/// else the verifier chose to keep
///
/// **Identity** is the subject and the client id: two principals are the same (`==`, and the
/// same hash) when both parts are equal, whatever their scopes and claims (a refreshed token
/// with other scopes is the same caller). A verifier that learns neither makes every token
/// the same principal: give it a verifier that reports them.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct Principal {
    /// The subject the token stands for
    pub subject: Option<String>,
    /// The client the token was issued to
    pub client_id: Option<String>,
    /// The scopes the token grants
    pub scopes: Vec<String>,
    /// The token's claims, as the verifier decoded them (a JWT's payload), if it kept them
    pub claims: Option<Arc<Value>>,
    /// A value of the application's own type that its verifier attached
    /// ([`with_extra`](Self::with_extra)); read it with [`extra`](Self::extra)
    pub extra: Option<Arc<dyn Any + Send + Sync + RefUnwindSafe>>,
}

impl Principal {
    /// The principal of a token for `subject`, issued to `client_id`
    pub fn new(subject: Option<String>, client_id: Option<String>) -> Self {
        Self {
            subject,
            client_id,
            ..Self::default()
        }
    }

    /// The same principal, granted `scopes`
    #[must_use]
    pub fn with_scopes(mut self, scopes: Vec<String>) -> Self {
        self.scopes = scopes;
        self
    }

    /// The same principal with the token's decoded claims
    #[must_use]
    pub fn with_claims(mut self, claims: Value) -> Self {
        self.claims = Some(Arc::new(claims));
        self
    }

    /// The same principal carrying a value of the application's type
    #[must_use]
    pub fn with_extra<T: Any + Send + Sync + RefUnwindSafe>(mut self, extra: T) -> Self {
        self.extra = Some(Arc::new(extra));
        self
    }

    /// The application's value, if one of type `T` is attached
    pub fn extra<T: Any + Send + Sync>(&self) -> Option<&T> {
        let extra: &dyn Any = self.extra.as_deref()?;
        extra.downcast_ref()
    }

    /// Whether the token grants every scope in `needed`
    pub fn has_scopes<S: AsRef<str>>(&self, needed: &[S]) -> bool {
        needed
            .iter()
            .all(|n| self.scopes.iter().any(|s| s == n.as_ref()))
    }

    /// A digest of the identity (subject and client id), for records that must name the
    /// principal without spelling it out (a sealed `requestState`)
    pub(crate) fn digest(&self) -> String {
        let mut mac =
            <Hmac<Sha256> as KeyInit>::new_from_slice(b"mcp-sansio principal").expect("any key");
        for part in [&self.subject, &self.client_id] {
            match part {
                Some(s) => {
                    mac.update(&[1]);
                    mac.update(&(s.len() as u64).to_be_bytes());
                    mac.update(s.as_bytes());
                }
                None => mac.update(&[0]),
            }
        }
        hex(&mac.finalize().into_bytes()[..16])
    }
}

impl PartialEq for Principal {
    fn eq(&self, other: &Self) -> bool {
        self.subject == other.subject && self.client_id == other.client_id
    }
}

impl Eq for Principal {}

impl Hash for Principal {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.subject.hash(state);
        self.client_id.hash(state);
    }
}

impl fmt::Debug for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Principal")
            .field("subject", &self.subject)
            .field("client_id", &self.client_id)
            .field("scopes", &self.scopes)
            .field("claims", &self.claims.is_some())
            .field("extra", &self.extra.is_some())
            .finish()
    }
}

/// Who sent a message, as the binding knows it
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Caller {
    /// The verified principal of the request's access token (a protected server); `None`
    /// without authorization
    pub principal: Option<Principal>,
    /// The HTTP request's header fields, in order, as received (names as sent); `None` when
    /// the message did not come over HTTP
    pub headers: Option<HeaderFields>,
    /// The 2025 wire's `Mcp-Session-Id` of the session the message came in
    pub session_id: Option<String>,
}

impl Caller {
    /// A caller known by its principal alone (a byte-stream connection whose user the
    /// application authenticated itself)
    pub fn principal(principal: Principal) -> Self {
        Self {
            principal: Some(principal),
            ..Self::default()
        }
    }

    /// The first value of header `name` (ASCII case-insensitive), if the message came over
    /// HTTP with one
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.as_ref()?.get(name)
    }
}

/// The principal of an optional caller
pub(crate) fn principal_of(caller: Option<&Arc<Caller>>) -> Option<&Principal> {
    caller.and_then(|c| c.principal.as_ref())
}

/// Lowercase hex of `bytes`
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_is_subject_and_client() {
        let a = Principal::new(Some("alice".into()), Some("app".into()));
        let a2 = a.clone().with_scopes(vec!["x".into()]);
        let b = Principal::new(Some("bob".into()), Some("app".into()));
        assert_eq!(a, a2);
        assert_eq!(a.digest(), a2.digest());
        assert_ne!(a, b);
        assert_ne!(a.digest(), b.digest());
        // The parts are delimited: ("ab", None) is not (None, "ab") nor ("a", "b").
        let p = |s: Option<&str>, c: Option<&str>| {
            Principal::new(s.map(Into::into), c.map(Into::into)).digest()
        };
        assert_ne!(p(Some("ab"), None), p(None, Some("ab")));
        assert_ne!(p(Some("ab"), None), p(Some("a"), Some("b")));
    }

    #[test]
    fn scopes_and_extra() {
        let p = Principal::new(None, None)
            .with_scopes(vec!["a".into(), "b".into()])
            .with_extra(7u32);
        assert!(p.has_scopes(&["a", "b"]));
        assert!(!p.has_scopes(&["a", "c"]));
        assert!(p.has_scopes::<&str>(&[]));
        assert_eq!(p.extra::<u32>(), Some(&7));
        assert_eq!(p.extra::<u64>(), None);
    }

    #[test]
    fn headers_by_name() {
        let c = Caller {
            headers: Some(HeaderFields::from([("X-Trace", "1")])),
            ..Caller::default()
        };
        assert_eq!(c.header("x-trace"), Some("1"));
        assert_eq!(c.header("other"), None);
        assert_eq!(Caller::default().header("x-trace"), None);
    }
}
