// Across GPUs (spec: nccl = true), side by side in one run, every visible GPU a rank (a host
// thread each): the per-rank bandwidth of a scan across the ranks against the same scan on one
// GPU alone, and the latency of an all-reduce of a user operator (3x3 matrix product, not
// commutative: gathered and folded in rank order) against NCCL's all-reduce of one float plus
// the local reduce.  A scan across ranks reads its part twice (its fold gives the later ranks
// their carry; then the scan), so the table gives that bound too: one GPU's scan time over the
// scan's plus the part's reduce's.  Built from tests/gpu/nccl/spec.toml (bench/nccl/run.sh).
//   ./nccl_bench      prints a table; times are the median of 7 runs of 20 calls (rank 0's)
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <thread>
#include <vector>

#include "nt.h"

static int R = 0;
static std::vector<ncclComm_t> comms;

// us a call on every rank at once (rank 0's median), after a warm-up call
static double time_ranks(int ranks, const std::function<void(int, cudaStream_t)> &call)
{
    std::vector<double> at(ranks);
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r)
        threads.emplace_back([&, r] {
            cudaSetDevice(r);
            cudaStream_t s;
            cudaStreamCreate(&s);
            cudaEvent_t a, b;
            cudaEventCreate(&a);
            cudaEventCreate(&b);
            call(r, s);
            cudaStreamSynchronize(s);
            std::vector<float> t;
            for (int rep = 0; rep < 7; ++rep) {
                cudaEventRecord(a, s);
                for (int k = 0; k < 20; ++k)
                    call(r, s);
                cudaEventRecord(b, s);
                cudaEventSynchronize(b);
                float ms = 0;
                cudaEventElapsedTime(&ms, a, b);
                t.push_back(ms * 1000 / 20);
            }
            std::sort(t.begin(), t.end());
            at[r] = t[3];
            cudaStreamDestroy(s);
        });
    for (auto &t : threads)
        t.join();
    return at[0];
}

struct Buffers {
    void *in = nullptr, *out = nullptr, *work = nullptr;
    size_t work_bytes = 0;
};

static std::vector<Buffers> alloc(size_t in_bytes, size_t out_bytes, size_t work_bytes)
{
    std::vector<Buffers> b(R);
    for (int r = 0; r < R; ++r) {
        cudaSetDevice(r);
        cudaMalloc(&b[r].in, in_bytes);
        cudaMemset(b[r].in, 0, in_bytes);
        cudaMalloc(&b[r].out, out_bytes);
        cudaMalloc(&b[r].work, work_bytes);
        cudaMemset(b[r].work, 0, work_bytes);
        b[r].work_bytes = work_bytes;
    }
    return b;
}

static void release(std::vector<Buffers> &b)
{
    for (int r = 0; r < R; ++r) {
        cudaSetDevice(r);
        cudaFree(b[r].in);
        cudaFree(b[r].out);
        cudaFree(b[r].work);
    }
}

int main()
{
    cudaGetDeviceCount(&R);
    comms.resize(R);
    if (ncclCommInitAll(comms.data(), R, nullptr) != ncclSuccess) {
        printf("ncclCommInitAll failed\n");
        return 1;
    }
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    int nccl_version = 0;
    ncclGetVersion(&nccl_version);
    printf("%d x %s, NCCL %d\n", R, prop.name, nccl_version);

    // scans: per-rank bandwidth (read + written) across R ranks against one GPU alone
    struct ScanRow {
        const char *name;
        size_t n, size;
        cudaError_t (*local)(const void *, size_t, void *, void *, size_t, cudaStream_t);
        cudaError_t (*across)(const void *, size_t, void *, void *, size_t, ncclComm_t, cudaStream_t);
        size_t (*ws)(size_t);
        size_t (*ws_nccl)(size_t, int);
        cudaError_t (*fold)(const void *, size_t, void *, void *, size_t, cudaStream_t); // the part's reduce
        size_t (*ws_fold)(size_t);
    } scans[] = {
        { "scan sum f32", (size_t)1 << 28, 4,
          [](const void *i, size_t n, void *o, void *w, size_t wb, cudaStream_t s) {
              return nt_scan_sum_f32((const float *)i, n, (float *)o, w, wb, s);
          },
          [](const void *i, size_t n, void *o, void *w, size_t wb, ncclComm_t c, cudaStream_t s) {
              return nt_scan_sum_f32_nccl((const float *)i, n, (float *)o, w, wb, c, s);
          },
          nt_scan_sum_f32_workspace_bytes, nt_scan_sum_f32_nccl_workspace_bytes,
          [](const void *i, size_t n, void *o, void *w, size_t wb, cudaStream_t s) {
              return nt_reduce_sum_f32((const float *)i, n, (float *)o, w, wb, s);
          },
          nt_reduce_sum_f32_workspace_bytes },
        { "scan mat3mul", (size_t)1 << 25, 36,
          [](const void *i, size_t n, void *o, void *w, size_t wb, cudaStream_t s) {
              return nt_scan_mat3mul_mat3u((const mat3u *)i, n, (mat3u *)o, w, wb, s);
          },
          [](const void *i, size_t n, void *o, void *w, size_t wb, ncclComm_t c, cudaStream_t s) {
              return nt_scan_mat3mul_mat3u_nccl((const mat3u *)i, n, (mat3u *)o, w, wb, c, s);
          },
          nt_scan_mat3mul_mat3u_workspace_bytes, nt_scan_mat3mul_mat3u_nccl_workspace_bytes,
          [](const void *i, size_t n, void *o, void *w, size_t wb, cudaStream_t s) {
              return nt_reduce_mat3mul_mat3u((const mat3u *)i, n, (mat3u *)o, w, wb, s);
          },
          nt_reduce_mat3mul_mat3u_workspace_bytes },
    };
    // bound: a rank's output waits for the folds of the parts before it, so its part is read twice
    // (the fold, then the scan): one GPU's scan time over the scan's plus the part's reduce's
    printf("%-28s %12s | %12s %10s | %12s %10s | %12s | %12s %s\n", "scan (a rank's part)", "n a rank", "one GPU",
           "GB/s", "across", "GB/s a rank", "across / one", "part's fold", "bound (of it)");
    for (const auto &row : scans) {
        auto b = alloc(row.n * row.size, row.n * row.size, std::max(row.ws_nccl(row.n, R), row.ws_fold(row.n)));
        const double one = time_ranks(
            1, [&](int r, cudaStream_t s) { row.local(b[r].in, row.n, b[r].out, b[r].work, b[r].work_bytes, s); });
        const double fold = time_ranks(
            1, [&](int r, cudaStream_t s) { row.fold(b[r].in, row.n, b[r].out, b[r].work, b[r].work_bytes, s); });
        const double across = time_ranks(R, [&](int r, cudaStream_t s) {
            row.across(b[r].in, row.n, b[r].out, b[r].work, b[r].work_bytes, comms[r], s);
        });
        const double bytes = 2.0 * row.n * row.size, bound = one / (one + fold);
        printf("%-28s %12zu | %9.1f us %10.1f | %9.1f us %10.1f | %12.3f | %9.1f us %.3f (%.2f)\n", row.name, row.n,
               one, bytes / one / 1e3, across, bytes / across / 1e3, one / across, fold, bound, one / across / bound);
        release(b);
    }

    // all-reduce latency: a user operator's (gathered, folded in rank order) against NCCL's
    // all-reduce of one float plus the local reduce of the same part
    printf("%-28s %12s | %12s %12s %12s | %s\n", "all-reduce (a rank's part)", "n a rank", "ours", "NCCL 1 float",
           "local", "ours / (NCCL + local)");
    for (size_t n : { (size_t)1, (size_t)1 << 10, (size_t)1 << 20 }) {
        auto b =
            alloc(n * sizeof(mat3u) + 64, sizeof(mat3u) + 64, nt_reduce_mat3mul_mat3u_nccl_workspace_bytes(n, R) + 64);
        const double ours = time_ranks(R, [&](int r, cudaStream_t s) {
            nt_reduce_mat3mul_mat3u_nccl_all((const mat3u *)b[r].in, n, (mat3u *)b[r].out, b[r].work, b[r].work_bytes,
                                             comms[r], s);
        });
        const double nccl = time_ranks(
            R, [&](int r, cudaStream_t s) { ncclAllReduce(b[r].out, b[r].out, 1, ncclFloat32, ncclSum, comms[r], s); });
        const double local = time_ranks(1, [&](int r, cudaStream_t s) {
            nt_reduce_mat3mul_mat3u((const mat3u *)b[r].in, n, (mat3u *)b[r].out, b[r].work, b[r].work_bytes, s);
        });
        printf("%-28s %12zu | %9.1f us %9.1f us %9.1f us | %.2f\n", "reduce mat3mul", n, ours, nccl, local,
               ours / (nccl + local));
        release(b);
    }
    for (auto c : comms)
        ncclCommDestroy(c);
    return 0;
}
