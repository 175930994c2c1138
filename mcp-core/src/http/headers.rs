//! Request headers as the rules read them: case-insensitive names, and the names MCP uses

/// The session id header (2025 wire)
pub const MCP_SESSION_ID: &str = "Mcp-Session-Id";
/// The protocol version header (both wires)
pub const MCP_PROTOCOL_VERSION: &str = "MCP-Protocol-Version";
/// The method mirror header (2026 wire)
pub const MCP_METHOD: &str = "Mcp-Method";
/// The name mirror header (2026 wire): `params.name`, `params.uri` or `params.taskId`
pub const MCP_NAME: &str = "Mcp-Name";
/// The SSE resumption header (2025 wire)
pub const LAST_EVENT_ID: &str = "Last-Event-ID";

/// Read access to a request's header fields, by case-insensitive name
///
/// Implemented for slices of `(name, value)` pairs, which is what a binding builds from its
/// HTTP library's header map (values that are not UTF-8 can be left out: no MCP header
/// needs them).
pub trait Headers {
    /// Every value of the header `name` (ASCII case-insensitive), in order
    fn values<'a>(&'a self, name: &str) -> Vec<&'a str>;

    /// The first value of the header `name`, if any
    fn get(&self, name: &str) -> Option<&str> {
        self.values(name).into_iter().next()
    }
}

impl<N: AsRef<str>, V: AsRef<str>> Headers for [(N, V)] {
    fn values<'a>(&'a self, name: &str) -> Vec<&'a str> {
        self.iter()
            .filter(|(n, _)| n.as_ref().eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_ref())
            .collect()
    }
}

impl<N: AsRef<str>, V: AsRef<str>> Headers for Vec<(N, V)> {
    fn values<'a>(&'a self, name: &str) -> Vec<&'a str> {
        self.as_slice().values(name)
    }
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
        let values = headers.values("Accept");
        if values.is_empty() {
            return Self {
                json: true,
                sse: true,
            };
        }
        let mut accepts = Self::default();
        for range in values.iter().flat_map(|v| v.split(',')) {
            let mut parts = range.split(';');
            let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
            let refused = parts.any(|p| {
                let p = p.trim();
                p.len() >= 2
                    && p[..2].eq_ignore_ascii_case("q=")
                    && p[2..].trim().parse::<f32>().is_ok_and(|q| q <= 0.0)
            });
            if refused {
                continue;
            }
            match media.as_str() {
                "*/*" => {
                    accepts.json = true;
                    accepts.sse = true;
                }
                "application/*" | "application/json" => accepts.json = true,
                "text/*" | "text/event-stream" => accepts.sse = true,
                _ => {}
            }
        }
        accepts
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
