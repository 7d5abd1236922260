"""What a Python user calls for a transpose, on the same shapes as bench/transpose/bench.cu:
PyTorch `x.t().contiguous()` and CuPy `cupy.ascontiguousarray(x.T)`, as GB/s (read and write)
and as a fraction of a device copy of the same bytes (`y.copy_(x)`), timed by CUDA events."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pyanchors import cupy_event, timed  # noqa: E402 - bench/, beside this folder


def main():
    rows = [
        ("f32", 8192, 8192, 1),
        ("f32", 8191, 8193, 1),
        ("f64", 8192, 4096, 1),
        ("u8", 8192, 8192, 1),
        ("i16", 8192, 8192, 1),
        ("f32", 64, 64, 65536),
    ]
    try:
        import torch

        dt = {"f32": torch.float32, "f64": torch.float64, "u8": torch.uint8, "i16": torch.int16}
        print(f"PyTorch {torch.__version__} on {torch.cuda.get_device_name()}")
        for name, r, c, b in rows:
            x = torch.randint(0, 100, (b, r, c), device="cuda").to(dt[name])
            y = torch.empty_like(x)
            e = x.element_size()
            event = lambda: torch.cuda.Event(enable_timing=True)  # noqa: E731
            us = timed(lambda x=x: x.transpose(1, 2).contiguous(), torch.cuda.synchronize, event)
            cus = timed(lambda x=x, y=y: y.copy_(x), torch.cuda.synchronize, event)
            gb = 2 * r * c * b * e / us / 1e3
            print(f"torch {name:4s} {r:6d} x {c:<6d} x {b:<6d} | {us:9.1f} us {gb:8.1f} GB/s | of copy {cus / us:6.3f}")
    except Exception as ex:  # noqa: BLE001 - an anchor that cannot run is reported, not fatal
        print(f"PyTorch: {ex}")
    try:
        import cupy as cp

        print(f"CuPy {cp.__version__}")
        dt = {"f32": cp.float32, "f64": cp.float64, "u8": cp.uint8, "i16": cp.int16}

        Ev = cupy_event(cp)

        for name, r, c, b in rows:
            x = cp.random.randint(0, 100, (b, r, c)).astype(dt[name])
            y = cp.empty_like(x)
            us = timed(lambda x=x: cp.ascontiguousarray(x.transpose(0, 2, 1)), cp.cuda.Device().synchronize, Ev)
            cus = timed(lambda x=x, y=y: y.__setitem__(Ellipsis, x), cp.cuda.Device().synchronize, Ev)
            gb = 2 * r * c * b * x.itemsize / us / 1e3
            print(f"cupy  {name:4s} {r:6d} x {c:<6d} x {b:<6d} | {us:9.1f} us {gb:8.1f} GB/s | of copy {cus / us:6.3f}")
    except Exception as ex:  # noqa: BLE001
        print(f"CuPy: {ex}")


if __name__ == "__main__":
    main()
