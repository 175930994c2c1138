//! Log lines of the Rust half of the bindings, through Python's `logging`
//!
//! What the Python drivers cannot see (requests the catalog answers without a handler, and
//! its refusals) is logged here on `mcp_sansio.server`, at the same levels as the Python
//! side: answers at `DEBUG`, refusals at `WARNING`. No argument values: a refusal names
//! the method, the tool, prompt or resource, and the JSON-RPC code; its message (which may
//! quote an argument) goes at `DEBUG`. A logging failure is dropped.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use serde::Deserialize;
use serde_json::value::RawValue;

use mcp_sansio::InboundRequest;
use mcp_sansio::server::Answer;

/// `logging.DEBUG`
pub(crate) const DEBUG: u8 = 10;
/// `logging.WARNING`
pub(crate) const WARNING: u8 = 30;

static SERVER: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// Logs `message()` on `mcp_sansio.server` at `level`, if that level is enabled (the
/// message is built only then)
pub(crate) fn server(py: Python<'_>, level: u8, message: impl FnOnce() -> String) {
    let logger = SERVER.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        Ok(py
            .import("logging")?
            .call_method1("getLogger", ("mcp_sansio.server",))?
            .unbind())
    });
    let Ok(logger) = logger else {
        return;
    };
    let logger = logger.bind(py);
    let enabled = logger
        .call_method1("isEnabledFor", (level,))
        .and_then(|b| b.is_truthy());
    if let Ok(true) = enabled {
        // No format arguments: `%` in the message is taken as is.
        let _ = logger.call_method1("log", (level, message()));
    }
}

/// The name a request is about (a tool or prompt name, a resource URI), for log lines
fn subject(params: Option<&RawValue>) -> Option<String> {
    #[derive(Deserialize)]
    struct Named {
        name: Option<String>,
        uri: Option<String>,
    }
    let named: Named = serde_json::from_str(params?.get()).ok()?;
    named.name.or(named.uri)
}

/// Logs a request the catalog answered: `DEBUG` for an answer, `WARNING` for a refusal
pub(crate) fn catalog_answer(py: Python<'_>, request: &InboundRequest, answer: &Answer) {
    let about = || match subject(request.params.as_deref()) {
        Some(s) => format!("{} {s:?}", request.method),
        None => request.method.clone(),
    };
    match answer {
        Ok(_) => server(py, DEBUG, || {
            format!("{}: answered by the catalog", about())
        }),
        Err(e) => {
            server(py, WARNING, || {
                format!("{}: refused (code {})", about(), e.code)
            });
            server(py, DEBUG, || format!("{}: refused: {}", about(), e.message));
        }
    }
}
