//! A task-backed tool call that needs two rounds of input, run with the same server handler
//! code on a modern (2026-07-28, tasks extension) and a legacy (2025-11-25 tasks) session

use crate::common;

use mcp_sansio::testing::Side;
use std::collections::BTreeMap;
use std::time::Duration;

use common::{origin, raw};
use mcp_sansio::schema::{InputRequest, InputRequests, InputResponse};
use mcp_sansio::testing::Pair;
use mcp_sansio::{
    ClientEvent, EraMode, ProtocolVersion, RequestOptions, ServerConfig, ServerEvent, TaskId,
    TaskOptions, TaskUpdate,
};
use serde_json::{Value, json};

fn server_config() -> ServerConfig {
    let mut s = Pair::server_config();
    s.capabilities["extensions"] = json!({"io.modelcontextprotocol/tasks": {}});
    s.capabilities["tasks"] =
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}});
    s.task_id_seed = 0xfeed;
    s
}

fn ask(key: &str, request: Value) -> InputRequests {
    let mut map = BTreeMap::new();
    map.insert(
        key.to_owned(),
        serde_json::from_value::<InputRequest>(request).unwrap(),
    );
    map
}

fn name_request() -> InputRequests {
    ask(
        "name",
        json!({"method": "elicitation/create", "params": {
        "message": "Name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}}),
    )
}

fn summary_request() -> InputRequests {
    ask(
        "summary",
        json!({"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Summarize"}}],
        "maxTokens": 20}}),
    )
}

/// The server's handler, written once for both eras: start a task, ask for a name, then for
/// a summary, then complete with both
#[derive(Default)]
struct Handler {
    task: Option<TaskId>,
    name: Option<String>,
}

impl Handler {
    fn on_event(&mut self, pair: &mut Pair, event: ServerEvent) {
        let now = pair.now;
        match event {
            ServerEvent::Request(request) => {
                assert!(request.task_offered, "the client offered a task");
                let options = TaskOptions::default().poll_interval(Duration::from_millis(200));
                let task = pair
                    .server
                    .inbound(request.responder.id())
                    .start_task(now, options)
                    .unwrap();
                pair.server
                    .update_task(now, task, TaskUpdate::InputRequired(name_request()))
                    .unwrap();
                self.task = Some(task);
            }
            ServerEvent::TaskInput { task, responses } => {
                assert_eq!(Some(task), self.task);
                match (&self.name, responses.get("name"), responses.get("summary")) {
                    (None, Some(InputResponse::Elicit(r)), _) => {
                        let v = serde_json::to_value(r).unwrap();
                        self.name = Some(v["content"]["name"].as_str().unwrap().to_owned());
                        pair.server
                            .update_task(now, task, TaskUpdate::InputRequired(summary_request()))
                            .unwrap();
                    }
                    (Some(name), _, Some(InputResponse::CreateMessage(r))) => {
                        let v = serde_json::to_value(r).unwrap();
                        let text = format!("{name}: {}", v["content"]["text"].as_str().unwrap());
                        let result = raw(json!({"content": [{"type": "text", "text": text}]}));
                        pair.server
                            .update_task(now, task, TaskUpdate::Completed(result))
                            .unwrap();
                    }
                    other => panic!("unexpected input {other:?}"),
                }
            }
            other => panic!("server: {other:?}"),
        }
    }
}

/// The client's side: answers like a user and a model
fn answer(requests: &InputRequests) -> mcp_sansio::schema::InputResponses {
    requests
        .iter()
        .map(|(key, request)| {
            let v = match request {
                InputRequest::Elicit(_) => json!({"action": "accept", "content": {"name": "Ada"}}),
                _ => json!({"role": "assistant", "content": {"type": "text", "text": "short"},
                            "model": "m"}),
            };
            (key.clone(), serde_json::from_value(v).unwrap())
        })
        .collect()
}

fn run(era: EraMode) -> (Value, Vec<(Side, String)>, usize) {
    let mut client = Pair::client_config(era);
    client.capabilities["extensions"] = json!({"io.modelcontextprotocol/tasks": {}});
    let mut pair = Pair::new(origin(), client, server_config());
    pair.drive();
    pair.client_events();
    pair.server_events();
    let options = match era {
        EraMode::Legacy(_) => RequestOptions::default().as_task(Some(Duration::from_secs(60))),
        _ => RequestOptions::default(),
    };
    let call = pair
        .client
        .send_request_raw(
            pair.now,
            "tools/call",
            Some(raw(json!({"name": "greet"}))),
            options,
        )
        .unwrap();
    let mut handler = Handler::default();
    let mut statuses = 0;
    for _ in 0..100 {
        pair.drive();
        for event in pair.server_events() {
            handler.on_event(&mut pair, event);
        }
        pair.drive();
        for event in pair.client_events() {
            match event {
                ClientEvent::InputRequired { id, requests } => {
                    pair.client
                        .provide_input(pair.now, id, answer(&requests))
                        .unwrap();
                }
                ClientEvent::TaskStatus { id, .. } => {
                    assert_eq!(id, call);
                    statuses += 1;
                }
                ClientEvent::Response { id, outcome } => {
                    assert_eq!(id, call);
                    let result = serde_json::from_str(outcome.unwrap().get()).unwrap();
                    return (result, pair.take_transcript(), statuses);
                }
                other => panic!("client: {other:?}"),
            }
        }
        pair.advance(Duration::from_millis(200));
    }
    panic!("the task never finished");
}

#[test]
fn a_task_with_two_rounds_of_input_runs_the_same_handler_in_both_eras() {
    for era in [
        EraMode::Modern,
        EraMode::Legacy(ProtocolVersion::V2025_11_25),
    ] {
        let (result, transcript, statuses) = run(era);
        assert_eq!(result["content"][0]["text"], "Ada: short", "{era:?}");
        assert!(
            statuses >= 3,
            "working, input_required, ..., completed: {statuses}"
        );
        let client_methods: Vec<String> = transcript
            .iter()
            .filter(|(s, _)| *s == Side::Client)
            .filter_map(|(_, l)| serde_json::from_str::<Value>(l).ok())
            .filter_map(|m| m["method"].as_str().map(str::to_owned))
            .collect();
        let server_methods: Vec<String> = transcript
            .iter()
            .filter(|(s, _)| *s == Side::Server)
            .filter_map(|(_, l)| serde_json::from_str::<Value>(l).ok())
            .filter_map(|m| m["method"].as_str().map(str::to_owned))
            .collect();
        assert_eq!(
            client_methods.iter().filter(|m| *m == "tools/call").count(),
            1
        );
        assert!(client_methods.iter().any(|m| m == "tasks/get"));
        if era == EraMode::Modern {
            // Input goes through tasks/get and tasks/update; no live requests, no tasks/result.
            assert_eq!(
                client_methods
                    .iter()
                    .filter(|m| *m == "tasks/update")
                    .count(),
                2
            );
            assert!(!client_methods.iter().any(|m| m == "tasks/result"));
            assert!(!server_methods.iter().any(|m| m == "elicitation/create"));
        } else {
            // Input goes as live requests related to the task; the result via tasks/result.
            assert!(server_methods.iter().any(|m| m == "elicitation/create"));
            assert!(server_methods.iter().any(|m| m == "sampling/createMessage"));
            assert!(client_methods.iter().any(|m| m == "tasks/result"));
            assert!(!client_methods.iter().any(|m| m == "tasks/update"));
            let elicit = transcript
                .iter()
                .find(|(s, l)| *s == Side::Server && l.contains("elicitation/create"))
                .unwrap();
            assert!(
                elicit.1.contains("io.modelcontextprotocol/related-task"),
                "{}",
                elicit.1
            );
        }
    }
}

/// 2025-11-25 tasks run both ways: a server's sampling request runs as a task on the client,
/// and the server follows it like one slow call
#[test]
fn a_server_sampling_request_runs_as_a_task_on_the_client() {
    let mut client = Pair::client_config(EraMode::Legacy(ProtocolVersion::V2025_11_25));
    client.capabilities["tasks"] =
        json!({"list": {}, "cancel": {}, "requests": {"sampling": {"createMessage": {}}}});
    client.task_id_seed = 0xc1;
    let mut pair = Pair::new(origin(), client, server_config());
    pair.drive();
    pair.client_events();
    pair.server_events();
    let params = raw(json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "Summarize"}}],
        "maxTokens": 20
    }));
    let sampling = pair
        .server
        .send_request_raw(
            pair.now,
            "sampling/createMessage",
            Some(params),
            RequestOptions::default().as_task(Some(Duration::from_secs(60))),
        )
        .unwrap();
    pair.drive();
    let Some(ClientEvent::InputRequired { id, .. }) = pair.client_events().pop() else {
        panic!("the client sees the sampling request")
    };
    assert!(matches!(id, mcp_sansio::InputId::Live(_)));
    assert!(pair.client.input_task_offered(id));
    let task = pair
        .client
        .start_input_task(
            pair.now,
            id,
            TaskOptions::default().poll_interval(Duration::from_millis(100)),
        )
        .unwrap();
    pair.drive();
    // The server follows the task: status events, polls, no response yet.
    let events = pair.server_events();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, ServerEvent::TaskStatus { id, .. } if *id == sampling)),
        "{events:?}"
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, ServerEvent::Response { .. }))
    );
    pair.advance(Duration::from_millis(250));
    assert!(
        pair.transcript()
            .iter()
            .any(|(s, l)| *s == Side::Server && l.contains("\"tasks/get\""))
    );
    let result = raw(
        json!({"role": "assistant", "content": {"type": "text", "text": "short"}, "model": "m"}),
    );
    pair.client
        .update_task(pair.now, task, TaskUpdate::Completed(result))
        .unwrap();
    let mut done = None;
    for _ in 0..10 {
        pair.advance(Duration::from_millis(100));
        for e in pair.server_events() {
            if let ServerEvent::Response { id, outcome } = e {
                assert_eq!(id, sampling);
                done = Some(outcome);
            }
        }
        if done.is_some() {
            break;
        }
    }
    let result: Value = serde_json::from_str(done.expect("the call ended").unwrap().get()).unwrap();
    assert_eq!(result["content"]["text"], "short");
    assert!(
        pair.transcript()
            .iter()
            .any(|(s, l)| *s == Side::Server && l.contains("\"tasks/result\""))
    );
}

#[test]
fn a_client_task_cannot_ask_the_server_for_input_and_bad_results_change_nothing() {
    let mut client = Pair::client_config(EraMode::Legacy(ProtocolVersion::V2025_11_25));
    client.capabilities["tasks"] = json!({"requests": {"elicitation": {"create": {}}}});
    let mut pair = Pair::new(origin(), client, server_config());
    pair.drive();
    pair.client_events();
    pair.server_events();
    let params =
        raw(json!({"message": "Name?", "requestedSchema": {"type": "object", "properties": {}}}));
    pair.server
        .send_request_raw(
            pair.now,
            "elicitation/create",
            Some(params),
            RequestOptions::default().as_task(None),
        )
        .unwrap();
    pair.drive();
    let Some(ClientEvent::InputRequired { id, .. }) = pair.client_events().pop() else {
        panic!()
    };
    let task = pair
        .client
        .start_input_task(pair.now, id, TaskOptions::default())
        .unwrap();
    pair.drive();
    let sent = pair.transcript().len();
    assert_eq!(
        pair.client
            .update_task(pair.now, task, TaskUpdate::InputRequired(name_request())),
        Err(mcp_sansio::TaskError::InputNotAllowed)
    );
    assert_eq!(
        pair.client
            .update_task(pair.now, task, TaskUpdate::Completed(raw(json!([1])))),
        Err(mcp_sansio::TaskError::ResultNotAnObject)
    );
    pair.drive();
    assert_eq!(pair.transcript().len(), sent, "nothing was sent");
    assert_eq!(
        pair.client.task_status(task),
        Some(mcp_sansio::schema::TaskStatus::Working)
    );
}

#[test]
fn a_new_input_round_after_working_is_announced_again() {
    let mut client = Pair::client_config(EraMode::Modern);
    client.capabilities["extensions"] = json!({"io.modelcontextprotocol/tasks": {}});
    let mut pair = Pair::new(origin(), client, server_config());
    pair.drive();
    pair.client_events();
    pair.client
        .send_request_raw(
            pair.now,
            "tools/call",
            Some(raw(json!({"name": "greet"}))),
            RequestOptions::default(),
        )
        .unwrap();
    pair.drive();
    let Some(ServerEvent::Request(r)) = pair.server_events().pop() else {
        panic!()
    };
    let options = TaskOptions::default().poll_interval(Duration::from_millis(100));
    let task = pair
        .server
        .inbound(r.responder.id())
        .start_task(pair.now, options)
        .unwrap();
    pair.server
        .update_task(pair.now, task, TaskUpdate::InputRequired(name_request()))
        .unwrap();
    let mut prompts = Vec::new();
    let mut step = |pair: &mut Pair| {
        pair.advance(Duration::from_millis(100));
        for e in pair.client_events() {
            if let ClientEvent::InputRequired { requests, .. } = e {
                prompts.push(requests.keys().cloned().collect::<Vec<_>>());
            }
        }
    };
    step(&mut pair); // the task handle arrives
    step(&mut pair); // the first poll sees input_required
    // The handler changes its mind: no input after all, then a different question.
    pair.server
        .update_task(pair.now, task, TaskUpdate::Working(None))
        .unwrap();
    step(&mut pair);
    pair.server
        .update_task(pair.now, task, TaskUpdate::InputRequired(summary_request()))
        .unwrap();
    step(&mut pair);
    assert_eq!(
        prompts,
        [vec!["name".to_owned()], vec!["summary".to_owned()]]
    );
}
