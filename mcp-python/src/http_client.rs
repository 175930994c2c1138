//! The `HttpClientTransport` class: `mcp_sansio::http::ClientTransport` (which HTTP requests a
//! client session needs, and what each response means) for a Python HTTP client to drive

use mcp_sansio::auth::AuthAction;
use mcp_sansio::http::{ClientTransport, HeaderError, HttpRequest, StreamId};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use crate::client::{AuthNote, PyClientSession};
use crate::numbers::Numbers;
use crate::oauth::{self, PyOAuthSetup};

/// The longest challenge quoted in an error message
const MAX_CHALLENGE: usize = 500;

/// The client side of Streamable HTTP for one `ClientSession`, sans IO
///
/// After every change to the session call `pull(session)`; perform each `next_request()`
/// (`(stream, method, headers, body)`) and abort each `next_abort()`; report every
/// response by its stream: `handle_head`, `handle_body` per chunk, `handle_end`, or
/// `handle_failed`. Wake at `next_deadline()` for `handle_timeout`. To end, perform the
/// DELETE `close(session)` returns, if any.
///
/// `headers` go on every request (an `X-API-Key`); `request_headers` adds some to one
/// request's POST. Both are checked by the core: a header the transport sets itself
/// (`Content-Type`, `Accept`, `Mcp-Session-Id`, ...), a name that is not an HTTP token or a
/// value with a control character raises `ValueError`.
///
/// With `auth` (an `OAuthSetup`), the core's OAuth client authorizes on a 401 (or a 403
/// `insufficient_scope`): perform each `next_auth_action(session)` and report it with
/// `handle_auth_response`, `handle_auth_redirect` or `handle_auth_error`. A 401 or 403 the
/// client cannot satisfy fails its request at once (the core's rule); on the session's side
/// it reads as `AuthorizationError`, one sentence naming `url`, the status and the challenge.
#[pyclass(module = "mcp_sansio._core", name = "HttpClientTransport")]
pub(crate) struct PyHttpClientTransport {
    inner: ClientTransport,
    streams: Numbers<StreamId>,
    /// The server URL, for error messages
    url: String,
    /// `headers` has an `Authorization` (a static token)
    static_authorization: bool,
}

impl PyHttpClientTransport {
    /// Notes a 401 or 403 on the session: the failure the core gives its request (no
    /// OAuth configured, a challenge no flow answers, or the flow failed) then reads as
    /// `AuthorizationError` naming the URL, the status and the challenge
    fn note_challenge(
        &self,
        status: u16,
        headers: &[(String, String)],
        session: &mut PyClientSession,
    ) {
        if status != 401 && status != 403 {
            return;
        }
        let challenges: Vec<&str> = headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case("www-authenticate"))
            .map(|(_, v)| v.trim())
            .filter(|v| !v.is_empty())
            .collect();
        let mut challenge = challenges.join(", ");
        if challenge.len() > MAX_CHALLENGE {
            let mut end = MAX_CHALLENGE;
            while !challenge.is_char_boundary(end) {
                end -= 1;
            }
            challenge.truncate(end);
            challenge.push_str("...");
        }
        session.auth_note = Some(AuthNote {
            status,
            challenge,
            url: self.url.clone(),
            static_authorization: self.static_authorization,
        });
    }

    fn request<'py>(&mut self, py: Python<'py>, r: HttpRequest) -> PyResult<Bound<'py, PyTuple>> {
        let n = self.streams.number(r.stream);
        PyTuple::new(
            py,
            [
                n.into_pyobject(py)?.into_any(),
                r.method.as_str().into_pyobject(py)?.into_any(),
                r.headers.into_pyobject(py)?.into_any(),
                PyBytes::new(py, &r.body).into_any(),
            ],
        )
    }
}

/// A header the core refused, as `ValueError` with the core's message
fn header_error(e: HeaderError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Checks one application header as the transport will (the core's `check_header`):
/// raises `ValueError` naming it when it is refused
#[pyfunction]
pub(crate) fn check_header(name: &str, value: &str) -> PyResult<()> {
    mcp_sansio::http::check_header(name, value).map_err(header_error)
}

#[pymethods]
impl PyHttpClientTransport {
    #[new]
    #[pyo3(signature = (headers=Vec::new(), *, url=None, auth=None))]
    fn new(
        headers: Vec<(String, String)>,
        url: Option<String>,
        auth: Option<PyRef<'_, PyOAuthSetup>>,
    ) -> PyResult<Self> {
        let static_authorization = headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("authorization"));
        let mut inner = ClientTransport::new()
            .with_headers(headers)
            .map_err(header_error)?;
        if let Some(auth) = auth {
            let Some(url) = url.as_deref() else {
                return Err(PyValueError::new_err("auth= needs url="));
            };
            inner = inner.with_auth(auth.client(url)?);
        }
        Ok(Self {
            inner,
            streams: Numbers::new(),
            url: url.unwrap_or_else(|| "the server".to_owned()),
            static_authorization,
        })
    }

    /// The next step of a running authorization flow: `("fetch", method, url, headers,
    /// body)` to perform without following redirects (then `handle_auth_response`), or
    /// `("authorize", url)` for the user agent (then `handle_auth_redirect` with the URL it
    /// was finally redirected to, or `handle_auth_error`); `None` when there is nothing to do
    fn next_auth_action<'py>(
        &mut self,
        py: Python<'py>,
        mut session: PyRefMut<'_, PyClientSession>,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        loop {
            return match self.inner.poll_auth_action() {
                None => Ok(None),
                Some(AuthAction::Fetch(request)) => {
                    oauth::request_tuple(py, "fetch", request).map(Some)
                }
                Some(AuthAction::Authorize { url }) => {
                    PyTuple::new(py, ["authorize", url.as_str()]).map(Some)
                }
                Some(_) => {
                    let now = session.clock.instant(None);
                    let why = "this binding cannot perform the authorization step";
                    self.inner.handle_auth_error(now, why, &mut session.session);
                    continue;
                }
            };
        }
    }

    /// The response to an authorization `fetch` (`status` 0: none came: refused, timed out)
    fn handle_auth_response(
        &mut self,
        status: u16,
        headers: Vec<(String, String)>,
        body: &[u8],
        mut session: PyRefMut<'_, PyClientSession>,
    ) {
        let now = session.clock.instant(None);
        let response = oauth::response(status, headers, body);
        self.inner
            .handle_auth_response(now, response, &mut session.session);
    }

    /// Where the user agent of an `authorize` step was finally redirected to
    fn handle_auth_redirect(&mut self, url: &str, mut session: PyRefMut<'_, PyClientSession>) {
        let now = session.clock.instant(None);
        self.inner
            .handle_auth_redirect(now, url, &mut session.session);
    }

    /// The user agent of an `authorize` step failed
    fn handle_auth_error(&mut self, reason: &str, mut session: PyRefMut<'_, PyClientSession>) {
        let now = session.clock.instant(None);
        self.inner
            .handle_auth_error(now, reason, &mut session.session);
    }

    /// The scope of the access token held (`None`: no token, or the server named none)
    #[getter]
    fn auth_scope(&self) -> Option<String> {
        self.inner.auth()?.tokens()?.scope
    }

    /// Whether an access token is held
    #[getter]
    fn authorized(&self) -> bool {
        self.inner.auth().is_some_and(|a| a.tokens().is_some())
    }

    /// Adds `headers` to the POST carrying the request `request_id` (as returned by the
    /// session's request command); call it before the next `pull(session)`. Nothing is
    /// kept when a header is refused (`ValueError`).
    fn request_headers(
        &mut self,
        request_id: u64,
        headers: Vec<(String, String)>,
        session: PyRef<'_, PyClientSession>,
    ) -> PyResult<()> {
        let Some(id) = session.outbound_id(request_id) else {
            return Err(PyValueError::new_err(format!(
                "no request {request_id} is in flight"
            )));
        };
        self.inner
            .request_headers(id, headers)
            .map_err(header_error)
    }

    /// Takes what the session transmits and plans the HTTP requests that carry it
    fn pull(&mut self, mut session: PyRefMut<'_, PyClientSession>) {
        self.inner.pull(&mut session.session);
    }

    /// The next request to perform: `(stream, method, headers, body)`, or `None`
    fn next_request<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        match self.inner.poll_request() {
            Some(r) => Ok(Some(self.request(py, r)?)),
            None => Ok(None),
        }
    }

    /// The next stream to abort (drop its connection, report nothing more), or `None`
    fn next_abort(&mut self) -> Option<u64> {
        let id = self.inner.poll_abort()?;
        let n = self.streams.number(id);
        self.streams.retire(n);
        Some(n)
    }

    /// A response's status and headers arrived
    fn handle_head(
        &mut self,
        stream: u64,
        status: u16,
        headers: Vec<(String, String)>,
        mut session: PyRefMut<'_, PyClientSession>,
    ) {
        let Some(id) = self.streams.id(stream) else {
            return;
        };
        let now = session.clock.instant(None);
        self.note_challenge(status, &headers, &mut session);
        self.inner
            .handle_head(now, id, status, headers.as_slice(), &mut session.session);
    }

    /// A piece of a response's body arrived
    fn handle_body(
        &mut self,
        stream: u64,
        data: &[u8],
        mut session: PyRefMut<'_, PyClientSession>,
    ) {
        let Some(id) = self.streams.id(stream) else {
            return;
        };
        let now = session.clock.instant(None);
        self.inner.handle_body(now, id, data, &mut session.session);
    }

    /// A response's body ended
    fn handle_end(&mut self, stream: u64, mut session: PyRefMut<'_, PyClientSession>) {
        let Some(id) = self.streams.id(stream) else {
            return;
        };
        let now = session.clock.instant(None);
        self.inner.handle_end(now, id, &mut session.session);
        self.streams.retire(stream);
    }

    /// The request failed (connection refused, reset, ...)
    fn handle_failed(
        &mut self,
        stream: u64,
        error: &str,
        mut session: PyRefMut<'_, PyClientSession>,
    ) {
        let Some(id) = self.streams.id(stream) else {
            return;
        };
        let now = session.clock.instant(None);
        self.inner
            .handle_failed(now, id, error, &mut session.session);
        self.streams.retire(stream);
    }

    /// When `handle_timeout` should next be called (a reconnection), or `None`
    fn next_deadline(&self, session: PyRef<'_, PyClientSession>) -> Option<f64> {
        self.inner.poll_timeout().map(|i| session.clock.float(i))
    }

    /// Plans the reconnections due now
    fn handle_timeout(&mut self, session: PyRef<'_, PyClientSession>) {
        self.inner.handle_timeout(session.clock.instant(None));
    }

    /// Ends the transport: every stream is aborted; returns the DELETE to perform (2025
    /// wire with a session), or `None`
    fn close<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        match self.inner.close() {
            Some(r) => Ok(Some(self.request(py, r)?)),
            None => Ok(None),
        }
    }

    /// HTTP requests in flight
    #[getter]
    fn streams_in_flight(&self) -> usize {
        self.inner.streams_in_flight()
    }
}
