/* Small helpers shared by the example programs: error checks and a workspace. */
#ifndef EXAMPLES_COMMON_H
#define EXAMPLES_COMMON_H
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime_api.h>

#define CHECK(call)                                                                                                    \
    do {                                                                                                               \
        cudaError_t err_ = (call);                                                                                     \
        if (err_ != cudaSuccess) {                                                                                     \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_));                   \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

/* A zeroed workspace of at least `bytes` (NULL when none is needed), per the header's contract. */
static inline void *workspace(size_t bytes)
{
    void *p = NULL;
    if (bytes) {
        CHECK(cudaMalloc(&p, bytes));
        CHECK(cudaMemset(p, 0, bytes));
    }
    return p;
}

/* xorshift64*: reproducible random numbers without rand()'s small range */
static unsigned long long rng_state = 0x9E3779B97F4A7C15ull;
static inline unsigned long long rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}
/* uniform in [0, 1) */
static inline float rng_unit(void)
{
    return (float)(rng() >> 40) / 16777216.0f;
}

#endif
