// What the benchmark programs share (bench/transpose, bench/matmul, bench/rows): a CUDA call
// checked, a median time a call, and a workspace that grows to the largest asked for.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                                                       \
    do {                                                                                                               \
        cudaError_t e_ = (x);                                                                                          \
        if (e_ != cudaSuccess) {                                                                                       \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));                                \
            exit(1);                                                                                                   \
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
static void *bench_workspace(size_t bytes)
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
