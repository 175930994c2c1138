//! Who is calling: the verified principal (`Principal`), what a handler reads of its request
//! (`RequestInfo`), a JWT access-token verifier (`JwtVerifier`) and the rules of a protected
//! endpoint (`ResourceServer`)
//!
//! The core binds what outlives a request (2025 sessions, tasks, sealed `requestState`) to
//! the principal a front end hands it with the request; these classes carry it between the
//! Python front ends, the verifier and the handlers.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::str::FromStr;
use std::sync::Arc;

use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use mcp_sansio::http::HttpResponse;
use mcp_sansio::http::protected::{Gate, ResourceServer};
use mcp_sansio::schema::meta;
use mcp_sansio::session::{Caller, Principal};
use mcp_sansio::{Era, ProtocolVersion};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::convert;
use crate::convert::FieldValue;

/// Who an access token was issued to, as the verifier found: `subject` (the user),
/// `client_id` (the OAuth client), the `scopes` it grants and its decoded `claims`
///
/// Two principals are equal (and hash alike) when their subject and client id are: a
/// refreshed token with other scopes is the same caller.
#[pyclass(module = "mcp_sansio._core", name = "Principal", frozen)]
#[derive(Clone)]
pub(crate) struct PyPrincipal {
    pub(crate) principal: Principal,
}

/// A `str` or a list of them
#[derive(FromPyObject)]
pub(crate) enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    /// The strings; one string is split at whitespace (an OAuth `scope` value)
    fn split(self) -> Vec<String> {
        match self {
            Self::One(s) => s.split_whitespace().map(str::to_owned).collect(),
            Self::Many(v) => v,
        }
    }
}

#[pymethods]
impl PyPrincipal {
    /// See the stub (`_core.pyi`)
    #[new]
    #[pyo3(signature = (subject=None, client_id=None, scopes=None, claims=None))]
    fn new(
        subject: Option<String>,
        client_id: Option<String>,
        scopes: Option<OneOrMany>,
        claims: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let mut principal = Principal::new(subject, client_id)
            .with_scopes(scopes.map(OneOrMany::split).unwrap_or_default());
        if let Some(claims) = claims.filter(|c| !c.is_none()) {
            principal = principal.with_claims(convert::to_json(claims)?);
        }
        Ok(Self { principal })
    }

    /// The user the token stands for (`sub`), if known
    #[getter]
    fn subject(&self) -> Option<&str> {
        self.principal.subject.as_deref()
    }

    /// The OAuth client the token was issued to (`client_id` or `azp`), if known
    #[getter]
    fn client_id(&self) -> Option<&str> {
        self.principal.client_id.as_deref()
    }

    /// The scopes the token grants
    #[getter]
    fn scopes(&self) -> Vec<String> {
        self.principal.scopes.clone()
    }

    /// The token's claims as the verifier decoded them (a JWT's payload), or `None`
    #[getter]
    fn claims<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match &self.principal.claims {
            Some(c) => convert::to_py(py, c),
            None => Ok(py.None().into_bound(py)),
        }
    }

    /// Whether the token grants every scope in `scopes`
    fn has_scopes(&self, scopes: OneOrMany) -> bool {
        self.principal.has_scopes(&scopes.split())
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Self>()
            .is_ok_and(|o| o.get().principal == self.principal)
    }

    fn __hash__(&self) -> u64 {
        let mut h = DefaultHasher::new();
        self.principal.hash(&mut h);
        h.finish()
    }

    fn __repr__(&self) -> String {
        format!(
            "Principal(subject={}, client_id={}, scopes={:?})",
            py_repr(self.principal.subject.as_deref()),
            py_repr(self.principal.client_id.as_deref()),
            self.principal.scopes
        )
    }
}

/// An optional string as Python writes it (`'x'` or `None`)
fn py_repr(s: Option<&str>) -> String {
    s.map_or_else(|| "None".to_owned(), |s| format!("{s:?}"))
}

/// What a handler reads of the request it serves: who sent it (`principal`, `headers`,
/// `session_id`), its `_meta`, the client's `client_info` and `client_capabilities`, the
/// `protocol_version` and `era`
///
/// Made by the session for every request it hands the application (the `info` of
/// `ToolCall`, `ResourceRead`, `PromptGet`, `CompletionRequest` and `Request`); each value
/// is converted when read.
#[pyclass(module = "mcp_sansio._core", name = "RequestInfo", frozen)]
pub(crate) struct PyRequestInfo {
    method: String,
    caller: Option<Arc<Caller>>,
    version: ProtocolVersion,
    params: Option<Box<RawValue>>,
    capabilities: Arc<Value>,
    /// Legacy era: the `clientInfo` of `initialize`
    peer_info: Option<Value>,
}

impl PyRequestInfo {
    /// The context of a request: its caller, version, params (for `_meta`), the client's
    /// capabilities for it, and (legacy) the client info of the handshake
    pub(crate) fn new(
        method: String,
        caller: Option<Arc<Caller>>,
        version: ProtocolVersion,
        params: Option<Box<RawValue>>,
        capabilities: Arc<Value>,
        peer_info: Option<Value>,
    ) -> Self {
        Self {
            method,
            caller,
            version,
            params,
            capabilities,
            peer_info,
        }
    }

    /// The request's `_meta`, if it has one
    fn meta_value(&self) -> Option<Value> {
        #[derive(serde::Deserialize)]
        struct Params {
            #[serde(rename = "_meta")]
            meta: Option<Value>,
        }
        let params: Params = serde_json::from_str(self.params.as_deref()?.get()).ok()?;
        params.meta.filter(Value::is_object)
    }
}

#[pymethods]
impl PyRequestInfo {
    /// The request's method (`tools/call`, ...)
    #[getter]
    fn method(&self) -> &str {
        &self.method
    }

    /// The verified principal of the request's access token; `None` without authorization
    #[getter]
    fn principal(&self) -> Option<PyPrincipal> {
        let principal = self.caller.as_ref()?.principal.clone()?;
        Some(PyPrincipal { principal })
    }

    /// The HTTP request's header fields as `(name, value)` pairs, in order, names as sent;
    /// `None` when the request did not come over HTTP
    #[getter]
    fn headers<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyList>>> {
        let Some(headers) = self.caller.as_ref().and_then(|c| c.headers.as_ref()) else {
            return Ok(None);
        };
        let pairs = headers
            .iter()
            .map(|(n, v)| PyTuple::new(py, [PyString::new(py, n), PyString::new(py, v)]))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(Some(PyList::new(py, pairs)?))
    }

    /// The 2025 wire's `Mcp-Session-Id` of the session the request came in, else `None`
    #[getter]
    fn session_id(&self) -> Option<&str> {
        self.caller.as_ref()?.session_id.as_deref()
    }

    /// The request's `_meta` (a dict), or `None`
    #[getter]
    fn meta<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self.meta_value() {
            Some(m) => convert::to_py(py, &m),
            None => Ok(py.None().into_bound(py)),
        }
    }

    /// The client's implementation info (`name`, `version`, ...): the `clientInfo` of
    /// `initialize` (legacy), or of the request's `_meta` (2026, if it sent one); else `None`
    #[getter]
    fn client_info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let info = match self.version.era() {
            Era::Legacy => self.peer_info.clone(),
            _ => self
                .meta_value()
                .and_then(|mut m| m.get_mut(meta::CLIENT_INFO).map(Value::take))
                .filter(Value::is_object),
        };
        match info {
            Some(i) => convert::to_py(py, &i),
            None => Ok(py.None().into_bound(py)),
        }
    }

    /// The client's capabilities for this request (legacy: of `initialize`; 2026: of the
    /// request's `_meta`)
    #[getter]
    fn client_capabilities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_py(py, &self.capabilities)
    }

    /// The protocol version of the request (negotiated, or its own on the 2026 wire)
    #[getter]
    fn protocol_version(&self) -> &'static str {
        self.version.as_str()
    }

    /// `"legacy"` (a version with the `initialize` handshake) or `"modern"` (2026-07-28
    /// on), as `Client(era=...)` names them
    #[getter]
    fn era(&self) -> &'static str {
        crate::rules::era_name(self.version.era())
    }

    fn __repr__(&self) -> String {
        let principal = self.caller.as_ref().and_then(|c| c.principal.as_ref());
        format!(
            "RequestInfo(method={:?}, protocol_version={:?}, subject={}, session_id={})",
            self.method,
            self.version.as_str(),
            py_repr(principal.and_then(|p| p.subject.as_deref())),
            py_repr(self.caller.as_ref().and_then(|c| c.session_id.as_deref())),
        )
    }
}

/// The Python tuple of a complete response: `("complete", status, headers, body)`
pub(crate) fn complete<'py>(py: Python<'py>, r: HttpResponse) -> PyResult<Bound<'py, PyTuple>> {
    let headers: Vec<(&'static str, String)> = r.headers;
    PyTuple::new(
        py,
        [
            "complete".into_pyobject(py)?.into_any(),
            r.status.into_pyobject(py)?.into_any(),
            headers.into_pyobject(py)?.into_any(),
            PyBytes::new(py, &r.body).into_any(),
        ],
    )
}

/// The protection of one MCP endpoint (an OAuth protected resource): its resource
/// identifier, its authorization server, the scopes every request needs, and where its
/// Protected Resource Metadata is served
#[pyclass(module = "mcp_sansio._core", name = "ResourceServer", frozen)]
pub(crate) struct PyResourceServer {
    pub(crate) rules: Arc<ResourceServer>,
    resource: String,
    authorization_server: String,
    scopes: Vec<String>,
}

#[pymethods]
impl PyResourceServer {
    /// See the stub (`_core.pyi`)
    #[new]
    #[pyo3(signature = (resource, authorization_server, *, scopes=None))]
    fn new(
        resource: String,
        authorization_server: String,
        scopes: Option<OneOrMany>,
    ) -> PyResult<Self> {
        let scopes = scopes.map(OneOrMany::split).unwrap_or_default();
        let rules = ResourceServer::new(&resource, &authorization_server).ok_or_else(|| {
            PyValueError::new_err(format!(
                "resource must be the endpoint's absolute http(s) URL, not {resource:?}"
            ))
        })?;
        let names: Vec<&str> = scopes.iter().map(String::as_str).collect();
        let rules = rules.required_scopes(&names);
        Ok(Self {
            rules: Arc::new(rules),
            resource,
            authorization_server,
            scopes,
        })
    }

    /// The resource identifier (the endpoint's URL)
    #[getter]
    fn resource(&self) -> &str {
        &self.resource
    }

    /// The authorization server's issuer URL
    #[getter]
    fn authorization_server(&self) -> &str {
        &self.authorization_server
    }

    /// The scopes every request needs
    #[getter]
    fn scopes(&self) -> Vec<String> {
        self.scopes.clone()
    }

    /// The path the Protected Resource Metadata is served at
    /// (`/.well-known/oauth-protected-resource` and the endpoint's path)
    #[getter]
    fn metadata_path(&self) -> &str {
        self.rules.metadata_path()
    }

    /// The metadata document (JSON bytes)
    #[getter]
    fn metadata_document<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.rules.metadata_document())
    }

    /// The first step for a request: `("complete", 200, headers, document)` for a GET of
    /// the metadata path, `("complete", 401, headers, body)` without a bearer token, else
    /// `("verify", token)`: verify it, then ask `verdict`
    fn gate<'py>(
        &self,
        py: Python<'py>,
        method: &str,
        path: &str,
        headers: Vec<(String, FieldValue)>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let fields: Vec<(String, Vec<u8>)> = headers
            .into_iter()
            .map(|(n, v)| (n, v.into_bytes()))
            .collect();
        match self.rules.gate(method, path, fields.as_slice()) {
            Gate::Answer(answer) => complete(py, answer),
            Gate::Verify(token) => PyTuple::new(
                py,
                [
                    "verify".into_pyobject(py)?.into_any(),
                    PyString::new(py, token).into_any(),
                ],
            ),
        }
    }

    /// The second step, after the verifier: `granted` is the token's `Principal`, or why
    /// it is invalid (a `str`, for the 401's `error_description`). `None` lets the request
    /// through; else `("complete", 401 or 403, headers, body)`
    fn verdict<'py>(
        &self,
        py: Python<'py>,
        granted: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let answer = if let Ok(p) = granted.cast::<PyPrincipal>() {
            self.rules.verdict(Ok(&p.get().principal.scopes))
        } else if let Ok(why) = granted.extract::<String>() {
            self.rules.verdict(Err(&why))
        } else {
            return Err(PyTypeError::new_err(
                "verdict takes a Principal or the reason (str) a token is invalid",
            ));
        };
        answer.map(|a| complete(py, a)).transpose()
    }

    fn __repr__(&self) -> String {
        format!(
            "ResourceServer(resource={:?}, authorization_server={:?}, scopes={:?})",
            self.resource, self.authorization_server, self.scopes
        )
    }
}

/// Verifies JWT access tokens: the signature, `exp` and `nbf`, the audience and the issuer
#[pyclass(module = "mcp_sansio._core", name = "JwtVerifier", frozen)]
pub(crate) struct PyJwtVerifier {
    key: DecodingKey,
    validation: Validation,
    audience: Option<Vec<String>>,
}

#[pymethods]
impl PyJwtVerifier {
    /// See the stub (`_core.pyi`)
    #[new]
    #[pyo3(signature = (secret=None, *, algorithm="HS256", public_key=None, audience=None,
        issuer=None, leeway=60))]
    fn new(
        secret: Option<FieldValue>,
        algorithm: &str,
        public_key: Option<FieldValue>,
        audience: Option<OneOrMany>,
        issuer: Option<OneOrMany>,
        leeway: u64,
    ) -> PyResult<Self> {
        let alg = Algorithm::from_str(algorithm)
            .map_err(|_| PyValueError::new_err(format!("unknown JWT algorithm {algorithm:?}")))?;
        let bad = |e: jsonwebtoken::errors::Error| {
            PyValueError::new_err(format!("invalid {algorithm} key: {e}"))
        };
        let key = match (alg, secret, public_key) {
            (Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512, Some(s), None) => {
                let s = s.into_bytes();
                if s.is_empty() {
                    return Err(PyValueError::new_err("the secret must not be empty"));
                }
                DecodingKey::from_secret(&s).map_err(bad)?
            }
            (Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512, _, _) => {
                return Err(PyValueError::new_err(format!(
                    "{algorithm} verifies with secret= (and no public_key=)"
                )));
            }
            (_, None, Some(pem)) => {
                let pem = pem.into_bytes();
                match alg {
                    Algorithm::ES256 | Algorithm::ES384 => {
                        DecodingKey::from_ec_pem(&pem).map_err(bad)?
                    }
                    Algorithm::EdDSA => DecodingKey::from_ed_pem(&pem).map_err(bad)?,
                    _ => DecodingKey::from_rsa_pem(&pem).map_err(bad)?,
                }
            }
            _ => {
                return Err(PyValueError::new_err(format!(
                    "{algorithm} verifies with public_key= (PEM; and no secret=)"
                )));
            }
        };
        let mut validation = Validation::new(alg);
        validation.leeway = leeway;
        validation.validate_nbf = true;
        // What is checked must be there: a token without `aud` (or `iss`) is not one
        // issued for this resource (by this issuer).
        let mut required = vec!["exp"];
        let audience = audience.map(OneOrMany::split).filter(|a| !a.is_empty());
        match &audience {
            Some(aud) => {
                validation.set_audience(aud);
                required.push("aud");
            }
            // Set per call (`verify(token, audience=...)`), else not checked
            None => validation.validate_aud = false,
        }
        if let Some(iss) = issuer.map(OneOrMany::split).filter(|i| !i.is_empty()) {
            validation.set_issuer(&iss);
            required.push("iss");
        }
        validation.set_required_spec_claims(&required);
        Ok(Self {
            key,
            validation,
            audience,
        })
    }

    /// The audiences a token must name (`aud`), if set here
    #[getter]
    fn audience(&self) -> Option<Vec<String>> {
        self.audience.clone()
    }

    /// The principal of a valid token (subject `sub`, client `client_id` or `azp`, scopes
    /// from `scope` or `scp`, every claim); `ValueError` saying why a token is invalid.
    /// `audience` applies when the verifier was made without one (a protected server
    /// passes its resource URL).
    #[pyo3(signature = (token, *, audience=None))]
    fn verify(
        &self,
        py: Python<'_>,
        token: &str,
        audience: Option<OneOrMany>,
    ) -> PyResult<PyPrincipal> {
        let audience = audience.map(OneOrMany::split).filter(|a| !a.is_empty());
        let verified = py.detach(|| match (&self.audience, audience) {
            (None, Some(aud)) => {
                let mut validation = self.validation.clone();
                validation.set_audience(&aud);
                validation.validate_aud = true;
                validation.required_spec_claims.insert("aud".to_owned());
                mcp_sansio_runtime::auth::verify_jwt(token, &self.key, &validation)
            }
            _ => mcp_sansio_runtime::auth::verify_jwt(token, &self.key, &self.validation),
        });
        match verified {
            Ok(v) => Ok(PyPrincipal {
                principal: v.principal(),
            }),
            Err(why) => Err(PyValueError::new_err(why)),
        }
    }

    fn __call__(&self, py: Python<'_>, token: &str) -> PyResult<PyPrincipal> {
        self.verify(py, token, None)
    }

    fn __repr__(&self) -> String {
        format!(
            "JwtVerifier(algorithm={:?}, audience={:?})",
            self.validation.algorithms, self.audience
        )
    }
}
