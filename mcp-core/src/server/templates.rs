//! Resource templates: registration, and finding what a `resources/read` URI names
//!
//! Everything that touches [`UriTemplate`] (RFC 6570) is in this file.

use super::catalog::{Catalog, duplicate};
use super::error::{CatalogError, EntryKind};
use crate::jsonrpc::{ErrorObject, code};
use crate::schema::{CompleteResult, Resource, ResourceTemplate};
use crate::server::uri_template::{UriTemplate, Variables};

/// A template with its parsed URI template
#[derive(Debug)]
pub(crate) struct TemplateEntry {
    pub(crate) template: ResourceTemplate,
    pub(crate) parsed: UriTemplate,
}

/// What a `resources/read` URI names, from [`Catalog::resolve`]
#[derive(Debug)]
#[non_exhaustive]
pub enum ResourceMatch<'a> {
    /// A registered resource with exactly this URI
    Resource(&'a Resource),
    /// The first template (in listing order) the URI is an expansion of
    Template {
        /// The template
        template: &'a ResourceTemplate,
        /// The values of its variables, percent-decoded
        variables: Variables,
    },
}

/// The answer to a `resources/read` of a URI the server does not have: -32602
/// `Resource not found: <uri>` with `data: {"uri": <uri>}` (2026-07-28, SEP-2164; earlier
/// versions used -32002, which is reserved now and never sent)
pub fn resource_not_found(uri: &str) -> ErrorObject {
    ErrorObject::new(code::INVALID_PARAMS, format!("Resource not found: {uri}"))
        .with_data(&serde_json::json!({ "uri": uri }))
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
        let parsed = UriTemplate::parse(&template.uri_template).map_err(|e| {
            CatalogError::InvalidTemplate {
                template: template.uri_template.clone(),
                reason: e.to_string(),
            }
        })?;
        self.templates.insert(
            template.uri_template.clone(),
            TemplateEntry { template, parsed },
        );
        self.changed(EntryKind::Template);
        Ok(())
    }

    /// What `uri` names: the registered resource with exactly this URI, else the first
    /// template (in listing order) that matches it, with its variables; `None` when
    /// nothing does (answer with [`resource_not_found`])
    ///
    /// Matching costs grow with the number of templates; each match is bounded by the
    /// template matcher.
    pub fn resolve(&self, uri: &str) -> Option<ResourceMatch<'_>> {
        if let Some(resource) = self.resources.get(uri) {
            return Some(ResourceMatch::Resource(resource));
        }
        self.templates.iter().find_map(|entry| {
            entry
                .parsed
                .matches(uri)
                .map(|variables| ResourceMatch::Template {
                    template: &entry.template,
                    variables,
                })
        })
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
        if !entry.parsed.variables().any(|name| name == variable) {
            return Err(ErrorObject::new(
                code::INVALID_PARAMS,
                format!("Resource template {uri_template} has no variable {variable}"),
            ));
        }
        Ok(super::complete(prefix, candidates))
    }
}
