//! Typed MCP messages, for every protocol version
//!
//! # One superset type set
//!
//! Each message has **one** Rust type holding the fields of every version, not one module
//! per version. Fields some versions lack are `Option`s (or `Vec`s) skipped when unset;
//! every object type has `extra` (`#[serde(flatten)]`), so fields this library does not
//! know survive a parse and re-serialize; and every type whose schema allows `_meta` has a
//! typed `meta` field.
//!
//! Why this works: no MCP schema version sets `additionalProperties: false`, so an object
//! with the fields of a newer version still validates against an older one. A superset
//! value is therefore valid in every version except where
//!
//! - a version *requires* a field the others lack (2026-07-28 `resultType` on results,
//!   `ttlMs`/`cacheScope` on cacheable results, `ttl` vs `ttlMs` on tasks, ...), or
//! - a union member or enum value does not exist in an older version (audio content before
//!   2025-03-26, `resource_link` before 2025-06-18, `tool_use`/`tool_result` sampling
//!   content and content arrays before 2025-11-25, titled and multi-select enum schemas
//!   before 2025-11-25, URL elicitation before 2025-11-25, ...).
//!
//! Those differences are handled in one version-gated step, [`FitVersion::fit_to`], which
//! you call on a value right before you send it to a peer of a known version.
//!
//! # `FitVersion` rules
//!
//! - **Results** (2026-07-28): `resultType` defaults to `"complete"` (`"input_required"` for
//!   [`InputRequiredResult`], `"task"` for [`ext_tasks::CreateTaskResult`]). Caching hints
//!   (`ttlMs`, `cacheScope`, required on list results, `resources/read` and
//!   `server/discover`) are **not** invented: the caller, or the server's catalog, sets them
//!   (`with_cache`). Legacy versions drop `resultType`, `ttlMs` and `cacheScope`.
//!   Sampling, roots and elicitation results are input responses in 2026-07-28 and get no
//!   `resultType`.
//! - **Content blocks** ([`ContentBlock`], in tool results and prompt messages): a kind the
//!   version lacks becomes a text block describing it, keeping annotations and `_meta`:
//!   audio before 2025-03-26 becomes `"[audio (mime) not shown: ...]"`; a resource link
//!   before 2025-06-18 becomes `"title-or-name: uri"` plus its description, so the model
//!   still sees the link.
//! - **Sampling content** ([`SamplingContent`]): audio before 2025-03-26 and `tool_use` /
//!   `tool_result` before 2025-11-25 become text blocks (a tool result keeps its texts).
//!   Before 2025-11-25 a message holds one block: in [`CreateMessageParams`] a multi-block
//!   message becomes consecutive messages of the same role; in [`CreateMessageResult`] the
//!   blocks' texts are joined (or the first block is kept when none is text).
//! - **Tools**: `inputSchema` gets `"type": "object"` when missing (all versions); in
//!   2025-06-18 and 2025-11-25, whose `outputSchema` must be an object schema, another
//!   output schema is dropped. [`CallToolResult`]: in those two versions a non-object
//!   `structuredContent` is removed and, if no text block exists, becomes one.
//! - **Elicitation**: before 2025-11-25 titled single selects become `enum` + `enumNames`,
//!   multi selects are removed from the form (and from `required`), and a URL request
//!   becomes a form with no fields whose message ends with the URL. [`ElicitResult`]
//!   drops list values there. A 2025-11-25 URL request needs `elicitationId`, which only
//!   the caller can choose ([`ElicitParams::url`] takes it).
//! - **Completion**: at most 100 values (`hasMore` set when cut).
//! - **Tasks**: [`Task`] writes its lifetime and poll interval as `ttl`/`pollInterval` in
//!   2025-11-25 and `ttlMs`/`pollIntervalMs` later (lifetime `null` when unset), and drops
//!   the extension's status details before 2026-07-28.
//! - Everything else: fields a version does not define stay; they validate.
//!
//! Request `_meta` of the modern era (`protocolVersion`, `clientCapabilities`, ...) is the
//! session engine's job; see [`meta`].
//!
//! # Layout
//!
//! [`common`] (shared pieces), [`content`], [`capabilities`], lifecycle, tools, resources,
//! prompts, completion, logging, roots, sampling, elicitation (with `form`: a JSON Schema
//! restricted to an elicitation form, [`ElicitationSchema::from_json_schema`]),
//! notifications, [`mrtr`] (multi-round-trip input), subscriptions, tasks, [`ext_tasks`]
//! (the 2026 tasks extension) and [`method`] (method names tied to params and result types).
//! Everything but the extension types and the method markers is re-exported here.

pub mod capabilities;
pub mod common;
mod completion;
pub mod content;
mod elicitation;
pub mod ext_tasks;
mod fit;
mod form;
mod lifecycle;
mod list;
mod logging;
pub mod method;
pub mod mrtr;
mod notifications;
mod prompts;
mod resource_read;
mod resources;
mod roots;
mod sampling;
mod subscriptions;
mod tagged;
mod tasks;
mod tool_call;
mod tools;

pub use capabilities::{
    CapabilityObject, ClientCapabilities, ElicitationCapability, ListChangedCapability,
    ResourcesCapability, SamplingCapability, ServerCapabilities, TasksCapability,
};
pub use common::{
    Annotations, CacheScope, Cursor, EmptyResult, Icon, IconTheme, Icons, LoggingLevel, Meta,
    MetaParams, PaginatedParams, PaginatedResult, ProgressToken, ResultType, Role, TaskMetadata,
};
pub use completion::{
    CompleteArgument, CompleteContext, CompleteParams, CompleteResult, Completion,
    MAX_COMPLETION_VALUES, PromptReference, Reference, ResourceTemplateReference,
};
pub use content::{
    AudioContent, BlobResourceContents, ContentBlock, EmbeddedResource, ImageContent, MediaContent,
    ResourceContents, SamplingContent, SamplingContents, TextContent, TextResourceContents,
    ToolResultContent, ToolUseContent,
};
pub use elicitation::{
    BooleanSchema, ElicitAction, ElicitFormParams, ElicitParams, ElicitResult, ElicitUrlParams,
    ElicitValue, ElicitationCompleteParams, ElicitationSchema, EnumOption, FormMode,
    LegacyTitledEnumSchema, NumberSchema, NumberType, ObjectType, PrimitiveSchema, StringFormat,
    StringSchema, StringType, TitledEnumItems, TitledMultiSelectEnumSchema,
    TitledSingleSelectEnumSchema, UntitledEnumItems, UntitledMultiSelectEnumSchema,
    UntitledSingleSelectEnumSchema, UrlElicitationRequiredData,
};
pub use fit::FitVersion;
pub use form::FormSchemaError;
pub use lifecycle::{
    DiscoverParams, DiscoverResult, Implementation, InitializeParams, InitializeResult,
    InitializedParams, PingParams, has_capability, meta,
};
pub use logging::{LoggingMessageNotificationParams, SetLevelParams};
pub use mrtr::{InputRequest, InputRequests, InputRequiredResult, InputResponse, InputResponses};
pub use notifications::{
    CancelledNotificationParams, ListChangedParams, ListKind, ProgressNotificationParams,
};
pub use prompts::{
    GetPromptParams, GetPromptResult, ListPromptsResult, Prompt, PromptArgument, PromptMessage,
};
pub use resource_read::{
    ReadResourceParams, ReadResourceResult, ResourceParams, SubscribeParams, UnsubscribeParams,
};
pub use resources::{
    ListResourceTemplatesResult, ListResourcesResult, Resource, ResourceTemplate,
    ResourceUpdatedNotificationParams,
};
pub use roots::{ListRootsResult, Root};
pub use sampling::{
    CreateMessageParams, CreateMessageResult, IncludeContext, ModelHint, ModelPreferences,
    SamplingMessage, ToolChoice, ToolChoiceMode,
};
pub use subscriptions::{
    SubscriptionFilter, SubscriptionsAcknowledgedParams, SubscriptionsListenParams,
    SubscriptionsListenResult,
};
pub use tasks::{
    CancelTaskResult, CreateTaskResult, GetTaskPayloadResult, GetTaskResult, ListTasksResult,
    RELATED_TASK_META_KEY, RelatedTaskMetadata, Task, TaskError, TaskIdParams, TaskStatus,
    TaskStatusNotificationParams,
};
pub use tool_call::{CallToolParams, CallToolResult};
pub use tools::{ListToolsResult, TaskSupport, Tool, ToolAnnotations, ToolExecution};
