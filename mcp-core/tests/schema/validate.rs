//! Every message type the library can emit, fitted to each version, validates against that
//! version's `schema.json` definition of the same type.
//!
//! A (sample, version) pair is skipped only when the version's schema has no such
//! definition. A coverage check makes sure every request, notification and result
//! definition of every version has a sample, so nothing is skipped silently.

use crate::schema_support;

use std::collections::{BTreeMap, BTreeSet};

use mcp_sansio::schema::*;
use mcp_sansio::{Era, ProtocolVersion};
use schema_support::{Doc, Schemas, add_session_meta};
use serde::Serialize;
use serde_json::{Map, Value, json};

/// Builds a value from `Default` and field assignments (the structs are `#[non_exhaustive]`)
macro_rules! build {
    ($base:expr, $($field:ident = $value:expr),* $(,)?) => {{
        let mut x = $base;
        $(x.$field = $value;)*
        x
    }};
}

/// Where a sample is checked
#[derive(Debug, Clone, Copy)]
enum Target {
    /// A definition of the core schema (`Tool`, `CallToolResult`, ...)
    Def(&'static str),
    /// The `params` of a core request or notification definition; `client` requests get the
    /// session's `_meta` in the modern era
    Params { of: &'static str, client: bool },
    /// A JSON pointer below `$defs` of the tasks extension schema (2026-07-28 only)
    Ext(&'static str, &'static str),
}

struct Sample {
    label: &'static str,
    target: Target,
    make: Box<dyn Fn(ProtocolVersion) -> Value>,
}

fn fitted<T: FitVersion + Serialize + Clone + 'static>(
    value: T,
) -> Box<dyn Fn(ProtocolVersion) -> Value> {
    Box::new(move |v| {
        let mut x = value.clone();
        x.fit_to(v);
        serde_json::to_value(&x).unwrap()
    })
}

/// A value of a type the library builds itself (no public constructor), from its JSON
fn de<T: serde::de::DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).unwrap()
}

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => panic!("not an object"),
    }
}

fn annotations() -> Annotations {
    build!(
        Annotations::default(),
        audience = Some(vec![Role::User, Role::Assistant]),
        priority = serde_json::Number::from_f64(0.5),
        last_modified = Some("2025-01-12T15:00:58Z".into()),
    )
}

fn icons() -> Vec<Icon> {
    vec![build!(
        Icon::new("https://example.com/icon.png"),
        mime_type = Some("image/png".into()),
        sizes = Some(vec!["48x48".into()]),
        theme = Some(IconTheme::Dark),
    )]
}

fn meta() -> Meta {
    obj(json!({"example.com/trace": "abc"}))
}

fn resource() -> Resource {
    let mut r = Resource::new("file:///project/README.md", "README.md")
        .with_description("The project's read-me")
        .with_mime_type("text/markdown");
    r.title = Some("Read me".into());
    r.annotations = Some(annotations());
    r.size = Some(1024);
    r.icons = Some(icons());
    r.meta = Some(meta());
    r
}

fn every_content_block() -> Vec<ContentBlock> {
    let mut text = TextContent::new("hello");
    text.annotations = Some(annotations());
    text.meta = Some(meta());
    vec![
        ContentBlock::Text(text),
        ContentBlock::Image(build!(
            MediaContent::new("aGVsbG8=", "image/png"),
            annotations = Some(annotations()),
        )),
        ContentBlock::Audio(build!(
            MediaContent::new("aGVsbG8=", "audio/wav"),
            annotations = Some(annotations()),
        )),
        ContentBlock::resource_link(resource()),
        ContentBlock::resource(
            ResourceContents::text("file:///a.txt", "a").with_mime_type("text/plain"),
        ),
        ContentBlock::resource(ResourceContents::blob("file:///b.bin", "AAEC")),
    ]
}

fn tool() -> Tool {
    let mut t = Tool::new(
        "get_weather",
        obj(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "properties": {"location": {"type": "string"}},
            "required": ["location"]
        })),
    )
    .with_description("Current weather")
    .with_output_schema(obj(json!({
        "type": "object",
        "properties": {"temperature": {"type": "number"}}
    })))
    .with_task_support(TaskSupport::Optional);
    t.title = Some("Weather".into());
    t.annotations = Some(build!(
        ToolAnnotations::default(),
        read_only_hint = Some(true),
        destructive_hint = Some(false),
        idempotent_hint = Some(true),
        open_world_hint = Some(true),
    ));
    t.icons = Some(icons());
    t.meta = Some(meta());
    t
}

fn tool_with_array_output() -> Tool {
    Tool::new("list", Map::new()).with_output_schema(obj(json!({"type": "array"})))
}

fn every_sampling_block() -> Vec<SamplingContent> {
    let mut use_ = ToolUseContent::new("call-1", "get_weather", obj(json!({"location": "Paris"})));
    use_.meta = Some(meta());
    let mut result = ToolResultContent::new("call-1", every_content_block());
    result.structured_content = Some(json!({"temperature": 21}));
    result.is_error = Some(false);
    vec![
        SamplingContent::text("hi"),
        SamplingContent::Image(MediaContent::new("aGVsbG8=", "image/png")),
        SamplingContent::Audio(MediaContent::new("aGVsbG8=", "audio/wav")),
        SamplingContent::ToolUse(use_),
        SamplingContent::ToolResult(result),
    ]
}

fn create_message_params() -> CreateMessageParams {
    let mut messages = vec![SamplingMessage::user("What's the weather?")];
    messages.push(SamplingMessage::new(
        Role::Assistant,
        every_sampling_block(),
    ));
    for block in every_sampling_block() {
        messages.push(SamplingMessage::new(Role::User, block));
    }
    let mut p = CreateMessageParams::new(messages, 100);
    p.system_prompt = Some("Be brief".into());
    p.tools = Some(vec![tool()]);
    p.tool_choice = Some(ToolChoice::new(ToolChoiceMode::Auto));
    p.model_preferences = Some(build!(
        ModelPreferences::default(),
        hints = Some(vec![ModelHint::new("claude")]),
        cost_priority = serde_json::Number::from_f64(0.3)
    ));
    p.include_context = Some(IncludeContext::ThisServer);
    p.temperature = serde_json::Number::from_f64(0.7);
    p.stop_sequences = Some(vec!["\n\n".into()]);
    p.metadata = Some(obj(json!({"k": "v"})));
    p.task = Some(TaskMetadata::with_ttl(60_000));
    p
}

fn every_field_schema() -> ElicitationSchema {
    let string = PrimitiveSchema::String(build!(
        StringSchema::default(),
        title = Some("Email".into()),
        min_length = Some(3),
        max_length = Some(100),
        format = Some(StringFormat::Email),
        default = Some("a@b.c".into())
    ));
    let number = PrimitiveSchema::Number(build!(
        NumberSchema::default(),
        kind = NumberType::Integer,
        minimum = Some(1.into()),
        maximum = Some(10.into()),
        default = Some(5.into())
    ));
    let boolean = PrimitiveSchema::Boolean(build!(BooleanSchema::default(), default = Some(true)));
    let untitled = PrimitiveSchema::UntitledSingleSelect(build!(
        UntitledSingleSelectEnumSchema::default(),
        values = vec!["red".into(), "green".into()],
        default = Some("red".into())
    ));
    let titled = PrimitiveSchema::TitledSingleSelect(build!(
        TitledSingleSelectEnumSchema::default(),
        one_of = vec![EnumOption::new("r", "Red"), EnumOption::new("g", "Green")]
    ));
    let multi = PrimitiveSchema::UntitledMultiSelect(build!(
        UntitledMultiSelectEnumSchema::default(),
        min_items = Some(1),
        max_items = Some(2),
        items = build!(
            UntitledEnumItems::default(),
            values = vec!["a".into(), "b".into()]
        ),
        default = Some(vec!["a".into()])
    ));
    let titled_multi = PrimitiveSchema::TitledMultiSelect(build!(
        TitledMultiSelectEnumSchema::default(),
        items = build!(
            TitledEnumItems::default(),
            any_of = vec![EnumOption::new("a", "A")]
        )
    ));
    let legacy = PrimitiveSchema::LegacyTitled(build!(
        LegacyTitledEnumSchema::default(),
        values = vec!["x".into()],
        enum_names = Some(vec!["X".into()])
    ));
    ElicitationSchema::new()
        .with_property("email", string, true)
        .with_property("count", number, false)
        .with_property("ok", boolean, false)
        .with_property("color", untitled, false)
        .with_property("titled", titled, true)
        .with_property("multi", multi, true)
        .with_property("titled_multi", titled_multi, false)
        .with_property("legacy", legacy, false)
}

fn task(status: TaskStatus) -> Task {
    let mut t: Task = de(json!({
        "taskId": "task-1",
        "status": status,
        "createdAt": "2025-11-25T10:00:00Z",
        "lastUpdatedAt": "2025-11-25T10:00:05Z",
        "ttlMs": 60_000,
    }));
    t.poll_interval_ms = Some(500);
    t.status_message = Some("busy".into());
    match status {
        TaskStatus::InputRequired => {
            let mut requests = InputRequests::new();
            requests.insert(
                "ask".into(),
                InputRequest::Elicit(ElicitParams::form("Name?", every_field_schema())),
            );
            t.input_requests = Some(requests);
        }
        TaskStatus::Completed => {
            t.result = Some(obj(json!({"content": [], "resultType": "complete"})))
        }
        TaskStatus::Failed => {
            t.error =
                Some(serde_json::from_value(json!({"code": -32603, "message": "boom"})).unwrap());
        }
        _ => {}
    }
    t
}

fn input_responses() -> InputResponses {
    let mut content = BTreeMap::new();
    content.insert("name".to_owned(), ElicitValue::String("octocat".into()));
    content.insert("count".to_owned(), ElicitValue::Number(3.into()));
    content.insert("ok".to_owned(), ElicitValue::Bool(true));
    content.insert("multi".to_owned(), ElicitValue::Strings(vec!["a".into()]));
    let mut r = InputResponses::new();
    r.insert(
        "ask".into(),
        InputResponse::Elicit(ElicitResult::accept(content)),
    );
    r.insert(
        "sample".into(),
        InputResponse::CreateMessage(CreateMessageResult::new(
            SamplingContent::text("Paris"),
            "m",
        )),
    );
    r.insert(
        "roots".into(),
        InputResponse::ListRoots(ListRootsResult::new(vec![Root::new("file:///r")])),
    );
    r
}

fn samples() -> Vec<Sample> {
    use Target::*;
    let s = |label, target, make| Sample {
        label,
        target,
        make,
    };
    let caps_client = ClientCapabilities::try_from(json!({
        "experimental": {"x": {}}, "roots": {"listChanged": true},
        "sampling": {"context": {}, "tools": {}}, "elicitation": {"form": {}, "url": {}},
        "tasks": {"list": {}, "cancel": {}, "requests": {"sampling": {"createMessage": {}}}},
        "extensions": {"io.modelcontextprotocol/tasks": {}}
    }))
    .unwrap();
    let caps_server = ServerCapabilities::try_from(json!({
        "experimental": {"x": {}}, "logging": {}, "completions": {},
        "prompts": {"listChanged": true}, "resources": {"subscribe": true, "listChanged": true},
        "tools": {"listChanged": true}, "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
        "extensions": {"io.modelcontextprotocol/tasks": {}}
    }))
    .unwrap();
    let info = build!(
        Implementation::new("impl", "1.0"),
        title = Some("Impl".into()),
        description = Some("An implementation".into()),
        website_url = Some("https://example.com".into()),
        icons = Some(icons()),
    );
    let cache = |ttl| (ttl, CacheScope::Public);
    let (ttl, scope) = cache(60_000);

    let mut call_result = CallToolResult::new(every_content_block());
    call_result.structured_content = Some(json!({"temperature": 21}));
    call_result.meta = Some(meta());
    let mut call_params =
        CallToolParams::new("get_weather").with_arguments(obj(json!({"location": "Paris"})));
    call_params.task = Some(TaskMetadata::with_ttl(1000));
    call_params.input_responses = Some(input_responses());
    call_params.request_state = Some("opaque".into());

    let mut prompt_messages: Vec<PromptMessage> = every_content_block()
        .into_iter()
        .map(|c| PromptMessage::new(Role::User, c))
        .collect();
    prompt_messages.push(PromptMessage::assistant("ok"));

    let mut many = BTreeMap::new();
    many.insert("ok".to_owned(), ElicitValue::Bool(true));
    many.insert("multi".to_owned(), ElicitValue::Strings(vec!["a".into()]));

    let mut requests = InputRequests::new();
    requests.insert(
        "form".into(),
        InputRequest::Elicit(ElicitParams::form("Name?", every_field_schema())),
    );
    requests.insert(
        "url".into(),
        InputRequest::Elicit(ElicitParams::url(
            "Log in",
            "https://example.com/login",
            "e1",
        )),
    );
    requests.insert(
        "sample".into(),
        InputRequest::CreateMessage(create_message_params()),
    );
    requests.insert("roots".into(), InputRequest::ListRoots(None));

    let mut filter = SubscriptionFilter::default();
    filter.tools_list_changed = Some(true);
    filter.resource_subscriptions = Some(vec!["file:///a".into()]);
    filter.task_ids = Some(vec!["task-1".into()]);

    let mut completion = CompleteParams::new(Reference::prompt("greet"), "name", "Al");
    completion.context = Some(build!(
        CompleteContext::default(),
        arguments = Some([("lang".to_owned(), "en".to_owned())].into())
    ));

    let mut samples = vec![
        // Lifecycle
        s(
            "initialize params",
            Params {
                of: "InitializeRequest",
                client: true,
            },
            fitted(de::<InitializeParams>(json!({
                "protocolVersion": ProtocolVersion::LATEST_LEGACY.as_str(),
                "capabilities": caps_client,
                "clientInfo": info,
            }))),
        ),
        s(
            "initialize result",
            Def("InitializeResult"),
            fitted(de::<InitializeResult>(json!({
                "protocolVersion": ProtocolVersion::LATEST_LEGACY.as_str(),
                "capabilities": caps_server,
                "serverInfo": info,
            }))),
        ),
        s(
            "initialized",
            Params {
                of: "InitializedNotification",
                client: false,
            },
            fitted(MetaParams::new()),
        ),
        s(
            "ping",
            Params {
                of: "PingRequest",
                client: true,
            },
            fitted(MetaParams::new()),
        ),
        s(
            "discover params",
            Params {
                of: "DiscoverRequest",
                client: true,
            },
            fitted(MetaParams::new()),
        ),
        s(
            "discover result",
            Def("DiscoverResult"),
            fitted(de::<DiscoverResult>(json!({
                "supportedVersions": ProtocolVersion::ALL.map(ProtocolVersion::as_str),
                "capabilities": caps_server,
                "ttlMs": 0,
                "cacheScope": CacheScope::Private,
            }))),
        ),
        s(
            "client capabilities",
            Def("ClientCapabilities"),
            fitted(caps_client.clone()),
        ),
        s(
            "server capabilities",
            Def("ServerCapabilities"),
            fitted(caps_server.clone()),
        ),
        s(
            "implementation",
            Def("Implementation"),
            fitted(info.clone()),
        ),
        s(
            "empty result",
            Def("EmptyResult"),
            fitted(EmptyResult::default()),
        ),
        // Tools
        s("tool", Def("Tool"), fitted(tool())),
        s(
            "tool with array output",
            Def("Tool"),
            fitted(tool_with_array_output()),
        ),
        s(
            "list tools params",
            Params {
                of: "ListToolsRequest",
                client: true,
            },
            fitted(PaginatedParams::at("c1")),
        ),
        s(
            "list tools result",
            Def("ListToolsResult"),
            fitted(
                build!(
                    ListToolsResult::new(vec![tool(), tool_with_array_output()]),
                    next_cursor = Some("c2".into()),
                )
                .with_cache(ttl, scope),
            ),
        ),
        s(
            "call tool params",
            Params {
                of: "CallToolRequest",
                client: true,
            },
            fitted(call_params),
        ),
        s(
            "call tool result",
            Def("CallToolResult"),
            fitted(call_result),
        ),
        s(
            "call tool error",
            Def("CallToolResult"),
            fitted(CallToolResult::error("failed")),
        ),
        s(
            "call tool structured array",
            Def("CallToolResult"),
            fitted(CallToolResult::structured(json!([1, 2]))),
        ),
        s(
            "call tool structured only",
            Def("CallToolResult"),
            fitted({
                let mut r = CallToolResult::new(vec![]);
                r.structured_content = Some(json!("just a string"));
                r
            }),
        ),
        s(
            "tool list changed",
            Params {
                of: "ToolListChangedNotification",
                client: false,
            },
            fitted(MetaParams::new()),
        ),
        // Resources
        s("resource", Def("Resource"), fitted(resource())),
        s(
            "list resources params",
            Params {
                of: "ListResourcesRequest",
                client: true,
            },
            fitted(PaginatedParams::new()),
        ),
        s(
            "list resources result",
            Def("ListResourcesResult"),
            fitted(ListResourcesResult::new(vec![resource()]).with_cache(ttl, scope)),
        ),
        s(
            "list templates params",
            Params {
                of: "ListResourceTemplatesRequest",
                client: true,
            },
            fitted(PaginatedParams::new()),
        ),
        s(
            "list templates result",
            Def("ListResourceTemplatesResult"),
            fitted({
                let mut t = ResourceTemplate::new("file:///{path}", "files");
                t.description = Some("Files".into());
                t.annotations = Some(annotations());
                t.icons = Some(icons());
                t.mime_type = Some("text/plain".into());
                ListResourceTemplatesResult::new(vec![t]).with_cache(ttl, scope)
            }),
        ),
        s(
            "read resource params",
            Params {
                of: "ReadResourceRequest",
                client: true,
            },
            fitted(ResourceParams::new("file:///a.txt")),
        ),
        s(
            "read resource result",
            Def("ReadResourceResult"),
            fitted(
                ReadResourceResult::new(vec![
                    ResourceContents::text("file:///a.txt", "a").with_mime_type("text/plain"),
                    ResourceContents::blob("file:///b.bin", "AAEC"),
                ])
                .with_cache(ttl, scope),
            ),
        ),
        s(
            "subscribe params",
            Params {
                of: "SubscribeRequest",
                client: true,
            },
            fitted(ResourceParams::new("file:///a")),
        ),
        s(
            "unsubscribe params",
            Params {
                of: "UnsubscribeRequest",
                client: true,
            },
            fitted(ResourceParams::new("file:///a")),
        ),
        s(
            "resource updated",
            Params {
                of: "ResourceUpdatedNotification",
                client: false,
            },
            fitted(de::<ResourceUpdatedNotificationParams>(
                json!({"uri": "file:///a"}),
            )),
        ),
        s(
            "resource list changed",
            Params {
                of: "ResourceListChangedNotification",
                client: false,
            },
            fitted(MetaParams::new()),
        ),
        // Prompts
        s(
            "prompt",
            Def("Prompt"),
            fitted(build!(
                Prompt::new("greet")
                    .with_description("Says hi")
                    .with_arguments(vec![
                        PromptArgument::new("name")
                            .with_description("Who")
                            .required(true),
                    ]),
                title = Some("Greet".into()),
                icons = Some(icons()),
            )),
        ),
        s(
            "list prompts params",
            Params {
                of: "ListPromptsRequest",
                client: true,
            },
            fitted(PaginatedParams::new()),
        ),
        s(
            "list prompts result",
            Def("ListPromptsResult"),
            fitted(ListPromptsResult::new(vec![Prompt::new("greet")]).with_cache(ttl, scope)),
        ),
        s(
            "get prompt params",
            Params {
                of: "GetPromptRequest",
                client: true,
            },
            fitted(build!(
                GetPromptParams::new("greet"),
                arguments = Some([("name".to_owned(), "Al".to_owned())].into()),
            )),
        ),
        s(
            "get prompt result",
            Def("GetPromptResult"),
            fitted(build!(
                GetPromptResult::new(prompt_messages),
                description = Some("Greeting".into()),
            )),
        ),
        s(
            "prompt list changed",
            Params {
                of: "PromptListChangedNotification",
                client: false,
            },
            fitted(MetaParams::new()),
        ),
        // Completion
        s(
            "complete params",
            Params {
                of: "CompleteRequest",
                client: true,
            },
            fitted(completion),
        ),
        s(
            "complete resource params",
            Params {
                of: "CompleteRequest",
                client: true,
            },
            fitted(CompleteParams::new(
                Reference::resource("file:///{path}"),
                "path",
                "sr",
            )),
        ),
        s(
            "complete result",
            Def("CompleteResult"),
            fitted(CompleteResult::new(
                (0..150).map(|i| i.to_string()).collect(),
            )),
        ),
        // Logging
        s(
            "set level",
            Params {
                of: "SetLevelRequest",
                client: true,
            },
            fitted(SetLevelParams::new(LoggingLevel::Warning)),
        ),
        s(
            "log message",
            Params {
                of: "LoggingMessageNotification",
                client: false,
            },
            fitted(build!(
                LoggingMessageNotificationParams::new(LoggingLevel::Error, json!({"e": 1})),
                logger = Some("db".into()),
            )),
        ),
        // Roots
        s(
            "list roots params",
            Params {
                of: "ListRootsRequest",
                client: false,
            },
            fitted(MetaParams::new()),
        ),
        s(
            "list roots result",
            Def("ListRootsResult"),
            fitted(ListRootsResult::new(vec![build!(
                Root::new("file:///home"),
                name = Some("home".into())
            )])),
        ),
        s(
            "roots list changed",
            Params {
                of: "RootsListChangedNotification",
                client: false,
            },
            fitted(MetaParams::new()),
        ),
        // Sampling
        s(
            "create message params",
            Params {
                of: "CreateMessageRequest",
                client: false,
            },
            fitted(create_message_params()),
        ),
        s(
            "create message result",
            Def("CreateMessageResult"),
            fitted(build!(
                CreateMessageResult::new(every_sampling_block(), "model-1"),
                stop_reason = Some("toolUse".into()),
            )),
        ),
        s(
            "create message result, no text",
            Def("CreateMessageResult"),
            fitted(CreateMessageResult::new(
                vec![every_sampling_block().remove(3)],
                "model-1",
            )),
        ),
        s("sampling message", Def("SamplingMessage"), {
            // A single message: fitted through the params rule, then the first message
            let p = CreateMessageParams::new(
                vec![SamplingMessage::new(Role::User, every_sampling_block())],
                1,
            );
            let make = fitted(p);
            Box::new(move |v| make(v)["messages"][0].clone())
        }),
        // Elicitation
        s(
            "elicit form",
            Params {
                of: "ElicitRequest",
                client: false,
            },
            fitted(ElicitParams::form("Tell me", every_field_schema())),
        ),
        s(
            "elicit url",
            Params {
                of: "ElicitRequest",
                client: false,
            },
            fitted(ElicitParams::url(
                "Log in",
                "https://example.com/login",
                "e1",
            )),
        ),
        s(
            "elicit result accept",
            Def("ElicitResult"),
            fitted(ElicitResult::accept(many)),
        ),
        s(
            "elicit result decline",
            Def("ElicitResult"),
            fitted(ElicitResult::decline()),
        ),
        s(
            "elicitation complete",
            Params {
                of: "ElicitationCompleteNotification",
                client: false,
            },
            fitted(ElicitationCompleteParams::new("e1")),
        ),
        // Notifications
        s(
            "cancelled",
            Params {
                of: "CancelledNotification",
                client: false,
            },
            fitted(de::<CancelledNotificationParams>(
                json!({"requestId": 7, "reason": "user"}),
            )),
        ),
        s(
            "progress",
            Params {
                of: "ProgressNotification",
                client: false,
            },
            fitted(de::<ProgressNotificationParams>(json!({
                "progressToken": "tok",
                "progress": 50,
                "total": 100,
                "message": "half",
            }))),
        ),
        // MRTR and subscriptions (2026-07-28)
        s(
            "input required",
            Def("InputRequiredResult"),
            fitted(build!(
                InputRequiredResult::new(requests),
                request_state = Some("opaque".into()),
            )),
        ),
        s(
            "input responses",
            Def("InputResponses"),
            fitted(input_responses()),
        ),
        s(
            "listen params",
            Params {
                of: "SubscriptionsListenRequest",
                client: true,
            },
            fitted(SubscriptionsListenParams::new(filter.clone())),
        ),
        s(
            "listen result",
            Def("SubscriptionsListenResult"),
            fitted(de::<SubscriptionsListenResult>(json!({
                "_meta": {(meta::SUBSCRIPTION_ID): "listen-1"},
            }))),
        ),
        s(
            "acknowledged",
            Params {
                of: "SubscriptionsAcknowledgedNotification",
                client: false,
            },
            fitted(SubscriptionsListenParams::new(filter)),
        ),
        // Tasks (2025-11-25)
        s(
            "create task",
            Def("CreateTaskResult"),
            fitted(de::<CreateTaskResult>(
                json!({"task": task(TaskStatus::Working)}),
            )),
        ),
        s(
            "get task params",
            Params {
                of: "GetTaskRequest",
                client: true,
            },
            fitted(TaskIdParams::new("task-1")),
        ),
        s(
            "task result params",
            Params {
                of: "GetTaskPayloadRequest",
                client: true,
            },
            fitted(TaskIdParams::new("task-1")),
        ),
        s(
            "cancel task params",
            Params {
                of: "CancelTaskRequest",
                client: true,
            },
            fitted(TaskIdParams::new("task-1")),
        ),
        s(
            "list tasks params",
            Params {
                of: "ListTasksRequest",
                client: true,
            },
            fitted(PaginatedParams::new()),
        ),
        s(
            "get task result",
            Def("GetTaskResult"),
            fitted(de::<GetTaskResult>(json!(task(TaskStatus::Completed)))),
        ),
        s(
            "cancel task result",
            Def("CancelTaskResult"),
            fitted(de::<GetTaskResult>(json!(task(TaskStatus::Cancelled)))),
        ),
        s(
            "task payload",
            Def("GetTaskPayloadResult"),
            fitted(GetTaskPayloadResult::default()),
        ),
        s(
            "list tasks result",
            Def("ListTasksResult"),
            fitted(de::<ListTasksResult>(json!({"tasks": [
                task(TaskStatus::Working),
                task(TaskStatus::InputRequired),
                task(TaskStatus::Failed),
            ]}))),
        ),
        s(
            "task status",
            Params {
                of: "TaskStatusNotification",
                client: false,
            },
            fitted(task(TaskStatus::Working)),
        ),
        // Tasks extension (2026-07-28)
        s(
            "ext create task",
            Ext("CreateTaskResult", ""),
            fitted(de::<ext_tasks::CreateTaskResult>({
                let mut v = json!(task(TaskStatus::Working));
                v["resultType"] = json!("task");
                v
            })),
        ),
        s(
            "ext get task params",
            Ext("GetTaskRequest", "/allOf/1/properties/params"),
            fitted(TaskIdParams::new("task-1")),
        ),
        s(
            "ext cancel task params",
            Ext("CancelTaskRequest", "/allOf/1/properties/params"),
            fitted(TaskIdParams::new("task-1")),
        ),
        s(
            "ext cancel task result",
            Ext("CancelTaskResult", ""),
            fitted(EmptyResult::default()),
        ),
        s(
            "ext update task params",
            Ext("UpdateTaskRequest", "/allOf/1/properties/params"),
            fitted(de::<ext_tasks::UpdateTaskParams>(json!({
                "taskId": "task-1",
                "inputResponses": input_responses(),
            }))),
        ),
        s(
            "ext update task result",
            Ext("UpdateTaskResult", ""),
            fitted(EmptyResult::default()),
        ),
    ];
    for status in [
        TaskStatus::Working,
        TaskStatus::InputRequired,
        TaskStatus::Completed,
        TaskStatus::Failed,
        TaskStatus::Cancelled,
    ] {
        samples.push(s(
            "ext get task result",
            Ext("GetTaskResult", ""),
            fitted(de::<GetTaskResult>(json!(task(status)))),
        ));
        samples.push(s(
            "ext task status",
            Ext("TaskStatusNotification", "/allOf/1/properties/params"),
            fitted(task(status)),
        ));
    }
    for block in every_content_block() {
        samples.push(s("content block", Def("ContentBlock"), fitted(block)));
    }
    samples
}

/// Definitions that are not messages this library emits on their own (JSON-RPC envelopes,
/// unions, abstract bases, error responses)
fn is_message(name: &str) -> bool {
    let abstract_or_union = [
        "Request",
        "Notification",
        "Result",
        "PaginatedRequest",
        "PaginatedResult",
        "CacheableResult",
        "ClientRequest",
        "ServerRequest",
        "ClientNotification",
        "ServerNotification",
        "ClientResult",
        "ServerResult",
        "InputRequest",
        "JSONRPCRequest",
        "JSONRPCNotification",
        "JSONRPCResultResponse",
        "JSONRPCBatchRequest",
    ];
    (name.ends_with("Request") || name.ends_with("Notification") || name.ends_with("Result"))
        && !abstract_or_union.contains(&name)
}

#[test]
fn every_sample_validates_in_every_version() {
    let mut schemas = Schemas::load();
    let samples = samples();
    let mut failures = Vec::new();
    let mut checked = 0;
    for v in ProtocolVersion::ALL {
        let doc = Doc::Core(v);
        for sample in &samples {
            let (doc, pointer, client) = match sample.target {
                Target::Def(name) => (doc, schemas.pointer(doc, name, ""), false),
                Target::Params { of, client } => {
                    (doc, schemas.pointer(doc, of, "/properties/params"), client)
                }
                Target::Ext(name, sub) if v == ProtocolVersion::V2026_07_28 => {
                    let p = schemas.pointer(Doc::ExtTasks, name, sub);
                    assert!(p.is_some(), "tasks extension has no {name}{sub}");
                    (Doc::ExtTasks, p, false)
                }
                Target::Ext(..) => continue,
            };
            // The version has no such type.
            let Some(pointer) = pointer else { continue };
            let mut value = (sample.make)(v);
            if client && v.era() == Era::Modern {
                add_session_meta(v, &mut value);
            }
            match schemas.validate(doc, &pointer, &value) {
                Ok(()) => checked += 1,
                Err(e) => failures.push(format!(
                    "{v} {} ({pointer}): {e}\n    value: {value}",
                    sample.label
                )),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("{checked} (sample, version) pairs validated");
    assert!(checked > 300, "only {checked} checks ran");
}

#[test]
fn every_message_definition_has_a_sample() {
    let schemas = Schemas::load();
    let samples = samples();
    let covered: BTreeSet<&str> = samples
        .iter()
        .filter_map(|s| match s.target {
            Target::Def(n) | Target::Params { of: n, .. } => Some(n),
            Target::Ext(..) => None,
        })
        .collect();
    let ext_covered: BTreeSet<&str> = samples
        .iter()
        .filter_map(|s| match s.target {
            Target::Ext(n, _) => Some(n),
            _ => None,
        })
        .collect();
    let mut missing = Vec::new();
    for v in ProtocolVersion::ALL {
        for name in schemas.definitions(Doc::Core(v)) {
            if is_message(&name) && !covered.contains(name.as_str()) {
                missing.push(format!("{v}: {name}"));
            }
        }
    }
    for name in schemas.definitions(Doc::ExtTasks) {
        let ext_only = !schemas
            .definitions(Doc::Core(ProtocolVersion::LATEST))
            .contains(&name);
        if ext_only && is_message(&name) && !ext_covered.contains(name.as_str()) {
            missing.push(format!("ext-tasks: {name}"));
        }
    }
    assert!(
        missing.is_empty(),
        "message definitions without a sample:\n{}",
        missing.join("\n")
    );
}

/// The validator does reject what `fit_to` repairs: without fitting, these fail
#[test]
fn unfitted_values_are_rejected() {
    let mut schemas = Schemas::load();
    let cases: Vec<(ProtocolVersion, &str, Value)> = vec![
        (
            ProtocolVersion::V2024_11_05,
            "CallToolResult",
            serde_json::to_value(CallToolResult::new(vec![ContentBlock::audio(
                "AA==",
                "audio/wav",
            )]))
            .unwrap(),
        ),
        (
            ProtocolVersion::V2025_03_26,
            "CallToolResult",
            serde_json::to_value(CallToolResult::new(vec![ContentBlock::resource_link(
                resource(),
            )]))
            .unwrap(),
        ),
        (
            ProtocolVersion::V2026_07_28,
            "CallToolResult",
            serde_json::to_value(CallToolResult::text("no resultType")).unwrap(),
        ),
        (
            ProtocolVersion::V2025_11_25,
            "CallToolResult",
            serde_json::to_value(CallToolResult::structured(json!([1]))).unwrap(),
        ),
        (
            ProtocolVersion::V2025_06_18,
            "CreateMessageResult",
            serde_json::to_value(CreateMessageResult::new(every_sampling_block(), "m")).unwrap(),
        ),
        (
            ProtocolVersion::V2025_06_18,
            "ElicitRequest",
            json!({"method": "elicitation/create", "params": ElicitParams::form("x", every_field_schema())}),
        ),
        (
            ProtocolVersion::V2025_11_25,
            "GetTaskResult",
            serde_json::to_value(de::<GetTaskResult>(json!(task(TaskStatus::Working)))).unwrap(),
        ),
    ];
    for (v, name, value) in cases {
        let pointer = schemas.pointer(Doc::Core(v), name, "").unwrap();
        assert!(
            schemas.validate(Doc::Core(v), &pointer, &value).is_err(),
            "{v} {name} should reject {value}"
        );
    }
}
