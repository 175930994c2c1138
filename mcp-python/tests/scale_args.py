"""The scale-out flags of the Python test servers (conformance_server.py,
everything_server.py), as the Rust everything-servers take them
(mcp-tokio/examples/everything-server/args.rs), anywhere on the command line:

- ``--node NAME``: this process's name behind a load balancer (task records, and before
  every 2025-wire session id so a proxy routes each session to it);
- ``--state-key HEX``: the 32-byte key (64 hex digits) sealing 2026 ``requestState``, which
  every process behind one endpoint must share;
- ``--store URL``: share tasks and changes with the other processes through Redis
  (``redis://HOST:PORT``), with ``--lease MS`` (default 10000).
"""

import sys
from typing import Any, Dict, List, Tuple

from mcp_sansio import TaskStore

FLAGS = ("--store", "--node", "--state-key", "--lease")
USAGE = "[--node NAME] [--state-key 64-HEX-DIGITS] [--store redis://HOST:PORT [--lease MS]]"


def split(argv: List[str]) -> Tuple[List[str], Dict[str, str]]:
    """The arguments without the scale-out flags, and those flags' values."""
    rest: List[str] = []
    flags: Dict[str, str] = {}
    it = iter(argv)
    for arg in it:
        if arg in FLAGS:
            value = next(it, None)
            if value is None:
                sys.exit(f"{arg} takes a value; usage: ... {USAGE}")
            flags[arg] = value
        else:
            rest.append(arg)
    return rest, flags


def apply(server: Any, flags: Dict[str, str]) -> None:
    """Configures `server` (not serving yet) as the flags say; a bad value exits with 2."""
    try:
        if "--state-key" in flags:
            key = bytes.fromhex(flags["--state-key"])
            if len(key) != 32:
                raise ValueError("--state-key takes 64 hex digits (32 bytes)")
            server.state_key = server._state_key = key
        if "--node" in flags:
            server.node = flags["--node"]
        if "--lease" in flags:
            lease_ms = int(flags["--lease"])
            if lease_ms <= 0:
                raise ValueError("--lease takes a positive number of milliseconds")
            server.lease = lease_ms / 1000
        if "--store" in flags:
            server.store = TaskStore.redis(flags["--store"])
            if server.node is None:
                import os

                server.node = os.urandom(4).hex()
    except ValueError as e:
        print(f"{sys.argv[0]}: {e}; usage: ... {USAGE}", file=sys.stderr)
        sys.exit(2)
    server._config = None  # rebuilt with the sharing settings
