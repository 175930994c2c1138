//! The `HttpClientTransport` class: `mcp_sansio::http::ClientTransport` (which HTTP requests a
//! client session needs, and what each response means) for a Python HTTP client to drive

use mcp_sansio::http::{ClientTransport, HeaderError, HttpRequest, StreamId};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use crate::client::PyClientSession;
use crate::numbers::Numbers;

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
#[pyclass(module = "mcp_sansio._core", name = "HttpClientTransport")]
pub(crate) struct PyHttpClientTransport {
    inner: ClientTransport,
    streams: Numbers<StreamId>,
}

impl PyHttpClientTransport {
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
    #[pyo3(signature = (headers=Vec::new()))]
    fn new(headers: Vec<(String, String)>) -> PyResult<Self> {
        let inner = ClientTransport::new()
            .with_headers(headers)
            .map_err(header_error)?;
        Ok(Self {
            inner,
            streams: Numbers::new(),
        })
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
