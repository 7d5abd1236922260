// Transpose benchmark: the generated transposes against a device-to-device copy of the same bytes
// (the bound), cuBLAS geam (S, D, Z: 4, 8, 16 bytes) and the seeds' naive kernel (generated, as
// their tiled and padded ones), side by side in one run.  Each row is checked byte for byte against cuBLAS or the naive kernel.
//   ./transpose_bench        prints a table; times are the median of 7 runs of 10 calls
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "../common.cuh"
#include "tb.h"

static void row(const char *name, size_t rows, size_t cols, size_t batch, size_t E, double us, double copy_us,
                double ref_us, const char *ref, bool same)
{
    const double bytes = 2.0 * rows * cols * batch * E;
    char ref_text[64] = "        -       -";
    if (ref_us > 0)
        snprintf(ref_text, sizeof ref_text, "%9.1f %7.3f", bytes / ref_us / 1e3, ref_us / us);
    printf("%-14s %6zu x %-6zu x %-6zu %3zuB | %9.1f us %8.1f GB/s | copy %8.1f GB/s %6.3f | %-7s %s | %s\n", name,
           rows, cols, batch, E, us, bytes / us / 1e3, bytes / copy_us / 1e3, copy_us / us, ref, ref_text,
           same ? "ok" : "MISMATCH");
}

typedef cudaError_t (*Fn)(const void *, size_t, size_t, size_t, size_t, size_t, void *, size_t, size_t, cudaStream_t);
#define WRAP(name, T)                                                                                                  \
    static cudaError_t name##_w(const void *i, size_t ip, size_t is, size_t r, size_t c, size_t b, void *o, size_t op, \
                                size_t os, cudaStream_t s)                                                             \
    {                                                                                                                  \
        return name((const T *)i, ip, is, r, c, b, (T *)o, op, os, NULL, 0, s);                                        \
    }
WRAP(tb_transpose_u8, uint8_t)
WRAP(tb_transpose_i16, int16_t)
WRAP(tb_transpose_f32, float)
WRAP(tb_transpose_f64, double)
WRAP(tb_transpose_rgb, rgb)
WRAP(tb_transpose_c128, c128)
WRAP(tb_f32_tiled, float)
WRAP(tb_f32_swizzle, float)
WRAP(tb_f32_t32_r4, float)
WRAP(tb_f32_t64_r8, float)
WRAP(tb_f32_t32_r8, float)
WRAP(tb_c128_t32_r4, c128)
WRAP(tb_c128_t32_r16, c128)
WRAP(tb_c128_t16_r8, c128)
WRAP(tb_f32_naive, float)
WRAP(tb_u8_naive, uint8_t)
WRAP(tb_transpose_conj, c64)
WRAP(tb_transpose_rgb8, rgb8)
WRAP(tb_rgb8_t64_r8, rgb8)
WRAP(tb_rgb8_t64_r16, rgb8)
WRAP(tb_rgb8_t32_r4, rgb8)

int main()
{
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("GPU %s; rows: name rows x cols x batch, element size | ours | a device copy of the same bytes "
           "(GB/s, ours / copy) | reference (GB/s, ours / reference)\n",
           prop.name);
    cublasHandle_t h;
    cublasCreate(&h);
    const size_t MAXB = (size_t)8192 * 8192 * 4 * 4; // the largest case: 65536 64 x 64 floats
    unsigned char *in, *out, *ref;
    CHECK(cudaMalloc(&in, MAXB));
    CHECK(cudaMalloc(&out, MAXB));
    CHECK(cudaMalloc(&ref, MAXB));
    {
        std::vector<unsigned char> h_in(MAXB);
        uint32_t x = 12345;
        for (auto &b : h_in)
            b = (unsigned char)((x = x * 1664525u + 1013904223u) >> 24);
        CHECK(cudaMemcpy(in, h_in.data(), MAXB, cudaMemcpyHostToDevice));
    }
    struct Case {
        const char *name;
        Fn fn;
        size_t rows, cols, batch, E;
        int ref; // 0 none, 1 Sgeam, 2 Dgeam, 3 Zgeam, 4 naive (f32), 5 Cgeam conjugate-transposing
    } cases[] = {
        { "f32", tb_transpose_f32_w, 8192, 8192, 1, 4, 1 },
        { "f32 swizzle", tb_f32_swizzle_w, 8192, 8192, 1, 4, 1 },
        { "f32 tiled", tb_f32_tiled_w, 8192, 8192, 1, 4, 1 },
        { "f32 t32 r4", tb_f32_t32_r4_w, 8192, 8192, 1, 4, 1 },
        { "f32 t64 r8", tb_f32_t64_r8_w, 8192, 8192, 1, 4, 1 },
        { "f32 t32 r8", tb_f32_t32_r8_w, 8192, 8192, 1, 4, 1 },
        { "f32", tb_transpose_f32_w, 8191, 8193, 1, 4, 1 },
        { "f32 tiled", tb_f32_tiled_w, 8191, 8193, 1, 4, 1 },
        { "f32 t32 r4", tb_f32_t32_r4_w, 8191, 8193, 1, 4, 1 },
        { "f32 t64 r8", tb_f32_t64_r8_w, 8191, 8193, 1, 4, 1 },
        { "f32 t32 r8", tb_f32_t32_r8_w, 8191, 8193, 1, 4, 1 },
        { "f32", tb_transpose_f32_w, 8192, 8192 + 32, 1, 4, 1 },
        // the seeds' ladder (000, 001) at their size: naive, tiled, tiled and padded, then ours
        { "f32 naive", tb_f32_naive_w, 4000, 4000, 1, 4, 0 },
        { "f32 tiled", tb_f32_tiled_w, 4000, 4000, 1, 4, 4 },
        { "f32 t32 r8", tb_f32_t32_r8_w, 4000, 4000, 1, 4, 4 },
        { "f32", tb_transpose_f32_w, 4000, 4000, 1, 4, 4 },
        { "f32 batched", tb_transpose_f32_w, 64, 64, 65536, 4, 0 },
        { "f32 t32 r4 batched", tb_f32_t32_r4_w, 64, 64, 65536, 4, 0 },
        { "f32 t32 r8 batched", tb_f32_t32_r8_w, 64, 64, 65536, 4, 0 },
        { "f64", tb_transpose_f64_w, 8192, 4096, 1, 8, 2 },
        { "f64", tb_transpose_f64_w, 8192, 8192, 1, 8, 2 },
        { "c128", tb_transpose_c128_w, 4096, 4096, 1, 16, 3 },
        { "c64 conj", tb_transpose_conj_w, 8192, 4096, 1, 8, 5 },
        { "c128", tb_transpose_c128_w, 8192, 4096, 1, 16, 3 },
        { "c128 t32 r4", tb_c128_t32_r4_w, 4096, 4096, 1, 16, 3 },
        { "c128 t32 r16", tb_c128_t32_r16_w, 4096, 4096, 1, 16, 3 },
        { "c128 t16 r8", tb_c128_t16_r8_w, 4096, 4096, 1, 16, 3 },
        { "rgb (12 B)", tb_transpose_rgb_w, 8192, 8192, 1, 12, 0 },
        { "rgb8 (3 B)", tb_transpose_rgb8_w, 8192, 8192, 1, 3, 0 },
        { "rgb8 (3 B)", tb_transpose_rgb8_w, 8192, 8196, 1, 3, 0 },
        { "rgb8 t64 r8", tb_rgb8_t64_r8_w, 8192, 8192, 1, 3, 0 },
        { "rgb8 t64 r16", tb_rgb8_t64_r16_w, 8192, 8192, 1, 3, 0 },
        { "rgb8 t32 r4", tb_rgb8_t32_r4_w, 8192, 8192, 1, 3, 0 },
        { "u8", tb_transpose_u8_w, 8192, 8192, 1, 1, 0 },
        { "u8 naive", tb_u8_naive_w, 8192, 8192, 1, 1, 0 },
        { "u8", tb_transpose_u8_w, 16384, 16384, 1, 1, 0 },
        { "i16", tb_transpose_i16_w, 8192, 8192, 1, 2, 0 },
        { "i16", tb_transpose_i16_w, 16384, 8192, 1, 2, 0 },
    };
    for (const Case &c : cases) {
        const size_t bytes = c.rows * c.cols * c.batch * c.E;
        if (bytes > MAXB)
            continue;
        auto ours = [&] {
            CHECK(c.fn(in, c.cols, c.rows * c.cols, c.rows, c.cols, c.batch, out, c.rows, c.rows * c.cols, 0));
        };
        const double us = time_us(ours, 10, 7);
        const double copy_us =
            time_us([&] { CHECK(cudaMemcpyAsync(ref, in, bytes, cudaMemcpyDeviceToDevice, 0)); }, 10, 7);
        double ref_us = 0;
        const char *ref_name = "-";
        bool same = true;
        const int m = (int)c.cols, n = (int)c.rows; // row-major rows x cols is column-major cols x rows
        if (c.ref == 1) {
            const float one = 1, zero = 0;
            ref_name = "Sgeam";
            ref_us = time_us(
                [&] {
                    cublasSgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, n, m, &one, (const float *)in, m, &zero,
                                (const float *)ref, n, (float *)ref, n);
                },
                10, 7);
        } else if (c.ref == 2) {
            const double one = 1, zero = 0;
            ref_name = "Dgeam";
            ref_us = time_us(
                [&] {
                    cublasDgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, n, m, &one, (const double *)in, m, &zero,
                                (const double *)ref, n, (double *)ref, n);
                },
                10, 7);
        } else if (c.ref == 3) {
            const cuDoubleComplex one = { 1, 0 }, zero = { 0, 0 };
            ref_name = "Zgeam";
            ref_us = time_us(
                [&] {
                    cublasZgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, n, m, &one, (const cuDoubleComplex *)in, m, &zero,
                                (const cuDoubleComplex *)ref, n, (cuDoubleComplex *)ref, n);
                },
                10, 7);
        } else if (c.ref == 5) {
            const cuComplex one = { 1, 0 }, zero = { 0, 0 };
            ref_name = "Cgeam^H";
            ref_us = time_us(
                [&] {
                    cublasCgeam(h, CUBLAS_OP_C, CUBLAS_OP_N, n, m, &one, (const cuComplex *)in, m, &zero,
                                (const cuComplex *)ref, n, (cuComplex *)ref, n);
                },
                10, 7);
        } else if (c.ref == 4) {
            ref_name = "naive";
            ref_us = time_us(
                [&] {
                    CHECK(tb_f32_naive((const float *)in, c.cols, 0, c.rows, c.cols, 1, (float *)ref, c.rows, 0, NULL,
                                       0, 0));
                },
                10, 7);
        }
        if (c.ref) {
            // geam computes 1 * x + 0 * x: NaN payloads and -0 may differ from a move, so compare
            // where the input is an ordinary number; the naive kernel moves bytes as we do
            std::vector<unsigned char> a(bytes), b(bytes);
            ours();
            CHECK(cudaMemcpy(a.data(), out, bytes, cudaMemcpyDeviceToHost));
            CHECK(cudaMemcpy(b.data(), ref, bytes, cudaMemcpyDeviceToHost));
            size_t bad = 0;
            // an element is compared only where every part of it is an ordinary number
            for (size_t i = 0; i < bytes; i += c.E)
                if (memcmp(&a[i], &b[i], c.E)) {
                    bool ordinary = true;
                    const size_t part = c.E == 4 || c.ref == 5 ? 4 : 8; // a float or a double
                    for (size_t p = 0; p < c.E; p += part) {
                        if (part == 4) {
                            float f;
                            memcpy(&f, &a[i + p], 4);
                            ordinary = ordinary && std::isfinite(f) && f != 0;
                        } else {
                            double d;
                            memcpy(&d, &a[i + p], 8);
                            ordinary = ordinary && std::isfinite(d) && d != 0;
                        }
                    }
                    bad += ordinary;
                }
            same = bad == 0;
        }
        row(c.name, c.rows, c.cols, c.batch, c.E, us, copy_us, ref_us, ref_name, same);
    }
    cublasDestroy(h);
    return 0;
}
