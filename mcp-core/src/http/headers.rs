//! Request headers as the rules read them: case-insensitive names, and the names MCP uses

use super::response::HttpResponse;
use crate::jsonrpc::ErrorObject;

/// The session id header (2025 wire)
pub(crate) const MCP_SESSION_ID: &str = "Mcp-Session-Id";
/// The protocol version header (both wires)
pub(crate) const MCP_PROTOCOL_VERSION: &str = "MCP-Protocol-Version";
/// The method mirror header (2026 wire)
pub(crate) const MCP_METHOD: &str = "Mcp-Method";
/// The name mirror header (2026 wire): `params.name`, `params.uri` or `params.taskId`
pub(crate) const MCP_NAME: &str = "Mcp-Name";
/// The SSE resumption header (2025 wire)
pub(crate) const LAST_EVENT_ID: &str = "Last-Event-ID";

/// Read access to a request's header fields, by case-insensitive name
///
/// Implemented for slices of `(name, value)` pairs, which is what a binding builds from its
/// HTTP library's header map. Values are bytes or text (`String`, `&str`, `Vec<u8>`, ...):
/// a binding passes every field through as it came, and the rules answer a value that is
/// not UTF-8 with 400 ([`undecodable`](Self::undecodable)).
pub trait Headers {
    /// Every value of the header `name` (ASCII case-insensitive) that is UTF-8 text, in
    /// order
    fn values<'a>(&'a self, name: &str) -> Vec<&'a str>;

    /// The first value of the header `name`, if any
    fn get(&self, name: &str) -> Option<&str> {
        self.values(name).into_iter().next()
    }

    /// How many field lines are named `name`, whatever their values
    fn count(&self, name: &str) -> usize {
        self.values(name).len()
    }

    /// The name of the first field whose value is not UTF-8, if any
    fn undecodable(&self) -> Option<&str> {
        None
    }

    /// Gives `f` every value of the header `name` that [`values`](Self::values) would
    /// list, in order, without collecting them
    fn for_each_value(&self, name: &str, f: &mut dyn FnMut(&str)) {
        for value in self.values(name) {
            f(value);
        }
    }
}

impl<N: AsRef<str>, V: AsRef<[u8]>> Headers for [(N, V)] {
    fn values<'a>(&'a self, name: &str) -> Vec<&'a str> {
        self.iter()
            .filter(|(n, _)| n.as_ref().eq_ignore_ascii_case(name))
            .filter_map(|(_, v)| std::str::from_utf8(v.as_ref()).ok())
            .collect()
    }

    fn get(&self, name: &str) -> Option<&str> {
        // The first of `values`, without collecting them.
        self.iter()
            .filter(|(n, _)| n.as_ref().eq_ignore_ascii_case(name))
            .find_map(|(_, v)| std::str::from_utf8(v.as_ref()).ok())
    }

    fn count(&self, name: &str) -> usize {
        self.iter()
            .filter(|(n, _)| n.as_ref().eq_ignore_ascii_case(name))
            .count()
    }

    fn undecodable(&self) -> Option<&str> {
        self.iter()
            .find(|(_, v)| std::str::from_utf8(v.as_ref()).is_err())
            .map(|(n, _)| n.as_ref())
    }
}

impl<N: AsRef<str>, V: AsRef<[u8]>> Headers for Vec<(N, V)> {
    fn values<'a>(&'a self, name: &str) -> Vec<&'a str> {
        self.as_slice().values(name)
    }

    fn get(&self, name: &str) -> Option<&str> {
        Headers::get(self.as_slice(), name)
    }

    fn count(&self, name: &str) -> usize {
        self.as_slice().count(name)
    }

    fn undecodable(&self) -> Option<&str> {
        self.as_slice().undecodable()
    }
}

impl Headers for crate::session::HeaderFields {
    fn values<'a>(&'a self, name: &str) -> Vec<&'a str> {
        Self::values(self, name).collect()
    }

    fn get(&self, name: &str) -> Option<&str> {
        Self::get(self, name)
    }

    fn count(&self, name: &str) -> usize {
        Self::values(self, name).count()
    }

    fn for_each_value(&self, name: &str, f: &mut dyn FnMut(&str)) {
        Self::values(self, name).for_each(f);
    }
}

/// The header rules every request passes first, on both wires (RFC 9112 §3.2, RFC 9110
/// §5.5): a field value that is not UTF-8 text, no `Host` field, and more than one `Host`
/// field line get 400 with a JSON-RPC error body naming the problem
///
/// An HTTP/1.0 request without `Host` is refused too: the DNS-rebinding check
/// ([`HostPolicy`](super::HostPolicy)) has nothing to check without it. A binding serving
/// HTTP/2 passes the `:authority` pseudo-header as `Host`.
pub(crate) fn check_fields(headers: &(impl Headers + ?Sized)) -> Result<(), HttpResponse> {
    if let Some(name) = headers.undecodable() {
        let error = ErrorObject::invalid_request(format!(
            "the value of the header field {name} is not UTF-8 text"
        ));
        return Err(HttpResponse::json_error(400, None, &error));
    }
    let hosts = headers.count("Host");
    if hosts == 0 {
        let error = ErrorObject::invalid_request(
            "no Host header field (RFC 9112 section 3.2: every HTTP/1.1 request has one)",
        );
        return Err(HttpResponse::json_error(400, None, &error));
    }
    if hosts > 1 {
        let error =
            ErrorObject::invalid_request("more than one Host header field (RFC 9112 section 3.2)");
        return Err(HttpResponse::json_error(400, None, &error));
    }
    Ok(())
}

/// Which of the two MCP response types an `Accept` header allows
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Accepts {
    pub(crate) json: bool,
    pub(crate) sse: bool,
}

impl Accepts {
    /// Reads every `Accept` value; no header at all accepts anything (RFC 9110 §12.5.1)
    pub(crate) fn of(headers: &(impl Headers + ?Sized)) -> Self {
        let mut accepts = Self::default();
        let mut none = true;
        headers.for_each_value("Accept", &mut |value| {
            none = false;
            for range in value.split(',') {
                accepts.range(range);
            }
        });
        if none {
            return Self {
                json: true,
                sse: true,
            };
        }
        accepts
    }

    /// Takes one media range (`type/subtype`, then `;`-separated parameters)
    fn range(&mut self, range: &str) {
        // Most ranges have no parameters: a short scan for `;`, not a searcher.
        let (media, parameters) = match range.bytes().position(|b| b == b';') {
            Some(at) => (&range[..at], &range[at + 1..]),
            None => (range, ""),
        };
        let media = media.trim();
        let refused = !parameters.is_empty()
            && parameters.split(';').any(|p| {
                let p = p.trim();
                p.len() >= 2
                    && p[..2].eq_ignore_ascii_case("q=")
                    && p[2..].trim().parse::<f32>().is_ok_and(|q| q <= 0.0)
            });
        if refused {
            return;
        }
        // Compared without case, not lowercased into a copy.
        let is = |m: &str| media.eq_ignore_ascii_case(m);
        if is("*/*") {
            self.json = true;
            self.sse = true;
        } else if is("application/*") || is("application/json") {
            self.json = true;
        } else if is("text/*") || is("text/event-stream") {
            self.sse = true;
        }
    }

    pub(crate) fn any(self) -> bool {
        self.json || self.sse
    }
}

/// Whether a `Content-Type` value is `application/json` (parameters such as `charset` allowed)
pub(crate) fn is_json_content_type(value: &str) -> bool {
    value
        .split(';')
        .next()
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
}

#[cfg(test)]
mod tests {
    use super::Accepts;

    fn accepts(values: &[&str]) -> (bool, bool) {
        let mut headers: Vec<(&str, &str)> = values.iter().map(|v| ("Accept", *v)).collect();
        headers.insert(headers.len() / 2, ("Accepted", "*/*"));
        let a = Accepts::of(&headers[..]);
        // One buffer of fields reads the same.
        let fields = crate::session::HeaderFields::from(headers.clone());
        assert_eq!(Accepts::of(&fields), a, "{values:?}");
        (a.json, a.sse)
    }

    #[test]
    fn accept_ranges_are_read_without_case_with_q_zero_refusing() {
        assert_eq!(accepts(&[]), (true, true));
        assert_eq!(
            accepts(&["application/json, text/event-stream"]),
            (true, true)
        );
        assert_eq!(accepts(&["Application/JSON"]), (true, false));
        assert_eq!(
            accepts(&["TEXT/Event-Stream; charset=utf-8"]),
            (false, true)
        );
        assert_eq!(
            accepts(&["application/json", "text/event-stream"]),
            (true, true)
        );
        assert_eq!(accepts(&[" */* "]), (true, true));
        assert_eq!(accepts(&["application/*;q=0.5", "text/*"]), (true, true));
        assert_eq!(
            accepts(&["application/json;q=0, text/event-stream"]),
            (false, true)
        );
        assert_eq!(accepts(&["application/json; Q=0.0"]), (false, false));
        assert_eq!(accepts(&["text/html, image/png"]), (false, false));
        assert_eq!(accepts(&["application/jsonx"]), (false, false));
        assert_eq!(accepts(&["text/event-stream;a=1;q=0"]), (false, false));
        assert_eq!(accepts(&["text/event-stream;;q=0.1"]), (false, true));
        assert_eq!(accepts(&["application/json;"]), (true, false));
        assert_eq!(accepts(&["\u{a0}application/json\t"]), (true, false));
    }
}
