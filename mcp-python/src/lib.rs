//! The `mcp_sansio._core` extension module: mcp-sansio's sessions and Streamable HTTP rules
//! as Python classes
//!
//! The Python package `mcp_sansio` (in `python/`) re-exports these classes and adds the
//! event and exception classes, the asyncio drivers and the sync client. Everything the
//! protocol decides happens here, in Rust; the Python drivers only move bytes and run
//! handlers.

#[macro_use]
mod pymethods;

mod catalog;
mod client;
mod clock;
mod config;
mod convert;
mod events;
#[cfg(unix)]
mod front;
mod http;
mod http_client;
mod identity;
mod log;
mod numbers;
mod oauth;
mod rules;
mod server;
mod store;

use pyo3::prelude::*;

/// The extension module
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<config::PyServerConfig>()?;
    m.add_class::<catalog::PyCatalog>()?;
    m.add_class::<server::PyServerSession>()?;
    m.add_class::<client::PyClientSession>()?;
    m.add_class::<http::PyHttpServer>()?;
    #[cfg(unix)]
    m.add_class::<front::PyHttpFront>()?;
    m.add_class::<http_client::PyHttpClientTransport>()?;
    m.add_class::<oauth::PyOAuthSetup>()?;
    m.add_class::<oauth::PyHeadless>()?;
    m.add_function(wrap_pyfunction!(oauth::new_dpop_key, m)?)?;
    m.add_class::<store::PyTaskStore>()?;
    m.add_class::<identity::PyPrincipal>()?;
    m.add_class::<identity::PyRequestInfo>()?;
    m.add_class::<identity::PyResourceServer>()?;
    m.add_class::<identity::PyJwtVerifier>()?;
    m.add_class::<store::PyStoreSubscription>()?;
    m.add_function(wrap_pyfunction!(http_client::check_header, m)?)?;
    m.add_function(wrap_pyfunction!(store::decode_signal, m)?)?;
    m.add_function(wrap_pyfunction!(store::list_changed_signal, m)?)?;
    m.add_function(wrap_pyfunction!(store::resource_updated_signal, m)?)?;
    rules::add(m)?;
    m.add(
        "LATEST_PROTOCOL_VERSION",
        mcp_sansio::ProtocolVersion::LATEST.as_str(),
    )?;
    m.add(
        "PROTOCOL_VERSIONS",
        mcp_sansio::ProtocolVersion::ALL
            .iter()
            .map(|v| v.as_str())
            .collect::<Vec<_>>(),
    )?;
    Ok(())
}
