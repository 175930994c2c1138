//! Method and notification names tied to their params and result types
//!
//! Each request and notification of every version has an uninhabited marker type here
//! (`CallTool`, `Cancelled`, ...). Use them to name methods without string typos and to
//! decode params and results generically:
//!
//! ```
//! use mcp_sansio::schema::method::{self, Method};
//! assert_eq!(method::CallTool::NAME, "tools/call");
//! let params: <method::CallTool as Method>::Params =
//!     serde_json::from_str(r#"{"name": "greet"}"#).unwrap();
//! assert_eq!(params.name, "greet");
//! ```
//!
//! In 2026-07-28 a request's result may instead be an
//! [`InputRequiredResult`] (or, with the tasks extension, an
//! [`ext_tasks::CreateTaskResult`]); read
//! `resultType` before decoding `Result`.

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::*;

/// A request method: its name, params and (complete) result
pub trait Method {
    /// The method name, e.g. `"tools/call"`
    const NAME: &'static str;
    /// The params
    type Params: Serialize + DeserializeOwned + FitVersion;
    /// The complete result
    type Result: Serialize + DeserializeOwned + FitVersion;
}

/// A notification method: its name and params
pub trait Notification {
    /// The method name, e.g. `"notifications/cancelled"`
    const NAME: &'static str;
    /// The params (for notifications whose params are optional, decode `{}` when absent)
    type Params: Serialize + DeserializeOwned + FitVersion;
}

macro_rules! requests {
    ($($(#[$doc:meta])* $name:ident = $wire:literal, $params:ty => $result:ty;)*) => {$(
        $(#[$doc])*
        #[derive(Debug)]
        pub enum $name {}
        impl Method for $name {
            const NAME: &'static str = $wire;
            type Params = $params;
            type Result = $result;
        }
    )*};
}

macro_rules! notifications {
    ($($(#[$doc:meta])* $name:ident = $wire:literal, $params:ty;)*) => {$(
        $(#[$doc])*
        #[derive(Debug)]
        pub enum $name {}
        impl Notification for $name {
            const NAME: &'static str = $wire;
            type Params = $params;
        }
    )*};
}

requests! {
    /// `initialize` (legacy era, client → server)
    Initialize = "initialize", InitializeParams => InitializeResult;
    /// `ping` (legacy era, both directions)
    Ping = "ping", MetaParams => EmptyResult;
    /// `server/discover` (2026-07-28, client → server)
    Discover = "server/discover", DiscoverParams => DiscoverResult;
    /// `tools/list`
    ListTools = "tools/list", PaginatedParams => ListToolsResult;
    /// `tools/call`
    CallTool = "tools/call", CallToolParams => CallToolResult;
    /// `resources/list`
    ListResources = "resources/list", PaginatedParams => ListResourcesResult;
    /// `resources/templates/list`
    ListResourceTemplates = "resources/templates/list", PaginatedParams => ListResourceTemplatesResult;
    /// `resources/read`
    ReadResource = "resources/read", ReadResourceParams => ReadResourceResult;
    /// `resources/subscribe` (legacy era)
    Subscribe = "resources/subscribe", SubscribeParams => EmptyResult;
    /// `resources/unsubscribe` (legacy era)
    Unsubscribe = "resources/unsubscribe", UnsubscribeParams => EmptyResult;
    /// `prompts/list`
    ListPrompts = "prompts/list", PaginatedParams => ListPromptsResult;
    /// `prompts/get`
    GetPrompt = "prompts/get", GetPromptParams => GetPromptResult;
    /// `completion/complete`
    Complete = "completion/complete", CompleteParams => CompleteResult;
    /// `logging/setLevel` (legacy era)
    SetLevel = "logging/setLevel", SetLevelParams => EmptyResult;
    /// `subscriptions/listen` (2026-07-28)
    SubscriptionsListen = "subscriptions/listen", SubscriptionsListenParams => SubscriptionsListenResult;
    /// `sampling/createMessage` (server → client; an input request in 2026-07-28)
    CreateMessage = "sampling/createMessage", CreateMessageParams => CreateMessageResult;
    /// `roots/list` (server → client; an input request in 2026-07-28)
    ListRoots = "roots/list", MetaParams => ListRootsResult;
    /// `elicitation/create` (server → client, 2025-06-18 and later)
    Elicit = "elicitation/create", ElicitParams => ElicitResult;
    /// `tasks/get` (2025-11-25 and the tasks extension)
    GetTask = "tasks/get", TaskIdParams => GetTaskResult;
    /// `tasks/result` (2025-11-25)
    GetTaskPayload = "tasks/result", TaskIdParams => GetTaskPayloadResult;
    /// `tasks/list` (2025-11-25)
    ListTasks = "tasks/list", PaginatedParams => ListTasksResult;
    /// `tasks/cancel` as in 2025-11-25: the result is the task
    CancelTask = "tasks/cancel", TaskIdParams => CancelTaskResult;
    /// `tasks/cancel` as in the tasks extension: the result is empty
    ExtCancelTask = "tasks/cancel", TaskIdParams => EmptyResult;
    /// `tasks/update` (tasks extension)
    UpdateTask = "tasks/update", ext_tasks::UpdateTaskParams => EmptyResult;
}

notifications! {
    /// `notifications/initialized` (legacy era)
    Initialized = "notifications/initialized", MetaParams;
    /// `notifications/cancelled`
    Cancelled = "notifications/cancelled", CancelledNotificationParams;
    /// `notifications/progress`
    Progress = "notifications/progress", ProgressNotificationParams;
    /// `notifications/message`
    LoggingMessage = "notifications/message", LoggingMessageNotificationParams;
    /// `notifications/resources/updated`
    ResourceUpdated = "notifications/resources/updated", ResourceUpdatedNotificationParams;
    /// `notifications/resources/list_changed`
    ResourceListChanged = "notifications/resources/list_changed", ListChangedParams;
    /// `notifications/tools/list_changed`
    ToolListChanged = "notifications/tools/list_changed", ListChangedParams;
    /// `notifications/prompts/list_changed`
    PromptListChanged = "notifications/prompts/list_changed", ListChangedParams;
    /// `notifications/roots/list_changed` (legacy era)
    RootsListChanged = "notifications/roots/list_changed", ListChangedParams;
    /// `notifications/elicitation/complete` (2025-11-25)
    ElicitationComplete = "notifications/elicitation/complete", ElicitationCompleteParams;
    /// `notifications/subscriptions/acknowledged` (2026-07-28)
    SubscriptionsAcknowledged = "notifications/subscriptions/acknowledged", SubscriptionsAcknowledgedParams;
    /// `notifications/tasks/status` (2025-11-25)
    TaskStatus = "notifications/tasks/status", TaskStatusNotificationParams;
    /// `notifications/tasks` (tasks extension)
    ExtTaskStatus = "notifications/tasks", TaskStatusNotificationParams;
}
