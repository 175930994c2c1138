//! The few URL operations OAuth discovery needs, done on the strings themselves
//!
//! A general URL parser would normalize (append `/` to a pathless URL, lowercase the host),
//! and the `resource` parameter must equal the Protected Resource Metadata's `resource`
//! byte for byte, so identifiers are kept as given and only split here.

/// An absolute `scheme://authority/path?query#fragment` split into its parts
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Split<'a> {
    pub(crate) scheme: &'a str,
    pub(crate) authority: &'a str,
    /// Empty or starting with `/`
    pub(crate) path: &'a str,
    pub(crate) query: Option<&'a str>,
    pub(crate) fragment: Option<&'a str>,
}

/// Splits an absolute http(s) URL; `None` if it is not one
pub(crate) fn split(url: &str) -> Option<Split<'_>> {
    let (scheme, rest) = url.split_once("://")?;
    if !(scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")) {
        return None;
    }
    let (rest, fragment) = match rest.split_once('#') {
        Some((r, f)) => (r, Some(f)),
        None => (rest, None),
    };
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, Some(q)),
        None => (rest, None),
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    if authority.is_empty() || authority.contains(char::is_whitespace) {
        return None;
    }
    Some(Split {
        scheme,
        authority,
        path,
        query,
        fragment,
    })
}

impl Split<'_> {
    /// `scheme://authority`
    pub(crate) fn origin(&self) -> String {
        format!("{}://{}", self.scheme, self.authority)
    }

    /// The path without a trailing `/` (so `/` and `` are both empty)
    pub(crate) fn trimmed_path(&self) -> &str {
        self.path.trim_end_matches('/')
    }
}

/// Where to look for Protected Resource Metadata (RFC 9728 §3.1, MCP authorization): the
/// URL the challenge advertised, then the path-based well-known URL, then the root one
pub(crate) fn prm_candidates(server_url: &str, advertised: Option<&str>) -> Vec<String> {
    let mut out: Vec<String> = advertised.map(str::to_owned).into_iter().collect();
    if let Some(s) = split(server_url) {
        let path = s.trimmed_path();
        if !path.is_empty() {
            out.push(format!(
                "{}/.well-known/oauth-protected-resource{path}",
                s.origin()
            ));
        }
        out.push(format!(
            "{}/.well-known/oauth-protected-resource",
            s.origin()
        ));
    }
    out.dedup();
    out
}

/// Where to look for an authorization server's metadata (RFC 8414 §3.1 and OpenID Connect
/// Discovery, in the MCP authorization spec's order): for an issuer with a path, the path
/// is inserted after the well-known prefix (never the root document of another tenant)
pub(crate) fn as_metadata_candidates(issuer: &str) -> Vec<String> {
    let Some(s) = split(issuer) else {
        return Vec::new();
    };
    let origin = s.origin();
    let path = s.trimmed_path();
    if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    }
}

/// Whether a Protected Resource Metadata `resource` may stand for the server at
/// `server_url`: same scheme and authority (case-insensitive), no fragment, and its path a
/// prefix of the server's path on a segment boundary (`http://h` covers `http://h/mcp`)
pub(crate) fn resource_covers(resource: &str, server_url: &str) -> bool {
    let (Some(r), Some(s)) = (split(resource), split(server_url)) else {
        return false;
    };
    if r.fragment.is_some()
        || !r.scheme.eq_ignore_ascii_case(s.scheme)
        || !r.authority.eq_ignore_ascii_case(s.authority)
    {
        return false;
    }
    let (rp, sp) = (r.trimmed_path(), s.trimmed_path());
    rp.is_empty() || sp == rp || sp.strip_prefix(rp).is_some_and(|t| t.starts_with('/'))
}

/// The canonical resource identifier of a server URL when no metadata names one: the URL
/// without its fragment
pub(crate) fn canonical_resource(server_url: &str) -> String {
    server_url
        .split_once('#')
        .map_or(server_url, |(u, _)| u)
        .to_owned()
}

/// A URL without its query and fragment: a DPoP proof's `htu` (RFC 9449 §4.2)
pub(crate) fn without_query(url: &str) -> String {
    url.split(['?', '#']).next().unwrap_or(url).to_owned()
}

/// `url` with `params` appended to its query string (form-encoded)
pub(crate) fn with_query(url: &str, params: &[(&str, &str)]) -> String {
    let (base, fragment) = match url.split_once('#') {
        Some((b, f)) => (b, Some(f)),
        None => (url, None),
    };
    let mut query = form_urlencoded::Serializer::new(String::new());
    for (k, v) in params {
        query.append_pair(k, v);
    }
    let query = query.finish();
    let sep = match base.find('?') {
        None => "?",
        Some(i) if i + 1 == base.len() || base.ends_with('&') => "",
        Some(_) => "&",
    };
    let mut out = format!("{base}{sep}{query}");
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(f);
    }
    out
}

/// The decoded query parameters of a URL (first value of each name wins)
pub(crate) fn query_params(url: &str) -> Vec<(String, String)> {
    let Some((_, rest)) = url.split_once('?') else {
        return Vec::new();
    };
    let query = rest.split_once('#').map_or(rest, |(q, _)| q);
    form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prm_order_is_advertised_then_path_then_root() {
        assert_eq!(
            prm_candidates(
                "http://localhost:9/mcp",
                Some("http://localhost:9/custom.json")
            ),
            [
                "http://localhost:9/custom.json",
                "http://localhost:9/.well-known/oauth-protected-resource/mcp",
                "http://localhost:9/.well-known/oauth-protected-resource",
            ]
        );
        assert_eq!(
            prm_candidates("https://h/", None),
            ["https://h/.well-known/oauth-protected-resource"]
        );
        assert!(prm_candidates("not a url", None).is_empty());
    }

    #[test]
    fn as_metadata_paths() {
        assert_eq!(
            as_metadata_candidates("http://a:1"),
            [
                "http://a:1/.well-known/oauth-authorization-server",
                "http://a:1/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            as_metadata_candidates("http://a:1/tenant1/"),
            [
                "http://a:1/.well-known/oauth-authorization-server/tenant1",
                "http://a:1/.well-known/openid-configuration/tenant1",
                "http://a:1/tenant1/.well-known/openid-configuration",
            ]
        );
    }

    #[test]
    fn resource_coverage() {
        assert!(resource_covers("http://h:1", "http://h:1/mcp"));
        assert!(resource_covers("http://h:1/mcp", "http://h:1/mcp"));
        assert!(resource_covers("HTTP://H:1/mcp/", "http://h:1/mcp"));
        assert!(resource_covers("http://h:1/a", "http://h:1/a/b"));
        assert!(!resource_covers("http://h:1/a", "http://h:1/ab"));
        assert!(!resource_covers(
            "https://evil.example.com/mcp",
            "http://h:1/mcp"
        ));
        assert!(!resource_covers("http://h:1/mcp#x", "http://h:1/mcp"));
        assert!(!resource_covers("http://h:2/mcp", "http://h:1/mcp"));
        assert!(!resource_covers("mailto:x", "http://h:1/mcp"));
    }

    #[test]
    fn queries() {
        assert_eq!(
            with_query("http://a/authorize", &[("a", "x y"), ("b", "1&2")]),
            "http://a/authorize?a=x+y&b=1%262"
        );
        assert_eq!(
            with_query("http://a/p?k=v", &[("a", "b")]),
            "http://a/p?k=v&a=b"
        );
        assert_eq!(with_query("http://a/p?", &[("a", "b")]), "http://a/p?a=b");
        assert_eq!(
            query_params("http://localhost:3000/callback?code=c%20d&state=s&iss=http%3A%2F%2Fa#f"),
            [
                ("code".to_owned(), "c d".to_owned()),
                ("state".to_owned(), "s".to_owned()),
                ("iss".to_owned(), "http://a".to_owned())
            ]
        );
        assert_eq!(canonical_resource("http://a/mcp#x"), "http://a/mcp");
    }
}
