"""What a Python user calls for sums along rows and down columns, cumulative sums and log-sum-exp
along rows, on the shapes of bench/rows/bench.cu: PyTorch `x.sum(dim=1)` / `x.sum(dim=0)` /
`torch.cumsum(x, dim=1)` / `torch.logsumexp(x, dim=1)` and CuPy `x.sum(axis=1)` / `x.sum(axis=0)` /
`cp.cumsum(x, axis=1)`, as bytes a second over a device copy's of the same array (`y.copy_(x)`, which reads and writes
them), timed by CUDA events (medians of 7 runs of 10 calls)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pyanchors import cupy_event, timed  # noqa: E402 - bench/, beside this folder

SHAPES = [(1 << 24, 16), (1 << 22, 64), (64, 1 << 22), (65536, 4096), (1024, 1024)]
COL_SHAPES = [(1 << 22, 64), (1 << 24, 16), (65536, 4096), (64, 1 << 22)]
SCAN_SHAPES = [(1 << 22, 64), (65536, 4096), (64, 1 << 22), (1 << 24, 16), (1024, 1024)]


def sweep(lib, dims, sum_along, copy, sync, event):
    """Rows (dim 1) then columns (dim 0): each shape's sum, as time, GB/s and a fraction of copy"""
    for what, shapes, dim in (("sum f32", SHAPES, 1), ("colsum ", COL_SHAPES, 0)):
        for r, c in shapes:
            x, y = dims(r, c)
            us = timed(lambda x=x, d=dim: sum_along(x, d), sync, event)
            cus = timed(lambda x=x, y=y: copy(x, y), sync, event)
            print(
                f"{lib:5s} {what} {r:9d} x {c:<9d} | {us:9.1f} us {r * c * 4 / us / 1e3:8.1f} GB/s"
                f" | of copy {cus / (2 * us):6.3f}"
            )
            del x, y


def scans(lib, dims, cumsum, copy, sync, event):
    """Cumulative sums along rows: time, GB/s (read + written) and a fraction of copy"""
    for r, c in SCAN_SHAPES:
        x, y = dims(r, c)
        us = timed(lambda x=x: cumsum(x), sync, event)
        cus = timed(lambda x=x, y=y: copy(x, y), sync, event)
        print(
            f"{lib:5s} cumsum  {r:9d} x {c:<9d} | {us:9.1f} us {2 * r * c * 4 / us / 1e3:8.1f} GB/s"
            f" | of copy {cus / us:6.3f}"
        )
        del x, y


def main():
    try:
        import torch

        print(f"PyTorch {torch.__version__} on {torch.cuda.get_device_name()}")

        def arrays(r, c):
            x = torch.rand((r, c), device="cuda", dtype=torch.float32)
            return x, torch.empty_like(x)

        sweep(
            "torch",
            arrays,
            lambda x, d: x.sum(dim=d),
            lambda x, y: y.copy_(x),
            torch.cuda.synchronize,
            lambda: torch.cuda.Event(enable_timing=True),
        )
        scans(
            "torch",
            arrays,
            lambda x: torch.cumsum(x, dim=1),
            lambda x, y: y.copy_(x),
            torch.cuda.synchronize,
            lambda: torch.cuda.Event(enable_timing=True),
        )
        for r, c in SHAPES:  # log-sum-exp along rows: its bytes read, as the sums'
            x, y = arrays(r, c)
            ev = lambda: torch.cuda.Event(enable_timing=True)  # noqa: E731
            us = timed(lambda x=x: torch.logsumexp(x, dim=1), torch.cuda.synchronize, ev)
            cus = timed(lambda x=x, y=y: y.copy_(x), torch.cuda.synchronize, ev)
            rate = f"{us:9.1f} us {r * c * 4 / us / 1e3:8.1f} GB/s"
            print(f"torch logsumexp {r:9d} x {c:<9d} | {rate} | of copy {cus / (2 * us):6.3f}")
            del x, y
    except Exception as ex:  # noqa: BLE001 - an anchor that cannot run is reported, not fatal
        print(f"PyTorch: {ex}")
    try:
        import cupy as cp

        print(f"CuPy {cp.__version__}")

        def arrays(r, c):
            x = cp.random.rand(r, c, dtype=cp.float32)
            return x, cp.empty_like(x)

        sweep(
            "cupy",
            arrays,
            lambda x, d: x.sum(axis=d),
            lambda x, y: y.__setitem__(Ellipsis, x),
            cp.cuda.Device().synchronize,
            cupy_event(cp),
        )
        scans(
            "cupy",
            arrays,
            lambda x: cp.cumsum(x, axis=1),
            lambda x, y: y.__setitem__(Ellipsis, x),
            cp.cuda.Device().synchronize,
            cupy_event(cp),
        )
    except Exception as ex:  # noqa: BLE001
        print(f"CuPy: {ex}")


if __name__ == "__main__":
    main()
