"""The cuda.compute column (package cuda-cccl): CUB's algorithms from Python with the same operators
as C++ device functions (cuda.compute's RawOp: LTO-IR compiled by NVRTC, so no Python JIT stack is
needed), on PyTorch's arrays and current stream, the temporary storage made once.  Each `make_*`
returns a call of no arguments.  Imported only when cuda.compute is."""

from collections.abc import Callable
from typing import Any

import cuda.compute as cc
import numpy as np
import torch
from cuda.compute import types as cc_types
from cuda.compute._cpp_compile import compile_cpp_to_ltoir
from cuda.compute.op import RawOp

AFFINE = np.dtype([("a", "<f4"), ("b", "<f4")], align=True)
MAT3 = np.dtype([(f"m{k}", "<u4") for k in range(9)], align=True)

OPS = {
    "agb_affine": """extern "C" __device__ void agb_affine(void *x, void *y, void *r) {
    const float *p = (const float *)x, *q = (const float *)y;
    float a = q[0] * p[0], b = fmaf(q[0], p[1], q[1]);
    ((float *)r)[0] = a; ((float *)r)[1] = b;
}""",
    "agb_mat3": """extern "C" __device__ void agb_mat3(void *x, void *y, void *r) {
    const unsigned *p = (const unsigned *)x, *q = (const unsigned *)y;
    unsigned t[9];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            t[3 * i + j] = p[3 * i] * q[j] + p[3 * i + 1] * q[3 + j] + p[3 * i + 2] * q[6 + j];
    for (int k = 0; k < 9; ++k) ((unsigned *)r)[k] = t[k];
}""",
    "agb_square": """extern "C" __device__ void agb_square(void *x, void *r) {
    float v = *(const float *)x; *(float *)r = v * v;
}""",
}

ARGMAX = """extern "C" __device__ void agb_argmax(void *x, void *y, void *r) {
    const char *p = (const char *)x, *q = (const char *)y;
    float pv = *(const float *)(p + VO), qv = *(const float *)(q + VO);
    long long pi = *(const long long *)(p + IO), qi = *(const long long *)(q + IO);
    bool take = qv > pv || (qv == pv && qi < pi);
    *(float *)((char *)r + VO) = take ? qv : pv;
    *(long long *)((char *)r + IO) = take ? qi : pi;
}"""


class View:
    """A torch tensor's bytes as a 1-D array of a numpy dtype (a struct), as cuda.compute reads
    arrays: dtype, shape, size, data_ptr() and __cuda_array_interface__."""

    def __init__(self, t: torch.Tensor, dtype: np.dtype):
        self.t, self.dtype = t, dtype
        self.size = t.numel() * t.element_size() // dtype.itemsize
        self.shape = (self.size,)
        self.nbytes = self.size * dtype.itemsize

    def data_ptr(self) -> int:
        return int(self.t.data_ptr())

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        return {"shape": self.shape, "typestr": self.dtype.str, "descr": self.dtype.descr,
                "data": (self.data_ptr(), False), "strides": None, "version": 2}  # fmt: skip


class Stream:
    """PyTorch's current stream through the __cuda_stream__ protocol."""

    def __init__(self) -> None:
        self.handle = int(torch.cuda.current_stream().cuda_stream)

    def __cuda_stream__(self) -> tuple[int, int]:
        return (0, self.handle)


def op(name: str, source: str | None = None) -> Any:
    return RawOp(ltoir=compile_cpp_to_ltoir(source or OPS[name]), name=name)


def storage(bytes_: int) -> torch.Tensor:
    return torch.empty(max(bytes_, 1), dtype=torch.uint8, device="cuda")


def make_scan(x: torch.Tensor, y: torch.Tensor, dtype: np.dtype, opname: str) -> Callable[[], Any]:
    """The inclusive scan of x into y, elements of `dtype` (no initial value)."""
    vin, vout, o, s = View(x, dtype), View(y, dtype), op(opname), Stream()
    scan = cc.make_inclusive_scan(d_in=vin, d_out=vout, op=o, init_value=None)
    kw = dict(d_in=vin, d_out=vout, op=o, init_value=None, num_items=vin.size, stream=s)
    tmp = storage(scan(temp_storage=None, **kw))
    return lambda: scan(temp_storage=tmp, **kw)


def make_reduce(x: torch.Tensor, out: torch.Tensor) -> Callable[[], Any]:
    """The fold of affine maps x into out (one map), the identity as initial value."""
    vin, vout, o, s = View(x, AFFINE), View(out, AFFINE), op("agb_affine"), Stream()
    init = np.zeros(1, AFFINE)
    init["a"] = 1.0
    red = cc.make_reduce_into(d_in=vin, d_out=vout, op=o, h_init=init)
    kw = dict(d_in=vin, d_out=vout, num_items=vin.size, op=o, h_init=init, stream=s)
    tmp = storage(red(temp_storage=None, **kw))
    return lambda: red(temp_storage=tmp, **kw)


def make_sumsq(x: torch.Tensor, out: torch.Tensor) -> Callable[[], Any]:
    """The sum of x * x: a TransformIterator squaring x, reduced with PLUS."""
    it = cc.TransformIterator(x, op("agb_square"), cc_types.float32)
    init, s = np.zeros(1, np.float32), Stream()
    red = cc.make_reduce_into(d_in=it, d_out=out, op=cc.OpKind.PLUS, h_init=init)
    kw = dict(d_in=it, d_out=out, num_items=x.numel(), op=cc.OpKind.PLUS, h_init=init, stream=s)
    tmp = storage(red(temp_storage=None, **kw))
    return lambda: red(temp_storage=tmp, **kw)


def make_argmax(x: torch.Tensor, out: torch.Tensor) -> tuple[Callable[[], Any], int]:
    """The first index of the largest x: x zipped with a counting iterator, reduced by a C++ op
    on (value, index); out: a uint8 tensor of the pair's bytes.  Also the index's byte offset."""
    zit = cc.ZipIterator(x, cc.CountingIterator(np.int64(0)))
    dt = zit.value_type.dtype
    (vname, (_, vo)), (iname, (_, io)) = [(k, dt.fields[k][:2]) for k in dt.names]
    o = op("agb_argmax", ARGMAX.replace("VO", str(vo)).replace("IO", str(io)))
    init = np.zeros(1, dt)
    init[vname], init[iname] = -np.inf, np.iinfo(np.int64).max
    vout, s = View(out, dt), Stream()
    red = cc.make_reduce_into(d_in=zit, d_out=vout, op=o, h_init=init)
    kw = dict(d_in=zit, d_out=vout, num_items=x.numel(), op=o, h_init=init, stream=s)
    tmp = storage(red(temp_storage=None, **kw))
    return (lambda: red(temp_storage=tmp, **kw)), io


def make_segreduce(x: torch.Tensor, offsets: torch.Tensor, y: torch.Tensor) -> Callable[[], Any]:
    """The fold of each segment offsets[s] .. offsets[s+1]-1 of affine maps x into y, by
    DeviceSegmentedReduce with the identity as initial value."""
    vin, vout, o, s = View(x, AFFINE), View(y, AFFINE), op("agb_affine"), Stream()
    init = np.zeros(1, AFFINE)
    init["a"] = 1.0
    starts, ends = offsets[:-1], offsets[1:]
    seg = cc.make_segmented_reduce(
        d_in=vin, d_out=vout, start_offsets_in=starts, end_offsets_in=ends, op=o, h_init=init
    )
    kw = dict(d_in=vin, d_out=vout, num_segments=vout.size, start_offsets_in=starts, end_offsets_in=ends, op=o,
              h_init=init, stream=s)  # fmt: skip
    tmp = storage(seg(temp_storage=None, **kw))
    return lambda: seg(temp_storage=tmp, **kw)
