"""The sans-IO layer, driven by hand on fake times: no event loop, no sockets, no sleeps."""

import json

import pytest

import mcp_sansio as ms

T0 = 1000.0

ADD = {
    "name": "add",
    "description": "Adds",
    "inputSchema": {
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"],
    },
}


def config(**kw):
    return ms.ServerConfig(
        "srv",
        "1.0",
        tools=[ADD, {"name": "ask", "inputSchema": {"type": "object"}}],
        resources=[{"uri": "test://a", "name": "a"}],
        resource_templates=[{"uriTemplate": "test://items/{id}", "name": "item"}],
        prompts=[{"name": "greet", "arguments": [{"name": "who", "required": True}]}],
        completions=True,
        logging=True,
        state_key=b"k" * 32,
        **kw,
    )


class Pair:
    """A client and a server session joined by hand; `step` moves bytes both ways."""

    def __init__(self, era="legacy", now=T0, split=None, **client_kw):
        self.now = now
        self.server = ms.ServerSession(config(), now=now)
        self.client = ms.ClientSession("cli", "1.0", era=era, now=now, **client_kw)
        self.split = split
        self.server_events = []
        self.client_events = []

    def _feed(self, session, data):
        if self.split is None:
            session.receive_data(data, self.now)
        else:
            for i in range(0, len(data), self.split):
                session.receive_data(data[i : i + self.split], self.now)

    def step(self):
        for _ in range(10):
            moved = False
            data = self.client.data_to_send()
            if data:
                moved = True
                self._feed(self.server, data)
            while (e := self.server.next_event()) is not None:
                self.server_events.append(e)
                moved = True
            data = self.server.data_to_send()
            if data:
                moved = True
                self._feed(self.client, data)
            while (e := self.client.next_event()) is not None:
                self.client_events.append(e)
                moved = True
            if not moved:
                return

    def ready(self):
        self.step()
        assert isinstance(self.client_events[0], ms.Ready), self.client_events
        return self.client_events.pop(0)

    def take(self, events, kind):
        found = [e for e in events if isinstance(e, kind)]
        for e in found:
            events.remove(e)
        return found


@pytest.mark.parametrize("era,version", [("legacy", "2025-11-25"), ("modern", "2026-07-28"), ("auto", "2026-07-28"), ("2025-03-26", "2025-03-26")])
@pytest.mark.parametrize("split", [None, 1, 7])
def test_handshake_and_tool_call_every_era_and_chunking(era, version, split):
    p = Pair(era, split=split)
    ready = p.ready()
    assert ready.version == version
    assert ready.peer_info == {"name": "srv", "version": "1.0"}
    assert "tools" in ready.capabilities
    rid = p.client.call_tool("add", {"a": 2, "b": 3.5})
    p.step()
    [call] = p.take(p.server_events, ms.ToolCall)
    match call:
        case ms.ToolCall(name="add", arguments={"a": a, "b": b}):
            assert a + b == 5.5
        case _:
            pytest.fail(f"unexpected {call}")
    assert p.server.respond(call.request_id, {"content": [{"type": "text", "text": "5.5"}]})
    assert not p.server.respond(call.request_id, {"content": []}), "a second answer is a no-op"
    p.step()
    [resp] = p.take(p.client_events, ms.Response)
    assert resp.request_id == rid
    assert resp.result["content"] == [{"type": "text", "text": "5.5"}]


def test_catalog_answers_lists_and_rejects_bad_calls_itself():
    p = Pair()
    p.ready()
    lt = p.client.list_tools()
    bad = p.client.call_tool("add", {"a": "x"})
    unknown = p.client.call_tool("nope", {})
    missing = p.client.read_resource("test://missing")
    prompt_missing_arg = p.client.get_prompt("greet", {})
    p.step()
    assert not any(isinstance(e, ms.ToolCall) for e in p.server_events), "nothing reaches the app"
    by_id = {e.request_id: e for e in p.client_events if hasattr(e, "request_id")}
    assert [t["name"] for t in by_id[lt].result["tools"]] == ["add", "ask"]
    for rid in (unknown, missing, prompt_missing_arg):
        assert isinstance(by_id[rid], ms.RequestFailed)
        assert isinstance(by_id[rid].error, ms.McpError)
    # invalid arguments: a tool error result (isError) or -32602, as the core decides
    r = by_id[bad]
    assert (isinstance(r, ms.Response) and r.result.get("isError")) or r.error.code == -32602


def test_with_catalog_answers_set_the_catalog_answers_come_out_as_events():
    p = Pair()
    p.ready()
    assert p.server.catalog_answers is False
    p.server.catalog_answers = True
    assert p.server.catalog_answers is True
    lt = p.client.list_tools()
    unknown = p.client.call_tool("nope", {"x": 1})
    p.step()
    answers = p.take(p.server_events, ms.CatalogAnswer)
    assert [(a.method, a.params.get("name") if a.params else None) for a in answers] == [
        ("tools/list", None),
        ("tools/call", "nope"),
    ]
    listed, refused = answers
    assert [t["name"] for t in listed.result["tools"]] == ["add", "ask"] and listed.error is None
    assert refused.result is None and isinstance(refused.error, ms.McpError) and refused.error.code == -32602
    assert listed.info.method == "tools/list"
    assert not any(isinstance(e, ms.Response) and e.request_id in (lt, unknown) for e in p.client_events)
    assert p.server.pending_requests == 2
    # The application answers: with the catalog's answer, or one of its own.
    assert p.server.respond(listed.request_id, listed.result)
    assert p.server.respond(refused.request_id, {"content": [{"type": "text", "text": "instead"}]})
    p.step()
    by_id = {e.request_id: e for e in p.client_events if hasattr(e, "request_id")}
    assert [t["name"] for t in by_id[lt].result["tools"]] == ["add", "ask"]
    assert by_id[unknown].result["content"][0]["text"] == "instead"
    # Unset: answered at once again
    p.server.catalog_answers = False
    again = p.client.list_tools()
    p.step()
    assert not p.take(p.server_events, ms.CatalogAnswer)
    assert any(isinstance(e, ms.Response) and e.request_id == again for e in p.client_events)


def test_resources_templates_prompts_and_completion_are_routed():
    p = Pair("modern")
    p.ready()
    p.client.read_resource("test://items/42")
    p.client.get_prompt("greet", {"who": "Ada"})
    p.client.complete({"type": "ref/prompt", "name": "greet"}, {"name": "who", "value": "A"})
    p.step()
    [read] = p.take(p.server_events, ms.ResourceRead)
    assert (read.uri, read.key, read.variables) == ("test://items/42", "test://items/{id}", {"id": "42"})
    [prompt] = p.take(p.server_events, ms.PromptGet)
    assert prompt.arguments == {"who": "Ada"}
    [comp] = p.take(p.server_events, ms.CompletionRequest)
    assert comp.params["argument"] == {"name": "who", "value": "A"}
    p.server.respond(read.request_id, {"contents": [{"uri": read.uri, "text": "42"}]})
    p.server.respond(prompt.request_id, {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]})
    p.server.respond(comp.request_id, {"completion": {"values": ["Ada"]}})
    p.step()
    results = p.take(p.client_events, ms.Response)
    assert len(results) == 3
    assert all(r.result["resultType"] == "complete" for r in results)


def test_request_times_out_on_fake_time_and_cancels_on_the_wire():
    p = Pair(request_timeout=5.0)
    p.ready()
    rid = p.client.call_tool("add", {"a": 1, "b": 1}, now=T0)
    p.step()
    [call] = p.take(p.server_events, ms.ToolCall)
    deadline = p.client.next_deadline()
    assert deadline == pytest.approx(T0 + 5.0)
    p.client.handle_timeout(T0 + 4.9)
    assert p.client.next_event() is None, "nothing fires early"
    p.now = T0 + 5.0
    p.client.handle_timeout(p.now)
    failed = p.client.next_event()
    assert isinstance(failed, ms.RequestFailed) and failed.request_id == rid
    assert isinstance(failed.error, ms.RequestTimeout)
    p.step()
    [cancelled] = p.take(p.server_events, ms.Cancelled)
    assert cancelled.request_id == call.request_id
    assert not p.server.respond(call.request_id, {"content": []}), "answering a cancelled request is a no-op"
    p.step()
    assert p.client_events == [], "a late answer is dropped"


def test_progress_is_reported_and_must_increase():
    p = Pair()
    p.ready()
    rid = p.client.call_tool("add", {"a": 1, "b": 1}, progress=True)
    plain = p.client.call_tool("add", {"a": 1, "b": 1})
    p.step()
    calls = p.take(p.server_events, ms.ToolCall)
    assert p.server.report_progress(calls[0].request_id, 1, 2, "half")
    with pytest.raises(ms.LocalProtocolError):
        p.server.report_progress(calls[0].request_id, 0.5)
    assert not p.server.report_progress(calls[1].request_id, 1), "not asked for: nothing sent"
    p.step()
    [prog] = p.take(p.client_events, ms.Progress)
    assert (prog.request_id, prog.progress, prog.total, prog.message) == (rid, 1.0, 2.0, "half")
    assert plain != rid


def test_client_cancel_reaches_the_server():
    p = Pair()
    p.ready()
    rid = p.client.call_tool("add", {"a": 1, "b": 1})
    p.step()
    [call] = p.take(p.server_events, ms.ToolCall)
    assert p.client.cancel(rid, "changed my mind")
    assert not p.client.cancel(rid), "only once"
    p.step()
    [failed] = p.take(p.client_events, ms.RequestFailed)
    assert isinstance(failed.error, ms.RequestCancelled)
    [cancelled] = p.take(p.server_events, ms.Cancelled)
    assert cancelled.request_id == call.request_id and cancelled.reason == "changed my mind"


def test_local_protocol_errors_leave_the_session_usable():
    c = ms.ClientSession("cli", "1.0", era="legacy", now=T0)
    with pytest.raises(ms.LocalProtocolError):
        c.call_tool("add", {})  # before Ready
    with pytest.raises(TypeError):
        ms.ClientSession("cli", "1.0", capabilities={"x": object()})
    with pytest.raises(ValueError):
        ms.ClientSession("cli", "1.0", era="1999-01-01")
    assert c.data_to_send().startswith(b'{"jsonrpc":"2.0"')


def test_garbage_from_the_peer_is_answered_not_raised():
    s = ms.ServerSession(config(), now=T0)
    s.receive_data(b"this is not json\n", T0)
    assert s.next_event() is None
    reply = json.loads(s.data_to_send())
    assert reply["error"]["code"] == -32700


def test_eof_closes_and_fails_pending_requests():
    p = Pair()
    p.ready()
    rid = p.client.call_tool("add", {"a": 1, "b": 1})
    p.client.data_to_send()  # lost on the wire
    p.client.receive_eof(T0)
    events = []
    while (e := p.client.next_event()) is not None:
        events.append(e)
    assert isinstance(events[0], ms.RequestFailed) and events[0].request_id == rid
    assert isinstance(events[0].error, ms.ConnectionClosed)
    assert isinstance(events[-1], ms.Closed)
    assert p.client.is_closed


def test_handshake_timeout_on_fake_time():
    c = ms.ClientSession("cli", "1.0", era="legacy", now=T0, request_timeout=10.0)
    c.data_to_send()
    deadline = c.next_deadline()
    assert deadline is not None and deadline > T0
    c.handle_timeout(deadline)
    closed = c.next_event()
    assert isinstance(closed, ms.Closed) and "initialize" in closed.reason


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_ask_input_in_both_eras(era):
    p = Pair(era, capabilities={"elicitation": {}})
    p.ready()
    rid = p.client.call_tool("ask", {})
    p.step()
    [call] = p.take(p.server_events, ms.ToolCall)
    ask = {"name": {"method": "elicitation/create", "params": {"message": "Name?", "requestedSchema": {"type": "object", "properties": {"n": {"type": "string"}}}}}}
    status, _ = p.server.ask_input(call.request_id, ask)
    assert status == ("sent" if era == "legacy" else "suspended")
    p.step()
    [need] = p.take(p.client_events, ms.InputRequired)
    # the keys are the server's (modern) or name the live request (legacy): answer each
    [(key, request)] = need.requests.items()
    assert request["method"] == "elicitation/create"
    p.client.provide_input(need.input_id, {key: {"action": "accept", "content": {"n": "Ada"}}})
    p.step()
    if era == "legacy":
        [answered] = p.take(p.server_events, ms.InputAnswered)
        assert answered.request_id == call.request_id
        assert answered.responses["name"]["content"] == {"n": "Ada"}
        target = call.request_id
    else:
        # The retry is a new request that carries the answers: asking again returns them.
        [retry] = p.take(p.server_events, ms.ToolCall)
        status, responses = p.server.ask_input(retry.request_id, ask)
        assert status == "answered" and responses["name"]["content"] == {"n": "Ada"}
        target = retry.request_id
    p.server.respond(target, {"content": [{"type": "text", "text": "hi Ada"}]})
    p.step()
    [resp] = p.take(p.client_events, ms.Response)
    assert resp.request_id == rid and resp.result["content"][0]["text"] == "hi Ada"


def test_ask_input_without_the_capability_is_an_mcp_error():
    p = Pair()
    p.ready()
    p.client.call_tool("ask", {})
    p.step()
    [call] = p.take(p.server_events, ms.ToolCall)
    with pytest.raises(ms.McpError) as e:
        p.server.ask_input(call.request_id, {"k": {"method": "roots/list"}})
    assert e.value.code == -32021


def test_logging_follows_the_client_level():
    p = Pair()
    p.ready()
    p.client.set_logging_level("warning")
    p.client.call_tool("add", {"a": 1, "b": 1})
    p.step()
    [call] = p.take(p.server_events, ms.ToolCall)
    assert not p.server.log(call.request_id, "info", "quiet")
    assert p.server.log(call.request_id, "error", {"loud": True}, "app")
    p.step()
    [note] = [e for e in p.take(p.client_events, ms.Notification) if e.method == "notifications/message"]
    assert note.params["level"] == "error" and note.params["data"] == {"loud": True}


def test_http_server_rules_are_in_the_extension():
    http = ms.HttpServer(config(), now=T0)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"}}}}).encode()
    headers = [("Host", "127.0.0.1"), ("Content-Type", "application/json"),
               ("Accept", "application/json, text/event-stream"),
               ("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/list")]
    reply = http.handle_request("POST", headers, body, T0)
    assert http.next_event() is None, "the catalog answers tools/list itself"
    outputs = []
    if reply[0] == "open":
        while (o := http.next_output()) is not None:
            outputs.append(o)
        assert outputs[0][0] == "head" and outputs[0][2] == 200
        payload = b"".join(o[2] for o in outputs if o[0] == "body")
    else:
        assert reply[1] == 200
        payload = reply[3]
    assert b'"add"' in payload
    # DNS rebinding protection: a foreign Host is refused before anything else
    evil = [("Host", "evil.example")] + headers[1:]
    assert http.handle_request("POST", evil, body, T0)[1] in (403, 421)


def test_a_call_run_as_a_task_is_followed_on_fake_time():
    p = Pair("2025-11-25")
    cfg = ms.ServerConfig(
        "srv", "1.0",
        tools=[{"name": "long", "inputSchema": {"type": "object"}}],
        capabilities={"tasks": {"requests": {"tools": {"call": {}}}}},
    )
    p.server = ms.ServerSession(cfg, now=T0)
    p.ready()
    rid = p.client.call_tool("long", {}, as_task=True, now=T0)
    p.step()
    [call] = p.take(p.server_events, ms.ToolCall)
    task = p.server.start_task(call.request_id, now=T0)
    assert p.server.task_status(task) == "working"
    p.step()
    assert [(e.request_id, e.status) for e in p.take(p.client_events, ms.TaskStatus)] == [(rid, "working")]
    assert p.server.respond(call.request_id, {"content": [{"type": "text", "text": "finally"}]}, now=T0)
    assert p.server.task_status(task) == "completed"
    for t in (T0 + 1, T0 + 5, T0 + 10):  # the client polls tasks/get on its timers
        p.now = t
        p.client.handle_timeout(t)
        p.step()
    [done] = p.take(p.client_events, ms.Response)
    assert done.request_id == rid and done.result["content"][0]["text"] == "finally"


def test_a_task_asks_through_its_status_and_a_cancelled_task_ends_its_request():
    p = Pair("2025-11-25", capabilities={"elicitation": {}})
    cfg = ms.ServerConfig(
        "srv", "1.0",
        tools=[{"name": "long", "inputSchema": {"type": "object"}}],
        capabilities={"tasks": {"cancel": {}, "requests": {"tools": {"call": {}}}}},
    )
    p.server = ms.ServerSession(cfg, now=T0)
    p.ready()
    rid = p.client.call_tool("long", {}, as_task=True, now=T0)
    p.step()
    [call] = p.take(p.server_events, ms.ToolCall)
    task = p.server.start_task(call.request_id, now=T0)
    # The request became a task: asking puts the task in input_required, and the answers
    # come back to the request that asked.
    ask = {"name": {"method": "elicitation/create", "params": {"message": "Name?", "requestedSchema": {"type": "object", "properties": {"n": {"type": "string"}}}}}}
    assert p.server.ask_input(call.request_id, ask, now=T0) == ("sent", None)
    assert p.server.task_status(task) == "input_required"
    p.step()
    [need] = p.take(p.client_events, ms.InputRequired)
    [(key, _)] = need.requests.items()
    p.client.provide_input(need.input_id, {key: {"action": "accept", "content": {"n": "Ada"}}})
    p.step()
    [answered] = p.take(p.server_events, ms.InputAnswered)
    assert answered.request_id == call.request_id
    assert answered.responses["name"]["content"] == {"n": "Ada"}
    assert p.server.task_status(task) == "working"
    # tasks/cancel: the task's request ends with it; answering it is a no-op.
    assert p.server.pending_requests == 1
    p.client.cancel(rid, now=T0)
    p.step()
    [cancelled] = p.take(p.server_events, ms.TaskCancelled)
    assert cancelled.task_id == task
    assert p.server.pending_requests == 0
    assert not p.server.respond(call.request_id, {"content": []}, now=T0)
    assert p.server.task_status(task) == "cancelled"


def test_a_quiet_http_response_gets_a_keepalive_comment_on_fake_time():
    http = ms.HttpServer(config(), now=T0, keepalive=5)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "add", "arguments": {"a": 1, "b": 2}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"}}}}).encode()
    headers = [("Host", "127.0.0.1"), ("Content-Type", "application/json"),
               ("Accept", "application/json, text/event-stream"),
               ("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/call"),
               ("Mcp-Name", "add")]
    reply = http.handle_request("POST", headers, body, T0)
    assert reply[0] == "open"
    assert isinstance(http.next_event(), ms.ToolCall), "the handler's call, left unanswered"
    assert http.next_output() is None, "undecided: nothing sent yet"
    assert http.next_deadline() is not None and http.next_deadline() <= T0 + 5
    http.handle_timeout(T0 + 4)
    assert http.next_output() is None
    http.handle_timeout(T0 + 5)
    outputs = []
    while (o := http.next_output()) is not None:
        outputs.append(o)
    assert outputs[0][0] == "head" and outputs[0][2] == 200
    assert ("Content-Type", "text/event-stream") in outputs[0][3]
    assert [o[2] for o in outputs[1:] if o[0] == "body"] == [b": keepalive\n\n"]
    # keepalive=0: never
    quiet = ms.HttpServer(config(), now=T0, keepalive=0)
    assert quiet.handle_request("POST", headers, body, T0)[0] == "open"
    quiet.handle_timeout(T0 + 3600)
    assert quiet.next_output() is None
