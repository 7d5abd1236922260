"""The GPU test of one family's spec, shared by tests/gpu/transpose/run.py and
tests/gpu/matmul/run.py: render the spec beside the driver's table of cases (`cases(spec)`,
written to cases.inc), build it with driver.cu (a warning fails the build), run it, then run the
named instances' quick cases under compute-sanitizer memcheck and racecheck.

    main(here, "transpose", "tt.h", cases, sanitized)   # here: the folder of spec.toml, driver.cu
    main(..., openmp=True)                              # the driver uses OpenMP (tests/gpu/driver.cuh)

Options: [--quick] [--build-only] [--no-sanitizer] [--jobs N] [--ptx NN]; logs under $OUT (or
build/<family>-test); the driver's last line is `N passed, M failed`.  --ptx 75 builds compute_75
PTX only (in build/<family>-test-ptx75), which the driver JIT-compiles at load: the pre-sm_80 paths
on an H100.
"""

import argparse
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NVCC = os.environ.get("NVCC", "nvcc")
ARCH = os.environ.get("ARCH", "sm_90")

try:
    from assocgen import emit
    from assocgen.spec import load
except ImportError as e:
    sys.exit(f"error: {e}: install the generator first (pip install -e . from the repository root)")


def build(
    here: Path, family: str, header: str, cases, jobs: int, openmp: bool = False, spec_file=None, ptx: int = 0
) -> Path:
    spec = load(spec_file or here / "spec.toml")
    files = emit.render(spec, header)
    out = ROOT / "build" / (f"{family}-test" + (f"-ptx{ptx}" if ptx else ""))
    target = ["-gencode", f"arch=compute_{ptx},code=compute_{ptx}"] if ptx else [f"-arch={ARCH}"]
    src = out / "src"
    src.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (src / name).write_text(text)
    (src / "cases.inc").write_text(cases(spec))
    omp = ["-Xcompiler", "-fopenmp"] if openmp else []  # the runners fill large inputs in parallel
    flags = ["-O3", *target, "-std=c++17", "-Xcompiler", "-Wall,-Wextra", *omp, "-I", str(src)]
    sources = [src / n for n in files if n.endswith(".cu")] + [here / "driver.cu"]
    procs, objs = [], []
    for s in sources:
        obj = out / (s.stem + ".o")
        objs.append(obj)
        procs.append(subprocess.Popen([NVCC, *flags, "-c", str(s), "-o", str(obj)], stderr=subprocess.PIPE, text=True))
        if len(procs) >= jobs:
            _wait(procs.pop(0))
    for p in procs:
        _wait(p)
    exe = out / f"{family}_test"
    subprocess.run([NVCC, *target, "-o", str(exe), *map(str, objs), *(["-lgomp"] if openmp else [])], check=True)
    return exe


def host_fn(ret: str, name: str, params: str, body: str) -> str:
    """A static host function around the spec's own C (statements, one a line): the CPU
    references' copy of an operator's identity, combine or lift."""
    body = "\n    ".join(body.splitlines())
    return f"static {ret} {name}({params})\n{{\n    {body}\n}}\n"


def driver_call(inst, fn: str, case: str, sizes, quick: str = "quick", In: str = "") -> str:
    """The driver's call (tests/gpu/driver.cuh) that tests an instance: its runner, the record of
    `fn` (the function called, e.g. its public name) as that runner's function type, the case
    (an expression) and, but along rows and columns, the sizes (`sizes()`, an expression). `In`:
    the input element's type where the record takes another than the operator's."""
    op, name = inst.op, inst.public_name
    In, Out, Acc = In or op.in_type.c, op.out_type.c, op.acc_type.c
    record = f'{{"{name}", {name}_workspace_bytes, {fn}'
    if inst.family in ("rows", "cols"):
        if inst.family == "rows" and inst.kind != "reduce":  # scans along rows
            exclusive = str(inst.kind == "exscan").lower()
            return f"run_rows_scan(RowsScanFn<{In}, {Out}>{record}}}, {case}, {quick}, st, {exclusive});"
        down = ", true" if inst.family == "cols" else ""
        return f"run_rows(RowsFn<{In}, {Out}>{record}}}, {case}, {quick}, st{down});"
    K = inst.index.c if inst.index else ""
    H = K if inst.heads == "keys" else "uint8_t"
    runner, fn_type = {
        "reduce": ("run_reduce", f"ReduceFn<{In}, {Out}>"),
        "scan": ("run_scan", f"ScanFn<{In}, {Out}>"),
        "exscan": ("run_exscan", f"ExScanFn<{In}, {Out}, {Acc}>"),
        "segscan": ("run_segscan", f"SegScanFn<{In}, {Out}, {H}>"),
        "exsegscan": ("run_exsegscan", f"ExSegScanFn<{In}, {Out}, {H}, {Acc}>"),
        "reduce_by_key": ("run_reduce_by_key", f"ReduceByKeyFn<{In}, {Out}, {K}>"),
        "segreduce": ("run_segreduce", f"SegReduceFn<{In}, {Out}, {K}>"),
    }[inst.primitive]
    if "segscan" in inst.primitive:  # heads as flags or as keys
        record += ", true" if inst.heads == "keys" else ", false"
    return f"{runner}({fn_type}{record}}}, {case}, {sizes()}, st);"


def _wait(p):
    err = p.communicate()[1]
    if p.returncode or "warning" in err.lower():
        sys.exit(f"build: {' '.join(p.args)}\n{err}")


def main(here: Path, family: str, header: str, cases, sanitized, openmp: bool = False) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument("--no-sanitizer", action="store_true")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--ptx", type=int, default=0, help="build as compute_NN PTX only (JIT-compiled at load)")
    args = ap.parse_args()
    out = Path(os.environ.get("OUT", ROOT / "build" / (f"{family}-test" + (f"-ptx{args.ptx}" if args.ptx else ""))))
    out.mkdir(parents=True, exist_ok=True)
    exe = build(here, family, header, cases, args.jobs, openmp, ptx=args.ptx)
    if args.ptx:  # the sanitizer runs reload what the JIT compiled
        os.environ.setdefault("CUDA_CACHE_MAXSIZE", str(4 << 30))
    if args.build_only:
        print(f"built {exe}")
        return 0
    rc = subprocess.run([str(exe)] + (["--quick"] if args.quick else [])).returncode
    if not args.no_sanitizer:
        rc = sanitize(exe, sanitized, out, args.jobs) or rc
    return rc


def sanitize(exe: Path, names, out: Path, jobs: int, tools=("memcheck", "racecheck"), driver_args=None) -> int:
    """The named instances under each of compute-sanitizer's `tools` (memcheck and racecheck), several
    at once (each is slow, mostly on the CPU), each printed and its log written under `out` as it
    ends (so a run cut short by a time limit keeps what finished). The driver runs with
    `driver_args(name)`, by default the instance's quick cases (`--quick --only NAME`)."""
    if not names:
        return 0
    width, rc = max(map(len, names)), 0
    runs = [(tool, name) for tool in tools for name in names]
    args_of = driver_args or (lambda name: ["--quick", "--only", name])

    def one(run):
        tool, name = run
        cmd = ["compute-sanitizer", f"--tool={tool}", "--error-exitcode=3", str(exe), *args_of(name)]
        return subprocess.run(cmd, capture_output=True, text=True)

    with ThreadPoolExecutor(max_workers=min(8, jobs)) as pool:
        started = {pool.submit(one, run): run for run in runs}
        for done in as_completed(started):
            (tool, name), r = started[done], done.result()
            (out / f"{tool}-{name}.log").write_text(r.stdout + r.stderr)
            summary = [ln for ln in (r.stdout + r.stderr).splitlines() if "SUMMARY" in ln or "passed," in ln]
            print(f"{tool:9s} {name:{width}s} rc={r.returncode} {' | '.join(summary)}", flush=True)
            rc = rc or r.returncode
    return rc
