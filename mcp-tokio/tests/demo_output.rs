//! The demo example (`examples/demo.rs`) shows answers as a person reads them: its formatting
//! (`examples/demo/show.rs`, compiled in here) on every content kind, resource contents,
//! prompt messages, `isError` results and JSON-RPC errors, built by hand and as our server
//! sends them over a duplex; and the demo prints no `Debug` dump

#[path = "../examples/demo/show.rs"]
#[allow(dead_code)] // the demo uses all of it; these tests some
mod show;

use mcp_sansio::schema::{
    CallToolResult, ContentBlock, PromptMessage, ReadResourceResult, Resource, ResourceContents,
    Role, Tool,
};
use mcp_sansio::{CallError, ClientConfig, ErrorObject, Implementation, ServerConfig};
use mcp_sansio_tokio::{Client, ClientError, Server};
use serde_json::{Map, json};

/// What a `Debug` dump of the protocol types would show
const DEBUG_MARKS: [&str; 6] = [
    "String(",
    "TextContent {",
    "CallToolResult {",
    "Text(",
    "Some(",
    "extra: {",
];

fn assert_readable(shown: &str) {
    for mark in DEBUG_MARKS {
        assert!(!shown.contains(mark), "{mark:?} in {shown:?}");
    }
}

/// 12 bytes of base64: "aGVsbG8gd29ybGQh" is "hello world!"
const TWELVE_BYTES: &str = "aGVsbG8gd29ybGQh";

fn every_kind() -> CallToolResult {
    let mut link = Resource::new("file:///notes.md", "notes");
    link.mime_type = Some("text/markdown".into());
    let mut result = CallToolResult::new(vec![
        ContentBlock::text("Hello from a tool"),
        ContentBlock::image(TWELVE_BYTES, "image/png"),
        ContentBlock::audio("AAA=", "audio/wav"),
        ContentBlock::resource_link(link),
        ContentBlock::resource(
            ResourceContents::text("file:///a.txt", "inside a").with_mime_type("text/plain"),
        ),
        ContentBlock::resource(ResourceContents::blob("file:///b.bin", TWELVE_BYTES)),
    ]);
    result.structured_content = Some(json!({"temperature": 21, "unit": "C"}));
    result
}

#[test]
fn every_content_kind_reads_as_a_line() {
    let shown = show::tool_result(&every_kind());
    assert_eq!(
        shown.lines().collect::<Vec<_>>(),
        [
            "Hello from a tool",
            "<image, image/png, 12 bytes>",
            "<audio, audio/wav, 2 bytes>",
            "<link to file:///notes.md, text/markdown>",
            "<resource file:///a.txt, text/plain>: inside a",
            "<resource file:///b.bin>: <blob, 12 bytes, no MIME type>",
            r#"structured: {"temperature":21,"unit":"C"}"#,
        ]
    );
    assert_readable(&shown);
}

#[test]
fn structured_content_repeated_as_text_is_shown_once() {
    let result = CallToolResult::structured(json!({"a": 1}));
    assert_eq!(show::tool_result(&result), r#"{"a":1}"#);
}

#[test]
fn long_text_and_json_are_cut() {
    let long = "é".repeat(1000);
    let shown = show::text(&long);
    assert!(shown.starts_with(&"é".repeat(show::TEXT_LIMIT)));
    assert!(shown.ends_with("… (700 more characters)"), "{shown}");

    let mut result = CallToolResult::new(Vec::new());
    result.structured_content = Some(json!({"items": vec!["x"; 200]}));
    let shown = show::tool_result(&result);
    assert!(shown.starts_with(r#"structured: {"items":["x","x","#));
    assert!(shown.ends_with(" more characters)"), "{shown}");
    assert!(shown.chars().count() < show::JSON_LIMIT + 50);

    assert_eq!(show::clip("a short line", 72), "a short line");
    assert_eq!(show::clip("cut this line here", 8), "cut this…");
}

#[test]
fn errors_read_as_errors() {
    assert_eq!(
        show::tool_result(&CallToolResult::error("the disk is full")),
        "error: the disk is full"
    );
    let mut empty = CallToolResult::new(Vec::new());
    empty.is_error = Some(true);
    assert_eq!(show::tool_result(&empty), "error: (no content)");
    let remote = ClientError::Call(CallError::Remote(ErrorObject::new(
        -32602,
        "Unknown tool: x",
    )));
    assert_eq!(show::error(&remote), "error -32602: Unknown tool: x");
    assert_eq!(
        show::error(&ClientError::Call(CallError::TimedOut)),
        "error: the request timed out"
    );
    assert_eq!(
        show::outcome(&Err(ClientError::Closed)),
        "error: the connection is closed"
    );
}

#[test]
fn resource_contents_and_prompt_messages() {
    assert_eq!(
        show::resource_contents(&ResourceContents::text("test://a", "Hello")),
        "Hello"
    );
    assert_eq!(
        show::resource_contents(
            &ResourceContents::blob("test://b", TWELVE_BYTES).with_mime_type("image/png")
        ),
        "<blob, 12 bytes, image/png>"
    );
    assert_eq!(
        show::prompt_message(&PromptMessage::user("Say hello to Ada.")),
        "user: Say hello to Ada."
    );
    assert_eq!(
        show::prompt_message(&PromptMessage::new(
            Role::Assistant,
            ContentBlock::image(TWELVE_BYTES, "image/gif")
        )),
        "assistant: <image, image/gif, 12 bytes>"
    );
    assert_eq!(show::base64_len("AA=="), 1);
    assert_eq!(show::base64_len("AAA="), 2);
    assert_eq!(show::base64_len("AAAA\nAAAA"), 6);
}

fn server() -> Server {
    let schema = json!({"type": "object"}).as_object().cloned().unwrap();
    Server::builder(ServerConfig::new(Implementation::new("show-test", "1.0")))
        .tool(Tool::new("kinds", schema.clone()), |_cx, _args| async {
            Ok(every_kind())
        })
        .unwrap()
        .tool(Tool::new("fails", schema), |_cx, _args| async {
            Ok(CallToolResult::error("it went wrong"))
        })
        .unwrap()
        .resource(
            Resource::new("test://blob", "blob"),
            |_cx, uri, _vars| async move {
                Ok(ReadResourceResult::new(vec![
                    ResourceContents::blob(uri, TWELVE_BYTES).with_mime_type("image/png"),
                ]))
            },
        )
        .unwrap()
        .build()
}

#[tokio::test]
async fn our_servers_answers_read_as_text() {
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    let server = server();
    tokio::spawn(async move {
        let (r, w) = tokio::io::split(server_io);
        server.serve(r, w).await;
    });
    let (r, w) = tokio::io::split(client_io);
    let config = ClientConfig::new(Implementation::new("show-test-client", "1.0"));
    let client = Client::connect(r, w, config).await.unwrap();

    let kinds = show::outcome(&client.call_tool("kinds", Map::new()).await);
    assert_eq!(kinds, show::tool_result(&every_kind()));
    assert_readable(&kinds);

    let fails = show::outcome(&client.call_tool("fails", Map::new()).await);
    assert_eq!(fails, "error: it went wrong");

    // An unknown tool: our server answers with a JSON-RPC error
    let unknown = show::outcome(&client.call_tool("no-such-tool", Map::new()).await);
    assert_eq!(unknown, "error -32602: Unknown tool: no-such-tool");

    let read = client.read_resource("test://blob").await.unwrap();
    let blob = show::resource_contents(&read.contents[0]);
    assert_eq!(blob, "<blob, 12 bytes, image/png>");
    client.close().await;
}

/// The complaint this guards against: `→ String("Hello ..")` and whole `CallToolResult { .. }`
/// dumps in the demo's output
#[test]
fn the_demo_prints_no_debug_dumps() {
    for (file, source) in [
        ("examples/demo.rs", include_str!("../examples/demo.rs")),
        (
            "examples/demo/show.rs",
            include_str!("../examples/demo/show.rs"),
        ),
    ] {
        for (n, line) in source.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            assert!(
                !line.contains(":?}") && !line.contains(":#?}"),
                "{file}:{}: a Debug format in the demo: {line}",
                n + 1
            );
        }
    }
}
