//! The tool naming rule of MCP 2025-11-25 and later
//!
//! The specification (`server/tools`, "Tool Names") says tool names SHOULD be 1 to 128
//! characters long, are case-sensitive, SHOULD use only ASCII letters, digits, `_`, `-` and
//! `.`, SHOULD NOT contain spaces, commas or other special characters, and SHOULD be unique
//! within a server. The catalog enforces every one of these SHOULDs: a name that breaks them
//! is refused at registration (clients and model APIs reject such names in practice, and the
//! conformance suite warns about them), so the mistake shows up where it is made.

/// The longest tool name accepted, in characters
pub(crate) const MAX_TOOL_NAME_LEN: usize = 128;

/// Checks a tool name against the naming rule
///
/// # Errors
/// Why the name is refused, as a short phrase (`"is empty"`, `"is longer than 128
/// characters"`, `"contains ' ' (allowed: A-Z a-z 0-9 _ - .)"`).
///
/// ```
/// use mcp_sansio::server::check_tool_name;
/// assert!(check_tool_name("admin.tools.list").is_ok());
/// assert!(check_tool_name("get user").is_err());
/// ```
pub fn check_tool_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("is empty".into());
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        return Err(format!("contains {c:?} (allowed: A-Z a-z 0-9 _ - .)"));
    }
    // Only ASCII is left, so bytes are characters.
    if name.len() > MAX_TOOL_NAME_LEN {
        return Err(format!(
            "is longer than {MAX_TOOL_NAME_LEN} characters ({})",
            name.len()
        ));
    }
    Ok(())
}
