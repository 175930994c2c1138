//! Why an HTTP client could not reach its server, in one sentence the same in every
//! binding (and in Python): `could not connect to http://127.0.0.1:9/mcp: Connection refused
//! (os error 111)`, `could not resolve example.invalid: ...`, `connecting to URL timed out
//! after 10 s`, `no response head from URL within 60 s`

use std::error::Error as StdError;
use std::io;
use std::time::Duration;

/// `could not connect to URL: CAUSE`
pub fn could_not_connect(url: &str, cause: &dyn std::fmt::Display) -> String {
    format!("could not connect to {url}: {cause}")
}

/// `could not connect to the proxy HOST:PORT for URL: CAUSE` (Python's words too)
pub fn proxy_unreachable(
    proxy: &crate::http_options::ProxyTarget,
    url: &str,
    cause: &dyn std::fmt::Display,
) -> String {
    let (host, port) = (&proxy.host, proxy.port);
    let authority = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    format!("could not connect to the proxy {authority} for {url}: {cause}")
}

/// `could not resolve HOST: CAUSE`
pub fn could_not_resolve(host: &str, cause: &dyn std::fmt::Display) -> String {
    format!("could not resolve {host}: {cause}")
}

/// `connecting to URL timed out after 10 s`
pub fn connect_timed_out(url: &str, limit: Duration) -> String {
    format!("connecting to {url} timed out after {}", seconds(limit))
}

/// `no response head from URL within 60 s`
pub fn no_response_head(url: &str, limit: Duration) -> String {
    format!("no response head from {url} within {}", seconds(limit))
}

/// `10 s`, `1.5 s`, `300 ms`
pub fn seconds(limit: Duration) -> String {
    let ms = limit.as_millis();
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{} s", limit.as_secs_f64())
    }
}

/// The innermost [`io::Error`] of `error`'s [`source`](StdError::source) chain (`error`
/// itself included) that carries an OS error code, else the innermost one at all
pub fn io_cause<'a>(error: &'a (dyn StdError + 'static)) -> Option<&'a io::Error> {
    let mut found: Option<&io::Error> = None;
    let mut next = Some(error);
    while let Some(e) = next {
        if let Some(io) = e.downcast_ref::<io::Error>()
            && (io.raw_os_error().is_some() || found.is_none_or(|f| f.raw_os_error().is_none()))
        {
            found = Some(io);
        }
        next = below(e);
    }
    found
}

/// The error under `e`: an [`io::Error`]'s own inner error (its `source` skips it), else
/// `e`'s source
fn below<'a>(e: &'a (dyn StdError + 'static)) -> Option<&'a (dyn StdError + 'static)> {
    match e.downcast_ref::<io::Error>().and_then(io::Error::get_ref) {
        Some(inner) => Some(inner),
        None => e.source(),
    }
}

/// A sentence the binding worded already, carried through its HTTP stack's error types
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worded(pub String);

impl std::fmt::Display for Worded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl StdError for Worded {}

/// The [`Worded`] sentence in `error`'s source chain, if any
pub fn worded(error: &(dyn StdError + 'static)) -> Option<String> {
    let mut next = Some(error);
    while let Some(e) = next {
        if let Some(w) = e.downcast_ref::<Worded>() {
            return Some(w.0.clone());
        }
        next = below(e);
    }
    None
}

/// `error` as an [`io::Error`] that carries the sentence `text`
pub fn io_worded(kind: io::ErrorKind, text: String) -> io::Error {
    io::Error::new(kind, Worded(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_people_write_them() {
        assert_eq!(seconds(Duration::from_secs(10)), "10 s");
        assert_eq!(seconds(Duration::from_millis(300)), "300 ms");
        assert_eq!(seconds(Duration::from_millis(1500)), "1.5 s");
    }

    #[test]
    fn the_os_cause_is_found_under_wrappers_and_a_worded_sentence_survives_them() {
        let os = io::Error::from_raw_os_error(111);
        let wrapped = io::Error::other(io::Error::other(os));
        let cause = io_cause(&wrapped).unwrap();
        assert_eq!(cause.raw_os_error(), Some(111));
        let worded_io = io_worded(io::ErrorKind::Other, "could not connect to x".into());
        let outer = io::Error::other(worded_io);
        assert_eq!(worded(&outer).as_deref(), Some("could not connect to x"));
    }
}
