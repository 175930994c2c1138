//! OAuth for the HTTP client: the `OAuthSetup` class (the core's `OAuthConfig` with its
//! signers and token store, built once from `mcp_sansio.auth.OAuth`), the Python token store
//! hook, and `HeadlessUserAgent` (the kernel's redirect follower, sans IO)
//!
//! The flow itself is `mcp_sansio::auth::OAuthClient`'s, inside the core's `ClientTransport`;
//! the Python driver only performs the HTTP requests it asks for and runs the user agent.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mcp_sansio::auth::{
    ApplicationType, AuthRequest, AuthResponse, Grant, IdentityAssertion, OAuthClient, OAuthConfig,
    PreRegistered, Secret, TokenStore, Tokens,
};
use mcp_sansio_runtime::auth::{DpopKey, Headless, JwtSigner, OAuthOptions, Step, StoreFactory};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

/// An authorization request as Python performs it: `(method, url, headers, body)`
pub(crate) fn request_tuple<'py>(
    py: Python<'py>,
    kind: &str,
    r: AuthRequest,
) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(
        py,
        [
            kind.into_pyobject(py)?.into_any(),
            r.method.as_str().into_pyobject(py)?.into_any(),
            r.url.into_pyobject(py)?.into_any(),
            r.headers.into_pyobject(py)?.into_any(),
            PyBytes::new(py, &r.body).into_any(),
        ],
    )
}

/// The response Python got for an authorization request; status 0: none came
pub(crate) fn response(status: u16, headers: Vec<(String, String)>, body: &[u8]) -> AuthResponse {
    if status == 0 {
        AuthResponse::failed()
    } else {
        AuthResponse::new(status, headers, body.to_vec())
    }
}

/// How an `HttpClientTransport` authorizes: the core's OAuth configuration with its signers,
/// DPoP, and where tokens are kept; made by `mcp_sansio.auth.OAuth`
#[pyclass(module = "mcp_sansio._core", name = "OAuthSetup", frozen)]
pub(crate) struct PyOAuthSetup {
    options: OAuthOptions<()>,
}

impl PyOAuthSetup {
    /// A fresh OAuth client for the server at `url` (seeded with OS randomness, with a
    /// fresh DPoP key unless one was given or DPoP is off)
    pub(crate) fn client(&self, url: &str) -> PyResult<OAuthClient> {
        self.options.client(url).map_err(PyValueError::new_err)
    }
}

fn secret(value: Option<String>) -> Option<Secret> {
    value.map(Secret::new)
}

fn required(value: Option<String>, what: &str, grant: &str) -> PyResult<String> {
    value.ok_or_else(|| PyValueError::new_err(format!("grant={grant:?} needs {what}=")))
}

#[pymethods]
impl PyOAuthSetup {
    #[new]
    #[pyo3(signature = (redirect_uri, *, grant="authorization_code", client_id=None,
        client_secret=None, issuer=None, client_metadata_url=None,
        client_name="mcp-sansio-client", application_type="native", scopes=Vec::new(),
        request_offline_access=true, private_key_pem=None, signing_algorithm="ES256",
        assertion=None, idp_token_endpoint=None, idp_client_id=None, idp_client_secret=None,
        id_token=None, dpop=true, dpop_key=None, max_attempts=3, refresh_margin=60.0,
        token_store=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        redirect_uri: String,
        grant: &str,
        client_id: Option<String>,
        client_secret: Option<String>,
        issuer: Option<String>,
        client_metadata_url: Option<String>,
        client_name: &str,
        application_type: &str,
        scopes: Vec<String>,
        request_offline_access: bool,
        private_key_pem: Option<String>,
        signing_algorithm: &str,
        assertion: Option<String>,
        idp_token_endpoint: Option<String>,
        idp_client_id: Option<String>,
        idp_client_secret: Option<String>,
        id_token: Option<String>,
        dpop: bool,
        dpop_key: Option<Vec<u8>>,
        max_attempts: u32,
        refresh_margin: f64,
        token_store: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        let mut config = OAuthConfig::new(redirect_uri);
        config.grant = match grant {
            "authorization_code" => Grant::AuthorizationCode,
            "client_credentials" => Grant::ClientCredentials,
            "jwt_bearer" => Grant::JwtBearer {
                assertion: Secret::new(required(assertion, "assertion", grant)?),
            },
            "identity_assertion" => {
                let mut idp = IdentityAssertion::new(
                    required(idp_token_endpoint, "idp_token_endpoint", grant)?,
                    required(idp_client_id, "idp_client_id", grant)?,
                    Secret::new(required(id_token, "id_token", grant)?),
                );
                idp.idp_client_secret = secret(idp_client_secret);
                Grant::IdentityAssertion(idp)
            }
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown grant {other:?} (authorization_code, client_credentials, \
                     jwt_bearer or identity_assertion)"
                )));
            }
        };
        config.client_name = client_name.to_owned();
        config.application_type = match application_type {
            "native" => ApplicationType::Native,
            "web" => ApplicationType::Web,
            other => {
                return Err(PyValueError::new_err(format!(
                    "application_type is \"native\" or \"web\", not {other:?}"
                )));
            }
        };
        config.client_metadata_url = client_metadata_url;
        if let Some(id) = client_id {
            let mut client = PreRegistered::new(id, secret(client_secret));
            if let Some(issuer) = issuer {
                client = client.issuer(issuer);
            }
            config.pre_registered.push(client);
        } else if client_secret.is_some() {
            return Err(PyValueError::new_err("client_secret= needs client_id="));
        }
        if let Some(pem) = private_key_pem {
            let signer = JwtSigner::from_pem(signing_algorithm, pem.as_bytes())
                .map_err(|e| PyValueError::new_err(format!("private_key_pem: {e}")))?;
            config.assertion_signer = Some(Arc::new(signer));
        }
        if matches!(config.grant, Grant::ClientCredentials) && config.pre_registered.is_empty() {
            return Err(PyValueError::new_err(
                "grant=\"client_credentials\" needs client_id= (with client_secret= or private_key_pem=)",
            ));
        }
        config.default_scopes = scopes;
        config.request_offline_access = request_offline_access;
        if max_attempts == 0 {
            return Err(PyValueError::new_err("max_attempts must be at least 1"));
        }
        config.max_attempts = max_attempts;
        if !(refresh_margin.is_finite() && refresh_margin >= 0.0) {
            return Err(PyValueError::new_err(
                "refresh_margin must be a non-negative number of seconds",
            ));
        }
        config.refresh_margin = Duration::from_secs_f64(refresh_margin);
        if let Some(key) = dpop_key {
            if !dpop {
                return Err(PyValueError::new_err("dpop_key= needs dpop=True"));
            }
            let key = DpopKey::from_secret_bytes(&key)
                .map_err(|e| PyValueError::new_err(format!("dpop_key: {e}")))?;
            config.dpop_signer = Some(Arc::new(key));
        }
        let mut options = OAuthOptions::new(config, ());
        if !dpop {
            options = options.without_dpop();
        }
        if let Some(store) = token_store {
            let store = Arc::new(store);
            let factory: StoreFactory = Arc::new(move || {
                Box::new(PyTokenStore {
                    store: Arc::clone(&store),
                }) as Box<dyn TokenStore>
            });
            options.store = Some(factory);
        }
        Ok(Self { options })
    }
}

/// A fresh DPoP key's 32 private bytes (OS randomness), for `OAuth(dpop_key=...)`: a client
/// that keeps DPoP-bound tokens across restarts must sign with the same key
#[pyfunction]
pub(crate) fn new_dpop_key<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
    let key = DpopKey::generate().map_err(PyValueError::new_err)?;
    Ok(PyBytes::new(py, &key.secret_bytes()))
}

/// The application's token store: an object with `load(resource) -> dict | None`,
/// `save(resource, dict)` and `remove(resource)`. Its failures are reported through
/// `sys.unraisablehook` and read as "no tokens" (load) or dropped (save, remove).
struct PyTokenStore {
    store: Arc<Py<PyAny>>,
}

/// Seconds since the Unix epoch of an `Instant` (the store outlives the process's clock)
fn unix(at: Instant) -> f64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64();
    let here = Instant::now();
    if at >= here {
        now + (at - here).as_secs_f64()
    } else {
        now - (here - at).as_secs_f64()
    }
}

/// The `Instant` of seconds since the Unix epoch
fn instant(t: f64) -> Option<Instant> {
    if !t.is_finite() {
        return None;
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64();
    let here = Instant::now();
    let span = (t - now).clamp(-1e9, 1e9);
    if span >= 0.0 {
        here.checked_add(Duration::from_secs_f64(span))
    } else {
        here.checked_sub(Duration::from_secs_f64(-span))
            .or(Some(here))
    }
}

fn tokens_to_py<'py>(py: Python<'py>, t: &Tokens) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("access_token", t.access_token.expose())?;
    d.set_item("token_type", if t.dpop { "DPoP" } else { "Bearer" })?;
    d.set_item(
        "refresh_token",
        t.refresh_token.as_ref().map(Secret::expose),
    )?;
    d.set_item("expires_at", t.expires_at.map(unix))?;
    d.set_item("scope", t.scope.as_deref())?;
    d.set_item("issuer", t.issuer.as_str())?;
    Ok(d)
}

fn tokens_from_py(d: &Bound<'_, PyAny>) -> PyResult<Tokens> {
    let get = |key: &str| -> PyResult<Option<Bound<'_, PyAny>>> {
        Ok(d.get_item(key).ok().filter(|v| !v.is_none()))
    };
    let text = |key: &str| -> PyResult<Option<String>> {
        get(key)?
            .map(|v| v.extract::<String>())
            .transpose()
            .map_err(|_| PyValueError::new_err(format!("the stored tokens' {key:?} is not a str")))
    };
    let access = text("access_token")?
        .ok_or_else(|| PyValueError::new_err("the stored tokens have no \"access_token\""))?;
    let mut tokens = Tokens::new(Secret::new(access), text("issuer")?.unwrap_or_default());
    tokens.dpop = text("token_type")?.is_some_and(|t| t.eq_ignore_ascii_case("dpop"));
    tokens.refresh_token = text("refresh_token")?.map(Secret::new);
    tokens.scope = text("scope")?;
    tokens.expires_at = get("expires_at")?
        .map(|v| v.extract::<f64>())
        .transpose()?
        .and_then(instant);
    Ok(tokens)
}

impl PyTokenStore {
    fn call(&self, method: &str, args: impl FnOnce(Python<'_>) -> PyResult<Bound<'_, PyTuple>>) {
        Python::attach(|py| {
            let result = args(py).and_then(|a| self.store.bind(py).call_method1(method, a));
            if let Err(e) = result {
                e.write_unraisable(py, Some(&self.store.bind(py).clone()));
            }
        });
    }
}

impl TokenStore for PyTokenStore {
    fn load(&self, resource: &str) -> Option<Tokens> {
        Python::attach(|py| {
            let store = self.store.bind(py);
            let loaded = store.call_method1("load", (resource,)).and_then(|v| {
                if v.is_none() {
                    Ok(None)
                } else {
                    tokens_from_py(&v).map(Some)
                }
            });
            match loaded {
                Ok(tokens) => tokens,
                Err(e) => {
                    e.write_unraisable(py, Some(store));
                    None
                }
            }
        })
    }

    fn save(&mut self, resource: &str, tokens: Tokens) {
        self.call("save", |py| {
            PyTuple::new(
                py,
                [
                    resource.into_pyobject(py)?.into_any(),
                    tokens_to_py(py, &tokens)?.into_any(),
                ],
            )
        });
    }

    fn remove(&mut self, resource: &str) {
        self.call("remove", |py| {
            PyTuple::new(py, [resource.into_pyobject(py)?.into_any()])
        });
    }
}

/// A user agent without a browser, sans IO (the kernel's `Headless`): GETs the
/// authorization URL and follows redirects (up to 10) until one points at the redirect URI
///
/// `step(None)` first, then `step(status, headers)` with each response; each step returns
/// `("fetch", method, url, headers, body)` to perform (without following redirects), or
/// `("done", url)`, or `("error", reason)`.
#[pyclass(module = "mcp_sansio._core", name = "HeadlessUserAgent")]
pub(crate) struct PyHeadless {
    inner: Headless,
}

#[pymethods]
impl PyHeadless {
    #[new]
    fn new(redirect_uri: &str, url: String) -> Self {
        Self {
            inner: Headless::new(redirect_uri, url),
        }
    }

    /// The next step, given the last fetch's response (`status` 0: none came)
    #[pyo3(signature = (status=None, headers=Vec::new()))]
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        status: Option<u16>,
        headers: Vec<(String, String)>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let last = status.map(|s| response(s, headers, &[]));
        match self.inner.step(last.as_ref()) {
            Step::Fetch(request) => request_tuple(py, "fetch", request),
            Step::Done(Ok(url)) => PyTuple::new(py, ["done", url.as_str()]),
            Step::Done(Err(why)) => PyTuple::new(py, ["error", why.as_str()]),
        }
    }
}
