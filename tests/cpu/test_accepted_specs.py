"""A spec the generator accepts must give sources that build: corner cases where names or sizes
could clash.  For each, the generator may instead reject the spec (exit code 2, one error line);
what it must not do is write code that fails to compile or link."""

import subprocess

import pytest

from .util import GCC_C_FLAGS, NVCC, assert_one_error_line, nvcc_compile, nvcc_compile_all, run_gen, write_spec


def _generate_or_reject(tmp_path, spec):
    """The output folder if the spec was accepted, None if it was cleanly rejected."""
    path = write_spec(tmp_path / "spec.toml", spec)
    out = tmp_path / "out"
    r = run_gen(path, "-o", out)
    if r.returncode == 0:
        return out
    assert_one_error_line(r)
    assert not out.exists()
    return None


def _check(cmd):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))}\n{r.stdout}{r.stderr}"


def test_a_correct_user_type_builds(tmp_path, nvcc):
    """Sanity for the checks below: a correct user type builds."""
    out = _generate_or_reject(
        tmp_path,
        {
            "prefix": "v",
            "type": [{"name": "quad", "size": 16, "c": "typedef struct { unsigned a, b, c, d; } quad;"}],
            "operator": [
                {
                    "name": "qadd",
                    "type": "quad",
                    "identity": "{0u, 0u, 0u, 0u}",
                    "commutative": False,
                    "combine": "{a.a + b.a, a.b + b.b, a.c + b.c, a.d + b.d}",
                }
            ],
            "reduce": [{"op": "qadd", "items": 4}],
        },
    )
    assert out is not None
    r = nvcc_compile(out / "v_reduce_qadd_quad.cu", out)
    assert r.returncode == 0, r.stderr


def test_two_names_for_the_same_parameters_link_into_one_program(tmp_path, nvcc):
    """Two instances that differ only in their public name: each file defines the kernel
    `v_k_reduce_sum_f32_b256_t16` with C linkage, so linking both objects must not clash."""
    out = _generate_or_reject(
        tmp_path,
        {
            "prefix": "v",
            "reduce": [
                {"op": "sum", "type": "f32", "block": 256, "items": 16, "name": "first"},
                {"op": "sum", "type": "f32", "block": 256, "items": 16, "name": "second"},
                {"op": "sum", "type": "f32", "block": 256, "items": 16},
            ],
        },
    )
    if out is None:
        return
    sources = sorted(out.glob("*.cu"))
    assert len(sources) == 3
    for s, r in nvcc_compile_all(sources, out).items():
        assert r.returncode == 0, f"{s.name}: {r.stderr}"
    main = tmp_path / "main.c"
    main.write_text(
        '#include "v.h"\nint main(void)\n{\n'
        "    return (int)v_first(0, 0, 0, 0, 0, 0) + (int)v_second(0, 0, 0, 0, 0, 0)"
        " + (int)v_reduce_sum_f32(0, 0, 0, 0, 0, 0);\n}\n"
    )
    _check(["gcc", *GCC_C_FLAGS, f"-I{out}", "-c", main, "-o", tmp_path / "main.o"])
    _check([NVCC, "-arch=sm_90", "-o", tmp_path / "prog", tmp_path / "main.o", *[s.with_suffix(".o") for s in sources]])


def test_a_name_ending_in_workspace_bytes_does_not_clash(tmp_path):
    """Public `v_x` brings `v_x_workspace_bytes`; another instance named `x_workspace_bytes`
    would declare the same C function twice with different types."""
    out = _generate_or_reject(
        tmp_path,
        {
            "prefix": "v",
            "reduce": [
                {"op": "sum", "type": "f32", "name": "x_workspace_bytes"},
                {"op": "min", "type": "f32", "name": "x"},
            ],
        },
    )
    if out is None:
        return
    _check(["gcc", *GCC_C_FLAGS, "-fsyntax-only", "-x", "c", out / "v.h"])


def test_a_user_type_named_like_the_argmin_pair(tmp_path):
    """argmin over f32 declares the public pair type `v_arg_f32` in the header."""
    out = _generate_or_reject(
        tmp_path,
        {
            "prefix": "v",
            "type": [{"name": "v_arg_f32", "size": 8, "c": "typedef struct { float lo, hi; } v_arg_f32;"}],
            "reduce": [{"op": "argmin", "type": "f32"}],
        },
    )
    if out is None:
        return
    _check(["gcc", *GCC_C_FLAGS, "-fsyntax-only", "-x", "c", out / "v.h"])


@pytest.mark.parametrize("name", ["ksum_f32", "v_ksum_f32"])
def test_a_user_type_named_like_the_ksum_accumulator(tmp_path, nvcc, name):
    """ksum over f32 defines a struct accumulator of its own (named ksum_f32 or v_ksum_f32)."""
    out = _generate_or_reject(
        tmp_path,
        {
            "prefix": "v",
            "type": [{"name": name, "size": 4, "c": f"typedef int {name};"}],
            "reduce": [{"op": "ksum", "type": "f32"}],
        },
    )
    if out is None:
        return
    _check(["gcc", *GCC_C_FLAGS, "-fsyntax-only", "-x", "c", out / "v.h"])
    r = nvcc_compile(out / "v_reduce_ksum_f32.cu", out)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("declared", [8, 12, 32])
def test_a_wrong_user_type_size_is_caught_at_compile_time(tmp_path, nvcc, declared):
    """generator/ctypes_.py: a user type's size is "as sizeof() gives it (checked at compile time
    for user types)".  The generator sizes shuffles, workspace slots and 16-byte loads from it, so a
    wrong size must stop the build instead of producing a kernel that overruns its buffers."""
    out = _generate_or_reject(
        tmp_path,
        {
            "prefix": "v",
            "type": [{"name": "quad", "size": declared, "c": "typedef struct { unsigned a, b, c, d; } quad;"}],
            "operator": [
                {
                    "name": "qadd",
                    "type": "quad",
                    "identity": "{0u, 0u, 0u, 0u}",
                    "commutative": False,
                    "combine": "{a.a + b.a, a.b + b.b, a.c + b.c, a.d + b.d}",
                }
            ],
            "reduce": [{"op": "qadd", "items": 4}],
        },
    )
    if out is None:
        return
    r = nvcc_compile(out / "v_reduce_qadd_quad.cu", out)
    assert r.returncode != 0, (
        f"sizeof(quad) is 16 but the spec says {declared}: nvcc compiled v_reduce_qadd_quad.cu without complaint"
    )
