"""What the Python anchors of the benchmarks share (bench/transpose/anchors.py,
bench/rows/anchors.py): a median time a call by CUDA events, and CuPy's events behind PyTorch's
interface."""

import statistics


def timed(fn, sync, event):
    """Microseconds a call of fn: one call to warm up, then the median of 7 runs of 10 calls"""
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
        times.append(a.elapsed_time(b) * 100)  # ms for 10 calls -> us a call
    return statistics.median(times)


def cupy_event(cp):
    """A class of CuPy events with record / synchronize / elapsed_time, as torch.cuda.Event"""

    class Ev:
        def __init__(self):
            self.e = cp.cuda.Event()

        def record(self):
            self.e.record()

        def synchronize(self):
            self.e.synchronize()

        def elapsed_time(self, other):
            return cp.cuda.get_elapsed_time(self.e, other.e)

    return Ev
