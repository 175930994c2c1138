"""A test OTLP/HTTP trace receiver on 127.0.0.1: what a collector does with
``POST /v1/traces`` (protobuf ``ExportTraceServiceRequest``, gzip or not), keeping the spans
for the tests to wait on.

    with OtlpReceiver() as otlp:
        ... run a server with --otlp otlp.url ...
        span = otlp.wait_for(lambda s: s.name == "echo work", timeout=10)
"""

import gzip
import http.server
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


@dataclass
class Span:
    name: str
    trace_id: str  # 32 hex digits
    span_id: str  # 16 hex digits
    parent_span_id: str  # "" for a root span
    kind: int  # opentelemetry.proto.trace.v1.Span.SpanKind: 2 SERVER, 3 CLIENT
    service: str
    attributes: Dict[str, object] = field(default_factory=dict)


SERVER = 2
CLIENT = 3


def _value(v):
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


class OtlpReceiver:
    """Listens on 127.0.0.1 (a free port); :attr:`url` is what ``--otlp`` takes."""

    def __init__(self) -> None:
        self.spans: List[Span] = []
        self.requests = 0
        self.bad: List[str] = []
        self._cond = threading.Condition()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path != "/v1/traces":
                    receiver._reject(self, 404, f"POST {self.path}")
                    return
                if (self.headers.get("Content-Type") or "") != "application/x-protobuf":
                    receiver._reject(self, 415, f"content type {self.headers.get('Content-Type')}")
                    return
                if (self.headers.get("Content-Encoding") or "").lower() == "gzip":
                    body = gzip.decompress(body)
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                receiver._add(request)
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="otlp-receiver", daemon=True)

    def _reject(self, handler, status: int, why: str) -> None:
        with self._cond:
            self.bad.append(why)
        handler.send_response(status)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    def _add(self, request: ExportTraceServiceRequest) -> None:
        spans = []
        for rs in request.resource_spans:
            service = ""
            for kv in rs.resource.attributes:
                if kv.key == "service.name":
                    service = _value(kv.value)
            for ss in rs.scope_spans:
                for s in ss.spans:
                    spans.append(
                        Span(
                            name=s.name,
                            trace_id=s.trace_id.hex(),
                            span_id=s.span_id.hex(),
                            parent_span_id=s.parent_span_id.hex(),
                            kind=s.kind,
                            service=service,
                            attributes={kv.key: _value(kv.value) for kv in s.attributes},
                        )
                    )
        with self._cond:
            self.requests += 1
            self.spans.extend(spans)
            self._cond.notify_all()

    def wait_for(self, predicate: Callable[[Span], bool], timeout: float = 10.0) -> Span:
        """The first span received that satisfies ``predicate``, waiting up to ``timeout``
        seconds for it; ``AssertionError`` (naming what arrived) when none does."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for s in self.spans:
                    if predicate(s):
                        return s
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(
                        f"no such span within {timeout} s; received: "
                        + ", ".join(f"{s.name!r} (trace {s.trace_id})" for s in self.spans)
                        + (f"; refused: {self.bad}" if self.bad else "")
                    )
                self._cond.wait(left)

    def find(self, predicate: Callable[[Span], bool]) -> List[Span]:
        with self._cond:
            return [s for s in self.spans if predicate(s)]

    def __enter__(self) -> "OtlpReceiver":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

