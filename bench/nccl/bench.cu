// Across GPUs (spec: nccl = true), side by side in one run: the per-rank bandwidth of a scan across the ranks against the same scan on one
// GPU alone, and the latency of an all-reduce of a user operator (3x3 matrix product, not
// commutative: gathered and folded in rank order) against NCCL's all-reduce of one float plus
// the local reduce.  A scan across ranks reads its part twice (its fold gives the later ranks
// their carry; then the scan), so the table gives that bound too: one GPU's scan time over the
// scan's plus the part's reduce's.  Built from tests/gpu/nccl/spec.toml (bench/nccl/run.sh).
//   ./nccl_bench [--transport default|net]
//                     every visible GPU a rank, a host thread each
//   python3 tests/gpu/nccl/launch.py -n N [--transport net] -- ./nccl_bench
//                     one process a rank (examples/nccl/ranks.h); rank 0 prints
// Prints a table; times are the median of 7 runs of 20 calls (rank 0's).  Which transport ran:
// the one asked for (net: NCCL's peer-to-peer and shared-memory paths off, sockets forced), and
// the one NCCL reports for its channels (its INFO log, kept aside unless NCCL_DEBUG is set).
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../../examples/nccl/ranks.h"
#include "../../tests/gpu/nccl/comms.h"
#include "nt.h"

// R ranks in all; `me` this process's rank where one process a rank (-1: threads, every rank
// here); comms[r] and devs[r] those of the ranks here
static int R = 0, me = -1;
static std::vector<ncclComm_t> comms;
static std::vector<int> devs;

static bool is_local(int r)
{
    return me < 0 || r == me;
}

// one process a rank: every rank here before any goes on
static void barrier()
{
    static int *d = nullptr;
    if (!d)
        cudaMalloc(&d, sizeof(int));
    ncclAllReduce(d, d, 1, ncclInt32, ncclSum, comms[me], 0);
    cudaStreamSynchronize(0);
}

// us a call on ranks 0 .. ranks-1 at once (rank 0's median), after a warm-up call; one process
// a rank: the ranks past `ranks` wait, and every rank starts the timed runs together
static double time_ranks(int ranks, const std::function<void(int, cudaStream_t)> &call)
{
    std::vector<double> at(R);
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r)
        if (is_local(r))
            threads.emplace_back([&, r] {
                cudaSetDevice(devs[r]);
                cudaStream_t s;
                cudaStreamCreate(&s);
                cudaEvent_t a, b;
                cudaEventCreate(&a);
                cudaEventCreate(&b);
                call(r, s);
                cudaStreamSynchronize(s);
                if (me >= 0 && ranks > 1)
                    barrier();
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
    if (me >= 0)
        barrier();
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
        if (!is_local(r))
            continue;
        cudaSetDevice(devs[r]);
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
        if (!is_local(r))
            continue;
        cudaSetDevice(devs[r]);
        cudaFree(b[r].in);
        cudaFree(b[r].out);
        cudaFree(b[r].work);
    }
}

// the communicators (tests/gpu/nccl/comms.h), into this file's names for them
static bool communicators(rank_env &e)
{
    ag_comms c;
    const bool ok = ag_make_comms(e, c);
    R = c.R, me = c.me, comms = c.comms, devs = c.devs;
    return ok;
}

// NCCL's INFO log of its channels kept aside (unless NCCL_DEBUG is set), to say which transport ran
static std::string nccl_log;

static void keep_nccl_log()
{
    if (getenv("NCCL_DEBUG"))
        return;
    const char *dir = getenv("TMPDIR");
    nccl_log = std::string(dir && *dir ? dir : "/tmp") + "/ag-nccl-bench-" + std::to_string(getpid()) + ".log";
    setenv("NCCL_DEBUG", "INFO", 1);
    setenv("NCCL_DEBUG_SUBSYS", "INIT", 1);
    setenv("NCCL_DEBUG_FILE", nccl_log.c_str(), 1);
}

// the transports NCCL's channel lines name (`... via P2P/CUMEM/read`, `... via NET/Socket/0`)
static std::string transports_seen()
{
    std::set<std::string> seen;
    std::ifstream f(nccl_log);
    for (std::string line; std::getline(f, line);) {
        const size_t at = line.find(" via ");
        if (at != std::string::npos && line.find("Channel") != std::string::npos)
            seen.insert(line.substr(at + 5, line.find_first_of(" \r", at + 5) - (at + 5)));
    }
    std::string all;
    for (const auto &t : seen)
        all += (all.empty() ? "" : ", ") + t;
    if (!nccl_log.empty())
        unlink(nccl_log.c_str());
    return nccl_log.empty() ? "not kept (NCCL_DEBUG is set)" : all.empty() ? "none named" : all;
}

int main(int argc, char **argv)
{
    rank_env e;
    if (rank_begin(&e, &argc, &argv))
        return 2;
    keep_nccl_log();
    if (!communicators(e)) {
        fprintf(stderr, "no communicator\n");
        rank_end();
        return 1;
    }
    const bool out = me <= 0; // rank 0 prints
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, devs[me < 0 ? 0 : me]);
    int nccl_version = 0;
    ncclGetVersion(&nccl_version);
    const bool net = e.transport && !strcmp(e.transport, "net");
    if (out)
        printf("%d x %s, NCCL %d, %s; transport asked: %s\n", R, prop.name, nccl_version,
               me < 0 ? "a thread a rank" : "a process a rank",
               net ? "net (NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NET=Socket NCCL_IB_DISABLE=1)"
                   : "NCCL's default");

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
    if (out)
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
        if (out)
            printf("%-28s %12zu | %9.1f us %10.1f | %9.1f us %10.1f | %12.3f | %9.1f us %.3f (%.2f)\n", row.name, row.n,
                   one, bytes / one / 1e3, across, bytes / across / 1e3, one / across, fold, bound,
                   one / across / bound);
        release(b);
    }

    // all-reduce latency: a user operator's (gathered, folded in rank order) against NCCL's
    // all-reduce of one float plus the local reduce of the same part
    if (out)
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
        if (out)
            printf("%-28s %12zu | %9.1f us %9.1f us %9.1f us | %.2f\n", "reduce mat3mul", n, ours, nccl, local,
                   ours / (nccl + local));
        release(b);
    }
    for (auto c : comms)
        if (c)
            ncclCommDestroy(c);
    const std::string seen = transports_seen();
    if (out)
        printf("transport NCCL's channels went by (rank 0's): %s\n", seen.c_str());
    rank_end();
    return 0;
}
