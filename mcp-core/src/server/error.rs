//! Why the catalog refused a registration

use super::validate::SchemaError;

/// What kind of entry an error is about
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EntryKind {
    /// A tool (keyed by name)
    Tool,
    /// A resource (keyed by URI)
    Resource,
    /// A resource template (keyed by URI template)
    Template,
    /// A prompt (keyed by name)
    Prompt,
}

impl std::fmt::Display for EntryKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Tool => "tool",
            Self::Resource => "resource",
            Self::Template => "resource template",
            Self::Prompt => "prompt",
        })
    }
}

/// A registration the [`Catalog`](super::Catalog) refused; the catalog is unchanged
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// The tool name breaks the naming rule (see [`check_tool_name`](super::check_tool_name))
    #[error("tool name {name:?} {reason}")]
    InvalidToolName {
        /// The name
        name: String,
        /// Why
        reason: String,
    },
    /// An entry with this key is already registered (remove it first to replace it)
    #[error("{kind} {key:?} is already registered")]
    Duplicate {
        /// What kind of entry
        kind: EntryKind,
        /// Its name, URI or URI template
        key: String,
    },
    /// The key is empty (resource URIs and prompt names must not be)
    #[error("{kind} key is empty")]
    EmptyKey {
        /// What kind of entry
        kind: EntryKind,
    },
    /// The tool's `inputSchema` lacks `"type": "object"`
    #[error("tool {tool:?}: inputSchema must have \"type\": \"object\"")]
    InputSchemaNotObject {
        /// The tool
        tool: String,
    },
    /// The tool's `inputSchema` was refused by the validator
    #[error("tool {tool:?}: {error}")]
    InvalidSchema {
        /// The tool
        tool: String,
        /// Why
        error: SchemaError,
    },
    /// No entry of this kind has this key (scopes can only be required of a registered one)
    #[error("no {kind} {key:?} is registered")]
    NotRegistered {
        /// What kind of entry
        kind: EntryKind,
        /// Its name, URI or URI template
        key: String,
    },
    /// The URI template does not parse (RFC 6570)
    #[error("resource template {template:?}: {reason}")]
    InvalidTemplate {
        /// The URI template
        template: String,
        /// Why
        reason: String,
    },
}
