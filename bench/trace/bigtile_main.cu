// bench/trace/bigtile.sh: i32 inclusive scans of larger resident tiles, their stage in dynamic shared
// memory (bt_b512t36, _t44, _t52: 72, 88 and 104 KB a tile, 3, 2 and 2 an SM), beside the default
// 256 x 36 (36 KB, 6 an SM), CUB and a device copy of the same bytes, cold (each call on the next
// slice of a pool 16x the input at 2^24).  Every result is compared with the CPU's scan.
//   bigtile_main              time at 2^24 and 2^28
//   bigtile_main check N      each scan once at n = N, exact allocations (for compute-sanitizer)
#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bt.h"

#define CK(x)                                                                                                          \
    do {                                                                                                               \
        cudaError_t e_ = (x);                                                                                          \
        if (e_ != cudaSuccess) {                                                                                       \
            std::printf("%s: %s\n", #x, cudaGetErrorString(e_));                                                       \
            std::exit(1);                                                                                              \
        }                                                                                                              \
    } while (0)

typedef cudaError_t (*Scan)(const int32_t *, size_t, int32_t *, void *, size_t, cudaStream_t);
typedef size_t (*Bytes)(size_t);
struct Fn {
    const char *name;
    Scan fn;
    Bytes ws;
};
static const Fn FNS[] = {
    { "256 x 36 (static)", bt_b256t36, bt_b256t36_workspace_bytes },
    { "512 x 36 (dynamic)", bt_b512t36, bt_b512t36_workspace_bytes },
    { "512 x 44 (dynamic)", bt_b512t44, bt_b512t44_workspace_bytes },
    { "512 x 52 (dynamic)", bt_b512t52, bt_b512t52_workspace_bytes },
};

template <class F> static double time_us(F f, int calls, int samples)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<double> t;
    for (int s = 0; s < samples; ++s) {
        CK(cudaEventRecord(a));
        for (int i = 0; i < calls; ++i)
            f(i);
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms * 1000.0 / calls);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

static std::vector<int32_t> host_data(size_t n)
{
    std::vector<int32_t> h(n);
    uint32_t s = 12345;
    for (auto &v : h) {
        s = s * 1664525u + 1013904223u;
        v = (int32_t)(s >> 4);
    }
    return h;
}

static size_t wrong(const std::vector<int32_t> &in, const std::vector<int32_t> &out, size_t off, size_t n)
{
    uint32_t acc = 0;
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) {
        acc += (uint32_t)in[off + i];
        bad += (uint32_t)out[i] != acc;
    }
    return bad;
}

int main(int argc, char **argv)
{
    if (argc > 2 && !std::strcmp(argv[1], "check")) {
        const size_t n = (size_t)std::atoll(argv[2]);
        const std::vector<int32_t> h = host_data(n);
        int bad = 0;
        for (const Fn &f : FNS) {
            int32_t *in, *out;
            void *w = nullptr;
            const size_t wb = f.ws(n);
            CK(cudaMalloc(&in, n * 4));
            CK(cudaMalloc(&out, n * 4));
            if (wb)
                CK(cudaMalloc(&w, wb));
            if (wb)
                CK(cudaMemset(w, 0, wb));
            CK(cudaMemcpy(in, h.data(), n * 4, cudaMemcpyHostToDevice));
            std::vector<int32_t> o(n);
            for (int rep = 0; rep < 2; ++rep) {   // the second call on the workspace the first left
                CK(f.fn(in, n, out, w, wb, 0));
                CK(cudaDeviceSynchronize());
                CK(cudaMemcpy(o.data(), out, n * 4, cudaMemcpyDeviceToHost));
                const size_t k = wrong(h, o, 0, n);
                std::printf("check %-20s n=%zu call %d: %zu wrong\n", f.name, n, rep, k);
                bad += k != 0;
            }
            CK(cudaFree(in));
            CK(cudaFree(out));
            if (w)
                CK(cudaFree(w));
        }
        std::printf("%s\n", bad ? "FAILED" : "all right");
        return bad != 0;
    }
    const size_t MAX = (size_t)1 << 28;
    const std::vector<int32_t> h = host_data(MAX);
    int32_t *pool, *out, *cp;
    CK(cudaMalloc(&pool, MAX * 4));
    CK(cudaMalloc(&out, MAX * 4));
    CK(cudaMalloc(&cp, MAX * 4));
    CK(cudaMemcpy(pool, h.data(), MAX * 4, cudaMemcpyHostToDevice));
    size_t wb = 0, cub_bytes = 0;
    for (const Fn &f : FNS)
        wb = std::max(wb, f.ws(MAX));
    CK(cub::DeviceScan::InclusiveSum(nullptr, cub_bytes, pool, out, (int)MAX));
    void *w, *cw;
    CK(cudaMalloc(&w, wb));
    CK(cudaMemset(w, 0, wb));
    CK(cudaMalloc(&cw, cub_bytes));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    std::printf("%s; i32 inclusive scans, cold; us a call (median of 7 samples of 10 calls)\n", prop.name);
    std::printf("%-22s %-5s | %9s %8s %7s | %s\n", "shape", "n", "us", "of copy", "x CUB", "check");
    std::vector<int32_t> o;
    for (int lg : { 24, 28 }) {
        const size_t n = (size_t)1 << lg, slices = MAX / n;
        auto in_at = [&](int i) { return pool + (size_t)(i % slices) * n; };
        const double copy_us =
            time_us([&](int i) { CK(cudaMemcpyAsync(cp, in_at(i), n * 4, cudaMemcpyDeviceToDevice, 0)); }, 10, 7);
        const double cub_us = time_us(
            [&](int i) {
                size_t b = cub_bytes;
                CK(cub::DeviceScan::InclusiveSum(cw, b, in_at(i), out, (int)n));
            },
            10, 7);
        std::printf("%-22s 2^%-3d | %9.1f %8.3f %7.3f |\n", "CUB InclusiveSum", lg, cub_us, copy_us / cub_us, 1.0);
        for (int round = 0; round < 2; ++round)
            for (const Fn &f : FNS) {
                const double us = time_us([&](int i) { CK(f.fn(in_at(i), n, out, w, wb, 0)); }, 10, 7);
                // the last call (i = 9) scanned slice 9 % slices
                o.resize(n);
                CK(cudaMemcpy(o.data(), out, n * 4, cudaMemcpyDeviceToHost));
                const size_t k = wrong(h, o, (size_t)(9 % slices) * n, n);
                std::printf("%-22s 2^%-3d | %9.1f %8.3f %7.3f | %s\n", f.name, lg, us, copy_us / us, cub_us / us,
                            k ? "WRONG" : "ok");
            }
    }
    return 0;
}
