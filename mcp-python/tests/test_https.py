"""HTTPS, application headers, proxies and the connect/response timeouts of the Streamable
HTTP client (asyncio and sync) and HTTPS in our server, on real sockets on 127.0.0.1 with
certificates made at test time (tests/pki.py).

- our clients against our HTTPS server, both eras; the official Python SDK both ways
  (its client against our HTTPS server, our client against its server under uvicorn's TLS);
- an untrusted, a wrong-host and an expired certificate each fail at connect, saying so;
- a static and a per-request header reach the server; a header the transport owns is
  refused with the core's message before anything is sent;
- tinyproxy (Debian package `tinyproxy`; the test fails without it) carries a plain http://
  session (absolute-form requests) and an https:// one (CONNECT), as its log shows.
"""

import asyncio
import re
import shutil
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

from mcp_sansio import errors, sync
from mcp_sansio.aio import Client, Server

from conftest import EVERYTHING, PEERS, free_port, interop_python
from pki import Pki
from test_interop import assert_scenario, official_client, our_scenario

ERAS = [("modern", "2026-07-28"), ("legacy", "2025-11-25")]


def run(coro, timeout=60):
    return asyncio.run(asyncio.wait_for(coro, timeout))


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return Pki(tmp_path_factory.mktemp("pki"))


def make_server():
    server = Server("https-test", "1.0")

    @server.tool(description="Echoes the text back")
    def echo(text: str) -> str:
        return text

    return server


async def serve(cert=None, **options):
    tls = {} if cert is None else {"ssl_certfile": cert[0], "ssl_keyfile": cert[1]}
    return await make_server().serve_http("127.0.0.1", 0, **tls, **options)


class ServerThread:
    """Our server on an event loop of its own, in a thread (for the sync client)."""

    def __init__(self, cert=None):
        self.cert = cert

    def __enter__(self):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.handle = asyncio.run_coroutine_threadsafe(serve(self.cert), self.loop).result(10)
        self.url = self.handle.url
        return self

    def __exit__(self, *exc):
        asyncio.run_coroutine_threadsafe(self.handle.aclose(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


# --- our clients, our HTTPS server --------------------------------------------------------


@pytest.mark.parametrize("era,version", ERAS)
def test_aio_client_over_https(pki, era, version):
    async def main():
        handle = await serve(pki.good)
        try:
            assert handle.url.startswith("https://127.0.0.1:")
            # The certificate names both; root_certificates as a path, PEM bytes, PEM text
            for host, roots in (("127.0.0.1", str(pki.ca)), ("localhost", pki.ca_pem), ("localhost", pki.ca_pem.decode())):
                url = f"https://{host}:{handle.port}/mcp"
                async with Client.connect_http(url, era=era, root_certificates=roots) as c:
                    assert c.protocol_version == version
                    r = await c.call_tool("echo", {"text": f"over TLS to {host}"})
                    assert r["content"][0]["text"] == f"over TLS to {host}"
        finally:
            await handle.aclose()

    run(main())


@pytest.mark.parametrize("era,version", ERAS)
def test_sync_client_over_https(pki, era, version):
    with ServerThread(pki.good) as srv:
        with sync.Client.connect_http(srv.url, era=era, root_certificates=pki.ca) as c:
            assert c.protocol_version == version
            r = c.call_tool("echo", {"text": "sync over TLS"}, timeout=30)
            assert r["content"][0]["text"] == "sync over TLS"


def test_own_ssl_context_and_ssl_cert_file(pki, monkeypatch):
    async def main():
        handle = await serve(pki.good)
        try:
            ctx = ssl.create_default_context(cafile=str(pki.ca))
            async with Client.connect_http(handle.url, ssl_context=ctx) as c:
                assert (await c.call_tool("echo", {"text": "ctx"}))["content"][0]["text"] == "ctx"
            # The default context reads SSL_CERT_FILE (instead of the platform's roots)
            monkeypatch.setenv("SSL_CERT_FILE", str(pki.ca))
            async with Client.connect_http(handle.url) as c:
                assert (await c.call_tool("echo", {"text": "env"}))["content"][0]["text"] == "env"
            with pytest.raises(ValueError, match="not both"):
                await Client.connect_http(handle.url, ssl_context=ctx, root_certificates=pki.ca)
            with pytest.raises(ValueError, match=r"root_certificates: cannot load '/nonexistent/ca\.pem'"):
                await Client.connect_http(handle.url, root_certificates="/nonexistent/ca.pem")
            with pytest.raises(ValueError, match="root_certificates: cannot load PEM data"):
                await Client.connect_http(handle.url, root_certificates=b"-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----\n")
            with pytest.raises(ValueError, match="need an https:// URL"):
                await Client.connect_http("http://127.0.0.1:1/mcp", root_certificates=pki.ca)
        finally:
            await handle.aclose()

    run(main())


# --- verification failures ----------------------------------------------------------------

FAILURES = [
    ("untrusted", "127.0.0.1", "is not trusted", "unable to get local issuer certificate"),
    ("wrong_host", "127.0.0.1", "is not valid for the host name '127.0.0.1' (wrong host name)", "IP address mismatch"),
    ("wrong_host", "localhost", "is not valid for the host name 'localhost' (wrong host name)", "Hostname mismatch"),
    ("expired", "localhost", "has expired", "certificate has expired"),
]


@pytest.mark.parametrize("which,host,says,openssl", FAILURES)
def test_verification_failures_are_clear(pki, which, host, says, openssl):
    async def main():
        handle = await serve(getattr(pki, which))
        url = f"https://{host}:{handle.port}/mcp"
        try:
            with pytest.raises(errors.CertificateError) as info:
                await Client.connect_http(url, era="modern", root_certificates=pki.ca, connect_timeout=10)
        finally:
            await handle.aclose()
        return info.value

    e = run(main())
    assert str(e).startswith(f"TLS certificate verification failed for {e.url}: the server's certificate {says}"), str(e)
    assert openssl in e.verify_message, e.verify_message
    assert e.url.startswith(f"https://{host}:")
    # One family: ours (ConnectError, ConnectionClosed) and the builtin ConnectionError
    assert isinstance(e, errors.ConnectError) and isinstance(e, errors.ConnectionClosed)
    assert isinstance(e, ConnectionError)


def test_untrusted_without_roots_and_in_the_sync_client(pki):
    # Our test CA is in no platform store: the default context refuses it
    with ServerThread(pki.good) as srv:
        with pytest.raises(errors.CertificateError, match=re.escape(f"verification failed for {srv.url}: the server's certificate is not trusted")):
            sync.Client.connect_http(srv.url, connect_timeout=10)


def test_plain_http_to_an_https_server_and_back(pki):
    async def main():
        handle = await serve(pki.good)
        try:
            with pytest.raises(errors.ConnectError, match=r"TLS handshake with https://127\.0\.0\.1:\d+/mcp failed"):
                plain = await serve()
                try:
                    await Client.connect_http(plain.url.replace("http://", "https://"), root_certificates=pki.ca)
                finally:
                    await plain.aclose()
        finally:
            await handle.aclose()

    run(main())


# --- timeouts and the server's handshake deadline -------------------------------------------


async def silent_server():
    """Accepts and reads, never answers."""
    held = []

    async def hold(reader, writer):
        held.append(writer)
        while await reader.read(65536):
            pass

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    return server, held


def test_connect_timeout_and_response_timeout():
    async def main():
        server, held = await silent_server()
        port = server.sockets[0].getsockname()[1]
        try:
            start = time.monotonic()
            with pytest.raises(errors.ConnectError, match=rf"connecting to https://127\.0\.0\.1:{port}/mcp timed out after 300 ms"):
                await Client.connect_http(f"https://127.0.0.1:{port}/mcp", era="modern", connect_timeout=0.3)
            assert time.monotonic() - start < 5
            start = time.monotonic()
            with pytest.raises(errors.ConnectionClosed, match=rf"no response head from http://127\.0\.0\.1:{port}/mcp within 300 ms"):
                await Client.connect_http(f"http://127.0.0.1:{port}/mcp", era="modern", response_timeout=0.3)
            assert time.monotonic() - start < 5
        finally:
            for w in held:
                w.close()
            server.close()

    run(main())


def test_refused_connection_is_a_connect_error():
    port = free_port()
    with pytest.raises(errors.ConnectError, match=rf"could not connect to http://127\.0\.0\.1:{port}/mcp: Connection refused \(os error 111\)"):
        run(Client.connect_http(f"http://127.0.0.1:{port}/mcp", era="modern")._open())


def test_server_drops_a_client_that_never_handshakes(pki):
    async def main():
        handle = await serve(pki.good, header_read_timeout=0.5)
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", handle.port)
            start = time.monotonic()
            assert await asyncio.wait_for(reader.read(100), 10) == b""  # closed, nothing said
            assert 0.3 < time.monotonic() - start < 5
            writer.close()
            # ... and the server still serves
            async with Client.connect_http(handle.url, root_certificates=pki.ca) as c:
                assert (await c.call_tool("echo", {"text": "still"}))["content"][0]["text"] == "still"
        finally:
            await handle.aclose()

    run(main())


# --- headers --------------------------------------------------------------------------------


class Recorder:
    """A TCP relay in front of a plain-HTTP server that keeps what each client connection
    sent (the client opens one connection per request)."""

    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.sent = []

    async def start(self):
        self.server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/mcp"
        return self

    async def _relay(self, creader, cwriter):
        record = bytearray()
        self.sent.append(record)
        sreader, swriter = await asyncio.open_connection("127.0.0.1", self.upstream_port)

        async def pipe(reader, writer, keep):
            try:
                while data := await reader.read(65536):
                    if keep is not None:
                        keep += data
                    writer.write(data)
                    await writer.drain()
            except ConnectionError:
                pass
            finally:
                writer.close()

        await asyncio.gather(pipe(creader, swriter, record), pipe(sreader, cwriter, None))

    def requests(self, method=None):
        """The recorded requests (bytes), those whose body names `method` if given."""
        out = [bytes(r) for r in self.sent]
        return [r for r in out if method is None or f'"method":"{method}"'.encode() in r]

    async def close(self):
        self.server.close()


def has_header(request, name, value):
    return re.search(rb"(?im)^" + re.escape(name.encode()) + rb": " + re.escape(value.encode()) + rb"\r$", request) is not None


@pytest.mark.parametrize("era,version", ERAS)
def test_static_and_per_request_headers_reach_the_server(era, version):
    async def main():
        handle = await serve()
        rec = await Recorder(handle.port).start()
        try:
            async with Client.connect_http(rec.url, era=era, headers={"X-API-Key": "k-123"}) as c:
                assert c.protocol_version == version
                r = await c.call_tool("echo", {"text": "a"}, headers={"X-Trace-Id": "t-1"})
                assert r["content"][0]["text"] == "a"
                await c.request("tools/list", headers=[("X-Trace-Id", "t-2")])
                await c.call_tool("echo", {"text": "b"})
            requests = rec.requests()
            assert requests and all(has_header(r, "X-API-Key", "k-123") for r in requests), requests
            calls = rec.requests("tools/call")
            assert len(calls) == 2
            assert has_header(calls[0], "X-Trace-Id", "t-1") and not re.search(rb"(?i)x-trace-id", calls[1])
            (listing,) = rec.requests("tools/list")
            assert has_header(listing, "X-Trace-Id", "t-2")
        finally:
            await rec.close()
            await handle.aclose()

    run(main())


def test_headers_in_the_sync_client():
    with ServerThread() as srv:

        async def start():
            return await Recorder(srv.handle.port).start()

        rec = asyncio.run_coroutine_threadsafe(start(), srv.loop).result(10)
        with sync.Client.connect_http(rec.url, era="modern", headers=[("Authorization", "Bearer key-9")]) as c:
            c.call_tool("echo", {"text": "x"}, headers={"X-Tenant": "blue"}, timeout=30)
            c.request("tools/list", headers={"X-Tenant": "green"}, timeout=30)
            with pytest.raises(ValueError, match=re.escape("the header `Mcp-Method` is set by the MCP transport and cannot be replaced")):
                c.call_tool("echo", {"text": "x"}, headers={"Mcp-Method": "x"}, timeout=30)
        assert all(has_header(r, "Authorization", "Bearer key-9") for r in rec.requests())
        assert has_header(rec.requests("tools/call")[0], "X-Tenant", "blue")
        assert has_header(rec.requests("tools/list")[0], "X-Tenant", "green")
        asyncio.run_coroutine_threadsafe(rec.close(), srv.loop).result(10)


def test_reserved_and_invalid_headers_are_refused_before_anything_is_sent():
    async def main():
        handle = await serve()
        rec = await Recorder(handle.port).start()
        try:
            for headers, message in [
                ({"Mcp-Session-Id": "s"}, "the header `Mcp-Session-Id` is set by the MCP transport and cannot be replaced"),
                ({"content-type": "text/plain"}, "the header `content-type` is set by the MCP transport and cannot be replaced"),
                ({"Mcp-Param-Region": "eu"}, "the header `Mcp-Param-Region` is set by the MCP transport and cannot be replaced"),
                ({"X Key": "v"}, "`X Key` is not a valid HTTP header name"),
                ({"X-Key": "a\r\nInjected: 1"}, "the value of the header `X-Key` holds a character HTTP does not allow"),
            ]:
                with pytest.raises(ValueError, match=re.escape(message)):
                    await Client.connect_http(rec.url, headers=headers)
            assert rec.requests() == []  # nothing was sent
            async with Client.connect_http(rec.url, era="modern") as c:
                with pytest.raises(ValueError, match=re.escape("the header `Accept` is set by the MCP transport and cannot be replaced")):
                    await c.call_tool("echo", {"text": "x"}, headers={"Accept": "*/*"})
                assert rec.requests("tools/call") == []  # the call was not sent
                assert (await c.call_tool("echo", {"text": "ok"}))["content"][0]["text"] == "ok"
        finally:
            await rec.close()
            await handle.aclose()

    run(main())


def test_headers_need_an_http_connection():
    async def main():
        async with Client.connect_in_process(make_server()) as c:
            with pytest.raises(ValueError, match="needs an HTTP connection"):
                await c.call_tool("echo", {"text": "x"}, headers={"X-A": "b"})

    run(main())


# --- the official Python SDK over HTTPS -----------------------------------------------------


@pytest.fixture(scope="module")
def our_https_server(pki):
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(EVERYTHING), "--https", str(port), *pki.good],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line.startswith("listening https://"), line
        yield line.split()[1]
    finally:
        proc.terminate()
        proc.wait(10)
        proc.stdout.close()


@pytest.mark.parametrize("mode,version", ERAS)
def test_official_client_to_our_https_server(pki, our_https_server, monkeypatch, mode, version):
    interop_python()
    monkeypatch.setenv("SSL_CERT_FILE", str(pki.ca))  # the SDK's httpx trusts it
    assert_scenario(official_client(mode, [our_https_server]), version)


@pytest.fixture(scope="module")
def official_https_server(pki):
    python = interop_python()
    port = free_port()
    proc = subprocess.Popen(
        [python, str(PEERS / "py_server.py"), "--https", str(port), *pki.good],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"https://127.0.0.1:{port}/mcp"
    ctx = ssl.create_default_context(cafile=str(pki.ca))
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(url, timeout=1, context=ctx)
            except urllib.error.HTTPError:
                break  # it answers over TLS (a GET without a session is an error): it is up
            except OSError:
                if proc.poll() is not None:
                    raise RuntimeError(f"uvicorn did not start: {proc.stderr.read().decode(errors='replace')}")
                if time.monotonic() > deadline:
                    raise RuntimeError("uvicorn did not start within 30 s")
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)
        proc.stderr.close()


@pytest.mark.parametrize("era,version", ERAS)
def test_our_client_to_official_server_under_uvicorn_tls(pki, official_https_server, era, version):
    async def main():
        async with Client.connect_http(official_https_server, era=era, root_certificates=pki.ca) as c:
            assert c.protocol_version == version
            await our_scenario(c)

    run(main())


def test_sync_client_to_official_server_under_uvicorn_tls(pki, official_https_server):
    with sync.Client.connect_http(official_https_server, era="legacy", root_certificates=pki.ca) as c:
        r = c.call_tool("echo", {"text": "sync to uvicorn"}, timeout=30)
        assert r["content"][0]["text"] == "sync to uvicorn"


# --- a real forward proxy: tinyproxy --------------------------------------------------------


class Tinyproxy:
    """tinyproxy on a free 127.0.0.1 port (foreground, its own config and log), allowing
    CONNECT to `connect_ports` only."""

    def __init__(self, directory, connect_ports):
        exe = shutil.which("tinyproxy")
        if exe is None:
            pytest.fail(
                "tinyproxy is not on PATH: the proxy tests need it (Debian/Ubuntu: apt-get install -y tinyproxy-bin, or tinyproxy)",
                pytrace=False,
            )
        self.port = free_port()
        self.log = directory / "tinyproxy.log"
        conf = directory / "tinyproxy.conf"
        lines = [
            f"Port {self.port}",
            "Listen 127.0.0.1",
            "Timeout 30",
            "MaxClients 64",
            "Allow 127.0.0.1",
            f'LogFile "{self.log}"',
            "LogLevel Info",
            "DisableViaHeader Yes",
        ] + [f"ConnectPort {p}" for p in connect_ports]
        conf.write_text("\n".join(lines) + "\n")
        self.proc = subprocess.Popen([exe, "-d", "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"tinyproxy exited: {self.proc.stderr.read().decode(errors='replace')}")
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError("tinyproxy did not listen within 10 s")
                time.sleep(0.05)

    def requests(self):
        """The request lines tinyproxy logged (`CONNECT host:port HTTP/1.1`, `POST http://...`)."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return re.findall(r"Request \(file descriptor \d+\): (.*)", text)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        self.proc.stderr.close()


@pytest.fixture
def proxy_setup(tmp_path, pki):
    """Our server over plain HTTP and over HTTPS (threads), and tinyproxy allowing CONNECT to
    the HTTPS one."""
    with ServerThread() as plain, ServerThread(pki.good) as secure:
        proxy = Tinyproxy(tmp_path, [secure.handle.port])
        try:
            yield plain, secure, proxy
        finally:
            proxy.stop()


@pytest.mark.parametrize("era,version", ERAS)
def test_through_tinyproxy_plain_and_connect(pki, proxy_setup, era, version):
    plain, secure, proxy = proxy_setup

    async def main():
        async with Client.connect_http(plain.url, era=era, proxy=proxy.url) as c:
            assert c.protocol_version == version
            assert (await c.call_tool("echo", {"text": "via proxy"}))["content"][0]["text"] == "via proxy"
        async with Client.connect_http(secure.url, era=era, proxy=proxy.url, root_certificates=pki.ca) as c:
            assert c.protocol_version == version
            assert (await c.call_tool("echo", {"text": "via tunnel"}))["content"][0]["text"] == "via tunnel"

    run(main())
    seen = proxy.requests()
    assert f"POST {plain.url} HTTP/1.1" in seen, seen  # absolute form
    assert f"CONNECT 127.0.0.1:{secure.handle.port} HTTP/1.1" in seen, seen


def test_proxy_from_the_environment_and_no_proxy(pki, proxy_setup, monkeypatch):
    plain, secure, proxy = proxy_setup
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    monkeypatch.setenv("http_proxy", f"127.0.0.1:{proxy.port}")  # no scheme, as curl reads it
    with sync.Client.connect_http(secure.url, era="modern", root_certificates=pki.ca) as c:
        assert c.call_tool("echo", {"text": "env"}, timeout=30)["content"][0]["text"] == "env"
    with sync.Client.connect_http(plain.url, era="modern") as c:
        assert c.call_tool("echo", {"text": "env"}, timeout=30)["content"][0]["text"] == "env"
    seen = proxy.requests()
    assert sum(s.startswith(f"CONNECT 127.0.0.1:{secure.handle.port} ") for s in seen) >= 2, seen
    assert f"POST {plain.url} HTTP/1.1" in seen, seen
    count = len(seen)
    # NO_PROXY names the host, and proxy=None: straight to the server
    monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
    with sync.Client.connect_http(plain.url, era="modern") as c:
        c.call_tool("echo", {"text": "direct"}, timeout=30)
    monkeypatch.delenv("NO_PROXY")
    with sync.Client.connect_http(secure.url, era="legacy", proxy=None, root_certificates=pki.ca) as c:
        c.call_tool("echo", {"text": "direct"}, timeout=30)
    assert len(proxy.requests()) == count


def test_proxy_refusing_connect_and_unreachable_proxy(pki, proxy_setup):
    plain, secure, proxy = proxy_setup

    async def main():
        # CONNECT to a port tinyproxy does not allow: 403
        other = await serve(pki.good)
        try:
            with pytest.raises(errors.ProxyError, match=rf"the proxy http://127\.0\.0\.1:{proxy.port} refused CONNECT to 127\.0\.0\.1:{other.port}: HTTP 403 ") as info:
                await Client.connect_http(other.url, era="modern", proxy=proxy.url, root_certificates=pki.ca)
            assert info.value.status == 403
        finally:
            await other.aclose()
        dead = free_port()
        with pytest.raises(errors.ProxyError, match=rf"could not connect to the proxy 127\.0\.0\.1:{dead} for {re.escape(secure.url)}"):
            await Client.connect_http(secure.url, era="modern", proxy=f"http://127.0.0.1:{dead}", root_certificates=pki.ca)
        with pytest.raises(ValueError, match="only http:// proxies"):
            await Client.connect_http(secure.url, proxy=f"https://127.0.0.1:{dead}")

    run(main())


def test_proxy_authorization_from_the_proxy_url(pki):
    """The userinfo of the proxy URL becomes Proxy-Authorization (a recording fake proxy)."""

    async def main():
        seen = []

        async def fake_proxy(reader, writer):
            head = await reader.readuntil(b"\r\n\r\n")
            seen.append(head)
            writer.write(b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(fake_proxy, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            with pytest.raises(errors.ProxyError, match="407 Proxy Authentication Required"):
                await Client.connect_http("https://example.invalid/mcp", era="modern", proxy=f"http://ada:s%40cret@127.0.0.1:{port}")
        finally:
            server.close()
        # base64("ada:s@cret")
        assert seen and all(has_header(h, "Proxy-Authorization", "Basic YWRhOnNAY3JldA==") for h in seen), seen
        assert seen[0].startswith(b"CONNECT example.invalid:443 HTTP/1.1\r\n")

    run(main())


def test_the_guide_https_examples_compile():
    from conftest import REPO

    text = (REPO / "guide" / "src" / "python.md").read_text()
    section = text.split("## HTTPS, API keys and proxies", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 3
    for block in blocks:
        compile(block, "python.md", "exec")
