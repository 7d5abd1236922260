// Where the segmented rows lose at small and medium n (bench/trace/sweep.sh), hot inputs, each
// call timed from a CUDA graph of K calls (median of 7 replays):
//   A. a segmented scan by i32 keys (segments averaging 1000) in fixed shapes, by the number of
//      4096-element tiles, against thrust::inclusive_scan_by_key; `nolb` is 256 x 16 without its
//      look-back (wrong results: the ceiling of the tile work, patch_sweep.py);
//      (and `256x16 ticket`, the same taking its tiles by ticket even where they all fit at once);
//   B. the segmented reduce by offsets with each row of its spans table forced, against
//      cub::DeviceSegmentedReduce::Sum;
//   C. one traced call of 256 x 16 (patch_trace.py's stamps): where a tile's time goes;
//   D. three calls each of 256 x 16 and of Thrust at 64 tiles, for a profiler, e.g.
//      ncu --kernel-name regex:"^sw_k_segscan_sum_f32_by_i32_b256_t16$|DeviceScanByKeyKernel"
//          --launch-skip 2 --launch-count 2 build/sweep/sweep D
//   E. 512 x 8 whole-call changes (tiles by ticket at every count, the keys' head bits by ballots, no
//      programmatic dependent launch), then a waterfall of copies that each leave out one more part
//      (the look-back, the clear launch, the keys' head bits), beside Thrust, CUB's
//      plain sum of the values and a device-to-device copy of them (patch_sweep.py);
// Checks every scan shape, E's whole-call changes and every spans row against a host reference.
//   sweep [PARTS...]   (any of A, B, C, D, E, in one word or several; default A B C)
//   SWEEP_TILES=192,256,384,512 sets part A's tile counts (up to 512)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <thrust/execution_policy.h>
#include <thrust/scan.h>

#include "../common.cuh"   // CHECK, mix64, CachedAlloc
#include "sw.h"

extern int sw_force_span;
extern "C" cudaError_t sw_nolb_b256_t16(const float *, const int32_t *, size_t, float *, void *, size_t, cudaStream_t);
extern "C" size_t sw_nolb_b256_t16_workspace_bytes(size_t);
extern "C" cudaError_t sw_tr_b256_t16(const float *, const int32_t *, size_t, float *, void *, size_t, cudaStream_t);
extern "C" size_t sw_tr_b256_t16_workspace_bytes(size_t);
extern "C" cudaError_t sw_nt_b256_t16(const float *, const int32_t *, size_t, float *, void *, size_t, cudaStream_t);
extern "C" size_t sw_nt_b256_t16_workspace_bytes(size_t);
extern "C" cudaError_t sw_set_trace(unsigned long long *);
#define SW_E(name)                                                                                                \
    extern "C" cudaError_t sw_##name##_b512_t8(const float *, const int32_t *, size_t, float *, void *, size_t, cudaStream_t); \
    extern "C" size_t sw_##name##_b512_t8_workspace_bytes(size_t);
SW_E(e1) SW_E(e3) SW_E(e4) SW_E(eb) SW_E(ep) SW_E(ei) SW_E(en) SW_E(ek)

static cudaStream_t stream;
static cudaEvent_t ev0, ev1;

// microseconds a call: per call (K launches, median of 7) and from a graph of the same K calls
static void time_call(const std::function<void()> &call, double *per_call, double *graph)
{
    const int K = 200;
    for (int i = 0; i < 5; ++i) call();
    CHECK(cudaStreamSynchronize(stream));
    std::vector<double> pc, gr;
    for (int s = 0; s < 7; ++s) {
        CHECK(cudaEventRecord(ev0, stream));
        for (int i = 0; i < K; ++i) call();
        CHECK(cudaEventRecord(ev1, stream));
        CHECK(cudaEventSynchronize(ev1));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, ev0, ev1));
        pc.push_back(ms * 1000.0 / K);
    }
    cudaGraph_t g;
    cudaGraphExec_t exec;
    CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed));
    for (int i = 0; i < K; ++i) call();
    CHECK(cudaStreamEndCapture(stream, &g));
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaStreamSynchronize(stream));
    for (int s = 0; s < 7; ++s) {
        CHECK(cudaEventRecord(ev0, stream));
        CHECK(cudaGraphLaunch(exec, stream));
        CHECK(cudaEventRecord(ev1, stream));
        CHECK(cudaEventSynchronize(ev1));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, ev0, ev1));
        gr.push_back(ms * 1000.0 / K);
    }
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(g));
    std::sort(pc.begin(), pc.end());
    std::sort(gr.begin(), gr.end());
    *per_call = pc[3];
    *graph = gr[3];
}

typedef cudaError_t (*ScanFn)(const float *, const int32_t *, size_t, float *, void *, size_t, cudaStream_t);
typedef size_t (*WorkFn)(size_t);

int main(int argc, char **argv)
{
    int failures = 0;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CHECK(cudaEventCreate(&ev0));
    CHECK(cudaEventCreate(&ev1));
    const size_t max_n = (size_t)512 * 4096;
    std::vector<float> h_in(max_n);
    std::vector<int32_t> h_keys(max_n);
    {
        size_t p = 0;
        int key = 7;
        for (uint64_t j = 0; p < max_n; ++j) {
            const size_t len = 1 + mix64(j) % 1999;   // avg 1000
            key += 1 + (int)(mix64(j + 77) % 5);
            for (size_t i = p; i < p + len && i < max_n; ++i) h_keys[i] = key;
            p += len;
        }
        for (size_t i = 0; i < max_n; ++i) h_in[i] = (float)((mix64(i ^ 0x5EED) >> 40) % 1000) / 64.0f;
    }
    float *in, *out, *ref;
    int32_t *keys;
    void *work;
    CHECK(cudaMalloc(&in, max_n * 4));
    CHECK(cudaMalloc(&out, max_n * 4));
    CHECK(cudaMalloc(&ref, max_n * 4));
    CHECK(cudaMalloc(&keys, max_n * 4));
    CHECK(cudaMalloc(&work, 1 << 20));
    CHECK(cudaMemcpy(in, h_in.data(), max_n * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(keys, h_keys.data(), max_n * 4, cudaMemcpyHostToDevice));

    std::string parts;   // which parts to run: the letters of every argument ("A B", "AB"), or A, B, C
    for (int i = 1; i < argc; ++i) parts += argv[i];
    const char *part = argc > 1 ? parts.c_str() : "ABC";
    // A. segmented scan by keys
    struct Shape { const char *name; ScanFn fn; WorkFn wfn; bool check; };
    const Shape shapes[] = {
        {"256x16", sw_ss_b256_t16, sw_ss_b256_t16_workspace_bytes, true},
        {"512x8", sw_ss_b512_t8, sw_ss_b512_t8_workspace_bytes, true},
        {"128x8", sw_ss_b128_t8, sw_ss_b128_t8_workspace_bytes, true},
        {"256x4", sw_ss_b256_t4, sw_ss_b256_t4_workspace_bytes, true},
        {"1024x8", sw_ss_b1024_t8, sw_ss_b1024_t8_workspace_bytes, true},
        {"1024x4", sw_ss_b1024_t4, sw_ss_b1024_t4_workspace_bytes, true},
        {"nolb", sw_nolb_b256_t16, sw_nolb_b256_t16_workspace_bytes, false},
        {"256x16 ticket", sw_nt_b256_t16, sw_nt_b256_t16_workspace_bytes, true},
    };
    std::vector<int> tiles_list = {1, 4, 8, 16, 24, 31, 32, 33, 40, 48, 64, 96, 128, 192, 256};
    if (const char *t = getenv("SWEEP_TILES")) {   // part A's tile counts, e.g. "192,256,384,512"
        tiles_list.clear();
        for (char *e; *t; t = *e ? e + 1 : e) {
            const long v = strtol(t, &e, 10);
            if (e == t || v < 1 || (size_t)v * 4096 > max_n) { fprintf(stderr, "SWEEP_TILES: 1..%zu, by commas\n", max_n / 4096); return 2; }
            tiles_list.push_back((int)v);
        }
    }
    CachedAlloc alloc;
    // the scan by keys in `out` against the host's, a line and a failure where it differs
    const auto check_scan = [&](const char *name, size_t n) {
        std::vector<float> got(n);
        CHECK(cudaMemcpy(got.data(), out, n * 4, cudaMemcpyDeviceToHost));
        double acc = 0;
        for (size_t i = 0; i < n; ++i) {
            acc = (i == 0 || h_keys[i] != h_keys[i - 1]) ? h_in[i] : acc + h_in[i];
            if (std::fabs(got[i] - acc) > 1e-4 * std::fabs(acc) + 1e-3) {
                printf("\nMISMATCH %s n=%zu at %zu: %g want %g\n", name, n, i, got[i], acc);
                ++failures;
                return;
            }
        }
    };
    if (strchr(part, 'A')) {
        printf("A. segscan by i32 keys (avg 1000), hot, us a call: per call / graph; 4096-element tiles\n");
        printf("%7s %8s", "tiles", "n");
        for (const Shape &s : shapes) printf(" | %15s", s.name);
        printf(" | %15s | best graph vs thrust\n", "thrust");
    }
    for (int tiles : strchr(part, 'A') ? tiles_list : std::vector<int>{}) {
        const size_t n = (size_t)tiles * 4096;
        printf("%7d %8zu", tiles, n);
        double best = 1e30;
        for (const Shape &s : shapes) {
            const size_t wb = s.wfn(n);
            if (wb > (1 << 20)) { printf(" | %15s", "work?"); continue; }
            double pc, gr;
            time_call([&] { CHECK(s.fn(in, keys, n, out, work, wb, stream)); }, &pc, &gr);
            printf(" | %6.2f / %6.2f", pc, gr);
            if (s.check) {
                best = std::min(best, gr);
                check_scan(s.name, n);
            }
        }
        double pc, gr;
        time_call([&] { thrust::inclusive_scan_by_key(thrust::cuda::par_nosync(alloc).on(stream), keys, keys + n, in, ref); },
                  &pc, &gr);
        printf(" | %6.2f / %6.2f | %.2fx\n", pc, gr, gr / best);
    }

    // E. a waterfall of 512 x 8 (patch_sweep.py): whole-call changes (checked), then copies that each
    // leave out one more part (not checked), beside Thrust, CUB's plain sum of the values and a copy
    const Shape wf[] = {
        {"512x8", sw_ss_b512_t8, sw_ss_b512_t8_workspace_bytes, true},
        {"ticket", sw_ei_b512_t8, sw_ei_b512_t8_workspace_bytes, true},
        {"ballot", sw_eb_b512_t8, sw_eb_b512_t8_workspace_bytes, true},
        {"no PDL", sw_ep_b512_t8, sw_ep_b512_t8_workspace_bytes, true},
        {"no sleep", sw_en_b512_t8, sw_en_b512_t8_workspace_bytes, true},
        {"-lookback", sw_e1_b512_t8, sw_e1_b512_t8_workspace_bytes, false},
        {"-clear", sw_e3_b512_t8, sw_e3_b512_t8_workspace_bytes, false},
        {"-bits", sw_ek_b512_t8, sw_ek_b512_t8_workspace_bytes, false},
        {"-heads", sw_e4_b512_t8, sw_e4_b512_t8_workspace_bytes, false},
    };
    if (strchr(part, 'E')) {
        printf("\nE. 512x8 waterfall, hot, graph us a call; '-' columns each leave out one more part (wrong results)\n");
        printf("%7s %8s", "tiles", "n");
        for (const Shape &s : wf) printf(" %9s", s.name);
        printf(" %9s %9s %9s\n", "thrust", "cub sum", "copy");
    }
    void *scan_tmp = nullptr;
    size_t scan_bytes = 0;
    for (int tiles : strchr(part, 'E') ? std::vector<int>{1, 16, 32, 64, 128, 256} : std::vector<int>{}) {
        const size_t n = (size_t)tiles * 4096;
        printf("%7d %8zu", tiles, n);
        for (const Shape &s : wf) {
            double pc, gr;
            const size_t wb = s.wfn(n);
            time_call([&] { CHECK(s.fn(in, keys, n, out, work, wb, stream)); }, &pc, &gr);
            printf(" %9.2f", gr);
            if (s.check) check_scan(s.name, n);
        }
        double pc, gr;
        time_call([&] { thrust::inclusive_scan_by_key(thrust::cuda::par_nosync(alloc).on(stream), keys, keys + n, in, ref); },
                  &pc, &gr);
        printf(" %9.2f", gr);
        size_t need = 0;
        CHECK(cub::DeviceScan::InclusiveSum(nullptr, need, in, ref, (int)n, stream));
        if (need > scan_bytes) { if (scan_tmp) CHECK(cudaFree(scan_tmp)); CHECK(cudaMalloc(&scan_tmp, need)); scan_bytes = need; }
        time_call([&] { CHECK(cub::DeviceScan::InclusiveSum(scan_tmp, scan_bytes, in, ref, (int)n, stream)); }, &pc, &gr);
        printf(" %9.2f", gr);
        time_call([&] { CHECK(cudaMemcpyAsync(ref, in, n * 4, cudaMemcpyDeviceToDevice, stream)); }, &pc, &gr);
        printf(" %9.2f\n", gr);
    }

    // C. where a 256 x 16 tile's time goes: one traced call after warm-up (untraced) calls
    if (strchr(part, 'C'))
        printf("\nC. 256x16 traced, us from the first tile's start: the last start, the last end; means over tiles\n"
               "   of ticket (start to tile known), load (loads and thread 0's own fold), look-back (the block\n"
               "   scan and the look-back, to prefix known), store (to the end of warp 0's store)\n");
    for (int tiles : strchr(part, 'C') ? std::vector<int>{1, 16, 32, 64, 128, 256} : std::vector<int>{}) {
        const size_t n = (size_t)tiles * 4096, wb = sw_tr_b256_t16_workspace_bytes(n);
        unsigned long long *tr, *null = nullptr;
        CHECK(cudaMalloc(&tr, tiles * 48));
        std::vector<unsigned long long> t(tiles * 6);
        double sums[4] = {0}, last_start = 0, last_end = 0;   // ticket, load, look-back, store
        const int reps = 5;
        for (int r = 0; r < reps; ++r) {
            CHECK(sw_set_trace(null));
            for (int i = 0; i < 20; ++i) CHECK(sw_tr_b256_t16(in, keys, n, out, work, wb, stream));
            CHECK(cudaStreamSynchronize(stream));
            CHECK(cudaMemset(tr, 0, tiles * 48));
            CHECK(sw_set_trace(tr));
            CHECK(sw_tr_b256_t16(in, keys, n, out, work, wb, stream));
            CHECK(cudaStreamSynchronize(stream));
            CHECK(cudaMemcpy(t.data(), tr, tiles * 48, cudaMemcpyDeviceToHost));
            unsigned long long t0 = ~0ull, s1 = 0, e1 = 0;
            for (int i = 0; i < tiles; ++i) {
                const unsigned long long *x = &t[i * 6];
                t0 = std::min(t0, x[0]);
                s1 = std::max(s1, x[0]);
                e1 = std::max(e1, x[3]);
                sums[0] += (x[5] - x[0]) * 1e-3;
                sums[1] += (x[1] - x[5]) * 1e-3;
                sums[2] += (x[2] - x[1]) * 1e-3;
                sums[3] += (x[3] - x[2]) * 1e-3;
            }
            last_start += (s1 - t0) * 1e-3;
            last_end += (e1 - t0) * 1e-3;
        }
        CHECK(sw_set_trace(null));
        const double m = (double)tiles * reps;
        printf("   tiles %4d: last start %5.2f, last end %5.2f | ticket %5.2f load %5.2f look-back %5.2f store %5.2f\n", tiles,
               last_start / reps, last_end / reps, sums[0] / m, sums[1] / m, sums[2] / m, sums[3] / m);
        CHECK(cudaFree(tr));
    }

    // D. three calls each of 256 x 16 and of Thrust at 64 tiles, for a profiler (see the top)
    if (strchr(part, 'D')) {
        const size_t n = (size_t)64 * 4096, wb = sw_ss_b256_t16_workspace_bytes(n);
        for (int i = 0; i < 3; ++i) {
            CHECK(sw_ss_b256_t16(in, keys, n, out, work, wb, stream));
            thrust::inclusive_scan_by_key(thrust::cuda::par_nosync(alloc).on(stream), keys, keys + n, in, ref);
        }
        CHECK(cudaStreamSynchronize(stream));
        printf("\nD. 256x16 and thrust at n = %zu, three calls each\n", n);
    }

    // B. segmented reduce by offsets, each spans kernel forced
    const char *rows[] = {"-1", "lanes1", "lanes2", "lanes4", "lanes8", "lanes16", "lanes32", "block128", "block256", "block512"};
    struct Case { int lg; int avg; };
    const std::vector<Case> cases = {{12, 128}, {14, 128}, {16, 128}, {12, 1000}, {16, 1000}, {18, 1000}, {18, 128}, {20, 1000}};
    if (strchr(part, 'B')) {
        printf("\nB. segreduce by i32 offsets, hot, graph us a call, by the spans table's row forced (-1: as built)\n");
        printf("%4s %5s %6s", "lg", "avg", "segs");
        for (const char *r : rows) printf(" %8s", r);
        printf(" %8s  best vs cub\n", "cub");
    }
    void *cub_tmp = nullptr;
    size_t cub_bytes = 0;
    for (const Case &c : strchr(part, 'B') ? cases : std::vector<Case>{}) {
        const size_t n = (size_t)1 << c.lg;
        std::vector<int> off;
        size_t p = 0;
        for (uint64_t j = 0; p < n; ++j) { off.push_back((int)p); p += 1 + mix64(j * 3 + c.avg) % (2 * c.avg - 1); }
        const size_t m = off.size();
        off.push_back((int)n);
        int *d_off;
        CHECK(cudaMalloc(&d_off, (m + 1) * 4));
        CHECK(cudaMemcpy(d_off, off.data(), (m + 1) * 4, cudaMemcpyHostToDevice));
        size_t need = 0;
        CHECK(cub::DeviceSegmentedReduce::Sum(nullptr, need, in, ref, (int64_t)m, d_off, d_off + 1, stream));
        if (need > cub_bytes) { if (cub_tmp) CHECK(cudaFree(cub_tmp)); CHECK(cudaMalloc(&cub_tmp, need)); cub_bytes = need; }
        const size_t wb = sw_sr_workspace_bytes(n);
        printf("%4d %5d %6zu", c.lg, c.avg, m);
        double best = 1e30;
        for (int k = -1; k < 9; ++k) {
            sw_force_span = k;
            double pc, gr;
            time_call([&] { CHECK(sw_sr(in, n, d_off, m, out, work, wb, stream)); }, &pc, &gr);
            best = std::min(best, gr);
            printf(" %8.2f", gr);
            std::vector<float> got(m);
            CHECK(cudaMemcpy(got.data(), out, m * 4, cudaMemcpyDeviceToHost));
            for (size_t s = 0; s < m; ++s) {
                double want = 0;
                for (int i = off[s]; i < off[s + 1]; ++i) want += h_in[i];
                if (std::fabs(got[s] - want) > 1e-5 * std::fabs(want) + 1e-3) {
                    printf("\nMISMATCH segreduce k=%d lg=%d seg %zu: %g want %g\n", k, c.lg, s, got[s], want);
                    ++failures;
                    break;
                }
            }
        }
        sw_force_span = -1;
        double pc, gr;
        time_call([&] { CHECK(cub::DeviceSegmentedReduce::Sum(cub_tmp, cub_bytes, in, ref, (int64_t)m, d_off, d_off + 1, stream)); },
                  &pc, &gr);
        printf(" %8.2f  %.2fx\n", gr, gr / best);
        CHECK(cudaFree(d_off));
    }
    printf("\n%d mismatches\n", failures);
    return failures != 0;
}
