//! The fixtures of the official conformance suite (`@modelcontextprotocol/conformance`):
//! the tools, resources and prompts its server scenarios call, with the exact names,
//! arguments and outputs they check
//!
//! Shared by the everything-server of each async binding (mcp-sansio-tokio's and
//! mcp-sansio-async-std's): each example's `rt` module names its binding's types and `sleep`.
//!
//! The catalog lists by name, not in registration order: the suite's "call `tools[0]` with
//! `{}`" probes hit `add` (the demo's, which answers `0`), and its read of `resources[0]`
//! hits `test://static-binary`.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::rt::{AskFailure, Context, ServerBuilder, sleep};
use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::schema::{
    CallToolResult, ContentBlock, GetPromptResult, InputRequest, InputRequests, InputResponses,
    LoggingLevel, Prompt, PromptArgument, PromptMessage, ReadResourceResult, Resource,
    ResourceContents, Role, TaskSupport, Tool,
};
use mcp_sansio::server::CatalogError;
use mcp_sansio::{Progress, TaskOptions};
use serde_json::{Map, Value, json};

use crate::object;

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

type Built = Result<ServerBuilder, CatalogError>;

/// `{"type": "object"}`
fn no_args() -> Map<String, Value> {
    object(json!({"type": "object"}))
}

fn tool(name: &str, description: &str) -> Tool {
    Tool::new(name, no_args()).with_description(description)
}

/// One input request from its wire form
fn input(request: Value) -> InputRequest {
    serde_json::from_value(request).expect("a valid input request")
}

fn requests(entries: Vec<(&str, Value)>) -> InputRequests {
    entries
        .into_iter()
        .map(|(k, v)| (k.to_owned(), input(v)))
        .collect()
}

fn elicit(message: &str, schema: Value) -> Value {
    json!({"method": "elicitation/create", "params": {"message": message, "requestedSchema": schema}})
}

fn sample(text: &str, max_tokens: u64) -> Value {
    json!({"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        "maxTokens": max_tokens,
    }})
}

fn list_roots() -> Value {
    json!({"method": "roots/list", "params": {}})
}

fn name_schema() -> Value {
    json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})
}

/// Asks, mapping a failure to the error the request should be answered with
async fn ask(cx: &Context, requests: InputRequests) -> Result<Value, ErrorObject> {
    let answers: InputResponses = cx.ask(requests).await.map_err(|e| e.to_error())?;
    serde_json::to_value(answers).map_err(ErrorObject::internal_error)
}

/// The first text of a sampling answer
fn sampled_text(answer: &Value) -> String {
    let content = &answer["content"];
    let first = if content.is_array() {
        &content[0]
    } else {
        content
    };
    first["text"].as_str().unwrap_or_default().to_owned()
}

/// A string field of an accepted elicitation, or `None` when not answered usably
fn accepted_str(answer: &Value, field: &str) -> Option<String> {
    if answer["action"] != "accept" {
        return None;
    }
    answer["content"][field].as_str().map(str::to_owned)
}

fn elicitation_summary(answer: &Value) -> String {
    format!(
        "User response: action={}, content={}",
        answer["action"].as_str().unwrap_or("?"),
        answer.get("content").cloned().unwrap_or(Value::Null)
    )
}

/// Registers every fixture the conformance server scenarios need
pub(crate) fn register(b: ServerBuilder) -> Built {
    // `completion/complete`: values for prompt arguments starting with what was typed
    let b = b
        .resource_subscriptions()
        .completion(|_cx, params| async move {
            let typed = params.argument.value.clone();
            let values = ["test", "testing", "tested", "other"]
                .into_iter()
                .filter(|v| v.starts_with(typed.as_str()))
                .map(str::to_owned)
                .collect();
            Ok(mcp_sansio::schema::CompleteResult::new(values))
        });
    let b = content_tools(b)?;
    let b = legacy_tools(b)?;
    let b = modern_tools(b)?;
    let b = input_required_tools(b)?;
    let b = task_tools(b)?;
    let b = resources(b)?;
    prompts(b)
}

fn content_tools(b: ServerBuilder) -> Built {
    b.tool(
        tool("test_simple_text", "Returns a simple text response"),
        |_cx, _args| async { Ok(CallToolResult::text("This is a simple text response for testing.")) },
    )?
    .tool(
        tool("test_image_content", "Returns a 1x1 PNG image"),
        |_cx, _args| async { Ok(CallToolResult::new(vec![ContentBlock::image(PNG, "image/png")])) },
    )?
    .tool(
        tool("test_audio_content", "Returns a short WAV clip"),
        |_cx, _args| async { Ok(CallToolResult::new(vec![ContentBlock::audio(WAV, "audio/wav")])) },
    )?
    .tool(
        tool("test_embedded_resource", "Returns an embedded text resource"),
        |_cx, _args| async {
            let resource = ResourceContents::text("test://embedded-resource", "This is an embedded resource content.")
                .with_mime_type("text/plain");
            Ok(CallToolResult::new(vec![ContentBlock::resource(resource)]))
        },
    )?
    .tool(
        tool("test_multiple_content_types", "Returns text, an image and an embedded resource"),
        |_cx, _args| async {
            let resource = ResourceContents::text("test://mixed-content-resource", r#"{"test":"data","value":123}"#)
                .with_mime_type("application/json");
            Ok(CallToolResult::new(vec![
                ContentBlock::text("Multiple content types test:"),
                ContentBlock::image(PNG, "image/png"),
                ContentBlock::resource(resource),
            ]))
        },
    )?
    .tool(
        tool("test_error_handling", "Always fails with a tool error"),
        |_cx, _args| async { Ok(CallToolResult::error("This tool intentionally returns an error for testing")) },
    )?
    .tool(
        tool("test_tool_with_progress", "Reports progress 0, 50, 100 when asked to"),
        |cx, _args| async move {
            for (i, step) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                if i > 0 {
                    sleep(Duration::from_millis(50)).await;
                }
                cx.progress(Progress::new(step).total(100.0));
            }
            Ok(CallToolResult::text("Progress tool completed"))
        },
    )?
    .tool(
        Tool::new("json_schema_2020_12_tool", object(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
            "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}, "contactMethod": {"type": "string", "enum": ["phone", "email"]}, "phone": {"type": "string"}, "email": {"type": "string"}},
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
            "then": {"required": ["phone"]},
            "else": {"required": ["email"]},
            "additionalProperties": false,
        })))
        .with_description("A tool whose inputSchema uses JSON Schema 2020-12 keywords"),
        |_cx, args| async move { Ok(CallToolResult::text(format!("received {}", Value::Object(args)))) },
    )
}

/// Tools that talk back to a 2025 client while they run
fn legacy_tools(b: ServerBuilder) -> Built {
    b.tool(
        tool("test_tool_with_logging", "Logs three info messages while it runs"),
        |cx, _args| async move {
            cx.log(LoggingLevel::Info, "Tool execution started");
            sleep(Duration::from_millis(50)).await;
            cx.log(LoggingLevel::Info, "Tool processing data");
            sleep(Duration::from_millis(50)).await;
            cx.log(LoggingLevel::Info, "Tool execution completed");
            Ok(CallToolResult::text("Logging tool completed"))
        },
    )?
    .tool(
        Tool::new("test_sampling", object(json!({"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]})))
            .with_description("Asks the client's model to answer `prompt`"),
        |cx, args| async move {
            let prompt = args["prompt"].as_str().unwrap_or_default().to_owned();
            let answers = ask(&cx, requests(vec![("sample", sample(&prompt, 100))])).await?;
            Ok(CallToolResult::text(format!("LLM response: {}", sampled_text(&answers["sample"]))))
        },
    )?
    .tool(
        Tool::new("test_elicitation", object(json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]})))
            .with_description("Asks the user for a username and an email address"),
        |cx, args| async move {
            let message = args["message"].as_str().unwrap_or_default().to_owned();
            let schema = json!({"type": "object", "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"},
            }, "required": ["username", "email"]});
            let answers = ask(&cx, requests(vec![("user", elicit(&message, schema))])).await?;
            Ok(CallToolResult::text(elicitation_summary(&answers["user"])))
        },
    )?
    .tool(
        tool("test_elicitation_sep1034_defaults", "Elicits a form whose fields have defaults (SEP-1034)"),
        |cx, _args| async move {
            let schema = json!({"type": "object", "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
                "verified": {"type": "boolean", "default": true},
            }});
            let message = "Please review and update the form fields with defaults";
            let answers = ask(&cx, requests(vec![("form", elicit(message, schema))])).await?;
            Ok(CallToolResult::text(elicitation_summary(&answers["form"])))
        },
    )?
    .tool(
        tool("test_elicitation_sep1330_enums", "Elicits every enum shape of SEP-1330"),
        |cx, _args| async move {
            let schema = json!({"type": "object", "properties": {
                "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {"type": "string", "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"},
                ]},
                "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
                "untitledMulti": {"type": "array", "minItems": 1, "maxItems": 3, "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                "titledMulti": {"type": "array", "minItems": 1, "maxItems": 3, "items": {"anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]}},
            }});
            let answers = ask(&cx, requests(vec![("enums", elicit("Please select options", schema))])).await?;
            Ok(CallToolResult::text(elicitation_summary(&answers["enums"])))
        },
    )
}

/// The 2026 diagnostic tools of `server-stateless` and the custom-header scenario
fn modern_tools(b: ServerBuilder) -> Built {
    b.tool(
        tool(
            "test_missing_capability",
            "Needs the client's sampling capability",
        ),
        |cx, _args| async move {
            // The core refuses the ask when this request's capabilities lack sampling
            // (-32021, naming the capability); otherwise the model's answer is used
            let answers = ask(&cx, requests(vec![("sample", sample("Say hello", 20))])).await?;
            Ok(CallToolResult::text(format!(
                "sampling available: {}",
                sampled_text(&answers["sample"])
            )))
        },
    )?
    .tool(
        tool(
            "test_streaming_elicitation",
            "Answers at once, without asking the client anything",
        ),
        |_cx, _args| async {
            Ok(CallToolResult::text(
                "Streaming elicitation tool completed without independent requests",
            ))
        },
    )?
    .tool(
        tool(
            "test_logging_tool",
            "Logs only when the request asked for a log level",
        ),
        |cx, _args| async move {
            cx.log(LoggingLevel::Info, "test_logging_tool ran");
            Ok(CallToolResult::text("Logging tool completed"))
        },
    )?
    .tool(
        Tool::new(
            "test_x_mcp_header",
            object(json!({"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
            }})),
        )
        .with_description("Echoes `region`, which clients mirror into the Mcp-Param-Region header"),
        |_cx, args| async move {
            Ok(CallToolResult::text(format!(
                "region={}",
                args.get("region")
                    .and_then(Value::as_str)
                    .unwrap_or("<none>")
            )))
        },
    )
}

/// The SEP-2322 `input_required` tools (2026); on a 2025 session `ask` sends live requests
fn input_required_tools(b: ServerBuilder) -> Built {
    b.tool(
        tool("test_input_required_result_elicitation", "Asks the user's name, then greets them"),
        |cx, _args| async move {
            loop {
                let answers = ask(&cx, requests(vec![("user_name", elicit("What is your name?", name_schema()))])).await?;
                if let Some(name) = accepted_str(&answers["user_name"], "name") {
                    return Ok(CallToolResult::text(format!("Hello, {name}!")));
                }
            }
        },
    )?
    .tool(
        tool("test_input_required_result_sampling", "Asks the client's model for the capital of France"),
        |cx, _args| async move {
            let answers = ask(&cx, requests(vec![("capital_question", sample("What is the capital of France?", 100))])).await?;
            Ok(CallToolResult::text(format!("The model said: {}", sampled_text(&answers["capital_question"]))))
        },
    )?
    .tool(
        tool("test_input_required_result_list_roots", "Asks the client for its roots"),
        |cx, _args| async move {
            let answers = ask(&cx, requests(vec![("client_roots", list_roots())])).await?;
            let n = answers["client_roots"]["roots"].as_array().map_or(0, Vec::len);
            Ok(CallToolResult::text(format!("Client exposed {n} root(s).")))
        },
    )?
    .tool(
        tool("test_input_required_result_request_state", "Asks for a confirmation, keeping request state"),
        |cx, _args| async move {
            let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]});
            let answers = ask(&cx, requests(vec![("confirm", elicit("Please confirm", schema))])).await?;
            Ok(CallToolResult::text(format!("state-ok: confirmed={}", answers["confirm"]["content"]["ok"])))
        },
    )?
    .tool(
        tool("test_input_required_result_multiple_inputs", "Asks for a name, a greeting and the roots at once"),
        |cx, _args| async move {
            let answers = ask(&cx, requests(vec![
                ("user_name", elicit("What is your name?", name_schema())),
                ("greeting", sample("Generate a greeting", 50)),
                ("client_roots", list_roots()),
            ]))
            .await?;
            let name = answers["user_name"]["content"]["name"].as_str().unwrap_or("someone").to_owned();
            let roots = answers["client_roots"]["roots"].as_array().map_or(0, Vec::len);
            let greeting = sampled_text(&answers["greeting"]);
            Ok(CallToolResult::text(format!("{greeting} {name}; {roots} root(s).")))
        },
    )?
    .tool(
        tool("test_input_required_result_multi_round", "Asks a name, then a favourite colour"),
        |cx, _args| async move {
            let step1 = ask(&cx, requests(vec![("step1", elicit("Step 1: What is your name?", name_schema()))])).await?;
            let name = accepted_str(&step1["step1"], "name").unwrap_or_default();
            let schema = json!({"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]});
            let step2 = ask(&cx, requests(vec![("step2", elicit("Step 2: What is your favorite color?", schema))])).await?;
            let color = accepted_str(&step2["step2"], "color").unwrap_or_default();
            Ok(CallToolResult::text(format!("{name} likes {color}.")))
        },
    )?
    .tool(
        tool("test_input_required_result_tampered_state", "Asks for a confirmation; the request state is integrity-protected"),
        |cx, _args| async move {
            let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]});
            ask(&cx, requests(vec![("confirm", elicit("Please confirm", schema))])).await?;
            Ok(CallToolResult::text("Confirmed with an intact request state"))
        },
    )?
    .tool(
        tool("test_input_required_result_capabilities", "Asks only for what this request's client can answer"),
        |cx, _args| async move {
            // Elicitation first; when the request's capabilities do not allow it, sampling
            let elicited = cx.ask(requests(vec![("user_name", elicit("What is your name?", name_schema()))])).await;
            match elicited {
                Ok(_) => Ok(CallToolResult::text("Answered by elicitation")),
                Err(AskFailure::Ask(_)) => {
                    let answers = ask(&cx, requests(vec![("sample", sample("Say hello", 20))])).await?;
                    Ok(CallToolResult::text(format!("Answered by sampling: {}", sampled_text(&answers["sample"]))))
                }
                Err(e) => Err(e.to_error()),
            }
        },
    )
}

/// The tasks extension (SEP-2663) fixtures
fn task_tools(b: ServerBuilder) -> Built {
    b.tool(
        Tool::new("greet", object(json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})))
            .with_description("Greets `name` at once"),
        |_cx, args| async move { Ok(CallToolResult::text(format!("Hello, {}!", args["name"].as_str().unwrap_or_default()))) },
    )?
    .tool(
        Tool::new("slow_compute", object(json!({"type": "object", "properties": {"seconds": {"type": "number", "minimum": 0}, "label": {"type": "string"}}})))
            .with_description("Sleeps `seconds`, as a task when the client allows it")
            .with_task_support(TaskSupport::Optional),
        |cx, args| async move {
            let seconds = args.get("seconds").and_then(Value::as_f64).unwrap_or(1.0).clamp(0.0, 600.0);
            let label = args.get("label").and_then(Value::as_str).unwrap_or("job").to_owned();
            if cx.task_offered() {
                cx.run_as_task(TaskOptions::default()).await.map_err(|e| e.to_error())?;
            }
            sleep(Duration::from_secs_f64(seconds)).await;
            Ok(CallToolResult::text(format!("{label} done after {seconds} s")))
        },
    )?
    .tool(
        tool("failing_job", "Runs as a task for about a second, then fails with a tool error")
            .with_task_support(TaskSupport::Required),
        |cx, _args| async move {
            cx.run_as_task(TaskOptions::default()).await.map_err(|e| e.to_error())?;
            sleep(Duration::from_secs(1)).await;
            Ok(CallToolResult::error("failing_job failed, as it always does"))
        },
    )?
    .tool(
        tool("protocol_error_job", "Runs as a task that ends with a protocol error")
            .with_task_support(TaskSupport::Optional),
        |cx, _args| async move {
            if cx.task_offered() {
                cx.run_as_task(TaskOptions::default()).await.map_err(|e| e.to_error())?;
            }
            sleep(Duration::from_millis(300)).await;
            Err(ErrorObject::internal_error("protocol_error_job failed, as it always does"))
        },
    )?
    .tool(
        Tool::new("confirm_delete", object(json!({"type": "object", "properties": {"filename": {"type": "string"}}})))
            .with_description("Asks for a confirmation before (pretending to) delete `filename`")
            .with_task_support(TaskSupport::Optional),
        |cx, args| async move {
            let filename = args.get("filename").and_then(Value::as_str).unwrap_or("file").to_owned();
            if cx.task_offered() {
                cx.run_as_task(TaskOptions::default()).await.map_err(|e| e.to_error())?;
            }
            let schema = json!({"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]});
            let answers = ask(&cx, requests(vec![("confirm", elicit(&format!("Delete {filename}?"), schema))])).await?;
            let yes = answers["confirm"]["content"]["confirm"] == true;
            Ok(CallToolResult::text(if yes { format!("Deleted {filename}") } else { format!("Kept {filename}") }))
        },
    )?
    .tool(
        tool("multi_input", "Asks two questions at once").with_task_support(TaskSupport::Optional),
        |cx, _args| async move {
            if cx.task_offered() {
                cx.run_as_task(TaskOptions::default()).await.map_err(|e| e.to_error())?;
            }
            let color = json!({"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]});
            let answers = ask(&cx, requests(vec![
                ("name", elicit("What is your name?", name_schema())),
                ("color", elicit("What is your favorite color?", color)),
            ]))
            .await?;
            Ok(CallToolResult::text(format!("{} / {}", answers["name"]["content"], answers["color"]["content"])))
        },
    )?
    .tool(
        tool("test_tool_with_task", "Asks a name synchronously, then greets as a task")
            .with_task_support(TaskSupport::Required),
        |cx, _args| async move {
            let answers = ask(&cx, requests(vec![("user_name", elicit("What is your name?", name_schema()))])).await?;
            let name = answers["user_name"]["content"]["name"].as_str().unwrap_or("someone").to_owned();
            cx.run_as_task(TaskOptions::default()).await.map_err(|e| e.to_error())?;
            Ok(CallToolResult::text(format!("Hello, {name}!")))
        },
    )
}

fn resources(b: ServerBuilder) -> Built {
    b.resource(
        Resource::new("test://static-binary", "static-binary")
            .with_description("A 1x1 PNG")
            .with_mime_type("image/png"),
        |_cx, uri, _vars| async move {
            Ok(ReadResourceResult::new(vec![
                ResourceContents::blob(uri, PNG).with_mime_type("image/png"),
            ]))
        },
    )?
    .resource(
        Resource::new("test://watched-resource", "watched-resource")
            .with_description("The target of subscribe and unsubscribe")
            .with_mime_type("text/plain"),
        |_cx, uri, _vars| async move {
            Ok(ReadResourceResult::new(vec![
                ResourceContents::text(uri, "Watched resource content")
                    .with_mime_type("text/plain"),
            ]))
        },
    )
}

fn prompts(b: ServerBuilder) -> Built {
    let user = |content: ContentBlock| PromptMessage::new(Role::User, content);
    b.prompt(
        Prompt::new("test_simple_prompt").with_description("A prompt without arguments"),
        |_cx, _args| async { Ok(GetPromptResult::new(vec![PromptMessage::user("This is a simple prompt for testing.")])) },
    )?
    .prompt(
        Prompt::new("test_prompt_with_arguments")
            .with_description("A prompt with two required arguments")
            .with_arguments(vec![
                PromptArgument::new("arg1").with_description("First argument").required(true),
                PromptArgument::new("arg2").with_description("Second argument").required(true),
            ]),
        |_cx, args: BTreeMap<String, String>| async move {
            let get = |k: &str| args.get(k).cloned().unwrap_or_default();
            let text = format!("Prompt with arguments: arg1='{}', arg2='{}'", get("arg1"), get("arg2"));
            Ok(GetPromptResult::new(vec![PromptMessage::user(text)]))
        },
    )?
    .prompt(
        Prompt::new("test_prompt_with_embedded_resource")
            .with_description("A prompt that embeds the resource it is given (without reading it)")
            .with_arguments(vec![PromptArgument::new("resourceUri").with_description("The URI to embed").required(true)]),
        move |_cx, args: BTreeMap<String, String>| async move {
            let uri = args.get("resourceUri").cloned().unwrap_or_default();
            let resource = ResourceContents::text(uri, "Embedded resource content for testing.").with_mime_type("text/plain");
            Ok(GetPromptResult::new(vec![
                user(ContentBlock::resource(resource)),
                PromptMessage::user("Please process the embedded resource above."),
            ]))
        },
    )?
    .prompt(
        Prompt::new("test_prompt_with_image").with_description("A prompt with an image"),
        move |_cx, _args| async move {
            Ok(GetPromptResult::new(vec![
                user(ContentBlock::image(PNG, "image/png")),
                PromptMessage::user("Please analyze the image above."),
            ]))
        },
    )?
    .prompt(
        Prompt::new("test_input_required_result_prompt").with_description("Asks for context before building its messages"),
        |cx, _args| async move {
            let schema = json!({"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]});
            let answers = ask(&cx, requests(vec![("user_context", elicit("What context should the prompt use?", schema))])).await?;
            let context = answers["user_context"]["content"]["context"].as_str().unwrap_or_default().to_owned();
            Ok(GetPromptResult::new(vec![PromptMessage::user(format!("Use the following context: {context}"))]))
        },
    )
}
