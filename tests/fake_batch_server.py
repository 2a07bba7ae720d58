"""The files and batches endpoints of an OpenAI-compatible server, for tests (a stand-in for the
paid API's Batch API; issue #29).

``FakeBatchServer`` is :class:`FakeOpenAIServer` (chat completions as before) plus:

- ``POST /v1/files`` (multipart upload), ``GET /v1/files``, ``GET /v1/files/{id}``,
  ``GET /v1/files/{id}/content``, ``DELETE /v1/files/{id}``;
- ``POST /v1/batches``, ``GET /v1/batches`` (list), ``GET /v1/batches/{id}``,
  ``POST /v1/batches/{id}/cancel``.

The test drives each batch's state machine: every retrieve (of any batch) moves every batch one
step, so a batch nobody asks about (one its client lost track of) is still run and billed:
``validating`` -> ``in_progress`` -> its end, which its plan decides (``plans`` is consumed one
plan per created batch, then ``default_plan``):

- ``"complete"``: every line answered (``completed``);
- ``"expire:K"``: the first K lines answered, then ``expired``;
- ``"cancel:K"``: the first K lines answered, then ``cancelled`` (cancelled on the provider's side);
- ``"fail"``: ``failed`` at validation (no line answered);
- ``"hold"``: stays ``in_progress`` until the test changes ``plan_of[id]``.

Validation refuses a batch (status ``failed``, ``errors.data[0].code``) whose input repeats a
``custom_id`` (``duplicate_custom_id``), has more than ``max_lines`` lines or ``max_bytes`` bytes
(``too_many_lines`` / ``file_too_large``), or whose tokens (prompt words plus ``max_tokens`` of
each line) with those of the batches in progress exceed ``enqueued_token_limit``
(``token_limit_exceeded``). A prompt in ``line_errors`` is answered in the error file with that
message (HTTP 400 in the line). A prompt in ``spoilt`` is answered with a broken line:
``"no-usage"`` (no ``usage``), ``"content-number"`` (``content: 42``) or ``"long:N"`` (an answer
of N characters). Each answered line is billed once per answer: ``billed`` counts
answers per ``custom_id``; a batch's ``usage`` sums its lines' tokens.
"""

from __future__ import annotations

import email.parser
import email.policy
import itertools
import json
import threading
import time
from collections import defaultdict
from urllib.parse import parse_qs, urlparse

from fake_openai_server import FakeOpenAIServer, answer_text

ACTIVE = ("validating", "in_progress", "finalizing", "cancelling")


def line_answer(body: dict) -> tuple[str, dict]:
    """(prompt, chat completion) of one batch line's body, as the synchronous route answers."""
    users = [m["content"] for m in body.get("messages", []) if m["role"] == "user"]
    prompt = users[-1] if users else ""
    model = body.get("model", "")
    words = answer_text(prompt, model).split()
    cap = body.get("max_completion_tokens") or body.get("max_tokens")
    finish = "stop"
    if cap is not None and len(words) > cap:
        words, finish = words[:cap], "length"
    n_prompt = sum(len(m["content"].split()) for m in body.get("messages", []))
    completion = {
        "id": "chatcmpl-batch",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": " ".join(words)},
                "finish_reason": finish,
            }
        ],
        "usage": {
            "prompt_tokens": n_prompt,
            "completion_tokens": len(words),
            "total_tokens": n_prompt + len(words),
        },
    }
    return prompt, completion


def line_tokens(body: dict) -> int:
    prompt = sum(len(m["content"].split()) for m in body.get("messages", []))
    return prompt + int(body.get("max_completion_tokens") or body.get("max_tokens") or 0)


class FakeBatchServer(FakeOpenAIServer):
    def __init__(
        self, *args, max_lines=1000, max_bytes=10_000_000, enqueued_token_limit=None, **kw
    ):
        self.max_lines, self.max_bytes = max_lines, max_bytes
        self.enqueued_token_limit = enqueued_token_limit
        self.plans: list[str] = []
        self.default_plan = "complete"
        self.line_errors: dict[str, str] = {}
        self.spoilt: dict[str, str] = {}
        self.files: dict[str, dict] = {}
        self.batches: dict[str, dict] = {}
        self.plan_of: dict[str, str] = {}
        self.lines_of: dict[str, list[dict]] = {}
        self.billed: dict[str, int] = defaultdict(int)
        self.refused: list[str] = []  # error codes of batches refused at validation
        self._ids = itertools.count(1)
        self._batch_lock = threading.RLock()
        super().__init__(*args, **kw)

    # -- state ------------------------------------------------------------------------------
    def _new_id(self, prefix: str) -> str:
        return f"{prefix}-{next(self._ids):04d}"

    def _add_file(self, data: bytes, purpose: str, filename: str) -> dict:
        fid = self._new_id("file")
        self.files[fid] = {
            "id": fid,
            "object": "file",
            "bytes": len(data),
            "created_at": int(time.time()),
            "filename": filename,
            "purpose": purpose,
            "data": data,
        }
        return self._file_view(fid)

    def _file_view(self, fid: str) -> dict:
        return {k: v for k, v in self.files[fid].items() if k != "data"}

    def _create_batch(self, body: dict) -> tuple[int, dict]:
        fid = body.get("input_file_id")
        if fid not in self.files:
            return 404, {"error": {"message": f"no file {fid}", "type": "invalid_request_error"}}
        bid = self._new_id("batch")
        self.plan_of[bid] = self.plans.pop(0) if self.plans else self.default_plan
        lines = [json.loads(x) for x in self.files[fid]["data"].decode().splitlines() if x]
        self.lines_of[bid] = lines
        self.batches[bid] = {
            "id": bid,
            "object": "batch",
            "endpoint": body.get("endpoint"),
            "completion_window": body.get("completion_window"),
            "input_file_id": fid,
            "status": "validating",
            "created_at": int(time.time()),
            "metadata": body.get("metadata"),
            "errors": None,
            "output_file_id": None,
            "error_file_id": None,
            "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
            "usage": None,
        }
        return 200, self.batches[bid]

    def _refusal(self, bid: str) -> str | None:
        lines, data = self.lines_of[bid], self.files[self.batches[bid]["input_file_id"]]["data"]
        ids = [x.get("custom_id") for x in lines]
        if len(ids) != len(set(ids)):
            return "duplicate_custom_id"
        if len(lines) > self.max_lines:
            return "too_many_lines"
        if len(data) > self.max_bytes:
            return "file_too_large"
        if self.enqueued_token_limit is not None:
            queued = sum(
                line_tokens(x["body"])
                for other, b in self.batches.items()
                if other != bid and b["status"] in ("in_progress", "finalizing")
                for x in self.lines_of[other]
            )
            if queued + sum(line_tokens(x["body"]) for x in lines) > self.enqueued_token_limit:
                return "token_limit_exceeded"
        return None

    def advance(self, bid: str) -> None:
        """One step of a batch's state machine (each retrieve makes one for every batch)."""
        batch = self.batches[bid]
        plan, _, arg = self.plan_of[bid].partition(":")
        if batch["status"] == "validating":
            code = "failed" if plan == "fail" else self._refusal(bid)
            if code:
                self.refused.append(code)
                batch["status"], batch["failed_at"] = "failed", int(time.time())
                message = f"batch refused: {code}"
                batch["errors"] = {"object": "list", "data": [{"code": code, "message": message}]}
            else:
                batch["status"] = "in_progress"
        elif batch["status"] == "in_progress" and plan != "hold":
            end = {"complete": "completed", "expire": "expired", "cancel": "cancelled"}[plan]
            self._finish(bid, end, None if plan == "complete" else int(arg))
        elif batch["status"] == "cancelling":
            self._finish(bid, "cancelled", 0)

    def _finish(self, bid: str, status: str, done: int | None) -> None:
        batch, lines = self.batches[bid], self.lines_of[bid]
        out, err = [], []
        usage = {"input_tokens": 0, "output_tokens": 0}
        for line in lines[:done] if done is not None else lines:
            prompt, completion = line_answer(line["body"])
            row = {"id": self._new_id("req"), "custom_id": line["custom_id"], "error": None}
            if prompt in self.line_errors:
                error = {"message": self.line_errors[prompt], "type": "invalid_request_error"}
                row["response"] = {"status_code": 400, "body": {"error": error}}
                err.append(row)
                continue
            counts = completion["usage"]
            kind, _, arg = self.spoilt.get(prompt, "").partition(":")
            if kind == "no-usage":
                del completion["usage"]
            if kind == "content-number":
                completion["choices"][0]["message"]["content"] = 42
            if kind == "long":
                completion["choices"][0]["message"]["content"] = "x" * int(arg)
            row["response"] = {"status_code": 200, "request_id": row["id"], "body": completion}
            out.append(row)
            self.billed[line["custom_id"]] += 1
            usage["input_tokens"] += counts["prompt_tokens"]
            usage["output_tokens"] += counts["completion_tokens"]
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
        batch.update(status=status, usage=usage)
        batch[f"{status}_at"] = int(time.time())
        batch["request_counts"] = {"total": len(lines), "completed": len(out), "failed": len(err)}
        for rows, field in ((out, "output_file_id"), (err, "error_file_id")):
            if rows:
                data = "".join(json.dumps(r) + "\n" for r in rows).encode()
                batch[field] = self._add_file(data, "batch_output", f"{bid}_{field}.jsonl")["id"]

    def usage_totals(self) -> dict:
        """Tokens of every batch's usage."""
        totals = {"input_tokens": 0, "output_tokens": 0}
        for batch in self.batches.values():
            for key in totals:
                totals[key] += (batch["usage"] or {}).get(key, 0)
        return totals

    # -- HTTP ------------------------------------------------------------------------------
    def _handler_class(self):
        server = self
        base = super()._handler_class()

        class Handler(base):
            def _route(self, method: str, raw: bytes = b"") -> bool:
                url = urlparse(self.path)
                parts = url.path.strip("/").split("/")
                if parts[:2] not in (["v1", "files"], ["v1", "batches"]):
                    return False
                given = self.headers.get("Authorization", "").removeprefix("Bearer ")
                if server.api_key is not None and given != server.api_key:
                    self._send(401, {"error": {"message": "Incorrect API key provided"}})
                    return True
                with server._batch_lock:
                    status, payload = server._serve_batch_api(method, parts[1:], raw, self, url)
                if isinstance(payload, bytes):
                    self.send_response(status)
                    self.send_header("Content-Type", "application/octet-stream")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                else:
                    self._send(status, payload)
                return True

            def do_GET(self):
                if not self._route("GET"):
                    super().do_GET()

            def do_DELETE(self):
                if not self._route("DELETE"):
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self):
                if not (self.path.startswith("/v1/files") or self.path.startswith("/v1/batches")):
                    super().do_POST()
                    return
                length = int(self.headers.get("Content-Length") or 0)
                self._route("POST", self.rfile.read(length))

        return Handler

    def _serve_batch_api(self, method, parts, raw, handler, url):
        missing = 404, {"error": {"message": f"no such object: {'/'.join(parts)}"}}
        kind = parts[0]
        if kind == "files":
            if method == "POST" and len(parts) == 1:
                form = _multipart(handler.headers["Content-Type"], raw)
                data, filename = form["file"]
                if len(data) > self.max_bytes:
                    return 400, {"error": {"message": "file too large", "code": "file_too_large"}}
                return 200, self._add_file(data, form["purpose"][0].decode(), filename)
            if method == "GET" and len(parts) == 1:
                purpose = parse_qs(url.query).get("purpose", [None])[0]
                views = [self._file_view(f) for f in self.files]
                views = [v for v in views if purpose in (None, v["purpose"])]
                return 200, {"object": "list", "data": views, "has_more": False}
            if len(parts) < 2 or parts[1] not in self.files:
                return missing
            if method == "DELETE":
                del self.files[parts[1]]
                return 200, {"id": parts[1], "object": "file", "deleted": True}
            if len(parts) == 3 and parts[2] == "content":
                return 200, self.files[parts[1]]["data"]
            return 200, self._file_view(parts[1])
        if method == "POST" and len(parts) == 1:
            return self._create_batch(json.loads(raw or b"{}"))
        if method == "GET" and len(parts) == 1:
            after = parse_qs(url.query).get("after", [None])[0]
            ids = list(reversed(self.batches))  # newest first, as OpenAI lists them
            ids = ids[ids.index(after) + 1 :] if after in self.batches else ids
            page = [self.batches[b] for b in ids[:3]]  # small pages: the client must paginate
            last = page[-1]["id"] if page else None
            return 200, {
                "object": "list",
                "data": page,
                "first_id": page[0]["id"] if page else None,
                "last_id": last,
                "has_more": len(ids) > 3,
            }
        if len(parts) < 2 or parts[1] not in self.batches:
            return missing
        bid = parts[1]
        if method == "POST" and len(parts) == 3 and parts[2] == "cancel":
            if self.batches[bid]["status"] in ACTIVE:
                self.batches[bid]["status"] = "cancelling"
            return 200, self.batches[bid]
        for each in list(self.batches):  # the provider works on every batch, asked or not
            self.advance(each)
        return 200, self.batches[bid]


def _multipart(content_type: str, raw: bytes) -> dict[str, tuple]:
    """Fields of a multipart/form-data body: name -> (bytes, filename)."""
    head = f"Content-Type: {content_type}\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + raw)
    fields = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        fields[name] = (part.get_payload(decode=True), part.get_filename())
    return fields
