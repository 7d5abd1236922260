#!/usr/bin/env python3
"""The generated kernels called from Python against what a Python user would pick, side by side in
one run on one GPU (issue 45's Performance section): our Python call (assocgen.load on
bench/python/spec.toml), the same C functions called from C, cuda.compute (cuda-cccl), Triton,
JAX, PyTorch, and a device-to-device copy of the input's bytes.  Every library gets the same
inputs (PyTorch tensors; JAX reads them through DLPack); every result is checked against ours.  A
library that cannot import or run prints 'n/a (reason)' and the run goes on.  README.md beside
this file says what each column is.

    python3 bench/python/bench.py [--quick] [--rows affine,mat3,...] [--csv FILE]
"""

import argparse
import csv
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # before JAX is imported

import ours  # noqa: E402 - this folder is on sys.path as the script's own
import torch  # noqa: E402 - the inputs and the events; the run needs it
from timing import NotAvailable, check, events_ms, host_ms, overhead_us  # noqa: E402

COLUMNS = ["ours", "C", "cuda.compute", "Triton", "JAX", "PyTorch", "copy"]
START = time.perf_counter()
LIBS: dict[str, Any] = {}  # column: its module (tri, jx, th, cccl), or why it is missing (a str)


@dataclass
class Entry:
    """One column's call for a row: fn() runs it, result(fn's return) is the answer to check."""

    fn: Callable[[], Any]
    result: Callable[[Any], torch.Tensor]
    host: bool = False  # timed by host clocks (JAX's own stream), not by events


@dataclass
class Row:
    name: str
    size: str
    cells: dict[str, tuple[float | None, str]] = field(default_factory=dict)  # column: (ms, "" or why)
    ours: Callable[[], Any] | None = None  # our call, timed again beside the C column's


def import_libraries() -> None:
    """Each library's module of this folder, or the reason it is not there."""
    for column, module in (("Triton", "tri"), ("JAX", "jx"), ("PyTorch", "th"), ("cuda.compute", "cccl")):
        try:
            LIBS[column] = __import__(module)
        except Exception as e:  # noqa: BLE001 - any failure to import is reported, the run goes on
            LIBS[column] = f"import: {type(e).__name__}: {first_line(e)}"


def first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0][:150] if text else type(e).__name__


def lib(column: str) -> Any:
    m = LIBS.get(column)
    if isinstance(m, str) or m is None:
        raise NotAvailable(m or "not imported")
    return m


def sync_torch() -> None:
    torch.cuda.synchronize()


def measure(row: Row, column: str, make: Callable[[], Entry], want: torch.Tensor, kind: str) -> None:
    """Run a column once, check its answer against ours, then time it (also when it is wrong)."""
    try:
        e = make()
        got = e.result(e.fn())
        torch.cuda.synchronize()
        bad = check(kind, got, want, torch)
        ms = host_ms(e.fn, lib("JAX").sync) if e.host else events_ms(torch, e.fn)
        row.cells[column] = (ms, f"wrong: {bad}" if bad else "")
        if column == "ours" and not bad:
            row.ours = e.fn
    except NotAvailable as x:
        row.cells[column] = (None, f"n/a ({x})")
    except Exception as x:  # noqa: BLE001 - a library failing on a row is a cell, not the end of the run
        row.cells[column] = (None, f"n/a ({type(x).__name__}: {first_line(x)})")
    try:
        torch.cuda.synchronize()
    except Exception as x:  # noqa: BLE001 - an error the library left behind: said, and the run goes on
        row.cells[column] = (None, f"n/a (after the call: {first_line(x)})")


def measure_c(row: Row, run: Callable[[], float], got: torch.Tensor, want: torch.Tensor, kind: str) -> None:
    """The C column: the driver times the C function and writes `got`."""
    try:
        ms = run()
        bad = check(kind, got, want, torch)
        row.cells["C"] = (ms, f"wrong: {bad}" if bad else "")
        if row.ours is not None and not bad:
            alternate(row, run)
    except NotAvailable as x:
        row.cells["C"] = (None, f"n/a ({x})")
    except Exception as x:  # noqa: BLE001
        row.cells["C"] = (None, f"n/a ({type(x).__name__}: {first_line(x)})")


def alternate(row: Row, run: Callable[[], float], rounds: int = 2) -> None:
    """Ours and C timed again in turn (ours, C, ours, C after the first pair), each column's best
    median kept: the ratio of the two is not the order in which the GPU met them."""
    assert row.ours is not None
    best_ours, best_c = row.cells["ours"][0], row.cells["C"][0]
    for _ in range(rounds):
        best_ours = min(best_ours or float("inf"), events_ms(torch, row.ours))
        best_c = min(best_c or float("inf"), run())
    row.cells["ours"] = (best_ours, row.cells["ours"][1])
    row.cells["C"] = (best_c, row.cells["C"][1])


def measure_copy(row: Row, src: torch.Tensor) -> None:
    """A device-to-device copy (cudaMemcpyAsync) of src's bytes: the ceiling of a scan."""
    a = src.reshape(-1).view(torch.uint8)
    b = torch.empty_like(a)
    row.cells["copy"] = (events_ms(torch, lambda: b.copy_(a)), "")


def not_written(reason: str) -> Callable[[], Entry]:
    def make() -> Entry:
        raise NotAvailable(reason)

    return make


def stream() -> int:
    return int(torch.cuda.current_stream().cuda_stream)


# ---- the rows: inputs, our answer, each column's call ----


@dataclass
class Ctx:
    m: Any  # the spec's module (assocgen.load)
    c: ours.CDriver | None
    c_why: str
    quick: bool


def c_time(ctx: Ctx, entry: str, cname: str, args: list[int], hint: float) -> Callable[[], float]:
    def run() -> float:
        if ctx.c is None:
            raise NotAvailable(ctx.c_why)
        return ctx.c.time(entry, cname, args, stream(), hint)

    return run


def maps(shape: tuple[int, ...]) -> torch.Tensor:
    """Affine maps (..., 2) float32: a in [0.5, 1), b in [-1, 1)."""
    x = torch.rand(*shape, 2, device="cuda")
    x[..., 0] = 0.5 + 0.5 * x[..., 0]
    x[..., 1] = 2 * x[..., 1] - 1
    return x


def same(t: torch.Tensor) -> Callable[[Any], torch.Tensor]:
    """A column's answer is the buffer it wrote."""
    return lambda _: t


def from_jax(shape: tuple[int, ...] | None = None) -> Callable[[Any], torch.Tensor]:
    """A JAX result as a torch tensor on the same memory (reshaped)."""
    return lambda r: torch.from_dlpack(r) if shape is None else torch.from_dlpack(r).reshape(shape)


def row_affine(ctx: Ctx, lg: int) -> Row:
    """The inclusive scan of 2^lg affine maps, (n, 2) float32."""
    row, n = Row("affine-map scan", f"2^{lg}"), 1 << lg
    x = maps((n,))
    y, alt = torch.empty_like(x), torch.empty_like(x)
    f = ctx.m.scan_compose_affine
    measure(row, "ours", lambda: Entry(lambda: f(x, out=y), same(y)), y, "float")
    cargs = [x.data_ptr(), n, alt.data_ptr()]
    hint = row.cells["ours"][0] or 1.0
    measure_c(row, c_time(ctx, "agb_scan_affine", "pyb_scan_compose_affine", cargs, hint), alt, y, "float")

    def cc() -> Entry:
        m = lib("cuda.compute")
        return Entry(m.make_scan(x, alt, m.AFFINE, "agb_affine"), same(alt))

    def tri() -> Entry:
        t = lib("Triton")
        totals = t.scratch(n, x.device)["totals"]
        return Entry(lambda: t.affine_scan(x, alt, totals), same(alt))

    measure(row, "cuda.compute", cc, y, "float")
    measure(row, "Triton", tri, y, "float")
    measure(row, "JAX", lambda: Entry(lib("JAX").bind(lib("JAX").affine_scan, x), from_jax(), host=True), y, "float")
    measure(row, "PyTorch", lambda: Entry(lib("PyTorch").bind("affine_scan", x), lambda r: r), y, "float")
    measure_copy(row, x)
    return row


def row_reduce(ctx: Ctx, lg: int) -> Row:
    """The ordered fold of 2^lg affine maps (not commutative): one map."""
    row, n = Row("ordered reduce of affine maps", f"2^{lg}"), 1 << lg
    x = maps((n,))
    y, alt = torch.empty(1, 2, device="cuda"), torch.empty(1, 2, device="cuda")
    f = ctx.m.reduce_compose_affine
    measure(row, "ours", lambda: Entry(lambda: f(x, out=y), same(y)), y, "float")
    cargs = [x.data_ptr(), n, alt.data_ptr()]
    hint = row.cells["ours"][0] or 1.0
    measure_c(row, c_time(ctx, "agb_reduce_affine", "pyb_reduce_compose_affine", cargs, hint), alt, y, "float")
    measure(row, "cuda.compute", lambda: Entry(lib("cuda.compute").make_reduce(x, alt), same(alt)), y, "float")
    for column in ("Triton", "JAX", "PyTorch"):
        measure(row, column, not_written("not written (the scan's rows show these libraries)"), y, "float")
    measure_copy(row, x)
    return row


def row_mat3(ctx: Ctx, lg: int) -> Row:
    """The inclusive scan of 2^lg 3x3 uint32 matrices, (n, 9) uint32 (int32 for JAX and PyTorch)."""
    row, n = Row("3x3 u32 matrix scan", f"2^{lg}"), 1 << lg
    xi = torch.randint(-(1 << 31), (1 << 31) - 1, (n, 9), dtype=torch.int32, device="cuda")
    x = xi.view(torch.uint32)
    y, alt = torch.empty_like(x), torch.empty_like(x)
    f = ctx.m.scan_mat3mul_mat3u
    measure(row, "ours", lambda: Entry(lambda: f(x, out=y), same(y)), y, "exact")
    hint = row.cells["ours"][0] or 1.0
    cargs = [x.data_ptr(), n, alt.data_ptr()]
    measure_c(row, c_time(ctx, "agb_scan_mat3", "pyb_scan_mat3mul_mat3u", cargs, hint), alt, y, "exact")

    def cc() -> Entry:
        m = lib("cuda.compute")
        return Entry(m.make_scan(x, alt, m.MAT3, "agb_mat3"), same(alt))

    measure(row, "cuda.compute", cc, y, "exact")
    measure(row, "Triton", not_written("no kernel written (a scan of 9-tuples)"), y, "exact")
    measure(row, "JAX", lambda: Entry(lib("JAX").bind(lib("JAX").mat3_scan, xi), from_jax(), host=True), y, "exact")
    measure(row, "PyTorch", lambda: Entry(lib("PyTorch").bind("mat3_scan", xi), lambda r: r), y, "exact")
    measure_copy(row, x)
    return row


def reduce_input(lg: int) -> torch.Tensor:
    """2^lg floats in [0, 1) and one 2.0 (argmax's answer, at 2/3 of the way)."""
    x = torch.rand(1 << lg, device="cuda")
    x[(2 << lg) // 3 + 7] = 2.0
    return x


def row_sumsq(ctx: Ctx, x: torch.Tensor, lg: int) -> Row:
    """The sum of squares of 2^lg float32."""
    row, n = Row("sum of squares", f"2^{lg}"), 1 << lg
    y, alt = torch.empty(1, device="cuda"), torch.empty(1, device="cuda")
    f = ctx.m.reduce_sumsq_f32
    measure(row, "ours", lambda: Entry(lambda: f(x, out=y), same(y)), y, "sum")
    hint = row.cells["ours"][0] or 1.0
    cargs = [x.data_ptr(), n, alt.data_ptr()]
    measure_c(row, c_time(ctx, "agb_reduce_sumsq", "pyb_reduce_sumsq_f32", cargs, hint), alt, y, "sum")
    measure(row, "cuda.compute", lambda: Entry(lib("cuda.compute").make_sumsq(x, alt), same(alt)), y, "sum")

    def tri() -> Entry:
        t = lib("Triton")
        s = t.scratch(n, x.device)
        return Entry(lambda: t.sumsq(x, s["part"], s["one_f"]), same(s["one_f"]))

    measure(row, "Triton", tri, y, "sum")
    measure(row, "JAX", lambda: Entry(lib("JAX").bind(lib("JAX").sumsq, x), from_jax((1,)), host=True), y, "sum")
    measure(row, "PyTorch", lambda: Entry(lib("PyTorch").bind("sumsq", x), lambda r: r.reshape(1)), y, "sum")
    measure_copy(row, x)
    return row


def row_argmax(ctx: Ctx, x: torch.Tensor, lg: int) -> Row:
    """The first index of the largest of 2^lg float32."""
    row, n = Row("argmax", f"2^{lg}"), 1 << lg
    y, alt = torch.empty(1, 2, dtype=torch.int64, device="cuda"), torch.empty(1, 2, dtype=torch.int64, device="cuda")
    f = ctx.m.reduce_argmax_f32  # out: (value, index), 16 bytes held as two int64
    measure(row, "ours", lambda: Entry(lambda: f(x, out=y), same(y)), y, "exact")
    want = y[0, 1]
    hint = row.cells["ours"][0] or 1.0
    cargs = [x.data_ptr(), n, alt.data_ptr()]
    measure_c(row, c_time(ctx, "agb_reduce_argmax", "pyb_reduce_argmax_f32", cargs, hint), alt[0, 1], want, "argmax")

    def cc() -> Entry:
        out = torch.zeros(16, dtype=torch.uint8, device="cuda")
        fn, io = lib("cuda.compute").make_argmax(x, out)
        return Entry(fn, lambda _: out[io : io + 8].view(torch.int64)[0])

    def tri() -> Entry:
        t = lib("Triton")
        s = t.scratch(n, x.device)
        return Entry(lambda: t.argmax(x, s["pv"], s["pi"], s["one_i"]), lambda _: s["one_i"][0])

    measure(row, "cuda.compute", cc, want, "argmax")
    measure(row, "Triton", tri, want, "argmax")
    measure(row, "JAX", lambda: Entry(lib("JAX").bind(lib("JAX").argmax, x), from_jax(()), host=True), want, "argmax")
    measure(row, "PyTorch", lambda: Entry(lib("PyTorch").argmax(x), lambda r: r), want, "argmax")
    measure_copy(row, x)
    return row


def segments(n: int, longest: int) -> torch.Tensor:
    """int32 offsets of segments of random lengths 1..longest covering n elements."""
    g = torch.Generator().manual_seed(45)
    lengths = torch.randint(1, longest + 1, (4 * n // longest + 2,), generator=g)  # about 2n in all
    ends = torch.cumsum(lengths, 0)
    ends = torch.cat((ends[ends < n], torch.tensor([n])))
    return torch.cat((torch.zeros(1, dtype=torch.int64), ends)).to(torch.int32).cuda()


def row_segreduce(ctx: Ctx, lg: int) -> Row:
    """The ordered fold of each segment of 2^lg affine maps (lengths 1..2000, by int32 offsets)."""
    n = 1 << lg
    x, offsets = maps((n,)), segments(n, 2000)
    s = offsets.numel() - 1
    row = Row("segmented reduce of affine maps", f"2^{lg}, {s} segments")
    y, alt = torch.empty(s, 2, device="cuda"), torch.empty(s, 2, device="cuda")
    f = ctx.m.segreduce_compose_affine
    measure(row, "ours", lambda: Entry(lambda: f(x, offsets, out=y), same(y)), y, "float")
    hint = row.cells["ours"][0] or 1.0
    cargs = [x.data_ptr(), n, offsets.data_ptr(), s, alt.data_ptr()]
    measure_c(row, c_time(ctx, "agb_segreduce_affine", "pyb_segreduce_compose_affine", cargs, hint), alt, y, "float")
    measure(
        row, "cuda.compute", lambda: Entry(lib("cuda.compute").make_segreduce(x, offsets, alt), same(alt)), y, "float"
    )
    measure(row, "Triton", not_written("no kernel written"), y, "float")
    heads = torch.zeros(n, dtype=torch.uint8, device="cuda")
    heads[offsets[:-1].long()] = 1
    last = offsets[1:] - 1
    measure(
        row,
        "JAX",
        lambda: Entry(lib("JAX").bind(lib("JAX").segreduce, x, heads, last), from_jax(), host=True),
        y,
        "float",
    )
    why = "no ordered segmented reduce (torch.segment_reduce: sum, prod, max, min, mean)"
    measure(row, "PyTorch", not_written(why), y, "float")
    measure_copy(row, x)
    return row


def row_recurrence(ctx: Ctx, length_lg: int) -> Row:
    """x[t] = a[t] x[t-1] + b[t] for 64 x 16 series of 2^length_lg maps: the scan of each row of a
    (64 * 16, length, 2) float32 array (each series contiguous)."""
    rows, cols = 64 * 16, 1 << length_lg
    row = Row("batched recurrence", f"64 x 2^{length_lg} x 16")
    x = maps((rows, cols))
    y, alt = torch.empty_like(x), torch.empty_like(x)
    f = ctx.m.rows_scan_compose_affine
    measure(row, "ours", lambda: Entry(lambda: f(x, out=y), same(y)), y, "float")
    hint = row.cells["ours"][0] or 1.0
    cargs = [x.data_ptr(), rows, cols, alt.data_ptr()]
    measure_c(row, c_time(ctx, "agb_rows_scan_affine", "pyb_rows_scan_compose_affine", cargs, hint), alt, y, "float")
    measure(row, "cuda.compute", not_written("no batched, segmented or by-key scan"), y, "float")
    measure(row, "Triton", lambda: Entry(lambda: lib("Triton").rows_scan(x, alt), same(alt)), y, "float")
    measure(row, "JAX", lambda: Entry(lib("JAX").bind(lib("JAX").affine_scan, x), from_jax(), host=True), y, "float")
    measure(row, "PyTorch", lambda: Entry(lib("PyTorch").bind("affine_scan", x), lambda r: r), y, "float")
    measure_copy(row, x)
    return row


def overheads(ctx: Ctx, lg: int = 10) -> dict[str, tuple[float | None, str]]:
    """Host microseconds a call of the affine-map scan of 2^lg maps: ours (out= given, and
    allocating its output), cuda.compute, and Triton and JAX for comparison."""
    x = maps((1 << lg,))
    y, alt = torch.empty_like(x), torch.empty_like(x)
    f = ctx.m.scan_compose_affine
    cases: dict[str, Callable[[], Callable[[], Any]]] = {
        "ours (out=)": lambda: lambda: f(x, out=y),
        "ours (allocating)": lambda: lambda: f(x),
        "cuda.compute": lambda: lib("cuda.compute").make_scan(x, alt, lib("cuda.compute").AFFINE, "agb_affine"),
        "Triton": lambda: triton_call(x, alt),
        "JAX": lambda: lib("JAX").bind(lib("JAX").affine_scan, x),
    }  # PyTorch's compiled scan left out: another compile of a minute for a figure nobody asked
    out: dict[str, tuple[float | None, str]] = {}
    for name, make in cases.items():
        try:
            fn = make()
            out[name] = (overhead_us(fn, jax_sync(fn) if name == "JAX" else sync_torch), "")
        except NotAvailable as e:
            out[name] = (None, f"n/a ({e})")
        except Exception as e:  # noqa: BLE001
            out[name] = (None, f"n/a ({type(e).__name__}: {first_line(e)})")
    return out


def triton_call(x: torch.Tensor, y: torch.Tensor) -> Callable[[], Any]:
    t = lib("Triton")
    totals = t.scratch(x.shape[0], x.device)["totals"]
    return lambda: t.affine_scan(x, y, totals)


def jax_sync(fn: Callable[[], Any]) -> Callable[[], Any]:
    """Waiting for JAX's stream: a call's result, waited for."""
    return lambda: lib("JAX").sync(fn())


# ---- the run ----

ROWS = ("affine", "mat3", "reduce", "sumsq", "argmax", "segreduce", "recurrence", "overhead")


def versions() -> str:
    """The GPU and each library's version (or why it is missing)."""
    parts = [f"{torch.cuda.get_device_name()}", f"torch {torch.__version__}"]
    for column, attr in (("Triton", "triton"), ("JAX", "jax"), ("cuda.compute", "cc")):
        m = LIBS[column]
        if isinstance(m, str):
            parts.append(f"{column}: {m}")
            continue
        v = getattr(getattr(m, attr, None), "__version__", None)
        if v is None and column == "cuda.compute":
            from importlib.metadata import version

            v = version("cuda-cccl")
        parts.append(f"{column} {v}")
    return "; ".join(parts)


def setup(quick: bool, build_dir: Path) -> Ctx:
    """Our module (built or cached) and the C driver beside it."""
    m = ours.load()
    try:
        return Ctx(m, ours.CDriver(m, ours.build_driver(m, build_dir)), "", quick)
    except Exception as e:  # noqa: BLE001
        return Ctx(m, None, f"C driver: {first_line(e)}", quick)


def run_rows(ctx: Ctx, which: list[str]) -> list[Row]:
    """The rows asked for, each printed as it ends; the large ones' inputs freed after each."""
    q = 4 if ctx.quick else 0  # --quick: sizes / 16
    rows: list[Row] = []
    makers: dict[str, Callable[[], Row]] = {
        "affine": lambda: row_affine(ctx, 24 - q),
        "mat3": lambda: row_mat3(ctx, 22 - q),
        "reduce": lambda: row_reduce(ctx, 24 - q),
        "segreduce": lambda: row_segreduce(ctx, 24 - q),
        "recurrence": lambda: row_recurrence(ctx, 16 - q),
    }
    for name in which:
        if name == "overhead":
            continue
        try:
            row = reduce_row(ctx, name, 28 - q) if name in ("sumsq", "argmax") else makers[name]()
        except Exception as e:  # noqa: BLE001 - a row that cannot be set up (memory, ours failing): said, the run goes on
            print(f"{name}: the row failed: {type(e).__name__}: {first_line(e)}", file=sys.stderr, flush=True)
            continue
        rows.append(row)
        print_row(row, sys.stderr)
        torch.cuda.empty_cache()
    return rows


def reduce_row(ctx: Ctx, name: str, lg: int) -> Row:
    x = reduce_input(lg)
    return row_sumsq(ctx, x, lg) if name == "sumsq" else row_argmax(ctx, x, lg)


def cell(ms: float | None, why: str) -> str:
    if ms is None:
        return "n/a"
    return f"{ms:.3f}" + (" WRONG" if why.startswith("wrong") else "")


def print_row(row: Row, out: Any) -> None:
    """One row with its notes (why a cell is n/a or wrong), as it ends."""
    cells = ", ".join(f"{c} {cell(*row.cells[c])}" for c in COLUMNS if c in row.cells)
    print(f"[{time.perf_counter() - START:.0f} s] {row.name} {row.size}: {cells}", file=out)
    for c in COLUMNS:
        if c in row.cells and row.cells[c][1]:
            print(f"    {c}: {row.cells[c][1]}", file=out, flush=True)


def table(rows: list[Row], over: dict[str, tuple[float | None, str]] | None) -> str:
    """The Markdown table of medians (ms), C's time over ours in the last column (1.0: the
    Python call costs nothing; 0.97: it takes 3% longer)."""
    lines = ["| row | size | " + " | ".join(COLUMNS) + " | C / ours |", "|" + " --- |" * (len(COLUMNS) + 3)]
    for r in rows:
        ours_ms, c_ms = r.cells["ours"][0], r.cells.get("C", (None, ""))[0]
        ratio = f"{c_ms / ours_ms:.3f}" if ours_ms and c_ms else "n/a"
        cells = " | ".join(cell(*r.cells.get(c, (None, ""))) for c in COLUMNS)
        lines.append(f"| {r.name} | {r.size} | {cells} | {ratio} |")
    if over:
        lines.append("")
        lines.append("host overhead a call, affine-map scan of 2^10 maps (us): " + ", ".join(
            f"{k} {v[0]:.1f}" if v[0] is not None else f"{k} {v[1]}" for k, v in over.items()))  # fmt: skip
    return "\n".join(lines)


def write_csv(path: str, rows: list[Row], over: dict[str, tuple[float | None, str]] | None) -> None:
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["row", "size", "column", "ms", "status"])
        for r in rows:
            for c, (ms, why) in r.cells.items():
                w.writerow([r.name, r.size, c, "" if ms is None else f"{ms:.5f}", why or "ok"])
        for k, (us, why) in (over or {}).items():
            w.writerow(["host overhead a call (us)", "2^10", k, "" if us is None else f"{us:.2f}", why or "ok"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="sizes / 16 (a check that everything runs)")
    ap.add_argument("--rows", default=",".join(ROWS), help=f"a comma-separated subset of {','.join(ROWS)}")
    ap.add_argument("--csv", help="write every cell (ms and status) to this CSV file")
    ap.add_argument("--build", default="build/pybench", help="where the C driver is built")
    args = ap.parse_args()
    which = [r for r in args.rows.split(",") if r]
    if unknown := sorted(set(which) - set(ROWS)):
        print(f"error: --rows: unknown {', '.join(unknown)} (known: {', '.join(ROWS)})", file=sys.stderr)
        return 2
    import_libraries()
    torch.manual_seed(45)
    ctx = setup(args.quick, Path(args.build))
    print(versions(), file=sys.stderr, flush=True)
    rows = run_rows(ctx, which)
    over = overheads(ctx) if "overhead" in which else None
    if args.csv:
        write_csv(args.csv, rows, over)
    print(f"\n{versions()}; medians of 15 samples, ms a call{' (--quick: sizes / 16)' if args.quick else ''}")
    print(table(rows, over))
    return 0


if __name__ == "__main__":
    sys.exit(main())
