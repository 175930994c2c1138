//! Input during a request, era-agnostic for the application: one handler asks with
//! `ask_input`; the core turns it into MRTR (`input_required`, sealed `requestState`, a retry
//! under a new id) on modern sessions and into live requests on legacy ones; the client sees
//! `ClientEvent::InputRequired` in both and answers with `provide_input`

use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::origin;
use mcp_sansio::schema::{InputRequest, InputRequests, InputResponse, InputResponses};
use mcp_sansio::testing::{Pair, Side};
use mcp_sansio::{
    AskError, Asked, CallError, ClientEvent, EraMode, InputError, InputId, ProtocolVersion,
    RequestOptions, Responder, ServerConfig, ServerEvent, ServerSession, jsonrpc,
};
use serde_json::{Value, json};

const KEY: [u8; 32] = [42; 32];

fn server_config() -> ServerConfig {
    let mut s = Pair::server_config();
    s.state_key = Some(KEY);
    s
}

fn pair(era: EraMode) -> Pair {
    let mut pair = Pair::new(origin(), Pair::client_config(era), server_config());
    pair.drive();
    assert!(matches!(
        pair.client_events().as_slice(),
        [ClientEvent::Ready { .. }]
    ));
    pair.server_events();
    pair
}

fn elicit_name() -> InputRequest {
    serde_json::from_value(json!({"method": "elicitation/create", "params": {
        "message": "What is your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}},
                            "required": ["name"]}
    }}))
    .unwrap()
}

fn sample_summary() -> InputRequest {
    serde_json::from_value(json!({"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Summarize"}}],
        "maxTokens": 50
    }}))
    .unwrap()
}

fn one(key: &str, request: InputRequest) -> InputRequests {
    let mut map = BTreeMap::new();
    map.insert(key.to_owned(), request);
    map
}

/// The client's side: answer every input request like a user and a model would
fn answer(requests: &InputRequests) -> InputResponses {
    requests
        .iter()
        .map(|(key, request)| {
            let response = match request {
                InputRequest::Elicit(_) => json!({"action": "accept", "content": {"name": "Ada"}}),
                InputRequest::CreateMessage(_) => json!({
                    "role": "assistant", "content": {"type": "text", "text": "a summary"},
                    "model": "test-model"
                }),
                _ => json!({"roots": []}),
            };
            (
                key.clone(),
                serde_json::from_value::<InputResponse>(response).unwrap(),
            )
        })
        .collect()
}

/// One handler, written once: it needs a name (elicitation) and then a summary (sampling),
/// and answers with both. It runs again for every event that may move it on.
struct Handler {
    known: InputResponses,
}

impl Handler {
    /// Runs the handler for `responder`; returns it back when the handler waits for live
    /// answers (legacy), `None` when the request ended (answered or suspended)
    fn run(
        &mut self,
        s: &mut ServerSession,
        now: std::time::Instant,
        responder: Responder,
    ) -> Option<Responder> {
        for (key, request) in [("name", elicit_name()), ("summary", sample_summary())] {
            if self.known.contains_key(key) {
                continue;
            }
            match s
                .inbound(responder.id())
                .ask_input(now, one(key, request))
                .unwrap()
            {
                Asked::Answered(answers) => self.known.extend(answers),
                Asked::Sent => return Some(responder),
                Asked::Suspended => return None,
                _ => unreachable!(),
            }
        }
        let name = match &self.known["name"] {
            InputResponse::Elicit(r) => serde_json::to_value(r).unwrap()["content"]["name"].clone(),
            other => panic!("{other:?}"),
        };
        let summary = match &self.known["summary"] {
            InputResponse::CreateMessage(r) => {
                serde_json::to_value(r).unwrap()["content"]["text"].clone()
            }
            other => panic!("{other:?}"),
        };
        let result = json!({"content": [{"type": "text", "text": format!("{name}: {summary}")}]});
        let raw = serde_json::value::RawValue::from_string(result.to_string()).unwrap();
        s.respond_raw(responder, &raw).unwrap();
        None
    }
}

/// Runs a `tools/call` that needs two inputs to its end, with the same handler code in any
/// era; returns the final outcome and the transcript
fn run_two_rounds(era: EraMode) -> (Result<Value, CallError>, Vec<(Side, String)>) {
    let mut pair = pair(era);
    let raw = serde_json::value::RawValue::from_string(r#"{"name":"greet"}"#.into()).unwrap();
    let call = pair
        .client
        .send_request_raw(pair.now, "tools/call", Some(raw), RequestOptions::default())
        .unwrap();
    let mut held: Option<Responder> = None;
    // Legacy: one handler state per request; modern: every retry starts from scratch (the
    // answers come back with it), which is how a stateless server works.
    let mut legacy_state = Handler {
        known: InputResponses::new(),
    };
    for _ in 0..20 {
        pair.drive();
        let now = pair.now;
        for event in pair.server_events() {
            match event {
                ServerEvent::Request(request) => {
                    let mut handler = Handler {
                        known: InputResponses::new(),
                    };
                    let state = if matches!(era, EraMode::Legacy(_)) {
                        &mut legacy_state
                    } else {
                        &mut handler
                    };
                    held = state.run(&mut pair.server, now, request.responder);
                }
                ServerEvent::InputAnswered { key, outcome, .. } => {
                    let response: InputResponse =
                        serde_json::from_str(outcome.unwrap().get()).unwrap();
                    legacy_state.known.insert(key, response);
                    let responder = held.take().expect("a handler waits");
                    held = legacy_state.run(&mut pair.server, now, responder);
                }
                other => panic!("server: {other:?}"),
            }
        }
        pair.drive();
        for event in pair.client_events() {
            match event {
                ClientEvent::InputRequired { id, requests } => {
                    pair.client
                        .provide_input(now, id, answer(&requests))
                        .unwrap();
                }
                ClientEvent::Response { id, outcome } => {
                    assert_eq!(id, call);
                    let outcome = outcome.map(|r| serde_json::from_str::<Value>(r.get()).unwrap());
                    return (outcome, pair.take_transcript());
                }
                other => panic!("client: {other:?}"),
            }
        }
    }
    panic!("the call never ended")
}

fn lines(transcript: &[(Side, String)], side: Side) -> Vec<Value> {
    transcript
        .iter()
        .filter(|(s, _)| *s == side)
        .map(|(_, l)| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn two_rounds_of_input_with_the_same_handler_in_both_eras() {
    for era in [
        EraMode::Modern,
        EraMode::Legacy(ProtocolVersion::V2025_11_25),
        EraMode::Legacy(ProtocolVersion::V2025_06_18),
    ] {
        let (outcome, transcript) = run_two_rounds(era);
        let result = outcome.unwrap();
        assert_eq!(
            result["content"][0]["text"], "\"Ada\": \"a summary\"",
            "{era:?}"
        );
        let client = lines(&transcript, Side::Client);
        let server = lines(&transcript, Side::Server);
        let calls: Vec<&Value> = client
            .iter()
            .filter(|m| m["method"] == "tools/call")
            .collect();
        if era == EraMode::Modern {
            // The original request and two retries, each under a new id, the retries carrying
            // the answers and the server's sealed state.
            assert_eq!(calls.len(), 3, "{client:#?}");
            let ids: std::collections::BTreeSet<_> =
                calls.iter().map(|c| c["id"].to_string()).collect();
            assert_eq!(ids.len(), 3);
            assert!(calls[0]["params"].get("inputResponses").is_none());
            assert!(calls[1]["params"]["inputResponses"]["name"].is_object());
            assert!(calls[2]["params"]["inputResponses"]["summary"].is_object());
            assert!(calls[1]["params"]["requestState"].is_string());
            let required: Vec<_> = server
                .iter()
                .filter(|m| m["result"]["resultType"] == "input_required")
                .collect();
            assert_eq!(required.len(), 2);
            assert!(
                required[0]["result"]["inputRequests"]["name"]["method"] == "elicitation/create"
            );
            assert!(
                required[1]["result"]["inputRequests"]["summary"]["method"]
                    == "sampling/createMessage"
            );
            // No live server-to-client request in the modern era.
            assert!(server.iter().all(|m| {
                m.get("method")
                    .is_none_or(|m| m.as_str().unwrap().starts_with("notifications/"))
            }));
        } else {
            assert_eq!(calls.len(), 1);
            let asked: Vec<_> = server.iter().filter_map(|m| m["method"].as_str()).collect();
            assert_eq!(asked, ["elicitation/create", "sampling/createMessage"]);
            assert!(
                server
                    .iter()
                    .all(|m| m["result"].get("resultType").is_none())
            );
        }
    }
}

/// A raw modern request line
fn modern_call(id: u64, extra: Value) -> String {
    let mut params = json!({
        "name": "greet",
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        }
    });
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    format!(
        "{}\n",
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
    )
}

fn out(s: &mut ServerSession) -> Vec<Value> {
    let mut buf = Vec::new();
    while s.poll_transmit(&mut buf).is_some() {}
    String::from_utf8(buf)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn requests(s: &mut ServerSession) -> Vec<mcp_sansio::InboundRequest> {
    let mut all = Vec::new();
    while let Some(e) = s.poll_event() {
        match e {
            ServerEvent::Request(r) => all.push(r),
            other => panic!("{other:?}"),
        }
    }
    all
}

/// A first round on a raw server: returns the sealed state it issued
fn first_round(s: &mut ServerSession, now: std::time::Instant) -> String {
    s.handle_bytes(now, modern_call(1, json!({})).as_bytes());
    let request = requests(s).pop().unwrap();
    assert_eq!(
        s.inbound(request.responder.id())
            .ask_input(now, one("name", elicit_name())),
        Ok(Asked::Suspended)
    );
    let reply = out(s).pop().unwrap();
    assert_eq!(reply["result"]["resultType"], "input_required");
    reply["result"]["requestState"].as_str().unwrap().to_owned()
}

#[test]
fn tampered_foreign_expired_or_misplaced_state_is_refused() {
    let now = origin();
    let mut config = server_config();
    config.state_ttl = Duration::from_secs(60);
    let config = std::sync::Arc::new(config);
    let mut s = ServerSession::new(config.clone(), now);
    let state = first_round(&mut s, now);
    let answer = json!({"name": {"action": "accept", "content": {"name": "Ada"}}});

    // Unchanged state and an answer: the handler sees the answer.
    s.handle_bytes(
        now,
        modern_call(2, json!({"inputResponses": answer, "requestState": state})).as_bytes(),
    );
    let retry = requests(&mut s).pop().unwrap();
    match s
        .inbound(retry.responder.id())
        .ask_input(now, one("name", elicit_name()))
    {
        Ok(Asked::Answered(a)) => assert!(matches!(a["name"], InputResponse::Elicit(_))),
        other => panic!("{other:?}"),
    }
    s.respond_error(
        retry.responder,
        &jsonrpc::ErrorObject::internal_error("done"),
    );
    out(&mut s);

    let mut tampered = state.clone().into_bytes();
    tampered[3] ^= 1;
    let tampered = String::from_utf8(tampered).unwrap();
    let mut other_key = (*config).clone();
    other_key.state_key = Some([1; 32]);
    let mut foreign = ServerSession::new(std::sync::Arc::new(other_key), now);
    let foreign_state = first_round(&mut foreign, now);
    for (id, bad, why) in [
        (3, tampered.as_str(), "altered"),
        (4, foreign_state.as_str(), "altered"),
        (5, "not-a-state", "malformed"),
    ] {
        s.handle_bytes(
            now,
            modern_call(id, json!({"inputResponses": answer, "requestState": bad})).as_bytes(),
        );
        assert!(requests(&mut s).is_empty());
        let reply = out(&mut s).pop().unwrap();
        assert_eq!(reply["id"], id);
        assert_eq!(reply["error"]["code"], -32602, "{reply}");
        assert!(
            reply["error"]["message"].as_str().unwrap().contains(why),
            "{reply}"
        );
    }

    // The same state for another method is refused.
    let line = modern_call(6, json!({"requestState": state})).replace("tools/call", "prompts/get");
    s.handle_bytes(now, line.as_bytes());
    let reply = out(&mut s).pop().unwrap();
    assert_eq!(reply["error"]["code"], -32602);
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("belongs to tools/call")
    );

    // After its lifetime the state is refused as expired.
    let later = now + Duration::from_secs(61);
    s.handle_bytes(
        later,
        modern_call(7, json!({"inputResponses": answer, "requestState": state})).as_bytes(),
    );
    let reply = out(&mut s).pop().unwrap();
    assert_eq!(reply["error"]["code"], -32602);
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("expired"),
        "{reply}"
    );
}

#[test]
fn input_of_an_undeclared_kind_is_refused_with_32021() {
    let now = origin();
    let mut s = ServerSession::new(std::sync::Arc::new(server_config()), now);
    // This request declares elicitation only.
    s.handle_bytes(now, modern_call(1, json!({})).as_bytes());
    let request = requests(&mut s).pop().unwrap();
    let error = s
        .inbound(request.responder.id())
        .ask_input(now, one("summary", sample_summary()))
        .unwrap_err();
    assert_eq!(
        error,
        AskError::NotDeclared {
            capability: "sampling"
        }
    );
    assert!(
        out(&mut s).is_empty(),
        "nothing was sent for the refused ask"
    );
    let error = error.to_error();
    assert_eq!(
        error.code,
        jsonrpc::code::MISSING_REQUIRED_CLIENT_CAPABILITY
    );
    assert_eq!(
        error.data::<Value>().unwrap().unwrap(),
        json!({"requiredCapabilities": {"sampling": {}}})
    );
    s.respond_error(request.responder, &error);
    assert_eq!(out(&mut s)[0]["error"]["code"], -32021);
}

#[test]
fn only_three_methods_may_take_input_in_the_modern_era_and_a_key_is_needed() {
    let now = origin();
    let mut s = ServerSession::new(std::sync::Arc::new(server_config()), now);
    let line = modern_call(1, json!({})).replace("tools/call", "tools/list");
    s.handle_bytes(now, line.as_bytes());
    let request = requests(&mut s).pop().unwrap();
    assert!(matches!(
        s.inbound(request.responder.id())
            .ask_input(now, one("name", elicit_name())),
        Err(AskError::NotAllowed { .. })
    ));
    let mut keyless = server_config();
    keyless.state_key = None;
    let mut s = ServerSession::new(std::sync::Arc::new(keyless), now);
    s.handle_bytes(now, modern_call(1, json!({})).as_bytes());
    let request = requests(&mut s).pop().unwrap();
    assert_eq!(
        s.inbound(request.responder.id())
            .ask_input(now, one("name", elicit_name())),
        Err(AskError::NoStateKey)
    );
}

#[test]
fn a_runaway_server_hits_the_round_cap() {
    let mut client = Pair::client_config(EraMode::Modern);
    client.max_input_rounds = 3;
    let mut pair = Pair::new(origin(), client, server_config());
    pair.drive();
    pair.client_events();
    let call = pair
        .client
        .send_request_raw(pair.now, "tools/call", None, RequestOptions::default())
        .unwrap();
    let mut rounds = 0;
    for _ in 0..10 {
        pair.drive();
        let now = pair.now;
        for event in pair.server_events() {
            if let ServerEvent::Request(r) = event {
                // Always asks for something new.
                rounds += 1;
                let key = format!("q{rounds}");
                assert_eq!(
                    pair.server
                        .inbound(r.responder.id())
                        .ask_input(now, one(&key, elicit_name())),
                    Ok(Asked::Suspended)
                );
            }
        }
        pair.drive();
        for event in pair.client_events() {
            match event {
                ClientEvent::InputRequired { id, requests } => pair
                    .client
                    .provide_input(now, id, answer(&requests))
                    .unwrap(),
                ClientEvent::Response { id, outcome } => {
                    assert_eq!(id, call);
                    assert_eq!(
                        outcome.unwrap_err(),
                        CallError::TooManyInputRounds { limit: 3 }
                    );
                    assert_eq!(rounds, 4, "the original request and three retries");
                    return;
                }
                other => panic!("{other:?}"),
            }
        }
    }
    panic!("never ended");
}

#[test]
fn cancelling_while_the_user_answers_ends_the_call_and_sends_nothing() {
    let mut pair = pair(EraMode::Modern);
    let call = pair
        .client
        .send_request_raw(pair.now, "tools/call", None, RequestOptions::default())
        .unwrap();
    pair.drive();
    let now = pair.now;
    let Some(ServerEvent::Request(r)) = pair.server_events().pop() else {
        panic!()
    };
    pair.server
        .inbound(r.responder.id())
        .ask_input(now, one("name", elicit_name()))
        .unwrap();
    pair.drive();
    let Some(ClientEvent::InputRequired { id, .. }) = pair.client_events().pop() else {
        panic!()
    };
    assert_eq!(id, InputId::Retry(call));
    let sent = pair.transcript().len();
    pair.client.cancel(now, call, None).unwrap();
    pair.drive();
    assert_eq!(
        pair.transcript().len(),
        sent,
        "no request is in flight at the server"
    );
    assert!(matches!(
        pair.client_events().as_slice(),
        [ClientEvent::Response {
            outcome: Err(CallError::Cancelled),
            ..
        }]
    ));
    assert_eq!(
        pair.client.provide_input(now, id, InputResponses::new()),
        Err(InputError::NotWaiting)
    );
}

#[test]
fn no_timeout_while_the_user_answers_and_it_restarts_with_the_retry() {
    let mut pair = pair(EraMode::Modern);
    let opts = RequestOptions::default().timeout(Duration::from_secs(5));
    let call = pair
        .client
        .send_request_raw(pair.now, "tools/call", None, opts)
        .unwrap();
    pair.drive();
    let Some(ServerEvent::Request(r)) = pair.server_events().pop() else {
        panic!()
    };
    pair.server
        .inbound(r.responder.id())
        .ask_input(pair.now, one("name", elicit_name()))
        .unwrap();
    pair.drive();
    let Some(ClientEvent::InputRequired { id, requests }) = pair.client_events().pop() else {
        panic!()
    };
    assert_eq!(pair.client.poll_timeout(), None);
    pair.advance(Duration::from_secs(60));
    assert!(
        pair.client_events().is_empty(),
        "a person may take a minute"
    );
    pair.client
        .provide_input(pair.now, id, answer(&requests))
        .unwrap();
    pair.drive();
    assert!(matches!(
        pair.server_events().as_slice(),
        [ServerEvent::Request(_)]
    ));
    pair.advance(Duration::from_secs(5));
    match pair.client_events().as_slice() {
        [
            ClientEvent::Response {
                id,
                outcome: Err(CallError::TimedOut),
            },
        ] => assert_eq!(*id, call),
        other => panic!("{other:?}"),
    }
}

#[test]
fn legacy_asks_end_with_their_request() {
    let mut pair = pair(EraMode::Legacy(ProtocolVersion::V2025_11_25));
    let call = pair
        .client
        .send_request_raw(pair.now, "tools/call", None, RequestOptions::default())
        .unwrap();
    pair.drive();
    let now = pair.now;
    let Some(ServerEvent::Request(r)) = pair.server_events().pop() else {
        panic!()
    };
    assert_eq!(
        pair.server
            .inbound(r.responder.id())
            .ask_input(now, one("name", elicit_name())),
        Ok(Asked::Sent)
    );
    pair.drive();
    let Some(ClientEvent::InputRequired { id: live, .. }) = pair.client_events().pop() else {
        panic!()
    };
    assert!(matches!(live, InputId::Live(_)));
    // The client gives up on the tool call: the server withdraws its elicitation.
    pair.client.cancel(now, call, None).unwrap();
    pair.drive();
    let server_lines = lines(pair.transcript(), Side::Server);
    let withdrawn = server_lines.last().unwrap();
    assert_eq!(
        withdrawn["method"], "notifications/cancelled",
        "{withdrawn}"
    );
    let client_events = pair.client_events();
    assert!(
        client_events
            .iter()
            .any(|e| matches!(e, ClientEvent::Cancelled { id, .. } if InputId::Live(*id) == live)),
        "{client_events:?}"
    );
    assert_eq!(
        pair.client
            .provide_input(now, live, answer(&one("name", elicit_name()))),
        Err(InputError::NotWaiting)
    );
}

#[test]
fn a_legacy_ask_that_times_out_is_answered_with_the_timeout() {
    let mut pair = pair(EraMode::Legacy(ProtocolVersion::V2025_11_25));
    pair.client
        .send_request_raw(
            pair.now,
            "tools/call",
            None,
            RequestOptions::default().no_timeout(),
        )
        .unwrap();
    pair.drive();
    let Some(ServerEvent::Request(r)) = pair.server_events().pop() else {
        panic!()
    };
    pair.server
        .inbound(r.responder.id())
        .ask_input(pair.now, one("name", elicit_name()))
        .unwrap();
    pair.drive();
    pair.client_events(); // the user never answers
    pair.advance(Duration::from_secs(60));
    match pair.server_events().as_slice() {
        [
            ServerEvent::InputAnswered {
                request,
                key,
                outcome: Err(CallError::TimedOut),
            },
        ] => {
            assert_eq!(*request, r.responder.id());
            assert_eq!(key, "name");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn only_surfaced_input_requests_take_input() {
    // A custom request from the server is an ordinary request: its id is not an input id.
    let mut client = Pair::client_config(EraMode::Legacy(ProtocolVersion::V2025_11_25));
    client.extra_methods = vec!["acme/ask".into()];
    let mut pair = Pair::new(origin(), client, server_config());
    pair.drive();
    pair.client_events();
    pair.server_events();
    pair.server
        .send_request_raw(pair.now, "acme/ask", None, RequestOptions::default())
        .unwrap();
    pair.drive();
    let Some(ClientEvent::Request(r)) = pair.client_events().pop() else {
        panic!()
    };
    let roots: InputResponses = [(
        "x".to_owned(),
        serde_json::from_value(json!({"roots": []})).unwrap(),
    )]
    .into_iter()
    .collect();
    assert_eq!(
        pair.client
            .provide_input(pair.now, InputId::Live(r.responder.id()), roots),
        Err(InputError::NotWaiting)
    );
    let error = jsonrpc::ErrorObject::internal_error("no");
    assert_eq!(
        pair.client
            .refuse_input(pair.now, InputId::Live(r.responder.id()), &error),
        Err(InputError::NotWaiting)
    );
}

#[test]
fn a_legacy_ask_after_the_client_closed_its_side_fails_at_once() {
    let mut pair = pair(EraMode::Legacy(ProtocolVersion::V2025_11_25));
    pair.client
        .send_request_raw(pair.now, "tools/call", None, RequestOptions::default())
        .unwrap();
    pair.drive();
    let Some(ServerEvent::Request(r)) = pair.server_events().pop() else {
        panic!()
    };
    pair.server.handle_eof(pair.now);
    let sent = pair.transcript().len();
    assert_eq!(
        pair.server
            .inbound(r.responder.id())
            .ask_input(pair.now, one("name", elicit_name())),
        Err(AskError::PeerClosed)
    );
    pair.drive();
    assert_eq!(pair.transcript().len(), sent);
    // The handler can still answer; the session then closes.
    pair.server
        .respond_error(r.responder, &AskError::PeerClosed.to_error());
    pair.drive();
    assert!(pair.server.is_closed());
}
