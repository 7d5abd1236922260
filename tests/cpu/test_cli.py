"""The command as a user meets it: installed from a fresh clone into a fresh virtual environment
and run from another folder, its version and help, the stamp on what it writes (the spec's
content, not its path), what it says about the output folder, and a missing dependency or
compiler; and the shape of the package behind it (no import cycle, short functions)."""

import ast
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

import assocgen

from .util import REPO, gen_ok, run_gen, write_spec

SUM = {"prefix": "v", "reduce": [{"op": ["sum", "min"], "type": "f32"}], "scan": [{"op": "sum", "type": "i32"}]}


def test_version_is_one_number():
    r = gen_ok("--version")
    assert r.stdout.strip() == f"assocgen {assocgen.__version__}"
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "assocgen.__version__"}


def test_help_names_every_family():
    out = gen_ok("--help").stdout
    families = ("reduce", "scan", "segmented scan", "segmented reduce", "reduce by key", "rows, cols", "transpose")
    for family in (*families, "matmul", "across GPUs", "tune"):
        assert re.search(rf"^  {family}\b", out, re.M), family
    for table in ("[[segscan]]", "[[segreduce]]", "[[rows]]", "[[cols]]", "[[transpose]]", "[[matmul]]", "nccl = true"):
        assert table in out, table
    for semiring in ("plus_times", "min_plus", "max_plus", "max_min", "min_max", "or_and", "[[semiring]]"):
        assert semiring in out, semiring


def test_tune_help_says_what_sizes_does_and_the_jobs_default():
    out = " ".join(gen_ok("tune", "--help").stdout.split())  # argparse wraps the lines
    assert "every other power of two" in out and "fourth" not in out
    assert "geometric midpoint" in out and "more than 4%" in out and "at most 4 shapes" in out
    assert "correctness checks run at sizes of their own" in out
    assert f"default: the number of CPUs, {os.cpu_count() or 1} here" in out


def _modules() -> dict:
    return {p.stem: ast.parse(p.read_text()) for p in sorted((REPO / "generator").glob("*.py"))}


def _run_time(tree: ast.Module) -> list:
    """The nodes of a module less its `if TYPE_CHECKING:` blocks (names for annotations only, which
    mypy reads and Python never imports: tuning's hints name spec's Instance, spec calls tuning)."""
    typing_only = [n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"]
    skip = {id(x) for n in typing_only for x in ast.walk(n)}
    return [n for n in ast.walk(tree) if id(n) not in skip]


def test_the_modules_import_each_other_without_a_cycle_and_at_their_top():
    graph = {}
    for name, tree in _modules().items():
        for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)):
            inner = [n.lineno for n in ast.walk(fn) if isinstance(n, ast.Import | ast.ImportFrom)]
            assert not inner, f"generator/{name}.py imports inside {fn.name} (line {inner[0]}): import at the top"
        relative = [n for n in _run_time(tree) if isinstance(n, ast.ImportFrom) and n.level]
        imported = {a.name for n in relative if not n.module for a in n.names}
        imported |= {n.module for n in relative if n.module}
        graph[name] = {m for m in imported if m != "__init__" and m in _modules()}
    done, path = set(), []

    def visit(m):
        assert m not in path, "import cycle: " + " -> ".join(path[path.index(m) :] + [m])
        if m not in done:
            path.append(m)
            for d in sorted(graph[m]):
                visit(d)
            path.pop()
            done.add(m)

    for m in graph:
        visit(m)


# functions past MAX_LINES that say why in their docstring or a comment, by "generator/FILE:NAME"
LONG_ON_PURPOSE: set = set()
MAX_LINES = 60


# until issue 42's tables branch (tuning as data) lands: the shape functions it rewrites
def test_no_function_is_longer_than_60_lines():
    long = [
        f"generator/{name}.py:{fn.name} ({fn.end_lineno - fn.lineno + 1} lines)"
        for name, tree in _modules().items()
        for fn in ast.walk(tree)
        if isinstance(fn, ast.FunctionDef) and fn.end_lineno - fn.lineno + 1 > MAX_LINES
        if f"generator/{name}.py:{fn.name}" not in LONG_ON_PURPOSE
    ]
    assert not long, "split by its steps, or say why in it and add it to LONG_ON_PURPOSE: " + ", ".join(long)


def test_the_same_spec_gives_the_same_bytes_however_its_path_is_spelled(tmp_path):
    (tmp_path / "a").mkdir()
    spec = write_spec(tmp_path / "a" / "spec.toml", SUM)
    other = tmp_path / "elsewhere"
    other.mkdir()
    shutil.copy(spec, other / "renamed.toml")
    spellings = [spec, os.path.relpath(spec, REPO), tmp_path / "a" / ".." / "a" / "spec.toml", other / "renamed.toml"]
    outputs = []
    for n, path in enumerate(spellings):
        out = tmp_path / f"out{n}"
        gen_ok(path, "-o", out)
        outputs.append({p.name: p.read_bytes() for p in sorted(out.iterdir())})
    assert all(o == outputs[0] for o in outputs[1:])
    header = outputs[0]["v.h"].decode()
    assert str(tmp_path) not in header and "spec.toml" not in header
    assert re.search(
        rf"generated by\s+\*?\s*assocgen {re.escape(assocgen.__version__)} from spec sha256:[0-9a-f]{{16}}", header
    )
    # a change to the spec's content changes the stamp
    write_spec(other / "renamed.toml", dict(SUM, prefix="v", reduce=[{"op": ["sum", "max"], "type": "f32"}]))
    gen_ok(other / "renamed.toml", "-o", tmp_path / "changed")
    digest = re.compile(r'V_SPEC_DIGEST "([^"]+)"')
    assert digest.search((tmp_path / "changed" / "v.h").read_text()).group(1) != digest.search(header).group(1)


def test_output_folder_reports_what_it_writes_removes_and_leaves(tmp_path):
    out = tmp_path / "out"
    spec = write_spec(tmp_path / "spec.toml", SUM)
    first = gen_ok(spec, "-o", out).stdout.splitlines()
    assert sorted(first) == sorted(
        f"wrote {out / n}" for n in ("v.h", "v_reduce_sum_f32.cu", "v_reduce_min_f32.cu", "v_scan_sum_i32.cu")
    )
    # files the generator did not write survive, even ones that mention it
    (out / "mine.cu").write_text('/* mine.cu: uses code generated by assocgen */\n#include "v.h"\n')
    (out / "notes.txt").write_text("x\n")
    write_spec(spec, dict(SUM, scan=[]) | {"scan": [{"op": "sum", "type": "u32"}]})
    lines = gen_ok(spec, "-o", out).stdout.splitlines()
    assert (
        f"removed {out / 'v_scan_sum_i32.cu'} (an earlier run wrote it for v.h; the spec no longer asks for it)"
        in lines
    )
    assert f"wrote {out / 'v_scan_sum_u32.cu'}" in lines
    assert f"unchanged {out / 'v_reduce_sum_f32.cu'}" in lines or f"wrote {out / 'v.h'}" in lines
    assert (out / "mine.cu").exists() and (out / "notes.txt").exists()
    assert not (out / "v_scan_sum_i32.cu").exists()
    # a source of another header in the same folder is not this run's to remove
    gen_ok("--prefix", "w", "--reduce", "max:f64", "-o", out)
    assert (out / "v_reduce_sum_f32.cu").exists() and (out / "w_reduce_max_f64.cu").exists()


def test_unchanged_files_keep_their_time_stamps(tmp_path):
    out = tmp_path / "out"
    spec = write_spec(tmp_path / "spec.toml", SUM)
    gen_ok(spec, "-o", out)
    before = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    lines = gen_ok(spec, "-o", out).stdout.splitlines()
    assert all(line.startswith("unchanged ") for line in lines)
    assert before == {p.name: p.stat().st_mtime_ns for p in out.iterdir()}


@pytest.mark.parametrize("flag", ["-o", "--header-dir"])
def test_an_output_folder_that_is_a_file_is_one_error_line(tmp_path, flag):
    spec = write_spec(tmp_path / "spec.toml", SUM)
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    args = ["-o", tmp_path / "out", flag, blocker] if flag == "--header-dir" else [flag, blocker / "sub"]
    r = run_gen(spec, *args)
    assert r.returncode == 2 and r.stderr == f"error: command line: {blocker}: is a file, not a folder\n", r.stderr
    assert not (tmp_path / "out").exists()


def test_list_files_print_deps_and_cmake_dir(tmp_path):
    spec = write_spec(tmp_path / "spec.toml", SUM)
    out = tmp_path / "out"
    files = gen_ok(
        spec, "-o", out, "--header-dir", tmp_path / "inc", "--ninja", tmp_path / "v.ninja", "--list-files"
    ).stdout.split()
    assert sorted(files) == sorted(
        str(p)
        for p in (
            tmp_path / "inc" / "v.h",
            out / "v_reduce_sum_f32.cu",
            out / "v_reduce_min_f32.cu",
            out / "v_scan_sum_i32.cu",
            tmp_path / "v.ninja",
        )
    )
    assert not out.exists()
    single = gen_ok(spec, "-o", out, "--single-header", "--list-files").stdout.split()
    assert single == [str(out / "v.h")]
    deps = gen_ok("--print-deps").stdout.split()
    assert any(d.endswith("emit.py") for d in deps) and any(d.endswith("scan.cu.j2") for d in deps)
    assert all(os.path.isfile(d) for d in deps)
    cmake_dir = gen_ok("--cmake-dir").stdout.strip()
    assert os.path.isfile(os.path.join(cmake_dir, "assocgen-config.cmake"))


def test_a_missing_dependency_is_one_line(tmp_path):
    code = (
        "import sys; sys.modules['jinja2'] = None\n"
        "from assocgen.cli import main\nsys.exit(main(['--prefix', 'v', '--reduce', 'sum:f32', '-o', sys.argv[1]]))"
    )
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path / "out")], capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stderr == "error: assocgen needs the Python package jinja2 (pip install jinja2)\n", r.stderr
    assert not (tmp_path / "out").exists()


def test_without_nvcc_the_check_of_the_spec_c_is_skipped_with_a_note(tmp_path):
    spec = write_spec(
        tmp_path / "spec.toml",
        {
            "prefix": "v",
            "type": [{"name": "pair", "size": 8, "c": "typedef struct { float x, y; } pair;"}],
            "operator": [
                {
                    "name": "padd",
                    "type": "pair",
                    "identity": "{0.0f, 0.0f}",
                    "commutative": True,
                    "combine": "{a.x + b.x, a.y + b.y}",
                }
            ],
            "reduce": [{"op": "padd"}],
        },
    )
    env = dict(os.environ, PATH="/usr/bin:/bin")
    r = subprocess.run(
        [sys.executable, "-m", "assocgen", str(spec), "-o", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert r.returncode == 0, r.stderr
    assert r.stderr.startswith("note: nvcc is not on the PATH") and len(r.stderr.splitlines()) == 1, r.stderr


@pytest.mark.slow
@pytest.mark.parametrize("editable", [False, True], ids=["install", "editable"])
def test_pip_install_into_a_fresh_venv_and_run_from_another_folder(tmp_path, editable):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    r = subprocess.run(
        pip + (["-e", str(REPO)] if editable else [str(REPO)]),
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    work = tmp_path / "elsewhere"
    work.mkdir()
    shutil.copy(REPO / "examples" / "mat2" / "spec.toml", work / "spec.toml")
    version = subprocess.run([str(venv / "bin" / "assocgen"), "--version"], capture_output=True, text=True, cwd=work)
    assert version.stdout.strip() == f"assocgen {assocgen.__version__}", version.stderr
    for cmd in ([str(venv / "bin" / "assocgen")], [str(venv / "bin" / "python"), "-m", "assocgen"]):
        out = work / f"out{len(cmd)}"
        r = subprocess.run(cmd + ["spec.toml", "-o", str(out)], capture_output=True, text=True, cwd=work)
        assert r.returncode == 0, r.stderr
        assert (out / "mat.h").is_file() and len(list(out.glob("*.cu"))) == 3
    # the installed package's outputs are the repository's, byte for byte
    gen_ok(REPO / "examples" / "mat2" / "spec.toml", "-o", tmp_path / "ref")
    for p in (tmp_path / "ref").iterdir():
        assert (work / "out1" / p.name).read_bytes() == p.read_bytes(), p.name


def test_a_type_built_on_a_cuda_vector_type_is_accepted(tmp_path):
    """The header includes cuda_runtime_api.h, so a user type may use float2 and the like: the
    C check at generation sees the same declarations."""
    spec = write_spec(
        tmp_path / "spec.toml",
        {
            "prefix": "v",
            "type": [{"name": "pt", "size": 8, "c": "typedef struct { float2 p; } pt;"}],
            "operator": [
                {
                    "name": "padd",
                    "type": "pt",
                    "identity": "{{0.0f, 0.0f}}",
                    "commutative": True,
                    "combine_body": "pt r;\nr.p.x = a.p.x + b.p.x;\nr.p.y = a.p.y + b.p.y;\nreturn r;",
                }
            ],
            "reduce": [{"op": "padd"}],
        },
    )
    gen_ok(spec, "-o", tmp_path / "out")
    assert (tmp_path / "out" / "v_reduce_padd_pt.cu").is_file()


def test_an_installed_package_carries_every_template_folder():
    """pyproject.toml names each templates/ folder as a package with its *.j2 as data, so that a
    wheel (not only an editable install) holds every family's templates."""
    import tomllib

    from .util import REPO

    conf = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    for folder in sorted(p for p in (REPO / "templates").iterdir() if p.is_dir()):
        name = f"assocgen.templates.{folder.name}"
        assert name in conf["packages"], name
        assert conf["package-data"].get(name) == ["*.j2"], name


# ---- assocgen tune: its command line, and its temporary folder on every way out

TUNE_SPEC = {"prefix": "q", "reduce": [{"op": "sum", "type": "f32"}]}


def _tune(tmp_path, *args, env=None):
    """`assocgen tune` with TMPDIR on a folder of its own (returned, to see what is left there)."""
    tmp = tmp_path / "tmpdir"
    tmp.mkdir(exist_ok=True)
    spec = write_spec(tmp_path / "q.toml", TUNE_SPEC)
    cmd = [sys.executable, "-m", "assocgen", "tune", str(spec), "-o", str(tmp_path / "t.toml"), *map(str, args)]
    r = subprocess.run(
        cmd, cwd=REPO, capture_output=True, text=True, env={**os.environ, "TMPDIR": str(tmp)}, timeout=600
    )
    return r, tmp


@pytest.mark.parametrize("jobs", ["-3", "0"])
def test_tune_refuses_jobs_below_one_in_one_line(tmp_path, jobs):
    r, tmp = _tune(tmp_path, "--jobs", jobs)
    assert (
        r.returncode == 2
        and r.stderr == f"error: command line: --jobs: {jobs} is not a number of nvcc runs at once (1 or more)\n"
    )
    assert not list(tmp.iterdir())


def test_tune_with_a_bad_nvcc_leaves_no_temporary_folder(tmp_path):
    r, tmp = _tune(tmp_path, "--nvcc", tmp_path / "no-nvcc")
    assert r.returncode == 1 and r.stderr.count("error: ") == 1 and "no-nvcc: not found" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and not list(tmp.iterdir())
    assert not (tmp_path / "t.toml").exists()


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_tune_without_a_gpu_leaves_no_temporary_folder(tmp_path):
    if shutil.which("nvidia-smi") and subprocess.run(["nvidia-smi"], capture_output=True).returncode == 0:
        pytest.skip("this machine has a GPU")
    r, tmp = _tune(tmp_path)
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("error: ")]
    assert r.returncode == 1 and len(errors) == 1 and "no GPU" in errors[0], r.stderr
    assert not list(tmp.iterdir())


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_tune_build_only_keeps_the_folder_it_names(tmp_path):
    r, tmp = _tune(tmp_path, "--build-only", "--arch", "sm_90")
    assert r.returncode == 0, r.stderr
    m = re.search(r"measuring programs in (\S+) \(kept: remove it when done\)", r.stdout)
    assert m and Path(m[1]).parent == tmp and (Path(m[1]) / "harness0").exists(), r.stdout


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_tune_interrupted_removes_its_temporary_folder(tmp_path):
    tmp = tmp_path / "tmpdir"
    tmp.mkdir()
    spec = write_spec(tmp_path / "q.toml", TUNE_SPEC)
    cmd = [sys.executable, "-m", "assocgen", "tune", str(spec), "--build-only", "--arch", "sm_90", "--jobs", "1"]
    p = subprocess.Popen(
        cmd,
        cwd=REPO,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp)},
    )
    for _ in range(600):  # until its folder is there and a build has started
        time.sleep(0.1)
        if any(tmp.glob("*/*.build.log")) or any(tmp.glob("*/*.cu")):
            break
    time.sleep(1)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=300)
    assert p.returncode == 1 and err.splitlines()[-1].startswith("error: interrupted"), err
    assert "Traceback" not in err and not list(tmp.iterdir())
