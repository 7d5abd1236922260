"""How bench/python/bench.py times and checks a call: CUDA events on PyTorch's current stream
(samples of K calls back to back, the median of 15), host clocks for libraries on their own
stream (JAX), the host's own time a call, and the comparison of a library's result with ours."""

import math
import statistics
import time
from collections.abc import Callable
from typing import Any

REPS = 15  # samples a column; each sample K calls back to back, K from a first estimate
TARGET_MS = 10.0  # a sample lasts at least this long (K = ceil(10 ms / t), at most 1000): the host's
# time before a sample's first call (the GPU idle) is then at most a few tenths of a percent


class NotAvailable(Exception):
    """A column that cannot run for a row: the reason is printed as 'n/a (reason)'."""


def calls_for(ms: float) -> int:
    """K calls a sample for a call of about `ms` milliseconds."""
    return max(1, min(1000, math.ceil(TARGET_MS / max(ms, 1e-3))))


def events_ms(torch: Any, fn: Callable[[], Any]) -> float:
    """Median milliseconds a call of fn on torch's current stream: one call to warm up, an
    estimate from 3 calls, then REPS samples of K calls between two CUDA events."""
    fn()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(3):
        fn()
    b.record()
    b.synchronize()
    k = calls_for(a.elapsed_time(b) / 3)
    samples = []
    for _ in range(REPS):
        a.record()
        for _ in range(k):
            fn()
        b.record()
        b.synchronize()
        samples.append(a.elapsed_time(b) / k)
    return statistics.median(samples)


def host_ms(fn: Callable[[], Any], sync: Callable[[Any], Any]) -> float:
    """Median milliseconds a call of fn for a library on its own stream (JAX): K calls back to
    back between host clocks, the last one's result waited for (`sync`)."""
    sync(fn())
    t = time.perf_counter()
    for _ in range(3):
        out = fn()
    sync(out)
    k = calls_for((time.perf_counter() - t) * 1e3 / 3)
    samples = []
    for _ in range(REPS):
        t = time.perf_counter()
        for _ in range(k):
            out = fn()
        sync(out)
        samples.append((time.perf_counter() - t) * 1e3 / k)
    return statistics.median(samples)


def overhead_us(fn: Callable[[], Any], sync: Callable[[], Any], calls: int = 2000) -> float:
    """Microseconds of the host's time a call (a small call, the GPU keeping up): the median of 5
    loops of `calls` calls, each loop's results waited for after its clock stops."""
    for _ in range(20):
        fn()
    sync()
    samples = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - t) * 1e6 / calls)
        sync()
    return statistics.median(samples)


def check(kind: str, got: Any, want: Any, torch: Any) -> str:
    """'' where `got` (a torch tensor) matches ours (`want`), else what differs.  kind: 'exact'
    (bits), 'float' (max error within 1e-3 of the largest value), 'sum' (relative 1e-4),
    'argmax' (the index)."""
    got = got.reshape(want.shape) if got.numel() == want.numel() else got
    if got.shape != want.shape:
        return f"shape {tuple(got.shape)}, ours {tuple(want.shape)}"
    if kind == "exact":
        bad = int((got.view(torch.int32) != want.view(torch.int32)).sum())
        return f"{bad} of {want.numel()} words differ" if bad else ""
    if kind == "argmax":
        return "" if int(got) == int(want) else f"index {int(got)}, ours {int(want)}"
    g, w = got.double(), want.double()
    err = float((g - w).abs().max())
    scale = float(w.abs().max())
    tol = 1e-4 * scale if kind == "sum" else 1e-3 * (1.0 + scale)
    return "" if err <= tol else f"max error {err:.3g} (ours up to {scale:.3g})"
