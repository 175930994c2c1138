//! The catalog: registration, lookup and paginated listing of tools, resources, resource
//! templates and prompts

use std::collections::HashMap;

use serde_json::Value;

use super::changes::{ListChanges, Revisions};
use super::completion::complete;
use super::error::{CatalogError, EntryKind};
use super::names::check_tool_name;
use super::registry::{Order, Registry};
use super::templates::{ResourceMatch, TemplateEntry};
use super::validate::{SchemaLimits, SchemaValidator};
use crate::jsonrpc::{ErrorObject, code};
use crate::schema::{
    CacheScope, CompleteResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedParams, Prompt, ReadResourceResult, Resource,
    ResourceTemplate, Tool,
};
use crate::session::Principal;

/// The caching hints (2026-07-28 `ttlMs`, `cacheScope`) a catalog puts on its results
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct CachePolicy {
    /// How long a client may reuse the result, in milliseconds
    pub ttl_ms: u64,
    /// Who may reuse it
    pub scope: CacheScope,
}

impl CachePolicy {
    /// A policy
    pub fn new(ttl_ms: u64, scope: CacheScope) -> Self {
        Self { ttl_ms, scope }
    }
}

impl Default for CachePolicy {
    /// `ttlMs: 0`, `cacheScope: "private"`: a result is stale at once and never shared across
    /// authorization contexts. Safe whatever the server does; a server whose lists are the
    /// same for every user and change rarely can raise the TTL and make them public.
    fn default() -> Self {
        Self::new(0, CacheScope::Private)
    }
}

/// How a [`Catalog`] pages, orders, caches and checks schemas
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CatalogConfig {
    /// Most entries per list page (default 100; 0 counts as 1)
    pub page_size: usize,
    /// Listing order (default [`Order::ByKey`]); fixed when the catalog is created
    pub order: Order,
    /// Caching hints of list results, and of `resources/read` results that set none
    /// (default: [`CachePolicy::default`])
    pub cache: CachePolicy,
    /// Limits on tool input schemas (default: [`SchemaLimits::default`])
    pub schema_limits: SchemaLimits,
    /// Leave out of the lists what the caller may not use (an entry whose
    /// [required scopes](Catalog::require_scopes) its principal lacks); default `false`:
    /// lists show everything, and a call is refused
    pub hide_forbidden: bool,
}

impl CatalogConfig {
    /// The default page size
    pub const DEFAULT_PAGE_SIZE: usize = 100;

    /// The defaults
    pub fn new() -> Self {
        Self {
            page_size: Self::DEFAULT_PAGE_SIZE,
            order: Order::ByKey,
            cache: CachePolicy::default(),
            schema_limits: SchemaLimits::default(),
            hide_forbidden: false,
        }
    }
}

impl Default for CatalogConfig {
    fn default() -> Self {
        Self::new()
    }
}

/// A tool with its compiled input schema
#[derive(Debug)]
pub(crate) struct ToolEntry {
    pub(crate) tool: Tool,
    pub(crate) validator: SchemaValidator,
}

/// What a server offers: tools, resources, resource templates and prompts
///
/// Pure bookkeeping, no handlers: the binding registers entries, asks the catalog to answer
/// the list requests, to check `tools/call` arguments, to find which resource or template a
/// URI names and to check prompt arguments, then runs its own handler.
///
/// - **Keys and order.** Tools and prompts are keyed by name, resources by URI, templates
///   by URI template; a key is registered once. Lists come sorted by key (byte-wise), or in
///   registration order with [`Order::Registration`].
/// - **Pages.** Each list is cut into pages of [`CatalogConfig::page_size`]; `nextCursor`
///   names the last entry returned, so entries removed between two pages are neither
///   skipped nor repeated (entries *added* before the cursor's position are not seen until
///   the next full listing). A cursor this catalog did not issue for that list is -32602
///   `Invalid cursor`.
/// - **Caching hints.** List results carry [`CatalogConfig::cache`]; fitting them to a
///   legacy version ([`FitVersion`](crate::schema::FitVersion), done by
///   [`Session::respond`](crate::Session::respond)) removes them again.
/// - **Changes.** Every registration or removal is noted for
///   [`take_changes`](Self::take_changes) and counted in [`revisions`](Self::revisions).
#[derive(Debug)]
pub struct Catalog {
    pub(crate) config: CatalogConfig,
    pub(crate) tools: Registry<ToolEntry>,
    pub(crate) resources: Registry<Resource>,
    pub(crate) templates: Registry<TemplateEntry>,
    pub(crate) prompts: Registry<Prompt>,
    changes: ListChanges,
    revisions: Revisions,
    /// Entries that require scopes of their callers (see [`Catalog::require_scopes`])
    pub(crate) scopes: HashMap<(EntryKind, String), Vec<String>>,
}

impl Default for Catalog {
    fn default() -> Self {
        Self::new(CatalogConfig::default())
    }
}

impl Catalog {
    /// An empty catalog
    pub fn new(config: CatalogConfig) -> Self {
        let order = config.order;
        Self {
            config,
            tools: Registry::new('t', order),
            resources: Registry::new('r', order),
            templates: Registry::new('u', order),
            prompts: Registry::new('p', order),
            changes: ListChanges::default(),
            revisions: Revisions::default(),
            scopes: HashMap::new(),
        }
    }

    /// The configuration
    pub fn config(&self) -> &CatalogConfig {
        &self.config
    }

    // Tools

    /// Registers a tool
    ///
    /// The name must follow the naming rule ([`check_tool_name`](super::check_tool_name))
    /// and be new; `inputSchema` must say `"type": "object"` and compile within
    /// [`CatalogConfig::schema_limits`]. It is compiled once, here.
    ///
    /// # Errors
    /// [`CatalogError::InvalidToolName`], [`CatalogError::Duplicate`],
    /// [`CatalogError::InputSchemaNotObject`] or [`CatalogError::InvalidSchema`]; the
    /// catalog is unchanged.
    pub fn add_tool(&mut self, mut tool: Tool) -> Result<(), CatalogError> {
        check_tool_name(&tool.name).map_err(|reason| CatalogError::InvalidToolName {
            name: tool.name.clone(),
            reason,
        })?;
        if self.tools.contains(&tool.name) {
            return Err(duplicate(EntryKind::Tool, &tool.name));
        }
        if tool.input_schema.get("type") != Some(&Value::from("object")) {
            return Err(CatalogError::InputSchemaNotObject { tool: tool.name });
        }
        // Borrow the schema as a `Value` without copying it.
        let schema = Value::Object(std::mem::take(&mut tool.input_schema));
        let compiled = SchemaValidator::compile(&schema, &self.config.schema_limits);
        if let Value::Object(map) = schema {
            tool.input_schema = map;
        }
        let validator = compiled.map_err(|error| CatalogError::InvalidSchema {
            tool: tool.name.clone(),
            error,
        })?;
        self.tools
            .insert(tool.name.clone(), ToolEntry { tool, validator });
        self.changed(EntryKind::Tool);
        Ok(())
    }

    /// Removes a tool; whether it was registered
    pub fn remove_tool(&mut self, name: &str) -> bool {
        let removed = self.tools.remove(name).is_some();
        if removed {
            self.forget_scopes(EntryKind::Tool, name);
            self.changed(EntryKind::Tool);
        }
        removed
    }

    /// A registered tool
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.get(name).map(|entry| &entry.tool)
    }

    /// Every tool, in listing order
    pub fn tools(&self) -> impl Iterator<Item = &Tool> {
        self.tools.iter().map(|entry| &entry.tool)
    }

    /// Answers `tools/list`: the page at `params.cursor`, with caching hints
    ///
    /// # Errors
    /// -32602 `Invalid cursor` for a cursor this list did not issue.
    pub fn list_tools(&self, params: &PaginatedParams) -> Result<ListToolsResult, ErrorObject> {
        self.list_tools_for(params, None)
    }

    /// [`list_tools`](Self::list_tools) for a caller with `principal`: with
    /// [`CatalogConfig::hide_forbidden`], without the tools it may not call
    ///
    /// # Errors
    /// -32602 `Invalid cursor` for a cursor this list did not issue.
    pub fn list_tools_for(
        &self,
        params: &PaginatedParams,
        principal: Option<&Principal>,
    ) -> Result<ListToolsResult, ErrorObject> {
        let (page, next) = self
            .tools
            .page(params.cursor.as_deref(), self.config.page_size)?;
        let result = ListToolsResult::new(
            page.into_iter()
                .filter(|e| self.shows(EntryKind::Tool, &e.tool.name, principal))
                .map(|e| e.tool.clone())
                .collect(),
        );
        let CachePolicy { ttl_ms, scope } = self.config.cache;
        let mut result = result.with_cache(ttl_ms, scope);
        result.next_cursor = next;
        Ok(result)
    }

    // Resources

    /// Registers a resource under its URI
    ///
    /// # Errors
    /// [`CatalogError::EmptyKey`] or [`CatalogError::Duplicate`]; the catalog is unchanged.
    pub fn add_resource(&mut self, resource: Resource) -> Result<(), CatalogError> {
        if resource.uri.is_empty() {
            return Err(CatalogError::EmptyKey {
                kind: EntryKind::Resource,
            });
        }
        if self.resources.contains(&resource.uri) {
            return Err(duplicate(EntryKind::Resource, &resource.uri));
        }
        self.resources.insert(resource.uri.clone(), resource);
        self.changed(EntryKind::Resource);
        Ok(())
    }

    /// Removes a resource; whether it was registered
    pub fn remove_resource(&mut self, uri: &str) -> bool {
        let removed = self.resources.remove(uri).is_some();
        if removed {
            self.forget_scopes(EntryKind::Resource, uri);
            self.changed(EntryKind::Resource);
        }
        removed
    }

    /// A registered resource
    pub fn resource(&self, uri: &str) -> Option<&Resource> {
        self.resources.get(uri)
    }

    /// Every resource, in listing order
    pub fn resources(&self) -> impl Iterator<Item = &Resource> {
        self.resources.iter()
    }

    /// Answers `resources/list`
    ///
    /// # Errors
    /// -32602 `Invalid cursor`.
    pub fn list_resources(
        &self,
        params: &PaginatedParams,
    ) -> Result<ListResourcesResult, ErrorObject> {
        self.list_resources_for(params, None)
    }

    /// [`list_resources`](Self::list_resources) for a caller with `principal`
    ///
    /// # Errors
    /// -32602 `Invalid cursor`.
    pub fn list_resources_for(
        &self,
        params: &PaginatedParams,
        principal: Option<&Principal>,
    ) -> Result<ListResourcesResult, ErrorObject> {
        let (page, next) = self
            .resources
            .page(params.cursor.as_deref(), self.config.page_size)?;
        let result = ListResourcesResult::new(
            page.into_iter()
                .filter(|r| self.shows(EntryKind::Resource, &r.uri, principal))
                .cloned()
                .collect(),
        );
        let CachePolicy { ttl_ms, scope } = self.config.cache;
        let mut result = result.with_cache(ttl_ms, scope);
        result.next_cursor = next;
        Ok(result)
    }

    /// Gives a `resources/read` result the catalog's caching hints, unless the handler set
    /// its own
    pub fn with_read_cache(&self, mut result: ReadResourceResult) -> ReadResourceResult {
        if result.ttl_ms.is_none() || result.cache_scope.is_none() {
            let CachePolicy { ttl_ms, scope } = self.config.cache;
            result.ttl_ms.get_or_insert(ttl_ms);
            result.cache_scope.get_or_insert(scope);
        }
        result
    }

    // Resource templates

    /// Removes a resource template by its URI template; whether it was registered
    pub fn remove_template(&mut self, uri_template: &str) -> bool {
        let removed = self.templates.remove(uri_template).is_some();
        if removed {
            self.forget_scopes(EntryKind::Template, uri_template);
            self.changed(EntryKind::Template);
        }
        removed
    }

    /// A registered resource template
    pub fn template(&self, uri_template: &str) -> Option<&ResourceTemplate> {
        self.templates.get(uri_template).map(|e| &e.template)
    }

    /// Every resource template, in listing order
    pub fn templates(&self) -> impl Iterator<Item = &ResourceTemplate> {
        self.templates.iter().map(|e| &e.template)
    }

    /// Answers `resources/templates/list`
    ///
    /// # Errors
    /// -32602 `Invalid cursor`.
    pub fn list_resource_templates(
        &self,
        params: &PaginatedParams,
    ) -> Result<ListResourceTemplatesResult, ErrorObject> {
        self.list_resource_templates_for(params, None)
    }

    /// [`list_resource_templates`](Self::list_resource_templates) for a caller with
    /// `principal`
    ///
    /// # Errors
    /// -32602 `Invalid cursor`.
    pub fn list_resource_templates_for(
        &self,
        params: &PaginatedParams,
        principal: Option<&Principal>,
    ) -> Result<ListResourceTemplatesResult, ErrorObject> {
        let (page, next) = self
            .templates
            .page(params.cursor.as_deref(), self.config.page_size)?;
        let result = ListResourceTemplatesResult::new(
            page.into_iter()
                .filter(|e| self.shows(EntryKind::Template, &e.template.uri_template, principal))
                .map(|e| e.template.clone())
                .collect(),
        );
        let CachePolicy { ttl_ms, scope } = self.config.cache;
        let mut result = result.with_cache(ttl_ms, scope);
        result.next_cursor = next;
        Ok(result)
    }

    // Prompts

    /// Registers a prompt under its name
    ///
    /// # Errors
    /// [`CatalogError::EmptyKey`] or [`CatalogError::Duplicate`]; the catalog is unchanged.
    pub fn add_prompt(&mut self, prompt: Prompt) -> Result<(), CatalogError> {
        if prompt.name.is_empty() {
            return Err(CatalogError::EmptyKey {
                kind: EntryKind::Prompt,
            });
        }
        if self.prompts.contains(&prompt.name) {
            return Err(duplicate(EntryKind::Prompt, &prompt.name));
        }
        self.prompts.insert(prompt.name.clone(), prompt);
        self.changed(EntryKind::Prompt);
        Ok(())
    }

    /// Removes a prompt; whether it was registered
    pub fn remove_prompt(&mut self, name: &str) -> bool {
        let removed = self.prompts.remove(name).is_some();
        if removed {
            self.forget_scopes(EntryKind::Prompt, name);
            self.changed(EntryKind::Prompt);
        }
        removed
    }

    /// A registered prompt
    pub fn prompt(&self, name: &str) -> Option<&Prompt> {
        self.prompts.get(name)
    }

    /// Every prompt, in listing order
    pub fn prompts(&self) -> impl Iterator<Item = &Prompt> {
        self.prompts.iter()
    }

    /// Answers `prompts/list`
    ///
    /// # Errors
    /// -32602 `Invalid cursor`.
    pub fn list_prompts(&self, params: &PaginatedParams) -> Result<ListPromptsResult, ErrorObject> {
        self.list_prompts_for(params, None)
    }

    /// [`list_prompts`](Self::list_prompts) for a caller with `principal`
    ///
    /// # Errors
    /// -32602 `Invalid cursor`.
    pub fn list_prompts_for(
        &self,
        params: &PaginatedParams,
        principal: Option<&Principal>,
    ) -> Result<ListPromptsResult, ErrorObject> {
        let (page, next) = self
            .prompts
            .page(params.cursor.as_deref(), self.config.page_size)?;
        let result = ListPromptsResult::new(
            page.into_iter()
                .filter(|p| self.shows(EntryKind::Prompt, &p.name, principal))
                .cloned()
                .collect(),
        );
        let CachePolicy { ttl_ms, scope } = self.config.cache;
        let mut result = result.with_cache(ttl_ms, scope);
        result.next_cursor = next;
        Ok(result)
    }

    // Changes

    /// The lists changed since the last call (or since the catalog was created), and
    /// forgets them
    ///
    /// For a catalog with one owner (one connection). A catalog shared by several
    /// connections should use [`revisions`](Self::revisions) instead, since one connection
    /// taking the changes would hide them from the others.
    pub fn take_changes(&mut self) -> ListChanges {
        std::mem::take(&mut self.changes)
    }

    /// The change counters of each list
    pub fn revisions(&self) -> Revisions {
        self.revisions
    }

    pub(crate) fn changed(&mut self, kind: EntryKind) {
        match kind {
            EntryKind::Tool => {
                self.changes.tools = true;
                self.revisions.tools += 1;
            }
            EntryKind::Resource | EntryKind::Template => {
                self.changes.resources = true;
                self.revisions.resources += 1;
            }
            EntryKind::Prompt => {
                self.changes.prompts = true;
                self.revisions.prompts += 1;
            }
        }
    }
}

impl Catalog {
    /// [`complete`] for an argument of a registered prompt
    ///
    /// # Errors
    /// -32602 when the prompt is unknown or declares no such argument.
    pub fn complete_prompt_argument<I>(
        &self,
        prompt: &str,
        argument: &str,
        prefix: &str,
        candidates: I,
    ) -> Result<CompleteResult, ErrorObject>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        let known = self.prompt(prompt).ok_or_else(|| {
            ErrorObject::new(code::INVALID_PARAMS, format!("Unknown prompt: {prompt}"))
        })?;
        if !known.arguments.iter().flatten().any(|a| a.name == argument) {
            return Err(ErrorObject::new(
                code::INVALID_PARAMS,
                format!("Prompt {prompt} has no argument {argument}"),
            ));
        }
        Ok(complete(prefix, candidates))
    }
}

impl Catalog {
    /// Registers a resource template under its URI template, parsed once here
    ///
    /// # Errors
    /// [`CatalogError::InvalidTemplate`] when the URI template does not parse,
    /// [`CatalogError::Duplicate`]; the catalog is unchanged.
    pub fn add_template(&mut self, template: ResourceTemplate) -> Result<(), CatalogError> {
        if self.templates.contains(&template.uri_template) {
            return Err(duplicate(EntryKind::Template, &template.uri_template));
        }
        let entry = TemplateEntry::parse(template)?;
        self.templates
            .insert(entry.template.uri_template.clone(), entry);
        self.changed(EntryKind::Template);
        Ok(())
    }

    /// What `uri` names: the registered resource with exactly this URI, else the first
    /// template (in listing order) that matches it, with its variables; `None` when
    /// nothing does (answer with [`resource_not_found`](super::resource_not_found))
    ///
    /// Matching costs grow with the number of templates; each match is bounded by the
    /// template matcher.
    pub fn resolve(&self, uri: &str) -> Option<ResourceMatch<'_>> {
        if let Some(resource) = self.resources.get(uri) {
            return Some(ResourceMatch::Resource(resource));
        }
        self.templates.iter().find_map(|entry| entry.resolve(uri))
    }

    /// [`complete`](super::complete) for a variable of a registered resource template
    /// (`completion/complete` with a `ref/resource` reference)
    ///
    /// # Errors
    /// -32602 when the template is not registered or has no such variable.
    pub fn complete_template_variable<I>(
        &self,
        uri_template: &str,
        variable: &str,
        prefix: &str,
        candidates: I,
    ) -> Result<CompleteResult, ErrorObject>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        let entry = self.templates.get(uri_template).ok_or_else(|| {
            ErrorObject::new(
                code::INVALID_PARAMS,
                format!("Unknown resource template: {uri_template}"),
            )
        })?;
        if !entry.has_variable(variable) {
            return Err(ErrorObject::new(
                code::INVALID_PARAMS,
                format!("Resource template {uri_template} has no variable {variable}"),
            ));
        }
        Ok(complete(prefix, candidates))
    }
}

pub(crate) fn duplicate(kind: EntryKind, key: &str) -> CatalogError {
    CatalogError::Duplicate {
        kind,
        key: key.to_owned(),
    }
}
