"""A protected MCP server: every request needs an access token (a JWT) issued for
http://127.0.0.1:8000/mcp by https://auth.example.com; each user keeps notes of their own,
and `forget_everyone` needs the scope notes:admin."""

import asyncio
import os
from collections import defaultdict

from mcp_sansio import JwtVerifier
from mcp_sansio.aio import Context, Server

ISSUER = "https://auth.example.com"

server = Server(
    "notes",
    "1.0",
    # HS256 with a shared secret here; an authorization server's own keys:
    # JwtVerifier(public_key=pem, algorithm="RS256", issuer=ISSUER)
    auth=JwtVerifier(os.environ["NOTES_JWT_SECRET"], issuer=ISSUER),
    authorization_server=ISSUER,
    resource_url="http://127.0.0.1:8000/mcp",
    tasks=True,
)
notes: "defaultdict[str, list[str]]" = defaultdict(list)


@server.tool(description="Adds a note for the caller")
def add_note(text: str, ctx: Context) -> str:
    mine = notes[ctx.principal.subject]
    mine.append(text)
    return f"{ctx.principal.subject} has {len(mine)} notes"


@server.tool(description="The caller's notes")
def my_notes(ctx: Context) -> str:
    return "\n".join(notes[ctx.principal.subject])


@server.tool(description="Summarizes the caller's notes (slowly, as a task)", task_support="required")
async def summarize(ctx: Context) -> str:
    await ctx.run_as_task()  # the task is the caller's: nobody else can read or cancel it
    await asyncio.sleep(1)
    return f"{len(notes[ctx.principal.subject])} notes"


@server.tool(description="Deletes everyone's notes", scopes=["notes:admin"])
def forget_everyone() -> str:
    notes.clear()
    return "forgotten"


if __name__ == "__main__":
    server.run("http", port=8000)
