// GPU test of operators of several input arrays (tests/gpu/inputs/spec.toml): every instance runs
// through the main GPU test's runners (tests/gpu/driver.cuh) on records (x0, x1, ...), which
// the wrappers in cases.inc (written by run.py) split into one exact-size array an input on the
// device before calling the generated function.  The reference folds the spec's own identity,
// combine and lift on the host, in input order.
//   ./inputs_test [--quick] [--only NAME]   --only also gives every scan exact-size buffers
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "mi.h"

#pragma nv_diag_suppress 186 // driver.cuh's `s < m` with m a template's constant 0 (by key)
#include "../driver.cuh"
#include "../family_driver.h"

// random inputs: floats in [-1.01, -0.01] and [0.01, 1.01] (never zero), integers of random bits
template <class T> static T draw(Rng &r)
{
    if (std::is_floating_point<T>::value) {
        const double u = r.unit();
        return (T)(u * 2.0 - 1.0 + (u < 0.5 ? -0.01 : 0.01));
    }
    return (T)r.next();
}

// the records' split (cases.inc): a grid-stride loop, and one exact-size array an input, one
// element past the allocation's start when `off` (then off 16-byte words)
static __device__ size_t first_index()
{
    return blockIdx.x * (size_t)blockDim.x + threadIdx.x;
}
static __device__ size_t grid_stride()
{
    return (size_t)gridDim.x * blockDim.x;
}
static unsigned split_blocks(size_t n)
{
    return (unsigned)std::min<size_t>((n + 255) / 256, 65535);
}
template <class T> static cudaError_t exact_alloc(T **p, size_t n, size_t off)
{
    T *q = nullptr;
    const cudaError_t e = cudaMalloc(&q, (n + off ? n + off : 1) * sizeof(T));
    *p = q ? q + off : nullptr;
    return e;
}
template <class T> static void exact_free(T *p)
{
    if (p)
        cudaFree(p - (((uintptr_t)p & 255) ? 1 : 0));
}

#include "cases.inc"

int main(int argc, char **argv)
{
    const Args a = parse_args(argc, argv);
    g_exact = a.only != nullptr; // the sanitizer's runs: exact-size buffers
    const std::vector<size_t> small = { 0, 1, 2, 31, 32, 33, 1000, 4097, 12289, (1u << 20) + 7 };
    std::vector<size_t> sizes = small;
    if (!a.quick)
        sizes.push_back((size_t)1 << 28);
    const std::vector<size_t> huge = { ((size_t)1 << 31) + 17 };
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
    Stats st;
    run_all(a, sizes, small, huge, st);
    std::printf("%d passed, %d failed\n", st.passed, st.failed);
    return st.failed ? 1 : 0;
}
