"""The CMake package (generator/cmake/assocgen-config.cmake, `assocgen --cmake-dir`).

tests/cpu/cmake_project is a C99 program that finds assocgen with find_package and links two
libraries generated at build time from one spec (one .cu file an instance, and a single header
under another prefix).  Built with CMake + Ninja and nvcc (sm_80 and sm_90, nothing runs): the program
links; a second build does no work; a touched spec regenerates but compiles nothing; a spec that
gains an instance re-configures and the new function is in the library; a bad spec stops the
configure with the generator's one-line message.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .util import CUDA, NVCC, REPO

PROJECT = REPO / "tests" / "cpu" / "cmake_project"
GEN = [sys.executable, "-m", "assocgen"]
# the generator as this interpreter runs it (a list: CMake's ASSOCGEN_COMMAND)
GEN_COMMAND = ";".join(GEN)


@pytest.fixture(scope="module")
def tools(nvcc):
    missing = [t for t in ("cmake", "ninja", "nm") if not shutil.which(t)]
    if missing:
        pytest.fail(f"not on the PATH: {', '.join(missing)} (the CMake tests need CMake, Ninja and binutils)")
    r = subprocess.run([*GEN, "--cmake-dir"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    cmake_dir = Path(r.stdout.strip())
    assert (cmake_dir / "assocgen-config.cmake").is_file(), cmake_dir
    return cmake_dir


def _env():
    # this interpreter's scripts first, so that the package's own discovery (find_program
    # assocgen, else find_package(Python3)) lands on the environment under test
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), str(Path(NVCC).parent), env.get("PATH", "")])
    env.pop("CUDAARCHS", None)
    return env


def cmake(*args, cwd=None, check=True, timeout=300) -> subprocess.CompletedProcess:
    r = subprocess.run(["cmake", *map(str, args)], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=timeout)
    if check:
        assert r.returncode == 0, f"cmake {' '.join(map(str, args))} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    return r


def configure(src: Path, build: Path, cmake_dir: Path, *extra, check=True) -> subprocess.CompletedProcess:
    return cmake(
        "-S",
        src,
        "-B",
        build,
        "-G",
        "Ninja",
        f"-Dassocgen_DIR={cmake_dir}",
        f"-DCMAKE_CUDA_COMPILER={NVCC}",
        *extra,
        check=check,
    )


def build(build_dir: Path) -> str:
    return cmake("--build", build_dir).stdout


def no_work(build_dir: Path):
    r = subprocess.run(["ninja", "-C", str(build_dir), "-n"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no work to do" in r.stdout, r.stdout


def defined(path: Path) -> set:
    """The external symbols an object, archive or program defines."""
    r = subprocess.run(["nm", "-g", "--defined-only", str(path)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return {line.split()[-1] for line in r.stdout.splitlines() if len(line.split()) == 3}


def add_reduce(spec: Path, op: str, type_: str):
    spec.write_text(spec.read_text() + f'\n[[reduce]]\nop = "{op}"\ntype = "{type_}"\n')


@pytest.fixture(scope="module")
def built(tools, tmp_path_factory):
    """The project copied to a scratch folder, configured and built once."""
    root = tmp_path_factory.mktemp("cmake")
    src, bld = root / "src", root / "build"
    shutil.copytree(PROJECT, src)
    configure(src, bld, tools, f"-DASSOCGEN_COMMAND={GEN_COMMAND}", "-DCMAKE_CUDA_ARCHITECTURES=90")
    out = build(bld)
    return src, bld, out


def test_project_builds_and_links_both_libraries(built):
    src, bld, out = built
    demo = bld / "demo"
    assert demo.is_file() and os.access(demo, os.X_OK), out
    symbols = defined(demo)
    for name in (
        "cm_reduce_sum_f32",
        "cm_reduce_sum_f32_workspace_bytes",
        "cs_reduce_sum_f32",
        "cs_reduce_sum_f32_workspace_bytes",
    ):
        assert name in symbols, f"{name} not in demo"
    # every instance of the spec is in each library, under its prefix
    cm, cs = defined(bld / "libcm_kernels.a"), defined(bld / "libcs_kernels.a")
    for name in ("reduce_sum_f32", "reduce_min_f32", "scan_sum_i32", "exscan_sum_i32"):
        assert f"cm_{name}" in cm and f"cs_{name}" in cs, name
    # outputs where the package puts them by default; the single header's stub beside cs.h
    assert (bld / "assocgen" / "cm_kernels" / "cm.h").is_file()
    assert (bld / "assocgen" / "cm_kernels" / "cm_scan_sum_i32.cu").is_file()
    stub = bld / "assocgen" / "cs_kernels" / "cs_implementation.cu"
    assert '#define CS_IMPLEMENTATION\n#include "cs.h"' in stub.read_text()
    assert not list((bld / "assocgen" / "cs_kernels").glob("cs_reduce*.cu"))


def _nvcc_lines(bld: Path) -> list[str]:
    r = subprocess.run(["ninja", "-C", str(bld), "-t", "commands"], capture_output=True, text=True, timeout=60)
    nvcc_lines = [line for line in r.stdout.splitlines() if line.startswith(NVCC) and " -c " in line]
    assert nvcc_lines, r.stdout
    return nvcc_lines


def test_architectures_given_or_the_projects(built):
    _, bld, _ = built
    for line in _nvcc_lines(bld):
        assert "-std=c++17" in line, line
        if "/cm_kernels/" in line:  # ARCHITECTURES 80-real 90: one fat object
            assert re.search(r"arch=compute_80,code=\[?sm_80\b", line), line
            assert re.search(r"arch=compute_90,code=\[compute_90,sm_90\]", line), line
        else:  # the project's CMAKE_CUDA_ARCHITECTURES
            assert re.search(r"arch=compute_90\b", line) and "compute_80" not in line, line


def test_second_build_does_no_work(built):
    _, bld, _ = built
    no_work(bld)


def test_touched_spec_regenerates_but_compiles_nothing(built):
    src, bld, _ = built
    spec = src / "spec.toml"
    os.utime(spec)  # now: newer than the outputs
    out = build(bld)
    assert "assocgen: generating cm_kernels" in out, out
    assert "unchanged" in out, out
    assert "Building CUDA object" not in out and "Linking" not in out, out
    no_work(bld)


def test_spec_gaining_an_instance_rebuilds_with_it(built):
    src, bld, _ = built
    assert "cm_reduce_max_i32" not in defined(bld / "libcm_kernels.a")
    add_reduce(src / "spec.toml", "max", "i32")
    out = build(bld)
    assert "Re-running CMake" in out, out
    assert "cm_reduce_max_i32" in defined(bld / "libcm_kernels.a"), out
    assert "cs_reduce_max_i32" in defined(bld / "libcs_kernels.a"), out
    assert (bld / "assocgen" / "cm_kernels" / "cm_reduce_max_i32.cu").is_file()
    no_work(bld)


def test_chosen_architecture_is_kept(built):
    # runs last of the `built` tests: it re-configures the build folder
    _, bld, _ = built
    cmake("-DCMAKE_CUDA_ARCHITECTURES=80", bld)
    cs = [line for line in _nvcc_lines(bld) if "/cm_kernels/" not in line]
    assert cs and all(re.search(r"arch=compute_80\b", line) for line in cs), cs


def test_bad_spec_stops_the_configure(tools, tmp_path):
    src = tmp_path / "src"
    shutil.copytree(PROJECT, src)
    add_reduce(src / "spec.toml", "sum", "f33")
    gen = subprocess.run([*GEN, src / "spec.toml", "--list-files"], capture_output=True, text=True, timeout=60)
    assert gen.returncode == 2, gen.stderr
    message = gen.stderr.strip()
    assert message.startswith("error: ") and "f33" in message, message
    r = configure(src, tmp_path / "build", tools, f"-DASSOCGEN_COMMAND={GEN_COMMAND}", check=False)
    assert r.returncode != 0, r.stdout
    assert "assocgen_add_library(cm_kernels): the generator rejects the spec" in r.stderr, r.stderr
    assert message in r.stderr, r.stderr
    assert "Traceback" not in r.stderr, r.stderr


# ---- find_package alone: a C project, no CUDA compiler detection (fast)

FIND_ONLY = """cmake_minimum_required(VERSION 3.24)
project(find_only LANGUAGES C)
find_package(assocgen ${WANT} REQUIRED)
message(STATUS "assocgen ${assocgen_VERSION}: ${ASSOCGEN_COMMAND}")
"""


def find_only(tools, tmp_path, *extra):
    src = tmp_path / "src"
    src.mkdir(exist_ok=True)
    (src / "CMakeLists.txt").write_text(FIND_ONLY)
    bld = tmp_path / "build"
    shutil.rmtree(bld, ignore_errors=True)
    return cmake(
        "-S",
        src,
        "-B",
        bld,
        "-G",
        "Ninja",
        f"-Dassocgen_DIR={tools}",
        f"-DCUDAToolkit_ROOT={CUDA}",
        *extra,
        check=False,
    )


def test_finds_the_generator_by_itself(tools, tmp_path):
    r = find_only(tools, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    version = subprocess.run([*GEN, "--version"], capture_output=True, text=True, timeout=60).stdout.split()[-1]
    m = re.search(r"-- assocgen (\S+): (.+)", r.stdout)
    assert m and m.group(1) == version, r.stdout
    assert "assocgen" in m.group(2), r.stdout
    assert "Warning" not in r.stderr, r.stderr


def test_version_file(tools, tmp_path):
    version = subprocess.run([*GEN, "--version"], capture_output=True, text=True, timeout=60).stdout.split()[-1]
    major, minor = (int(x) for x in version.split(".")[:2])
    good = [version, f"{major}.{minor}", f"{major}.{minor}...{major + 1}"]
    bad = [f"{major + 1}", f"{major}.{minor + 1}", f"{major + 1}...{major + 2}"]
    if major == 0:
        bad.append(f"0.{minor - 1}" if minor else "1.0")  # before 1.0 a minor version may break
    for want, ok in [(w, True) for w in good] + [(w, False) for w in bad]:
        r = find_only(tools, tmp_path, f"-DWANT={want}", f"-DASSOCGEN_COMMAND={GEN_COMMAND}")
        assert (r.returncode == 0) == ok, f"find_package(assocgen {want}): {r.stdout}{r.stderr}"


def test_a_command_that_does_not_run_is_one_clear_error(tools, tmp_path):
    r = find_only(tools, tmp_path, f"-DASSOCGEN_COMMAND={tmp_path / 'no-such-assocgen'}")
    assert r.returncode != 0
    assert "assocgen: the generator does not run" in r.stderr, r.stderr
    assert "ASSOCGEN_COMMAND" in r.stderr, r.stderr
