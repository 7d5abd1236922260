"""What a Python user calls for the reductions of two arrays of bench/inputs/bench.cu: PyTorch
`torch.dot(x, y)`, `torch.sum((x - y) ** 2)` (and `torch.dist`, the norm) and `torch.sum(v * m)`
(a masked sum), CuPy `cp.dot` and the same expressions, as bytes read a second over a device
copy's of the same bytes (`y.copy_(x)`, which reads and writes them), timed by CUDA events
(medians of 7 runs of 10 calls)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pyanchors import cupy_event, timed  # noqa: E402 - bench/, beside this folder


def sweep(lib, make, calls, buffer, copy, sync, event):
    """For n = 2^20, 2^24, 2^28: each call's time, GB/s read and fraction of a copy"""
    for lg in (20, 24, 28):
        x, y, v, m = make(1 << lg)
        for name, fn, nbytes in calls(x, y, v, m):
            us = timed(fn, sync, event)
            src, dst = buffer(nbytes), buffer(nbytes)
            cus = timed(lambda s=src, d=dst: copy(s, d), sync, event)
            rate = f"{us:9.1f} us {nbytes / us / 1e3:8.1f} GB/s"
            print(f"{lib:5s} {name:7s} 2^{lg:<4d} | {rate} | of copy {cus / (2 * us):6.3f}")
            del src, dst
        del x, y, v, m


def main():
    try:
        import torch

        print(f"PyTorch {torch.__version__} on {torch.cuda.get_device_name()}")

        def make(n):
            r = lambda dt: torch.rand(n, device="cuda", dtype=dt)  # noqa: E731
            return (
                r(torch.float32) - 0.5,
                r(torch.float32) - 0.5,
                r(torch.float64),
                (r(torch.float32) < 0.5).to(torch.uint8),
            )

        sweep(
            "torch",
            make,
            lambda x, y, v, m: [
                ("dot", lambda: torch.dot(x, y), x.numel() * 8),
                ("dist2", lambda: torch.sum((x - y) ** 2), x.numel() * 8),
                ("norm", lambda: torch.dist(x, y), x.numel() * 8),
                ("masked", lambda: torch.sum(v * m), v.numel() * 9),
            ],
            lambda nb: torch.empty(nb, device="cuda", dtype=torch.uint8),
            lambda s, d: d.copy_(s),
            torch.cuda.synchronize,
            lambda: torch.cuda.Event(enable_timing=True),
        )
    except Exception as e:  # noqa: BLE001 - an anchor that cannot run says why and the rest go on
        print(f"torch: {e}")
    try:
        import cupy as cp

        print(f"CuPy {cp.__version__}")

        def make(n):
            r = cp.random.rand
            return (
                (r(n) - 0.5).astype(cp.float32),
                (r(n) - 0.5).astype(cp.float32),
                r(n),
                (r(n) < 0.5).astype(cp.uint8),
            )

        sweep(
            "cupy",
            make,
            lambda x, y, v, m: [
                ("dot", lambda: cp.dot(x, y), x.size * 8),
                ("dist2", lambda: cp.sum((x - y) ** 2), x.size * 8),
                ("masked", lambda: cp.sum(v * m), v.size * 9),
            ],
            lambda nb: cp.empty(nb, dtype=cp.uint8),
            lambda s, d: d.__setitem__(slice(None), s),
            cp.cuda.Device().synchronize,
            cupy_event(cp),
        )
    except Exception as e:  # noqa: BLE001
        print(f"cupy: {e}")


if __name__ == "__main__":
    main()
