import asyncio
import sys

from mcp_sansio.aio import Client


async def main() -> None:
    async with Client.connect_stdio(sys.executable, ["server.py"]) as client:
        print("connected with", client.protocol_version)
        print(await client.call_tool("add", {"a": 2, "b": 3}))
        done = await client.call_tool(
            "count", {"n": 3}, progress_callback=lambda p, total, msg: print("progress:", msg)
        )
        print(done["content"][0]["text"])
        print((await client.read_resource("demo://greeting"))["contents"][0]["text"])


asyncio.run(main())
