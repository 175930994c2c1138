//! JSON Schema validation with bounded work: compile once, validate many times
//!
//! [`SchemaValidator`] wraps the [`jsonschema`] crate for schemas that come from someone we
//! do not fully trust (a tool's `inputSchema`, or, on the client side, a server's
//! `outputSchema` or an elicitation's `requestedSchema`):
//!
//! - **No retrieval.** The validator is built `offline()`: a `$ref` to anything outside the
//!   schema itself (`https://...`, `file:///...`) fails to compile with an error. No network
//!   or file access is ever attempted, whatever features other crates enable on `jsonschema`.
//!   The well-known meta-schemas (`$schema` of drafts 4 to 2020-12) are built in.
//! - **Linear-time patterns.** `pattern` and `patternProperties` use the `regex` engine
//!   (no backtracking), so `^(a+)+$` against `aaaa…!` takes linear time. The price: look-around
//!   and backreferences are not supported, and a schema using them fails to compile.
//! - **Bounded size and nesting.** The schema's serialized size and nesting depth are
//!   checked against [`SchemaLimits`] *before* compiling; so is the compiled size of each
//!   regular expression.
//! - **Bounded reports.** At most [`SchemaLimits::max_errors`] errors are collected per
//!   validation.
//!
//! Without `$schema` a schema is read as JSON Schema 2020-12, the MCP default dialect.

use std::fmt;
use std::io;

use jsonschema::{PatternOptions, Validator};
use serde_json::Value;

/// Limits applied when compiling and running a schema
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SchemaLimits {
    /// Largest accepted schema, in bytes of compact JSON (default 64 KiB)
    pub max_bytes: usize,
    /// Deepest accepted nesting of arrays and objects in the schema (default 32)
    pub max_depth: usize,
    /// Largest compiled size of one regular expression, in bytes (default 256 KiB)
    pub max_regex_bytes: usize,
    /// Most validation errors reported for one instance (default 16; at least 1)
    pub max_errors: usize,
}

impl SchemaLimits {
    /// The defaults: 64 KiB, depth 32, 256 KiB per regex, 16 errors
    pub(crate) fn new() -> Self {
        Self {
            max_bytes: 64 * 1024,
            max_depth: 32,
            max_regex_bytes: 256 * 1024,
            max_errors: 16,
        }
    }
}

impl Default for SchemaLimits {
    fn default() -> Self {
        Self::new()
    }
}

/// Why a schema was refused
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// The schema is larger than [`SchemaLimits::max_bytes`]
    #[error("the schema is larger than the limit of {limit} bytes (max_bytes)")]
    TooLarge {
        /// The limit
        limit: usize,
    },
    /// The schema nests deeper than [`SchemaLimits::max_depth`]
    #[error("the schema nests deeper than the limit of {limit} levels (max_depth)")]
    TooDeep {
        /// The limit
        limit: usize,
    },
    /// The schema is not a valid JSON Schema, uses an unsupported regex feature, has a
    /// regex over [`SchemaLimits::max_regex_bytes`], or has a `$ref` that cannot be resolved
    /// locally
    #[error("invalid schema: {0}")]
    Invalid(String),
}

/// A compiled JSON Schema; cheap to use many times
///
/// ```
/// use mcp_sansio::server::{SchemaLimits, SchemaValidator};
/// use serde_json::json;
///
/// let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
/// let validator = SchemaValidator::compile(&schema, &SchemaLimits::default()).unwrap();
/// assert!(validator.validate(&json!({"n": 1})).is_ok());
/// let errors = validator.validate(&json!({"n": "one"})).unwrap_err();
/// assert!(errors[0].starts_with("/n: "), "{errors:?}");
/// ```
pub struct SchemaValidator {
    validator: Validator,
    max_errors: usize,
}

impl fmt::Debug for SchemaValidator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SchemaValidator")
            .field("max_errors", &self.max_errors)
            .finish_non_exhaustive()
    }
}

impl SchemaValidator {
    /// Checks `schema` against `limits`, then compiles it
    ///
    /// # Errors
    /// [`SchemaError::TooDeep`] or [`SchemaError::TooLarge`] before any compiling;
    /// [`SchemaError::Invalid`] when the crate refuses the schema (including unresolvable
    /// `$ref`s and unsupported or oversized regular expressions).
    pub fn compile(schema: &Value, limits: &SchemaLimits) -> Result<Self, SchemaError> {
        check_depth(schema, limits.max_depth)?;
        check_size(schema, limits.max_bytes)?;
        let validator = jsonschema::options()
            .offline()
            .with_pattern_options(
                PatternOptions::regex()
                    .size_limit(limits.max_regex_bytes)
                    .dfa_size_limit(limits.max_regex_bytes),
            )
            .build(schema)
            .map_err(|e| SchemaError::Invalid(e.to_string()))?;
        Ok(Self {
            validator,
            max_errors: limits.max_errors.max(1),
        })
    }

    /// Validates `instance`
    ///
    /// # Errors
    /// Up to [`SchemaLimits::max_errors`] readable messages, each starting with the JSON
    /// pointer of the offending value (`/` for the root), e.g.
    /// `/n: "one" is not of type "integer"`.
    pub fn validate(&self, instance: &Value) -> Result<(), Vec<String>> {
        // The common case, valid, allocates nothing; the errors are gathered only when
        // there are some.
        if self.validator.is_valid(instance) {
            return Ok(());
        }
        let errors: Vec<String> = self
            .validator
            .iter_errors(instance)
            .take(self.max_errors)
            .map(|e| {
                let path = e.instance_path().to_string();
                let path = if path.is_empty() { "/".into() } else { path };
                format!("{path}: {e}")
            })
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }

    /// Whether `instance` is valid (stops at the first error)
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.validator.is_valid(instance)
    }
}

/// Walks the value with an explicit stack (no recursion, so a hostile depth cannot overflow
/// ours) and fails as soon as `limit` is exceeded
fn check_depth(schema: &Value, limit: usize) -> Result<(), SchemaError> {
    let mut stack = vec![(schema, 1usize)];
    while let Some((value, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(map) => Box::new(map.values()),
            _ => continue,
        };
        if depth > limit {
            return Err(SchemaError::TooDeep { limit });
        }
        stack.extend(children.map(|child| (child, depth + 1)));
    }
    Ok(())
}

/// Serializes into a counter that gives up once `limit` is passed
fn check_size(schema: &Value, limit: usize) -> Result<(), SchemaError> {
    struct Counter {
        written: usize,
        limit: usize,
    }
    impl io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.written += buf.len();
            if self.written > self.limit {
                Err(io::Error::other("over the limit"))
            } else {
                Ok(buf.len())
            }
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter { written: 0, limit };
    serde_json::to_writer(&mut counter, schema).map_err(|_| SchemaError::TooLarge { limit })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn depth_counts_containers_only() {
        assert!(check_depth(&json!({"a": {"b": 1}}), 2).is_ok());
        assert_eq!(
            check_depth(&json!({"a": {"b": {}}}), 2),
            Err(SchemaError::TooDeep { limit: 2 })
        );
        assert!(check_depth(&json!("scalar"), 0).is_ok());
    }

    #[test]
    fn size_is_compact_json() {
        let v = json!({"a": 1});
        assert!(check_size(&v, 7).is_ok());
        assert_eq!(check_size(&v, 6), Err(SchemaError::TooLarge { limit: 6 }));
    }
}
