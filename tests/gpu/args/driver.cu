// GPU test of the argument checks (tests/gpu/args/run.py): every public signature of spec.toml
// called with arguments it must refuse (a pointer misaligned for its type, a NULL pointer, a
// workspace too small, a pitch or leading dimension shorter than a row, sizes past the address
// space, arrays that overlap), each against the code it must return, with the memory around every
// array unchanged and no error left behind (cudaGetLastError and a synchronize after it); and each
// with a call it must accept (a scan in place among them), which must run.
//   ./args_test            prints a line a failure, then `N passed, M failed`
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <functional>
#include <string>
#include <vector>

#include "ar.h"

// one pool holds every array, 1 MiB apart, so that "memory unchanged" is one comparison
static const size_t kRegion = 1 << 20, kPool = 8 * kRegion;
static unsigned char *g_pool;
static std::vector<unsigned char> g_before(kPool), g_after(kPool);
static int g_passed, g_failed;

static float *F(int region, size_t byte = 0) { return (float *)(g_pool + region * kRegion + byte); }
static int32_t *I(int region, size_t byte = 0) { return (int32_t *)(g_pool + region * kRegion + byte); }
static uint8_t *U8(int region) { return g_pool + region * kRegion; }
static size_t *Z(int region, size_t byte = 0) { return (size_t *)(g_pool + region * kRegion + byte); }
enum { IN = 0, IN1 = 1, OUT = 2, KEYS = 3, UNIQ = 4, NSEG = 5, WORK = 6 };
static void *W(size_t byte = 0) { return g_pool + WORK * kRegion + byte; }

static const size_t N = 100000;      // several tiles: every scan and reduce needs its workspace
static const size_t kHuge = ~(size_t)0 / 2;

static void fill()
{
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < kPool; ++i) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        g_before[i] = (unsigned char)(s >> 56);
    }
    // small floats, so that a sum over them is finite, and offsets 0, 10, 20, ... in KEYS
    for (size_t i = 0; i < 2 * kRegion; i += 4) {
        float v = (float)(g_before[i] % 17) - 8.0f;
        memcpy(&g_before[i], &v, 4);
    }
    for (size_t i = 0; i <= N / 10; ++i) {
        int32_t v = (int32_t)(10 * i);
        memcpy(&g_before[KEYS * kRegion + 4 * i], &v, 4);
    }
    cudaMemcpy(g_pool, g_before.data(), kPool, cudaMemcpyHostToDevice);
}

static void fail(const std::string &fn, const std::string &what, const std::string &why)
{
    printf("FAIL %s: %s: %s\n", fn.c_str(), what.c_str(), why.c_str());
    ++g_failed;
}

// a call that must be refused with `want`: nothing written, no error left behind
static void refuse(const char *fn, const char *what, cudaError_t want, const std::function<cudaError_t()> &call)
{
    fill();
    cudaDeviceSynchronize();
    const cudaError_t got = call();
    const cudaError_t sync = cudaDeviceSynchronize(), last = cudaGetLastError();
    cudaMemcpy(g_after.data(), g_pool, kPool, cudaMemcpyDeviceToHost);
    if (got != want)
        fail(fn, what, std::string("want ") + cudaGetErrorName(want) + ", got " + cudaGetErrorName(got));
    else if (sync != cudaSuccess || last != cudaSuccess)
        fail(fn, what, std::string("an error left behind: ") + cudaGetErrorName(sync != cudaSuccess ? sync : last));
    else if (memcmp(g_after.data(), g_before.data(), kPool) != 0)
        fail(fn, what, "refused, but memory was written");
    else
        ++g_passed;
}

// a call that must be accepted and run
static void accept(const char *fn, const char *what, const std::function<cudaError_t()> &call)
{
    fill();
    const cudaError_t got = call();
    const cudaError_t sync = cudaDeviceSynchronize(), last = cudaGetLastError();
    if (got != cudaSuccess || sync != cudaSuccess || last != cudaSuccess)
        fail(fn, what, std::string("want cudaSuccess, got ") + cudaGetErrorName(got) + " / " + cudaGetErrorName(sync) + " / " +
                           cudaGetErrorName(last));
    else
        ++g_passed;
}

static const cudaError_t BAD = cudaErrorInvalidValue, MIS = cudaErrorMisalignedAddress;

// the reduces and scans of one input array: f(d_in, n, d_out, work, bytes, stream)
typedef cudaError_t (*Plain)(const float *, size_t, float *, void *, size_t, cudaStream_t);
static void plain(const char *fn, Plain f, size_t work, bool scan)
{
    accept(fn, "good", [&] { return f(F(IN), N, F(OUT), W(), work, 0); });
    if (scan)
        accept(fn, "in place", [&] { return f(F(IN), N, F(IN), W(), work, 0); });
    refuse(fn, "input misaligned", MIS, [&] { return f(F(IN, 2), N, F(OUT), W(), work, 0); });
    refuse(fn, "output misaligned", MIS, [&] { return f(F(IN), N, F(OUT, 1), W(), work, 0); });
    refuse(fn, "input NULL", BAD, [&] { return f(NULL, N, F(OUT), W(), work, 0); });
    refuse(fn, "output NULL", BAD, [&] { return f(F(IN), N, NULL, W(), work, 0); });
    refuse(fn, "workspace NULL", BAD, [&] { return f(F(IN), N, F(OUT), NULL, 0, 0); });
    refuse(fn, "workspace too small", BAD, [&] { return f(F(IN), N, F(OUT), W(), work - 1, 0); });
    refuse(fn, "n past the address space", BAD, [&] { return f(F(IN), kHuge, F(OUT), W(), kRegion, 0); });
    refuse(fn, "output inside the input", BAD, [&] { return f(F(IN), N, F(IN, 4 * 500), W(), work, 0); });
    refuse(fn, "output overlaps the input's end", BAD, [&] { return f(F(IN), N, F(IN, 4 * (N - 1)), W(), work, 0); });
    refuse(fn, "workspace over the input", BAD, [&] { return f(F(IN), N, F(OUT), F(IN, 64), work, 0); });
    refuse(fn, "workspace over the output", BAD, [&] { return f(F(IN), N, F(OUT), F(OUT), work, 0); });
}

// the scans of an exclusive kind: f(d_in, n, d_out, init, work, bytes, stream)
typedef cudaError_t (*Exclusive)(const float *, size_t, float *, const float *, void *, size_t, cudaStream_t);
static Exclusive g_ex;
static cudaError_t ex_as_plain(const float *in, size_t n, float *out, void *w, size_t b, cudaStream_t s)
{
    const float init = 1.0f;
    return g_ex(in, n, out, &init, w, b, s);
}

// two inputs: f(d_in0, d_in1, n, d_out, work, bytes, stream)
typedef cudaError_t (*Two)(const float *, const float *, size_t, float *, void *, size_t, cudaStream_t);
static void two(const char *fn, Two f, size_t work, bool scan)
{
    accept(fn, "good", [&] { return f(F(IN), F(IN1), N, F(OUT), W(), work, 0); });
    if (scan) {
        accept(fn, "in place of the first input", [&] { return f(F(IN), F(IN1), N, F(IN), W(), work, 0); });
        accept(fn, "in place of the second input", [&] { return f(F(IN), F(IN1), N, F(IN1), W(), work, 0); });
    }
    refuse(fn, "second input misaligned", MIS, [&] { return f(F(IN), F(IN1, 2), N, F(OUT), W(), work, 0); });
    refuse(fn, "second input NULL", BAD, [&] { return f(F(IN), NULL, N, F(OUT), W(), work, 0); });
    refuse(fn, "output inside the second input", BAD, [&] { return f(F(IN), F(IN1), N, F(IN1, 400), W(), work, 0); });
    refuse(fn, "workspace over the second input", BAD, [&] { return f(F(IN), F(IN1), N, F(OUT), F(IN1, 256), work, 0); });
}

static void segmented()
{
    {
        const char *fn = "ar_segscan_sum_f32";
        const size_t work = ar_segscan_sum_f32_workspace_bytes(N);
        auto f = ar_segscan_sum_f32;
        accept(fn, "good", [&] { return f(F(IN), U8(KEYS), N, F(OUT), W(), work, 0); });
        accept(fn, "in place", [&] { return f(F(IN), U8(KEYS), N, F(IN), W(), work, 0); });
        refuse(fn, "flags NULL", BAD, [&] { return f(F(IN), NULL, N, F(OUT), W(), work, 0); });
        refuse(fn, "output over the flags", BAD, [&] { return f(F(IN), U8(KEYS), N, F(KEYS, 1024), W(), work, 0); });
        refuse(fn, "workspace over the flags", BAD, [&] { return f(F(IN), U8(KEYS), N, F(OUT), U8(KEYS) + N - 16, work, 0); });
        refuse(fn, "output misaligned", MIS, [&] { return f(F(IN), U8(KEYS), N, F(OUT, 2), W(), work, 0); });
    }
    {
        const char *fn = "ar_segscan_sum_f32_by_i32";
        const size_t work = ar_segscan_sum_f32_by_i32_workspace_bytes(N);
        auto f = ar_segscan_sum_f32_by_i32;
        accept(fn, "good", [&] { return f(F(IN), I(KEYS), N, F(OUT), W(), work, 0); });
        refuse(fn, "keys misaligned", MIS, [&] { return f(F(IN), I(KEYS, 1), N, F(OUT), W(), work, 0); });
        refuse(fn, "output over the keys", BAD, [&] { return f(F(IN), I(KEYS), N, F(KEYS, 4 * (N - 1)), W(), work, 0); });
        refuse(fn, "output of the keys' type in place of the keys", BAD, [&] { return f(F(IN), I(KEYS), N, F(KEYS), W(), work, 0); });
    }
    {
        const char *fn = "ar_segreduce_sum_f32";
        const size_t segs = N / 10, work = ar_segreduce_sum_f32_workspace_bytes(N);
        auto f = ar_segreduce_sum_f32;
        accept(fn, "good", [&] { return f(F(IN), N, I(KEYS), segs, F(OUT), W(), work, 0); });
        refuse(fn, "offsets misaligned", MIS, [&] { return f(F(IN), N, I(KEYS, 2), segs, F(OUT), W(), work, 0); });
        refuse(fn, "offsets NULL", BAD, [&] { return f(F(IN), N, NULL, segs, F(OUT), W(), work, 0); });
        refuse(fn, "output over the offsets' last", BAD, [&] { return f(F(IN), N, I(KEYS), segs, F(KEYS, 4 * segs), W(), work, 0); });
        refuse(fn, "output over the input", BAD, [&] { return f(F(IN), N, I(KEYS), segs, F(IN, 4 * 10), W(), work, 0); });
        refuse(fn, "segments past the address space", BAD, [&] { return f(F(IN), N, I(KEYS), kHuge, F(OUT), W(), work, 0); });
        refuse(fn, "workspace too small", BAD, [&] { return f(F(IN), N, I(KEYS), segs, F(OUT), W(), work - 1, 0); });
    }
    {
        const char *fn = "ar_reduce_sum_f32_by_i32";
        const size_t work = ar_reduce_sum_f32_by_i32_workspace_bytes(N);
        auto f = ar_reduce_sum_f32_by_i32;
        accept(fn, "good", [&] { return f(F(IN), I(KEYS), N, F(OUT), I(UNIQ), Z(NSEG), W(), work, 0); });
        refuse(fn, "count misaligned", MIS, [&] { return f(F(IN), I(KEYS), N, F(OUT), I(UNIQ), Z(NSEG, 4), W(), work, 0); });
        refuse(fn, "output in place of the input", BAD, [&] { return f(F(IN), I(KEYS), N, F(IN), I(UNIQ), Z(NSEG), W(), work, 0); });
        refuse(fn, "unique keys over the output", BAD, [&] { return f(F(IN), I(KEYS), N, F(OUT), I(OUT, 4 * (N - 1)), Z(NSEG), W(), work, 0); });
        refuse(fn, "count inside the unique keys", BAD, [&] { return f(F(IN), I(KEYS), N, F(OUT), I(UNIQ), Z(UNIQ, 8), W(), work, 0); });
        refuse(fn, "unique keys NULL", BAD, [&] { return f(F(IN), I(KEYS), N, F(OUT), NULL, Z(NSEG), W(), work, 0); });
    }
}

static void rows_and_cols()
{
    const size_t R = 300, C = 333, P = 340;
    {
        const char *fn = "ar_rows_reduce_sum_f32";
        const size_t work = ar_rows_reduce_sum_f32_workspace_bytes(R, C);
        auto f = ar_rows_reduce_sum_f32;
        accept(fn, "good", [&] { return f(F(IN), R, C, P, F(OUT), W(), work, 0); });
        refuse(fn, "input misaligned", MIS, [&] { return f(F(IN, 2), R, C, P, F(OUT), W(), work, 0); });
        refuse(fn, "pitch shorter than a row", BAD, [&] { return f(F(IN), R, C, C - 1, F(OUT), W(), work, 0); });
        refuse(fn, "rows x pitch past the address space", BAD, [&] { return f(F(IN), 3, C, kHuge, F(OUT), W(), work, 0); });
        refuse(fn, "output inside the last row", BAD, [&] { return f(F(IN), R, C, P, F(IN, 4 * ((R - 1) * P + 5)), W(), work, 0); });
        refuse(fn, "workspace over the input", BAD, [&] { return f(F(IN), R, C, P, F(OUT), F(IN, 4 * P), kRegion, 0); });
    }
    {
        const char *fn = "ar_rows_scan_sum_f32";
        auto f = ar_rows_scan_sum_f32;
        accept(fn, "good", [&] { return f(F(IN), R, C, P, F(OUT), C, W(), kRegion, 0); });
        accept(fn, "in place, the same pitch", [&] { return f(F(IN), R, C, P, F(IN), P, W(), kRegion, 0); });
        refuse(fn, "in place, another pitch", BAD, [&] { return f(F(IN), R, C, P, F(IN), C, W(), kRegion, 0); });
        refuse(fn, "output one element on", BAD, [&] { return f(F(IN), R, C, P, F(IN, 4), P, W(), kRegion, 0); });
        refuse(fn, "output misaligned", MIS, [&] { return f(F(IN), R, C, P, F(OUT, 2), C, W(), kRegion, 0); });
        refuse(fn, "output pitch shorter than a row", BAD, [&] { return f(F(IN), R, C, P, F(OUT), C - 1, W(), kRegion, 0); });
    }
    {
        const char *fn = "ar_cols_reduce_sum_f32";
        const size_t work = ar_cols_reduce_sum_f32_workspace_bytes(R, C);
        auto f = ar_cols_reduce_sum_f32;
        accept(fn, "good", [&] { return f(F(IN), R, C, P, F(OUT), W(), work, 0); });
        refuse(fn, "output over the input's first row", BAD, [&] { return f(F(IN), R, C, P, F(IN, 8), W(), work, 0); });
        refuse(fn, "input misaligned", MIS, [&] { return f(F(IN, 1), R, C, P, F(OUT), W(), work, 0); });
        refuse(fn, "pitch shorter than a row", BAD, [&] { return f(F(IN), R, C, C - 1, F(OUT), W(), work, 0); });
    }
}

static void matmuls()
{
    const size_t M = 200, Nn = 150, K = 120;
    {
        const char *fn = "ar_matmul_plus_times_f32";
        const size_t work = ar_matmul_plus_times_f32_workspace_bytes(M, Nn, K);
        auto f = ar_matmul_plus_times_f32;
        accept(fn, "good", [&] { return f(F(IN), K, F(IN1), Nn, M, Nn, K, 0, F(OUT), Nn, W(), work, 0); });
        refuse(fn, "C over A", BAD, [&] { return f(F(IN), K, F(IN1), Nn, M, Nn, K, 0, F(IN, 4 * 100), Nn, W(), work, 0); });
        refuse(fn, "B misaligned", MIS, [&] { return f(F(IN), K, F(IN1, 2), Nn, M, Nn, K, 0, F(OUT), Nn, W(), work, 0); });
        refuse(fn, "lda shorter than a row", BAD, [&] { return f(F(IN), K - 1, F(IN1), Nn, M, Nn, K, 0, F(OUT), Nn, W(), work, 0); });
        refuse(fn, "ldc past the address space", BAD, [&] { return f(F(IN), K, F(IN1), Nn, M, Nn, K, 0, F(OUT), kHuge, W(), work, 0); });
        refuse(fn, "workspace over C", BAD, [&] { return f(F(IN), K, F(IN1), Nn, M, Nn, K, 0, F(OUT), Nn, F(OUT, 4096), kRegion, 0); });
    }
    {
        const char *fn = "ar_matmul_min_plus_f32_witness";
        auto f = ar_matmul_min_plus_f32_witness;
        accept(fn, "good", [&] { return f(F(IN), K, F(IN1), Nn, M, Nn, K, 0, F(OUT), Nn, I(KEYS), Nn, NULL, 0, 0); });
        refuse(fn, "witness over C", BAD, [&] { return f(F(IN), K, F(IN1), Nn, M, Nn, K, 0, F(OUT), Nn, I(OUT, 4 * Nn), Nn, NULL, 0, 0); });
        refuse(fn, "witness misaligned", MIS, [&] { return f(F(IN), K, F(IN1), Nn, M, Nn, K, 0, F(OUT), Nn, I(KEYS, 2), Nn, NULL, 0, 0); });
        refuse(fn, "witness NULL", BAD, [&] { return f(F(IN), K, F(IN1), Nn, M, Nn, K, 0, F(OUT), Nn, NULL, Nn, NULL, 0, 0); });
    }
}

int main()
{
    if (cudaMalloc(&g_pool, kPool) != cudaSuccess) {
        printf("no GPU memory\n");
        return 2;
    }
    plain("ar_reduce_sum_f32", ar_reduce_sum_f32, ar_reduce_sum_f32_workspace_bytes(N), false);
    plain("ar_scan_sum_f32", ar_scan_sum_f32, ar_scan_sum_f32_workspace_bytes(N), true);
    g_ex = ar_exscan_sum_f32;
    plain("ar_exscan_sum_f32", ex_as_plain, ar_exscan_sum_f32_workspace_bytes(N), true);
    two("ar_reduce_dot_f32", ar_reduce_dot_f32, ar_reduce_dot_f32_workspace_bytes(N), false);
    two("ar_scan_dot_f32", ar_scan_dot_f32, ar_scan_dot_f32_workspace_bytes(N), true);
    segmented();
    rows_and_cols();
    matmuls();
    cudaFree(g_pool);
    printf("%d passed, %d failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
