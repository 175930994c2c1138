//! The proxy tunnel of an `https://` connection, runtime-free: the `CONNECT` request a
//! client writes to its forward proxy, and the proxy's reply head read back
//!
//! Each binding writes [`connect_request`] on its socket to the proxy, feeds what comes
//! back to [`read_reply`] until it answers, then speaks TLS to the target over the tunnel.

use crate::http_options::ProxyTarget;

/// How large a proxy's reply head may be
const MAX_REPLY: usize = 16 * 1024;

/// The `CONNECT authority HTTP/1.1` request for a tunnel to `authority` (`host:port`),
/// with `Host` and the proxy's `Proxy-Authorization` when it has one
pub fn connect_request(authority: &str, proxy: &ProxyTarget) -> Vec<u8> {
    let mut head = format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n");
    if let Some(authorization) = &proxy.authorization {
        head.push_str(&format!("Proxy-Authorization: {authorization}\r\n"));
    }
    head.push_str("\r\n");
    head.into_bytes()
}

/// What the proxy's reply so far says: `Ok(None)` while its head is incomplete, `Ok(Some(n))`
/// once a 2xx head of `n` bytes is complete (the tunnel is open; bytes after it belong to
/// the target), an error naming the proxy and its status otherwise
///
/// # Errors
/// A refusal (`the proxy http://p:3128 refused CONNECT to host:443: HTTP 403 Forbidden`),
/// or a reply that is not HTTP.
pub fn read_reply(
    bytes: &[u8],
    proxy: &ProxyTarget,
    authority: &str,
) -> Result<Option<usize>, String> {
    let mut fields = [httparse::EMPTY_HEADER; 64];
    let mut reply = httparse::Response::new(&mut fields);
    match reply.parse(bytes) {
        Ok(httparse::Status::Complete(len)) => {
            let status = reply.code.unwrap_or_default();
            if (200..300).contains(&status) {
                return Ok(Some(len));
            }
            let reason = reply
                .reason
                .filter(|r| !r.is_empty())
                .unwrap_or_else(|| crate::h1::reason(status));
            Err(refused(proxy, authority, status, reason))
        }
        Ok(httparse::Status::Partial) if bytes.len() <= MAX_REPLY => Ok(None),
        Ok(httparse::Status::Partial) => Err(format!(
            "the proxy {} answered CONNECT to {authority} with a head over {MAX_REPLY} bytes",
            proxy.url
        )),
        Err(e) => Err(format!(
            "the proxy {} answered CONNECT to {authority} with something not HTTP: {e}",
            proxy.url
        )),
    }
}

/// `the proxy URL refused CONNECT to AUTHORITY: HTTP STATUS REASON`
pub fn refused(proxy: &ProxyTarget, authority: &str, status: u16, reason: &str) -> String {
    let reason = if reason.is_empty() {
        String::new()
    } else {
        format!(" {reason}")
    };
    format!(
        "the proxy {} refused CONNECT to {authority}: HTTP {status}{reason}",
        proxy.url
    )
}

/// The proxy closed the connection before its reply head was complete
pub fn closed(proxy: &ProxyTarget, authority: &str) -> String {
    format!(
        "the proxy {} closed the connection instead of answering CONNECT to {authority}",
        proxy.url
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http_options::Proxy;

    fn proxy() -> ProxyTarget {
        Proxy::Url("http://ada:pw@127.0.0.1:3128".into())
            .resolve("https", "x", |_| None)
            .unwrap()
            .unwrap()
    }

    #[test]
    fn the_request_names_the_target_and_carries_the_credentials() {
        let request = String::from_utf8(connect_request("example.com:443", &proxy())).unwrap();
        assert_eq!(
            request,
            "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\
             Proxy-Authorization: Basic YWRhOnB3\r\n\r\n"
        );
    }

    #[test]
    fn a_reply_is_read_whole_byte_by_byte_and_a_refusal_names_the_proxy() {
        let ok = b"HTTP/1.1 200 Connection established\r\nProxy-Agent: x\r\n\r\nTLS";
        for end in 0..ok.len() - 3 {
            assert_eq!(read_reply(&ok[..end], &proxy(), "h:443"), Ok(None));
        }
        assert_eq!(read_reply(ok, &proxy(), "h:443"), Ok(Some(ok.len() - 3)));
        let no = b"HTTP/1.0 403 Filtered\r\n\r\n";
        assert_eq!(
            read_reply(no, &proxy(), "h:443"),
            Err("the proxy http://ada:***@127.0.0.1:3128 refused CONNECT to h:443: HTTP 403 Filtered".into())
        );
        assert!(read_reply(b"SSH-2.0\r\n\r\n", &proxy(), "h:443").is_err());
    }
}
