// What the benchmark programs share (bench/transpose, bench/matmul): a CUDA call checked, and a
// median time a call.
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
