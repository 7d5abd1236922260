"""The generated headers are plain C99 (and C++11 through extern "C"): strict compiles with
gcc and g++, the include guard works, and every declared function is there with C linkage."""

import re
import shutil
import subprocess

import pytest

from .util import CUDA_INCLUDE, EXAMPLES, GCC_C_FLAGS, REPO, gen_ok, matrix_spec, public_names, write_spec

GXX_FLAGS = ["-std=c++11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-isystem", CUDA_INCLUDE]


def _need(tool):
    if not shutil.which(tool):
        pytest.fail(f"{tool} is not installed")


def _compile(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))}\n{r.stdout}{r.stderr}"
    assert not re.search(r"\bwarning\b", r.stderr, re.I), r.stderr
    return r


# each case: (id, spec path relative to the repo or a callable writing one into tmp_path)
def _matrix(tmp_path):
    return write_spec(tmp_path / "matrix.toml", matrix_spec())


SPECS = [("default", "specs/default.toml")] + [(e, f"examples/{e}/spec.toml") for e in EXAMPLES] + [("matrix", _matrix)]


@pytest.fixture(params=SPECS, ids=[s[0] for s in SPECS])
def generated(request, tmp_path):
    """(header path, public function names) for each spec; the default header is the committed one."""
    name, spec = request.param
    if callable(spec):
        spec = spec(tmp_path)
    names = public_names(spec)
    if name == "default":
        return REPO / "include" / "assoc.h", names
    out = tmp_path / "out"
    gen_ok(spec, "-o", out)
    headers = list(out.glob("*.h"))
    assert len(headers) == 1, headers
    return headers[0], names


def test_header_is_c99(generated):
    _need("gcc")
    header, _ = generated
    _compile(["gcc", *GCC_C_FLAGS, "-fsyntax-only", "-x", "c", str(header)])


def test_header_is_c11_too(generated):
    _need("gcc")
    header, _ = generated
    _compile(
        ["gcc", *[f if f != "-std=c99" else "-std=c11" for f in GCC_C_FLAGS], "-fsyntax-only", "-x", "c", str(header)]
    )


def _workspace_arity(header) -> dict:
    """{function: parameters of its _workspace_bytes}: 1 (n), 2 (rows, cols: along rows or down
    columns), or 3 (rows, cols, batch; m, n, k)."""
    text = re.sub(r"/\*.*?\*/", "", header.read_text(), flags=re.S)
    found = re.finditer(r"size_t\s+(\w+)_workspace_bytes\s*\(([^)]*)\)\s*;", text)
    return {m.group(1): m.group(2).count(",") + 1 for m in found}


def _c_user(header, names):
    """A C file: the header twice, and the address of every function taken with its type."""
    arity = _workspace_arity(header)
    lines = [
        f'#include "{header.name}"',
        f'#include "{header.name}"  /* the guard makes this a no-op */',
        "typedef void (*any_fn)(void);",
        "typedef size_t (*workspace_fn)(size_t);",
        "typedef size_t (*workspace2_fn)(size_t, size_t);",
        "typedef size_t (*workspace3_fn)(size_t, size_t, size_t);",
        "",
    ]
    for i, n in enumerate(names):
        kind = {1: "workspace_fn", 2: "workspace2_fn", 3: "workspace3_fn"}[arity[n]]
        lines.append(f"{kind} ws_{i} = {n}_workspace_bytes;")
    lines.append("any_fn reduce_fns[] = {")
    lines += [f"    (any_fn){n}," for n in names]
    lines.append("};")
    lines.append("int main(void) { return (int)(sizeof reduce_fns / sizeof reduce_fns[0]); }")
    return "\n".join(lines) + "\n"


def test_header_included_twice_and_every_function_declared(generated, tmp_path):
    _need("gcc")
    header, names = generated
    assert names, "the spec lists no function"
    src = tmp_path / "use.c"
    src.write_text(_c_user(header, names))
    _compile(["gcc", *GCC_C_FLAGS, "-I", str(header.parent), "-c", str(src), "-o", str(tmp_path / "use.o")])


def test_header_declares_the_listed_functions_and_nothing_else(generated):
    header, names = generated
    text = re.sub(r"/\*.*?\*/", "", header.read_text(), flags=re.S)
    declared = re.findall(r"^\s*(?:size_t|cudaError_t)\s+(\w+)\s*\(", text, re.M)
    want = [f for n in names for f in (f"{n}_workspace_bytes", n)]
    # across GPUs (nccl = true): a listed function's _nccl, _nccl_all, _nccl_root, _nccl_workspace_bytes
    across = [f for f in declared if "_nccl" in f]
    for f in across:
        base, tail = f.split("_nccl", 1)
        assert base in names and tail in ("", "_all", "_root", "_workspace_bytes"), f
    assert sorted(f for f in declared if f not in across) == sorted(want)


def test_header_compiles_as_cxx_with_c_linkage(generated, tmp_path):
    _need("g++")
    _need("nm")
    header, names = generated
    _compile(["g++", *GXX_FLAGS, "-fsyntax-only", "-x", "c++", str(header)])
    # calls from C++ must reference the unmangled C symbols
    src = tmp_path / "use.cpp"
    # every function called with value-initialized arguments, as many as its declaration has
    text = re.sub(r"/\*.*?\*/", "", header.read_text(), flags=re.S)
    arity = {m.group(1): m.group(2).count(",") + 1 for m in re.finditer(r"cudaError_t\s+(\w+)\s*\(([^)]*)\)\s*;", text)}
    ws = _workspace_arity(header)
    calls = "\n".join(
        f"    total += {n}_workspace_bytes({', '.join(['n'] * ws[n])}) + (size_t){n}({', '.join(['{}'] * arity[n])});"
        for n in names
    )
    src.write_text(
        f'#include "{header.name}"\n#include "{header.name}"\n'
        f"size_t use(size_t n);\nsize_t use(size_t n)\n{{\n    size_t total = 0;\n{calls}\n"
        f"    return total;\n}}\n"
    )
    obj = tmp_path / "use.o"
    _compile(["g++", *GXX_FLAGS, "-I", str(header.parent), "-c", str(src), "-o", str(obj)])
    undefined = set(
        subprocess.run(
            ["nm", "-u", "--format=just-symbols", str(obj)], capture_output=True, text=True, check=True
        ).stdout.split()
    )
    for n in names:
        assert f"{n}_workspace_bytes" in undefined, f"{n}_workspace_bytes is not referenced with C linkage"
        assert n in undefined, f"{n} is not referenced with C linkage"
