"""The one-process-a-GPU launcher (tests/gpu/nccl/launch.py) on the CPU: a stand-in rank
(nccl_dummy_rank.c, built on examples/nccl/ranks.h with a made-up id) checks the id handed over
by a file, the environment every rank gets, exit codes, a timeout, and a failing rank stopping the
others."""

import importlib.util
import io
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .util import REPO

spec = importlib.util.spec_from_file_location("nccl_launch", REPO / "tests" / "gpu" / "nccl" / "launch.py")
assert spec and spec.loader
launch = importlib.util.module_from_spec(spec)
sys.modules["nccl_launch"] = launch  # dataclasses look their module up
spec.loader.exec_module(launch)

CUDA_INCLUDE = Path("/usr/local/cuda/include")


@pytest.fixture(scope="module")
def dummy(tmp_path_factory):
    if not shutil.which("gcc") or not (CUDA_INCLUDE / "nccl.h").is_file():
        pytest.fail("needs gcc and nccl.h under /usr/local/cuda/include")
    exe = tmp_path_factory.mktemp("dummy") / "rank"
    src = REPO / "tests" / "cpu" / "nccl_dummy_rank.c"
    cc = ["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-isystem", str(CUDA_INCLUDE)]
    subprocess.run([*cc, "-o", str(exe), str(src)], check=True, capture_output=True, text=True)
    return str(exe)


def _run(*args):
    out = io.StringIO()
    t0 = time.monotonic()
    code = launch.main([str(a) for a in args], out)
    return code, out.getvalue(), time.monotonic() - t0


def _logs(d, n):
    return [(d / f"rank{r}.log").read_text() for r in range(n)]


def test_every_rank_reads_rank_0s_id(dummy, tmp_path):
    code, out, _ = _run("-n", 3, "--log-dir", tmp_path, "--", dummy, "late:0.3", "x")
    assert code == 0, out
    logs = _logs(tmp_path, 3)
    ids = {line.split(" id ")[1].split()[0] for line in logs}
    assert len(ids) == 1 and ids.pop().startswith("id-of-")  # rank 0's, read by the others after waiting
    for r, line in enumerate(logs):
        assert line.startswith(f"rank {r} of 3 device {r} ") and line.rstrip().endswith("args late:0.3 x")
    # rank 0's output passed through, the others' kept in their logs; the exit codes last
    assert out.startswith("rank 0 of 3") and "[1]" not in out
    assert out.splitlines()[-1].startswith("launch: every rank exited with 0; ranks 0-2: 0 0 0 (")


def test_the_environment_of_every_rank():
    job = launch.Job(["p"], 2, 4, 2, [5, 7], "net", Path("/x/id"), Path("/x"), False)
    env = launch.child_env({"NCCL_NVLS_ENABLE": "1", "KEEP": "y"}, job, 3, 7)
    assert env["AG_RANK"] == "3" and env["AG_RANKS"] == "4" and env["AG_DEVICE"] == "7"
    assert env["AG_NCCL_ID_FILE"] == "/x/id" and env["KEEP"] == "y"
    assert env["NCCL_NVLS_ENABLE"] == "0"  # multicast off, whatever the caller had
    assert env["NCCL_P2P_DISABLE"] == env["NCCL_SHM_DISABLE"] == env["NCCL_IB_DISABLE"] == "1"
    assert env["NCCL_NET"] == "Socket"
    default = launch.child_env({}, launch.Job(["p"], 1, 1, 0, [0], "default", Path("i"), Path("."), False), 0, 0)
    assert "NCCL_P2P_DISABLE" not in default and default["NCCL_NVLS_ENABLE"] == "0"


def test_the_transport_reaches_the_program(dummy, tmp_path):
    code, out, _ = _run("-n", 2, "--transport", "net", "--show", "all", "--devices", "1,0", "--", dummy)
    assert code == 0, out
    assert "[1] rank 1 of 2 device 0 " in out and "[0] rank 0 of 2 device 1 " in out
    assert out.count("transport net nvls 0 p2p 1 net Socket") == 2


def test_the_place_from_arguments_or_the_environment(dummy, tmp_path):
    def rank(*args, **env):
        env_ = {k: str(v) for k, v in env.items()}
        r = subprocess.run([dummy, *map(str, args)], env=env_, capture_output=True, text=True, timeout=20)
        return r.returncode, r.stdout + r.stderr

    # the arguments taken out of argv, the program's own left in order; the transport applied
    code, out = rank("--rank", 0, "--ranks", 1, "--id-file", tmp_path / "a", "x", "--transport", "net", "y")
    assert code == 0 and out.startswith("rank 0 of 1 device -1 id id-of-")
    assert out.rstrip().endswith("transport net nvls 0 p2p 1 net Socket procs args x y"), out
    # mpirun's or torchrun's variables give the rank, the size and the device, with an id file
    code, out = rank(OMPI_COMM_WORLD_RANK=0, OMPI_COMM_WORLD_SIZE=1, LOCAL_RANK=5, AG_NCCL_ID_FILE=tmp_path / "b")
    assert code == 0 and out.startswith("rank 0 of 1 device 5 id id-of-") and " procs " in out, out
    # ... but alone do not choose one process a rank
    code, out = rank(RANK=3, WORLD_SIZE=4)
    assert code == 0 and " nvls 0 " in out and " threads " in out, out
    code, out = rank(AG_RANK=1)
    assert code == 2 and "needs a rank in [0, ranks), ranks and an id file" in out
    code, out = rank("--rank", 0, "--ranks", 1, "--id-file", tmp_path / "c", "--transport", "nvlink")
    assert code == 2 and "--transport: 'default' or 'net', not 'nvlink'" in out


def test_a_failing_rank_stops_the_others(dummy, tmp_path):
    code, out, took = _run("-n", 3, "--log-dir", tmp_path, "--", dummy, "fail:1")
    assert code == 3 and took < 20, out  # the others would sleep 60 s
    assert "[1] rank 1 of 3" in out  # the failing rank's output, shown
    assert out.splitlines()[-1].startswith("launch: rank 1 exited with 3; ranks 0-2: stopped 3 stopped")


def test_a_timeout_stops_every_rank(dummy):
    code, out, took = _run("-n", 2, "--timeout", 1, "--", dummy, "sleep:60")
    assert code == 124 and took < 20, out
    assert "launch: timeout after 1 s; ranks 0-1: stopped stopped" in out


def test_a_rank_that_ignores_sigterm_is_killed(dummy):
    code, out, took = _run("-n", 2, "--timeout", 1, "--grace", 0.5, "--", dummy, "stubborn:60")
    assert code == 124 and took < 20, out


def test_a_stale_id_file_is_refused(dummy, tmp_path):
    stale = tmp_path / "id"
    stale.write_bytes(b"\0" * 128)
    code, out, took = _run("-n", 2, "--id-file", stale, "--", dummy, "sleep:60")
    assert code == 1 and took < 20, out
    assert "File exists (a stale id file from an earlier job?" in out


def test_bad_arguments(dummy, capsys):
    assert _run("-n", 2, "--devices", "0", "--", dummy)[0] == 2
    assert _run("-n", 2)[0] == 2
    assert _run("-n", 1, "--", "/nonexistent/program")[0] == 2
    capsys.readouterr()
