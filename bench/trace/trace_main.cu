// Where a tile of the generated f32 scan spends its time (bench/trace/run.sh): runs the traced
// copy of bench_scan_sum_f32 on 2^N random floats and prints, over the full tiles, the mean
// time from start to total known (ticket, loads, local fold), the look-back wait split into
// dependency (a predecessor's total known later than ours) and the look-back's own latency,
// then results and stores; percentiles; load time against the tiles loading on the same SM.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#include "bench.h"
extern __device__ unsigned long long *g_trace;
extern const unsigned int g_trace_tile;
#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)
int main(int argc, char **argv)
{
    const size_t n = (size_t)1 << (argc > 1 ? atoi(argv[1]) : 28);
    float *in, *out; void *work; unsigned long long *tr;
    size_t wb = bench_scan_sum_f32_workspace_bytes(n);
    CHECK(cudaMalloc(&in, n * 4)); CHECK(cudaMalloc(&out, n * 4)); CHECK(cudaMalloc(&work, wb));
    std::vector<float> h(n); for (size_t i = 0; i < n; ++i) h[i] = (float)(rand() % 100) / 10.f;
    CHECK(cudaMemcpy(in, h.data(), n * 4, cudaMemcpyHostToDevice));
    const size_t tiles = (n + g_trace_tile - 1) / g_trace_tile;
    CHECK(cudaMalloc(&tr, tiles * 6 * 8));
    unsigned long long *null = nullptr;
    CHECK(cudaMemcpyToSymbol(g_trace, &null, sizeof null));
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    for (int i = 0; i < 3; ++i) CHECK(bench_scan_sum_f32(in, n, out, work, wb, 0));
    cudaEventRecord(a); for (int i = 0; i < 10; ++i) CHECK(bench_scan_sum_f32(in, n, out, work, wb, 0)); cudaEventRecord(b);
    CHECK(cudaEventSynchronize(b)); float ms; cudaEventElapsedTime(&ms, a, b); printf("untraced: %.1f us a call\n", ms * 100);
    CHECK(cudaMemcpyToSymbol(g_trace, &tr, sizeof tr));
    for (int rep = 0; rep < 2; ++rep) {
        CHECK(cudaMemset(tr, 0, tiles * 48));
        cudaEventRecord(a); CHECK(bench_scan_sum_f32(in, n, out, work, wb, 0)); cudaEventRecord(b);
        CHECK(cudaEventSynchronize(b)); cudaEventElapsedTime(&ms, a, b); printf("traced: %.1f us\n", ms * 1000);
    }
    std::vector<unsigned long long> t(tiles * 6);
    CHECK(cudaMemcpy(t.data(), tr, tiles * 48, cudaMemcpyDeviceToHost));
    unsigned long long t0 = ~0ull, t1 = 0; for (size_t i = 0; i < tiles; ++i) { t0 = std::min(t0, t[i*6]); t1 = std::max(t1, t[i*6+3]); }
    double s_load = 0, s_wait = 0, s_fin = 0; std::vector<double> wait(tiles), load(tiles), fin(tiles);
    size_t m = 0;
    for (size_t i = 0; i < tiles; ++i) {
        if (!t[i*6+3]) continue;  // partial tile
        load[i] = (t[i*6+1] - t[i*6]) * 1e-3; wait[i] = (t[i*6+2] - t[i*6+1]) * 1e-3; fin[i] = (t[i*6+3] - t[i*6+2]) * 1e-3;
        s_load += load[i]; s_wait += wait[i]; s_fin += fin[i]; ++m;
    }
    printf("tiles %zu, span %.1f us; mean us: load+local %.2f, look-back wait %.2f, results+stores %.2f, resident %.2f\n",
           tiles, (t1 - t0) * 1e-3, s_load / m, s_wait / m, s_fin / m, (s_load + s_wait + s_fin) / m);
    // by position in group of 32 (level 0) and at group-of-1024 boundaries
    double by[32] = {0}; size_t cnt[32] = {0};
    for (size_t i = 0; i < tiles; ++i) if (t[i*6+3]) { by[i % 32] += wait[i]; cnt[i % 32]++; }
    printf("wait by tile %% 32:"); for (int k = 0; k < 32; ++k) printf(" %.1f", by[k] / cnt[k]); printf("\n");
    std::vector<double> w2(wait.begin(), wait.end()); std::sort(w2.begin(), w2.end());
    printf("wait percentiles: p10 %.2f p50 %.2f p90 %.2f p99 %.2f max %.2f\n", w2[tiles/10], w2[tiles/2], w2[tiles*9/10], w2[tiles*99/100], w2.back());
    std::vector<double> l2(load.begin(), load.end()); std::sort(l2.begin(), l2.end());
    printf("load percentiles: p10 %.2f p50 %.2f p90 %.2f p99 %.2f\n", l2[tiles/10], l2[tiles/2], l2[tiles*9/10], l2[tiles*99/100]);
    // how late is a tile's predecessor: total-known time of tile i-1 minus that of tile i
    double late = 0; size_t nl = 0, later = 0;
    for (size_t i = 1; i < tiles; ++i) if (t[i*6+3] && t[i*6-4]) { double d = ((double)t[(i-1)*6+1] - (double)t[i*6+1]) * 1e-3; if (d > 0) { late += d; later++; } nl++; }
    printf("predecessor's total known after ours: %.1f%% of tiles, mean by %.2f us\n", 100.0 * later / nl, later ? late / later : 0);
    // the look-back's own overhead: prefix known minus the moment every total it needs was known
    {
        double M = 0, ov = 0, dep = 0; size_t c = 0; std::vector<double> ovs;
        for (size_t i = 0; i < tiles; ++i) {
            if (!t[i*6+3]) break;
            const double tot = (double)(t[i*6+1] - t0) * 1e-3, pre = (double)(t[i*6+2] - t0) * 1e-3;
            const double ready = std::max(M, tot);
            if (i > 0) { ov += pre - ready; dep += ready - tot; ovs.push_back(pre - ready); ++c; }
            M = std::max(M, tot);
        }
        std::sort(ovs.begin(), ovs.end());
        printf("wait = dependency %.2f us (predecessors' totals later than ours) + look-back overhead %.2f us (p50 %.2f p90 %.2f)\n",
               dep / c, ov / c, ovs[c/2], ovs[c*9/10]);
    }
    // load time against tiles loading at once on the same SM
    {
        std::vector<std::vector<size_t>> by_sm(200);
        for (size_t i = 0; i < tiles; ++i) if (t[i*6+3]) by_sm[t[i*6+4]].push_back(i);
        double sum[16] = {0}; size_t cnt[16] = {0};
        for (auto &v : by_sm) for (size_t i : v) {
            int k = 0; for (size_t j : v) if (j != i && t[j*6] <= t[i*6] && t[j*6+1] > t[i*6]) ++k;
            k = std::min(k, 15); sum[k] += load[i]; cnt[k]++;
        }
        printf("load us by tiles of the same SM still loading when it started:");
        for (int k = 0; k < 16; ++k) if (cnt[k]) printf(" [%d] %.2f (%zu)", k, sum[k] / cnt[k], cnt[k]);
        printf("\n");
    }
    // slowest loads
    {
        std::vector<size_t> idx; for (size_t i = 0; i < tiles; ++i) if (t[i*6+3]) idx.push_back(i);
        std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return load[a] > load[b]; });
        printf("slowest loads (tile sm start load):"); for (int k = 0; k < 12; ++k) printf(" [%zu %llu %.1f %.1f]", idx[k], t[idx[k]*6+4], (t[idx[k]*6]-t0)*1e-3, load[idx[k]]); printf("\n");
        // start-to-start gap on an SM: how soon a freed slot is refilled
    }
    {
        double tk = 0; size_t c = 0; for (size_t i = 0; i < tiles; ++i) if (t[i*6+3]) { tk += (t[i*6+5] - t[i*6]) * 1e-3; ++c; }
        printf("ticket known after start: %.2f us mean\n", tk / c);
    }
    // start order vs ticket: the start time of tile i vs i-1
    // residency: tiles resident over time on SM 0
    int sm0 = (int)t[4];
    printf("SM %d tiles (start, total, prefix, end) us from t0, first 24:\n", sm0);
    int shown = 0;
    for (size_t i = 0; i < tiles && shown < 24; ++i) if ((int)t[i*6+4] == sm0 && t[i*6+3]) {
        printf("  tile %6zu: %8.2f %8.2f %8.2f %8.2f\n", i, (t[i*6]-t0)*1e-3, (t[i*6+1]-t0)*1e-3, (t[i*6+2]-t0)*1e-3, (t[i*6+3]-t0)*1e-3); shown++; }
    return 0;
}
