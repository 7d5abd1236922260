// GPU test of the functions across GPUs (spec: nccl = true): every visible GPU a rank of one NCCL
// communicator (ncclCommInitAll), a host thread a rank, each holding a consecutive part of one
// input (parts of any size, empty ones included).  Reduces (to every rank, to a root) and scans
// (inclusive, exclusive with an initial value) against a CPU fold of the whole input: exact for
// integers and 3x3 matrix products (not commutative), within a bound for floats; every rank's
// all-reduce result must be the same bits.  Bad arguments must give cudaErrorInvalidValue.
//   ./nccl_test [--quick]        prints a line a failure, then `N passed, M failed`
#include <cuda_runtime.h>
#include <nccl.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "../family_driver.h"
#include "nt.h"

static int passed = 0, failed = 0, R = 0;
static std::vector<ncclComm_t> comms;

static void check(bool ok, const std::string &what)
{
    if (ok)
        ++passed;
    else {
        ++failed;
        printf("FAIL %s\n", what.c_str());
    }
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
    for (int r = 0; r < R; ++r)
        threads.emplace_back([&, r] {
            Rank<In, Out> &k = ranks[r];
            cudaSetDevice(r);
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
            unsigned int counter = 0;   // the workspace's ticket counter (word 0): left at zero for any next call
            if (k.err == cudaSuccess && wb >= 4 && cudaMemcpy(&counter, d_work, 4, cudaMemcpyDeviceToHost) == cudaSuccess &&
                counter != 0)
                k.err = cudaErrorIllegalState;   /* reported as the rank's error */
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
    each([](int r) { return r == 0 ? (size_t)1 : (size_t)(1 << 20) + 7 * r; });
    each([](int r) { return r == R - 1 ? (size_t)3 : (size_t)(1 << 18) + 1; });
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
        for (int r = 0; r < R; ++r) {
            ok = ok && ranks[r].err == cudaSuccess && close(ranks[r].out[0], want, scale);
            same = same && !memcmp(&ranks[r].out[0], &ranks[0].out[0], sizeof(Out));
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
        for (int r = 0; r < R; ++r)
            ok = ok && ranks[r].err == cudaSuccess && (r != at || close(ranks[r].out[0], want, scale));
        check(ok, what + ": reduce to the last rank");
    }
    // refusals: no communicator, a workspace too small
    float *d = nullptr;
    cudaSetDevice(0);
    cudaMalloc(&d, 64);
    check(all((const T *)d, 1, (Out *)d, d, 64, nullptr, 0) == cudaErrorInvalidValue, std::string(name) + ": no comm");
    check(all((const T *)d, 1, (Out *)d, d, 0, comms[0], 0) == cudaErrorInvalidValue,
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
        std::vector<T> want;
        std::vector<double> scale;
        T acc = exclusive && init ? *init : identity;
        double s = 0;
        for (int r = 0; r < R; ++r)
            for (size_t i = 0; i < parts[r]; ++i) {
                T x = gen();
                ranks[r].part.push_back(x);
                if (exclusive)
                    want.push_back(acc);
                acc = fold(acc, x);
                s += mag(x);
                if (!exclusive)
                    want.push_back(acc);
                scale.push_back(s);
            }
        run_ranks<T, T>(ranks, 1, 0, bytes,
                        [&](int, const T *i, size_t n, T *o, void *w, size_t wb, ncclComm_t c, cudaStream_t st) {
                            return fn(i, n, o, init, w, wb, c, st);
                        });
        bool ok = true;
        size_t base = 0, bad = (size_t)-1;
        for (int r = 0; r < R; ++r) {
            ok = ok && ranks[r].err == cudaSuccess;
            for (size_t i = 0; i < parts[r] && ok; ++i)
                if (!close(ranks[r].out[i], want[base + i], scale[base + i])) {
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

int main(int argc, char **argv)
{
    const bool quick = parse_args(argc, argv).quick;
    cudaGetDeviceCount(&R);
    comms.resize(R);
    if (ncclCommInitAll(comms.data(), R, nullptr) != ncclSuccess) {
        printf("ncclCommInitAll failed\n0 passed, 1 failed\n");
        return 1;
    }
    printf("%d rank%s (one a GPU)\n", R, R > 1 ? "s" : "");
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
        ncclCommDestroy(c);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
