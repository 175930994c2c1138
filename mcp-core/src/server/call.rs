//! Checking a `tools/call` before the handler runs

use serde_json::Value;

use super::catalog::Catalog;
use crate::jsonrpc::{ErrorObject, code};
use crate::schema::{CallToolParams, CallToolResult, Tool};

/// Why a `tools/call` must not reach the tool's handler, with the answer to send
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CallCheck {
    /// No tool has this name: answer with this JSON-RPC error (-32602 `Unknown tool: <name>`)
    UnknownTool(ErrorObject),
    /// The arguments do not match the tool's `inputSchema`: answer with this *result*
    /// (`isError: true`, one text block listing the errors), so the model sees what to fix.
    /// The specification makes input validation errors tool results, not protocol errors.
    InvalidArguments(Box<CallToolResult>),
}

impl CallCheck {
    /// The answer to send: `Err` for a JSON-RPC error, `Ok` for a tool result
    ///
    /// Lets a binding fold every refusal into the same path as its handler's outcome:
    ///
    /// ```
    /// # use mcp_sansio::server::{CallCheck, Catalog};
    /// # use mcp_sansio::schema::{CallToolParams, CallToolResult};
    /// # use mcp_sansio::ErrorObject;
    /// fn call(catalog: &Catalog, params: &CallToolParams) -> Result<CallToolResult, ErrorObject> {
    ///     match catalog.check_call(params) {
    ///         Ok(tool) => Ok(CallToolResult::text(format!("ran {}", tool.name))),
    ///         Err(refused) => refused.into_response(),
    ///     }
    /// }
    /// let error = call(&Catalog::default(), &CallToolParams::new("nope")).unwrap_err();
    /// assert_eq!(error.message, "Unknown tool: nope");
    /// ```
    ///
    /// # Errors
    /// The error of [`CallCheck::UnknownTool`].
    pub fn into_response(self) -> Result<CallToolResult, ErrorObject> {
        match self {
            Self::UnknownTool(error) => Err(error),
            Self::InvalidArguments(result) => Ok(*result),
        }
    }
}

impl Catalog {
    /// Checks a `tools/call`: the tool exists and the arguments match its `inputSchema`
    /// (a missing `arguments` is checked as `{}`)
    ///
    /// # Errors
    /// [`CallCheck::UnknownTool`] or [`CallCheck::InvalidArguments`], each holding the
    /// answer to send.
    pub fn check_call(&self, params: &CallToolParams) -> Result<&Tool, CallCheck> {
        let arguments = Value::Object(params.arguments.clone().unwrap_or_default());
        self.check_call_arguments(&params.name, &arguments)
    }

    /// [`check_call`](Self::check_call) of a call of tool `name` with `arguments` (an
    /// object; `{}` when the call has none), without copying them
    pub(crate) fn check_call_arguments(
        &self,
        name: &str,
        arguments: &Value,
    ) -> Result<&Tool, CallCheck> {
        let entry = self.tools.get(name).ok_or_else(|| {
            CallCheck::UnknownTool(ErrorObject::new(
                code::INVALID_PARAMS,
                format!("Unknown tool: {name}"),
            ))
        })?;
        entry.validator.validate(arguments).map_err(|errors| {
            let mut text = format!("Invalid arguments for tool {name}:");
            for error in errors {
                text.push_str("\n- ");
                text.push_str(&error);
            }
            CallCheck::InvalidArguments(Box::new(CallToolResult::error(text)))
        })?;
        Ok(&entry.tool)
    }
}
