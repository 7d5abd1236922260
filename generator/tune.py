"""`assocgen tune SPEC`: measure shapes on this machine's GPU and write a tuning file.

For each instance whose shape the spec leaves to the generator (reduces and scans of one input,
scans also segmented by flags or keys), it generates every candidate shape
(tuning.tune_candidates) as a function of its own, builds them with nvcc beside a measuring
program (templates/tune/harness.cu.j2), checks every candidate against an in-order reference on
random data (segmented ones on random segments), times each per call and replayed from a
CUDA graph (cold by default: the calls rotate over inputs spanning 4x the L2 cache, as the
benchmark's; --hot: one input) over a sweep of sizes, and picks a shape by size: at each size the
fastest (the geometric mean of the two times), kept only where it beats the built-in shape for
that size by more than MARGIN, with the thresholds between sizes at their geometric midpoints.  The file says
which GPU it was measured on; `assocgen SPEC --tuning FILE` generates with it.

Exit codes as the generator's: 0 done, 2 a mistake in the spec or the command line, 1 anything
else (no nvcc, no GPU, a build that failed, a candidate that computed a wrong result).
"""

import argparse
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import __version__, tunefile, tuning
from .emit import environment, render
from .exits import EXIT_FAILED, EXIT_OK, EXIT_SPEC, Parser, UsageError
from .spec import Instance, Kernel, Spec, SpecError, load

MARGIN = 0.04  # a shape other than the built-in one must be this much faster at a size to be taken (noise: ~2%)
MAX_SHAPES = 4  # shapes by n an instance keeps at most (each is a kernel in its source)
SIZES = [1 << k for k in range(12, 29, 2)]  # 2^12 .. 2^28, every other power of two
QUICK_SIZES = [1 << 12, 1 << 16, 1 << 20]
CHECKS = [0, 1, 33, 1000, 4097, 65537, (1 << 20) + 7, (1 << 22) + 3]
QUICK_CHECKS = [0, 1, 33, 1000, 4097, 65537]


class TuneError(Exception):
    """One line: why tuning stopped."""


@dataclass
class Plan:
    """One instance to tune: its candidate shapes and their public names in the candidates' header."""

    inst: Instance
    cands: list[Instance]
    pubs: list[str]


@dataclass
class Measured:
    """What tuning found: the GPU, the entries of the tuning file (tunefile.write_text), a table
    of the chosen shapes against the built-in ones, and notes (instances that keep theirs)."""

    gpu: str = ""
    arch: str = ""
    entries: list[tuple[Instance, tuple, list[str]]] = field(default_factory=list)
    table: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def parser() -> Parser:
    p = Parser(
        prog="assocgen tune",
        description="Measure the spec's reduces and scans (segmented scans too) in candidate shapes on this "
        "machine's GPU and write a tuning file for `assocgen SPEC --tuning FILE`.",
    )
    p.add_argument("spec", help="TOML spec file")
    p.add_argument("-o", "--out", default="tuning.toml", help="the tuning file to write (default: tuning.toml)")
    p.add_argument(
        "--only", action="append", default=[], metavar="NAME", help="tune only this public name (repeatable)"
    )
    p.add_argument(
        "--sizes",
        metavar="N,N,...",
        help="the sizes n (elements) at which every candidate is timed, e.g. 4096,65536,0x100000 (each 1 to 2^40;"
        f" sorted, repeats dropped). At each size the fastest shape is kept where it beats the built-in one by"
        f" more than {MARGIN:.0%}% (at most {MAX_SHAPES} shapes an instance); the tuning file switches shapes at the"
        " geometric midpoint of two neighbouring sizes, the last shape for every larger n. The correctness checks"
        " run at sizes of their own (0 to 2^22 + 3). Default: 2^12, 2^14, ..., 2^28 (every other power of two);"
        " with --quick 2^12, 2^16, 2^20",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run: the sizes 2^12, 2^16, 2^20 (unless --sizes) and checks only up to 65537 elements",
    )
    p.add_argument(
        "--hot",
        action="store_true",
        help="time every call on one input, which stays in the L2 cache where it fits (default: cold, each call"
        " on the next of inputs spanning 4x the L2 cache, as the benchmark times its reduces and scans)",
    )
    p.add_argument("--nvcc", default=os.environ.get("NVCC", "nvcc"), help="the CUDA compiler (default: $NVCC or nvcc)")
    p.add_argument("--arch", help="nvcc's -arch (default: that of this machine's GPU, e.g. sm_90)")
    p.add_argument(
        "--build-only",
        action="store_true",
        help="generate and compile the candidates and measuring programs, then stop (no GPU needed; give --arch)",
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="nvcc runs at once (default: the number of CPUs, %(default)s here)",
    )
    p.add_argument(
        "--work", metavar="DIR", help="keep the generated candidates and logs in DIR (default: a temporary folder)"
    )
    return p


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(t, 0) for t in text.split(",") if t.strip()]
    except ValueError:
        sizes = []
    if not sizes or any(n < 1 or n > 1 << 40 for n in sizes):
        raise TuneError(f"--sizes: {text!r} is not a list of sizes from 1 to 2^40, e.g. 4096,65536,1048576")
    return sorted(set(sizes))


def _run(cmd: list[str], log: Path, cwd: Path | None = None) -> str:
    try:
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    except FileNotFoundError:
        raise TuneError(f"{cmd[0]}: not found (assocgen tune needs the CUDA compiler; set --nvcc or $NVCC)") from None
    log.write_text(f"$ {' '.join(map(str, cmd))}\n{r.stdout}{r.stderr}")
    if r.returncode:
        lines = (r.stderr or r.stdout).strip().splitlines()
        raise TuneError(f"{cmd[0]} failed ({lines[-1] if lines else f'exit {r.returncode}'}); log: {log}")
    return r.stdout


def choose(
    sizes: list[int],
    scores: list[list[float | None]],
    builtin: list[int],
    margin: float = MARGIN,
    max_shapes: int = MAX_SHAPES,
) -> list[tuple[int | None, int]]:
    """The shapes by n: [(upto or None, candidate)].  `scores[c][k]`: candidate c's time at
    sizes[k] (None: not usable); `builtin[k]`: the built-in shape's candidate at sizes[k]."""

    def at(c: int, k: int) -> float:
        v = scores[c][k]
        return math.inf if v is None else v

    win: list[int] = []
    for k in range(len(sizes)):
        b = builtin[k]
        usable = [c for c in range(len(scores)) if scores[c][k] is not None]
        best = min(usable, key=lambda c: at(c, k), default=b)
        clear = scores[b][k] is None or at(best, k) < at(b, k) * (1 - margin)
        p = win[-1] if win else None
        if p is not None and scores[p][k] is not None and at(p, k) <= at(best, k) * (1 + margin):
            if scores[b][k] is None or at(p, k) < at(b, k) * (1 - margin):
                best = p  # the shape of the size before, as fast and clear of the built-in: fewer switches
        win.append(best if clear else b)
    runs = _runs(win)
    while len({c for c, _ in runs}) > max_shapes:
        # give the run whose shape costs least to replace its neighbour's shape
        def cost(r: int, by: int, runs: list[tuple[int, list[int]]] = runs) -> float:
            c, ks = runs[r]
            return sum((scores[by][k] or math.inf) / at(c, k) for k in ks) - len(ks)

        options = [
            (cost(r, runs[r + d][0]), r, r + d) for r in range(len(runs)) for d in (-1, 1) if 0 <= r + d < len(runs)
        ]
        _, r, n = min(options)
        runs[n] = (runs[n][0], sorted(runs[n][1] + runs[r][1]))
        del runs[r]
        runs = _runs([c for c, ks in runs for _ in ks], [k for _, ks in runs for k in ks])
    out: list[tuple[int | None, int]] = []
    for r, (c, ks) in enumerate(runs):
        if r + 1 < len(runs):
            a, b = sizes[ks[-1]], sizes[runs[r + 1][1][0]]
            out.append((int(math.sqrt(a * b)), c))
        else:
            out.append((None, c))
    return out


def _runs(cands: list[int], ks: list[int] | None = None) -> list[tuple[int, list[int]]]:
    """Neighbours of the same candidate joined: [(candidate, [their size indices])]; `cands[j]`
    is the candidate at size index `ks[j]` (default: j)."""
    runs: list[tuple[int, list[int]]] = []
    for j, c in enumerate(cands):
        k = j if ks is None else ks[j]
        if runs and runs[-1][0] == c:
            runs[-1][1].append(k)
        else:
            runs.append((c, [k]))
    return runs


def _builtin_pick(inst: Instance, cands: list[Instance], n: int) -> int:
    """The candidate the built-in shapes use for n."""
    shapes = tuning.size_shapes(inst) or [(None, inst)]
    shape = next(s for upto, s in shapes if upto is None or n <= upto)
    key = (shape.block, shape.items, shape.blocks_per_sm)
    return next(k for k, c in enumerate(cands) if (c.block, c.items, c.blocks_per_sm) == key)


def _label(c: Instance) -> str:
    return f"{c.block} x {c.items}" + (f" ({c.blocks_per_sm} a SM)" if c.blocks_per_sm else "")


def tune(argv: list[str]) -> int:
    """`assocgen tune ARGV`: read, measure, write; returns the exit code."""
    try:
        args, spec, sizes, chosen = _read(argv)
    except (SpecError, TuneError) as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_SPEC
    try:
        result = _measure_in_work(spec, chosen, sizes, args)
    except KeyboardInterrupt:
        print("error: interrupted (the temporary folder was removed; --work keeps one)", file=sys.stderr)
        return EXIT_FAILED
    except TuneError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_FAILED
    except OSError as e:
        print(f"error: {str(e.filename) + ': ' if e.filename else ''}{e.strerror or e}", file=sys.stderr)
        return EXIT_FAILED
    return _report(spec, args, result)


def _read(argv: list[str]) -> tuple[argparse.Namespace, Spec, list[int], list[Instance]]:
    """The command line, the spec, the sizes and the instances to tune, each checked; notes for
    the instances left out."""
    try:
        args = parser().parse_args(argv)
    except UsageError as e:
        raise SpecError("command line", "", str(e)) from None
    if args.jobs < 1:
        raise SpecError("command line", "--jobs", f"{args.jobs} is not a number of nvcc runs at once (1 or more)")
    spec = load(args.spec)
    sizes = _sizes(args.sizes) if args.sizes else (QUICK_SIZES if args.quick else SIZES)
    _check_out(args)
    return args, spec, sizes, _chosen(spec, args)


def _check_out(args: argparse.Namespace) -> None:
    out = Path(args.out)
    if not args.build_only and (not out.name or out.name in (".", "..") or out.is_dir()):
        raise SpecError("command line", "-o", f"{args.out!r} is not a file name for the tuning file")
    if not args.build_only and not out.resolve().parent.is_dir():
        raise SpecError("command line", "-o", f"{out.parent}: no such folder for the tuning file")
    if args.build_only and not args.arch:
        raise SpecError("command line", "--build-only", "give --arch (e.g. sm_90): there is no GPU to ask")


def _chosen(spec: Spec, args: argparse.Namespace) -> list[Instance]:
    """The instances to tune (--only, and those tunefile.tunable takes); a note for each other."""
    names = {getattr(i, "public_name", "") for i in spec.instances}
    for name in args.only:
        if name not in names:
            raise SpecError("command line", "--only", f"{name!r} is not an instance of {args.spec}")
    chosen, skipped = [], []
    for inst in spec.instances:
        name = getattr(inst, "public_name", "")
        if args.only and name not in args.only:
            continue
        why = tunefile.tunable(inst, spec)
        if why:
            skipped.append(f"{name}: {why}")
        elif isinstance(inst, Instance):  # as every tunable one is (a reduce or a scan)
            chosen.append(inst)
    if not chosen:
        raise SpecError(args.spec, "", "no instance to tune: " + ("; ".join(skipped) or "the spec has none"))
    for line in skipped:
        print(f"note: not tuned: {line}", file=sys.stderr)
    return chosen


def _measure_in_work(spec: Spec, chosen: list[Instance], sizes: list[int], args: argparse.Namespace) -> Measured:
    """_measure in --work (kept), or in a temporary folder, which is removed after, whether tuning
    succeeded or failed (a failure's message then names no log in it), unless --build-only, whose
    build is kept and named."""
    if args.work:
        Path(args.work).mkdir(parents=True, exist_ok=True)
        return _measure(spec, chosen, sizes, QUICK_CHECKS if args.quick else CHECKS, args, Path(args.work))
    work = Path(tempfile.mkdtemp(prefix="assocgen-tune-"))
    keep = False
    try:
        result = _measure(spec, chosen, sizes, QUICK_CHECKS if args.quick else CHECKS, args, work)
        keep = args.build_only
    except TuneError as e:
        raise TuneError(re.sub(r"; log: \S+", "; give --work DIR to keep the build's logs", str(e))) from None
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    return result


def _report(spec: Spec, args: argparse.Namespace, result: Measured) -> int:
    """Print the notes and the table; write the tuning file (unless --build-only)."""
    for line in result.notes:
        print(f"note: {line}", file=sys.stderr)
    if args.build_only:
        print(result.table[0])
        return EXIT_OK
    out = Path(args.out)
    header = (
        f"assocgen tuning file, written by `assocgen tune` ({__version__}) from {Path(args.spec).name}\n"
        f"(spec {spec.digest}).  Give it to the generator: assocgen SPEC --tuning {out.name}\n"
        "Each shape: the first whose upto holds n; times per call and from a CUDA graph, in microseconds,"
        + (" hot (one input)." if args.hot else " cold (inputs spanning 4x the L2 cache).")
    )
    try:
        tmp = out.with_name(out.name + ".tmp")
        tmp.write_text(tunefile.write_text(result.gpu, result.arch, result.entries, header))
        os.replace(tmp, out)
    except OSError as e:
        print(f"error: {out}: {e.strerror or e}", file=sys.stderr)
        return EXIT_FAILED
    for row in result.table:
        print(row)
    print(f"wrote {out} ({result.gpu}, {result.arch})")
    return EXIT_OK


def harness_source(inst: Instance, cands: list[str], header: str, stamp: str = f"assocgen {__version__} tune") -> str:
    """The measuring program of `inst` over the public functions `cands` (declared in `header`):
    floats checked within a bound of their size, everything else exactly."""
    return (
        environment()
        .get_template("tune/harness.cu.j2")
        .render(
            inst=inst,
            op=inst.op,
            header=header,
            stamp=stamp,
            cands=cands,
            tolerance="1e-4" if inst.op.out_type.size <= 4 else "1e-10",
            fill_note=_fill_note(inst),
            heads_note=_heads_note(inst),
        )
    )


def _measure(
    spec: Spec, chosen: list[Instance], sizes: list[int], checks: list[int], args: argparse.Namespace, work: Path
) -> Measured:
    """Build, check and time every instance's candidates; pick each one's shapes."""
    gpu, arch = ("", "") if args.build_only else _query_gpu(args.nvcc, work)
    # the candidates for the GPU's SM (a GPU newer than the table: TARGET's)
    plans = _write_sources(spec, chosen, work, tuning.ARCHS.get(args.arch or arch, tuning.TARGET))
    nvcc = [args.nvcc, "-O3", f"-arch={args.arch or arch}", "-I", str(work)]
    sources = sorted(p.name for p in work.glob("*.cu"))
    print(f"tune: building {len(sources) - len(plans)} candidates of {len(plans)} instances in {work}", file=sys.stderr)
    pool = ThreadPoolExecutor(args.jobs)
    try:
        list(pool.map(lambda src: _build(nvcc, src, work), sources))
    finally:  # a failed build or Ctrl-C: the builds not started are not started
        pool.shutdown(cancel_futures=True)
    if args.build_only:
        for k, plan in enumerate(plans):
            _link(nvcc, k, plan, work)
        built = f"built {len(sources) - len(plans)} candidates and {len(plans)} measuring programs in {work}"
        built += "" if args.work else " (kept: remove it when done)"
        return Measured(table=[built])
    result = Measured(gpu, arch)
    for k, plan in enumerate(plans):
        _link(nvcc, k, plan, work)
        print(f"tune: measuring {plan.inst.public_name} ({len(plan.cands)} shapes)", file=sys.stderr)
        lines = _run_harness(k, plan.inst, [*map(str, checks), "time", *map(str, sizes)], args.hot, work)
        skip = _checked(plan, lines, sizes, checks)
        if skip:
            result.notes.append(skip)
            continue
        _choose_shapes(plan, lines, sizes, result)
    return result


def _write_sources(spec: Spec, chosen: list[Instance], work: Path, arch: tuning.Arch) -> list[Plan]:
    """Every instance's candidates as public functions of one spec, rendered into `work`, and a
    measuring program an instance (harnessK.cu)."""
    plans = []
    instances: list[Kernel] = []
    for k, inst in enumerate(chosen):
        cands = tuning.tune_candidates(inst, arch)
        pubs = [f"{spec.prefix}_tune{k}_{j}" for j in range(len(cands))]
        instances += [replace(c, public_name=p) for c, p in zip(cands, pubs, strict=True)]
        plans.append(Plan(inst, cands, pubs))
    cand_spec = replace(spec, instances=instances, tuning="", nccl=False)
    for name, text in render(cand_spec, header_name="tune.h").items():
        (work / name).write_text(text)
    for k, plan in enumerate(plans):
        (work / f"harness{k}.cu").write_text(harness_source(plan.inst, plan.pubs, "tune.h"))
    return plans


def _build(nvcc: list[str], src: str, work: Path) -> None:
    _run([*nvcc, "-c", src, "-o", src[:-3] + ".o"], work / (src[:-3] + ".build.log"), cwd=work)


def _link(nvcc: list[str], k: int, plan: Plan, work: Path) -> None:
    objs = [f"{p}.o" for p in plan.pubs] + [f"harness{k}.o"]
    _run([*nvcc, *objs, "-o", f"harness{k}"], work / f"harness{k}.link.log", cwd=work)


def _run_harness(k: int, inst: Instance, args: list[str], hot: bool, work: Path) -> list[list[str]]:
    """Run measuring program k (`check N... time N...`): its output lines, split at tabs."""
    try:
        r = subprocess.run(
            [str(work / f"harness{k}"), "check", *args] + (["hot"] if hot else []), capture_output=True, text=True
        )
    except OSError as e:
        raise TuneError(f"harness{k}: {e}") from None
    (work / f"harness{k}.log").write_text(r.stdout + r.stderr)
    lines = [ln.split("\t") for ln in r.stdout.splitlines()]
    for f in lines:
        if f[0] == "error":
            no_gpu = "no CUDA-capable device" in f[1] or "driver" in f[1]
            raise TuneError(
                "no GPU here: assocgen tune runs on the machine with the GPU to tune for"
                if no_gpu
                else f"{inst.public_name}: {f[1]}"
            )
    if r.returncode:
        raise TuneError(
            f"{inst.public_name}: the measuring program failed (exit {r.returncode}); log: {work / f'harness{k}.log'}"
        )
    return lines


def _checked(plan: Plan, lines: list[list[str]], sizes: list[int], checks: list[int]) -> str:
    """Raise TuneError where a candidate computed a wrong result; a note (the instance is not
    tuned) where the built-in shapes too differ from the in-order reference; else ""."""
    inst, cands = plan.inst, plan.cands
    bad = [f for f in lines if f[0] == "check" and f[3] != "ok"]
    builtins = {_builtin_pick(inst, cands, n) for n in (*sizes, *checks)}
    wrong = [f for f in bad if int(f[1]) in builtins]
    if wrong and inst.op.out_type.is_integer:
        f = wrong[0]
        raise TuneError(
            f"{inst.public_name} in its built-in shape {_label(cands[int(f[1])])} differs from the in-order"
            f" reference at n = {f[2]} ({f[3]}: {f[4]}), with integers: please report it"
        )
    if wrong:
        # the built-in shapes differ from the in-order fold too: rounding in the operator
        # (floating point in a user type), which the reference cannot judge
        return (
            f"{inst.public_name}: not tuned: its results differ from an in-order fold in their bits"
            " (floating point in a user type?), so the shapes cannot be checked; it keeps the built-in ones"
        )
    if bad:
        c, n, what, detail = int(bad[0][1]), bad[0][2], bad[0][3], bad[0][4]
        raise TuneError(
            f"{inst.public_name} in shape {_label(cands[c])} gave a wrong result at n = {n} ({what}: {detail})"
            " where the built-in shape is right: please report it"
        )
    return ""


def _choose_shapes(plan: Plan, lines: list[list[str]], sizes: list[int], result: Measured) -> None:
    """From the times, pick the shapes by n (choose); add them to result's entries with a line a
    size to its table, or a note where the built-in shapes stay."""
    inst, cands = plan.inst, plan.cands
    times = {(int(f[1]), int(f[2])): (float(f[3]), float(f[4])) for f in lines if f[0] == "time"}
    scores = [
        [math.sqrt(times[(c, n)][0] * times[(c, n)][1]) if (c, n) in times else None for n in sizes]
        for c in range(len(cands))
    ]
    builtin = [_builtin_pick(inst, cands, n) for n in sizes]
    picks = choose(sizes, scores, builtin)
    shapes = tuple((upto, cands[c].block, cands[c].items, cands[c].blocks_per_sm) for upto, c in picks)
    chosen_at = [next(c for upto, c in picks if upto is None or n <= upto) for n in sizes]
    notes = []
    for j, n in enumerate(sizes):
        c = chosen_at[j]
        t, b = times.get((c, n)), times.get((builtin[j], n))
        if t is None or b is None:
            continue
        notes.append(
            f"n {n}: {_label(cands[c])} {t[0]:.2f} / {t[1]:.2f} us, built-in {_label(cands[builtin[j]])}"
            f" {b[0]:.2f} / {b[1]:.2f} us"
        )
        result.table.append(
            f"{inst.public_name:32} n {n:>10}  {_label(cands[c]):>16}  per call {b[0] / t[0]:5.2f}x"
            f"  graph {b[1] / t[1]:5.2f}x  of the built-in"
        )
    if chosen_at == builtin:  # nothing clearly faster: the built-in shapes and thresholds stay
        kept = f"no other was {MARGIN:.0%} faster at a size"
        result.notes.append(f"{inst.public_name}: keeps the built-in shapes ({kept})")
        return
    result.entries.append((inst, shapes, notes))


_QUERY = r"""
#include <stdio.h>
#include <cuda_runtime.h>
int main(void)
{
    cudaDeviceProp p;
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess)
        e = cudaGetDeviceProperties(&p, dev);
    if (e != cudaSuccess) {
        printf("error\t%s\n", cudaGetErrorString(e));
        return 1;
    }
    printf("gpu\t%s\t%d\t%d\n", p.name, p.major, p.minor);
    return 0;
}
"""


def _query_gpu(nvcc: str, work: Path) -> tuple[str, str]:
    """(name, arch) of this machine's GPU (the one CUDA picks first), or TuneError."""
    (work / "gpu.cu").write_text(_QUERY)
    _run([nvcc, "gpu.cu", "-o", "gpu"], work / "gpu.build.log", cwd=work)
    r = subprocess.run([str(work / "gpu")], capture_output=True, text=True)
    f = r.stdout.strip().split("\t")
    if r.returncode or f[0] != "gpu" or len(f) != 4:
        why = f[1] if len(f) > 1 else (r.stderr.strip() or f"exit {r.returncode}")
        raise TuneError(f"no GPU to tune for ({why}): assocgen tune runs on the machine with the GPU")
    (work / "gpu.cu").unlink()
    return f[1], f"sm_{f[2]}{f[3]}"


def _fill_note(inst: Instance) -> str:
    t = inst.op.in_type
    if t.is_float:
        return "small whole numbers 0..7, whose sums are exact"
    if t.is_integer:
        return "every bit random"
    return "every byte 0..7"


def _heads_note(inst: Instance) -> str:
    if not inst.heads:
        return ""
    where = {
        "flags": "a random nonzero flag on one element in 512, on average",
        "keys": "in each 1024 elements a cut at a random place, each piece a random key of every bit (narrow keys"
        " may repeat, which joins two pieces)",
    }[inst.heads]
    return f"{where}; and in every fourth run of 2^15 elements none, so that a tile of any shape lies in one segment"
