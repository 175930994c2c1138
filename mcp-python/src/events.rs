//! The Python classes of events and exceptions (defined in `mcp_sansio.events` and
//! `mcp_sansio.errors`), looked up once

use mcp_sansio::{CallError, CloseReason, ErrorObject};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

use crate::convert;

macro_rules! classes {
    ($($field:ident = $module:literal . $name:literal),* $(,)?) => {
        /// Every class the extension instantiates
        pub(crate) struct Classes {
            $(pub(crate) $field: Py<PyAny>,)*
        }

        fn load(py: Python<'_>) -> PyResult<Classes> {
            Ok(Classes {
                $($field: py.import($module)?.getattr($name)?.unbind(),)*
            })
        }
    };
}

classes! {
    ready = "mcp_sansio.events"."Ready",
    request = "mcp_sansio.events"."Request",
    tool_call = "mcp_sansio.events"."ToolCall",
    resource_read = "mcp_sansio.events"."ResourceRead",
    prompt_get = "mcp_sansio.events"."PromptGet",
    completion = "mcp_sansio.events"."CompletionRequest",
    catalog_answer = "mcp_sansio.events"."CatalogAnswer",
    notification = "mcp_sansio.events"."Notification",
    response = "mcp_sansio.events"."Response",
    failed = "mcp_sansio.events"."RequestFailed",
    progress = "mcp_sansio.events"."Progress",
    cancelled = "mcp_sansio.events"."Cancelled",
    input_required = "mcp_sansio.events"."InputRequired",
    input_answered = "mcp_sansio.events"."InputAnswered",
    input_failed = "mcp_sansio.events"."InputFailed",
    task_status = "mcp_sansio.events"."TaskStatus",
    task_input = "mcp_sansio.events"."TaskInput",
    task_cancelled = "mcp_sansio.events"."TaskCancelled",
    unblocked = "mcp_sansio.events"."Unblocked",
    session_renewed = "mcp_sansio.events"."SessionRenewed",
    closed = "mcp_sansio.events"."Closed",
    local_error = "mcp_sansio.errors"."LocalProtocolError",
    mcp_error = "mcp_sansio.errors"."McpError",
    timeout = "mcp_sansio.errors"."RequestTimeout",
    request_cancelled = "mcp_sansio.errors"."RequestCancelled",
    connection_closed = "mcp_sansio.errors"."ConnectionClosed",
    invalid_result = "mcp_sansio.errors"."InvalidResult",
    authorization_error = "mcp_sansio.errors"."AuthorizationError",
}

static CLASSES: PyOnceLock<Classes> = PyOnceLock::new();

/// The classes, imported on first use
pub(crate) fn classes(py: Python<'_>) -> PyResult<&Classes> {
    CLASSES.get_or_try_init(py, || load(py))
}

/// A `LocalProtocolError` with this message
/// A result the session refused (not a JSON object): the peer gets an internal error, as
/// before, and Python a `LocalError` naming why
pub(crate) fn refused_result<S: mcp_sansio::session::Role>(
    py: Python<'_>,
    session: &mut mcp_sansio::Session<S>,
    refused: mcp_sansio::RespondError,
) -> PyErr {
    let message = refused.to_string();
    let error = ErrorObject::internal_error("the server produced an invalid result");
    session.respond_error(refused.into_responder(), &error);
    local_error(py, message)
}

pub(crate) fn local_error(py: Python<'_>, message: impl std::fmt::Display) -> PyErr {
    match classes(py) {
        Ok(c) => match c.local_error.bind(py).call1((message.to_string(),)) {
            Ok(exc) => PyErr::from_value(exc),
            Err(e) => e,
        },
        Err(e) => e,
    }
}

/// The `McpError` for a JSON-RPC error object
pub(crate) fn mcp_error<'py>(py: Python<'py>, error: &ErrorObject) -> PyResult<Bound<'py, PyAny>> {
    let data = match error.data::<serde_json::Value>() {
        Some(Ok(v)) => convert::to_py(py, &v)?,
        _ => py.None().into_bound(py),
    };
    classes(py)?
        .mcp_error
        .bind(py)
        .call1((error.code, error.message.as_str(), data))
}

/// The `McpError` for a JSON-RPC error object, to raise
pub(crate) fn mcp_exception(py: Python<'_>, error: &ErrorObject) -> PyErr {
    match mcp_error(py, error) {
        Ok(exc) => PyErr::from_value(exc),
        Err(e) => e,
    }
}

/// The exception for why a request of ours has no result
pub(crate) fn call_error<'py>(py: Python<'py>, error: &CallError) -> PyResult<Bound<'py, PyAny>> {
    let c = classes(py)?;
    let text = error.to_string();
    match error {
        CallError::Remote(e) => mcp_error(py, e),
        CallError::TimedOut => c.timeout.bind(py).call1((text,)),
        CallError::Cancelled => c.request_cancelled.bind(py).call1((text,)),
        // A local transport failure: the connection, not the server's answer.
        CallError::SessionClosed | CallError::Transport(_) => {
            c.connection_closed.bind(py).call1((text,))
        }
        _ => c.invalid_result.bind(py).call1((text,)),
    }
}

/// The text of a close reason
pub(crate) fn close_reason(reason: &CloseReason) -> String {
    match reason {
        CloseReason::PeerClosed => "peer closed".to_owned(),
        CloseReason::Local => "closed locally".to_owned(),
        other => other.to_string(),
    }
}

/// The JSON-RPC error a Python exception raised by a handler stands for: an `McpError`
/// keeps its code, message and data; anything else is an internal error
pub(crate) fn error_object(
    py: Python<'_>,
    code: i64,
    message: &str,
    data: Option<&Bound<'_, PyAny>>,
) -> PyResult<ErrorObject> {
    let _ = py;
    let mut error = ErrorObject::new(code, message);
    if let Some(data) = data.filter(|d| !d.is_none()) {
        let value = convert::to_json(data)?;
        error = error.with_data(&value);
    }
    Ok(error)
}
