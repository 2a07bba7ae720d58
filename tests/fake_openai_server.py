"""An OpenAI-compatible HTTP server for tests and benchmarks (a test double for the paid API).

It serves ``POST /v1/chat/completions`` with usage counts, answering each prompt (the last user
message) with a deterministic text. Behaviour is scriptable per prompt, one step per call:

- ``"ok"``: answer after the server's latency (the default once a prompt's steps are used up);
- ``"429:S"``: HTTP 429 at once with ``Retry-After: S``;
- ``"500"``: HTTP 500 at once;
- ``"stall:S"``: wait S seconds before answering (longer than the client's timeout, it times out);
- ``"html"``: status 200 with an HTML page (a proxy's or captive portal's answer);
- ``"cut"``: answer with ``finish_reason: length`` (a text cut off at the token limit);
- ``"filter"``: ``content: null`` with ``finish_reason: content_filter`` (Azure's content filter);
  ``"filter-text"``: the text with ``finish_reason: content_filter``;
- ``"filter-prompt"``: HTTP 400 with error code ``content_filter`` (the prompt was filtered);
- ``"surrogate"``: the text with a lone surrogate (``\\ud800``, valid JSON) appended;
- ``"echo-key"``: the text with the request's ``Authorization`` header appended;
- ``"null"``: ``content: null`` with ``finish_reason: stop`` and no refusal;
- ``"refuse"``: ``content: null`` with ``message.refusal`` set (a model's refusal);
- ``"torn"``: status 200 with half of the JSON body (a complete HTTP message whose JSON is cut
  off, as a proxy that drops the rest may send); ``"drop"``: status 200 whose body stops halfway
  (``Content-Length`` promises more, then the connection closes);
- ``always="500"`` (or any status): every call for that prompt fails with that status;
  ``FakeOpenAIServer(always=500)``: every call for any prompt (a server that is down).

Hostile and broken servers (issue #36):

- ``"no-usage"``: no ``usage`` field; ``"usage:V"``: every usage count is the JSON number ``V``
  as written (``-5000``, ``1e400``, ``1.5``);
- ``"content-list"``: the answer as a list of two text parts; ``"content-number"``: ``42``;
- ``"long:N"``: an answer of N characters, whatever ``max_tokens`` says;
- ``"gzip:N"``: a gzip-encoded body that inflates to about N bytes (an answer of N spaces);
- ``"other-model"``: the reply names another model than the one asked for;
- ``"redirect:302"`` / ``"redirect:307"``: that status with ``Location`` on this server's
  ``/elsewhere/v1/chat/completions``, which answers (and counts, in ``elsewhere``) anything sent
  there;
- ``"trickle:S"``: a whole answer, one byte every S seconds.

``rate_429`` makes a seeded random share of all calls answer 429 with ``Retry-After:
retry_after_429``. Clearing ``gate`` holds every answer back until it is set again. The server counts calls per prompt (``calls``), successful answers
(``answered``), records arrival times and request bodies per prompt, and the largest number of
requests in flight at once (``max_in_flight``). With ``api_key`` set, a request without
``Authorization: Bearer <api_key>`` gets 401 quoting the key it was given, as the real API does.

In-process: ``with FakeOpenAIServer(latency=0.1) as server: ... server.url``.
As a process (benchmarks keep the client's CPU apart from the server's):
``python tests/fake_openai_server.py --latency 0.1`` prints ``PORT <n>``; ``GET /stats`` returns
the counters as JSON and ``POST /reset`` clears them.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import random
import socket
import sys
import threading
import time
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError


def schema_instance(schema: dict):
    """A small value valid under ``schema`` (enough of JSON Schema for verdict shapes)."""
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        return {k: schema_instance(v) for k, v in props.items()}
    if kind == "array":
        return [schema_instance(schema["items"])] * schema.get("minItems", 0)
    if kind == "integer":
        return int(schema.get("minimum", 0))
    if kind == "number":
        return float(schema.get("minimum", 0))
    if kind == "boolean":
        return True
    return "x" * schema.get("minLength", 1)


# What the server's model says when a prompt is scripted to be refused ("refuse").
REFUSAL = "I can't help with that request."


def answer_text(prompt: str, model: str) -> str:
    """The text the server answers a prompt with (deterministic, so reruns compare equal)."""
    return f"[{model}] answer to: {prompt}"


def completion(model: str, text, usage: dict | None) -> dict:
    """A chat completion body of one choice."""
    body = {
        "id": "chatcmpl-x",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
    }
    if usage is not None:
        body["usage"] = usage
    return body


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # many clients connect at once; a short backlog would drop SYNs

    def handle_error(self, request, client_address):
        # A client killed mid-connection (the cache tests kill jobs) is expected, not news.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class FakeOpenAIServer:
    def __init__(
        self,
        latency: float = 0.0,
        api_key: str | None = None,
        rate_429: float = 0.0,
        retry_after_429: float = 0.2,
        seed: int = 0,
        host: str = "127.0.0.1",
        port: int = 0,
        structured: str = "accept",
        always: int | None = None,
    ):
        self.latency = latency
        self.always = always
        self.structured = structured
        self.api_key = api_key
        self.rate_429 = rate_429
        self.retry_after_429 = retry_after_429
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._steps: dict[str, list[str]] = {}
        self._always: dict[str, int] = {}
        # Cleared, it holds every answer back until set again (to line up concurrent clients).
        self.gate = threading.Event()
        self.gate.set()
        self.reset()
        self._httpd = _Server((host, port), self._handler_class())
        self._thread: threading.Thread | None = None

    # -- control ---------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, prompt: str, steps: list[str] | None = None, always: int | None = None):
        with self._lock:
            self._steps[prompt] = list(steps or [])
            if always is not None:
                self._always[prompt] = int(always)

    def reset(self) -> None:
        """Clear the counters (not the scripts)."""
        with getattr(self, "_lock", threading.Lock()):
            self.calls: dict[str, int] = defaultdict(int)
            self.answered: dict[str, int] = defaultdict(int)
            self.arrivals: dict[str, list[float]] = defaultdict(list)
            self.bodies: dict[str, list[dict]] = defaultdict(list)
            self.statuses: dict[int, int] = defaultdict(int)
            self.in_flight = 0
            self.max_in_flight = 0
            self.elsewhere: list[str] = []  # methods of the requests sent to /elsewhere/

    def stats(self) -> dict:
        with self._lock:
            return {
                "calls": dict(self.calls),
                "answered": dict(self.answered),
                "statuses": {str(k): v for k, v in self.statuses.items()},
                "max_in_flight": self.max_in_flight,
                "total_calls": sum(self.calls.values()),
                "total_answered": sum(self.answered.values()),
            }

    def start(self) -> FakeOpenAIServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- serving ---------------------------------------------------------------------------
    def _next_step(self, prompt: str) -> str:
        with self._lock:
            if prompt in self._always:
                return str(self._always[prompt])
            if self.always is not None:
                return str(self.always)
            steps = self._steps.get(prompt)
            if steps:
                return steps.pop(0)
            if self.rate_429 and self._rng.random() < self.rate_429:
                return f"429:{self.retry_after_429}"
            return "ok"

    def _shaped_text(self, body: dict) -> tuple[int, str]:
        """(status, text) for a request asking for structured output."""
        if self.structured == "refuse":
            return 400, "structured output (response_format / structured_outputs) is not supported"
        if "structured_outputs" in body:
            return 200, body["structured_outputs"]["choice"][0]
        fmt = body["response_format"]
        spec = fmt.get("json_schema") or {}
        if fmt.get("type") != "json_schema" or not isinstance(spec.get("name"), str):
            return 400, "response_format needs type json_schema and json_schema.name"
        try:
            Draft202012Validator.check_schema(spec.get("schema"))
        except SchemaError as exc:
            return 400, f"invalid JSON schema: {exc.message}"
        return 200, json.dumps(schema_instance(spec["schema"]))

    def _handler_class(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as the real API
            # Headers and body go out in two writes; with Nagle on, the body waits for the
            # client's delayed ACK (40 ms per call on Linux). Real servers set TCP_NODELAY too.
            disable_nagle_algorithm = True

            def log_message(self, *args):  # quiet
                pass

            def _leave(self):
                """The request is out of flight once its answer starts: the client may send its
                next one as soon as it has read this answer, before this thread returns."""
                if getattr(self, "_in_flight", False):
                    self._in_flight = False
                    with server._lock:
                        server.in_flight -= 1

            def _send(self, status: int, payload: dict, headers: dict | None = None) -> bool:
                body = json.dumps(payload).encode()
                self._leave()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(body)
                    return True
                except (BrokenPipeError, ConnectionResetError):
                    return False  # the client gave up (timeout) before the answer

            def _elsewhere(self) -> bool:
                """Where a redirect points: count what arrives, answer like a server would."""
                if not self.path.startswith("/elsewhere/"):
                    return False
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                with server._lock:
                    server.elsewhere.append(self.command)
                self._send(200, completion("elsewhere", "the answer of another host", None))
                return True

            def do_GET(self):
                if self._elsewhere():
                    return
                if self.path.rstrip("/") == "/stats":
                    self._send(200, server.stats())
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self):
                if self._elsewhere():
                    return
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if self.path.rstrip("/") == "/reset":
                    server.reset()
                    self._send(200, {"ok": True})
                    return
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                if server.api_key is not None:
                    given = self.headers.get("Authorization", "").removeprefix("Bearer ")
                    if given != server.api_key:
                        # Like the real API, the message quotes the key it was given.
                        message = f"Incorrect API key provided: {given}"
                        with server._lock:
                            server.statuses[401] += 1
                        self._send(401, {"error": {"message": message, "type": "auth"}})
                        return
                body = json.loads(raw or b"{}")
                users = [m["content"] for m in body.get("messages", []) if m["role"] == "user"]
                prompt = users[-1] if users else ""
                with server._lock:
                    server.calls[prompt] += 1
                    server.arrivals[prompt].append(time.monotonic())
                    server.bodies[prompt].append(body)
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                self._in_flight = True
                try:
                    self._serve(prompt, body)
                finally:
                    self._leave()

            def _serve(self, prompt: str, body: dict):
                step = server._next_step(prompt)
                kind, _, arg = step.partition(":")
                if kind == "429":
                    self._status(429, "rate limited", {"Retry-After": arg or "1"})
                    return
                if kind.isdigit():
                    self._status(int(kind), "scripted failure")
                    return
                if kind == "html":
                    self._send_html()
                    return
                if kind == "filter-prompt":
                    with server._lock:
                        server.statuses[400] += 1
                    error = {
                        "message": "The prompt triggered the content management policy.",
                        "type": None,
                        "param": "prompt",
                        "code": "content_filter",
                    }
                    self._send(400, {"error": error})
                    return
                if kind == "redirect":
                    target = f"http://127.0.0.1:{server.port}/elsewhere/v1/chat/completions"
                    self._status(int(arg), "moved", {"Location": target})
                    return
                server.gate.wait()
                time.sleep(float(arg) if kind == "stall" else server.latency)
                model = body.get("model", "")
                text = answer_text(prompt, model)
                if "response_format" in body or "structured_outputs" in body:
                    status, text = server._shaped_text(body)
                    if status != 200:
                        self._status(status, text)
                        return
                n_prompt = sum(len(m["content"].split()) for m in body.get("messages", []))
                cap = body.get("max_completion_tokens") or body.get("max_tokens")
                words = text.split()
                finish = "stop"
                if cap is not None and len(words) > cap:
                    words, finish = words[:cap], "length"
                if kind == "cut":
                    words, finish = words[: max(1, len(words) // 2)], "length"
                message = {"role": "assistant", "content": " ".join(words)}
                if kind == "surrogate":
                    message["content"] += " \ud800"
                if kind == "echo-key":  # a server that quotes the request's credentials back
                    message["content"] += " " + self.headers.get("Authorization", "")
                if kind in ("filter", "filter-text"):
                    finish = "content_filter"
                if kind in ("filter", "null", "refuse"):
                    message["content"] = None
                if kind == "refuse":
                    message["refusal"] = REFUSAL
                if kind == "content-list":
                    half = len(message["content"]) // 2
                    text = message["content"]
                    message["content"] = [
                        {"type": "text", "text": text[:half]},
                        {"type": "text", "text": text[half:]},
                    ]
                if kind == "content-number":
                    message["content"] = 42
                if kind == "long":
                    message["content"] = "x" * int(arg)
                if kind == "other-model":
                    model = "another-model-entirely"
                payload = {
                    "id": f"chatcmpl-{server.calls[prompt]}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": model,
                    "choices": [
                        {
                            "index": 0,
                            "message": message,
                            "finish_reason": finish,
                        }
                    ],
                    "usage": {
                        "prompt_tokens": n_prompt,
                        "completion_tokens": len(words),
                        "total_tokens": n_prompt + len(words),
                    },
                }
                if kind == "no-usage":
                    del payload["usage"]
                if kind in ("torn", "drop"):
                    self._send_torn(payload, promise_all=kind == "drop")
                    return
                if kind in ("usage", "gzip", "trickle"):
                    self._send_raw(kind, arg, payload)
                    with server._lock:
                        server.statuses[200] += 1
                    return
                if self._send(200, payload):
                    with server._lock:
                        server.answered[prompt] += 1
                        server.statuses[200] += 1

            def _send_torn(self, payload: dict, promise_all: bool):
                body = json.dumps(payload).encode()
                half = body[: len(body) // 2]
                self._leave()
                with server._lock:
                    server.statuses[200] += 1
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body) if promise_all else len(half)))
                self.end_headers()
                self.wfile.write(half)
                self.wfile.flush()
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

            def _send_raw(self, kind: str, arg: str, payload: dict):
                """A body written by hand: usage numbers as written, gzip, or a trickle."""
                body = json.dumps(payload).encode()
                headers = {}
                if kind == "usage":
                    payload["usage"] = "USAGE"
                    counts = f'{{"prompt_tokens": {arg}, "completion_tokens": {arg}}}'
                    body = json.dumps(payload).replace('"USAGE"', counts).encode()
                if kind == "gzip":
                    payload["choices"][0]["message"]["content"] = "SPACES"
                    head, tail = json.dumps(payload).encode().split(b"SPACES")
                    buffer = io.BytesIO()
                    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=9) as out:
                        out.write(head)
                        for _ in range(int(arg) // 1_000_000):
                            out.write(b" " * 1_000_000)
                        out.write(tail)
                    body = buffer.getvalue()
                    headers["Content-Encoding"] = "gzip"
                self._leave()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    if kind != "trickle":
                        self.wfile.write(body)
                        return
                    for i in range(len(body)):
                        self.wfile.write(body[i : i + 1])
                        self.wfile.flush()
                        time.sleep(float(arg))
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up

            def _send_html(self):
                body = b"<html><body><h1>Sign in to continue</h1></body></html>"
                self._leave()
                with server._lock:
                    server.statuses[200] += 1
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _status(self, status: int, message: str, headers: dict | None = None):
                with server._lock:
                    server.statuses[status] += 1
                self._send(status, {"error": {"message": message, "type": "fake"}}, headers)

        return Handler


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--rate-429", type=float, default=0.0)
    parser.add_argument("--retry-after", type=float, default=0.2)
    parser.add_argument("--api-key", default=None)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    server = FakeOpenAIServer(
        latency=args.latency,
        api_key=args.api_key,
        rate_429=args.rate_429,
        retry_after_429=args.retry_after,
        port=args.port,
    )
    print(f"PORT {server.port}", flush=True)
    try:
        server._httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
