// The argument checks' host cost, no GPU needed: calls refused by their last check (the workspace
// overlapping the output), so every check runs and nothing reaches the CUDA runtime.
//   python3 -m assocgen bench/spec.toml -o build/checks --no-compile-check
//   for f in bench/checks/host_cost.cu build/checks/bench_{scan,reduce}_sum_f32.cu; do
//       nvcc -O3 -arch=sm_90 -std=c++17 -Ibuild/checks -c $f -o build/checks/$(basename $f .cu).o; done
//   nvcc -arch=sm_90 -o build/checks/host_cost build/checks/*.o && build/checks/host_cost
#include <chrono>
#include <cstdio>
#include <cstdint>
#include "bench.h"
template <class F> static double ns_per_call(F f) {
    const int calls = 20000000;
    auto t0 = std::chrono::steady_clock::now();
    int bad = 0;
    for (int i = 0; i < calls; ++i) bad += f(i) != cudaErrorInvalidValue;
    auto t1 = std::chrono::steady_clock::now();
    if (bad) std::printf("unexpected return codes: %d\n", bad);
    return std::chrono::duration<double, std::nano>(t1 - t0).count() / calls;
}
int main() {
    float *in = (float *)(uintptr_t)0x10000000, *out = (float *)(uintptr_t)0x20000000;
    volatile size_t vn = 4096;
    size_t n = vn;
    size_t wsc = bench_scan_sum_f32_workspace_bytes(n), wre = bench_reduce_sum_f32_workspace_bytes(n);
    std::printf("scan f32 n=4096 (workspace %zu B): %.1f ns a call\n", wsc,
                ns_per_call([&](int) { return bench_scan_sum_f32(in, n, out, out, wsc < 256 ? 256 : wsc, 0); }));
    std::printf("reduce f32 n=4096 (workspace %zu B): %.1f ns a call\n", wre,
                ns_per_call([&](int) { return bench_reduce_sum_f32(in, n, out, out, wre < 256 ? 256 : wre, 0); }));
}
