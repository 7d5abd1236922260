"""Helpers shared by the CPU tests: paths, running the generator, writing specs, compilers."""

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = ("sum_f32", "minmax", "mat2", "nccl", "apsp", "softmax", "recurrence")


def _cuda_home() -> Path:
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            return Path(os.environ[var])
    nvcc = shutil.which("nvcc")
    if nvcc:
        return Path(nvcc).resolve().parents[1]
    return Path("/usr/local/cuda")


CUDA = _cuda_home()
NVCC = str(CUDA / "bin" / "nvcc")
CUDA_INCLUDE = str(CUDA / "include")
# the flags of build.ninja's nvcc rule
NVCC_FLAGS = ["-O3", "-arch=sm_90", "-std=c++17", "-Xcompiler", "-Wall,-Wextra"]
GCC_C_FLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-isystem", CUDA_INCLUDE]

WARNING = re.compile(r"\bwarning\b", re.IGNORECASE)


def assert_one_error_line(r: subprocess.CompletedProcess):
    """A rejected spec: exit code 2 and one `error: ...` line, no traceback."""
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 2, f"exit code {r.returncode}: {r.stderr}"
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr


def run_gen(*args, timeout=120) -> subprocess.CompletedProcess:
    """`python3 -m assocgen ARGS` from the repository root."""
    return subprocess.run(
        [sys.executable, "-m", "assocgen", *map(str, args)], cwd=REPO, capture_output=True, text=True, timeout=timeout
    )


def gen_ok(*args) -> subprocess.CompletedProcess:
    r = run_gen(*args)
    assert r.returncode == 0, f"generator failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    assert r.stderr == "", r.stderr
    return r


def public_names(spec, *extra) -> list:
    """The public function names of a spec, from `--list` (public<TAB>kernel a line)."""
    r = gen_ok(spec, "--list", *extra)
    return [line.split("\t")[0] for line in r.stdout.splitlines() if line.strip()]


# ---- writing TOML (tomllib only reads) ----


def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v)  # a JSON string is a valid TOML basic string
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {v!r} as TOML")


def toml_dumps(spec: dict) -> str:
    lines = []
    for k, v in spec.items():
        if not (isinstance(v, list) and v and all(isinstance(x, dict) for x in v)):
            lines.append(f"{k} = {_value(v)}")
    for k, v in spec.items():
        if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            for table in v:
                lines.append("")
                lines.append(f"[[{k}]]")
                lines.extend(f"{kk} = {_value(vv)}" for kk, vv in table.items())
    return "\n".join(lines) + "\n"


def write_spec(path: Path, spec) -> Path:
    path = Path(path)
    path.write_text(spec if isinstance(spec, str) else toml_dumps(spec))
    return path


def load_example(name: str) -> dict:
    with open(REPO / "examples" / name / "spec.toml", "rb") as f:
        return tomllib.load(f)


def gpu_runner():
    """tests/gpu/run.py as a module: its instance matrix (spec_dict, from tests/matrix.toml) and PREFIX."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("gpu_run", REPO / "tests" / "gpu" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---- the instance matrix (tests/matrix.toml), and what it must cover

INTEGERS = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]
FLOATS = ["f32", "f64"]
OPS_FOR = {t: ["sum", "prod", "min", "max", "and", "or", "xor", "argmin", "argmax"] for t in INTEGERS}
OPS_FOR.update({t: ["sum", "prod", "min", "max", "argmin", "argmax", "ksum"] for t in FLOATS})
BLOCKS = [32, 64, 128, 256, 512, 1024]


def matrix_spec(prefix: str = "mx") -> dict:
    """The instance matrix of tests/matrix.toml as a spec with this prefix (the GPU runner's is "t")."""
    return gpu_runner().spec_dict(prefix)


# ---- compiling ----


def nvcc_compile(cu: Path, incdir: Path, extra=()) -> subprocess.CompletedProcess:
    obj = Path(cu).with_suffix(".o")
    return subprocess.run(
        [NVCC, *NVCC_FLAGS, *extra, f"-I{incdir}", "-c", str(cu), "-o", str(obj)],
        capture_output=True,
        text=True,
        timeout=600,
    )


def nvcc_compile_all(sources, incdir: Path, jobs=None) -> dict:
    """Compile concurrently; returns {source: CompletedProcess}."""
    jobs = jobs or int(os.environ.get("NVCC_JOBS", 0)) or 2
    sources = list(sources)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(lambda s: nvcc_compile(s, incdir), sources))
    return dict(zip(sources, results, strict=True))


def nvcc_problems(files: dict, tmp_path: Path) -> tuple:
    """Write rendered files to tmp_path and compile every .cu with nvcc; returns (sources compiled,
    the stderr of each that failed or warned)."""
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    results = nvcc_compile_all(sorted(tmp_path.glob("*.cu")), tmp_path)
    return len(results), [f"{cu}: {r.stderr}" for cu, r in results.items() if r.returncode or WARNING.search(r.stderr)]


def at_arch(src: str, cuda_arch: int = 900) -> str:
    """`src` as the compiler for `cuda_arch` reads the occupancy asked of it: each `#if __CUDA_ARCH__`
    chain of a kernel's bounds (templates/common/launch.cuh.j2) dropped, with its comment, and its
    macro's attribute for that architecture (nvcc 12.4 or later) written where the kernel names it."""
    out: list[str] = []
    value: dict[str, str] = {}
    lines = iter(src.splitlines(keepends=True))
    for line in lines:
        if not line.startswith("#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= ") or not out[-1].startswith(
            "/* the occupancy asked of the compiler"
        ):
            for name, v in value.items():
                line = re.sub(rf"\b{name}\b", v, line)
            out.append(line)
            continue
        out.pop()  # the chain's comment
        taken, cond = False, line
        while not cond.startswith("#endif"):
            _, name, v = next(lines).rstrip("\n").split(" ", 2)
            at = re.search(r"__CUDA_ARCH__ >= (\d+)", cond)
            older_nvcc = "__CUDACC_VER_MAJOR__" in cond
            if not taken and not older_nvcc and (at is None or cuda_arch >= int(at.group(1))):
                value[name], taken = v, True
            cond = next(lines)
    return "".join(out)
