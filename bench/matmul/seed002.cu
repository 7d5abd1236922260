// Seed 002's two matrix multiplies, as the issue describes them, beside this project's: the tiled
// kernel (BLOCK_SIZE x BLOCK_SIZE threads, a tile of A and of B in shared memory a step, the k loop
// unrolled) and the variant in which each thread computes 8 outputs (BLOCK_SIZE x BLOCK_SIZE / 8
// threads), here with the second __syncthreads that the seed's version lacks; each at BLOCK_SIZE
// 8, 16 and 32, plus-times f32 at n = 3072 (the seed's size).  Every result is compared with
// cuBLAS SGEMM bit for bit (the inputs are quarters, so every sum is exact).  Nsight Compute
// profiles these launches (bench/matmul/run.sh: registers, shared memory, occupancy, bank
// conflicts); this program prints time and GFLOP/s.
//   ./seed002 [n] [--once]      (--once: each kernel launched once, for the profiler)
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../common.cuh"
#include "bm.h"

// C = A B, n x n row-major, n a multiple of BLOCK_SIZE (the seed's assumption)
template <int BLOCK_SIZE> __global__ void seed_tiled(const float *a, const float *b, float *c, int n)
{
    __shared__ float as[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ float bs[BLOCK_SIZE][BLOCK_SIZE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * BLOCK_SIZE + ty, col = blockIdx.x * BLOCK_SIZE + tx;
    float sum = 0;
    for (int k0 = 0; k0 < n; k0 += BLOCK_SIZE) {
        as[ty][tx] = a[row * n + k0 + tx];
        bs[ty][tx] = b[(k0 + ty) * n + col];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BLOCK_SIZE; ++k)
            sum += as[ty][k] * bs[k][tx];
        __syncthreads();
    }
    c[row * n + col] = sum;
}

// each thread 8 outputs, rows ty, ty + BLOCK_SIZE / 8, ... of the block's tile
template <int BLOCK_SIZE> __global__ void seed_eight(const float *a, const float *b, float *c, int n)
{
    constexpr int R = BLOCK_SIZE / 8;
    __shared__ float as[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ float bs[BLOCK_SIZE][BLOCK_SIZE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * BLOCK_SIZE + ty, col = blockIdx.x * BLOCK_SIZE + tx;
    float sum[8] = { 0 };
    for (int k0 = 0; k0 < n; k0 += BLOCK_SIZE) {
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            as[ty + i * R][tx] = a[(row + i * R) * n + k0 + tx];
            bs[ty + i * R][tx] = b[(k0 + ty + i * R) * n + col];
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BLOCK_SIZE; ++k) {
            const float y = bs[k][tx];
#pragma unroll
            for (int i = 0; i < 8; ++i)
                sum[i] += as[ty + i * R][k] * y;
        }
        __syncthreads(); // the seed's missing barrier: the next loads must wait for these reads
    }
#pragma unroll
    for (int i = 0; i < 8; ++i)
        c[(row + i * R) * n + col] = sum[i];
}

int main(int argc, char **argv)
{
    const int n = argc > 1 ? atoi(argv[1]) : 3072;
    const bool once = argc > 2 && !strcmp(argv[2], "--once");
    if (n <= 0 || n % 32) {
        fprintf(stderr, "n must be a positive multiple of 32\n");
        return 2;
    }
    const size_t nn = (size_t)n * n;
    std::vector<float> h(nn);
    uint32_t s = 99;
    for (auto &v : h)
        v = (float)((int)((s = s * 1664525u + 1013904223u) >> 27) - 16) / 4.0f;
    float *a, *b, *c, *ref;
    CHECK(cudaMalloc(&a, nn * 4));
    CHECK(cudaMalloc(&b, nn * 4));
    CHECK(cudaMalloc(&c, nn * 4));
    CHECK(cudaMalloc(&ref, nn * 4));
    CHECK(cudaMemcpy(a, h.data(), nn * 4, cudaMemcpyHostToDevice));
    for (size_t i = 0; i < nn; ++i) // B: another permutation of the same quarters
        h[i] = h[(i * 7919) % nn];
    CHECK(cudaMemcpy(b, h.data(), nn * 4, cudaMemcpyHostToDevice));
    cublasHandle_t handle;
    cublasCreate(&handle);
    const float one = 1, zero = 0;
    auto sgemm = [&] { cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b, n, a, n, &zero, ref, n); };
    struct Row {
        const char *name;
        void (*launch)(const float *, const float *, float *, int);
    } rows[] = {
        { "seed tiled BLOCK_SIZE 8", [](const float *a, const float *b, float *c,
                                        int n) { seed_tiled<8><<<dim3(n / 8, n / 8), dim3(8, 8)>>>(a, b, c, n); } },
        { "seed tiled BLOCK_SIZE 16",
          [](const float *a, const float *b, float *c, int n) {
              seed_tiled<16><<<dim3(n / 16, n / 16), dim3(16, 16)>>>(a, b, c, n);
          } },
        { "seed tiled BLOCK_SIZE 32",
          [](const float *a, const float *b, float *c, int n) {
              seed_tiled<32><<<dim3(n / 32, n / 32), dim3(32, 32)>>>(a, b, c, n);
          } },
        { "seed 8 outputs BLOCK_SIZE 8", [](const float *a, const float *b, float *c,
                                            int n) { seed_eight<8><<<dim3(n / 8, n / 8), dim3(8, 1)>>>(a, b, c, n); } },
        { "seed 8 outputs BLOCK_SIZE 16",
          [](const float *a, const float *b, float *c, int n) {
              seed_eight<16><<<dim3(n / 16, n / 16), dim3(16, 2)>>>(a, b, c, n);
          } },
        { "seed 8 outputs BLOCK_SIZE 32",
          [](const float *a, const float *b, float *c, int n) {
              seed_eight<32><<<dim3(n / 32, n / 32), dim3(32, 4)>>>(a, b, c, n);
          } },
        { "assocgen plus_times f32",
          [](const float *a, const float *b, float *c, int n) {
              CHECK(bm_matmul_plus_times_f32(a, n, b, n, n, n, n, 0, c, n, NULL, 0, 0));
          } },
    };
    const double ref_us = once ? 1 : time_us(sgemm);
    std::vector<float> want(nn), got(nn);
    CHECK(cudaMemcpy(want.data(), ref, nn * 4, cudaMemcpyDeviceToHost));
    printf("seed 002 at n = %d, plus-times f32; GFLOP/s = 2 n^3 / time\n", n);
    printf("%-30s | %10s %10s %8s | %s\n", "kernel", "time", "GFLOP/s", "of SGEMM", "check");
    int bad = 0;
    for (const Row &r : rows) {
        CHECK(cudaMemset(c, 0, nn * 4));
        if (once) {
            r.launch(a, b, c, n);
            CHECK(cudaDeviceSynchronize());
            continue;
        }
        const double us = time_us([&] { r.launch(a, b, c, n); });
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(got.data(), c, nn * 4, cudaMemcpyDeviceToHost));
        const bool same = got == want;
        bad += !same;
        printf("%-30s | %8.1f us %10.1f %8.3f | %s\n", r.name, us, 2.0 * n * n * n / us / 1e3, ref_us / us,
               same ? "exact" : "MISMATCH");
    }
    if (once)
        return 0;
    printf("%-30s | %8.1f us %10.1f %8.3f |\n", "cuBLAS SGEMM", ref_us, 2.0 * n * n * n / ref_us / 1e3, 1.0);
    return bad ? 1 : 0;
}
