//! The Python methods that several classes share, written once
//!
//! pyo3 takes one `#[pymethods]` block per class, so each macro here expands to a class's
//! whole block: the shared methods, then the class's own ones (`{ ... }`, the last
//! argument). A macro that adds methods to a block another macro makes takes that macro's
//! name first (`$block`): `pymethods_block` makes a plain block, `connection_pymethods` one
//! that also has the sans-IO inputs and outputs of one connection. Paths into this crate are
//! spelled `$crate::...`; the pyo3 prelude must be in scope where they expand.

/// The `#[pymethods]` block of `$class`: its own methods only
macro_rules! pymethods_block {
    ($class:ty, { $($own:tt)* }) => {
        #[pymethods]
        impl $class {
            $($own)*
        }
    };
}

/// The `#[pymethods]` block of a class owning one connection (fields `session: Session`,
/// `clock: Clock`, `buf: Vec<u8>`): the inputs (bytes, a message, EOF, timers), the outputs
/// (bytes to send, the next deadline), `close` and the state getters, then its own methods
macro_rules! connection_pymethods {
    ($class:ty, { $($own:tt)* }) => {
        #[pymethods]
        impl $class {
            /// Feeds bytes read from the transport (newline-delimited JSON; any chunking)
            #[pyo3(signature = (data, now=None))]
            fn receive_data(&mut self, data: &[u8], now: Option<f64>) {
                self.session.handle_bytes(self.clock.instant(now), data);
            }

            /// Feeds one whole message (a message-framed transport: an HTTP body, an SSE
            /// event)
            #[pyo3(signature = (message, now=None))]
            fn receive_message(&mut self, message: &[u8], now: Option<f64>) {
                self.session.handle_message(self.clock.instant(now), message);
            }

            /// The peer closed its side of the transport
            #[pyo3(signature = (now=None))]
            fn receive_eof(&mut self, now: Option<f64>) {
                self.session.handle_eof(self.clock.instant(now));
            }

            /// Fires the timers due at `now`
            #[pyo3(signature = (now=None))]
            fn handle_timeout(&mut self, now: Option<f64>) {
                self.session.handle_timeout(self.clock.instant(now));
            }

            /// Every byte waiting to be written (empty when nothing is)
            fn data_to_send<'py>(&mut self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
                self.buf.clear();
                while self.session.poll_transmit(&mut self.buf).is_some() {}
                pyo3::types::PyBytes::new(py, &self.buf)
            }

            /// When `handle_timeout` should next be called, or `None`
            fn next_deadline(&self) -> Option<f64> {
                self.session.poll_timeout().map(|i| self.clock.float(i))
            }

            /// Closes the session now (a client's requests in flight fail with
            /// `ConnectionClosed`)
            #[pyo3(signature = (now=None))]
            fn close(&mut self, now: Option<f64>) {
                self.session.close(self.clock.instant(now));
            }

            /// Sends a notification
            #[pyo3(signature = (method, params=None))]
            fn send_notification(
                &mut self,
                py: Python<'_>,
                method: &str,
                params: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<()> {
                let raw = params.map($crate::convert::to_raw).transpose()?;
                self.session
                    .send_notification_raw(method, raw.as_deref())
                    .map_err(|e| $crate::events::local_error(py, e))
            }

            /// Whether the driver should read more input
            #[getter]
            fn wants_read(&self) -> bool {
                self.session.wants_read()
            }

            /// Whether `Closed` was emitted (or is queued)
            #[getter]
            fn is_closed(&self) -> bool {
                self.session.is_closed()
            }

            /// The protocol version in use: a client's once ready, a server's once a legacy
            /// client negotiated one (2026 requests each carry their own), else `None`
            #[getter]
            fn version(&self) -> Option<&'static str> {
                self.session.version().map(|v| v.as_str())
            }

            /// The era of `version`: `"legacy"` (the `initialize` handshake) or `"modern"`
            /// (2026-07-28 on), as `Client(era=...)` names them; `None` while there is no `version`
            #[getter]
            fn era(&self) -> Option<&'static str> {
                self.session.version().map(|v| $crate::rules::era_name(v.era()))
            }

            $($own)*
        }
    };
}

/// The `#[pymethods]` block (made by `$block`) of a server class (fields `core: ServerCore`,
/// `clock: Clock`, and its sessions in `$sessions`): the application's commands on the
/// requests it was handed, then its own methods
macro_rules! server_pymethods {
    ($block:ident, $class:ty, $sessions:ident, { $($own:tt)* }) => {
        $block!($class, {
            /// Answers a request (completes its task, if it became one); a no-op returning
            /// `False` once it was answered or cancelled
            #[pyo3(signature = (request_id, result, now=None))]
            fn respond(
                &mut self,
                py: Python<'_>,
                request_id: u64,
                result: &Bound<'_, PyAny>,
                now: Option<f64>,
            ) -> PyResult<bool> {
                let now = self.clock.instant(now);
                self.core.answer(py, &mut self.$sessions, now, request_id, Ok(result))
            }

            /// Answers a request with a JSON-RPC error (fails its task, if it became one)
            #[pyo3(signature = (request_id, code, message, data=None, now=None))]
            fn respond_error(
                &mut self,
                py: Python<'_>,
                request_id: u64,
                code: i64,
                message: &str,
                data: Option<&Bound<'_, PyAny>>,
                now: Option<f64>,
            ) -> PyResult<bool> {
                let now = self.clock.instant(now);
                let error = $crate::events::error_object(py, code, message, data)?;
                self.core.answer(py, &mut self.$sessions, now, request_id, Err(error))
            }

            /// Reports progress on a request whose client asked for it
            #[pyo3(signature = (request_id, progress, total=None, message=None))]
            fn report_progress(
                &mut self,
                py: Python<'_>,
                request_id: u64,
                progress: f64,
                total: Option<f64>,
                message: Option<String>,
            ) -> PyResult<bool> {
                let p = $crate::server::progress(progress, total, message);
                self.core.report_progress(py, &mut self.$sessions, request_id, p)
            }

            /// Logs to the client (`notifications/message`) if its level lets `level`
            /// through
            #[pyo3(signature = (request_id, level, data, logger=None))]
            fn log(
                &mut self,
                py: Python<'_>,
                request_id: u64,
                level: &str,
                data: &Bound<'_, PyAny>,
                logger: Option<String>,
            ) -> PyResult<bool> {
                let level = $crate::server::log_level(level)?;
                let data = $crate::convert::to_json(data)?;
                self.core.log(py, &mut self.$sessions, request_id, level, data, logger)
            }

            /// Asks the client for input: `("answered", responses)`, `("sent", None)`
            /// (legacy: wait for `InputAnswered`) or `("suspended", None)` (modern: the
            /// request was answered with `input_required`; the client's retry arrives as a
            /// new request)
            #[pyo3(signature = (request_id, requests, now=None))]
            fn ask_input<'py>(
                &mut self,
                py: Python<'py>,
                request_id: u64,
                requests: &Bound<'py, PyAny>,
                now: Option<f64>,
            ) -> PyResult<(&'static str, Bound<'py, PyAny>)> {
                let now = self.clock.instant(now);
                self.core.ask_input(py, &mut self.$sessions, now, request_id, requests)
            }

            /// Answers a request with a task handle; its later `respond` completes the task
            #[pyo3(signature = (request_id, ttl=None, poll_interval=None, now=None))]
            fn start_task(
                &mut self,
                py: Python<'_>,
                request_id: u64,
                ttl: Option<f64>,
                poll_interval: Option<f64>,
                now: Option<f64>,
            ) -> PyResult<u64> {
                let now = self.clock.instant(now);
                let options = $crate::server::task_options(ttl, poll_interval);
                self.core.start_task(py, &mut self.$sessions, now, request_id, options)
            }

            /// Moves a task to `"working"` (with a message) or `"input_required"` (with
            /// requests)
            #[pyo3(signature = (task_id, status, message=None, requests=None, now=None))]
            fn update_task(
                &mut self,
                py: Python<'_>,
                task_id: u64,
                status: &str,
                message: Option<String>,
                requests: Option<&Bound<'_, PyAny>>,
                now: Option<f64>,
            ) -> PyResult<bool> {
                let now = self.clock.instant(now);
                let update = $crate::server::task_update(status, message, requests)?;
                self.core.update_task(py, &mut self.$sessions, now, task_id, update)
            }

            /// Tells the clients a list changed (`"tools"`, `"prompts"`, `"resources"`):
            /// legacy sessions (over HTTP on their GET stream), 2026 listen streams that asked
            /// for it
            fn notify_list_changed(&mut self, py: Python<'_>, kind: &str) -> PyResult<()> {
                self.$sessions
                    .notify_list_changed($crate::convert::list_kind(kind)?)
                    .map_err(|e| $crate::events::local_error(py, e))
            }

            /// What `uri` names among the resources served now, for a caller with
            /// `principal` (a handler's own `ctx.read_resource`): `(handler, variables)`;
            /// `McpError` -32602 when nothing matches, -32003 when the principal lacks the
            /// entry's scopes
            #[pyo3(signature = (uri, principal=None))]
            fn resolve_resource<'py>(
                &self,
                py: Python<'py>,
                uri: &str,
                principal: Option<PyRef<'_, $crate::identity::PyPrincipal>>,
            ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
                let principal = principal.as_ref().map(|p| &p.principal);
                self.core.resolve_resource(py, uri, principal)
            }

            /// Requests the application has not answered yet
            #[getter]
            fn pending_requests(&self) -> usize {
                self.core.pending_count()
            }

            /// Whether the requests the catalog answers itself (the lists, and a
            /// `tools/call`, `resources/read`, `prompts/get` or `completion/complete` it
            /// refuses) come out as `CatalogAnswer` events for the application to answer
            /// (with the catalog's answer or its own) instead of being answered at once;
            /// `False` by default (a server with middleware sets it)
            #[getter]
            fn catalog_answers(&self) -> bool {
                self.core.catalog_answers()
            }

            #[setter]
            fn set_catalog_answers(&mut self, on: bool) {
                self.core.set_catalog_answers(on);
            }

            $($own)*
        });
    };
}
