// What the benchmark programs share (bench/bench.cu, bench/transpose, bench/matmul, bench/rows,
// bench/trace): a CUDA call checked (a failure exits with status 2, apart from a program's own 1 for
// a wrong result), a median time a call, a workspace that grows to the largest asked for, a hash for
// data that is a pure function of its index, and a cached allocator for Thrust.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                                                       \
    do {                                                                                                               \
        cudaError_t e_ = (x);                                                                                          \
        if (e_ != cudaSuccess) {                                                                                       \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));                        \
            exit(2);                                                                                                   \
        }                                                                                                              \
    } while (0)

// microseconds a call of f on the default stream: one call to warm up, then the median of `reps`
// runs of `calls` calls each
template <class F> static double time_us(F f, int calls = 1, int reps = 5)
{
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    f();
    CHECK(cudaDeviceSynchronize());
    std::vector<float> t;
    for (int rep = 0; rep < reps; ++rep) {
        cudaEventRecord(a);
        for (int k = 0; k < calls; ++k)
            f();
        cudaEventRecord(b);
        CHECK(cudaEventSynchronize(b));
        float ms = 0;
        cudaEventElapsedTime(&ms, a, b);
        t.push_back(ms * 1000.0f / calls);
    }
    std::sort(t.begin(), t.end());
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return t[reps / 2];
}

// a device buffer of at least `bytes`, grown (and so moved) when a larger one is asked for: call
// it again before each use, never keep its pointer across calls
static inline void *bench_workspace(size_t bytes)
{
    static void *w = nullptr;
    static size_t have = 0;
    if (bytes > have) {
        CHECK(cudaFree(w));
        CHECK(cudaMalloc(&w, bytes));
        have = bytes;
    }
    return w;
}

// splitmix64: data that is a pure function of its index, on the host or the device
__host__ __device__ static inline uint64_t mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// thrust's temporary storage from one cached block, as a program calling it in a loop would keep
struct CachedAlloc {
    typedef char value_type;
    char *block = nullptr;
    size_t size = 0;
    char *allocate(std::ptrdiff_t bytes)
    {
        if ((size_t)bytes > size) {
            if (block) CHECK(cudaFree(block));
            CHECK(cudaMalloc(&block, (size_t)bytes));
            size = (size_t)bytes;
        }
        return block;
    }
    void deallocate(char *, size_t) {}
};
