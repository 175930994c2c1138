//! A task is its creator's from every process: three `HttpServer`s sharing a `MemoryStore`,
//! alice's task started on one; through the others bob (and a caller without a principal)
//! get exactly what an id nobody issued gets, for every task method, on both wires, while
//! alice reads, answers, waits for and cancels it from anywhere

use serde_json::{Value, json};

use mcp_sansio::http::Source;
use mcp_sansio::session::TaskUpdate;

use super::http_kit::{one_elicitation, raw};
use super::identity_kit::{Answer, Cluster, MADE_UP, alice, anonymous, bob};

fn name_answer(name: &str) -> Value {
    json!({"name": {"action": "accept", "content": {"name": name}}})
}

fn task_params(method: &str, id: &str) -> Value {
    match method {
        "tasks/update" => json!({"taskId": id, "inputResponses": name_answer("Mallory")}),
        _ => json!({"taskId": id}),
    }
}

/// `source`'s 2026 `method` for `id` through node `i`, asserted to read exactly as an
/// unknown id
fn unknown_through(c: &mut Cluster, i: usize, source: &Source, method: &str, id: &str) {
    let theirs = c.modern(i, source, 31, method, task_params(method, id));
    let unknown = c.modern(i, source, 31, method, task_params(method, MADE_UP));
    assert_eq!(unknown.error_code(), Some(-32602), "{unknown:?}");
    assert!(unknown.error_message().contains("unknown task"));
    assert_eq!(
        theirs.without(id),
        unknown.without(MADE_UP),
        "node {i}: {method} of another's task must read as an unknown id"
    );
}

/// `source`'s 2025-11-25 `method` for `id` on session `sid` of node `i`, asserted to
/// read exactly as an unknown id
fn legacy_unknown_through(
    c: &mut Cluster,
    i: usize,
    source: &Source,
    sid: &str,
    method: &str,
    id: &str,
) {
    let theirs = c.legacy(i, source, sid, 32, method, json!({"taskId": id}));
    let unknown = c.legacy(i, source, sid, 32, method, json!({"taskId": MADE_UP}));
    assert_eq!(unknown.error_code(), Some(-32602), "{unknown:?}");
    assert_eq!(
        theirs.body.to_string().replace(id, "<id>"),
        unknown.body.to_string().replace(MADE_UP, "<id>"),
        "node {i}: 2025 {method} of another's task must read as an unknown id"
    );
    assert_eq!(theirs.status, unknown.status);
}

fn status(answer: &Answer) -> &str {
    answer.body["result"]["status"].as_str().unwrap_or("")
}

#[test]
fn another_principals_task_is_unknown_through_every_process() {
    let mut c = Cluster::new(3, true);
    let id = c.start(0, &alice());
    c.update(0, &id, TaskUpdate::InputRequired(one_elicitation()));
    assert_eq!(c.store.as_ref().unwrap().len(), 1);

    // Through the owner and through the others, on the 2026 wire.
    for i in 0..3 {
        for stranger in [bob(), anonymous()] {
            for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
                unknown_through(&mut c, i, &stranger, method, &id);
            }
        }
    }
    // And on the 2025-11-25 wire, tasks/result too (it would wait for a task it may see).
    for i in 0..3 {
        for stranger in [bob(), anonymous()] {
            let sid = c.initialize(i, &stranger);
            for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
                legacy_unknown_through(&mut c, i, &stranger, &sid, method, &id);
            }
        }
    }
    // Nothing reached the task.
    assert!(c.nodes[0].cancelled.is_empty());
    assert!(c.nodes[0].inputs.is_empty());
    let got = c.modern(2, &alice(), 2, "tasks/get", json!({"taskId": id}));
    assert_eq!(status(&got), "input_required", "{got:?}");
}

#[test]
fn its_creator_uses_the_task_through_every_process() {
    let mut c = Cluster::new(3, true);
    let id = c.start(0, &alice());
    let (_, task) = c.task(0, &id);
    c.update(0, &id, TaskUpdate::InputRequired(one_elicitation()));

    // Read through b, answered through c: the owner gets alice's answer.
    let got = c.modern(1, &alice(), 2, "tasks/get", json!({"taskId": id}));
    assert_eq!(status(&got), "input_required", "{got:?}");
    let ack = c.modern(
        2,
        &alice(),
        3,
        "tasks/update",
        json!({"taskId": id, "inputResponses": name_answer("Ada")}),
    );
    assert_eq!(ack.body["result"]["resultType"], "complete", "{ack:?}");
    assert_eq!(c.nodes[0].inputs.len(), 1);
    assert_eq!(c.nodes[0].inputs[0].0, task);

    // A 2025-11-25 session of alice's on b waits for its result, bob's gets none.
    let sid = c.initialize(1, &alice());
    let waiting = c
        .legacy_raw(1, &alice(), &sid, 4, "tasks/result", json!({"taskId": id}))
        .expect_err("an open exchange");
    assert!(c.answer_of(1, waiting).is_none(), "waits for the end");
    let done = json!({"content": [{"type": "text", "text": "done"}]});
    c.update(0, &id, TaskUpdate::Completed(raw(done)));
    let result = c.answer_of(1, waiting).expect("answered at the end");
    assert_eq!(
        result.body["result"]["content"][0]["text"], "done",
        "{result:?}"
    );
    let bobs = c.initialize(1, &bob());
    legacy_unknown_through(&mut c, 1, &bob(), &bobs, "tasks/result", &id);

    // A second task, cancelled through c by alice.
    let second = c.start(1, &alice());
    let (_, second_task) = c.task(1, &second);
    unknown_through(&mut c, 2, &bob(), "tasks/cancel", &second);
    assert!(c.nodes[1].cancelled.is_empty());
    let ack = c.modern(2, &alice(), 5, "tasks/cancel", json!({"taskId": second}));
    assert_eq!(ack.body["result"]["resultType"], "complete", "{ack:?}");
    assert_eq!(c.nodes[1].cancelled, vec![second_task]);
    let got = c.modern(0, &alice(), 6, "tasks/get", json!({"taskId": second}));
    assert_eq!(status(&got), "cancelled", "{got:?}");
}

#[test]
fn a_task_without_a_principal_is_nobodys_else_across_processes() {
    let mut c = Cluster::new(2, true);
    let anonymous_task = c.start(0, &anonymous());
    let alices = c.start(0, &alice());
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        unknown_through(&mut c, 1, &alice(), method, &anonymous_task);
        unknown_through(&mut c, 1, &anonymous(), method, &alices);
    }
    let got = c.modern(
        1,
        &anonymous(),
        2,
        "tasks/get",
        json!({"taskId": anonymous_task}),
    );
    assert_eq!(status(&got), "working", "{got:?}");
    assert!(c.nodes[0].cancelled.is_empty());
}

/// Found while writing these tests: on the process that runs alice's task, bob's request
/// for it was answered at once from the local table, while one for an unknown id waits for
/// the store; the wait told bob the task runs there. Both now wait for the store.
#[test]
fn another_principals_task_waits_for_the_store_like_an_unknown_id() {
    let mut c = Cluster::new(2, true);
    let id = c.start(0, &alice());
    c.store_held = true;
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let theirs = c
            .modern_raw(0, &bob(), 33, method, task_params(method, &id))
            .expect_err("an open exchange");
        let unknown = c
            .modern_raw(0, &bob(), 33, method, task_params(method, MADE_UP))
            .expect_err("an open exchange");
        assert!(c.answer_of(0, unknown).is_none(), "an unknown id waits");
        assert!(
            c.answer_of(0, theirs).is_none(),
            "{method} of another's task waits too"
        );
        c.store_held = false;
        c.pump();
        let (theirs, unknown) = (c.answer_of(0, theirs), c.answer_of(0, unknown));
        let (theirs, unknown) = (theirs.unwrap(), unknown.unwrap());
        assert_eq!(unknown.error_code(), Some(-32602));
        assert_eq!(theirs.without(&id), unknown.without(MADE_UP));
        c.store_held = true;
    }
    // Its creator is answered from the table, without the store.
    let got = c.modern(0, &alice(), 34, "tasks/get", json!({"taskId": id}));
    assert_eq!(status(&got), "working", "{got:?}");
    assert!(c.nodes[0].cancelled.is_empty());
}
