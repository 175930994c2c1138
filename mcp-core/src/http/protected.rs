//! The resource-server side of OAuth over HTTP: what a protected MCP server answers before
//! its handler runs
//!
//! [`ResourceServer`] knows the resource identifier, its Protected Resource Metadata and
//! where that document is served. A binding asks it for the document
//! ([`ResourceServer::metadata_path`], [`ResourceServer::metadata_document`]), extracts the
//! bearer token ([`bearer_token`]), lets the application verify it, and answers failures
//! with the [`Denial`] built here ([`ResourceServer::gate`] and [`ResourceServer::verdict`]
//! make those two steps for a binding): 401 with `WWW-Authenticate: Bearer ...,
//! resource_metadata="..."` for a missing or invalid token, 403 `insufficient_scope` for a
//! token without the scopes the request needs.

use super::{Headers, HttpResponse};
use crate::auth::ProtectedResourceMetadata;
use crate::auth::url;

/// What a protected endpoint does with a request before the MCP server sees it, from
/// [`ResourceServer::gate`]
#[derive(Debug, Clone)]
pub enum Gate<'a> {
    /// Answer with this instead of running the request (the metadata document, or 401)
    Answer(HttpResponse),
    /// Verify this bearer token, then ask [`ResourceServer::verdict`]
    Verify(&'a str),
}

/// A refusal to send instead of running the request
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Denial {
    /// 401 or 403
    pub status: u16,
    /// The `WWW-Authenticate` header value
    pub www_authenticate: String,
    /// A JSON body `{"error": ..., "error_description": ...}`
    pub body: Vec<u8>,
}

impl From<Denial> for HttpResponse {
    fn from(denial: Denial) -> Self {
        let mut response = Self::empty(denial.status);
        response.headers = vec![
            ("Content-Type", "application/json".to_owned()),
            ("WWW-Authenticate", denial.www_authenticate),
        ];
        response.body = denial.body;
        response
    }
}

/// The protection of one MCP endpoint
#[derive(Debug, Clone)]
pub struct ResourceServer {
    metadata: ProtectedResourceMetadata,
    metadata_path: String,
    metadata_url: String,
    required_scopes: Vec<String>,
}

impl ResourceServer {
    /// Protects the MCP endpoint at `server_url` (its resource identifier) with the
    /// authorization server `issuer`; the metadata is served at the path-based well-known
    /// location. `None` if `server_url` is not an absolute http(s) URL.
    pub fn new(server_url: &str, issuer: &str) -> Option<Self> {
        let split = url::split(server_url)?;
        let metadata_path = format!(
            "/.well-known/oauth-protected-resource{}",
            split.trimmed_path()
        );
        let metadata_url = format!("{}{metadata_path}", split.origin());
        Some(Self {
            metadata: ProtectedResourceMetadata::new(url::canonical_resource(server_url), issuer),
            metadata_path,
            metadata_url,
            required_scopes: Vec::new(),
        })
    }

    /// Scopes every request needs (advertised as `scopes_supported` and in challenges)
    pub fn required_scopes(mut self, scopes: &[&str]) -> Self {
        self.required_scopes = scopes.iter().map(|s| (*s).to_owned()).collect();
        let mut supported = self.metadata.scopes_supported.take().unwrap_or_default();
        for s in &self.required_scopes {
            if !supported.contains(s) {
                supported.push(s.clone());
            }
        }
        self.metadata.scopes_supported = Some(supported);
        self
    }

    /// The path the metadata is served at (answer GET there with
    /// [`ResourceServer::metadata_document`])
    pub fn metadata_path(&self) -> &str {
        &self.metadata_path
    }

    /// The metadata as a JSON body
    pub fn metadata_document(&self) -> Vec<u8> {
        serde_json::to_vec(&self.metadata).expect("metadata serializes")
    }

    /// 401 for a request without a bearer token
    pub(crate) fn missing_token(&self) -> Denial {
        self.deny(
            401,
            None,
            "invalid_request",
            "no bearer token",
            &self.required_scopes,
        )
    }

    /// 401 for a token that is invalid, expired or not for this resource
    pub fn invalid_token(&self, description: &str) -> Denial {
        self.deny(
            401,
            Some("invalid_token"),
            "invalid_token",
            description,
            &self.required_scopes,
        )
    }

    /// 403 for a token without `needed` scopes
    pub fn insufficient_scope(&self, needed: &[String]) -> Denial {
        self.deny(
            403,
            Some("insufficient_scope"),
            "insufficient_scope",
            "the token lacks a required scope",
            needed,
        )
    }

    /// `None` when `granted` holds every scope in `needed` (and the required ones),
    /// else the 403 to send: the step-up challenge naming them all
    pub fn check_scopes(&self, granted: &[String], needed: &[String]) -> Option<Denial> {
        let mut all: Vec<String> = self.required_scopes.clone();
        for s in needed {
            if !all.contains(s) {
                all.push(s.clone());
            }
        }
        let ok = all.iter().all(|s| granted.contains(s));
        (!ok).then(|| self.insufficient_scope(&all))
    }

    /// The first step for every request at the protected endpoint: a GET of the metadata
    /// path is answered with the document, a request without a bearer token with 401;
    /// otherwise the token is to be verified (by the application)
    pub fn gate<'a>(
        &self,
        method: &str,
        path: &str,
        headers: &'a (impl Headers + ?Sized),
    ) -> Gate<'a> {
        if method == "GET" && path == self.metadata_path() {
            let mut response = HttpResponse::empty(200);
            response.headers = vec![("Content-Type", "application/json".to_owned())];
            response.body = self.metadata_document();
            return Gate::Answer(response);
        }
        match bearer_token(headers.get("Authorization")) {
            Some(token) => Gate::Verify(token),
            None => Gate::Answer(self.missing_token().into()),
        }
    }

    /// The second step, after the application verified the token: `granted` is the
    /// token's scopes, or why it is invalid. `None` lets the request through; otherwise
    /// 401 `invalid_token` or 403 `insufficient_scope`
    pub fn verdict(&self, granted: Result<&[String], &str>) -> Option<HttpResponse> {
        let denial = match granted {
            Err(why) => self.invalid_token(why),
            Ok(scopes) => self.check_scopes(scopes, &[])?,
        };
        Some(denial.into())
    }

    fn deny(
        &self,
        status: u16,
        error: Option<&str>,
        body_error: &str,
        description: &str,
        scopes: &[String],
    ) -> Denial {
        let quote = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"");
        let mut parts = Vec::new();
        if let Some(error) = error {
            parts.push(format!("error=\"{error}\""));
            parts.push(format!("error_description=\"{}\"", quote(description)));
        }
        if !scopes.is_empty() {
            parts.push(format!("scope=\"{}\"", quote(&scopes.join(" "))));
        }
        parts.push(format!(
            "resource_metadata=\"{}\"",
            quote(&self.metadata_url)
        ));
        Denial {
            status,
            www_authenticate: format!("Bearer {}", parts.join(", ")),
            body: serde_json::to_vec(&serde_json::json!({
                "error": body_error,
                "error_description": description,
            }))
            .expect("json"),
        }
    }
}

/// The scopes that requests for particular tools, resources or prompts need, which an
/// [`HttpServer`](super::HttpServer) checks before the session sees a request
/// ([`HttpServer::set_required_scopes`](super::HttpServer::set_required_scopes)); the
/// server catalog's [`Access`](crate::server::Access) is one
pub trait RequiredScopes: Send + Sync + std::fmt::Debug {
    /// The scopes a `method` request naming `name` needs (a `tools/call` or `prompts/get`
    /// by its `name`, a `resources/read` by its `uri`); `None` when it needs none
    fn required(&self, method: &str, name: &str) -> Option<&[String]>;
}

/// The 403 `insufficient_scope` of an endpoint without a [`ResourceServer`]: the same
/// challenge, without `resource_metadata` (a client cannot step up there, but learns why)
pub fn insufficient_scope(needed: &[String]) -> Denial {
    let description = "the token lacks a required scope";
    Denial {
        status: 403,
        www_authenticate: format!(
            "Bearer error=\"insufficient_scope\", error_description=\"{description}\", scope=\"{}\"",
            needed.join(" ").replace('\\', "\\\\").replace('"', "\\\"")
        ),
        body: serde_json::to_vec(&serde_json::json!({
            "error": "insufficient_scope",
            "error_description": description,
        }))
        .expect("json"),
    }
}

/// The token of an `Authorization: Bearer <token>` header (scheme case-insensitive)
pub fn bearer_token(authorization: Option<&str>) -> Option<&str> {
    let (scheme, token) = authorization?.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty() && !token.contains(' '))
        .then_some(token)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::BearerChallenge;

    #[test]
    fn challenges_round_trip_through_the_client_parser() {
        let rs = ResourceServer::new("http://127.0.0.1:4100/mcp", "http://127.0.0.1:4101")
            .unwrap()
            .required_scopes(&["mcp:read"]);
        assert_eq!(
            rs.metadata_path(),
            "/.well-known/oauth-protected-resource/mcp"
        );
        let d = rs.missing_token();
        assert_eq!(d.status, 401);
        let c = BearerChallenge::from_headers([d.www_authenticate.as_str()]).unwrap();
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some(rs.metadata_url.as_str())
        );
        assert_eq!(c.scope.as_deref(), Some("mcp:read"));
        let d = rs
            .check_scopes(&["mcp:read".into()], &["mcp:write".into()])
            .unwrap();
        assert_eq!(d.status, 403);
        let c = BearerChallenge::from_headers([d.www_authenticate.as_str()]).unwrap();
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(c.scope.as_deref(), Some("mcp:read mcp:write"));
        assert!(rs.check_scopes(&["mcp:read".into()], &[]).is_none());
        let d = rs.invalid_token("expired \"yesterday\"");
        let c = BearerChallenge::from_headers([d.www_authenticate.as_str()]).unwrap();
        assert_eq!(
            c.error_description.as_deref(),
            Some("expired \"yesterday\"")
        );
        let doc: serde_json::Value = serde_json::from_slice(&rs.metadata_document()).unwrap();
        assert_eq!(doc["resource"], "http://127.0.0.1:4100/mcp");
        assert_eq!(doc["authorization_servers"][0], "http://127.0.0.1:4101");
    }

    #[test]
    fn the_gate_serves_metadata_refuses_and_admits() {
        let rs = ResourceServer::new("http://127.0.0.1:4100/mcp", "http://127.0.0.1:4101")
            .unwrap()
            .required_scopes(&["mcp:read"]);
        let none: &[(&str, &str)] = &[];
        let Gate::Answer(doc) = rs.gate("GET", rs.metadata_path(), none) else {
            panic!("the metadata document is public")
        };
        assert_eq!(doc.status, 200);
        assert_eq!(doc.body, rs.metadata_document());
        assert_eq!(doc.header("Content-Type"), Some("application/json"));
        let Gate::Answer(missing) = rs.gate("POST", "/mcp", none) else {
            panic!("no token: 401")
        };
        assert_eq!(missing.status, 401);
        assert_eq!(
            missing.header("WWW-Authenticate"),
            Some(rs.missing_token().www_authenticate.as_str())
        );
        let basic = [("authorization", "Basic abc")];
        assert!(matches!(rs.gate("POST", "/mcp", &basic[..]), Gate::Answer(a) if a.status == 401));
        let bearer = [("Authorization", "Bearer tok")];
        assert!(matches!(
            rs.gate("POST", "/mcp", &bearer[..]),
            Gate::Verify("tok")
        ));
        // A GET of another path needs a token like any request.
        assert!(matches!(
            rs.gate("GET", "/mcp", &bearer[..]),
            Gate::Verify("tok")
        ));

        let invalid = rs.verdict(Err("expired")).unwrap();
        assert_eq!(invalid.status, 401);
        assert!(
            invalid
                .header("WWW-Authenticate")
                .unwrap()
                .contains("invalid_token")
        );
        let under = rs.verdict(Ok(&["other".to_owned()])).unwrap();
        assert_eq!(under.status, 403);
        assert!(
            under
                .header("WWW-Authenticate")
                .unwrap()
                .contains("insufficient_scope")
        );
        assert!(rs.verdict(Ok(&["mcp:read".to_owned()])).is_none());
    }

    #[test]
    fn bearer_tokens() {
        assert_eq!(bearer_token(Some("Bearer abc")), Some("abc"));
        assert_eq!(bearer_token(Some("bearer  abc ")), Some("abc"));
        assert_eq!(bearer_token(Some("Basic abc")), None);
        assert_eq!(bearer_token(Some("Bearer")), None);
        assert_eq!(bearer_token(None), None);
    }
}
