//! Plain `http://` through a forward proxy on ureq: ureq 3 only tunnels through a proxy with
//! `CONNECT`, so for an `http://` server this agent resolves the proxy's address in place of
//! the server's, connects there with ureq's own TCP connector, and rewrites each request's
//! line into the absolute form a proxy takes (`POST http://host:port/mcp HTTP/1.1`), with
//! the proxy's `Proxy-Authorization` after it; and every agent's resolver, which words its
//! failures

use std::fmt;

use mcp_sansio_runtime::http_options::ProxyTarget;
use mcp_sansio_runtime::net_error::{self, Worded};
use ureq::config::Config;
use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{
    Buffers, ConnectionDetails, Connector, DefaultConnector, NextTimeout, TcpConnector, Transport,
};

/// An agent for `uri` (`http://`) that sends every request to `proxy` in absolute form
pub(crate) fn agent(config: Config, uri: &Uri, proxy: &ProxyTarget) -> ureq::Agent {
    let origin = format!(
        "http://{}",
        uri.authority().map(|a| a.as_str()).unwrap_or_default()
    );
    let connector = ().chain(TcpConnector::default()).chain(AbsoluteForm {
        origin,
        authorization: proxy.authorization.clone(),
    });
    let host = if proxy.host.contains(':') {
        format!("[{}]", proxy.host)
    } else {
        proxy.host.clone()
    };
    let proxy_uri: Uri = format!("http://{host}:{}/", proxy.port)
        .parse()
        .unwrap_or_else(|_| Uri::from_static("http://0.0.0.0/"));
    ureq::Agent::with_parts(config, connector, Naming(Some(proxy_uri)))
}

/// An agent whose failures to resolve a name say which (`could not resolve HOST: ..`)
pub(crate) fn naming_agent(config: Config) -> ureq::Agent {
    ureq::Agent::with_parts(config, DefaultConnector::new(), Naming(None))
}

/// ureq's resolver, for the request's URI (or this one: the proxy's, whatever the request's
/// URI), its failures worded ([`Worded`] in [`ureq::Error::Other`])
#[derive(Debug)]
struct Naming(Option<Uri>);

impl Resolver for Naming {
    fn resolve(
        &self,
        uri: &Uri,
        config: &Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let uri = self.0.as_ref().unwrap_or(uri);
        let host = uri.host().unwrap_or_default();
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let worded = |cause: &dyn fmt::Display| {
            ureq::Error::Other(Box::new(Worded(net_error::could_not_resolve(host, cause))))
        };
        match DefaultResolver::default().resolve(uri, config, timeout) {
            Err(ureq::Error::Io(e)) => Err(worded(&e)),
            Err(ureq::Error::HostNotFound) => Err(worded(&"host not found")),
            other => other,
        }
    }
}

/// Wraps each new connection (to the proxy) in a [`Rewriting`] transport
#[derive(Debug)]
struct AbsoluteForm {
    /// `http://host:port` of the server
    origin: String,
    authorization: Option<String>,
}

impl<In: Transport> Connector<In> for AbsoluteForm {
    type Out = Rewriting;

    fn connect(
        &self,
        _: &ConnectionDetails<'_>,
        chained: Option<In>,
    ) -> Result<Option<Rewriting>, ureq::Error> {
        Ok(chained.map(|inner| Rewriting {
            inner: Box::new(inner),
            origin: self.origin.clone(),
            authorization: self.authorization.clone(),
            first: true,
        }))
    }
}

/// A connection whose first output (a request head: ureq writes a head whole before it
/// transmits) gets the absolute form; each connection carries one request
struct Rewriting {
    inner: Box<dyn Transport>,
    origin: String,
    authorization: Option<String>,
    first: bool,
}

impl fmt::Debug for Rewriting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rewriting")
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

/// `bytes` with its request line in absolute form (`origin` before its path) and
/// `Proxy-Authorization` after it
fn rewrite(bytes: &[u8], origin: &str, authorization: Option<&str>) -> Option<Vec<u8>> {
    let line_end = bytes.windows(2).position(|w| w == b"\r\n")?;
    let line = std::str::from_utf8(&bytes[..line_end]).ok()?;
    let (method, rest) = line.split_once(' ')?;
    if !rest.starts_with('/') {
        return None;
    }
    let mut out = format!("{method} {origin}{rest}\r\n").into_bytes();
    if let Some(authorization) = authorization {
        out.extend_from_slice(format!("Proxy-Authorization: {authorization}\r\n").as_bytes());
    }
    out.extend_from_slice(&bytes[line_end + 2..]);
    Some(out)
}

impl Transport for Rewriting {
    fn buffers(&mut self) -> &mut dyn Buffers {
        self.inner.buffers()
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        if !std::mem::take(&mut self.first) {
            return self.inner.transmit_output(amount, timeout);
        }
        let (origin, authorization) = (&self.origin, self.authorization.as_deref());
        let rewritten = rewrite(
            &self.inner.buffers().output()[..amount],
            origin,
            authorization,
        );
        let output = self.inner.buffers().output();
        match rewritten {
            Some(bytes) if bytes.len() <= output.len() => {
                output[..bytes.len()].copy_from_slice(&bytes);
                self.inner.transmit_output(bytes.len(), timeout)
            }
            _ => Err(ureq::Error::Io(std::io::Error::other(
                "the request head does not fit the absolute form for the proxy",
            ))),
        }
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        self.inner.await_input(timeout)
    }

    fn is_open(&mut self) -> bool {
        self.inner.is_open()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_request_line_takes_the_absolute_form_and_the_credentials() {
        let head = b"POST /mcp?x=1 HTTP/1.1\r\nhost: 127.0.0.1:9\r\n\r\n{}";
        let out = super::rewrite(head, "http://127.0.0.1:9", Some("Basic YTpi")).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "POST http://127.0.0.1:9/mcp?x=1 HTTP/1.1\r\nProxy-Authorization: Basic YTpi\r\n\
             host: 127.0.0.1:9\r\n\r\n{}"
        );
    }
}
