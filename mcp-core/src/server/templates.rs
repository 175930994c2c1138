//! Resource templates: registration, and finding what a `resources/read` URI names
//!
//! Everything that touches [`UriTemplate`] (RFC 6570) is in this file.

use super::error::CatalogError;
use crate::jsonrpc::{ErrorObject, code};
use crate::schema::{Resource, ResourceTemplate};
use crate::uri_template::{UriTemplate, Variables};

/// A template with its parsed URI template
#[derive(Debug)]
pub(crate) struct TemplateEntry {
    pub(crate) template: ResourceTemplate,
    pub(crate) parsed: UriTemplate,
}

/// What a `resources/read` URI names, from [`Catalog::resolve`](super::Catalog::resolve)
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

impl TemplateEntry {
    /// Parses the template's URI template
    pub(crate) fn parse(template: ResourceTemplate) -> Result<Self, CatalogError> {
        let parsed = UriTemplate::parse(&template.uri_template).map_err(|e| {
            CatalogError::InvalidTemplate {
                template: template.uri_template.clone(),
                reason: e.to_string(),
            }
        })?;
        Ok(Self { template, parsed })
    }

    /// The template and its variables, when `uri` matches it
    pub(crate) fn resolve(&self, uri: &str) -> Option<ResourceMatch<'_>> {
        self.parsed
            .matches(uri)
            .map(|variables| ResourceMatch::Template {
                template: &self.template,
                variables,
            })
    }

    /// Whether the template has a variable named `variable`
    pub(crate) fn has_variable(&self, variable: &str) -> bool {
        self.parsed.variables().any(|name| name == variable)
    }
}
