//! `WWW-Authenticate` (RFC 9110 §11.6.1): the challenges a resource server sends with 401
//! and 403, and the Bearer parameters OAuth uses (RFC 6750 §3, RFC 9728 §5.1)

/// One challenge: an auth scheme and its parameters (names lowercased; values unquoted)
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub(crate) struct Challenge {
    /// The auth scheme as sent (`Bearer`, `DPoP`, ...)
    pub scheme: String,
    /// `name=value` parameters, names lowercased, quoted strings unescaped
    pub params: Vec<(String, String)>,
    /// A token68 in place of parameters, if the challenge carries one
    pub token68: Option<String>,
}

impl Challenge {
    /// A parameter's value (case-insensitive name)
    pub(crate) fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// The Bearer challenge's parameters that drive authorization
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct BearerChallenge {
    /// `resource_metadata`: where the Protected Resource Metadata is (RFC 9728 §5.1)
    pub resource_metadata: Option<String>,
    /// `scope`: the scopes the request needs (space separated)
    pub scope: Option<String>,
    /// `error`: `invalid_token`, `insufficient_scope`, ...
    pub error: Option<String>,
    /// `error_description`
    pub error_description: Option<String>,
}

impl BearerChallenge {
    /// The Bearer challenge among the values of every `WWW-Authenticate` header of a
    /// response; `None` when there is none (another scheme, or no header)
    pub fn from_headers<'a>(values: impl IntoIterator<Item = &'a str>) -> Option<Self> {
        values
            .into_iter()
            .flat_map(parse)
            .find(|c| c.scheme.eq_ignore_ascii_case("bearer"))
            .map(|c| Self::from_challenge(&c))
    }

    fn from_challenge(c: &Challenge) -> Self {
        Self {
            resource_metadata: c.param("resource_metadata").map(str::to_owned),
            scope: c
                .param("scope")
                .filter(|s| !s.trim().is_empty())
                .map(str::to_owned),
            error: c.param("error").map(str::to_owned),
            error_description: c.param("error_description").map(str::to_owned),
        }
    }
}

/// What a 401 or 403 asks for: the Bearer challenge's parameters, else the `DPoP`
/// challenge's (RFC 9449 §7.1 shares them), and the `DPoP` challenge itself if offered
#[derive(Debug, Clone, Default)]
pub(crate) struct OAuthChallenge {
    pub(crate) params: BearerChallenge,
    /// The `DPoP` challenge's parameters, when the server offered that scheme
    pub(crate) dpop: Option<BearerChallenge>,
}

impl OAuthChallenge {
    pub(crate) fn from_headers<'a>(values: impl IntoIterator<Item = &'a str>) -> Self {
        let all: Vec<Challenge> = values.into_iter().flat_map(parse).collect();
        let find = |scheme: &str| {
            all.iter()
                .find(|c| c.scheme.eq_ignore_ascii_case(scheme))
                .map(BearerChallenge::from_challenge)
        };
        let dpop = find("dpop");
        let params = find("bearer").or_else(|| dpop.clone()).unwrap_or_default();
        Self { params, dpop }
    }
}

/// Parses one `WWW-Authenticate` header value into its challenges; malformed parts end the
/// parse (what came before is kept), so bad input never panics
pub(crate) fn parse(value: &str) -> Vec<Challenge> {
    let mut out: Vec<Challenge> = Vec::new();
    let mut p = Parser {
        s: value.as_bytes(),
        i: 0,
    };
    loop {
        p.skip_ws_commas();
        let Some(scheme) = p.token() else { break };
        let mut challenge = Challenge {
            scheme,
            ..Challenge::default()
        };
        // Parameters (or a token68) follow after at least one space.
        loop {
            p.skip_ws();
            let save = p.i;
            let Some(name) = p.token() else {
                // A token68 (base64-ish with '=' padding) or the end.
                if let Some(t) = p.token68() {
                    challenge.token68 = Some(t);
                }
                break;
            };
            p.skip_ws();
            if p.peek() != Some(b'=') {
                // Not a parameter: the next challenge's scheme.
                p.i = save;
                break;
            }
            p.i += 1;
            if challenge.params.is_empty() && p.s[p.i..].iter().all(|c| *c == b'=') {
                // `abc==`: a token68 with its padding, not a parameter.
                let pad = p.s.len() - p.i;
                challenge.token68 = Some(format!("{name}={}", "=".repeat(pad)));
                p.i = p.s.len();
                break;
            }
            p.skip_ws();
            let value = if p.peek() == Some(b'"') {
                match p.quoted() {
                    Some(v) => v,
                    None => {
                        out.push(challenge);
                        return out;
                    }
                }
            } else {
                p.token().unwrap_or_default()
            };
            challenge.params.push((name.to_ascii_lowercase(), value));
            p.skip_ws();
            if p.peek() == Some(b',') {
                p.i += 1;
                // Another parameter of this challenge, or the next challenge.
                continue;
            }
            break;
        }
        out.push(challenge);
        if p.i >= p.s.len() {
            break;
        }
    }
    out
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

fn is_tchar(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c)
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.i += 1;
        }
    }

    fn skip_ws_commas(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b',')) {
            self.i += 1;
        }
    }

    fn token(&mut self) -> Option<String> {
        let start = self.i;
        while self.peek().is_some_and(is_tchar) {
            self.i += 1;
        }
        (self.i > start).then(|| String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }

    fn token68(&mut self) -> Option<String> {
        let start = self.i;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || b"-._~+/=".contains(&c))
        {
            self.i += 1;
        }
        (self.i > start).then(|| String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }

    /// A quoted string (the opening quote is at `i`); `None` when it never closes
    fn quoted(&mut self) -> Option<String> {
        self.i += 1;
        let mut out = Vec::new();
        while let Some(c) = self.peek() {
            self.i += 1;
            match c {
                b'"' => return Some(String::from_utf8_lossy(&out).into_owned()),
                b'\\' => {
                    let escaped = self.peek()?;
                    self.i += 1;
                    out.push(escaped);
                }
                _ => out.push(c),
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_parameters() {
        let c = BearerChallenge::from_headers([
            r#"Bearer error="invalid_token", error_description="Missing Authorization header", scope="mcp:basic mcp:write", resource_metadata="http://localhost:1/.well-known/oauth-protected-resource/mcp""#,
        ])
        .unwrap();
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
        assert_eq!(c.scope.as_deref(), Some("mcp:basic mcp:write"));
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("http://localhost:1/.well-known/oauth-protected-resource/mcp")
        );
    }

    #[test]
    fn several_challenges_and_token_values() {
        let all = parse(
            r#"Basic realm="a\"b", DPoP algs="ES256", Bearer scope=x, error=insufficient_scope"#,
        );
        assert_eq!(all.len(), 3);
        assert_eq!(all[0].param("realm"), Some("a\"b"));
        assert_eq!(all[1].scheme, "DPoP");
        assert_eq!(all[2].param("SCOPE"), Some("x"));
        assert_eq!(all[2].param("error"), Some("insufficient_scope"));
        let c = BearerChallenge::from_headers(["Basic realm=x", "bearer"]).unwrap();
        assert_eq!(c, BearerChallenge::default());
        assert!(BearerChallenge::from_headers(["Basic realm=x"]).is_none());
    }

    #[test]
    fn dpop_challenges() {
        let c = OAuthChallenge::from_headers([
            r#"DPoP algs="ES256", error="use_dpop_nonce", resource_metadata="http://rs/prm""#,
        ]);
        let dpop = c.dpop.expect("a DPoP challenge");
        assert_eq!(dpop.error.as_deref(), Some("use_dpop_nonce"));
        assert_eq!(c.params.resource_metadata.as_deref(), Some("http://rs/prm"));
        // Bearer's parameters win where both are offered.
        let c = OAuthChallenge::from_headers([r#"DPoP algs="ES256", Bearer scope="a b""#]);
        assert!(c.dpop.is_some());
        assert_eq!(c.params.scope.as_deref(), Some("a b"));
        let c = OAuthChallenge::from_headers([r#"Bearer scope="a""#]);
        assert!(c.dpop.is_none());
    }

    #[test]
    fn malformed_input_never_panics() {
        for s in [
            "",
            ",,,",
            "Bearer",
            "Bearer =",
            "Bearer a=\"unterminated",
            "Bearer a=\"x\\",
            "Bearer abc==",
            "=\"x\"",
            "Bearer a=,b",
            "\u{e9}Bearer a=b",
        ] {
            let _ = parse(s);
            for split in 0..s.len() {
                if s.is_char_boundary(split) {
                    let _ = parse(&s[..split]);
                }
            }
        }
        assert_eq!(
            parse("Negotiate abc==")[0].token68.as_deref(),
            Some("abc==")
        );
    }
}
