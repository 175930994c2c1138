//! Who may use what: the scopes a tool, resource, resource template or prompt requires of
//! its caller's access token
//!
//! A server declares them per entry ([`Catalog::require_scopes`]); the catalog refuses a
//! request from a caller whose principal lacks one ([`Catalog::route`] answers with
//! [`insufficient_scope`], a JSON-RPC error, on every transport), hides such entries from
//! the lists with [`CatalogConfig::hide_forbidden`](super::CatalogConfig::hide_forbidden),
//! and gives an HTTP server the same rules ([`Catalog::access`], for
//! [`HttpServer::set_required_scopes`](crate::http::HttpServer::set_required_scopes)), which
//! answers such a request with `403` and a `WWW-Authenticate: Bearer
//! error="insufficient_scope", scope="..."` challenge before any handler runs: the
//! authorization spec's step-up, which a client answers by asking for the scopes and
//! sending the request again.
//!
//! A caller without a principal (an unprotected server, a byte stream the application did
//! not authenticate) has no scopes: an entry that requires any is refused to it.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::json;

use super::catalog::Catalog;
use super::error::EntryKind;
use crate::jsonrpc::ErrorObject;
use crate::session::Principal;
use crate::uri_template::UriTemplate;

/// The JSON-RPC error code of a request refused for want of a scope
pub const INSUFFICIENT_SCOPE: i64 = -32003;

/// The error for a request whose caller lacks `needed` for the `kind` entry `key`:
/// [`INSUFFICIENT_SCOPE`], with `data: {"error": "insufficient_scope", "requiredScopes": [...]}`
pub fn insufficient_scope(kind: EntryKind, key: &str, needed: &[String]) -> ErrorObject {
    ErrorObject::new(
        INSUFFICIENT_SCOPE,
        format!(
            "Insufficient scope: {kind} {key} requires {}",
            needed.join(" ")
        ),
    )
    .with_data(&json!({"error": "insufficient_scope", "requiredScopes": needed}))
}

/// Whether a caller with `principal` may use an entry that requires `needed`
pub(crate) fn allowed(principal: Option<&Principal>, needed: &[String]) -> bool {
    needed.is_empty() || principal.is_some_and(|p| p.has_scopes(needed))
}

/// The scopes of a catalog's entries, as an HTTP server checks them before a request
/// reaches the session; from [`Catalog::access`]
#[derive(Debug, Clone, Default)]
pub struct Access {
    tools: HashMap<String, Vec<String>>,
    prompts: HashMap<String, Vec<String>>,
    /// Every resource (an exact URI wins over a template, as in [`Catalog::resolve`])
    resources: HashMap<String, Vec<String>>,
    /// Every template, in listing order
    templates: Vec<(UriTemplate, Vec<String>)>,
}

impl crate::http::RequiredScopes for Access {
    fn required(&self, method: &str, name: &str) -> Option<&[String]> {
        let needed = match method {
            "tools/call" => self.tools.get(name)?,
            "prompts/get" => self.prompts.get(name)?,
            "resources/read" => match self.resources.get(name) {
                Some(needed) => needed,
                None => {
                    &self
                        .templates
                        .iter()
                        .find(|(t, _)| t.matches(name).is_some())?
                        .1
                }
            },
            _ => return None,
        };
        (!needed.is_empty()).then_some(needed.as_slice())
    }
}

impl Catalog {
    /// Requires `scopes` of every caller of the `kind` entry `key` (replacing what it
    /// required before; empty requires nothing); `false` if no such entry is registered
    ///
    /// The requirement goes with the entry: removing the entry removes it.
    pub fn require_scopes(&mut self, kind: EntryKind, key: &str, scopes: Vec<String>) -> bool {
        let exists = match kind {
            EntryKind::Tool => self.tools.contains(key),
            EntryKind::Resource => self.resources.contains(key),
            EntryKind::Template => self.templates.contains(key),
            EntryKind::Prompt => self.prompts.contains(key),
        };
        if !exists {
            return false;
        }
        if scopes.is_empty() {
            self.scopes.remove(&(kind, key.to_owned()));
        } else {
            self.scopes.insert((kind, key.to_owned()), scopes);
        }
        true
    }

    /// The scopes the `kind` entry `key` requires (empty: none)
    pub fn required_scopes(&self, kind: EntryKind, key: &str) -> &[String] {
        // A lookup without allocating the key: scopes are few, and usually none.
        if self.scopes.is_empty() {
            return &[];
        }
        self.scopes
            .iter()
            .find(|((k, name), _)| *k == kind && name == key)
            .map_or(&[], |(_, s)| s.as_slice())
    }

    /// Whether a caller with `principal` may use the `kind` entry `key`
    ///
    /// # Errors
    /// [`insufficient_scope`] naming what it lacks.
    pub fn check_access(
        &self,
        kind: EntryKind,
        key: &str,
        principal: Option<&Principal>,
    ) -> Result<(), ErrorObject> {
        let needed = self.required_scopes(kind, key);
        if allowed(principal, needed) {
            Ok(())
        } else {
            Err(insufficient_scope(kind, key, needed))
        }
    }

    /// Leaves out of the lists what the caller may not use, or not (the setting of
    /// [`CatalogConfig::hide_forbidden`](super::CatalogConfig::hide_forbidden))
    pub fn hide_forbidden(&mut self, hide: bool) {
        self.config.hide_forbidden = hide;
    }

    /// Whether any entry requires a scope
    pub fn has_scoped_entries(&self) -> bool {
        !self.scopes.is_empty()
    }

    /// The entries' scopes for an HTTP server's check before the session
    /// ([`HttpServer::set_required_scopes`](crate::http::HttpServer::set_required_scopes)); `None`
    /// when no entry requires any
    pub fn access(&self) -> Option<Arc<Access>> {
        if self.scopes.is_empty() {
            return None;
        }
        let of = |kind, key: &str| self.required_scopes(kind, key).to_vec();
        Some(Arc::new(Access {
            tools: self
                .tools()
                .map(|t| (t.name.clone(), of(EntryKind::Tool, &t.name)))
                .filter(|(_, s)| !s.is_empty())
                .collect(),
            prompts: self
                .prompts()
                .map(|p| (p.name.clone(), of(EntryKind::Prompt, &p.name)))
                .filter(|(_, s)| !s.is_empty())
                .collect(),
            resources: self
                .resources()
                .map(|r| (r.uri.clone(), of(EntryKind::Resource, &r.uri)))
                .collect(),
            templates: self
                .templates
                .iter()
                .map(|e| {
                    let key = &e.template.uri_template;
                    (e.parsed.clone(), of(EntryKind::Template, key))
                })
                .collect(),
        }))
    }

    /// Forgets the scopes of an entry that was removed
    pub(crate) fn forget_scopes(&mut self, kind: EntryKind, key: &str) {
        if !self.scopes.is_empty() {
            self.scopes.remove(&(kind, key.to_owned()));
        }
    }

    /// Whether a listing shows the `kind` entry `key` to a caller with `principal`
    pub(crate) fn shows(&self, kind: EntryKind, key: &str, principal: Option<&Principal>) -> bool {
        !self.config.hide_forbidden || allowed(principal, self.required_scopes(kind, key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::RequiredScopes;
    use crate::schema::{Prompt, Resource, ResourceTemplate, Tool};
    use serde_json::json;

    fn catalog() -> Catalog {
        let mut c = Catalog::default();
        let schema = json!({"type": "object"});
        let schema = schema.as_object().unwrap().clone();
        c.add_tool(Tool::new("open", schema.clone())).unwrap();
        c.add_tool(Tool::new("admin", schema)).unwrap();
        c.add_resource(Resource::new("file:///a", "a")).unwrap();
        c.add_template(ResourceTemplate::new("file:///{x}", "x"))
            .unwrap();
        c.add_prompt(Prompt::new("p")).unwrap();
        c
    }

    #[test]
    fn scopes_are_required_and_checked() {
        let mut c = catalog();
        assert!(c.access().is_none());
        assert!(c.require_scopes(EntryKind::Tool, "admin", vec!["mcp:admin".into()]));
        assert!(!c.require_scopes(EntryKind::Tool, "nope", vec!["x".into()]));
        assert!(c.require_scopes(EntryKind::Template, "file:///{x}", vec!["files".into()]));
        let admin = Principal::new(Some("a".into()), None).with_scopes(vec!["mcp:admin".into()]);
        let plain = Principal::new(Some("b".into()), None);
        assert!(
            c.check_access(EntryKind::Tool, "admin", Some(&admin))
                .is_ok()
        );
        let refused = c
            .check_access(EntryKind::Tool, "admin", Some(&plain))
            .unwrap_err();
        assert_eq!(refused.code, INSUFFICIENT_SCOPE);
        assert!(c.check_access(EntryKind::Tool, "admin", None).is_err());
        assert!(c.check_access(EntryKind::Tool, "open", None).is_ok());

        let access = c.access().unwrap();
        assert_eq!(
            access.required("tools/call", "admin"),
            Some(&["mcp:admin".to_owned()][..])
        );
        assert_eq!(access.required("tools/call", "open"), None);
        // The exact resource wins over the template that would match it.
        assert_eq!(access.required("resources/read", "file:///a"), None);
        assert_eq!(
            access.required("resources/read", "file:///b"),
            Some(&["files".to_owned()][..])
        );
        assert_eq!(access.required("prompts/get", "p"), None);

        // Removing the entry removes its requirement.
        assert!(c.remove_tool("admin"));
        c.add_tool(Tool::new(
            "admin",
            json!({"type": "object"}).as_object().unwrap().clone(),
        ))
        .unwrap();
        assert!(c.check_access(EntryKind::Tool, "admin", None).is_ok());
    }
}
