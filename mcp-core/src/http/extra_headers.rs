//! Headers the application adds to a client's requests (an API key, a tenant, a trace id),
//! and the names it may not set because the transport owns them

use std::fmt;

/// Why an application's header cannot go on a request
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HeaderError {
    /// The name is empty or not an HTTP token (RFC 9110 §5.1)
    #[error("`{0}` is not a valid HTTP header name")]
    InvalidName(String),
    /// The value holds a control character (a line break, NUL) or is not visible ASCII
    /// text with spaces and tabs
    #[error("the value of the header `{0}` holds a character HTTP does not allow")]
    InvalidValue(String),
    /// The transport sets this header itself (framing, content negotiation, the MCP
    /// session and version headers)
    #[error("the header `{0}` is set by the MCP transport and cannot be replaced")]
    Reserved(String),
}

/// Header names the transport or the HTTP stack writes (ASCII case-insensitive); an
/// `Mcp-Param-` prefix is reserved too
const RESERVED: &[&str] = &[
    "host",
    "content-length",
    "content-type",
    "transfer-encoding",
    "connection",
    "upgrade",
    "te",
    "trailer",
    "keep-alive",
    "proxy-connection",
    "expect",
    "accept",
    "mcp-session-id",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "last-event-id",
    "dpop",
];

/// Checks one application header: a token name that the transport does not own, and a
/// value of visible ASCII, spaces and tabs (what every HTTP stack sends unchanged)
///
/// `Authorization` is allowed (a static `Bearer` API key); with OAuth configured the
/// transport's own token replaces it.
///
/// # Errors
/// [`HeaderError`] naming the header.
pub fn check_header(name: &str, value: &str) -> Result<(), HeaderError> {
    let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    if name.is_empty() || !name.bytes().all(token) {
        return Err(HeaderError::InvalidName(name.to_owned()));
    }
    let lower = name.to_ascii_lowercase();
    if RESERVED.contains(&lower.as_str()) || lower.starts_with("mcp-param-") {
        return Err(HeaderError::Reserved(name.to_owned()));
    }
    if !value
        .bytes()
        .all(|b| b == b'\t' || (b' '..=b'~').contains(&b))
    {
        return Err(HeaderError::InvalidValue(name.to_owned()));
    }
    Ok(())
}

/// Whether a header's value should be hidden in logs and `Debug` output: credentials and
/// anything named like one
pub(crate) fn is_secret(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    [
        "authorization",
        "dpop",
        "cookie",
        "key",
        "token",
        "secret",
        "password",
    ]
    .iter()
    .any(|word| lower.contains(word))
}

/// A checked list of application headers
#[derive(Clone, Default, PartialEq, Eq)]
pub(crate) struct ExtraHeaders(Vec<(String, String)>);

impl ExtraHeaders {
    /// Checks every header of `headers`
    pub(crate) fn new<I, N, V>(headers: I) -> Result<Self, HeaderError>
    where
        I: IntoIterator<Item = (N, V)>,
        N: Into<String>,
        V: Into<String>,
    {
        let mut checked = Vec::new();
        for (name, value) in headers {
            let (name, value) = (name.into(), value.into());
            check_header(&name, &value)?;
            checked.push((name, value));
        }
        Ok(Self(checked))
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Appends the headers to `out`; `Authorization` only when `authorized` is false (the
    /// OAuth token wins)
    pub(crate) fn append_to(&self, out: &mut Vec<(String, String)>, authorized: bool) {
        for (name, value) in &self.0 {
            if authorized && name.eq_ignore_ascii_case("authorization") {
                continue;
            }
            out.push((name.clone(), value.clone()));
        }
    }
}

impl fmt::Debug for ExtraHeaders {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|(n, v)| {
                let shown = if is_secret(n) {
                    "<redacted>"
                } else {
                    v.as_str()
                };
                (n.as_str(), shown)
            }))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_transport_owns_are_refused_in_any_case() {
        for name in [
            "Mcp-Session-Id",
            "content-type",
            "ACCEPT",
            "Mcp-Param-Region",
            "Host",
        ] {
            assert_eq!(
                check_header(name, "x"),
                Err(HeaderError::Reserved(name.to_owned())),
                "{name}"
            );
        }
    }

    #[test]
    fn api_keys_and_bearer_tokens_are_allowed() {
        assert_eq!(check_header("X-API-Key", "k-123"), Ok(()));
        assert_eq!(check_header("Authorization", "Bearer abc.def"), Ok(()));
    }

    #[test]
    fn bad_names_and_values_are_refused() {
        assert!(matches!(
            check_header("", "x"),
            Err(HeaderError::InvalidName(_))
        ));
        assert!(matches!(
            check_header("X Key", "x"),
            Err(HeaderError::InvalidName(_))
        ));
        assert!(matches!(
            check_header("X-Key", "a\r\nInjected: 1"),
            Err(HeaderError::InvalidValue(_))
        ));
        assert!(matches!(
            check_header("X-Key", "é"),
            Err(HeaderError::InvalidValue(_))
        ));
    }

    #[test]
    fn the_oauth_token_replaces_a_static_authorization() {
        let extra = ExtraHeaders::new([("Authorization", "Bearer static"), ("X-Tenant", "a")])
            .expect("valid");
        let mut out = Vec::new();
        extra.append_to(&mut out, true);
        assert_eq!(out, vec![("X-Tenant".to_owned(), "a".to_owned())]);
        assert!(format!("{extra:?}").contains("<redacted>"));
    }
}
