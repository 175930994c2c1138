import asyncio

from mcp_sansio.aio import Client, Context, Server

server = Server("notes", "1.0", tasks=True, resource_subscriptions=True)
notes = {"todo": "buy milk"}


@server.resource("notes://todo", mime_type="text/plain")
def todo() -> str:
    return notes["todo"]


@server.tool(description="Rewrites the note, slowly, as a task")
async def rewrite(text: str, ctx: Context) -> str:
    await ctx.run_as_task(poll_interval=0.05)  # answer with a task now, keep working
    await asyncio.sleep(0.1)
    notes["todo"] = text
    server.notify_resource_updated("notes://todo")
    return "rewritten"


@server.tool(description="Asks the user, from a worker thread")
def confirm(ctx: Context) -> str:
    answer = ctx.elicit_blocking("Sure?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
    return "confirmed" if answer["action"] == "accept" else "not confirmed"


async def main() -> None:
    async def on_elicit(params):
        return {"action": "accept", "content": {"ok": True}}

    async with Client.connect_in_process(server, tasks=True, on_elicit=on_elicit) as client:
        async with client.listen(resource_uris=["notes://todo"]) as changes:
            result = await client.call_tool(
                "rewrite", {"text": "buy oat milk"}, as_task=True,
                on_task_status=lambda status, message: print("task:", status),
            )
            print(result["content"][0]["text"])
            change = await changes.next()
            print("changed:", change.params["uri"])
        print((await client.read_resource("notes://todo"))["contents"][0]["text"])
        print((await client.call_tool("confirm"))["content"][0]["text"])


asyncio.run(main())
