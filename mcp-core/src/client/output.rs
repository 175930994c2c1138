//! Checking `structuredContent` against the tool's `outputSchema`
//!
//! When a tool declares an `outputSchema`, the server must return `structuredContent`
//! that conforms to it, and the client should check (2025-06-18 and later). An
//! [`OutputValidator`] is one connection's cache of compiled output schemas, keyed by tool
//! name: feed it every `tools/list` page with [`observe_tools`](OutputValidator::observe_tools),
//! then [`check`](OutputValidator::check) each `tools/call` result.
//!
//! The schemas come from the server, so compiling them is guarded: no `$ref` is ever fetched
//! (only references inside the schema resolve), `pattern` uses the linear-time `regex`
//! engine with size limits, and a schema deeper or bigger than [`OutputLimits`] is not
//! compiled. A schema that cannot be used makes that tool's results unverifiable, reported
//! as [`OutputError::Unverifiable`], never a panic.
//!
//! ```
//! use mcp_sansio::client::{OutputError, OutputValidator};
//! use mcp_sansio::schema::{CallToolResult, ListToolsResult, Tool};
//! use serde_json::json;
//!
//! let schema = json!({"type": "object", "properties": {"t": {"type": "number"}}, "required": ["t"]});
//! let tool = Tool::new("weather", Default::default())
//!     .with_output_schema(schema.as_object().unwrap().clone());
//! let mut outputs = OutputValidator::new();
//! assert!(outputs.observe_tools(&ListToolsResult::new(vec![tool])).is_empty());
//!
//! assert!(outputs.check("weather", &CallToolResult::structured(json!({"t": 21.5}))).is_ok());
//! let err = outputs.check("weather", &CallToolResult::structured(json!({"t": "warm"}))).unwrap_err();
//! assert!(matches!(err, OutputError::Invalid { .. }));
//! assert!(err.to_string().contains("/t"));
//! ```

use std::collections::HashMap;
use std::fmt;

use jsonschema::{PatternOptions, Validator};
use serde_json::{Map, Value};

use crate::schema::{CallToolResult, ListToolsResult, ResultType};

/// Bounds on what an [`OutputValidator`] accepts from a server
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct OutputLimits {
    /// Tools whose output schema is cached; further tools are not checked
    pub max_tools: usize,
    /// Nesting depth of a schema (the root object is depth 1)
    pub max_schema_depth: usize,
    /// JSON values (objects, arrays, strings, ...) in a schema
    pub max_schema_nodes: usize,
    /// Bytes of the strings and keys in a schema
    pub max_schema_bytes: usize,
    /// Approximate compiled size of one `pattern` regex, in bytes
    pub max_regex_bytes: usize,
    /// Validation errors reported per result
    pub max_errors: usize,
}

impl Default for OutputLimits {
    fn default() -> Self {
        Self {
            max_tools: 1024,
            max_schema_depth: 64,
            max_schema_nodes: 10_000,
            max_schema_bytes: 256 * 1024,
            max_regex_bytes: 256 * 1024,
            max_errors: 8,
        }
    }
}

/// Why a tool's output schema cannot be used
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaProblem {
    /// Nested deeper than [`OutputLimits::max_schema_depth`]
    #[error("the output schema is nested deeper than {max} levels")]
    TooDeep {
        /// The limit
        max: usize,
    },
    /// More values or bytes than [`OutputLimits::max_schema_nodes`] or
    /// [`OutputLimits::max_schema_bytes`]
    #[error("the output schema is larger than the limit")]
    TooLarge,
    /// The schema does not compile (invalid, an unknown draft, a remote `$ref`, a regex the
    /// `regex` engine rejects or that is too big, ...)
    #[error("the output schema does not compile: {0}")]
    Compile(String),
}

/// One way `structuredContent` breaks the output schema
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SchemaViolation {
    /// JSON pointer into `structuredContent` (`""` for the value itself)
    pub instance_path: String,
    /// What is wrong (cut to a few hundred bytes)
    pub message: String,
}

impl fmt::Display for SchemaViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.instance_path.is_empty() {
            "(root)"
        } else {
            &self.instance_path
        };
        write!(f, "{path}: {}", self.message)
    }
}

/// Why a tool result fails its output schema
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// The tool declared an output schema but the result has no `structuredContent`
    #[error("tool `{tool}` declares an outputSchema but its result has no structuredContent")]
    MissingStructuredContent {
        /// The tool
        tool: String,
    },
    /// `structuredContent` does not validate
    #[error(
        "structuredContent of tool `{tool}` does not match its outputSchema: {}",
        join(errors)
    )]
    Invalid {
        /// The tool
        tool: String,
        /// The first [`OutputLimits::max_errors`] violations
        errors: Vec<SchemaViolation>,
    },
    /// The tool's output schema could not be used, so its results cannot be checked
    #[error("results of tool `{tool}` cannot be checked: {problem}")]
    Unverifiable {
        /// The tool
        tool: String,
        /// Why
        problem: SchemaProblem,
    },
}

fn join(errors: &[SchemaViolation]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Something [`OutputValidator::observe_tools`] could not cache as asked
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ObserveWarning {
    /// The tool's output schema cannot be used; [`check`](OutputValidator::check) reports
    /// [`OutputError::Unverifiable`] for its results
    Unverifiable {
        /// The tool
        tool: String,
        /// Why
        problem: SchemaProblem,
    },
    /// The cache holds [`OutputLimits::max_tools`] tools already; this tool's results are not
    /// checked
    CacheFull {
        /// The tool
        tool: String,
    },
}

enum Entry {
    Compiled(Box<Validator>),
    Unverifiable(SchemaProblem),
}

/// One connection's compiled output schemas, keyed by tool name
///
/// Results of tools it never saw, or that declared no output schema, pass.
pub struct OutputValidator {
    limits: OutputLimits,
    tools: HashMap<String, Entry>,
}

impl fmt::Debug for OutputValidator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<&String> = self.tools.keys().collect();
        names.sort();
        f.debug_struct("OutputValidator")
            .field("limits", &self.limits)
            .field("tools", &names)
            .finish()
    }
}

impl Default for OutputValidator {
    fn default() -> Self {
        Self::new()
    }
}

impl OutputValidator {
    /// An empty cache with the default [`OutputLimits`]
    pub fn new() -> Self {
        Self::with_limits(OutputLimits::default())
    }

    /// An empty cache with these limits
    pub fn with_limits(limits: OutputLimits) -> Self {
        Self {
            limits,
            tools: HashMap::new(),
        }
    }

    /// How many tools have a cached output schema (usable or not)
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether no tool has a cached output schema
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Whether `tool`'s results are checked (its schema may still be unverifiable)
    pub fn contains(&self, tool: &str) -> bool {
        self.tools.contains_key(tool)
    }

    /// Forgets every tool; call it when `notifications/tools/list_changed` arrives, before
    /// listing again
    pub fn clear(&mut self) {
        self.tools.clear();
    }

    /// Forgets one tool
    pub fn forget(&mut self, tool: &str) {
        self.tools.remove(tool);
    }

    /// Records the output schemas of one `tools/list` page
    ///
    /// Each tool replaces what was known of a tool of the same name; a tool without an
    /// output schema drops it. Tools of other pages are kept (use [`clear`](Self::clear) to
    /// start over). Compiles every new schema; returns what could not be cached as asked.
    pub fn observe_tools(&mut self, list: &ListToolsResult) -> Vec<ObserveWarning> {
        let mut warnings = Vec::new();
        for tool in &list.tools {
            let Some(schema) = &tool.output_schema else {
                self.tools.remove(&tool.name);
                continue;
            };
            if !self.tools.contains_key(&tool.name) && self.tools.len() >= self.limits.max_tools {
                warnings.push(ObserveWarning::CacheFull {
                    tool: tool.name.clone(),
                });
                continue;
            }
            let entry = match self.compile(schema) {
                Ok(validator) => Entry::Compiled(Box::new(validator)),
                Err(problem) => {
                    warnings.push(ObserveWarning::Unverifiable {
                        tool: tool.name.clone(),
                        problem: problem.clone(),
                    });
                    Entry::Unverifiable(problem)
                }
            };
            self.tools.insert(tool.name.clone(), entry);
        }
        warnings
    }

    fn compile(&self, schema: &Map<String, Value>) -> Result<Validator, SchemaProblem> {
        measure(schema, &self.limits)?;
        let patterns = PatternOptions::regex()
            .size_limit(self.limits.max_regex_bytes)
            .dfa_size_limit(self.limits.max_regex_bytes);
        let schema = Value::Object(schema.clone());
        jsonschema::options()
            .offline()
            .with_pattern_options(patterns)
            .build(&schema)
            .map_err(|e| SchemaProblem::Compile(truncate(e.to_string())))
    }

    /// Checks a `tools/call` result of `tool` against the tool's output schema
    ///
    /// Passes when the tool is unknown or declared no output schema, when the result reports
    /// an error (`isError: true`: the schema describes successful results only), and for a
    /// result that is not final (`resultType` `input_required` or `task`).
    ///
    /// # Errors
    /// [`OutputError`]: no `structuredContent`, content that does not validate, or a schema
    /// that could not be compiled.
    pub fn check(&self, tool: &str, result: &CallToolResult) -> Result<(), OutputError> {
        if result.is_error() {
            return Ok(());
        }
        if matches!(
            result.result_type,
            Some(ResultType::InputRequired | ResultType::Task)
        ) {
            return Ok(());
        }
        let validator = match self.tools.get(tool) {
            None => return Ok(()),
            Some(Entry::Unverifiable(problem)) => {
                return Err(OutputError::Unverifiable {
                    tool: tool.to_owned(),
                    problem: problem.clone(),
                });
            }
            Some(Entry::Compiled(validator)) => validator,
        };
        let Some(content) = &result.structured_content else {
            return Err(OutputError::MissingStructuredContent {
                tool: tool.to_owned(),
            });
        };
        let errors: Vec<SchemaViolation> = validator
            .iter_errors(content)
            .take(self.limits.max_errors.max(1))
            .map(|e| SchemaViolation {
                instance_path: e.instance_path().to_string(),
                message: truncate(e.to_string()),
            })
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(OutputError::Invalid {
                tool: tool.to_owned(),
                errors,
            })
        }
    }
}

/// Walks the schema without recursion and stops at the first limit crossed
fn measure(schema: &Map<String, Value>, limits: &OutputLimits) -> Result<(), SchemaProblem> {
    let mut nodes = 1usize;
    let mut bytes = 0usize;
    let mut stack: Vec<(&Value, usize)> = schema.values().map(|v| (v, 2)).collect();
    bytes += schema.keys().map(String::len).sum::<usize>();
    while let Some((value, depth)) = stack.pop() {
        nodes += 1;
        if depth > limits.max_schema_depth {
            return Err(SchemaProblem::TooDeep {
                max: limits.max_schema_depth,
            });
        }
        match value {
            Value::String(s) => bytes += s.len(),
            Value::Array(items) => stack.extend(items.iter().map(|v| (v, depth + 1))),
            Value::Object(map) => {
                bytes += map.keys().map(String::len).sum::<usize>();
                stack.extend(map.values().map(|v| (v, depth + 1)));
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
        if nodes > limits.max_schema_nodes || bytes > limits.max_schema_bytes {
            return Err(SchemaProblem::TooLarge);
        }
    }
    Ok(())
}

const MAX_MESSAGE: usize = 300;

fn truncate(mut text: String) -> String {
    if text.len() > MAX_MESSAGE {
        let mut end = MAX_MESSAGE;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}
