//! `Catalog`: a server's one registry of tools, resources, templates and prompts, each with
//! its handler, in the core's [`Catalog`]
//!
//! The Python `Server` registers each entry here with the function that serves it; a
//! `ServerConfig` made from it holds a snapshot of both, and every request the core's
//! catalog routes to an entry arrives with that entry's handler (the event's `handler`).
//! So Python keeps no list of names, schemas or scopes of its own, and no table of handlers
//! that could disagree with what the catalog routes.

use std::collections::HashMap;
use std::sync::Mutex;

use mcp_sansio::schema::{Prompt, Resource, ResourceTemplate, Tool};
use mcp_sansio::server::uri_template::UriTemplate;
use mcp_sansio::server::{Catalog, CatalogConfig, CatalogError, EntryKind, Route};
use pyo3::PyTraverseError;
use pyo3::exceptions::PyValueError;
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use serde_json::Value;

use crate::convert;

/// One entry of a catalog, taken out of it (to be put back, or into another catalog)
enum Entry {
    Tool(Tool),
    Resource(Resource),
    Template(ResourceTemplate),
    Prompt(Prompt),
}

impl Entry {
    /// Adds it to `catalog`
    fn add_to(self, catalog: &mut Catalog) -> Result<(), CatalogError> {
        match self {
            Self::Tool(t) => catalog.add_tool(t),
            Self::Resource(r) => catalog.add_resource(r),
            Self::Template(t) => catalog.add_template(t),
            Self::Prompt(p) => catalog.add_prompt(p),
        }
    }
}

/// A copy of the entry `kind`/`key` of `catalog`, if it has one
fn entry(catalog: &Catalog, kind: EntryKind, key: &str) -> Option<Entry> {
    Some(match kind {
        EntryKind::Tool => Entry::Tool(catalog.tool(key)?.clone()),
        EntryKind::Resource => Entry::Resource(catalog.resource(key)?.clone()),
        EntryKind::Template => Entry::Template(catalog.template(key)?.clone()),
        EntryKind::Prompt => Entry::Prompt(catalog.prompt(key)?.clone()),
        _ => return None,
    })
}

/// Removes the entry `kind`/`key` of `catalog` (and its scopes); whether there was one
fn remove(catalog: &mut Catalog, kind: EntryKind, key: &str) -> bool {
    match kind {
        EntryKind::Tool => catalog.remove_tool(key),
        EntryKind::Resource => catalog.remove_resource(key),
        EntryKind::Template => catalog.remove_template(key),
        EntryKind::Prompt => catalog.remove_prompt(key),
        _ => false,
    }
}

/// Every entry of `catalog` with the scopes it requires
fn entries(catalog: &Catalog) -> Vec<(EntryKind, String, Entry)> {
    let mut out = Vec::new();
    for t in catalog.tools() {
        out.push((EntryKind::Tool, t.name.clone(), Entry::Tool(t.clone())));
    }
    for r in catalog.resources() {
        out.push((
            EntryKind::Resource,
            r.uri.clone(),
            Entry::Resource(r.clone()),
        ));
    }
    for t in catalog.templates() {
        let key = t.uri_template.clone();
        out.push((EntryKind::Template, key, Entry::Template(t.clone())));
    }
    for p in catalog.prompts() {
        out.push((EntryKind::Prompt, p.name.clone(), Entry::Prompt(p.clone())));
    }
    out
}

/// The handlers of a catalog's entries, keyed as the catalog routes, and the
/// `completion/complete` handler
#[derive(Default)]
pub(crate) struct Handlers {
    entries: HashMap<(EntryKind, String), Py<PyAny>>,
    completion: Option<Py<PyAny>>,
}

impl Handlers {
    /// A copy holding references of its own (each owner reports its own to the garbage
    /// collector)
    pub(crate) fn clone_ref(&self, py: Python<'_>) -> Self {
        Self {
            entries: self
                .entries
                .iter()
                .map(|(k, h)| (k.clone(), h.clone_ref(py)))
                .collect(),
            completion: self.completion.as_ref().map(|h| h.clone_ref(py)),
        }
    }

    /// Reports every handler to the garbage collector (a handler that refers back to its
    /// server makes a cycle the collector can break)
    pub(crate) fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        for handler in self.entries.values() {
            visit.call(handler)?;
        }
        visit.call(&self.completion)
    }

    /// Whether a `completion/complete` handler is registered
    pub(crate) fn completes(&self) -> bool {
        self.completion.is_some()
    }

    /// What `uri` names in `catalog`, for a caller with `principal`: the handler of the
    /// resource or matching template (`None` when it has none), and the template's variables;
    /// the core's -32602 when nothing matches, its -32003 when the principal lacks the
    /// entry's scopes
    pub(crate) fn resolve_resource<'py>(
        &self,
        py: Python<'py>,
        catalog: &Catalog,
        uri: &str,
        principal: Option<&mcp_sansio::session::Principal>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        use mcp_sansio::server::{ResourceMatch, resource_not_found};
        let (kind, key, variables) = match catalog.resolve(uri) {
            Some(ResourceMatch::Resource(resource)) => (
                EntryKind::Resource,
                resource.uri.clone(),
                pyo3::types::PyDict::new(py).into_any(),
            ),
            Some(ResourceMatch::Template {
                template,
                variables,
            }) => (
                EntryKind::Template,
                template.uri_template.clone(),
                convert::variables_to_py(py, &variables)?,
            ),
            _ => return Err(crate::events::mcp_exception(py, &resource_not_found(uri))),
        };
        catalog
            .check_access(kind, &key, principal)
            .map_err(|e| crate::events::mcp_exception(py, &e))?;
        let handler = match self.entries.get(&(kind, key)) {
            Some(h) => h.bind(py).clone(),
            None => py.None().into_bound(py),
        };
        Ok((handler, variables))
    }

    /// The handler of the entry a request was routed to (`None` for a route to no handler,
    /// or a catalog given as lists, which has none)
    pub(crate) fn for_route<'py>(&self, py: Python<'py>, route: &Route) -> Bound<'py, PyAny> {
        let get = |kind: EntryKind, key: &str| self.entries.get(&(kind, key.to_owned()));
        let handler = match route {
            Route::Tool { name, .. } => get(EntryKind::Tool, name),
            Route::Resource { key, .. } => {
                get(EntryKind::Resource, key).or_else(|| get(EntryKind::Template, key))
            }
            Route::Prompt { name, .. } => get(EntryKind::Prompt, name),
            Route::Complete(_) => self.completion.as_ref(),
            _ => None,
        };
        match handler {
            Some(h) => h.bind(py).clone(),
            None => py.None().into_bound(py),
        }
    }
}

/// An entry kind from its Python spelling
pub(crate) fn entry_kind(kind: &str) -> PyResult<EntryKind> {
    match kind {
        "tool" => Ok(EntryKind::Tool),
        "resource" => Ok(EntryKind::Resource),
        "template" | "resource_template" => Ok(EntryKind::Template),
        "prompt" => Ok(EntryKind::Prompt),
        other => Err(PyValueError::new_err(format!(
            "unknown entry kind {other:?} (tool, resource, template or prompt)"
        ))),
    }
}

fn catalog_error(e: CatalogError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Scopes from Python: a list of strings, or one string of them separated by spaces
fn scope_list(scopes: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<String>> {
    let Some(scopes) = scopes.filter(|s| !s.is_none()) else {
        return Ok(Vec::new());
    };
    if let Ok(s) = scopes.extract::<String>() {
        return Ok(s.split_whitespace().map(str::to_owned).collect());
    }
    scopes
        .try_iter()?
        .map(|s| s?.str().map(|s| s.to_string()))
        .collect()
}

/// A server's tools, resources, resource templates and prompts, each with its handler
///
/// What the decorators of `mcp_sansio.aio.Server` fill; `ServerConfig(..., catalog=)`
/// serves a snapshot of it, and the events of the requests routed to an entry carry its
/// handler. Registering a key again replaces the entry (and its handler and scopes);
/// an entry the core's catalog refuses (an invalid tool name or `inputSchema`, a URI
/// template that does not parse) raises `ValueError` and leaves the catalog as it was.
/// Safe to use from any thread: the state is locked only while no Python code runs.
#[pyclass(module = "mcp_sansio._core", name = "Catalog", frozen)]
pub(crate) struct PyCatalog {
    state: Mutex<State>,
}

/// The entries (in the core's catalog) and their handlers
struct State {
    catalog: Catalog,
    handlers: Handlers,
}

impl State {
    /// Puts `new` under `kind`/`key` with its handler and scopes, replacing what was there;
    /// on a refusal the old entry stays. Also returns the handler that no longer serves
    /// (the replaced one, or `handler` when refused), for the caller to drop once the lock
    /// is released (dropping it may run Python code)
    fn put(
        &mut self,
        kind: EntryKind,
        key: String,
        new: Entry,
        handler: Py<PyAny>,
        scopes: Vec<String>,
    ) -> (Result<(), CatalogError>, Option<Py<PyAny>>) {
        let old = entry(&self.catalog, kind, &key)
            .map(|e| (e, self.catalog.required_scopes(kind, &key).to_vec()));
        remove(&mut self.catalog, kind, &key);
        if let Err(e) = new.add_to(&mut self.catalog) {
            if let Some((old, old_scopes)) = old
                && old.add_to(&mut self.catalog).is_ok()
                && !old_scopes.is_empty()
            {
                self.catalog.require_scopes(kind, &key, old_scopes);
            }
            return (Err(e), Some(handler));
        }
        if !scopes.is_empty() {
            self.catalog.require_scopes(kind, &key, scopes);
        }
        (Ok(()), self.handlers.entries.insert((kind, key), handler))
    }

    /// Removes the entry `kind`/`key` and its handler; whether there was one, and the
    /// handler (to drop once the lock is released)
    fn take(&mut self, kind: EntryKind, key: &str) -> (bool, Option<Py<PyAny>>) {
        let handler = self.handlers.entries.remove(&(kind, key.to_owned()));
        (remove(&mut self.catalog, kind, key), handler)
    }
}

impl PyCatalog {
    /// The state, locked (no Python code may run while it is held)
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A copy for a `ServerConfig`: the entries in a new catalog made with `config`, with
    /// their scopes, and the handlers
    pub(crate) fn snapshot(
        &self,
        py: Python<'_>,
        config: CatalogConfig,
    ) -> PyResult<(Catalog, Handlers)> {
        let state = self.lock();
        let mut catalog = Catalog::new(config);
        for (kind, key, e) in entries(&state.catalog) {
            e.add_to(&mut catalog).map_err(catalog_error)?;
            let scopes = state.catalog.required_scopes(kind, &key);
            if !scopes.is_empty() {
                catalog.require_scopes(kind, &key, scopes.to_vec());
            }
        }
        Ok((catalog, state.handlers.clone_ref(py)))
    }
}

#[pymethods]
impl PyCatalog {
    #[new]
    fn new() -> Self {
        Self {
            state: Mutex::new(State {
                catalog: Catalog::default(),
                handlers: Handlers::default(),
            }),
        }
    }

    /// Registers a tool (a `Tool` dict: `name`, `inputSchema`, ...) served by `handler`;
    /// `scopes`: what a caller must be granted to call it
    #[pyo3(signature = (tool, handler, scopes=None))]
    fn add_tool(
        &self,
        tool: &Bound<'_, PyAny>,
        handler: Py<PyAny>,
        scopes: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let tool: Tool = convert::from_py(tool, "tool")?;
        let scopes = scope_list(scopes)?;
        let key = tool.name.clone();
        let (outcome, _unused) =
            self.lock()
                .put(EntryKind::Tool, key, Entry::Tool(tool), handler, scopes);
        outcome.map_err(catalog_error)
    }

    /// Registers a resource, or a resource template when `uri` is a URI template with
    /// variables (RFC 6570: `file:///{path}`), read by `handler`; `entry` holds the rest
    /// (`name`, `description`, `mimeType`, `title`); returns `"resource"` or `"template"`
    #[pyo3(signature = (uri, entry, handler, scopes=None))]
    fn add_resource(
        &self,
        uri: &str,
        entry: &Bound<'_, PyAny>,
        handler: Py<PyAny>,
        scopes: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<&'static str> {
        let is_template = UriTemplate::parse(uri)
            .map_err(|e| {
                catalog_error(CatalogError::InvalidTemplate {
                    template: uri.to_owned(),
                    reason: e.to_string(),
                })
            })?
            .variables()
            .next()
            .is_some();
        let Value::Object(mut fields) = convert::to_json(entry)? else {
            return Err(PyValueError::new_err("a resource entry is a dict"));
        };
        let scopes = scope_list(scopes)?;
        let (kind, other, member) = if is_template {
            (EntryKind::Template, EntryKind::Resource, "uriTemplate")
        } else {
            (EntryKind::Resource, EntryKind::Template, "uri")
        };
        fields.insert(member.into(), Value::String(uri.to_owned()));
        let fields = Value::Object(fields);
        let new =
            if is_template {
                Entry::Template(serde_json::from_value(fields).map_err(|e| {
                    PyValueError::new_err(format!("invalid resource template: {e}"))
                })?)
            } else {
                Entry::Resource(
                    serde_json::from_value(fields)
                        .map_err(|e| PyValueError::new_err(format!("invalid resource: {e}")))?,
                )
            };
        let (outcome, _unused) = {
            let mut state = self.lock();
            // One key names one entry: a resource replaces a template of the same text and
            // the other way round.
            let replaced = state.take(other, uri).1;
            let (outcome, unused) = state.put(kind, uri.to_owned(), new, handler, scopes);
            (outcome, [replaced, unused])
        };
        outcome.map_err(catalog_error)?;
        Ok(if is_template { "template" } else { "resource" })
    }

    /// Registers a prompt (a `Prompt` dict: `name`, `arguments`, ...) served by `handler`
    #[pyo3(signature = (prompt, handler, scopes=None))]
    fn add_prompt(
        &self,
        prompt: &Bound<'_, PyAny>,
        handler: Py<PyAny>,
        scopes: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let prompt: Prompt = convert::from_py(prompt, "prompt")?;
        let scopes = scope_list(scopes)?;
        let key = prompt.name.clone();
        let (outcome, _unused) = self.lock().put(
            EntryKind::Prompt,
            key,
            Entry::Prompt(prompt),
            handler,
            scopes,
        );
        outcome.map_err(catalog_error)
    }

    /// Sets the `completion/complete` handler
    fn set_completion(&self, handler: Py<PyAny>) {
        let _replaced = self.lock().handlers.completion.replace(handler);
    }

    /// Removes a tool and its handler; whether there was one
    fn remove_tool(&self, name: &str) -> bool {
        let (removed, _handler) = self.lock().take(EntryKind::Tool, name);
        removed
    }

    /// Removes a resource or resource template (by its URI or URI template) and its
    /// reader; whether there was one
    fn remove_resource(&self, uri: &str) -> bool {
        let (resource, template) = {
            let mut state = self.lock();
            (
                state.take(EntryKind::Resource, uri),
                state.take(EntryKind::Template, uri),
            )
        };
        resource.0 || template.0
    }

    /// Removes a prompt and its handler; whether there was one
    fn remove_prompt(&self, name: &str) -> bool {
        let (removed, _handler) = self.lock().take(EntryKind::Prompt, name);
        removed
    }

    /// The handler of an entry (`kind`: `"tool"`, `"resource"`, `"template"`, `"prompt"`),
    /// or `None`
    fn handler(&self, py: Python<'_>, kind: &str, key: &str) -> PyResult<Option<Py<PyAny>>> {
        let kind = entry_kind(kind)?;
        let state = self.lock();
        Ok(state
            .handlers
            .entries
            .get(&(kind, key.to_owned()))
            .map(|h| h.clone_ref(py)))
    }

    /// The `completion/complete` handler, or `None`
    #[getter]
    fn completion(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        let state = self.lock();
        state.handlers.completion.as_ref().map(|h| h.clone_ref(py))
    }

    /// A tool as `tools/list` shows it, or `None`
    fn tool<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
        let tool = self.lock().catalog.tool(name).cloned();
        tool.map(|t| convert::typed_to_py(py, &t)).transpose()
    }

    /// The tools
    #[getter]
    fn tools<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let tools: Vec<Tool> = self.lock().catalog.tools().cloned().collect();
        convert::typed_to_py(py, &tools)
    }

    /// The resources
    #[getter]
    fn resources<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let resources: Vec<Resource> = self.lock().catalog.resources().cloned().collect();
        convert::typed_to_py(py, &resources)
    }

    /// The resource templates
    #[getter]
    fn resource_templates<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let templates: Vec<ResourceTemplate> = self.lock().catalog.templates().cloned().collect();
        convert::typed_to_py(py, &templates)
    }

    /// The prompts
    #[getter]
    fn prompts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let prompts: Vec<Prompt> = self.lock().catalog.prompts().cloned().collect();
        convert::typed_to_py(py, &prompts)
    }

    /// The scopes an entry requires of its callers (empty: none)
    fn required_scopes(&self, kind: &str, key: &str) -> PyResult<Vec<String>> {
        let kind = entry_kind(kind)?;
        Ok(self.lock().catalog.required_scopes(kind, key).to_vec())
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        // Held by another thread right now (it runs no Python code while it holds it):
        // nothing is reported this time, which only keeps the handlers alive.
        match self.state.try_lock() {
            Ok(state) => state.handlers.traverse(&visit),
            Err(_) => Ok(()),
        }
    }

    fn __repr__(&self) -> String {
        let state = self.lock();
        format!(
            "Catalog(tools={}, resources={}, resource_templates={}, prompts={})",
            state.catalog.tools().count(),
            state.catalog.resources().count(),
            state.catalog.templates().count(),
            state.catalog.prompts().count()
        )
    }
}
