"""The single header (--single-header): one self-contained PREFIX.h in the stb style.  Included
without PREFIX_IMPLEMENTATION it is plain C99 declarations; with it, nvcc compiles every kernel;
two such headers of different prefixes link into one program, their implementations in one .cu
file or in two."""

import re
import subprocess

from .util import CUDA_INCLUDE, GCC_C_FLAGS, NVCC, NVCC_FLAGS, WARNING, gen_ok, write_spec

SPEC_A = {
    "prefix": "sa",
    "type": [{"name": "mat2u", "size": 16, "c": "typedef struct { uint32_t a, b, c, d; } mat2u;"}],
    "operator": [
        {
            "name": "mat2mul",
            "type": "mat2u",
            "identity": "{1u, 0u, 0u, 1u}",
            "commutative": False,
            "combine": "{a.a * b.a + a.b * b.c, a.a * b.b + a.b * b.d, a.c * b.a + a.d * b.c, a.c * b.b + a.d * b.d}",
        }
    ],
    "reduce": [{"op": ["sum", "min"], "type": ["f32", "i32"]}, {"op": "mat2mul"}],
    "scan": [{"op": "sum", "type": "f32", "kind": ["inclusive", "exclusive"]}, {"op": "mat2mul"}],
    "segscan": [{"op": "sum", "type": "f32", "heads": "keys", "key": "i32"}],
    "segreduce": [{"op": "sum", "type": "f32"}, {"op": "max", "type": "i32", "by": "keys", "key": "i32"}],
}
# the same instances under another prefix: every internal name meets its twin
SPEC_B = dict(
    SPEC_A,
    prefix="sb",
    type=[],
    operator=[],
    reduce=[{"op": ["sum", "min"], "type": ["f32", "i32"]}],
    scan=[{"op": "sum", "type": "f32", "kind": ["inclusive", "exclusive"]}],
)

CALLS = {
    "sa": "sa_reduce_sum_f32(d, n, &f, w, 0, 0); sa_exscan_sum_f32(d, n, d, NULL, w, 0, 0);"
    " sa_reduce_mat2mul_mat2u(NULL, 0, NULL, NULL, 0, 0);",
    "sb": "sb_reduce_sum_f32(d, n, &f, w, 0, 0); sb_scan_sum_f32(d, n, d, w, 0, 0);",
}


def _single(tmp_path, spec):
    out = tmp_path / spec["prefix"]
    gen_ok(write_spec(tmp_path / f"{spec['prefix']}.toml", spec), "-o", out, "--single-header")
    files = sorted(p.name for p in out.iterdir())
    assert files == [f"{spec['prefix']}.h"], files
    return out


def _run(cmd):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and not WARNING.search(r.stdout + r.stderr), (
        f"{' '.join(map(str, cmd))}\n{r.stdout}{r.stderr}"
    )
    return r


def _main_c(path, prefixes):
    body = " ".join(CALLS[p] for p in prefixes)
    path.write_text(
        "".join(f'#include "{p}.h"\n' for p in prefixes)
        + "int main(void)\n{\n    float f = 0, *d = 0; void *w = 0; size_t n = 0;\n"
        f"    {body}\n    (void)f;\n    return 0;\n}}\n"
    )
    return path


def test_single_header_is_c99_without_the_implementation(tmp_path):
    a = _single(tmp_path, SPEC_A)
    text = (a / "sa.h").read_text()
    assert "#if defined(SA_IMPLEMENTATION) && !defined(SA_IMPLEMENTATION_DONE)" in text
    assert re.search(r"^#define SA_ASSOCGEN_VERSION \"\d+\.\d+\.\d+\"", text, re.M)
    main = _main_c(tmp_path / "main.c", ["sa"])
    _run(["gcc", *GCC_C_FLAGS, f"-I{a}", "-c", main, "-o", tmp_path / "main.o"])
    _run(
        [
            "g++",
            "-std=c++11",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-isystem",
            CUDA_INCLUDE,
            f"-I{a}",
            "-x",
            "c++",
            "-c",
            main,
            "-o",
            tmp_path / "main_cpp.o",
        ]
    )


def test_two_single_headers_link_into_one_program(tmp_path, nvcc):
    a, b = _single(tmp_path, SPEC_A), _single(tmp_path, SPEC_B)
    main = _main_c(tmp_path / "main.c", ["sa", "sb"])
    _run(["gcc", *GCC_C_FLAGS, f"-I{a}", f"-I{b}", "-c", main, "-o", tmp_path / "main.o"])
    # each implementation in a .cu file of its own, and both in one .cu file
    objs = []
    for name, prefixes in (("impl_a", ["sa"]), ("impl_b", ["sb"])):
        cu = tmp_path / f"{name}.cu"
        cu.write_text("".join(f'#define {p.upper()}_IMPLEMENTATION\n#include "{p}.h"\n' for p in prefixes))
        _run([NVCC, *NVCC_FLAGS, f"-I{a}", f"-I{b}", "-c", cu, "-o", cu.with_suffix(".o")])
        objs.append(cu.with_suffix(".o"))
    _run([NVCC, "-arch=sm_90", "-o", tmp_path / "prog", tmp_path / "main.o", *objs])
    both = tmp_path / "both.cu"
    both.write_text(
        '#include "sa.h"\n#define SA_IMPLEMENTATION\n#include "sa.h"\n#include "sa.h"\n'
        '#define SB_IMPLEMENTATION\n#include "sb.h"\n'
    )
    _run([NVCC, *NVCC_FLAGS, f"-I{a}", f"-I{b}", "-c", both, "-o", tmp_path / "both.o"])
    _run([NVCC, "-arch=sm_90", "-o", tmp_path / "prog2", tmp_path / "main.o", tmp_path / "both.o"])
    symbols = subprocess.run(["nm", "-C", tmp_path / "prog2"], capture_output=True, text=True).stdout
    for name in ("sa_reduce_sum_f32", "sb_reduce_sum_f32", "sa_segscan_sum_f32_by_i32", "sa_reduce_max_i32_by_i32"):
        assert re.search(rf" T {name}\b", symbols), name


def test_implementation_in_a_c_file_is_one_clear_error(tmp_path):
    a = _single(tmp_path, SPEC_B)
    c = tmp_path / "wrong.c"
    c.write_text('#define SB_IMPLEMENTATION\n#include "sb.h"\n')
    r = subprocess.run(
        ["gcc", "-std=c99", "-isystem", CUDA_INCLUDE, f"-I{a}", "-c", str(c), "-o", "/dev/null"],
        capture_output=True,
        text=True,
    )
    assert r.returncode != 0
    first = next(line for line in r.stderr.splitlines() if "error" in line)
    assert "SB_IMPLEMENTATION" in first and "compiled by nvcc" in first, r.stderr


def test_single_header_holds_the_same_kernels(tmp_path):
    """The kernels are those of the separate sources, byte for byte, each in a namespace."""
    spec = write_spec(tmp_path / "b.toml", SPEC_B)
    gen_ok(spec, "-o", tmp_path / "sep")
    single = _single(tmp_path, SPEC_B) / "sb.h"
    text = single.read_text()
    for cu in sorted((tmp_path / "sep").glob("*.cu")):
        body = cu.read_text().split("*/", 1)[1]
        kernel = re.search(r"static __global__[^{]*\{", body).group(0)
        assert kernel in text, cu.name
        assert f"namespace assocgen_{cu.stem} {{" in text
