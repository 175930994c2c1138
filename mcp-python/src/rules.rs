//! The core's protocol rules that the Python drivers ask for rather than repeat: the
//! JSON-RPC error codes, a version's era, which resource subscription covers a change, what
//! of a listen filter a legacy connection serves, and what of a JSON Schema an elicitation
//! form can hold

use mcp_sansio::jsonrpc::code;
use mcp_sansio::schema::{ElicitationSchema, FormSchemaError};
use mcp_sansio::session::ListenFilter;
use mcp_sansio::{Era, ListKind, ProtocolVersion};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::convert;

/// An era as the Python API names it (`Client(era=...)`, `RequestInfo.era`)
pub(crate) fn era_name(era: Era) -> &'static str {
    match era {
        Era::Legacy => "legacy",
        _ => "modern",
    }
}

/// The era of a protocol version: `"legacy"` (the versions with the `initialize`
/// handshake) or `"modern"` (2026-07-28 on); `ValueError` for a version the core does not
/// know
#[pyfunction]
pub(crate) fn protocol_era(version: &str) -> PyResult<&'static str> {
    ProtocolVersion::parse(version)
        .map(|v| era_name(v.era()))
        .ok_or_else(|| PyValueError::new_err(format!("unknown protocol version {version:?}")))
}

/// Whether a subscription to the resource `subscribed` covers a change of `uri` (the same
/// URI, or one under it): the rule the server sends `notifications/resources/updated` by
#[pyfunction]
pub(crate) fn subscription_covers(subscribed: &str, uri: &str) -> bool {
    mcp_sansio::session::subscription_covers(subscribed, uri)
}

/// `subscriptions/listen` on a legacy connection (the client's emulation): the list-change
/// flags of `notifications` (a listen filter) that the server's `capabilities` declare
/// `listChanged` for, as a granted filter (`{"toolsListChanged": true, ...}`): a legacy
/// server sends those changes to every client, and no others
#[pyfunction]
pub(crate) fn legacy_listen_granted<'py>(
    py: Python<'py>,
    notifications: &Bound<'py, PyAny>,
    capabilities: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let filter: ListenFilter = convert::from_py(notifications, "listen filter")?;
    let caps = convert::to_json(capabilities)?;
    let granted = pyo3::types::PyDict::new(py);
    for kind in filter.legacy_granted(&caps) {
        let flag = match kind {
            ListKind::Tools => "toolsListChanged",
            ListKind::Prompts => "promptsListChanged",
            _ => "resourcesListChanged",
        };
        granted.set_item(flag, true)?;
    }
    Ok(granted.into_any())
}

/// `subscriptions/listen` on a legacy connection (the client's emulation): whether a
/// notification the connection received belongs to a listen filter: a
/// `notifications/<list>/list_changed` whose flag it sets, or a
/// `notifications/resources/updated` of a URI one of its `resourceSubscriptions` covers
#[pyfunction]
#[pyo3(signature = (notifications, method, params=None))]
pub(crate) fn legacy_listen_wants(
    notifications: &Bound<'_, PyAny>,
    method: &str,
    params: Option<&Bound<'_, PyAny>>,
) -> PyResult<bool> {
    let filter: ListenFilter = convert::from_py(notifications, "listen filter")?;
    let params = match params.filter(|p| !p.is_none()) {
        Some(p) => Some(convert::to_json(p)?),
        None => None,
    };
    Ok(filter.wants_notification(method, params.as_ref()))
}

/// The restricted `requestedSchema` of an elicitation form for a JSON Schema of an object:
/// what a form can hold of it (the core's `ElicitationSchema::from_json_schema`)
///
/// Raises `TypeError` when it cannot be a form; the exception's `field` attribute names the
/// first field a form cannot hold (`None` when the schema is no object of fields).
#[pyfunction]
pub(crate) fn elicitation_form<'py>(
    py: Python<'py>,
    schema: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let schema = convert::to_json(schema)?;
    match ElicitationSchema::from_json_schema(&schema) {
        Ok(form) => convert::typed_to_py(py, &form),
        Err(error) => {
            let field = match &error {
                FormSchemaError::Field { field, .. } => Some(field.clone()),
                _ => None,
            };
            let exc = PyTypeError::new_err(error.to_string());
            exc.value(py).setattr("field", field)?;
            Err(exc)
        }
    }
}

/// Adds the rules to the extension module: the functions, and the error codes as
/// constants (`METHOD_NOT_FOUND`, ...)
pub(crate) fn add(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(protocol_era, m)?)?;
    m.add_function(wrap_pyfunction!(subscription_covers, m)?)?;
    m.add_function(wrap_pyfunction!(legacy_listen_granted, m)?)?;
    m.add_function(wrap_pyfunction!(legacy_listen_wants, m)?)?;
    m.add_function(wrap_pyfunction!(elicitation_form, m)?)?;
    for (name, value) in [
        ("PARSE_ERROR", code::PARSE_ERROR),
        ("INVALID_REQUEST", code::INVALID_REQUEST),
        ("METHOD_NOT_FOUND", code::METHOD_NOT_FOUND),
        ("INVALID_PARAMS", code::INVALID_PARAMS),
        ("INTERNAL_ERROR", code::INTERNAL_ERROR),
        ("HEADER_MISMATCH", code::HEADER_MISMATCH),
        (
            "MISSING_REQUIRED_CLIENT_CAPABILITY",
            code::MISSING_REQUIRED_CLIENT_CAPABILITY,
        ),
        (
            "UNSUPPORTED_PROTOCOL_VERSION",
            code::UNSUPPORTED_PROTOCOL_VERSION,
        ),
        ("INSUFFICIENT_SCOPE", mcp_sansio::server::INSUFFICIENT_SCOPE),
    ] {
        m.add(name, value)?;
    }
    Ok(())
}
