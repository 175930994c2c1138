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
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

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
