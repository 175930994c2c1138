//! Every upstream example message (`shared/spec/2026-07-28/examples/<TypeName>/*.json`)
//! parses into its Rust type and serializes back to the same JSON.
//!
//! The folder name is the schema type name; [`check`] maps it to a Rust type. A folder with
//! no mapping fails the test, so a new upstream example cannot be skipped silently.

use std::path::{Path, PathBuf};

use mcp_sansio::RequestId;
use mcp_sansio::schema::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A JSON-RPC request (or a bare `{method, params}` input request) with typed params
#[derive(Debug, Serialize, Deserialize)]
struct Request<P> {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    jsonrpc: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<RequestId>,
    method: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<P>,
}

/// A JSON-RPC notification with typed params
#[derive(Debug, Serialize, Deserialize)]
struct Notification<P> {
    jsonrpc: String,
    method: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<P>,
}

/// A JSON-RPC result response with a typed result
#[derive(Debug, Serialize, Deserialize)]
struct Response<R> {
    jsonrpc: String,
    id: RequestId,
    result: R,
}

/// A JSON-RPC error response
#[derive(Debug, Serialize, Deserialize)]
struct ErrorResponse {
    jsonrpc: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<RequestId>,
    error: ErrorBody,
}

#[derive(Debug, Serialize, Deserialize)]
struct ErrorBody {
    code: i64,
    message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    data: Option<Value>,
}

fn spec_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/spec")
}

/// Parses `json` as `T`, re-serializes it and compares
fn round_trip<T: DeserializeOwned + Serialize>(json: &Value) -> Result<T, String> {
    let typed: T = serde_json::from_value(json.clone()).map_err(|e| format!("parse: {e}"))?;
    let back = serde_json::to_value(&typed).map_err(|e| format!("serialize: {e}"))?;
    if &back != json {
        return Err(format!(
            "re-serialized differs:\n  original: {json}\n  back:     {back}"
        ));
    }
    Ok(typed)
}

/// Checks an error response (`{jsonrpc, id, error}`) or a bare error object
fn expect_code(json: &Value, code: i64) -> Result<(), String> {
    let got = if json.get("error").is_some() {
        round_trip::<ErrorResponse>(json)?.error.code
    } else {
        round_trip::<ErrorBody>(json)?.code
    };
    if got != code {
        return Err(format!("expected code {code}, got {got}"));
    }
    Ok(())
}

fn expect_schema(json: &Value, ok: impl Fn(&PrimitiveSchema) -> bool) -> Result<(), String> {
    let s: PrimitiveSchema = round_trip(json)?;
    if ok(&s) {
        Ok(())
    } else {
        Err(format!("decoded as the wrong variant: {s:?}"))
    }
}

/// Checks one example of schema type `name`; `None` when the type has no mapping
fn check(name: &str, json: &Value) -> Option<Result<(), String>> {
    macro_rules! rt {
        ($t:ty) => {
            round_trip::<$t>(json).map(drop)
        };
    }
    Some(match name {
        "AudioContent" => round_trip::<ContentBlock>(json).and_then(|c| match c {
            ContentBlock::Audio(_) => Ok(()),
            other => Err(format!("not audio: {other:?}")),
        }),
        "ImageContent" => round_trip::<ContentBlock>(json).and_then(|c| match c {
            ContentBlock::Image(_) => Ok(()),
            other => Err(format!("not image: {other:?}")),
        }),
        "TextContent" => round_trip::<ContentBlock>(json).and_then(|c| match c {
            ContentBlock::Text(_) => Ok(()),
            other => Err(format!("not text: {other:?}")),
        }),
        "ResourceLink" => round_trip::<ContentBlock>(json).and_then(|c| match c {
            ContentBlock::ResourceLink(_) => Ok(()),
            other => Err(format!("not a resource link: {other:?}")),
        }),
        "EmbeddedResource" => round_trip::<ContentBlock>(json).and_then(|c| match c {
            ContentBlock::Resource(_) => Ok(()),
            other => Err(format!("not an embedded resource: {other:?}")),
        }),
        "ToolUseContent" => round_trip::<SamplingContent>(json).and_then(|c| match c {
            SamplingContent::ToolUse(_) => Ok(()),
            other => Err(format!("not tool use: {other:?}")),
        }),
        "ToolResultContent" => round_trip::<SamplingContent>(json).and_then(|c| match c {
            SamplingContent::ToolResult(_) => Ok(()),
            other => Err(format!("not a tool result: {other:?}")),
        }),
        "TextResourceContents" => round_trip::<ResourceContents>(json).and_then(|c| match c {
            ResourceContents::Text(_) => Ok(()),
            other => Err(format!("not text: {other:?}")),
        }),
        "BlobResourceContents" => round_trip::<ResourceContents>(json).and_then(|c| match c {
            ResourceContents::Blob(_) => Ok(()),
            other => Err(format!("not a blob: {other:?}")),
        }),
        "BooleanSchema" => expect_schema(json, |s| matches!(s, PrimitiveSchema::Boolean(_))),
        "NumberSchema" => expect_schema(json, |s| matches!(s, PrimitiveSchema::Number(_))),
        "StringSchema" => expect_schema(json, |s| matches!(s, PrimitiveSchema::String(_))),
        "TitledMultiSelectEnumSchema" => {
            expect_schema(json, |s| matches!(s, PrimitiveSchema::TitledMultiSelect(_)))
        }
        "TitledSingleSelectEnumSchema" => expect_schema(json, |s| {
            matches!(s, PrimitiveSchema::TitledSingleSelect(_))
        }),
        "UntitledMultiSelectEnumSchema" => expect_schema(json, |s| {
            matches!(s, PrimitiveSchema::UntitledMultiSelect(_))
        }),
        "UntitledSingleSelectEnumSchema" => expect_schema(json, |s| {
            matches!(s, PrimitiveSchema::UntitledSingleSelect(_))
        }),
        "LegacyTitledEnumSchema" => {
            expect_schema(json, |s| matches!(s, PrimitiveSchema::LegacyTitled(_)))
        }
        "CallToolRequest" => rt!(Request<CallToolParams>),
        "CallToolRequestParams" => rt!(CallToolParams),
        "CallToolResult" => rt!(CallToolResult),
        "CallToolResultResponse" => rt!(Response<CallToolResult>),
        "CancelledNotification" => rt!(Notification<CancelledNotificationParams>),
        "CancelledNotificationParams" => rt!(CancelledNotificationParams),
        "ClientCapabilities" => rt!(ClientCapabilities),
        "ServerCapabilities" => rt!(ServerCapabilities),
        "CompleteRequest" => rt!(Request<CompleteParams>),
        "CompleteRequestParams" => rt!(CompleteParams),
        "CompleteResult" => rt!(CompleteResult),
        "CompleteResultResponse" => rt!(Response<CompleteResult>),
        "CreateMessageRequest" => rt!(Request<CreateMessageParams>),
        "CreateMessageRequestParams" => rt!(CreateMessageParams),
        "CreateMessageResult" => rt!(CreateMessageResult),
        "DiscoverRequest" => rt!(Request<DiscoverParams>),
        "DiscoverResult" => rt!(DiscoverResult),
        "DiscoverResultResponse" => rt!(Response<DiscoverResult>),
        "ElicitRequest" => rt!(Request<ElicitParams>),
        "ElicitRequestFormParams" => round_trip::<ElicitParams>(json).and_then(|p| match p {
            ElicitParams::Form(_) => Ok(()),
            other => Err(format!("not form mode: {other:?}")),
        }),
        "ElicitRequestURLParams" => round_trip::<ElicitParams>(json).and_then(|p| match p {
            ElicitParams::Url(_) => Ok(()),
            other => Err(format!("not URL mode: {other:?}")),
        }),
        "ElicitResult" => rt!(ElicitResult),
        "GetPromptRequest" => rt!(Request<GetPromptParams>),
        "GetPromptRequestParams" => rt!(GetPromptParams),
        "GetPromptResult" => rt!(GetPromptResult),
        "GetPromptResultResponse" => rt!(Response<GetPromptResult>),
        "InputRequests" => rt!(InputRequests),
        "InputResponses" => rt!(InputResponses),
        "InputRequiredResult" => rt!(InputRequiredResult),
        "ListPromptsRequest" => rt!(Request<PaginatedParams>),
        "ListPromptsResult" => rt!(ListPromptsResult),
        "ListPromptsResultResponse" => rt!(Response<ListPromptsResult>),
        "ListResourceTemplatesRequest" => rt!(Request<PaginatedParams>),
        "ListResourceTemplatesResult" => rt!(ListResourceTemplatesResult),
        "ListResourceTemplatesResultResponse" => rt!(Response<ListResourceTemplatesResult>),
        "ListResourcesRequest" => rt!(Request<PaginatedParams>),
        "ListResourcesResult" => rt!(ListResourcesResult),
        "ListResourcesResultResponse" => rt!(Response<ListResourcesResult>),
        "ListRootsRequest" => rt!(Request<MetaParams>),
        "ListRootsResult" => rt!(ListRootsResult),
        "ListToolsRequest" => rt!(Request<PaginatedParams>),
        "ListToolsResult" => rt!(ListToolsResult),
        "ListToolsResultResponse" => rt!(Response<ListToolsResult>),
        "LoggingMessageNotification" => rt!(Notification<LoggingMessageNotificationParams>),
        "LoggingMessageNotificationParams" => rt!(LoggingMessageNotificationParams),
        "ModelPreferences" => rt!(ModelPreferences),
        "PaginatedRequestParams" => rt!(PaginatedParams),
        "ProgressNotification" => rt!(Notification<ProgressNotificationParams>),
        "ProgressNotificationParams" => rt!(ProgressNotificationParams),
        "PromptListChangedNotification" => rt!(Notification<ListChangedParams>),
        "ResourceListChangedNotification" => rt!(Notification<ListChangedParams>),
        "ToolListChangedNotification" => rt!(Notification<ListChangedParams>),
        "ReadResourceRequest" => rt!(Request<ReadResourceParams>),
        "ReadResourceResult" => rt!(ReadResourceResult),
        "ReadResourceResultResponse" => rt!(Response<ReadResourceResult>),
        "Resource" => rt!(Resource),
        "ResourceUpdatedNotification" => rt!(Notification<ResourceUpdatedNotificationParams>),
        "ResourceUpdatedNotificationParams" => rt!(ResourceUpdatedNotificationParams),
        "Root" => rt!(Root),
        "SamplingMessage" => rt!(SamplingMessage),
        "SubscriptionsAcknowledgedNotification" => {
            rt!(Notification<SubscriptionsAcknowledgedParams>)
        }
        "SubscriptionsListenRequest" => rt!(Request<SubscriptionsListenParams>),
        "SubscriptionsListenResult" => rt!(SubscriptionsListenResult),
        "SubscriptionsListenResultResponse" => rt!(Response<SubscriptionsListenResult>),
        "Tool" => rt!(Tool),
        "HeaderMismatchError" => expect_code(json, -32020),
        "MissingRequiredClientCapabilityError" => expect_code(json, -32021),
        "UnsupportedProtocolVersionError" => expect_code(json, -32022),
        "ParseError" => expect_code(json, -32700),
        "InvalidRequestError" => expect_code(json, -32600),
        "MethodNotFoundError" => expect_code(json, -32601),
        "InvalidParamsError" => expect_code(json, -32602),
        "InternalError" => expect_code(json, -32603),
        _ => return None,
    })
}

#[test]
fn every_example_round_trips() {
    let root = spec_dir().join("2026-07-28/examples");
    let mut folders: Vec<_> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("read {}: {e}", root.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    assert!(!folders.is_empty(), "no examples under {}", root.display());
    let mut failures = Vec::new();
    let mut checked = 0;
    for folder in &folders {
        let name = folder.file_name().unwrap().to_str().unwrap().to_owned();
        let mut files: Vec<_> = std::fs::read_dir(folder)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            let json: Value = serde_json::from_str(&text).unwrap();
            match check(&name, &json) {
                None => failures.push(format!("{name}: no Rust type mapped for this schema type")),
                Some(Err(e)) => failures.push(format!("{}: {e}", file.display())),
                Some(Ok(())) => checked += 1,
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked > 100, "only {checked} examples checked");
}

#[test]
fn missing_required_fields_are_named() {
    let err =
        serde_json::from_value::<Tool>(serde_json::json!({"inputSchema": {"type": "object"}}))
            .unwrap_err();
    assert!(err.to_string().contains("missing field `name`"), "{err}");
    let err =
        serde_json::from_value::<CallToolParams>(serde_json::json!({"arguments": {}})).unwrap_err();
    assert!(err.to_string().contains("missing field `name`"), "{err}");
    let err = serde_json::from_value::<CreateMessageParams>(serde_json::json!({"messages": []}))
        .unwrap_err();
    assert!(
        err.to_string().contains("missing field `maxTokens`"),
        "{err}"
    );
    let empty: Map<String, Value> = Map::new();
    let p: PaginatedParams = serde_json::from_value(Value::Object(empty)).unwrap();
    assert_eq!(p.cursor, None);
}
