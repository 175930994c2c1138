import mcp_sansio as ms

config = ms.ServerConfig("demo", "1.0", tools=[{"name": "hello", "inputSchema": {"type": "object"}}])
server = ms.ServerSession(config, now=0.0)
client = ms.ClientSession("me", "1.0", era="legacy", now=0.0)

for _ in range(3):  # move bytes both ways and react to events
    server.receive_data(client.data_to_send(), now=0.0)
    while (event := server.next_event()) is not None:
        match event:
            case ms.ToolCall(request_id=rid, name="hello"):
                server.respond(rid, {"content": [{"type": "text", "text": "hi"}]})
    client.receive_data(server.data_to_send(), now=0.0)
    while (event := client.next_event()) is not None:
        match event:
            case ms.Ready(version=version):
                print("ready:", version)
                client.call_tool("hello")
            case ms.Response(result=result):
                print("result:", result["content"][0]["text"])
