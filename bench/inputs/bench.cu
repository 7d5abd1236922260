// Operators of several inputs, side by side in one run: this project's dot product, squared
// distance and masked sum of two arrays against cuBLAS (cublasSdot, device pointer mode), CUB
// (DeviceReduce over a transform of a zip of the inputs: what a CUDA C++ user writes) and a device
// copy of the same bytes; the scan of affine maps (x[t] = a[t] x[t-1] + b[t]) against CUB's
// DeviceScan over the same zip.  Results checked against a double CPU fold (the reduces, within a
// float bound) and CUB (the scan's last element).  Medians of 7 runs of 10 calls.
#include <cub/cub.cuh>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/zip_iterator.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "../common.cuh"
#include "bi.h"

struct Mul {
    __host__ __device__ float operator()(const thrust::tuple<float, float> &t) const
    {
        return thrust::get<0>(t) * thrust::get<1>(t);
    }
};
struct Dist2 {
    __host__ __device__ float operator()(const thrust::tuple<float, float> &t) const
    {
        const float d = thrust::get<0>(t) - thrust::get<1>(t);
        return d * d;
    }
};
struct Masked {
    __host__ __device__ double operator()(const thrust::tuple<double, unsigned char> &t) const
    {
        return thrust::get<1>(t) ? thrust::get<0>(t) : 0.0;
    }
};
struct Lift {
    __host__ __device__ affine operator()(const thrust::tuple<float, float> &t) const
    {
        affine r;
        r.a = thrust::get<0>(t);
        r.b = thrust::get<1>(t);
        return r;
    }
};
struct Compose {
    __host__ __device__ affine operator()(const affine &a, const affine &b) const
    {
        affine r;
        r.a = b.a * a.a;
        r.b = fmaf(b.a, a.b, b.b);
        return r;
    }
};

// one of a generated function's shapes, timed beside the others: its name in the table, its
// workspace's size, the function and (the masked sum) how many bytes in its mask starts
template <class Fn> struct Variant {
    const char *name;
    size_t (*ws)(size_t);
    Fn fn;
    size_t off = 0;
};

// CUB's two-phase call: the temporary storage's size, then the call
template <class F> static void cub_call(F f)
{
    size_t bytes = 0;
    CHECK(f((void *)nullptr, bytes));
    CHECK(f(bench_workspace(bytes), bytes));
}

int main()
{
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("GPU %s; CUB %d.%d.%d; of copy: bytes read (and written) a second over a device copy's\n", prop.name,
           CUB_MAJOR_VERSION, CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION);
    const size_t MAX = (size_t)1 << 28;
    float *x, *y, *cp, *cs;
    double *v;
    unsigned char *mask;
    affine *scan_out;
    void *res;
    CHECK(cudaMalloc(&x, MAX * 4));
    CHECK(cudaMalloc(&y, MAX * 4));
    CHECK(cudaMalloc(&v, MAX * 8));
    CHECK(cudaMalloc(&mask, MAX));
    CHECK(cudaMalloc(&cp, MAX * 9)); // a copy's destination and source, as large as the largest input
    CHECK(cudaMalloc(&cs, MAX * 9));
    CHECK(cudaMemset(cs, 0, MAX * 9));
    CHECK(cudaMalloc(&scan_out, MAX * sizeof(affine)));
    CHECK(cudaMalloc(&res, 64));
    std::vector<float> hx(MAX), hy(MAX);
    std::vector<double> hv(MAX);
    std::vector<unsigned char> hm(MAX);
    {
        uint32_t s = 1;
        auto next = [&] { return (s = s * 1664525u + 1013904223u) >> 8; };
        for (size_t i = 0; i < MAX; ++i) {
            hx[i] = (float)next() / 16777216.0f - 0.5f;
            hy[i] = (float)next() / 16777216.0f - 0.5f;
            hv[i] = (double)next() / 16777216.0 - 0.5;
            hm[i] = (unsigned char)(next() & 1);
        }
        CHECK(cudaMemcpy(x, hx.data(), MAX * 4, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(y, hy.data(), MAX * 4, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(v, hv.data(), MAX * 8, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(mask, hm.data(), MAX, cudaMemcpyHostToDevice));
    }
    cublasHandle_t blas;
    if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS || cublasSetPointerMode(blas, CUBLAS_POINTER_MODE_DEVICE))
        return fprintf(stderr, "cublas\n"), 1;
    printf("%-7s %-6s | %9s %8s %7s | %9s %7s | %9s %7s | %s\n", "op", "n", "ours us", "GB/s", "of copy", "cuBLAS",
           "ours/it", "CUB", "ours/it", "check");
    for (int lg : { 20, 24, 28 }) {
        const size_t n = (size_t)1 << lg;
        for (int which = 0; which < 3; ++which) {
            const char *name = which == 0 ? "dot" : which == 1 ? "dist2" : "masked";
            const size_t bytes = which < 2 ? n * 8 : n * 9; // read
            const double copy_us =
                time_us([&] { CHECK(cudaMemcpyAsync(cp, cs, bytes, cudaMemcpyDeviceToDevice, 0)); }, 10, 7);
            size_t wb = which == 0   ? bi_reduce_dot_f32_workspace_bytes(n)
                        : which == 1 ? bi_reduce_dist2_f32_workspace_bytes(n)
                                     : bi_reduce_masked_f64_workspace_bytes(n);
            void *w = nullptr;
            CHECK(cudaMalloc(&w, wb ? wb : 1));
            CHECK(cudaMemset(w, 0, wb ? wb : 1));
            auto ours = [&] {
                CHECK(which == 0   ? bi_reduce_dot_f32(x, y, n, (float *)res, w, wb, 0)
                      : which == 1 ? bi_reduce_dist2_f32(x, y, n, (float *)res, w, wb, 0)
                                   : bi_reduce_masked_f64(v, mask, n, (double *)res, w, wb, 0));
            };
            const double us = time_us(ours, 10, 7);
            double got = 0;
            if (which < 2) {
                float g;
                CHECK(cudaMemcpy(&g, res, 4, cudaMemcpyDeviceToHost));
                got = g;
            } else {
                CHECK(cudaMemcpy(&got, res, 8, cudaMemcpyDeviceToHost));
            }
            double want = 0, mag = 0;
            for (size_t i = 0; i < n; ++i) {
                const double t = which == 0   ? (double)hx[i] * hy[i]
                                 : which == 1 ? ((double)hx[i] - hy[i]) * ((double)hx[i] - hy[i])
                                              : (hm[i] ? hv[i] : 0.0);
                want += t;
                mag += std::fabs(t);
            }
            const bool ok = std::fabs(got - want) <= (which < 2 ? 1e-5 : 1e-12) * mag + 1e-30;
            double blas_us = 0;
            if (which == 0)
                blas_us = time_us([&] { cublasSdot(blas, (int)n, x, 1, y, 1, (float *)res + 4); }, 10, 7);
            auto zip = thrust::make_zip_iterator(thrust::make_tuple(x, y));
            auto zipm = thrust::make_zip_iterator(thrust::make_tuple(v, mask));
            const double cub_us = time_us(
                [&] {
                    if (which == 0)
                        cub_call([&](void *t, size_t &b) {
                            return cub::DeviceReduce::Sum(t, b, thrust::make_transform_iterator(zip, Mul()),
                                                          (float *)res + 8, (long long)n);
                        });
                    else if (which == 1)
                        cub_call([&](void *t, size_t &b) {
                            return cub::DeviceReduce::Sum(t, b, thrust::make_transform_iterator(zip, Dist2()),
                                                          (float *)res + 8, (long long)n);
                        });
                    else
                        cub_call([&](void *t, size_t &b) {
                            return cub::DeviceReduce::Sum(t, b, thrust::make_transform_iterator(zipm, Masked()),
                                                          (double *)res + 4, (long long)n);
                        });
                },
                10, 7);
            char blas[32] = "", blas_ratio[32] = "";
            if (blas_us > 0) {
                snprintf(blas, sizeof blas, "%9.1f", blas_us);
                snprintf(blas_ratio, sizeof blas_ratio, "%7.2f", blas_us / us);
            }
            printf("%-7s 2^%-4d | %9.1f %8.1f %7.3f | %9s %7s | %9.1f %7.2f | %s\n", name, lg, us, bytes / us / 1e3,
                   copy_us / (2 * us), blas, blas_ratio, cub_us, cub_us / us, ok ? "ok" : "MISMATCH");
            CHECK(cudaFree(w));
        }
        // the recurrence: reads a and b, writes the maps (8 bytes an element)
        {
            const size_t bytes = n * 16;
            const double copy_us =
                time_us([&] { CHECK(cudaMemcpyAsync(cp, cs, n * 8, cudaMemcpyDeviceToDevice, 0)); }, 10, 7);
            const size_t wb = bi_scan_recur_f32_workspace_bytes(n);
            void *w = nullptr;
            CHECK(cudaMalloc(&w, wb ? wb : 1));
            CHECK(cudaMemset(w, 0, wb ? wb : 1));
            const double us = time_us([&] { CHECK(bi_scan_recur_f32(x, y, n, scan_out, w, wb, 0)); }, 10, 7);
            affine got, want;
            CHECK(cudaMemcpy(&got, scan_out + n - 1, sizeof got, cudaMemcpyDeviceToHost));
            auto zip = thrust::make_zip_iterator(thrust::make_tuple(x, y));
            affine *cub_out = (affine *)cp;
            const double cub_us = time_us(
                [&] {
                    cub_call([&](void *t, size_t &b) {
                        return cub::DeviceScan::InclusiveScan(t, b, thrust::make_transform_iterator(zip, Lift()),
                                                              cub_out, Compose(), (long long)n);
                    });
                },
                10, 7);
            CHECK(cudaMemcpy(&want, cub_out + n - 1, sizeof want, cudaMemcpyDeviceToHost));
            const bool ok = std::fabs(got.a - want.a) <= 1e-3f * std::fabs(want.a) + 1e-30f &&
                            std::fabs(got.b - want.b) <= 1e-3f * (std::fabs(want.b) + 1.0f);
            printf("%-7s 2^%-4d | %9.1f %8.1f %7.3f | %9s %7s | %9.1f %7.2f | %s\n", "recur", lg, us, bytes / us / 1e3,
                   copy_us / us, "", "", cub_us, cub_us / us, ok ? "ok" : "MISMATCH");
            CHECK(cudaFree(w));
        }
    }
    // the recurrence's scan in other shapes, at 2^28 (8 and 16 items a thread also at 2^20 and 2^24)
    {
        typedef cudaError_t (*ScanFn)(const float *, const float *, size_t, affine *, void *, size_t, cudaStream_t);
        const Variant<ScanFn> variants[] = {
            { "t16 (default)", bi_scan_recur_f32_workspace_bytes, bi_scan_recur_f32 },
            { "t4", bi_recur_t4_workspace_bytes, bi_recur_t4 },
            { "t16", bi_recur_t16_workspace_bytes, bi_recur_t16 },
            { "t8", bi_recur_t8_workspace_bytes, bi_recur_t8 },
            { "t8, 4 blocks/SM", bi_recur_t8_b4_workspace_bytes, bi_recur_t8_b4 },
            { "block 128", bi_recur_b128_workspace_bytes, bi_recur_b128 },
            { "t12", bi_recur_t12_workspace_bytes, bi_recur_t12 },
            { "t20", bi_recur_t20_workspace_bytes, bi_recur_t20 },
            { "t24", bi_recur_t24_workspace_bytes, bi_recur_t24 },
            { "t16, 3 blocks/SM", bi_recur_t16_b3_workspace_bytes, bi_recur_t16_b3 },
            { "t16, 5 blocks/SM", bi_recur_t16_b5_workspace_bytes, bi_recur_t16_b5 },
            { "t16, block 128", bi_recur_t16_b128_workspace_bytes, bi_recur_t16_b128 },
        };
        for (int lg : { 20, 24, 28 })
        for (const auto &v : variants) {
            if (lg < 28 && v.fn != bi_recur_t8 && v.fn != bi_recur_t16)
                continue;
            const size_t n = (size_t)1 << lg;
            const double copy_us =
                time_us([&] { CHECK(cudaMemcpyAsync(cp, cs, n * 8, cudaMemcpyDeviceToDevice, 0)); }, 10, 7);
            const size_t wb = v.ws(n);
            void *w = nullptr;
            CHECK(cudaMalloc(&w, wb ? wb : 1));
            CHECK(cudaMemset(w, 0, wb ? wb : 1));
            const double us = time_us([&] { CHECK(v.fn(x, y, n, scan_out, w, wb, 0)); }, 10, 7);
            printf("recur %-16s 2^%-2d | %9.1f us %8.1f GB/s %7.3f of copy\n", v.name, lg, us, n * 16 / us / 1e3,
                   copy_us / us);
            CHECK(cudaFree(w));
        }
    }
    // the prefix sums of x[i] y[i] in three shapes, at 2^28
    {
        typedef cudaError_t (*ScanFn)(const float *, const float *, size_t, float *, void *, size_t, cudaStream_t);
        const Variant<ScanFn> variants[] = {
            { "t8", bi_dotscan_t8_workspace_bytes, bi_dotscan_t8 },
            { "t16", bi_dotscan_t16_workspace_bytes, bi_dotscan_t16 },
            { "t32", bi_dotscan_t32_workspace_bytes, bi_dotscan_t32 },
        };
        const size_t n = MAX;
        const double copy_us =
            time_us([&] { CHECK(cudaMemcpyAsync(cp, cs, n * 6, cudaMemcpyDeviceToDevice, 0)); }, 10, 7);
        double want = 0, mag = 0;
        for (size_t i = 0; i < n; ++i) {
            want += (double)hx[i] * hy[i];
            mag += std::fabs((double)hx[i] * hy[i]);
        }
        for (const auto &var : variants) {
            const size_t wb = var.ws(n);
            void *w = nullptr;
            CHECK(cudaMalloc(&w, wb ? wb : 1));
            CHECK(cudaMemset(w, 0, wb ? wb : 1));
            float *o = (float *)scan_out;
            const double us = time_us([&] { CHECK(var.fn(x, y, n, o, w, wb, 0)); }, 10, 7);
            float got;
            CHECK(cudaMemcpy(&got, o + n - 1, 4, cudaMemcpyDeviceToHost));
            printf("dotscan %-14s 2^28 | %9.1f us %8.1f GB/s %7.3f of copy | %s\n", var.name, us, n * 12 / us / 1e3,
                   copy_us / us, std::fabs(got - want) <= 1e-5 * mag ? "ok" : "MISMATCH");
            CHECK(cudaFree(w));
        }
    }
    // the masked sum in other shapes, at 2^28, beside CUB
    {
        typedef cudaError_t (*ReduceFn)(const double *, const uint8_t *, size_t, double *, void *, size_t,
                                        cudaStream_t);
        // the mask one byte in (and n one less): off its 4-byte words, the values' 16-byte words load
        // beside a byte of the mask at a time (the path of every full tile before runs)
        const Variant<ReduceFn> variants[] = {
            { "t8 (default)", bi_reduce_masked_f64_workspace_bytes, bi_reduce_masked_f64, 0 },
            { "t8, mask off", bi_reduce_masked_f64_workspace_bytes, bi_reduce_masked_f64, 1 },
            { "t4", bi_masked_t4_workspace_bytes, bi_masked_t4, 0 },
            { "t12", bi_masked_t12_workspace_bytes, bi_masked_t12, 0 },
            { "t16", bi_masked_t16_workspace_bytes, bi_masked_t16, 0 },
        };
        for (const auto &var : variants) {
            const size_t n = MAX - var.off;
            const unsigned char *mk = mask + var.off;
            auto zipm = thrust::make_zip_iterator(thrust::make_tuple(v, mk));
            const size_t wb = var.ws(n);
            void *w = nullptr;
            CHECK(cudaMalloc(&w, wb ? wb : 1));
            CHECK(cudaMemset(w, 0, wb ? wb : 1));
            const double us = time_us([&] { CHECK(var.fn(v, mk, n, (double *)res, w, wb, 0)); }, 10, 7);
            const double cub_us = time_us(
                [&] {
                    cub_call([&](void *t, size_t &b) {
                        return cub::DeviceReduce::Sum(t, b, thrust::make_transform_iterator(zipm, Masked()),
                                                      (double *)res + 4, (long long)n);
                    });
                },
                10, 7);
            double got = 0, want = 0, mag = 0;
            CHECK(cudaMemcpy(&got, res, 8, cudaMemcpyDeviceToHost));
            for (size_t i = 0; i < n; ++i) {
                want += hm[i + var.off] ? hv[i] : 0.0;
                mag += hm[i + var.off] ? std::fabs(hv[i]) : 0.0;
            }
            printf("masked %-15s 2^28 | %9.1f us  CUB %9.1f us  %5.3fx CUB | %s\n", var.name, us, cub_us, cub_us / us,
                   std::fabs(got - want) <= 1e-12 * mag + 1e-30 ? "ok" : "MISMATCH");
            CHECK(cudaFree(w));
        }
    }
    cublasDestroy(blas);
    return 0;
}
