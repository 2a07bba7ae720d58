"""The benchmarks' local OpenAI-compatible server, run as its own process.

The server is tests/fake_openai_server.py (a test double for the paid API). It runs in a separate
process so that its request handling does not share a GIL with the client being measured.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SERVER = REPO / "tests" / "fake_openai_server.py"
# Parts of the repository a workflow run needs (as tests/conftest.py links them).
WORKFLOW_PARTS = (
    "Snakefile",
    "rules",
    "scripts",
    "config",
    "resources",
    "envs",
    "profiles",
    "report",
)


class ServerProcess:
    def __init__(self, latency: float, rate_429: float = 0.0, retry_after: float = 0.2):
        args = ["--latency", str(latency), "--rate-429", str(rate_429)]
        args += ["--retry-after", str(retry_after)]
        self.proc = subprocess.Popen(
            [sys.executable, str(SERVER), *args], stdout=subprocess.PIPE, text=True
        )
        line = self.proc.stdout.readline().split()
        if line[:1] != ["PORT"]:
            self.proc.kill()
            raise RuntimeError(f"the fake server did not start: {line}")
        self.port = int(line[1])
        self.url = f"http://127.0.0.1:{self.port}/v1"

    def stats(self) -> dict:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/stats") as resp:
            return json.loads(resp.read())

    def reset(self) -> None:
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/reset", data=b"{}")
        urllib.request.urlopen(req).read()

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def make_workdir(path: Path) -> Path:
    """Link the workflow's parts into ``path`` (made if missing) so that Snakemake runs there."""
    path.mkdir(parents=True, exist_ok=True)
    for part in WORKFLOW_PARTS:
        if (REPO / part).exists():
            (path / part).symlink_to(REPO / part)
    return path


def write_requests(path: Path, n: int, prefix: str = "prompt") -> None:
    with open(path, "w") as handle:
        for i in range(n):
            row = {
                "request_id": f"r{i:04d}",
                "messages": [{"role": "user", "content": f"{prefix} {i}"}],
                "params": {"temperature": 0, "max_new_tokens": 16},
            }
            handle.write(json.dumps(row) + "\n")
