//! DNS-rebinding protection: the `Host` and `Origin` allow-list

use super::headers::Headers;
use super::response::HttpResponse;
use crate::jsonrpc::ErrorObject;

/// Which hosts may address the server, by `Host` and `Origin` header
///
/// A browser tricked by DNS rebinding sends the attacker's host name in both headers; a
/// local server that accepts only its own names is out of reach. The default allows
/// `localhost`, `127.0.0.1` and `[::1]`, each with any port. A request without `Origin`
/// (not from a browser) is checked by `Host` alone.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HostPolicy {
    /// Allowed host names without port, compared ASCII case-insensitively; IPv6 addresses
    /// in brackets (`[::1]`)
    pub allowed_hosts: Vec<String>,
    /// Allowed origins in full (`https://app.example.com`), in addition to any origin whose
    /// host is in `allowed_hosts`
    pub allowed_origins: Vec<String>,
    /// Skip the checks (a server behind a proxy that does its own)
    pub disabled: bool,
}

impl Default for HostPolicy {
    fn default() -> Self {
        Self {
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "[::1]".into()],
            allowed_origins: Vec::new(),
            disabled: false,
        }
    }
}

impl HostPolicy {
    /// No checks at all
    pub fn allow_all() -> Self {
        Self {
            disabled: true,
            ..Self::default()
        }
    }

    /// Also allow `host` (a name without port)
    pub fn allow_host(mut self, host: impl Into<String>) -> Self {
        self.allowed_hosts.push(host.into());
        self
    }

    /// Checks `Host` and `Origin`; the rejection is 421 for a foreign `Host` and 403 for a
    /// foreign `Origin`, with a JSON-RPC error body
    ///
    /// # Errors
    /// The response to send instead of serving the request.
    pub(crate) fn check(&self, headers: &(impl Headers + ?Sized)) -> Result<(), HttpResponse> {
        if self.disabled {
            return Ok(());
        }
        if let Some(host) = headers.get("Host")
            && !self.host_allowed(strip_port(host.trim()))
        {
            let error = ErrorObject::invalid_request(format!("host `{host}` is not allowed"));
            return Err(HttpResponse::json_error(421, None, &error));
        }
        if let Some(origin) = headers.get("Origin") {
            let origin = origin.trim();
            let listed = self
                .allowed_origins
                .iter()
                .any(|o| o.eq_ignore_ascii_case(origin));
            let host = origin
                .split_once("://")
                .map(|(_, rest)| strip_port(rest.split('/').next().unwrap_or("")));
            if !listed && !host.is_some_and(|h| self.host_allowed(h)) {
                let error =
                    ErrorObject::invalid_request(format!("origin `{origin}` is not allowed"));
                return Err(HttpResponse::json_error(403, None, &error));
            }
        }
        Ok(())
    }

    fn host_allowed(&self, host: &str) -> bool {
        self.allowed_hosts
            .iter()
            .any(|h| h.eq_ignore_ascii_case(host))
    }
}

/// `name:port` → `name`, `[v6]:port` → `[v6]`
fn strip_port(authority: &str) -> &str {
    // user info is not allowed in Host, but an Origin-like value may carry it
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    if authority.starts_with('[') {
        return authority
            .find(']')
            .map_or(authority, |end| &authority[..=end]);
    }
    authority.split(':').next().unwrap_or(authority)
}
