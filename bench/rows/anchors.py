"""What a Python user calls for sums along rows and down columns, on the shapes of
bench/rows/bench.cu: PyTorch `x.sum(dim=1)` / `x.sum(dim=0)` and CuPy `x.sum(axis=1)` /
`x.sum(axis=0)`, as bytes a second over a device copy's of the same array (`y.copy_(x)`, which
reads and writes them), timed by CUDA events (medians of 7 runs of 10 calls)."""

import statistics

SHAPES = [(1 << 24, 16), (1 << 22, 64), (64, 1 << 22), (65536, 4096), (1024, 1024)]
COL_SHAPES = [(1 << 22, 64), (1 << 24, 16), (65536, 4096), (64, 1 << 22)]


def timed(fn, sync, event):
    fn()
    sync()
    times = []
    for _ in range(7):
        a, b = event(), event()
        a.record()
        for _ in range(10):
            fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 100)  # us a call
    return statistics.median(times)


def main():
    try:
        import torch

        print(f"PyTorch {torch.__version__} on {torch.cuda.get_device_name()}")
        event = lambda: torch.cuda.Event(enable_timing=True)  # noqa: E731
        for r, c in SHAPES:
            x = torch.rand((r, c), device="cuda", dtype=torch.float32)
            y = torch.empty_like(x)
            us = timed(lambda x=x: x.sum(dim=1), torch.cuda.synchronize, event)
            cus = timed(lambda x=x, y=y: y.copy_(x), torch.cuda.synchronize, event)
            print(
                f"torch sum f32 {r:9d} x {c:<9d} | {us:9.1f} us {r * c * 4 / us / 1e3:8.1f} GB/s"
                f" | of copy {cus / (2 * us):6.3f}"
            )
            del x, y
        for r, c in COL_SHAPES:
            x = torch.rand((r, c), device="cuda", dtype=torch.float32)
            y = torch.empty_like(x)
            us = timed(lambda x=x: x.sum(dim=0), torch.cuda.synchronize, event)
            cus = timed(lambda x=x, y=y: y.copy_(x), torch.cuda.synchronize, event)
            print(
                f"torch colsum  {r:9d} x {c:<9d} | {us:9.1f} us {r * c * 4 / us / 1e3:8.1f} GB/s"
                f" | of copy {cus / (2 * us):6.3f}"
            )
            del x, y
    except Exception as ex:  # noqa: BLE001 - an anchor that cannot run is reported, not fatal
        print(f"PyTorch: {ex}")
    try:
        import cupy as cp

        print(f"CuPy {cp.__version__}")

        class Ev:
            def __init__(self):
                self.e = cp.cuda.Event()

            def record(self):
                self.e.record()

            def synchronize(self):
                self.e.synchronize()

            def elapsed_time(self, other):
                return cp.cuda.get_elapsed_time(self.e, other.e)

        sync = cp.cuda.Device().synchronize
        for r, c in SHAPES:
            x = cp.random.rand(r, c, dtype=cp.float32)
            y = cp.empty_like(x)
            us = timed(lambda x=x: x.sum(axis=1), sync, Ev)
            cus = timed(lambda x=x, y=y: y.__setitem__(Ellipsis, x), sync, Ev)
            print(
                f"cupy  sum f32 {r:9d} x {c:<9d} | {us:9.1f} us {r * c * 4 / us / 1e3:8.1f} GB/s"
                f" | of copy {cus / (2 * us):6.3f}"
            )
            del x, y
        for r, c in COL_SHAPES:
            x = cp.random.rand(r, c, dtype=cp.float32)
            y = cp.empty_like(x)
            us = timed(lambda x=x: x.sum(axis=0), sync, Ev)
            cus = timed(lambda x=x, y=y: y.__setitem__(Ellipsis, x), sync, Ev)
            print(
                f"cupy  colsum  {r:9d} x {c:<9d} | {us:9.1f} us {r * c * 4 / us / 1e3:8.1f} GB/s"
                f" | of copy {cus / (2 * us):6.3f}"
            )
            del x, y
    except Exception as ex:  # noqa: BLE001
        print(f"CuPy: {ex}")


if __name__ == "__main__":
    main()
