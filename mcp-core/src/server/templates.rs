//! Resource templates: registration, and finding what a `resources/read` URI names
//!
//! Everything that touches [`UriTemplate`] (RFC 6570) is in this file.

use super::catalog::{Catalog, duplicate};
use super::error::{CatalogError, EntryKind};
use crate::jsonrpc::{ErrorObject, code};
use crate::schema::{CompleteResult, Resource, ResourceTemplate};
use uri_template_api::{UriTemplate, Variables};

/// A template with its parsed URI template
#[derive(Debug)]
pub(crate) struct TemplateEntry {
    pub(crate) template: ResourceTemplate,
    parsed: UriTemplate,
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
    /// nothing does (answer with [`resource_not_found`], or use
    /// [`resolve_or_error`](Self::resolve_or_error))
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

    /// [`resolve`](Self::resolve), with the not-found error ready to send
    ///
    /// # Errors
    /// [`resource_not_found`] for `uri`.
    pub fn resolve_or_error(&self, uri: &str) -> Result<ResourceMatch<'_>, ErrorObject> {
        self.resolve(uri).ok_or_else(|| resource_not_found(uri))
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

/// TEMPORARY stand-in for `crate::uri_template` (branch `uritemplate`, not merged yet):
/// the same API, level-1 `{var}` expressions only. Delete it and import
/// `crate::uri_template::{UriTemplate, Variables}` once the branch is merged.
mod uri_template_api {
    use std::fmt;

    #[derive(Debug, Clone)]
    pub(crate) struct UriTemplate {
        parts: Vec<Part>,
    }

    #[derive(Debug, Clone)]
    enum Part {
        Literal(String),
        Var(String),
    }

    #[derive(Debug, Clone, PartialEq, Eq)]
    pub(crate) struct TemplateError(String);

    impl fmt::Display for TemplateError {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(&self.0)
        }
    }

    /// Variable values by name, in template order
    #[derive(Debug, Clone, Default, PartialEq, Eq)]
    pub struct Variables {
        entries: Vec<(String, String)>,
    }

    impl Variables {
        /// The value of `name`, if set
        pub fn get(&self, name: &str) -> Option<&str> {
            self.get_str(name)
        }

        /// The value of `name`, if set
        pub fn get_str(&self, name: &str) -> Option<&str> {
            self.entries
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        }
    }

    impl UriTemplate {
        pub(crate) fn parse(template: &str) -> Result<Self, TemplateError> {
            let mut parts = Vec::new();
            let mut rest = template;
            while let Some(open) = rest.find(['{', '}']) {
                if rest.as_bytes()[open] == b'}' {
                    return Err(TemplateError("'}' without a matching '{'".into()));
                }
                let close = rest[open..]
                    .find('}')
                    .ok_or_else(|| TemplateError("unclosed '{'".into()))?;
                let name = &rest[open + 1..open + close];
                if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return Err(TemplateError(format!("unsupported expression {{{name}}}")));
                }
                if open > 0 {
                    parts.push(Part::Literal(rest[..open].to_owned()));
                }
                parts.push(Part::Var(name.to_owned()));
                rest = &rest[open + close + 1..];
            }
            if !rest.is_empty() {
                parts.push(Part::Literal(rest.to_owned()));
            }
            Ok(Self { parts })
        }

        pub(crate) fn variables(&self) -> impl Iterator<Item = &str> {
            self.parts.iter().filter_map(|p| match p {
                Part::Var(name) => Some(name.as_str()),
                Part::Literal(_) => None,
            })
        }

        pub(crate) fn matches(&self, uri: &str) -> Option<Variables> {
            let mut rest = uri;
            let mut entries = Vec::new();
            let mut parts = self.parts.iter().peekable();
            while let Some(part) = parts.next() {
                match part {
                    Part::Literal(lit) => rest = rest.strip_prefix(lit.as_str())?,
                    Part::Var(name) => {
                        let end = match parts.peek() {
                            Some(Part::Literal(lit)) => rest.find(lit.as_str())?,
                            _ => rest.len(),
                        };
                        let value = &rest[..end];
                        if value.is_empty() || value.contains(['/', '?', '#']) {
                            return None;
                        }
                        entries.push((name.clone(), value.to_owned()));
                        rest = &rest[end..];
                    }
                }
            }
            rest.is_empty().then_some(Variables { entries })
        }
    }
}
