//! `x-mcp-header`: tool arguments mirrored into `Mcp-Param-*` headers (2026-07-28, SEP-2243)
//!
//! A property of a tool's `inputSchema` may carry `"x-mcp-header": "Region"`; on the
//! Streamable HTTP transport the client then sends that argument's value as the header
//! `Mcp-Param-Region` (encoded with [`encode_header_value`](super::encode_header_value)).
//! A tool whose annotations break the rules is invalid: the client neither surfaces nor
//! calls it. The rules, as the conformance suite checks them:
//!
//! - the value is a non-empty string;
//! - made of HTTP token characters only (`!#$%&'*+-.^_`|~`, digits, ASCII letters): no
//!   space, colon, non-ASCII or control character;
//! - on a property whose `type` is `string`, `integer` or `boolean` (not `number`,
//!   `object`, `array` or `null`, and not missing: a type array is allowed when every member
//!   is one of the three);
//! - unique within the tool, ignoring ASCII case (`MyField` and `myfield` clash).
//!
//! Only the top-level `properties` of `inputSchema` are read.
//!
//! ```
//! use mcp_sansio::http::validate_tool_headers;
//! use mcp_sansio::schema::Tool;
//! use serde_json::json;
//!
//! let schema = json!({"properties": {"region": {"type": "string", "x-mcp-header": "Region"}}});
//! let tool = Tool::new("deploy", schema.as_object().unwrap().clone());
//! let params = validate_tool_headers(&tool).unwrap();
//! assert_eq!(params[0].property, "region");
//! assert_eq!(params[0].header, "Mcp-Param-Region");
//! ```

use std::fmt;

use serde_json::Value;

use crate::schema::{ListToolsResult, Tool};

/// The annotation keyword
pub(crate) const X_MCP_HEADER: &str = "x-mcp-header";

/// What every mirrored argument's header name starts with
pub(crate) const HEADER_PREFIX: &str = "Mcp-Param-";

/// An argument the client mirrors into a header
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HeaderParam {
    /// The property of `inputSchema` (the argument's name)
    pub property: String,
    /// The full header name, e.g. `Mcp-Param-Region`
    pub header: String,
}

/// Why a tool's `x-mcp-header` annotations make it invalid
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolHeaderError {
    /// The annotation is not a string
    #[error("x-mcp-header of property `{property}` is not a string")]
    NotAString {
        /// The property
        property: String,
    },
    /// The annotation is the empty string
    #[error("x-mcp-header of property `{property}` is empty")]
    Empty {
        /// The property
        property: String,
    },
    /// The annotation holds a character that is not an HTTP token character
    #[error("x-mcp-header `{name}` of property `{property}` contains {character:?}")]
    InvalidCharacter {
        /// The property
        property: String,
        /// The annotation
        name: String,
        /// The first offending character
        character: char,
    },
    /// The property's type is not `string`, `integer` or `boolean`
    #[error(
        "x-mcp-header on property `{property}` of type {}, not string, integer or boolean",
        found.as_deref().unwrap_or("(none)")
    )]
    NotPrimitive {
        /// The property
        property: String,
        /// Its `type` as JSON text, `None` when it has none
        found: Option<String>,
    },
    /// Two properties use the same header name, ignoring ASCII case
    #[error("x-mcp-header `{name}` of property `{property}` duplicates that of `{other}`")]
    Duplicate {
        /// The later property
        property: String,
        /// Its annotation
        name: String,
        /// The earlier property with the same header name
        other: String,
    },
}

/// A tool left out of a `tools/list` result, and why
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolWarning {
    /// The tool's name
    pub tool: String,
    /// What is wrong with it
    pub error: ToolHeaderError,
}

impl fmt::Display for ToolWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tool `{}` ignored: {}", self.tool, self.error)
    }
}

/// An HTTP `tchar` (RFC 9110 §5.6.2)
fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

fn primitive_type(schema: &Value) -> Result<(), Option<String>> {
    let allowed = |t: &Value| matches!(t.as_str(), Some("string" | "integer" | "boolean"));
    match schema.get("type") {
        Some(t) if allowed(t) => Ok(()),
        Some(Value::Array(ts)) if !ts.is_empty() && ts.iter().all(allowed) => Ok(()),
        other => Err(other.map(Value::to_string)),
    }
}

/// The arguments a tool mirrors into headers, or why the tool is invalid
///
/// Call it on every tool of a `tools/list` result on a 2026-07-28 Streamable HTTP connection
/// (or use [`filter_tools_list`]); keep the [`HeaderParam`]s to build each call's headers.
///
/// # Errors
/// The first broken rule found, property by property.
pub fn validate_tool_headers(tool: &Tool) -> Result<Vec<HeaderParam>, ToolHeaderError> {
    let Some(Value::Object(properties)) = tool.input_schema.get("properties") else {
        return Ok(Vec::new());
    };
    let mut params: Vec<HeaderParam> = Vec::new();
    for (property, schema) in properties {
        let Some(annotation) = schema.get(X_MCP_HEADER) else {
            continue;
        };
        let property = property.clone();
        let Some(name) = annotation.as_str() else {
            return Err(ToolHeaderError::NotAString { property });
        };
        if name.is_empty() {
            return Err(ToolHeaderError::Empty { property });
        }
        if let Some(character) = name.chars().find(|&c| !is_tchar(c)) {
            return Err(ToolHeaderError::InvalidCharacter {
                property,
                name: name.to_owned(),
                character,
            });
        }
        if let Err(found) = primitive_type(schema) {
            return Err(ToolHeaderError::NotPrimitive { property, found });
        }
        let header = format!("{HEADER_PREFIX}{name}");
        if let Some(earlier) = params
            .iter()
            .find(|p| p.header.eq_ignore_ascii_case(&header))
        {
            return Err(ToolHeaderError::Duplicate {
                property,
                name: name.to_owned(),
                other: earlier.property.clone(),
            });
        }
        params.push(HeaderParam { property, header });
    }
    Ok(params)
}

/// Removes the tools whose `x-mcp-header` annotations are invalid from a `tools/list` page;
/// one warning per removed tool, in list order
///
/// The spec says a client neither surfaces nor calls such a tool; log the warnings.
pub fn filter_tools_list(list: &mut ListToolsResult) -> Vec<ToolWarning> {
    let mut warnings = Vec::new();
    list.tools.retain(|tool| match validate_tool_headers(tool) {
        Ok(_) => true,
        Err(error) => {
            warnings.push(ToolWarning {
                tool: tool.name.clone(),
                error,
            });
            false
        }
    });
    warnings
}
