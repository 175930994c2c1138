"""The Python client for the MCP conformance suite's client mode (``conformance client
--command "<python> conformance_client.py"``), as mcp-tokio's everything-client is for Rust.

The harness appends the mock server's URL as the last argument and names the scenario in
``MCP_CONFORMANCE_SCENARIO``; ``MCP_CONFORMANCE_PROTOCOL_VERSION`` picks the lifecycle
(``2026-07-28``: the modern era; anything else: the ``initialize`` handshake) and
``MCP_CONFORMANCE_CONTEXT`` carries scenario data (pre-registered credentials, a signing key,
assertions, tool calls). Exits 0 when the scenario's steps ran, 1 for a failed step, 2 for
an unknown scenario. ``scripts/conformance-client-python`` runs it under the pinned harness.

``auth/*`` scenarios authorize with :class:`mcp_sansio.auth.OAuth` and the headless user
agent (the mock authorization servers redirect to ``REDIRECT_URI`` at once), then list the
tools and call each one (a step-up scenario challenges the call with 403
``insufficient_scope``).
"""

import asyncio
import json
import logging
import os
import sys
from typing import Any, Dict

from mcp_sansio.aio import Client
from mcp_sansio.auth import OAuth

#: Where the mock authorization servers redirect to (nothing listens there: the headless
#: user agent stops at the redirect)
REDIRECT_URI = "http://localhost:3000/callback"
#: The Client ID Metadata Document URL offered where servers support CIMD
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
NAME = "mcp-sansio-python-conformance-client"


def context() -> Dict[str, Any]:
    text = os.environ.get("MCP_CONFORMANCE_CONTEXT")
    return json.loads(text) if text else {}


def oauth(scenario: str) -> OAuth:
    """OAuth for an ``auth/*`` scenario, with the context's credentials where it has them."""
    ctx = context()
    options: Dict[str, Any] = dict(
        redirect_uri=REDIRECT_URI,
        client_name=NAME,
        client_metadata_url=CLIENT_METADATA_URL,
        client_id=ctx.get("client_id"),
        client_secret=ctx.get("client_secret"),
        issuer=ctx.get("issuer"),
    )
    if ctx.get("private_key_pem"):
        options["private_key_pem"] = ctx["private_key_pem"]
        options["signing_algorithm"] = ctx.get("signing_algorithm") or "ES256"
    if scenario in ("auth/client-credentials-jwt", "auth/client-credentials-basic"):
        options["grant"] = "client_credentials"
    elif scenario == "auth/wif-jwt-bearer":
        options.update(grant="jwt_bearer", assertion=ctx["valid_jwt"])
    elif scenario == "auth/enterprise-managed-authorization":
        options.update(
            grant="identity_assertion",
            idp_token_endpoint=ctx["idp_token_endpoint"],
            idp_client_id=ctx["idp_client_id"],
            id_token=ctx["idp_id_token"],
        )
    return OAuth(**options)


def accept_defaults(params: Dict[str, Any]) -> Dict[str, Any]:
    """Accepts an elicitation with the schema's defaults (``True`` for booleans without one)."""
    content: Dict[str, Any] = {}
    for name, prop in ((params.get("requestedSchema") or {}).get("properties") or {}).items():
        if "default" in prop:
            content[name] = prop["default"]
        elif prop.get("type") == "boolean":
            content[name] = True
    return {"action": "accept", "content": content}


async def run(scenario: str, url: str, modern: bool) -> None:
    options: Dict[str, Any] = dict(
        name=NAME,
        version="0.1.0",
        era="modern" if modern else "2025-11-25",
        on_elicit=accept_defaults,
    )
    if scenario.startswith("auth/"):
        options["auth"] = oauth(scenario)
    async with Client.connect_http(url, **options) as client:
        info = client.server_info or {}
        print(f"connected: protocol {client.protocol_version}, server {info.get('name')!r}", file=sys.stderr)
        has_tools = "tools" in client.server_capabilities
        if scenario.startswith("auth/"):
            for tool in (await client.list_tools())["tools"]:
                result = await client.call_tool(tool["name"], {})
                print(f"{tool['name']}: {result.get('content')}", file=sys.stderr)
        elif scenario == "initialize":
            if has_tools:
                tools = await client.list_tools()
                print(f"tools/list: {len(tools['tools'])} tools", file=sys.stderr)
        elif scenario == "tools_call":
            await client.list_tools()
            result = await client.call_tool("add_numbers", {"a": 5, "b": 3})
            print(f"add_numbers: {result.get('content')}", file=sys.stderr)
        elif scenario == "elicitation-sep1034-client-defaults":
            await client.list_tools()
            result = await client.call_tool("test_client_elicitation_defaults", {})
            print(f"result: {result.get('content')}", file=sys.stderr)
        else:
            raise LookupError(f"unknown scenario {scenario!r}")


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: conformance_client.py <server-url>", file=sys.stderr)
        return 2
    level = os.environ.get("MCP_SANSIO_LOG")
    if level:
        logging.basicConfig(level=level.upper(), stream=sys.stderr)
    url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    modern = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") == "2026-07-28"
    print(f"scenario {scenario!r}, modern {modern}, url {url}", file=sys.stderr)
    try:
        asyncio.run(run(scenario, url, modern))
    except LookupError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except Exception as e:
        print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
