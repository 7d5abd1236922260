"""One process a GPU, without MPI: starts N ranks of a program (the NCCL test, example or
benchmark), each told its rank, the number of ranks, its device and a fresh file through which
rank 0 hands the ncclUniqueId to the others (examples/nccl/ranks.h reads them: AG_RANK, AG_RANKS,
AG_DEVICE, AG_NCCL_ID_FILE, AG_NCCL_TRANSPORT). NCCL_NVLS_ENABLE=0 in every child; `--transport
net` also turns NCCL's peer-to-peer and shared-memory transports off and forces its socket network.

Rank 0's output is passed through as it comes (every rank's, prefixed `[r] `, with --show all);
each rank's output is kept in a log (--log-dir) and shown, prefixed, where that rank fails. When a
rank fails or the timeout passes, the others are stopped (SIGTERM to their process groups, SIGKILL
after a grace). Exit status: 0 when every rank exits 0; else the first failing rank's (128 + the
signal for a signal), 124 on a timeout, 2 for bad arguments.

    python3 tests/gpu/nccl/launch.py -n 4 [--transport net] [--timeout S] -- PROGRAM [ARGS...]

Across hosts: run it on each host with --ranks (in all), --first (this host's first rank) and an
--id-file on a file system every host sees, a new path each job (see docs/across-gpus.md).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

# the network transport on one host: no NVLink/PCIe peer access, no shared memory, sockets only
NET_ENV = {"NCCL_P2P_DISABLE": "1", "NCCL_SHM_DISABLE": "1", "NCCL_NET": "Socket", "NCCL_IB_DISABLE": "1"}
TIMEOUT = 124


@dataclass
class Job:
    """What a launch runs: the command, which ranks here, where, over which transport."""

    command: list[str]
    local: int  # processes on this host
    ranks: int  # ranks in all
    first: int  # this host's first rank
    devices: list[int]
    transport: str
    id_file: Path
    log_dir: Path
    show_all: bool


@dataclass
class Proc:
    """A started rank: its process, its log and the thread copying its output."""

    rank: int
    popen: subprocess.Popen[bytes]
    log: Path
    reader: threading.Thread
    stopped: bool = False


def child_env(base: dict[str, str], job: Job, rank: int, device: int) -> dict[str, str]:
    """The environment of one rank: the caller's, its place in the job, multicast off."""
    env = dict(base)
    env.update(
        AG_RANK=str(rank),
        AG_RANKS=str(job.ranks),
        AG_DEVICE=str(device),
        AG_NCCL_ID_FILE=str(job.id_file),
        AG_NCCL_TRANSPORT=job.transport,
        NCCL_NVLS_ENABLE="0",
    )
    if job.transport == "net":
        env.update(NET_ENV)
    return env


def _pump(stream: IO[bytes], log: Path, echo: IO[str] | None, prefix: str) -> None:
    """Copies a child's output to its log, and to `echo` (line by line, prefixed) where given."""
    with log.open("wb") as f:
        for line in iter(stream.readline, b""):
            f.write(line)
            f.flush()
            if echo is not None:
                echo.write(prefix + line.decode(errors="replace"))
                echo.flush()
    stream.close()


def start(job: Job, out: IO[str], procs: list[Proc]) -> None:
    """Starts this host's ranks, each in a process group of its own, into `procs`."""
    for k in range(job.local):
        rank = job.first + k
        env = child_env(dict(os.environ), job, rank, job.devices[k])
        popen = subprocess.Popen(
            job.command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
        )
        assert popen.stdout is not None
        log = job.log_dir / f"rank{rank}.log"
        echo = out if job.show_all or rank == 0 else None
        prefix = f"[{rank}] " if job.show_all else ""
        reader = threading.Thread(target=_pump, args=(popen.stdout, log, echo, prefix), daemon=True)
        reader.start()
        procs.append(Proc(rank, popen, log, reader))


def stop(procs: Sequence[Proc], grace: float) -> None:
    """SIGTERM to every running rank's process group; SIGKILL to those left after `grace` s."""
    running = [p for p in procs if p.popen.poll() is None]
    for p in running:
        p.stopped = True
        _signal_group(p.popen, signal.SIGTERM)
    end = time.monotonic() + grace
    for p in running:
        try:
            p.popen.wait(max(0.0, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            _signal_group(p.popen, signal.SIGKILL)
            p.popen.wait()


def _signal_group(popen: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    try:
        os.killpg(popen.pid, sig)  # the child's own group (start_new_session): it and what it started
    except ProcessLookupError:
        pass


def status(code: int) -> int:
    """A child's return code as a shell exit status (a signal: 128 + its number)."""
    return 128 - code if code < 0 else code


def watch(procs: Sequence[Proc], timeout: float, grace: float) -> tuple[int, str]:
    """Waits for every rank; the first failure or the timeout stops the rest. (status, why)."""
    end = time.monotonic() + timeout
    while True:
        codes = [p.popen.poll() for p in procs]
        failed = [(p, c) for p, c in zip(procs, codes, strict=True) if c is not None and c != 0]
        if failed:
            p, c = failed[0]
            stop(procs, grace)
            return status(c), f"rank {p.rank} exited with {status(c)}"
        if all(c == 0 for c in codes):
            return 0, "every rank exited with 0"
        if time.monotonic() > end:
            stop(procs, grace)
            return TIMEOUT, f"timeout after {timeout:g} s"
        time.sleep(0.02)


def report(procs: Sequence[Proc], why: str, seconds: float, out: IO[str], show_all: bool) -> None:
    """The output of every rank that failed (prefixed), then one line: the exit codes."""
    for p in procs:
        p.reader.join(5)
        code = p.popen.returncode
        if code and not p.stopped and not (show_all or p.rank == 0):  # its output not passed through yet
            for line in p.log.read_text(errors="replace").splitlines()[-40:]:
                out.write(f"[{p.rank}] {line}\n")
    codes = " ".join("stopped" if p.stopped else str(status(p.popen.returncode)) for p in procs)
    out.write(f"launch: {why}; ranks {procs[0].rank}-{procs[-1].rank}: {codes} ({seconds:.1f} s)\n")
    out.flush()


def parse(argv: Sequence[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], prog="launch.py")
    ap.add_argument("-n", type=int, required=True, help="processes (ranks) on this host, one a GPU")
    ap.add_argument("--ranks", type=int, help="ranks in all, over every host (default: -n)")
    ap.add_argument("--first", type=int, default=0, help="this host's first rank (default 0)")
    ap.add_argument("--devices", help="the GPUs of this host's ranks, comma-separated (default 0..n-1)")
    ap.add_argument("--transport", choices=["default", "net"], default="default")
    ap.add_argument("--id-file", type=Path, help="where rank 0 writes the NCCL id (default: a fresh temporary file)")
    ap.add_argument("--log-dir", type=Path, help="keep each rank's output there as rank<R>.log")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds before every rank is stopped (900)")
    ap.add_argument("--grace", type=float, default=5.0, help="seconds from SIGTERM to SIGKILL (5)")
    ap.add_argument("--show", choices=["0", "all"], default="0", help="whose output to pass through as it comes")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- PROGRAM [ARGS...]")
    a = ap.parse_args(argv)
    a.command = a.command[1:] if a.command[:1] == ["--"] else a.command
    a.ranks = a.ranks if a.ranks is not None else a.n
    a.devices = [int(d) for d in a.devices.split(",")] if a.devices else list(range(a.n))
    if not a.command or a.n < 1 or len(a.devices) != a.n or not 0 <= a.first <= a.ranks - a.n:
        ap.error("needs a command, -n >= 1, one device a process, and 0 <= --first <= --ranks - n")
    return a


def main(argv: Sequence[str] | None = None, out: IO[str] = sys.stdout) -> int:
    try:
        a = parse(sys.argv[1:] if argv is None else argv)
    except SystemExit as e:
        return 2 if e.code else 0
    scratch = Path(tempfile.mkdtemp(prefix="ag-nccl-"))
    log_dir = a.log_dir or scratch
    log_dir.mkdir(parents=True, exist_ok=True)
    job = Job(a.command, a.n, a.ranks, a.first, a.devices, a.transport, a.id_file or scratch / "nccl-id",
              log_dir, a.show == "all")  # fmt: skip
    t0 = time.monotonic()
    procs: list[Proc] = []
    try:
        start(job, out, procs)
    except OSError as e:
        stop(procs, a.grace)
        out.write(f"launch: cannot start {job.command[0]}: {e.strerror}\n")
        shutil.rmtree(scratch, ignore_errors=True)
        return 2
    try:
        code, why = watch(procs, a.timeout, a.grace)
    except KeyboardInterrupt:
        stop(procs, a.grace)
        code, why = 130, "interrupted"
    report(procs, why, time.monotonic() - t0, out, job.show_all)
    shutil.rmtree(scratch, ignore_errors=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
