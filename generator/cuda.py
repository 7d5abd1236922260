"""CUDA from Python without an array library: the driver (libcuda, through ctypes) for the GPUs
present and the device a pointer lives on, nvcc for building, and the runtime calls the Python
wrappers need (through a generated library's glue, `RUNTIME_GLUE`, so they are the very runtime
its kernels link: no libcudart has to be found at run time).
"""

import ctypes
import os
import shutil
import subprocess
import threading
from collections.abc import Callable
from functools import cache
from pathlib import Path


class CudaError(RuntimeError):
    """A CUDA call failed: `function` is the call (a generated function or a runtime one), `name`
    the error's name (cudaGetErrorName's, or the driver's CUresult name), `code` its number."""

    def __init__(self, function: str, code: int, name: str):
        self.function, self.code, self.name = function, code, name
        super().__init__(f"{function}: {name} ({code})")


class NoDeviceError(CudaError):
    """No CUDA GPU can run the call (no driver, no device): one clear error, raised before anything."""

    def __init__(self, why: str, function: str = ""):
        RuntimeError.__init__(self, f"{function + ': ' if function else ''}no CUDA GPU is available: {why}")
        self.function, self.code, self.name = function, -1, why


# CUdevice_attribute and CUpointer_attribute values of cuda.h
_CC_MAJOR, _CC_MINOR = 75, 76
_POINTER_DEVICE_ORDINAL = 9
_POINTER_MEMORY_TYPE = 2
MEMORY_DEVICE, MEMORY_UNIFIED = 2, 4  # CUmemorytype (unified: managed memory)


@cache
def _driver() -> ctypes.CDLL | str:
    """libcuda, initialized; or why it cannot be (a string)."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return "the CUDA driver (libcuda.so.1) is not installed"
    rc = lib.cuInit(0)
    if rc != 0:
        return f"cuInit failed with {_driver_error(lib, rc)}"
    return lib


def _driver_error(lib: ctypes.CDLL, rc: int) -> str:
    name = ctypes.c_char_p()
    if lib.cuGetErrorName(rc, ctypes.byref(name)) != 0 or not name.value:
        return f"CUresult {rc}"
    return name.value.decode()


def driver() -> ctypes.CDLL:
    """The initialized driver, or NoDeviceError."""
    lib = _driver()
    if isinstance(lib, str):
        raise NoDeviceError(lib)
    return lib


def _check(lib: ctypes.CDLL, what: str, rc: int) -> None:
    if rc != 0:
        raise CudaError(what, rc, _driver_error(lib, rc))


def device_count() -> int:
    """The CUDA GPUs present; 0 where there is no driver or none is visible."""
    lib = _driver()
    if isinstance(lib, str):
        return 0
    count = ctypes.c_int()
    return count.value if lib.cuDeviceGetCount(ctypes.byref(count)) == 0 else 0


def require_device(function: str = "") -> None:
    """NoDeviceError unless a GPU is there to run on (what every call checks first)."""
    if device_count() == 0:
        lib = _driver()
        raise NoDeviceError(lib if isinstance(lib, str) else "the driver sees no CUDA device", function)


def compute_capability(device: int) -> int:
    """A device's compute capability as a number: 90 for 9.0."""
    lib = driver()
    dev, major, minor = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    _check(lib, "cuDeviceGet", lib.cuDeviceGet(ctypes.byref(dev), device))
    _check(lib, "cuDeviceGetAttribute", lib.cuDeviceGetAttribute(ctypes.byref(major), _CC_MAJOR, dev))
    _check(lib, "cuDeviceGetAttribute", lib.cuDeviceGetAttribute(ctypes.byref(minor), _CC_MINOR, dev))
    return major.value * 10 + minor.value


def architectures() -> list[int]:
    """The compute capabilities of the GPUs present, sorted, each once; NoDeviceError if none."""
    require_device()
    return sorted({compute_capability(d) for d in range(device_count())})


def _pointer_attribute(ptr: int, attribute: int) -> int | None:
    lib = _driver()
    if isinstance(lib, str):
        return None
    value = ctypes.c_int()
    if lib.cuPointerGetAttribute(ctypes.byref(value), attribute, ctypes.c_uint64(ptr)) != 0:
        return None
    return value.value


def pointer_device(ptr: int) -> int | None:
    """The device a pointer's memory is on; None where the driver does not know it (host
    memory, no GPU)."""
    lib = _driver()
    if isinstance(lib, str):
        return None
    query = _POINTER_QUERIES.get(lib)
    if query is None:
        query = _POINTER_QUERIES[lib] = _pointer_query(lib)
    return query(ptr)


_POINTER_QUERIES: dict[ctypes.CDLL, Callable[[int], int | None]] = {}  # a driver's, made at its first pointer


def _pointer_query(lib: ctypes.CDLL) -> Callable[[int], int | None]:
    """pointer_device's question to one driver: both attributes in one cuPointerGetAttributes
    (an address that is no CUDA pointer reads as memory type 0), into buffers kept a thread; or,
    where the driver has no such function, cuPointerGetAttribute twice."""
    try:
        both = lib["cuPointerGetAttributes"]  # a function object of its own: its argtypes are ours
    except AttributeError:
        return _pointer_device_twice
    both.argtypes = [ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64]  # addresses as ints: cheaper
    both.restype = ctypes.c_int
    attributes = (ctypes.c_int * 2)(_POINTER_MEMORY_TYPE, _POINTER_DEVICE_ORDINAL)
    asked = ctypes.addressof(attributes)
    local = threading.local()

    def query(ptr: int) -> int | None:
        held = getattr(local, "held", None)
        if held is None:  # the values, and the array of their two addresses (kept alive here)
            values = (ctypes.c_int * 2)()
            at = ctypes.addressof(values)
            where = (ctypes.c_void_p * 2)(at, at + ctypes.sizeof(ctypes.c_int))
            held = local.held = (values, ctypes.addressof(where), where, attributes)
        values = held[0]
        values[0] = 0
        if both(2, asked, held[1], ptr) != 0 or values[0] not in (MEMORY_DEVICE, MEMORY_UNIFIED):
            return None
        return values[1]

    return query


def _pointer_device_twice(ptr: int) -> int | None:
    if _pointer_attribute(ptr, _POINTER_MEMORY_TYPE) not in (MEMORY_DEVICE, MEMORY_UNIFIED):
        return None
    return _pointer_attribute(ptr, _POINTER_DEVICE_ORDINAL)


# ---- nvcc ----


def find_nvcc(nvcc: str | None = None) -> str:
    """nvcc: the one given, else $CUDA_HOME/bin/nvcc, $PATH's, or /usr/local/cuda's; FileNotFoundError if none."""
    candidates = [nvcc] if nvcc else []
    if not nvcc:
        candidates += [
            str(Path(os.environ[v]) / "bin" / "nvcc") for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)
        ]
        candidates += [shutil.which("nvcc") or "", "/usr/local/cuda/bin/nvcc"]
    for c in candidates:
        found = shutil.which(c) if c else None
        if found:
            return found
    raise FileNotFoundError(f"nvcc not found ({nvcc or 'set CUDA_HOME, or put nvcc on PATH'})")


@cache
def nvcc_version(nvcc: str) -> str:
    """`nvcc --version`'s output (a part of the build cache's key)."""
    r = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise FileNotFoundError(f"{nvcc} --version failed: {(r.stderr or r.stdout).strip()}")
    return r.stdout


# ---- the runtime, through a generated library's glue ----

# Compiled into every library `assocgen.load` builds (internal names, `ag_py_`): the runtime calls
# the wrappers make, from the same (static) cudart as the kernels.
RUNTIME_GLUE = """\
/* the Python wrappers' runtime calls (assocgen.load): the same cudart as the kernels */
#include <cuda_runtime_api.h>

extern "C" {
const char *ag_py_error_name(int e) { return cudaGetErrorName((cudaError_t)e); }
int ag_py_get_device(int *d) { return (int)cudaGetDevice(d); }
int ag_py_set_device(int d) { return (int)cudaSetDevice(d); }
int ag_py_malloc(void **p, size_t bytes) { return (int)cudaMalloc(p, bytes); }
int ag_py_free(void *p) { return (int)cudaFree(p); }
int ag_py_memset_async(void *p, size_t bytes, cudaStream_t s) { return (int)cudaMemsetAsync(p, 0, bytes, s); }
int ag_py_stream_synchronize(cudaStream_t s) { return (int)cudaStreamSynchronize(s); }
int ag_py_memcpy(void *dst, const void *src, size_t n) { return (int)cudaMemcpy(dst, src, n, cudaMemcpyDefault); }
/* `consumer` waits for the work queued on `producer` so far */
int ag_py_stream_wait(cudaStream_t consumer, cudaStream_t producer)
{
    cudaEvent_t e;
    cudaError_t err = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
    if (err != cudaSuccess)
        return (int)err;
    if ((err = cudaEventRecord(e, producer)) == cudaSuccess)
        err = cudaStreamWaitEvent(consumer, e, 0);
    cudaEventDestroy(e);
    return (int)err;
}
}
"""
GLUE_NAME = "ag_py_runtime.cu"


class Runtime:
    """The runtime calls of one built library (its glue), each raising CudaError."""

    def __init__(self, lib: ctypes.CDLL):
        self.lib = lib
        lib.ag_py_error_name.restype = ctypes.c_char_p
        lib.ag_py_error_name.argtypes = [ctypes.c_int]
        lib.ag_py_malloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
        lib.ag_py_memset_async.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
        for name in ("ag_py_free", "ag_py_stream_synchronize"):
            getattr(lib, name).argtypes = [ctypes.c_void_p]
        lib.ag_py_stream_wait.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        lib.ag_py_memcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]

    def error_name(self, code: int) -> str:
        name = self.lib.ag_py_error_name(code)
        return name.decode() if name else f"cudaError {code}"

    def check(self, function: str, code: int) -> None:
        if code != 0:
            raise CudaError(function, code, self.error_name(code))

    def call(self, function: str, fn: Callable[..., int], *args: object) -> None:
        self.check(function, fn(*args))

    def get_device(self) -> int:
        d = ctypes.c_int()
        self.call("cudaGetDevice", self.lib.ag_py_get_device, ctypes.byref(d))
        return d.value

    def set_device(self, device: int) -> None:
        self.call("cudaSetDevice", self.lib.ag_py_set_device, device)

    def malloc_zeroed(self, nbytes: int, stream: int) -> int:
        """cudaMalloc, then cudaMemsetAsync to zero on `stream` (ordered before the calls on it)."""
        p = ctypes.c_void_p()
        self.call("cudaMalloc", self.lib.ag_py_malloc, ctypes.byref(p), nbytes)
        assert p.value is not None
        self.call("cudaMemsetAsync", self.lib.ag_py_memset_async, p.value, nbytes, stream)
        return p.value

    def free(self, ptr: int) -> None:
        self.call("cudaFree", self.lib.ag_py_free, ptr)

    def synchronize(self, stream: int) -> None:
        self.call("cudaStreamSynchronize", self.lib.ag_py_stream_synchronize, stream)

    def wait(self, consumer: int, producer: int) -> None:
        self.call("cudaStreamWaitEvent", self.lib.ag_py_stream_wait, consumer, producer)

    def copy(self, dst: int, src: int, nbytes: int) -> None:
        """cudaMemcpy, either way (cudaMemcpyDefault), synchronous: for tests without an array library."""
        self.call("cudaMemcpy", self.lib.ag_py_memcpy, dst, src, nbytes)
