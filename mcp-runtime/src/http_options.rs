//! How an HTTP client reaches its server, the same in every binding: the application's
//! headers, extra root certificates, the proxy, and the connect and request timeouts
//!
//! Plain data: each binding's HTTP stack applies it (its TLS connector, its proxy
//! tunnel, its timers); the headers go through the core's
//! [`ClientTransport::with_headers`](mcp_sansio::http::ClientTransport::with_headers), which
//! checks them.

use std::time::Duration;

/// The default of [`HttpOptions::connect_timeout`]
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The default of [`HttpOptions::request_timeout`]
pub(crate) const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// Which proxy an HTTP client goes through
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Proxy {
    /// `HTTPS_PROXY` for `https://` URLs, `HTTP_PROXY` for `http://` ones (either case),
    /// unless `NO_PROXY` names the host; none when they are unset
    #[default]
    FromEnv,
    /// No proxy, whatever the environment says
    Direct,
    /// This proxy (`http://host:port`) for every URL; `https://` URLs tunnel through it
    /// with `CONNECT`
    Url(String),
}

/// How an HTTP client reaches its server
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpOptions {
    /// Headers on every request (an `Authorization: Bearer` or `X-API-Key` key a server
    /// issued); checked when connecting
    pub headers: Vec<(String, String)>,
    /// Root certificates (PEM) trusted besides the platform's and `SSL_CERT_FILE` /
    /// `SSL_CERT_DIR`: a private CA, or a test's self-signed certificate
    pub root_certificates: Vec<Vec<u8>>,
    /// The proxy
    pub proxy: Proxy,
    /// How long opening a connection (TCP, the proxy tunnel, TLS) may take
    pub connect_timeout: Duration,
    /// How long a request may wait for its response head once sent (an event stream's body
    /// may then last as long as the server keeps it open)
    pub request_timeout: Duration,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            headers: Vec::new(),
            root_certificates: Vec::new(),
            proxy: Proxy::default(),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
        }
    }
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("HttpOptions")
            .field("headers", &names)
            .field("root_certificates", &self.root_certificates.len())
            .field("proxy", &self.proxy)
            .field("connect_timeout", &self.connect_timeout)
            .field("request_timeout", &self.request_timeout)
            .finish()
    }
}

impl HttpOptions {
    /// Adds a header to every request
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Trusts the root certificates of `pem` (one or more `CERTIFICATE` blocks) too
    pub fn root_certificates_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.root_certificates.push(pem.into());
        self
    }

    /// Goes through `proxy`
    pub fn proxy(mut self, proxy: Proxy) -> Self {
        self.proxy = proxy;
        self
    }

    /// Sets [`connect_timeout`](Self::connect_timeout)
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Sets [`request_timeout`](Self::request_timeout)
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }
}

/// `existing` headers with `more` after them, each of `more` checked by the core
/// ([`check_header`](mcp_sansio::http::check_header)): a handle's own headers
///
/// # Errors
/// The first header the core refuses.
pub fn with_more_headers<I, N, V>(
    existing: &[(String, String)],
    more: I,
) -> Result<std::sync::Arc<[(String, String)]>, mcp_sansio::http::HeaderError>
where
    I: IntoIterator<Item = (N, V)>,
    N: Into<String>,
    V: Into<String>,
{
    let mut all = existing.to_vec();
    for (name, value) in more {
        let (name, value) = (name.into(), value.into());
        mcp_sansio::http::check_header(&name, &value)?;
        all.push((name, value));
    }
    Ok(all.into())
}

/// Where a connection to a server goes first: a forward proxy
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProxyTarget {
    /// The proxy's host
    pub host: String,
    /// The proxy's port (`80` when its URL gives none)
    pub port: u16,
    /// `Proxy-Authorization` for the proxy (`Basic`, from the URL's user and password)
    pub authorization: Option<String>,
    /// The proxy's URL as given, for error messages (without its password)
    pub url: String,
}

impl ProxyTarget {
    /// The user name and password of [`authorization`](Self::authorization), decoded (for an
    /// HTTP stack that takes them apart)
    pub fn credentials(&self) -> Option<(String, String)> {
        use base64::Engine as _;
        let basic = self.authorization.as_deref()?.strip_prefix("Basic ")?;
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(basic)
            .ok()?;
        let decoded = String::from_utf8(decoded).ok()?;
        let (user, password) = decoded.split_once(':').unwrap_or((&decoded, ""));
        Some((user.to_owned(), password.to_owned()))
    }
}

/// Why a proxy setting cannot be used
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the proxy `{url}` cannot be used: {why}")]
pub struct ProxyError {
    /// The setting (without a password)
    pub url: String,
    /// Why
    pub why: String,
}

impl Proxy {
    /// The proxy for a connection to `host` over `scheme` (`http` or `https`), if any:
    /// [`FromEnv`](Self::FromEnv) reads `HTTPS_PROXY`/`https_proxy` for `https`,
    /// `HTTP_PROXY`/`http_proxy` for `http` (`ALL_PROXY` for both), skipped when
    /// `NO_PROXY`/`no_proxy` names the host (a name matches itself and its subdomains, with
    /// or without a leading dot; `*` matches every host; an IP address matches itself)
    ///
    /// # Errors
    /// [`ProxyError`] for a proxy URL that is not `http://host[:port]` (an `https://`
    /// proxy is not supported).
    pub fn for_target(&self, scheme: &str, host: &str) -> Result<Option<ProxyTarget>, ProxyError> {
        self.resolve(scheme, host, |name| std::env::var(name).ok())
    }

    /// [`for_target`](Self::for_target) with `env` in place of the process environment
    pub fn resolve(
        &self,
        scheme: &str,
        host: &str,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<ProxyTarget>, ProxyError> {
        let setting = match self {
            Self::Direct => return Ok(None),
            Self::Url(url) => url.clone(),
            Self::FromEnv => {
                let get = |names: &[&str]| {
                    names
                        .iter()
                        .find_map(|n| env(n).filter(|v| !v.trim().is_empty()))
                };
                let found = match scheme {
                    "https" => get(&["HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"]),
                    _ => get(&["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"]),
                };
                let Some(found) = found else { return Ok(None) };
                let no_proxy = get(&["NO_PROXY", "no_proxy"]).unwrap_or_default();
                if bypassed(&no_proxy, host) {
                    return Ok(None);
                }
                found
            }
        };
        parse_proxy(setting.trim()).map(Some)
    }
}

/// Whether `NO_PROXY` (comma-separated) names `host`
fn bypassed(no_proxy: &str, host: &str) -> bool {
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    no_proxy.split(',').map(str::trim).any(|entry| {
        if entry.is_empty() {
            return false;
        }
        if entry == "*" {
            return true;
        }
        // An entry may carry a port; the port is not matched.
        let entry = entry
            .rsplit_once(':')
            .filter(|(h, p)| !h.contains(':') && p.parse::<u16>().is_ok())
            .map_or(entry, |(h, _)| h);
        let entry = entry.trim_start_matches("*.").trim_start_matches('.');
        let entry = entry.to_ascii_lowercase();
        host == entry || host.ends_with(&format!(".{entry}"))
    })
}

/// `http://[user[:password]@]host[:port][/]`
fn parse_proxy(url: &str) -> Result<ProxyTarget, ProxyError> {
    let shown = |url: &str| {
        let (scheme, rest) = url.split_once("://").map_or(("", url), |(s, r)| (s, r));
        match rest.rsplit_once('@') {
            Some((userinfo, host)) if userinfo.contains(':') => {
                let user = userinfo.split_once(':').map_or(userinfo, |(u, _)| u);
                let scheme = if scheme.is_empty() {
                    String::new()
                } else {
                    format!("{scheme}://")
                };
                format!("{scheme}{user}:***@{host}")
            }
            _ => url.to_owned(),
        }
    };
    let error = |why: &str| ProxyError {
        url: shown(url),
        why: why.to_owned(),
    };
    let rest = match url.split_once("://") {
        Some(("http", rest)) => rest,
        Some(("https", _)) => return Err(error("an https:// proxy is not supported; use http://")),
        Some((other, _)) => return Err(error(&format!("the scheme `{other}` is not supported"))),
        // A bare `host:port`, as curl accepts
        None => url,
    };
    let rest = rest.trim_end_matches('/');
    let (userinfo, authority) = match rest.rsplit_once('@') {
        Some((userinfo, authority)) => (Some(userinfo), authority),
        None => (None, rest),
    };
    if authority.is_empty() || authority.contains('/') {
        return Err(error("it names no host"));
    }
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if !host.ends_with(']') || host.starts_with('[') => {
            let port = port
                .parse::<u16>()
                .map_err(|_| error("its port is not a number"))?;
            (host, port)
        }
        _ => (authority, 80),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return Err(error("it names no host"));
    }
    let authorization = userinfo.map(|userinfo| {
        let decoded = percent_decode(userinfo);
        use base64::Engine as _;
        let encoded = base64::engine::general_purpose::STANDARD.encode(decoded.as_bytes());
        format!("Basic {encoded}")
    });
    Ok(ProxyTarget {
        host: host.to_owned(),
        port,
        authorization,
        url: shown(url),
    })
}

/// `%XX` escapes decoded (user names and passwords in proxy URLs)
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%' && i + 2 < bytes.len())
            .then(|| std::str::from_utf8(&bytes[i + 1..i + 3]).ok())
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        if let Some(b) = escaped {
            out.push(b);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn the_environment_picks_the_proxy_by_scheme_and_no_proxy_skips_it() {
        let vars = env(&[
            ("HTTPS_PROXY", "http://proxy.corp:3128"),
            ("http_proxy", "proxy.corp:8080"),
            ("NO_PROXY", "localhost, .internal.corp,10.0.0.7:443"),
        ]);
        let https = Proxy::FromEnv
            .resolve("https", "api.example", &vars)
            .unwrap()
            .unwrap();
        assert_eq!((https.host.as_str(), https.port), ("proxy.corp", 3128));
        let http = Proxy::FromEnv
            .resolve("http", "api.example", &vars)
            .unwrap()
            .unwrap();
        assert_eq!(http.port, 8080);
        for host in [
            "localhost",
            "LOCALHOST",
            "svc.internal.corp",
            "internal.corp",
            "10.0.0.7",
        ] {
            assert_eq!(
                Proxy::FromEnv.resolve("https", host, &vars),
                Ok(None),
                "{host}"
            );
        }
        assert!(
            Proxy::FromEnv
                .resolve("https", "notinternal.corp", &vars)
                .unwrap()
                .is_some()
        );
        assert_eq!(Proxy::FromEnv.resolve("https", "x", env(&[])), Ok(None));
        assert_eq!(
            Proxy::FromEnv.resolve(
                "https",
                "x",
                env(&[("HTTPS_PROXY", "http://p:1"), ("no_proxy", "*")])
            ),
            Ok(None)
        );
        assert_eq!(Proxy::Direct.resolve("https", "x", &vars), Ok(None));
    }

    #[test]
    fn an_explicit_proxy_takes_credentials_and_hides_the_password() {
        let proxy = Proxy::Url("http://ada:s%3Acret@127.0.0.1:8888/".into());
        let target = proxy.resolve("https", "x", env(&[])).unwrap().unwrap();
        assert_eq!((target.host.as_str(), target.port), ("127.0.0.1", 8888));
        assert_eq!(
            target.authorization.as_deref(),
            Some("Basic YWRhOnM6Y3JldA==")
        );
        assert_eq!(target.url, "http://ada:***@127.0.0.1:8888/");
        assert_eq!(target.credentials(), Some(("ada".into(), "s:cret".into())));
    }

    #[test]
    fn unusable_proxies_say_why() {
        let err = Proxy::Url("https://p:1".into())
            .resolve("https", "x", env(&[]))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the proxy `https://p:1` cannot be used: an https:// proxy is not supported; use http://"
        );
        assert!(
            Proxy::Url("http://p:x".into())
                .resolve("http", "x", env(&[]))
                .is_err()
        );
        assert!(
            Proxy::Url("socks5://p:1".into())
                .resolve("http", "x", env(&[]))
                .is_err()
        );
    }
}
