// Matrix multiply over semirings, side by side in one run: each builtin semiring of
// bench/matmul/spec.toml at 1024^3, 4096^3, 8192^3 and a tall
// skinny 64 x 4096 x 4096, as steps a second (one step: add(c, mul(a, b))) and as a fraction of
// the step's own instruction ceiling (ceiling.cu, written by ceiling.py); plus-times also against
// cuBLAS SGEMM / DGEMM (fp32 / fp64, no tensor cores), checked against it at 1024^3.
//   ./matmul_bench      prints a table; times are medians of 5 runs
//   ./matmul_bench --variants   only the second table: the spec's variants of the default shape
//                       (warp tiles, the cp.async pipeline), each beside the default, C checked
//                       bit for bit against it
//   ./matmul_bench --profile    one call of the default plus-times f32 and one of SGEMM at 4096^3,
//                       for Nsight Compute (bench/matmul/run.sh with STALLS=1)
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "../common.cuh"
#include "bm.h"
#include "ceiling.cu"

typedef cudaError_t (*MmFn)(const void *, size_t, const void *, size_t, size_t, size_t, size_t, int, void *, size_t,
                            cudaStream_t);
// the multiplies behind one signature, each with the workspace it asks for (a k split where C's
// tiles are fewer than a wave of blocks)
#define WRAP(name, T)                                                                                                  \
    static cudaError_t name##_w(const void *a, size_t lda, const void *b, size_t ldb, size_t m, size_t n, size_t k,    \
                                int acc, void *c, size_t ldc, cudaStream_t s)                                          \
    {                                                                                                                  \
        static size_t bytes, at[3];                                                                                    \
        if (at[0] != m || at[1] != n || at[2] != k) { /* asked once a shape */                                         \
            bytes = name##_workspace_bytes(m, n, k);                                                                   \
            at[0] = m, at[1] = n, at[2] = k;                                                                           \
        }                                                                                                              \
        void *w = bench_workspace(bytes);                                                                              \
        return name((const T *)a, lda, (const T *)b, ldb, m, n, k, acc, (T *)c, ldc, w, bytes, s);                     \
    }
WRAP(bm_matmul_plus_times_f32, float)
WRAP(bm_matmul_min_plus_f32, float)
WRAP(bm_matmul_max_plus_f32, float)
WRAP(bm_matmul_max_min_f32, float)
WRAP(bm_matmul_min_max_f32, float)
WRAP(bm_matmul_plus_times_i32, int32_t)
WRAP(bm_matmul_min_plus_i32, int32_t)
WRAP(bm_matmul_max_plus_i32, int32_t)
WRAP(bm_matmul_max_min_i32, int32_t)
WRAP(bm_matmul_min_max_i32, int32_t)
WRAP(bm_matmul_plus_times_f64, double)
WRAP(bm_matmul_min_plus_f64, double)
WRAP(bm_matmul_or_and_u32, uint32_t)
WRAP(bm_pt_f32_k8, float)
WRAP(bm_mp_f32_k8, float)
WRAP(bm_mp_i32_k8, int32_t)
WRAP(bm_pt_f32_w32x64, float)
WRAP(bm_mp_f32_w32x64, float)
WRAP(bm_mp_i32_w32x64, int32_t)
WRAP(bm_pt_f32_w64x32, float)
WRAP(bm_mp_f32_w64x32, float)
WRAP(bm_mp_i32_w64x32, int32_t)
WRAP(bm_pt_f32_async2, float)
WRAP(bm_mp_f32_async2, float)
WRAP(bm_mp_i32_async2, int32_t)
WRAP(bm_pt_f32_async2_w32x64, float)
WRAP(bm_mp_f32_async2_w32x64, float)
WRAP(bm_mp_i32_async2_w32x64, int32_t)
WRAP(bm_pt_f32_k8_async3_w32x64, float)
WRAP(bm_mp_f32_k8_async3_w32x64, float)
WRAP(bm_mp_i32_k8_async3_w32x64, int32_t)
WRAP(bm_pt_f32_k8_async4_w32x64, float)
WRAP(bm_mp_f32_k8_async4_w32x64, float)
WRAP(bm_mp_i32_k8_async4_w32x64, int32_t)
WRAP(bm_pt_f32_b128x64_async3_w32x64, float)
WRAP(bm_mp_f32_b128x64_async3_w32x64, float)
WRAP(bm_mp_i32_b128x64_async3_w32x64, int32_t)
static cudaError_t witness_w(const void *a, size_t lda, const void *b, size_t ldb, size_t m, size_t n, size_t k,
                             int acc, void *c, size_t ldc, cudaStream_t s)
{
    static int32_t *w = nullptr;
    static size_t have = 0;
    if (have < m * n) {
        cudaFree(w);
        cudaMalloc(&w, m * n * sizeof(int32_t));
        have = m * n;
    }
    return bm_matmul_min_plus_f32_witness((const float *)a, lda, (const float *)b, ldb, m, n, k, acc, (float *)c, ldc,
                                          w, n, NULL, 0, s);
}

// steps a second of a ceiling kernel (its step on 16 accumulators a thread, 4096 rounds)
static double ceiling_rate(const char *name)
{
    for (const Ceiling &c : ceilings)
        if (!strcmp(c.name, name)) {
            void *in, *out;
            cudaMalloc(&in, 64 * c.size);
            cudaMemset(in, 0, 64 * c.size);
            cudaMalloc(&out, 64 * c.size);
            int rounds = 4096, blocks = 132 * 8;
            void *args[] = { &in, &out, &rounds };
            const double us =
                time_us([&] { CHECK(cudaLaunchKernel(c.kernel, dim3(blocks), dim3(256), args, 0, 0)); }, 3);
            cudaFree(in);
            cudaFree(out);
            return (double)blocks * 256 * 16 * rounds / (us * 1e-6);
        }
    return 0;
}

int main(int argc, char **argv)
{
    const bool only_variants = argc > 1 && !strcmp(argv[1], "--variants");
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("GPU %s; a step is add(c, mul(a, b)); T = 10^12\n", prop.name);
    cublasHandle_t h;
    cublasCreate(&h);
    const size_t MAX = (size_t)8192 * 8192;
    // the inputs by kind (each an A and a B): quarters in [-4, 4) as floats and as doubles (exact in
    // every type, so that the check against cuBLAS is exact), integer weights in [0, 1024), random
    // bit words, weights with one in 16 absent (INT32_MAX: min-plus's zero)
    enum { FLOATS, DOUBLES, INTS, BITS, ABSENT, KINDS };
    void *in[KINDS][2], *c, *ref;
    CHECK(cudaMalloc(&c, MAX * 8));
    CHECK(cudaMalloc(&ref, MAX * 8));
    {
        std::vector<double> h(MAX);
        std::vector<float> hf(MAX);
        std::vector<uint32_t> hu(MAX);
        uint32_t x = 12345;
        for (int kind = 0; kind < KINDS; ++kind)
            for (int which = 0; which < 2; ++which) {
                for (size_t i = 0; i < MAX; ++i) {
                    x = x * 1664525u + 1013904223u;
                    hf[i] = (float)((int)(x >> 27) - 16) / 4.0f;
                    h[i] = hf[i];
                    hu[i] = kind == INTS     ? x >> 22
                            : kind == BITS   ? x ^ (x << 7)
                            : (x >> 28) == 0 ? 0x7fffffffu
                                             : x >> 22;
                }
                const size_t size = kind == DOUBLES ? 8 : 4;
                CHECK(cudaMalloc(&in[kind][which], MAX * size));
                const void *src = kind == FLOATS    ? (const void *)hf.data()
                                  : kind == DOUBLES ? (const void *)h.data()
                                                    : (const void *)hu.data();
                CHECK(cudaMemcpy(in[kind][which], src, MAX * size, cudaMemcpyHostToDevice));
            }
    }
    struct Row {
        const char *name, *ceiling;
        MmFn fn;
        int ref;  // 1 SGEMM, 2 DGEMM
        int kind; // the inputs
    } rows[] = {
        { "plus_times f32", "plus_times f32", bm_matmul_plus_times_f32_w, 1, FLOATS },
        { "plus_times f32 k8", "plus_times f32", bm_pt_f32_k8_w, 1, FLOATS },
        { "min_plus f32", "min_plus f32", bm_matmul_min_plus_f32_w, 0, FLOATS },
        { "min_plus f32 k8", "min_plus f32", bm_mp_f32_k8_w, 0, FLOATS },
        { "min_plus f32 witness", "min_plus f32", witness_w, 0, FLOATS },
        { "max_plus f32", "max_plus f32", bm_matmul_max_plus_f32_w, 0, FLOATS },
        { "max_min f32", "max_min f32", bm_matmul_max_min_f32_w, 0, FLOATS },
        { "min_max f32", "min_max f32", bm_matmul_min_max_f32_w, 0, FLOATS },
        { "plus_times i32", "plus_times i32", bm_matmul_plus_times_i32_w, 0, INTS },
        { "min_plus i32", "min_plus i32 fast", bm_matmul_min_plus_i32_w, 0, INTS },
        { "min_plus i32 k8", "min_plus i32 fast", bm_mp_i32_k8_w, 0, INTS },
        { "min_plus i32 1/16 absent", "min_plus i32 fast", bm_matmul_min_plus_i32_w, 0, ABSENT },
        { "max_plus i32", "max_plus i32 fast", bm_matmul_max_plus_i32_w, 0, INTS },
        { "max_min i32", "max_min i32", bm_matmul_max_min_i32_w, 0, INTS },
        { "min_max i32", "min_max i32", bm_matmul_min_max_i32_w, 0, INTS },
        { "plus_times f64", "plus_times f64", bm_matmul_plus_times_f64_w, 2, DOUBLES },
        { "min_plus f64", "min_plus f64", bm_matmul_min_plus_f64_w, 0, DOUBLES },
        { "or_and u32", "or_and u32", bm_matmul_or_and_u32_w, 0, BITS },
    };
    struct Shape {
        size_t m, n, k;
    } shapes[] = { { 1024, 1024, 1024 }, { 4096, 4096, 4096 }, { 8192, 8192, 8192 }, { 64, 4096, 4096 } };
    if (argc > 1 && !strcmp(argv[1], "--profile")) { // for Nsight Compute (run.sh, STALLS=1): one call of each
        const int e = 4096;
        CHECK(rows[0].fn(in[FLOATS][0], e, in[FLOATS][1], e, e, e, e, 0, c, e, 0));
        const float one = 1, zero = 0;
        cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, e, e, e, &one, (const float *)in[FLOATS][1], e,
                    (const float *)in[FLOATS][0], e, &zero, (float *)ref, e);
        CHECK(cudaDeviceSynchronize());
        printf("profiled: %s and cuBLAS's SGEMM at %d^3\n", rows[0].name, e);
        return 0;
    }
    printf("%-22s %-18s | %10s %9s | %9s %8s | %s\n", "semiring", "m x n x k", "time", "T steps/s", "ceiling", "of it",
           "reference");
    for (const Row &r : rows) {
        if (only_variants)
            break;
        const double ceil = ceiling_rate(r.ceiling);
        const void *a = in[r.kind][0], *b = in[r.kind][1];
        for (const Shape &s : shapes) {
            const bool big = s.m == 8192;
            const double steps = (double)s.m * s.n * s.k;
            const double us = time_us([&] { CHECK(r.fn(a, s.k, b, s.n, s.m, s.n, s.k, 0, c, s.n, 0)); }, big ? 1 : 3);
            char ref_text[96] = "";
            if (r.ref) {
                const int m = (int)s.m, n = (int)s.n, k = (int)s.k;
                double ref_us;
                if (r.ref == 1) {
                    const float one = 1, zero = 0;
                    ref_us = time_us(
                        [&] {
                            cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, (const float *)b, n,
                                        (const float *)a, k, &zero, (float *)ref, n);
                        },
                        big ? 1 : 3);
                } else {
                    const double one = 1, zero = 0;
                    ref_us = time_us(
                        [&] {
                            cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, (const double *)b, n,
                                        (const double *)a, k, &zero, (double *)ref, n);
                        },
                        big ? 1 : 3);
                }
                bool same = true;
                if (s.m == 1024 && r.ref == 1) { // exact: quarters
                    std::vector<float> x(s.m * s.n), y(s.m * s.n);
                    CHECK(cudaMemcpy(x.data(), c, x.size() * 4, cudaMemcpyDeviceToHost));
                    CHECK(cudaMemcpy(y.data(), ref, y.size() * 4, cudaMemcpyDeviceToHost));
                    same = x == y;
                }
                snprintf(ref_text, sizeof ref_text, "%s %.1f TFLOP/s, ours %.3fx%s", r.ref == 1 ? "SGEMM" : "DGEMM",
                         2 * steps / ref_us / 1e6, ref_us / us, same ? "" : " MISMATCH");
            }
            char shape[40];
            snprintf(shape, sizeof shape, "%zu x %zu x %zu", s.m, s.n, s.k);
            printf("%-22s %-18s | %8.1f us %9.2f | %9.2f %8.3f | %s\n", r.name, shape, us, steps / us / 1e6,
                   ceil / 1e12, steps / us / 1e6 / (ceil / 1e12), ref_text);
        }
    }
    // the variants: each beside the default shape of its semiring, in one run, its C compared bit
    // for bit with the default's (the same k order: the same bits)
    struct Variant {
        const char *name, *ceiling;
        MmFn fn, base;
        int kind;
    } variants[] = {
        { "pt_f32 w32x64", "plus_times f32", bm_pt_f32_w32x64_w, bm_matmul_plus_times_f32_w, FLOATS },
        { "mp_f32 w32x64", "min_plus f32", bm_mp_f32_w32x64_w, bm_matmul_min_plus_f32_w, FLOATS },
        { "mp_i32 w32x64", "min_plus i32 fast", bm_mp_i32_w32x64_w, bm_matmul_min_plus_i32_w, INTS },
        { "pt_f32 w64x32", "plus_times f32", bm_pt_f32_w64x32_w, bm_matmul_plus_times_f32_w, FLOATS },
        { "mp_f32 w64x32", "min_plus f32", bm_mp_f32_w64x32_w, bm_matmul_min_plus_f32_w, FLOATS },
        { "mp_i32 w64x32", "min_plus i32 fast", bm_mp_i32_w64x32_w, bm_matmul_min_plus_i32_w, INTS },
        { "pt_f32 async2", "plus_times f32", bm_pt_f32_async2_w, bm_matmul_plus_times_f32_w, FLOATS },
        { "mp_f32 async2", "min_plus f32", bm_mp_f32_async2_w, bm_matmul_min_plus_f32_w, FLOATS },
        { "mp_i32 async2", "min_plus i32 fast", bm_mp_i32_async2_w, bm_matmul_min_plus_i32_w, INTS },
        { "pt_f32 async2_w32x64", "plus_times f32", bm_pt_f32_async2_w32x64_w, bm_matmul_plus_times_f32_w, FLOATS },
        { "mp_f32 async2_w32x64", "min_plus f32", bm_mp_f32_async2_w32x64_w, bm_matmul_min_plus_f32_w, FLOATS },
        { "mp_i32 async2_w32x64", "min_plus i32 fast", bm_mp_i32_async2_w32x64_w, bm_matmul_min_plus_i32_w, INTS },
        { "pt_f32 k8_async3_w32x64", "plus_times f32", bm_pt_f32_k8_async3_w32x64_w, bm_matmul_plus_times_f32_w, FLOATS },
        { "mp_f32 k8_async3_w32x64", "min_plus f32", bm_mp_f32_k8_async3_w32x64_w, bm_matmul_min_plus_f32_w, FLOATS },
        { "mp_i32 k8_async3_w32x64", "min_plus i32 fast", bm_mp_i32_k8_async3_w32x64_w, bm_matmul_min_plus_i32_w, INTS },
        { "pt_f32 k8_async4_w32x64", "plus_times f32", bm_pt_f32_k8_async4_w32x64_w, bm_matmul_plus_times_f32_w, FLOATS },
        { "mp_f32 k8_async4_w32x64", "min_plus f32", bm_mp_f32_k8_async4_w32x64_w, bm_matmul_min_plus_f32_w, FLOATS },
        { "mp_i32 k8_async4_w32x64", "min_plus i32 fast", bm_mp_i32_k8_async4_w32x64_w, bm_matmul_min_plus_i32_w, INTS },
        { "pt_f32 b128x64_async3_w32x64", "plus_times f32", bm_pt_f32_b128x64_async3_w32x64_w, bm_matmul_plus_times_f32_w, FLOATS },
        { "mp_f32 b128x64_async3_w32x64", "min_plus f32", bm_mp_f32_b128x64_async3_w32x64_w, bm_matmul_min_plus_f32_w, FLOATS },
        { "mp_i32 b128x64_async3_w32x64", "min_plus i32 fast", bm_mp_i32_b128x64_async3_w32x64_w, bm_matmul_min_plus_i32_w, INTS },
    };
    printf("\n%-34s %-18s | %10s %9s | %8s | %s\n", "variant", "m x n x k", "time", "T steps/s", "of ceil",
           "against the default shape");
    const Shape vshapes[] = { { 1024, 1024, 1024 }, { 4096, 4096, 4096 }, { 64, 4096, 4096 } };
    for (const Variant &v : variants) {
        const double ceil = ceiling_rate(v.ceiling);
        const void *a = in[v.kind][0], *b = in[v.kind][1];
        for (const Shape &s : vshapes) {
            const double steps = (double)s.m * s.n * s.k;
            const double base_us = time_us([&] { CHECK(v.base(a, s.k, b, s.n, s.m, s.n, s.k, 0, ref, s.n, 0)); }, 3);
            const double us = time_us([&] { CHECK(v.fn(a, s.k, b, s.n, s.m, s.n, s.k, 0, c, s.n, 0)); }, 3);
            std::vector<uint32_t> x(s.m * s.n), y(s.m * s.n);
            CHECK(cudaMemcpy(x.data(), c, x.size() * 4, cudaMemcpyDeviceToHost));
            CHECK(cudaMemcpy(y.data(), ref, y.size() * 4, cudaMemcpyDeviceToHost));
            char shape[40];
            snprintf(shape, sizeof shape, "%zu x %zu x %zu", s.m, s.n, s.k);
            printf("%-34s %-18s | %8.1f us %9.2f | %8.3f | %.3fx (%.1f us)%s\n", v.name, shape, us, steps / us / 1e6,
                   steps / us / 1e6 / (ceil / 1e12), base_us / us, base_us, x == y ? "" : " MISMATCH");
        }
    }
    return 0;
}
