//! The HTTP requests the OAuth client asks the binding to perform, and their responses
//!
//! Deliberately small and independent of any HTTP library: a method, an absolute URL,
//! headers and a body. The binding must not follow redirects for these requests (every
//! request here expects a direct answer) and must not log their headers or bodies: they
//! carry client secrets, codes and tokens.

use std::fmt;

/// The HTTP method of an [`AuthRequest`]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthMethod {
    /// GET (metadata documents)
    Get,
    /// POST (registration, token requests)
    Post,
}

impl AuthMethod {
    /// The method's name on the wire
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Get => "GET",
            Self::Post => "POST",
        }
    }
}

/// One HTTP request to perform; answer it with [`OAuthClient::handle_response`]
///
/// Its `Debug` shows the method and URL only: headers and body may hold secrets.
///
/// [`OAuthClient::handle_response`]: super::OAuthClient::handle_response
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuthRequest {
    /// GET or POST
    pub method: AuthMethod,
    /// The absolute URL
    pub url: String,
    /// Request headers (`Accept`, `Content-Type`, `Authorization` for client authentication)
    pub headers: Vec<(String, String)>,
    /// The body (empty for GET)
    pub body: Vec<u8>,
}

impl AuthRequest {
    /// A GET of `url` accepting JSON
    pub fn get(url: impl Into<String>) -> Self {
        Self {
            method: AuthMethod::Get,
            url: url.into(),
            headers: vec![("Accept".into(), "application/json".into())],
            body: Vec::new(),
        }
    }

    pub(crate) fn post_form(url: impl Into<String>, form: &[(&str, &str)]) -> Self {
        let mut body = form_urlencoded::Serializer::new(String::new());
        for (k, v) in form {
            body.append_pair(k, v);
        }
        Self {
            method: AuthMethod::Post,
            url: url.into(),
            headers: vec![
                ("Accept".into(), "application/json".into()),
                (
                    "Content-Type".into(),
                    "application/x-www-form-urlencoded".into(),
                ),
            ],
            body: body.finish().into_bytes(),
        }
    }

    pub(crate) fn post_json(url: impl Into<String>, body: &serde_json::Value) -> Self {
        Self {
            method: AuthMethod::Post,
            url: url.into(),
            headers: vec![
                ("Accept".into(), "application/json".into()),
                ("Content-Type".into(), "application/json".into()),
            ],
            body: body.to_string().into_bytes(),
        }
    }

    /// The value of a header (case-insensitive name)
    pub fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }
}

impl fmt::Debug for AuthRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthRequest")
            .field("method", &self.method)
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

/// The response to an [`AuthRequest`] (a transport failure is [`AuthResponse::failed`])
///
/// Its `Debug` shows the status only.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuthResponse {
    /// The HTTP status; 0 when the request failed before a response arrived
    pub status: u16,
    /// Response headers
    pub headers: Vec<(String, String)>,
    /// The body
    pub body: Vec<u8>,
}

impl AuthResponse {
    /// A response with this status, headers and body
    pub fn new(status: u16, headers: Vec<(String, String)>, body: Vec<u8>) -> Self {
        Self {
            status,
            headers,
            body,
        }
    }

    /// The request failed before any response (connection refused, timeout)
    pub fn failed() -> Self {
        Self::new(0, Vec::new(), Vec::new())
    }

    /// The value of a header (case-insensitive name)
    pub fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }

    pub(crate) fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

impl fmt::Debug for AuthResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthResponse")
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}
