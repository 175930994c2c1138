//! Decoding a `tools/call` outcome and checking it against the tool's output schema in one step

use serde_json::value::RawValue;

use super::{OutputError, OutputValidator};
use crate::schema::CallToolResult;
use crate::schema::method::CallTool;
use crate::session::{CallError, Pending};

/// Why a checked `tools/call` has no usable result
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolCallError {
    /// The call failed, or its result is not a `CallToolResult`
    #[error(transparent)]
    Call(#[from] CallError),
    /// The result does not match the tool's output schema
    #[error(transparent)]
    Output(#[from] OutputError),
}

/// Decodes the outcome of a `tools/call` of `tool` (from
/// [`ClientEvent::Response`](crate::ClientEvent::Response)) and checks it with `outputs`
///
/// ```
/// # use mcp_sansio::client::{check_call_result, OutputValidator};
/// # use mcp_sansio::testing::Pair;
/// # use mcp_sansio::{ProtocolVersion, RequestOptions};
/// # use mcp_sansio::schema::{CallToolParams, method::CallTool};
/// # let mut pair = Pair::legacy(std::time::Instant::now(), ProtocolVersion::V2025_11_25);
/// # pair.drive();
/// # let outputs = OutputValidator::new();
/// let call = pair.client.send_request::<CallTool>(pair.now, CallToolParams::new("echo"), RequestOptions::default())?;
/// // ... later, on `ClientEvent::Response { id, outcome }` with `call == id`:
/// # let outcome = Ok(serde_json::value::RawValue::from_string(r#"{"content":[]}"#.into()).unwrap());
/// let result = check_call_result(&outputs, "echo", call, outcome);
/// # assert!(result.is_ok());
/// # Ok::<(), mcp_sansio::SendError>(())
/// ```
///
/// # Errors
/// [`ToolCallError::Call`] as [`Pending::decode`]; [`ToolCallError::Output`] as
/// [`OutputValidator::check`].
pub fn check_call_result(
    outputs: &OutputValidator,
    tool: &str,
    pending: Pending<CallTool>,
    outcome: Result<Box<RawValue>, CallError>,
) -> Result<CallToolResult, ToolCallError> {
    let result = pending.decode(outcome)?;
    outputs.check(tool, &result)?;
    Ok(result)
}
