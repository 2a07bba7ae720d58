"""Give each local GPU job its own card(s).

Snakemake counts GPUs (``--resources gpu=N``) but does not say which card a job gets, so two
local `generate` jobs would both load onto device 0. Before the model is loaded, a job that asks
for ``gpu > 0`` and runs locally takes an exclusive ``flock`` on one lock file per device it will
use and exports ``CUDA_VISIBLE_DEVICES`` to exactly those devices. The kernel drops the locks when
the job ends, however it ends, so a killed job never leaves a card taken.

Jobs inside SLURM are left alone: SLURM sets ``CUDA_VISIBLE_DEVICES`` to the cards it allocated.

Settings (environment variables):
  ONCOEVAL_GPUS            devices to share out, e.g. "0,1,3" (default: the parent's
                           CUDA_VISIBLE_DEVICES, else every card nvidia-smi lists)
  ONCOEVAL_GPU_LOCK_DIR    where the lock files live (default: <tmp>/oncoeval-gpu-slots; one
                           folder per machine, so separate runs share the same cards fairly)
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

log = logging.getLogger(__name__)


def runs_under_slurm(env: dict | None = None) -> bool:
    env = os.environ if env is None else env
    return bool(env.get("SLURM_JOB_ID"))


def local_devices(env: dict | None = None) -> list[str]:
    """Device ids this machine offers to local jobs (without initialising CUDA)."""
    env = os.environ if env is None else env
    for var in ("ONCOEVAL_GPUS", "CUDA_VISIBLE_DEVICES"):
        value = env.get(var)
        if value is not None:
            return [d.strip() for d in value.split(",") if d.strip() and d.strip() != "-1"]
    if shutil.which("nvidia-smi"):
        try:
            out = subprocess.run(
                ["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                timeout=30,
                check=True,
            ).stdout
            return [line.strip() for line in out.splitlines() if line.strip()]
        except (OSError, subprocess.SubprocessError) as exc:
            log.warning("nvidia-smi failed (%s); assuming no local GPU", exc)
    return []


def default_lock_dir(env: dict | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(
        env.get("ONCOEVAL_GPU_LOCK_DIR") or Path(tempfile.gettempdir(), "oncoeval-gpu-slots")
    )


def _try_lock(path: Path):
    # Read-only is enough for flock, and lets another user's job lock a file this user created.
    fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o666)
    with contextlib.suppress(OSError):
        os.fchmod(fd, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


@contextlib.contextmanager
def claim(
    n: int,
    devices: list[str],
    lock_dir: str | os.PathLike,
    timeout_s: float | None = None,
    poll_s: float = 1.0,
) -> Iterator[list[str]]:
    """Hold ``n`` of ``devices`` exclusively (across processes) for the ``with`` block.

    Waits while all are taken (up to ``timeout_s``; None waits for ever, logging each minute).
    """
    if n > len(devices):
        raise RuntimeError(
            f"this job asks for {n} GPU(s) but only {len(devices)} are available locally "
            f"({','.join(devices) or 'none'}); lower the model's resources.gpu or set ONCOEVAL_GPUS"
        )
    lock_dir = Path(lock_dir)
    lock_dir.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        lock_dir.chmod(0o1777)  # shared by every user's runs on this machine
    started = last_note = time.monotonic()
    while True:
        held: dict[str, int] = {}
        for dev in devices:
            fd = _try_lock(lock_dir / f"gpu{dev}.lock")
            if fd is not None:
                held[dev] = fd
                if len(held) == n:
                    break
        if len(held) == n:
            break
        for fd in held.values():
            os.close(fd)  # closing drops the lock
        now = time.monotonic()
        if timeout_s is not None and now - started > timeout_s:
            raise TimeoutError(f"no {n} free GPU(s) among {devices} after {timeout_s:.0f} s")
        if now - last_note > 60:
            log.info("waiting for %d free GPU(s) among %s (%.0f s)", n, devices, now - started)
            last_note = now
        time.sleep(poll_s)
    try:
        yield list(held)
    finally:
        for fd in held.values():
            os.close(fd)


@contextlib.contextmanager
def local_gpu_slot(n: int, env: dict | None = None) -> Iterator[list[str] | None]:
    """Export CUDA_VISIBLE_DEVICES for a local job that asks for ``n`` GPUs, for the block.

    Yields the devices given, or None when nothing was changed (no GPU asked for, a SLURM job,
    or a machine without GPUs, where the backend then runs on the CPU).
    """
    env = os.environ if env is None else env
    if n <= 0 or runs_under_slurm(env):
        yield None
        return
    devices = local_devices(env)
    if not devices:
        log.warning("job asks for %d GPU(s) but this machine shows none; running without", n)
        yield None
        return
    with claim(n, devices, default_lock_dir(env)) as mine:
        previous = env.get("CUDA_VISIBLE_DEVICES")
        env["CUDA_VISIBLE_DEVICES"] = ",".join(mine)
        log.info("local GPU slot: CUDA_VISIBLE_DEVICES=%s", env["CUDA_VISIBLE_DEVICES"])
        try:
            yield mine
        finally:
            if previous is None:
                env.pop("CUDA_VISIBLE_DEVICES", None)
            else:
                env["CUDA_VISIBLE_DEVICES"] = previous
