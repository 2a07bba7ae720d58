"""What `make run` shows in the terminal: progress, failures with their cure, and the results.

Snakemake prints a block per job (rule, input, output, log, resources...) and, for a failed job,
its whole log with the traceback. All of that goes, whole and in order, to a log file under
``logs/runs/`` whose path is printed when Snakemake starts and ends; the terminal gets one
progress line per finished job, each failed job's rule, log and last message (the message alone:
a script's own errors end their log with it, oncoeval.core.io.report_uncaught), the workflow's own
lines (scope, failed calls and their cures, results) and whatever Snakemake says that is not job
bookkeeping, every line folded to :data:`WIDTH` columns.

    python -m oncoeval.workflow.terminal [--log-dir logs/runs] -- snakemake --cores 2 ...
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

WIDTH = 100

# Snakemake's bookkeeping (9.x): kept in the log file, not shown.
HIDDEN = re.compile(
    r"^("
    r"Using workflow specific profile|Assuming unrestricted shared filesystem|Building DAG of jobs"
    r"|Using shell:|Provided cores:|Rules claiming more threads|Provided resources:"
    r"|Conda environments:|Singularity containers:|Select jobs to execute|Execute \d+ jobs"
    r"|Shell command:|RuleException:|CalledProcessError in file|Command '.*returned non-zero"
    r"|Shutting down, this might take some time|Exiting because a job execution failed"
    r"|Complete log\(s\):|Elapsed time:|WorkflowError:\s*$|At least one job did not complete"
    r"|Removing output files of failed job|Touching output file|Waiting at most"
    r"|Submitted (group )?job|host:|Resources (before|after) job selection|Ready jobs"
    r"|Using greedy selector|Selected jobs|Storing output in storage|Job stats:"
    r"|Will exit after finishing currently running jobs|Cleanup|Using default storage"
    r")"
)
# Where in the workflow's code Snakemake caught an error (the error's own message follows).
CODE_PLACE = re.compile(r'^(\s*File ".*", line \d+|\w+ in file ".*", line \d+:$)')
TIMESTAMP = re.compile(r"^\[\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4}\]$")
JOB_BLOCK = re.compile(r"^(local)?(rule|checkpoint) \S+:$")
ERROR_BLOCK = re.compile(r"^Error in rule (\S+):$")
FINISHED = re.compile(r"^Finished jobid: (\d+) \(Rule: (\S+)\)")
PROGRESS = re.compile(r"^(\d+) of (\d+) steps \((\d+%)\) done$")
PROGRESS_SHOWN = re.compile(r"^\[\d+/\d+ jobs, \d+%\]")
STATS_ROW = re.compile(r"^(\S+)\s+(\d+)$")


def fold(line: str, width: int = WIDTH) -> list[str]:
    """``line`` in lines of at most ``width`` columns, continuations indented two more."""
    if len(line) <= width:
        return [line]
    indent = line[: len(line) - len(line.lstrip())]
    return textwrap.wrap(
        line.strip(),
        width=width,
        initial_indent=indent,
        subsequent_indent=indent + "  ",
        break_long_words=True,
        break_on_hyphens=False,
    ) or [line[:width]]


def last_message(log_path: str | None) -> str | None:
    """A failed job's last word: the last line of its log that is no traceback frame or
    progress bar (a script's error, with or without the traceback above it)."""
    if not log_path:
        return None
    try:
        lines = Path(log_path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        text = line.rsplit("\r", 1)[-1].strip()
        if text and not text.startswith(("File ", "^", "~", "Traceback", "=")):
            return text
    return None


class Screen:
    """Snakemake's output lines in, the terminal's lines out (:meth:`feed`, :meth:`close`)."""

    def __init__(self, width: int = WIDTH, started: float | None = None):
        self.width = width
        self.started = time.time() if started is None else started
        self.block: str | None = None  # "job", "error", "logfile" or "stats" while inside one
        self.failed_rule: str | None = None
        self.failed_fields: dict[str, str] = {}
        self.finished_rule: str | None = None
        self.job_fields: dict[str, str] = {}  # of the job block being read
        self.job_labels: dict[str, str] = {}  # jobid -> its wildcards, for the progress line
        self.jobs: dict[str, int] = {}
        self.log_open = False  # inside the ===== lines of a printed job log

    def feed(self, line: str) -> list[str]:
        line = line.rstrip("\n")
        out = self._inside_block(line)
        if out is not None:
            return out
        if line == "SNAKEMAKE":  # the run's header (date, host, versions, command)
            self.block = "job"
            return []
        if (
            not line.strip()
            or HIDDEN.match(line)
            or TIMESTAMP.match(line)
            or CODE_PLACE.match(line)
        ):
            if line.startswith("Job stats:"):
                self.block, self.jobs = "stats", {}
            return []
        if JOB_BLOCK.match(line):
            self.block, self.job_fields = "job", {}
            return []
        match = ERROR_BLOCK.match(line)
        if match:
            self.block, self.failed_rule, self.failed_fields = "error", match.group(1), {}
            return []
        if line.startswith("Logfile "):
            if line.rstrip().endswith(":"):
                self.block = "logfile"  # the failed job's whole log: in the log file only
            return []
        match = FINISHED.match(line)
        if match:
            jobid, rule = match.groups()
            label = self.job_labels.pop(jobid, None)
            self.finished_rule = f"{rule} ({label})" if label else rule
            return []
        match = PROGRESS.match(line)
        if match:
            done, total, pct = match.groups()
            rule = f": {self.finished_rule}" if self.finished_rule else ""
            # One line, so that a terminal can rewrite it in place.
            text = f"[{done}/{total} jobs, {pct}]{rule}"
            return [textwrap.shorten(text, self.width, placeholder=" ...")]
        return fold(line, self.width)

    def _inside_block(self, line: str) -> list[str] | None:
        """Lines of the block being read (None once the block has ended at ``line``)."""
        if self.block == "job":
            if line.startswith((" ", "\t")) or set(line) == {"="}:
                key, _, value = line.strip().partition(": ")
                self.job_fields[key] = value
                return []
            self.block = None
            if "jobid" in self.job_fields and "wildcards" in self.job_fields:
                self.job_labels[self.job_fields["jobid"]] = self.job_fields["wildcards"]
        elif self.block == "error":
            if line.startswith((" ", "\t")):
                key, _, value = line.strip().partition(":")
                self.failed_fields[key] = value.strip()
                return []
            self.block = None
            return self._failed_job() + (self.feed(line) if line.strip() else [])
        elif self.block == "logfile":
            if line.startswith("=" * 20):
                if self.log_open:
                    self.block = None
                self.log_open = not self.log_open
            return []
        elif self.block == "stats":
            row = STATS_ROW.match(line.strip())
            if line.startswith(("job ", "---")) or (row and row.group(1) != "total"):
                if row:
                    self.jobs[row.group(1)] = int(row.group(2))
                return []
            self.block = None
            # The table ends at its total row (or, cut short, at any other line).
            return self._job_count() + ([] if row else self.feed(line))
        return None

    def _job_count(self) -> list[str]:
        total = sum(self.jobs.values())
        models = self.jobs.get("generate", 0)
        return [f"Snakemake: {total} jobs to run ({models} of them call a model)"]

    def _failed_job(self) -> list[str]:
        log = self.failed_fields.get("log", "").split(" (check log")[0].strip() or None
        wildcards = self.job_labels.get(self.failed_fields.get("jobid", ""))
        job = f"{self.failed_rule} ({wildcards})" if wildcards else self.failed_rule
        where = f"; log: {log}" if log else ""
        stated = self.failed_fields.get("message")
        self.failed_rule, self.failed_fields = None, {}
        if self._calls_recorded(log):
            # A job that stopped on failed calls: the end of the run lists them with their cures.
            return fold(f"Failed: rule {job}: failed calls, listed below with their cure{where}")
        out = fold(f"Failed: rule {job}{where}", self.width)
        message = last_message(log) or stated
        if message and message != "None":
            out += fold(f"  {message}", self.width)
        return out

    def _calls_recorded(self, log: str | None) -> bool:
        """Whether the failed job is a `generate` job that recorded its calls in this run."""
        from .calls import outcome_path_for

        if not log:
            return False
        outcome = outcome_path_for(log)
        # A second's margin: file times and the clock may round differently.
        return outcome.exists() and outcome.stat().st_mtime >= self.started - 1

    def close(self) -> list[str]:
        """What is still held when the output ends (an error block at its very end)."""
        if self.block == "error":
            self.block = None
            return self._failed_job()
        return []


class Terminal:
    """Writes the screen's lines; on a terminal the progress line is rewritten in place (in a
    file or a pipe, one line per job)."""

    def __init__(self, out):
        self.out = out
        self.in_place = out.isatty()
        self.pending = False  # a progress line waits on the terminal without its newline

    def show(self, lines: list[str]) -> None:
        for line in lines:
            if self.in_place and PROGRESS_SHOWN.match(line):
                self.out.write("\r\033[K" + line)
                self.pending = True
            else:
                self.out.write(("\n" if self.pending else "") + line + "\n")
                self.pending = False
            self.out.flush()

    def end_line(self) -> None:
        """Ends a progress line left without its newline."""
        if self.pending:
            self.out.write("\n")
            self.out.flush()
            self.pending = False


def run(cmd: list[str], log_dir: str | Path = "logs/runs", out=None) -> int:
    """Run ``cmd`` (Snakemake), its whole output to a log file, the terminal's share to ``out``."""
    out = Terminal(out or sys.stdout)
    log_dir = Path(log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / (time.strftime("%Y-%m-%dT%H%M%S") + ".log")
    out.show([f"Snakemake's full log: {log_path}"])
    screen = Screen()
    with open(log_path, "w", encoding="utf-8") as log:
        proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
            errors="replace",
            bufsize=1,
        )
        while True:
            try:
                for line in proc.stdout:
                    log.write(line)
                    log.flush()
                    try:
                        out.show(screen.feed(line))
                    except Exception:  # noqa: BLE001 (a filter's defect must not hide the run)
                        out.show(fold(line.rstrip("\n"), screen.width))
                break
            except KeyboardInterrupt:
                # Ctrl-C reached Snakemake too: show how it stops, to its last line.
                continue
        out.end_line()
        out.show(screen.close())
        rc = proc.wait()
    if rc != 0:
        out.show([f"The run stopped (exit code {rc}); Snakemake's full log: {log_path}"])
    else:
        out.show([f"Snakemake's full log: {log_path}"])
    return rc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log-dir", default="logs/runs")
    parser.add_argument("cmd", nargs=argparse.REMAINDER, help="-- then the Snakemake command")
    args = parser.parse_args(argv)
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        parser.error("no command given (-- snakemake ...)")
    return run(cmd, args.log_dir)


if __name__ == "__main__":
    sys.exit(main())
