"""Reduces and scans across the ranks of an NCCL communicator (spec: nccl = true) on the CPU: the
switch, what the header declares, that a spec without it is untouched, the operators that may go
through NCCL's own all-reduce, and nvcc over the GPU test's spec (tests/gpu/nccl/spec.toml; the
GPU test: bench/nccl/run.sh)."""

import subprocess
from pathlib import Path

import pytest

from assocgen import emit
from assocgen.spec import SpecError, load, parse

from .util import nvcc_problems

SPEC = Path(__file__).resolve().parents[1] / "gpu" / "nccl" / "spec.toml"


def _spec(**top):
    return {
        "prefix": "q",
        "reduce": [{"op": ["sum", "min", "argmin"], "type": "f32"}],
        "scan": [{"op": "sum", "type": "f32"}],
        **top,
    }


def test_the_switch_is_a_boolean():
    with pytest.raises(SpecError) as e:
        parse(_spec(nccl="yes"), "s.toml")
    assert ".nccl" in str(e.value) or "nccl:" in str(e.value)
    assert "true or false" in str(e.value)


def test_without_the_switch_nothing_mentions_nccl():
    files = emit.render(parse(_spec(), "s.toml"), "q.h")
    assert not any("nccl" in text.lower() for text in files.values())


def test_the_header_declares_the_functions_across_ranks():
    files = emit.render(parse(_spec(nccl=True), "s.toml"), "q.h")
    h = files["q.h"]
    assert "#include <nccl.h>" in h and "NCCL ACROSS GPUS" in h
    assert "size_t q_reduce_sum_f32_nccl_workspace_bytes(size_t n, int n_ranks);" in h
    assert "cudaError_t q_reduce_sum_f32_nccl_all(const float *d_in, size_t n, float *d_out,\n    void *d_work" in h
    assert "    int root, void *d_work, size_t work_bytes, ncclComm_t comm, cudaStream_t stream);" in h
    assert "cudaError_t q_scan_sum_f32_nccl(const float *d_in, size_t n, float *d_out," in h
    # argmin's lift reads the element's index, which a rank's part does not know
    assert "q_reduce_argmin_f32_nccl" not in h and "know): q_reduce_argmin_f32." in h


def test_nccls_own_all_reduce_only_where_it_gives_the_same_result():
    files = emit.render(parse(_spec(nccl=True), "s.toml"), "q.h")
    assert "ncclAllReduce(partial, d_out, 1, ncclFloat32, ncclSum, comm, stream)" in files["q_reduce_sum_f32.cu"]
    # float minimum: fmin's NaN rule, so gathered and folded here
    src = files["q_reduce_min_f32.cu"]
    assert "ncclAllReduce" not in src and "ncclAllGather(partial, gathered" in src


def test_nvcc_compiles_the_gpu_tests_spec(tmp_path, nvcc):  # noqa: ARG001 - nvcc: present
    files = emit.render(load(SPEC), "nt.h")
    compiled, problems = nvcc_problems(files, tmp_path)
    assert compiled == 11 and not problems, "\n".join(problems)


def test_nvcc_compiles_the_gpu_tests_spec_as_one_header(tmp_path, nvcc):  # noqa: ARG001 - nvcc: present
    # every source's body in a namespace of its own, and a scan's part fold (the reduce family's
    # kernel) in a namespace inside it: names that meet across them must not be ambiguous
    files = emit.render(load(SPEC), "nt.h", single_header=True)
    files["impl.cu"] = '#define NT_IMPLEMENTATION\n#include "nt.h"\n'
    compiled, problems = nvcc_problems(files, tmp_path)
    assert compiled == 1 and not problems, "\n".join(problems)


def test_nvcc_compiles_the_one_launch_prototype(tmp_path, nvcc):
    """bench/nccl/onelaunch.cu (run on the GPU machine by bench/nccl/run.sh, STEPS=onelaunch)
    compiles for sm_90 and as compute_80 PTX, with no warning."""
    src = Path(__file__).parents[2] / "bench" / "nccl" / "onelaunch.cu"
    for arch in ("sm_90", "compute_80"):
        cmd = [nvcc, "-O3", "-std=c++17", f"-arch={arch}", "-Werror", "all-warnings", "-c", str(src)]
        r = subprocess.run([*cmd, "-o", str(tmp_path / f"onelaunch-{arch}.o")], capture_output=True, text=True)
        assert r.returncode == 0 and not r.stderr.strip(), r.stderr[-2000:]
