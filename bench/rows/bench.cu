// Reduce along rows, side by side in one run: this project's row folds against CUB's
// DeviceSegmentedReduce (offsets at each row's start; the machine's CUB) and against a device copy
// of the same bytes, over the issue's shapes (f32 row sums: 2^24 x 16, 2^22 x 64, 64 x 2^22,
// 65536 x 4096), plus the maximum and a 2x2 matrix product along rows; then scans along rows
// (cumulative sums, inclusive and exclusive, and the 2x2 matrix product's prefixes) and log-sum-exp
// along rows (softmax statistics, one user operator).  Results checked against CUB (sums within a
// float bound, maxima exactly) or the host.  Prints a table; medians of 7 runs of 10 calls.
#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "../common.cuh"
#include "br.h"

struct Shape {
    size_t rows, cols;
};

int main()
{
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("GPU %s; CUB %d.%d.%d; of copy: our bytes a second over a device-to-device copy's (its reads and writes)\n",
           prop.name, CUB_MAJOR_VERSION, CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION);
    const Shape shapes[] = { { 1u << 24, 16 }, { 1u << 22, 64 }, { 64, 1u << 22 }, { 65536, 4096 }, { 1024, 1024 } };
    const size_t MAX = (size_t)1 << 28;
    float *in, *copy, *out, *ref;
    mat2u *mout;
    int *offsets;
    CHECK(cudaMalloc(&in, MAX * 4));
    CHECK(cudaMalloc(&copy, MAX * 4));
    CHECK(cudaMalloc(&out, (1u << 24) * 4));
    CHECK(cudaMalloc(&ref, (1u << 24) * 4));
    CHECK(cudaMalloc(&offsets, ((1u << 24) + 1) * 4));
    CHECK(cudaMalloc(&mout, (1u << 24) * sizeof(mat2u)));
    {
        std::vector<float> h(MAX);
        uint32_t x = 1;
        for (auto &v : h)
            v = (float)((x = x * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
        CHECK(cudaMemcpy(in, h.data(), MAX * 4, cudaMemcpyHostToDevice));
    }
    printf("%-9s %-18s | %10s %9s %8s | %10s %8s | %s\n", "op", "rows x cols", "ours", "GB/s", "of copy", "CUB",
           "ours/CUB", "check");
    for (const Shape &s : shapes) {
        const size_t n = s.rows * s.cols;
        std::vector<int> off(s.rows + 1);
        for (size_t r = 0; r <= s.rows; ++r)
            off[r] = (int)(r * s.cols);
        CHECK(cudaMemcpy(offsets, off.data(), off.size() * 4, cudaMemcpyHostToDevice));
        const double copy_us =
            time_us([&] { CHECK(cudaMemcpyAsync(copy, in, n * 4, cudaMemcpyDeviceToDevice, 0)); }, 10, 7);
        for (int which = 0; which < 2; ++which) {
            const bool sum = which == 0;
            const size_t wb = sum ? br_rows_reduce_sum_f32_workspace_bytes(s.rows, s.cols)
                                  : br_rows_reduce_max_f32_workspace_bytes(s.rows, s.cols);
            void *w = bench_workspace(wb);
            auto ours = [&] {
                CHECK(sum ? br_rows_reduce_sum_f32(in, s.rows, s.cols, s.cols, out, w, wb, 0)
                          : br_rows_reduce_max_f32(in, s.rows, s.cols, s.cols, out, w, wb, 0));
            };
            size_t cub_bytes = 0;
            if (sum)
                cub::DeviceSegmentedReduce::Sum(nullptr, cub_bytes, in, ref, (int)s.rows, offsets, offsets + 1);
            else
                cub::DeviceSegmentedReduce::Max(nullptr, cub_bytes, in, ref, (int)s.rows, offsets, offsets + 1);
            void *cw = bench_workspace(cub_bytes > wb ? cub_bytes : wb);
            w = cw; // one buffer for both (bench_workspace may move it)
            auto theirs = [&] {
                size_t b = cub_bytes;
                if (sum)
                    CHECK(cub::DeviceSegmentedReduce::Sum(cw, b, in, ref, (int)s.rows, offsets, offsets + 1));
                else
                    CHECK(cub::DeviceSegmentedReduce::Max(cw, b, in, ref, (int)s.rows, offsets, offsets + 1));
            };
            const double us = time_us(ours, 10, 7), cub_us = time_us(theirs, 10, 7);
            ours();
            theirs();
            CHECK(cudaDeviceSynchronize());
            std::vector<float> a(s.rows), b(s.rows);
            CHECK(cudaMemcpy(a.data(), out, s.rows * 4, cudaMemcpyDeviceToHost));
            CHECK(cudaMemcpy(b.data(), ref, s.rows * 4, cudaMemcpyDeviceToHost));
            size_t bad = 0;
            for (size_t r = 0; r < s.rows; ++r)
                bad += sum ? std::fabs(a[r] - b[r]) > 1e-5f * (float)s.cols + 1e-5f : a[r] != b[r];
            char shape[40];
            snprintf(shape, sizeof shape, "%zu x %zu", s.rows, s.cols);
            printf("%-9s %-18s | %8.1f us %9.1f %8.3f | %8.1f us %8.3f | %s\n", sum ? "sum f32" : "max f32", shape, us,
                   n * 4 / us / 1e3, copy_us / (2 * us), cub_us, cub_us / us, bad ? "MISMATCH" : "same");
        }
    }
    // down columns: f32 sums (checked against a double fold on the host for one shape) and the
    // 2x2 matrix product (a quarter of the rows)
    const Shape col_shapes[] = { { 1u << 22, 64 }, { 1u << 24, 16 }, { 65536, 4096 }, { 64, 1u << 22 } };
    std::vector<float> host_in;
    for (const Shape &s : col_shapes) {
        const size_t n = s.rows * s.cols;
        const double copy_us =
            time_us([&] { CHECK(cudaMemcpyAsync(copy, in, n * 4, cudaMemcpyDeviceToDevice, 0)); }, 10, 7);
        const size_t wb = br_cols_reduce_sum_f32_workspace_bytes(s.rows, s.cols);
        void *w = bench_workspace(wb);
        const double us =
            time_us([&] { CHECK(br_cols_reduce_sum_f32(in, s.rows, s.cols, s.cols, out, w, wb, 0)); }, 10, 7);
        const char *check = "";
        if (s.cols == 64) {
            host_in.resize(n);
            CHECK(cudaMemcpy(host_in.data(), in, n * 4, cudaMemcpyDeviceToHost));
            std::vector<double> want(s.cols, 0.0);
            for (size_t r = 0; r < s.rows; ++r)
                for (size_t c = 0; c < s.cols; ++c)
                    want[c] += host_in[r * s.cols + c];
            std::vector<float> got(s.cols);
            CHECK(cudaMemcpy(got.data(), out, s.cols * 4, cudaMemcpyDeviceToHost));
            size_t bad = 0;
            for (size_t c = 0; c < s.cols; ++c)
                bad += std::fabs(got[c] - want[c]) > 1e-3 * std::sqrt((double)s.rows) + 1e-2;
            check = bad ? "MISMATCH" : "same as the host";
        }
        char shape[40];
        snprintf(shape, sizeof shape, "%zu x %zu", s.rows, s.cols);
        printf("%-9s %-18s | %8.1f us %9.1f %8.3f | %10s %8s | %s\n", "colsum", shape, us, n * 4 / us / 1e3,
               copy_us / (2 * us), "", "", check);
        const Shape q = { s.rows >= 64 * 4 ? s.rows / 4 : s.rows, s.rows >= 64 * 4 ? s.cols : s.cols / 4 };
        const size_t mw = br_cols_reduce_mat2mul_mat2u_workspace_bytes(q.rows, q.cols);
        void *m_w = bench_workspace(mw);
        const double m_us = time_us(
            [&] { CHECK(br_cols_reduce_mat2mul_mat2u((const mat2u *)in, q.rows, q.cols, q.cols, mout, m_w, mw, 0)); },
            10, 7);
        snprintf(shape, sizeof shape, "%zu x %zu", q.rows, q.cols);
        printf("%-9s %-18s | %8.1f us %9.1f %8.3f | %10s %8s |\n", "colmat2", shape, m_us,
               q.rows * q.cols * sizeof(mat2u) / m_us / 1e3, copy_us / (2 * m_us), "", "");
    }
    // a non-commutative product of 2x2 matrices along rows (no CUB row: the operator is ours), a
    // quarter of the rows (16-byte elements: the same bytes as the float rows above)
    for (const Shape &s0 : shapes) {
        const Shape s = { s0.rows >= 64 ? s0.rows / 4 : s0.rows, s0.rows >= 64 ? s0.cols : s0.cols / 4 };
        const size_t n = s.rows * s.cols;
        const size_t wb = br_rows_reduce_mat2mul_mat2u_workspace_bytes(s.rows, s.cols);
        void *w = bench_workspace(wb);
        const mat2u *m = (const mat2u *)in;
        const double us =
            time_us([&] { CHECK(br_rows_reduce_mat2mul_mat2u(m, s.rows, s.cols, s.cols, mout, w, wb, 0)); }, 10, 7);
        const double copy_us =
            time_us([&] { CHECK(cudaMemcpyAsync(copy, in, n * sizeof(mat2u), cudaMemcpyDeviceToDevice, 0)); }, 10, 7);
        char shape[40];
        snprintf(shape, sizeof shape, "%zu x %zu", s.rows, s.cols);
        printf("%-9s %-18s | %8.1f us %9.1f %8.3f | %10s %8s |\n", "mat2mul", shape, us, n * sizeof(mat2u) / us / 1e3,
               copy_us / (2 * us), "", "");
    }
    // log-sum-exp along rows: the softmax statistics (m, s) of each row in one pass (log-sum-exp is
    // m + log(s)), checked against a double CPU two-pass on 8 rows
    for (const Shape &s : shapes) {
        const size_t n = s.rows * s.cols;
        const size_t wb = br_rows_reduce_softmax_stats_f32_workspace_bytes(s.rows, s.cols);
        void *w = bench_workspace(wb);
        lse *stats = (lse *)mout;
        const double us = time_us(
            [&] { CHECK(br_rows_reduce_softmax_stats_f32(in, s.rows, s.cols, s.cols, stats, w, wb, 0)); }, 10, 7);
        const double copy_us =
            time_us([&] { CHECK(cudaMemcpyAsync(copy, in, n * 4, cudaMemcpyDeviceToDevice, 0)); }, 10, 7);
        std::vector<float> row(s.cols);
        size_t bad = 0;
        for (size_t r = 0; r < s.rows; r += (s.rows + 7) / 8) {
            lse got;
            CHECK(cudaMemcpy(row.data(), in + r * s.cols, s.cols * 4, cudaMemcpyDeviceToHost));
            CHECK(cudaMemcpy(&got, stats + r, sizeof got, cudaMemcpyDeviceToHost));
            double m = -INFINITY, sum = 0;
            for (float v : row)
                m = v > m ? v : m;
            for (float v : row)
                sum += std::exp((double)v - m);
            bad += std::fabs((got.m + std::log((double)got.s)) - (m + std::log(sum))) > 1e-5 * (1 + std::fabs(m));
        }
        char shape[40];
        snprintf(shape, sizeof shape, "%zu x %zu", s.rows, s.cols);
        printf("%-9s %-18s | %8.1f us %9.1f %8.3f | %10s %8s | %s\n", "logsumexp", shape, us, n * 4 / us / 1e3,
               copy_us / (2 * us), "", "", bad ? "MISMATCH" : "same as the host");
    }
    // scans along rows: cumulative f32 sums (inclusive and exclusive) on the issue's shapes, and the
    // 2x2 matrix product's prefixes (a quarter of the rows); of copy: the same bytes read and
    // written.  The inclusive sums of one shape checked against a double scan on the host.
    const Shape scan_shapes[] = {
        { 1u << 22, 64 }, { 65536, 4096 }, { 64, 1u << 22 }, { 1u << 24, 16 }, { 1024, 1024 }
    };
    for (const Shape &s : scan_shapes) {
        const size_t n = s.rows * s.cols;
        const double copy_us =
            time_us([&] { CHECK(cudaMemcpyAsync(copy, in, n * 4, cudaMemcpyDeviceToDevice, 0)); }, 10, 7);
        char shape[40];
        snprintf(shape, sizeof shape, "%zu x %zu", s.rows, s.cols);
        for (int excl = 0; excl < 2; ++excl) {
            const size_t wb = excl ? br_rows_exscan_sum_f32_workspace_bytes(s.rows, s.cols)
                                   : br_rows_scan_sum_f32_workspace_bytes(s.rows, s.cols);
            void *w = bench_workspace(wb);
            const double us = time_us(
                [&] {
                    CHECK(excl ? br_rows_exscan_sum_f32(in, s.rows, s.cols, s.cols, copy, s.cols, w, wb, 0)
                               : br_rows_scan_sum_f32(in, s.rows, s.cols, s.cols, copy, s.cols, w, wb, 0));
                },
                10, 7);
            const char *check = "";
            if (!excl && s.cols == 64) {
                host_in.resize(n);
                std::vector<float> got(n);
                CHECK(cudaMemcpy(host_in.data(), in, n * 4, cudaMemcpyDeviceToHost));
                CHECK(cudaMemcpy(got.data(), copy, n * 4, cudaMemcpyDeviceToHost));
                size_t bad = 0;
                for (size_t r = 0; r < s.rows; ++r) {
                    double acc = 0;
                    for (size_t c = 0; c < s.cols; ++c) {
                        acc += host_in[r * s.cols + c];
                        bad += std::fabs(got[r * s.cols + c] - acc) > 1e-5 * (c + 1) + 1e-5;
                    }
                }
                check = bad ? "MISMATCH" : "same as the host";
            }
            printf("%-9s %-18s | %8.1f us %9.1f %8.3f | %10s %8s | %s\n", excl ? "exscan" : "cumsum", shape, us,
                   2.0 * n * 4 / us / 1e3, copy_us / us, "", "", check);
        }
        const Shape q = { s.rows >= 64 * 4 ? s.rows / 4 : s.rows, s.rows >= 64 * 4 ? s.cols : s.cols / 4 };
        mat2u *mo = (mat2u *)copy;
        const size_t mw = br_rows_scan_mat2mul_mat2u_workspace_bytes(q.rows, q.cols);
        void *m_w = bench_workspace(mw);
        const double m_us = time_us(
            [&] {
                CHECK(br_rows_scan_mat2mul_mat2u((const mat2u *)in, q.rows, q.cols, q.cols, mo, q.cols, m_w, mw, 0));
            },
            10, 7);
        snprintf(shape, sizeof shape, "%zu x %zu", q.rows, q.cols);
        printf("%-9s %-18s | %8.1f us %9.1f %8.3f | %10s %8s |\n", "scanmat2", shape, m_us,
               2.0 * q.rows * q.cols * sizeof(mat2u) / m_us / 1e3, copy_us / m_us, "", "");
    }
    return 0;
}
