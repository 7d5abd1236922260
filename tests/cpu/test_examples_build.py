"""`ninja examples` from the repository root builds the five example programs."""

import os
import shutil
import subprocess

import pytest

from .util import REPO

EXECUTABLES = [
    "build/examples/sum_f32/sum_f32",
    "build/examples/minmax/minmax",
    "build/examples/mat2/mat2",
    "build/examples/nccl/nccl",
    "build/examples/apsp/apsp",
    "build/examples/softmax/softmax",
]


def _ninja(*args):
    return subprocess.run(["ninja", "-C", str(REPO), *args], capture_output=True, text=True, timeout=600)


def test_examples_build(nvcc):
    if not shutil.which("ninja"):
        pytest.fail("ninja is not installed")
    r = _ninja("examples")
    assert r.returncode == 0, f"ninja examples failed:\n{r.stdout}\n{r.stderr}"
    for exe in EXECUTABLES:
        path = REPO / exe
        assert path.is_file(), f"{exe} was not built"
        assert os.access(path, os.X_OK), f"{exe} is not executable"
        assert path.stat().st_size > 0
    # the build graph is complete: right after a build there is nothing left to do
    again = _ninja("-n", "examples")
    assert again.returncode == 0, again.stderr
    assert "no work to do" in again.stdout, f"ninja would rebuild right after building:\n{again.stdout}"
