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
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from . import __version__, tunefile, tuning

MARGIN = 0.04  # a shape other than the built-in one must be this much faster at a size to be taken (noise: ~2%)
MAX_SHAPES = 4  # shapes by n an instance keeps at most (each is a kernel in its source)
SIZES = [1 << k for k in range(12, 29, 2)]  # 2^12 .. 2^28, every fourth power of two
QUICK_SIZES = [1 << 12, 1 << 16, 1 << 20]
CHECKS = [0, 1, 33, 1000, 4097, 65537, (1 << 20) + 7, (1 << 22) + 3]
QUICK_CHECKS = [0, 1, 33, 1000, 4097, 65537]


class TuneError(Exception):
    """One line: why tuning stopped."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        from .cli import _UsageError

        raise _UsageError(message)


def parser():
    p = _Parser(
        prog="assocgen tune",
        description="Measure the spec's reduces and scans (segmented scans too) in candidate shapes on this "
        "machine's GPU and write a tuning file for `assocgen SPEC --tuning FILE`.",
    )
    p.add_argument("spec", help="TOML spec file")
    p.add_argument("-o", "--out", default="tuning.toml", help="the tuning file to write (default: tuning.toml)")
    p.add_argument(
        "--only", action="append", default=[], metavar="NAME", help="tune only this public name (repeatable)"
    )
    p.add_argument("--sizes", metavar="N,N,...", help="sizes to time (default: 2^12 to 2^28, every fourth power)")
    p.add_argument("--quick", action="store_true", help="few sizes (2^12, 2^16, 2^20) and small checks: a smoke run")
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
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel nvcc runs")
    p.add_argument(
        "--work", metavar="DIR", help="keep the generated candidates and logs in DIR (default: a temporary folder)"
    )
    return p


def _sizes(text):
    try:
        sizes = [int(t, 0) for t in text.split(",") if t.strip()]
    except ValueError:
        sizes = []
    if not sizes or any(n < 1 or n > 1 << 40 for n in sizes):
        raise TuneError(f"--sizes: {text!r} is not a list of sizes from 1 to 2^40, e.g. 4096,65536,1048576")
    return sorted(set(sizes))


def _run(cmd, log: Path, cwd=None) -> str:
    try:
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    except FileNotFoundError:
        raise TuneError(f"{cmd[0]}: not found (assocgen tune needs the CUDA compiler; set --nvcc or $NVCC)") from None
    log.write_text(f"$ {' '.join(map(str, cmd))}\n{r.stdout}{r.stderr}")
    if r.returncode:
        lines = (r.stderr or r.stdout).strip().splitlines()
        raise TuneError(f"{cmd[0]} failed ({lines[-1] if lines else f'exit {r.returncode}'}); log: {log}")
    return r.stdout


def choose(sizes, scores, builtin, margin=MARGIN, max_shapes=MAX_SHAPES):
    """The shapes by n: [(upto or None, candidate)].  `scores[c][k]`: candidate c's time at
    sizes[k] (None: not usable); `builtin[k]`: the built-in shape's candidate at sizes[k]."""
    win = []
    for k in range(len(sizes)):
        b = builtin[k]
        usable = [c for c in range(len(scores)) if scores[c][k] is not None]
        best = min(usable, key=lambda c: scores[c][k], default=b)
        clear = scores[b][k] is None or scores[best][k] < scores[b][k] * (1 - margin)
        p = win[-1] if win else None
        if p is not None and scores[p][k] is not None and scores[p][k] <= scores[best][k] * (1 + margin):
            if scores[b][k] is None or scores[p][k] < scores[b][k] * (1 - margin):
                best = p  # the shape of the size before, as fast and clear of the built-in: fewer switches
        win.append(best if clear else b)
    runs = []  # [candidate, [size indices]]
    for k, c in enumerate(win):
        if runs and runs[-1][0] == c:
            runs[-1][1].append(k)
        else:
            runs.append([c, [k]])
    while len({c for c, _ in runs}) > max_shapes:
        # give the run whose shape costs least to replace its neighbour's shape
        def cost(r, by, runs=runs):
            c, ks = runs[r][0], runs[r][1]
            return sum((scores[by][k] or math.inf) / scores[c][k] for k in ks) - len(ks)

        options = [
            (cost(r, runs[r + d][0]), r, r + d) for r in range(len(runs)) for d in (-1, 1) if 0 <= r + d < len(runs)
        ]
        _, r, n = min(options)
        runs[n][1] = sorted(runs[n][1] + runs[r][1])
        del runs[r]
        merged = []
        for c, ks in runs:
            if merged and merged[-1][0] == c:
                merged[-1][1].extend(ks)
            else:
                merged.append([c, ks])
        runs = merged
    out = []
    for r, (c, ks) in enumerate(runs):
        if r + 1 < len(runs):
            a, b = sizes[ks[-1]], sizes[runs[r + 1][1][0]]
            out.append((int(math.sqrt(a * b)), c))
        else:
            out.append((None, c))
    return out


def _builtin_pick(inst, cands, n):
    """The candidate the built-in shapes use for n."""
    shapes = tuning.size_shapes(inst) or [(None, inst)]
    shape = next(s for upto, s in shapes if upto is None or n <= upto)
    key = (shape.block, shape.items, shape.blocks_per_sm)
    return next(k for k, c in enumerate(cands) if (c.block, c.items, c.blocks_per_sm) == key)


def _label(c) -> str:
    return f"{c.block} x {c.items}" + (f" ({c.blocks_per_sm} a SM)" if c.blocks_per_sm else "")


def tune(argv) -> int:
    from .cli import EXIT_FAILED, EXIT_OK, EXIT_SPEC, _UsageError
    from .spec import SpecError, load

    try:
        try:
            args = parser().parse_args(argv)
        except _UsageError as e:
            raise SpecError("command line", "", str(e)) from None
        spec = load(args.spec)
        sizes = _sizes(args.sizes) if args.sizes else (QUICK_SIZES if args.quick else SIZES)
        out = Path(args.out)
        if not args.build_only and (not out.name or out.name in (".", "..") or out.is_dir()):
            raise SpecError("command line", "-o", f"{args.out!r} is not a file name for the tuning file")
        if not args.build_only and not out.resolve().parent.is_dir():
            raise SpecError("command line", "-o", f"{out.parent}: no such folder for the tuning file")
        if args.build_only and not args.arch:
            raise SpecError("command line", "--build-only", "give --arch (e.g. sm_90): there is no GPU to ask")
        checks = QUICK_CHECKS if args.quick else CHECKS
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
            (skipped.append(f"{name}: {why}") if why else chosen.append(inst))
        if not chosen:
            raise SpecError(args.spec, "", "no instance to tune: " + ("; ".join(skipped) or "the spec has none"))
    except (SpecError, TuneError) as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_SPEC
    for line in skipped:
        print(f"note: not tuned: {line}", file=sys.stderr)

    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="assocgen-tune-"))
    failed = True
    try:
        work.mkdir(parents=True, exist_ok=True)
        result = _measure(spec, chosen, sizes, checks, args, work)
        failed = False
    except TuneError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_FAILED
    except OSError as e:
        print(f"error: {str(e.filename) + ': ' if e.filename else ''}{e.strerror or e}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        if not args.work and not failed:  # kept when tuning failed: its logs say why
            shutil.rmtree(work, ignore_errors=True)
    gpu, arch, entries, table, unchecked = result
    for line in unchecked:
        print(f"note: {line}", file=sys.stderr)
    if args.build_only:
        print(table[0])
        return EXIT_OK
    header = (
        f"assocgen tuning file, written by `assocgen tune` ({__version__}) from {Path(args.spec).name}\n"
        f"(spec {spec.digest}).  Give it to the generator: assocgen SPEC --tuning {Path(args.out).name}\n"
        "Each shape: the first whose upto holds n; times per call and from a CUDA graph, in microseconds,"
        + (" hot (one input)." if args.hot else " cold (inputs spanning 4x the L2 cache).")
    )
    try:
        tmp = out.with_name(out.name + ".tmp")
        tmp.write_text(tunefile.write_text(gpu, arch, entries, header))
        os.replace(tmp, out)
    except OSError as e:
        print(f"error: {out}: {e.strerror or e}", file=sys.stderr)
        return EXIT_FAILED
    for row in table:
        print(row)
    print(f"wrote {out} ({gpu}, {arch})")
    return EXIT_OK


def harness_source(inst, cands, header, stamp=f"assocgen {__version__} tune") -> str:
    """The measuring program of `inst` over the public functions `cands` (declared in `header`):
    floats checked within a bound of their size, everything else exactly."""
    from .emit import _env

    return (
        _env()
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


def _measure(spec, chosen, sizes, checks, args, work):
    """Build, check and time every instance's candidates; returns (gpu, arch, entries, table,
    notes)."""
    from .emit import render

    plans = []  # (inst, candidates, public names)
    instances = []
    for k, inst in enumerate(chosen):
        cands = tuning.tune_candidates(inst)
        pubs = [f"{spec.prefix}_tune{k}_{j}" for j in range(len(cands))]
        instances += [replace(c, public_name=p) for c, p in zip(cands, pubs, strict=True)]
        plans.append((inst, cands, pubs))
    cand_spec = replace(spec, instances=instances, tuning="", nccl=False)
    files = render(cand_spec, header_name="tune.h")
    for name, text in files.items():
        (work / name).write_text(text)
    for k, (inst, _, pubs) in enumerate(plans):
        (work / f"harness{k}.cu").write_text(harness_source(inst, pubs, "tune.h"))
    gpu, arch = ("", "") if args.build_only else _query_gpu(args.nvcc, work)
    nvcc = [args.nvcc, "-O3", f"-arch={args.arch or arch}", "-I", str(work)]
    sources = sorted(p.name for p in work.glob("*.cu"))
    print(f"tune: building {len(sources) - len(plans)} candidates of {len(plans)} instances in {work}", file=sys.stderr)

    def build(src):
        _run([*nvcc, "-c", src, "-o", src[:-3] + ".o"], work / (src[:-3] + ".build.log"), cwd=work)

    def link(k, pubs):
        objs = [f"{p}.o" for p in pubs] + [f"harness{k}.o"]
        _run([*nvcc, *objs, "-o", f"harness{k}"], work / f"harness{k}.link.log", cwd=work)

    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        list(pool.map(build, sources))
    if args.build_only:
        for k, (_, _, pubs) in enumerate(plans):
            link(k, pubs)
        return (
            "",
            "",
            [],
            [f"built {len(sources) - len(plans)} candidates and {len(plans)} measuring programs in {work}"],
            [],
        )
    entries, table, skipped = [], [], []
    for k, (inst, cands, pubs) in enumerate(plans):
        link(k, pubs)
        print(f"tune: measuring {inst.public_name} ({len(cands)} shapes)", file=sys.stderr)
        try:
            r = subprocess.run(
                [str(work / f"harness{k}"), "check", *map(str, checks), "time", *map(str, sizes)]
                + (["hot"] if args.hot else []),
                capture_output=True,
                text=True,
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
                f"{inst.public_name}: the measuring program failed (exit {r.returncode});"
                f" log: {work / f'harness{k}.log'}"
            )
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
            skipped.append(
                f"{inst.public_name}: not tuned: its results differ from an in-order fold in their bits"
                " (floating point in a user type?), so the shapes cannot be checked; it keeps the built-in ones"
            )
            continue
        if bad:
            c, n, what, detail = int(bad[0][1]), bad[0][2], bad[0][3], bad[0][4]
            raise TuneError(
                f"{inst.public_name} in shape {_label(cands[c])} gave a wrong result at n = {n} ({what}: {detail})"
                " where the built-in shape is right: please report it"
            )
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
            c = next(c for upto, c in picks if upto is None or n <= upto)
            t, b = times.get((c, n)), times.get((builtin[j], n))
            if t is None or b is None:
                continue
            notes.append(
                f"n {n}: {_label(cands[c])} {t[0]:.2f} / {t[1]:.2f} us, built-in {_label(cands[builtin[j]])}"
                f" {b[0]:.2f} / {b[1]:.2f} us"
            )
            table.append(
                f"{inst.public_name:32} n {n:>10}  {_label(cands[c]):>16}  per call {b[0] / t[0]:5.2f}x"
                f"  graph {b[1] / t[1]:5.2f}x  of the built-in"
            )
        if chosen_at == builtin:  # nothing clearly faster: the built-in shapes and thresholds stay
            kept = f"no other was {MARGIN:.0%} faster at a size"
            skipped.append(f"{inst.public_name}: keeps the built-in shapes ({kept})")
            continue
        entries.append((inst, shapes, notes))
    return gpu, arch, entries, table, skipped


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


def _query_gpu(nvcc, work: Path):
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


def _fill_note(inst) -> str:
    t = inst.op.in_type
    if t.is_float:
        return "small whole numbers 0..7, whose sums are exact"
    if t.is_integer:
        return "every bit random"
    return "every byte 0..7"


def _heads_note(inst) -> str:
    if not inst.heads:
        return ""
    where = {
        "flags": "a random nonzero flag on one element in 512, on average",
        "keys": "in each 1024 elements a cut at a random place, each piece a random key of every bit (narrow keys"
        " may repeat, which joins two pieces)",
    }[inst.heads]
    return f"{where}; and in every fourth run of 2^15 elements none, so that a tile of any shape lies in one segment"
