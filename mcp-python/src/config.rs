//! `ServerConfig`: a server's identity, catalog and capabilities, built once and shared by
//! every session (stdio connections, the HTTP endpoint)

use std::hash::BuildHasher;
use std::sync::Arc;
use std::time::Duration;

use mcp_sansio::schema::Tool;
use mcp_sansio::server::{Catalog, CatalogConfig, CatalogError};
use mcp_sansio::store::SharedTasks;
use mcp_sansio::{Implementation, ProtocolVersion};
use pyo3::PyTraverseError;
use pyo3::exceptions::PyValueError;
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::types::PyList;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::catalog::{Handlers, PyCatalog, entry_kind};
use crate::convert;

/// 8 random bytes from the standard library's per-process hasher keys
pub(crate) fn random_u64() -> u64 {
    std::collections::hash_map::RandomState::new().hash_one(0u8)
}

/// 32 bytes from the operating system's randomness (the key that makes task ids
/// unguessable)
pub(crate) fn random_key() -> [u8; 32] {
    let mut key = [0u8; 32];
    if getrandom::fill(&mut key).is_err() {
        // No OS randomness (never on the platforms the wheel is built for): the hasher keys
        for chunk in key.chunks_mut(8) {
            chunk.copy_from_slice(&random_u64().to_le_bytes());
        }
    }
    key
}

/// A server's identity, catalog (tools, resources, templates, prompts) and capabilities
///
/// Built once; every `ServerSession` and `HttpServer` made from it shares it.
#[pyclass(module = "mcp_sansio._core", name = "ServerConfig", frozen)]
pub(crate) struct PyServerConfig {
    pub(crate) config: Arc<mcp_sansio::ServerConfig>,
    /// The configuration of byte-stream sessions (`ServerSession`): `config` without
    /// `shared_tasks` (a byte stream's tasks have one client, and no store runs their
    /// operations)
    pub(crate) local: Arc<mcp_sansio::ServerConfig>,
    pub(crate) catalog: Arc<Catalog>,
    /// The handlers of the catalog's entries (from a `Catalog`; none for entries given as
    /// lists)
    pub(crate) handlers: Handlers,
    pub(crate) route: bool,
    pub(crate) completions: bool,
}

fn declare(caps: &mut Map<String, Value>, name: &str) {
    caps.entry(name)
        .or_insert_with(|| Value::Object(Map::new()));
}

/// Adds each entry of a Python list (`None`: no entries) with `add`
fn add_each<T: DeserializeOwned>(
    list: Option<&Bound<'_, PyAny>>,
    what: &str,
    mut add: impl FnMut(T) -> Result<(), CatalogError>,
) -> PyResult<()> {
    let Some(list) = list.filter(|l| !l.is_none()) else {
        return Ok(());
    };
    let list = list.cast::<PyList>()?;
    for entry in list.iter() {
        add(convert::from_py(&entry, what)?).map_err(|e| PyValueError::new_err(e.to_string()))?;
    }
    Ok(())
}

#[pymethods]
impl PyServerConfig {
    /// See the stub (`_core.pyi`) for the documentation of every argument
    #[new]
    #[pyo3(signature = (name, version, *, title=None, instructions=None, tools=None,
        resources=None, resource_templates=None, prompts=None, completions=false,
        logging=false, resource_subscriptions=false, list_changed=false, capabilities=None,
        versions=None, state_key=None, request_timeout=60.0, route=true, node=None,
        lease=None, scopes=None, hide_forbidden=false, catalog=None, tasks=false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        name: &str,
        version: &str,
        title: Option<&str>,
        instructions: Option<String>,
        tools: Option<&Bound<'_, PyAny>>,
        resources: Option<&Bound<'_, PyAny>>,
        resource_templates: Option<&Bound<'_, PyAny>>,
        prompts: Option<&Bound<'_, PyAny>>,
        completions: bool,
        logging: bool,
        resource_subscriptions: bool,
        list_changed: bool,
        capabilities: Option<&Bound<'_, PyAny>>,
        versions: Option<Vec<String>>,
        state_key: Option<Vec<u8>>,
        request_timeout: Option<f64>,
        route: bool,
        node: Option<String>,
        lease: Option<f64>,
        scopes: Option<Vec<(String, String, Vec<String>)>>,
        hide_forbidden: bool,
        catalog: Option<PyRef<'_, PyCatalog>>,
        tasks: bool,
    ) -> PyResult<Self> {
        let mut info = Implementation::new(name, version);
        if let Some(t) = title {
            info.title = Some(t.to_owned());
        }
        let mut config = mcp_sansio::ServerConfig::new(info);
        let mut caps = match capabilities {
            Some(c) if !c.is_none() => match convert::to_json(c)? {
                Value::Object(m) => m,
                _ => return Err(PyValueError::new_err("capabilities must be a dict")),
            },
            _ => Map::new(),
        };
        let mut catalog_config = CatalogConfig::default();
        catalog_config.hide_forbidden = hide_forbidden;
        let (mut catalog, handlers) = match catalog {
            Some(c) => c.snapshot(py, catalog_config)?,
            None => (Catalog::new(catalog_config), Handlers::default()),
        };
        add_each(tools, "tool", |t| catalog.add_tool(t))?;
        add_each(resources, "resource", |r| catalog.add_resource(r))?;
        add_each(resource_templates, "resource template", |t| {
            catalog.add_template(t)
        })?;
        add_each(prompts, "prompt", |p| catalog.add_prompt(p))?;
        let completions = completions || handlers.completes();
        for (kind, key, needed) in scopes.unwrap_or_default() {
            if !catalog.require_scopes(entry_kind(&kind)?, &key, needed) {
                return Err(PyValueError::new_err(format!(
                    "scopes for an unknown {kind} {key:?}"
                )));
            }
        }
        if catalog.tools().next().is_some() {
            declare(&mut caps, "tools");
        }
        if catalog.resources().next().is_some()
            || catalog.templates().next().is_some()
            || resource_subscriptions
        {
            declare(&mut caps, "resources");
        }
        if catalog.prompts().next().is_some() {
            declare(&mut caps, "prompts");
        }
        if tasks {
            // Tasks for `tools/call` in both forms: the 2025-11-25 `tasks` capability and
            // the 2026-07-28 tasks extension (the capabilities given win, as for the others)
            caps.entry("tasks").or_insert_with(|| {
                serde_json::json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}})
            });
            caps.entry("extensions")
                .or_insert_with(|| serde_json::json!({ mcp_sansio::TASKS_EXTENSION: {} }));
        }
        if completions {
            declare(&mut caps, "completions");
        }
        if logging {
            declare(&mut caps, "logging");
        }
        if resource_subscriptions {
            caps["resources"]["subscribe"] = Value::Bool(true);
        }
        if list_changed {
            for kind in ["tools", "resources", "prompts"] {
                if let Some(Value::Object(c)) = caps.get_mut(kind) {
                    c.insert("listChanged".into(), Value::Bool(true));
                }
            }
        }
        config.capabilities = Value::Object(caps);
        config.instructions = instructions;
        if let Some(versions) = versions {
            config.versions = versions
                .iter()
                .map(|v| {
                    ProtocolVersion::parse(v).ok_or_else(|| {
                        PyValueError::new_err(format!("unknown protocol version {v}"))
                    })
                })
                .collect::<PyResult<_>>()?;
        }
        config.state_key = Some(match state_key {
            Some(k) => k
                .try_into()
                .map_err(|_| PyValueError::new_err("state_key must be 32 bytes"))?,
            None => {
                let mut key = [0u8; 32];
                for chunk in key.chunks_mut(8) {
                    chunk.copy_from_slice(&random_u64().to_le_bytes());
                }
                key
            }
        });
        config.task_id_seed = random_u64();
        config.task_id_key = random_key();
        config.timeouts.request = request_timeout
            .filter(|t| t.is_finite() && *t >= 0.0)
            .map(Duration::from_secs_f64);
        let local = Arc::new(config.clone());
        if let Some(node) = node {
            let mut shared = SharedTasks::new(node);
            if let Some(lease) = lease {
                if !lease.is_finite() || lease <= 0.0 {
                    return Err(PyValueError::new_err(
                        "lease must be a positive number of seconds",
                    ));
                }
                shared = shared.lease(Duration::from_secs_f64(lease));
            }
            config.shared_tasks = Some(shared);
        }
        Ok(Self {
            config: Arc::new(config),
            local,
            catalog: Arc::new(catalog),
            handlers,
            route,
            completions,
        })
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        self.handlers.traverse(&visit)
    }

    /// The capabilities the server declares
    #[getter]
    fn capabilities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_py(py, &self.config.capabilities)
    }

    /// Whether the server declares `listChanged` for a list (`"tools"`, `"prompts"`,
    /// `"resources"`): what `notify_list_changed` needs
    fn declares_list_changed(&self, list: &str) -> PyResult<bool> {
        convert::list_kind(list)?;
        Ok(mcp_sansio::schema::has_capability(
            &self.config.capabilities,
            &[list, "listChanged"],
        ))
    }

    /// The tools of the catalog, as `tools/list` shows them
    #[getter]
    fn tools<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let tools: Vec<&Tool> = self.catalog.tools().collect();
        convert::typed_to_py(py, &tools)
    }

    fn __repr__(&self) -> String {
        format!(
            "ServerConfig(name={:?}, version={:?})",
            self.config.info.name, self.config.info.version
        )
    }
}
