// GPU test of the functions across GPUs (spec: nccl = true), each rank holding a consecutive part
// of one input (parts of any size, empty ones included).  Reduces (to every rank, to a root) and
// scans (inclusive, exclusive with an initial value) against a CPU fold of the whole input: exact
// for integers and 3x3 matrix products (not commutative), within a bound for floats; every rank's
// all-reduce result must be the same bits.  Bad arguments must give cudaErrorInvalidValue.
// Two forms, the same checks and counts:
//   ./nccl_test [--quick|--tiny]     every visible GPU a rank of one communicator (ncclCommInitAll),
//                                    a host thread each
//   python3 tests/gpu/nccl/launch.py -n N -- ./nccl_test [--quick|--tiny]
//                                    one process a rank (examples/nccl/ranks.h: rank, device, the
//                                    NCCL id by a file); every process makes the whole input (the
//                                    same stream), keeps its part, and each check's verdict is the
//                                    minimum over the ranks (an all-reduce), so every rank counts
//                                    the same; a rank's own failures are printed by it
// Prints a line a failure, then `N passed, M failed`.  --tiny: parts of at most 70k elements, for
// the sanitizers (racecheck at 4 ranks).
#include <cuda_runtime.h>
#include <nccl.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "../../../examples/nccl/ranks.h"
#include "../family_driver.h"
#include "comms.h"
#include "nt.h"

// R ranks in all; `me` this process's rank where one process a rank (-1: the threaded form, every
// rank here); `local` the ranks this process runs, comms[r] and devs[r] theirs
static int passed = 0, failed = 0, R = 0, me = -1;
static bool tiny = false; // --tiny: small parts, for the sanitizers
static std::vector<ncclComm_t> comms;
static std::vector<int> devs, local;

static bool is_local(int r)
{
    return me < 0 || r == me;
}

// one process a rank: `ok` on every rank (the minimum over them, by NCCL), false where NCCL fails
static bool agree(bool ok)
{
    if (me < 0)
        return ok;
    static int *d = nullptr;
    if (!d)
        cudaMalloc(&d, sizeof(int));
    int v = ok;
    cudaMemcpy(d, &v, sizeof v, cudaMemcpyHostToDevice);
    if (ncclAllReduce(d, d, 1, ncclInt32, ncclMin, comms[me], 0) != ncclSuccess ||
        cudaMemcpy(&v, d, sizeof v, cudaMemcpyDeviceToHost) != cudaSuccess)
        return false;
    return v == 1;
}

static void check(bool ok, const std::string &what)
{
    const bool all = agree(ok);
    if (all)
        ++passed;
    else
        ++failed;
    if (!ok && me >= 0)
        printf("FAIL [rank %d] %s\n", me, what.c_str());
    else if (!all)
        printf("FAIL %s%s\n", what.c_str(), me >= 0 ? " (on another rank)" : "");
}

// one process a rank: every rank's `bytes` bytes at `p`, in rank order (by NCCL's all-gather)
static std::vector<unsigned char> gather(const void *p, size_t bytes)
{
    std::vector<unsigned char> all(bytes * R);
    unsigned char *d = nullptr;
    cudaMalloc(&d, all.size());
    cudaMemcpy(d + bytes * me, p, bytes, cudaMemcpyHostToDevice);
    if (ncclAllGather(d + bytes * me, d, bytes, ncclUint8, comms[me], 0) != ncclSuccess ||
        cudaMemcpy(all.data(), d, all.size(), cudaMemcpyDeviceToHost) != cudaSuccess)
        all.assign(all.size(), 0xA5); /* reads as different bits unless every rank failed alike */
    cudaFree(d);
    return all;
}

static mat3u mat_mul(mat3u a, mat3u b)
{
    mat3u r;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            uint32_t s = 0;
            for (int k = 0; k < 3; ++k)
                s += a.m[3 * i + k] * b.m[3 * k + j];
            r.m[3 * i + j] = s;
        }
    return r;
}

// the element kinds: how to make one, fold two on the CPU, and compare a result with the fold
static float gen_f32()
{
    return (float)(next_u32() % 2000001) / 1e6f - 1.0f;
}
static int32_t gen_i32()
{
    return (int32_t)next_u32();
}
static mat3u gen_mat()
{
    mat3u m;
    for (auto &x : m.m)
        x = next_u32() % 5;
    return m;
}
static bool same_f32(float got, double want, double scale)
{
    return std::fabs(got - want) <= 1e-5 * scale + 1e-6;
}

// a rank's call: its device, its part of the input, its output and workspace (exact sizes), on
// a thread of its own; `call` runs the function, `bytes` sizes the workspace
template <class In, class Out> struct Rank {
    std::vector<In> part;
    std::vector<Out> out;
    cudaError_t err = cudaSuccess;
};

template <class In, class Out>
static void run_ranks(
    std::vector<Rank<In, Out>> &ranks, size_t out_per_elem, size_t out_fixed,
    const std::function<size_t(size_t, int)> &bytes,
    const std::function<cudaError_t(int, const In *, size_t, Out *, void *, size_t, ncclComm_t, cudaStream_t)> &call)
{
    std::vector<std::thread> threads;
    for (int r : local)
        threads.emplace_back([&, r] {
            Rank<In, Out> &k = ranks[r];
            cudaSetDevice(devs[r]);
            cudaStream_t s;
            cudaStreamCreate(&s);
            const size_t n = k.part.size(), outs = out_fixed + out_per_elem * n, wb = bytes(n, R);
            In *d_in = nullptr;
            Out *d_out = nullptr;
            void *d_work = nullptr;
            if (n)
                cudaMalloc(&d_in, n * sizeof(In));
            if (outs)
                cudaMalloc(&d_out, outs * sizeof(Out));
            cudaMalloc(&d_work, wb);
            cudaMemset(d_work, 0, wb);
            if (n)
                cudaMemcpy(d_in, k.part.data(), n * sizeof(In), cudaMemcpyHostToDevice);
            k.err = call(r, d_in, n, d_out, d_work, wb, comms[r], s);
            cudaError_t e = cudaStreamSynchronize(s);
            if (k.err == cudaSuccess)
                k.err = e;
            unsigned int counter = 0; // the workspace's ticket counter (word 0): left at zero for any next call
            if (k.err == cudaSuccess && wb >= 4 &&
                cudaMemcpy(&counter, d_work, 4, cudaMemcpyDeviceToHost) == cudaSuccess && counter != 0)
                k.err = cudaErrorIllegalState; /* reported as the rank's error */
            k.out.resize(outs);
            if (outs)
                cudaMemcpy(k.out.data(), d_out, outs * sizeof(Out), cudaMemcpyDeviceToHost);
            cudaFree(d_in);
            cudaFree(d_out);
            cudaFree(d_work);
            cudaStreamDestroy(s);
        });
    for (auto &t : threads)
        t.join();
}

static std::vector<std::vector<size_t>> patterns(bool quick)
{
    std::vector<std::vector<size_t>> p;
    auto each = [&](std::function<size_t(int)> f) {
        std::vector<size_t> v;
        for (int r = 0; r < R; ++r)
            v.push_back(f(r));
        p.push_back(v);
    };
    each([](int) { return (size_t)1000; });
    each([](int r) { return r % 2 ? (size_t)(5 + 37 * r) : 0; });
    each([](int r) { return r % 2 ? 0 : (size_t)(5 + 37 * r); });
    each([](int) { return (size_t)0; });
    each([](int r) { return r == 0 ? (size_t)1 : (size_t)(tiny ? 70000 : 1 << 20) + 7 * r; });
    each([](int r) { return r == R - 1 ? (size_t)3 : (size_t)(tiny ? 20000 : 1 << 18) + 1; });
    if (!quick)
        each([](int r) { return (size_t)(1 << 24) + 11 * r; });
    return p;
}

static std::string describe(const char *name, const std::vector<size_t> &parts)
{
    std::string s = std::string(name) + " parts";
    for (size_t n : parts)
        s += " " + std::to_string(n);
    return s;
}

// reduce: every rank's d_out the fold of the whole input (the same bits on each); then to a root
template <class T, class Out, class Acc>
static void test_reduce(const char *name, T (*gen)(), Acc identity, Acc (*fold)(Acc, T),
                        bool (*close)(const Out &, const Acc &, double), double (*mag)(T),
                        cudaError_t (*all)(const T *, size_t, Out *, void *, size_t, ncclComm_t, cudaStream_t),
                        cudaError_t (*root)(const T *, size_t, Out *, int, void *, size_t, ncclComm_t, cudaStream_t),
                        size_t (*bytes)(size_t, int), bool quick, bool big = false)
{
    auto all_parts = patterns(quick);
    if (big && !quick) { // one rank's part past 2^31 elements
        all_parts.push_back(std::vector<size_t>(R, 3));
        all_parts.back()[0] = ((size_t)1 << 31) + 5;
    }
    for (const auto &parts : all_parts) {
        std::vector<Rank<T, Out>> ranks(R);
        Acc want = identity;
        double scale = 0;
        for (int r = 0; r < R; ++r)
            for (size_t i = 0; i < parts[r]; ++i) {
                T x = gen();
                if (is_local(r))
                    ranks[r].part.push_back(x);
                want = fold(want, x);
                scale += mag(x);
            }
        const std::string what = describe(name, parts);
        run_ranks<T, Out>(ranks, 0, 1, bytes,
                          [&](int, const T *i, size_t n, Out *o, void *w, size_t wb, ncclComm_t c, cudaStream_t s) {
                              return all(i, n, o, w, wb, c, s);
                          });
        bool ok = true, same = true;
        for (int r : local)
            ok = ok && ranks[r].err == cudaSuccess && close(ranks[r].out[0], want, scale);
        if (me < 0)
            for (int r = 0; r < R; ++r)
                same = same && !memcmp(&ranks[r].out[0], &ranks[0].out[0], sizeof(Out));
        else { // every rank's result, by NCCL's all-gather, against rank 0's
            const auto bits = gather(&ranks[me].out[0], sizeof(Out));
            for (int r = 0; r < R; ++r)
                same = same && !memcmp(&bits[r * sizeof(Out)], &bits[0], sizeof(Out));
        }
        check(ok, what + ": all-reduce");
        check(same, what + ": all-reduce, the same bits on every rank");
        for (auto &k : ranks)
            k.out.clear();
        const int at = R - 1;
        run_ranks<T, Out>(ranks, 0, 1, bytes,
                          [&](int, const T *i, size_t n, Out *o, void *w, size_t wb, ncclComm_t c, cudaStream_t s) {
                              return root(i, n, o, at, w, wb, c, s);
                          });
        ok = true;
        for (int r : local)
            ok = ok && ranks[r].err == cudaSuccess && (r != at || close(ranks[r].out[0], want, scale));
        check(ok, what + ": reduce to the last rank");
    }
    // refusals: no communicator, a workspace too small
    float *d = nullptr;
    cudaSetDevice(devs[local[0]]);
    cudaMalloc(&d, 64);
    check(all((const T *)d, 1, (Out *)d, d, 64, nullptr, 0) == cudaErrorInvalidValue, std::string(name) + ": no comm");
    check(all((const T *)d, 1, (Out *)d, d, 0, comms[local[0]], 0) == cudaErrorInvalidValue,
          std::string(name) + ": workspace too small");
    cudaFree(d);
}

// scan: rank r's d_out its part of the scan of the whole input
template <class T>
static void test_scan(
    const char *name, T (*gen)(), T identity, T (*fold)(T, T), bool (*close)(const T &, const T &, double),
    double (*mag)(T),
    const std::function<cudaError_t(const T *, size_t, T *, const T *, void *, size_t, ncclComm_t, cudaStream_t)> &fn,
    size_t (*bytes)(size_t, int), bool exclusive, const T *init, bool quick)
{
    for (const auto &parts : patterns(quick)) {
        std::vector<Rank<T, T>> ranks(R);
        std::vector<std::vector<T>> want(R); // this process's ranks' parts of the scan, and their scale
        std::vector<std::vector<double>> scale(R);
        T acc = exclusive && init ? *init : identity;
        double s = 0;
        for (int r = 0; r < R; ++r)
            for (size_t i = 0; i < parts[r]; ++i) {
                T x = gen();
                const T before = acc;
                acc = fold(acc, x);
                s += mag(x);
                if (is_local(r)) {
                    ranks[r].part.push_back(x);
                    want[r].push_back(exclusive ? before : acc);
                    scale[r].push_back(s);
                }
            }
        run_ranks<T, T>(ranks, 1, 0, bytes,
                        [&](int, const T *i, size_t n, T *o, void *w, size_t wb, ncclComm_t c, cudaStream_t st) {
                            return fn(i, n, o, init, w, wb, c, st);
                        });
        bool ok = true;
        size_t base = 0, bad = (size_t)-1;
        for (int r = 0; r < R; ++r) {
            ok = ok && (!is_local(r) || ranks[r].err == cudaSuccess);
            for (size_t i = 0; i < parts[r] && ok && is_local(r); ++i)
                if (!close(ranks[r].out[i], want[r][i], scale[r][i])) {
                    ok = false;
                    bad = base + i;
                }
            base += parts[r];
        }
        check(ok, describe(name, parts) + (bad != (size_t)-1 ? ": first wrong at " + std::to_string(bad) : ""));
    }
}

static float add_f32(float a, float b)
{
    return a + b;
}
static double add_f64(double a, float b)
{
    return a + b;
}
static float min_f32(float a, float b)
{
    return b < a ? b : a;
}
static int32_t add_i32(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}
static double mag_f32(float x)
{
    return std::fabs(x);
}
static double mag_i32(int32_t)
{
    return 0;
}
static double mag_mat(mat3u)
{
    return 0;
}
static bool close_f32d(const float &g, const double &w, double s)
{
    return same_f32(g, w, s);
}
static bool close_f32f(const float &g, const float &w, double s)
{
    return same_f32(g, w, s);
}
static bool exact_f32(const float &g, const float &w, double)
{
    return g == w;
}
static bool exact_i32(const int32_t &g, const int32_t &w, double)
{
    return g == w;
}
static bool exact_mat(const mat3u &g, const mat3u &w, double)
{
    return !memcmp(&g, &w, sizeof g);
}

// the communicators (comms.h), into this file's names for them
static bool communicators(rank_env &e)
{
    ag_comms c;
    const bool ok = ag_make_comms(e, c);
    R = c.R, me = c.me, comms = c.comms, devs = c.devs, local = c.local;
    if (!ok) {
        if (!e.processes)
            printf("ncclCommInitAll failed\n");
    } else if (e.processes)
        printf("%d rank%s, one process a rank: rank %d on GPU %d\n", R, R > 1 ? "s" : "", me, e.device);
    else
        printf("%d rank%s (one a GPU, a thread each)\n", R, R > 1 ? "s" : "");
    return ok;
}

int main(int argc, char **argv)
{
    rank_env e;
    if (rank_begin(&e, &argc, &argv))
        return 2;
    for (int i = 1; i < argc; ++i)
        tiny = tiny || !strcmp(argv[i], "--tiny");
    const bool quick = parse_args(argc, argv).quick || tiny;
    if (!communicators(e)) {
        printf("0 passed, 1 failed\n");
        rank_end();
        return 1;
    }
    const mat3u I = { { 1, 0, 0, 0, 1, 0, 0, 0, 1 } };
    test_reduce<float, float, double>("reduce sum f32 (NCCL's all-reduce)", gen_f32, 0.0, add_f64, close_f32d, mag_f32,
                                      nt_reduce_sum_f32_nccl_all, nt_reduce_sum_f32_nccl_root,
                                      nt_reduce_sum_f32_nccl_workspace_bytes, quick);
    test_reduce<float, float, double>("reduce ksum f32 (gathered)", gen_f32, 0.0, add_f64, close_f32d, mag_f32,
                                      nt_reduce_ksum_f32_nccl_all, nt_reduce_ksum_f32_nccl_root,
                                      nt_reduce_ksum_f32_nccl_workspace_bytes, quick);
    test_reduce<float, float, float>("reduce min f32 (gathered)", gen_f32, INFINITY, min_f32, exact_f32, mag_f32,
                                     nt_reduce_min_f32_nccl_all, nt_reduce_min_f32_nccl_root,
                                     nt_reduce_min_f32_nccl_workspace_bytes, quick);
    test_reduce<int32_t, int32_t, int32_t>("reduce sum i32 (NCCL's all-reduce)", gen_i32, 0, add_i32, exact_i32,
                                           mag_i32, nt_reduce_sum_i32_nccl_all, nt_reduce_sum_i32_nccl_root,
                                           nt_reduce_sum_i32_nccl_workspace_bytes, quick, true);
    test_reduce<mat3u, mat3u, mat3u>("reduce mat3mul (not commutative)", gen_mat, I, mat_mul, exact_mat, mag_mat,
                                     nt_reduce_mat3mul_mat3u_nccl_all, nt_reduce_mat3mul_mat3u_nccl_root,
                                     nt_reduce_mat3mul_mat3u_nccl_workspace_bytes, quick);
    const float f_init = 0.5f;
    const int32_t i_init = 12345;
    const mat3u m_init = { { 2, 1, 0, 0, 1, 3, 1, 0, 1 } };
    test_scan<float>(
        "scan sum f32", gen_f32, 0.0f, add_f32, close_f32f, mag_f32,
        [](const float *i, size_t n, float *o, const float *, void *w, size_t wb, ncclComm_t c, cudaStream_t s) {
            return nt_scan_sum_f32_nccl(i, n, o, w, wb, c, s);
        },
        nt_scan_sum_f32_nccl_workspace_bytes, false, nullptr, quick);
    test_scan<float>("exscan sum f32 from 0.5", gen_f32, 0.0f, add_f32, close_f32f, mag_f32, nt_exscan_sum_f32_nccl,
                     nt_exscan_sum_f32_nccl_workspace_bytes, true, &f_init, quick);
    test_scan<int32_t>(
        "scan sum i32", gen_i32, 0, add_i32, exact_i32, mag_i32,
        [](const int32_t *i, size_t n, int32_t *o, const int32_t *, void *w, size_t wb, ncclComm_t c, cudaStream_t s) {
            return nt_scan_sum_i32_nccl(i, n, o, w, wb, c, s);
        },
        nt_scan_sum_i32_nccl_workspace_bytes, false, nullptr, quick);
    test_scan<int32_t>("exscan sum i32 from 12345", gen_i32, 0, add_i32, exact_i32, mag_i32, nt_exscan_sum_i32_nccl,
                       nt_exscan_sum_i32_nccl_workspace_bytes, true, &i_init, quick);
    test_scan<int32_t>("exscan sum i32 from the identity", gen_i32, 0, add_i32, exact_i32, mag_i32,
                       nt_exscan_sum_i32_nccl, nt_exscan_sum_i32_nccl_workspace_bytes, true, nullptr, quick);
    test_scan<mat3u>(
        "scan mat3mul", gen_mat, I, mat_mul, exact_mat, mag_mat,
        [](const mat3u *i, size_t n, mat3u *o, const mat3u *, void *w, size_t wb, ncclComm_t c, cudaStream_t s) {
            return nt_scan_mat3mul_mat3u_nccl(i, n, o, w, wb, c, s);
        },
        nt_scan_mat3mul_mat3u_nccl_workspace_bytes, false, nullptr, quick);
    test_scan<mat3u>("exscan mat3mul from a matrix", gen_mat, I, mat_mul, exact_mat, mag_mat,
                     nt_exscan_mat3mul_mat3u_nccl, nt_exscan_mat3mul_mat3u_nccl_workspace_bytes, true, &m_init, quick);
    for (auto c : comms)
        if (c)
            ncclCommDestroy(c);
    printf("%d passed, %d failed\n", passed, failed);
    rank_end();
    return failed ? 1 : 0;
}
