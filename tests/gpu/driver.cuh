// GPU test driver: runs every generated reduce against an independent CPU reference.
//
// This is test code, so it may use C++ templates; the generated kernels may not.  Each case
// knows how to draw random input for its operator (never zeros), how to compute the reference
// on the host, and how to compare (bit-exact for integers, matrices and min/max; a relative
// bound for float sums and products; a much tighter one for the compensated sum).
//
// Every case is an incremental fold on the host (start, step, same), so one reference serves
// reduce (fold everything, compare once) and scan (compare every prefix).
//
// Per case and size the driver: poisons the output, calls the function, checks the result,
// calls it again and checks the bits are identical, checks the workspace counter went back to
// zero (the header's workspace contract), and for small sizes also calls it on an input that
// is not 16-byte aligned.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <algorithm>
#include <limits>
#include <memory>
#include <type_traits>
#include <functional>
#include <cuda_runtime.h>

#define CK(call)                                                                              \
    do {                                                                                      \
        cudaError_t e_ = (call);                                                              \
        if (e_ != cudaSuccess) {                                                              \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call,                 \
                         cudaGetErrorString(e_));                                             \
            std::exit(2);                                                                     \
        }                                                                                     \
    } while (0)

// ---- random numbers: splitmix64, one stream per (case, size) ----------------------------------
struct Rng {
    uint64_t s;
    explicit Rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 1) {}
    uint64_t next() {
        uint64_t z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    double unit() { return (double)(next() >> 11) * (1.0 / 9007199254740992.0); }  // [0,1)
};

// Fill in parallel chunks with independent streams so 2^31-element inputs stay quick.
template <class T, class F>
void fill(std::vector<T> &v, uint64_t seed, F draw) {
    const size_t n = v.size(), chunk = 1 << 20;
#pragma omp parallel for schedule(static)
    for (long long c = 0; c < (long long)((n + chunk - 1) / chunk); ++c) {
        Rng r(seed * 1000003ull + (uint64_t)c);
        size_t lo = (size_t)c * chunk, hi = std::min(n, lo + chunk);
        for (size_t i = lo; i < hi; ++i) v[i] = draw(r, i);
    }
}

struct Result { bool ok; std::string msg; };

// ---- the functions under test, type-erased -------------------------------------------------------
template <class In, class Out>
struct ReduceFn {
    const char *name;
    size_t (*work_bytes)(size_t);
    cudaError_t (*call)(const In *, size_t, Out *, void *, size_t, cudaStream_t);
};
template <class In, class Out>
struct ScanFn {
    const char *name;
    size_t (*work_bytes)(size_t);
    cudaError_t (*call)(const In *, size_t, Out *, void *, size_t, cudaStream_t);
};
template <class In, class Out, class Acc>
struct ExScanFn {
    const char *name;
    size_t (*work_bytes)(size_t);
    cudaError_t (*call)(const In *, size_t, Out *, const Acc *, void *, size_t, cudaStream_t);
};

template <class In, class Out>
struct RowsFn {
    const char *name;
    size_t (*work_bytes)(size_t, size_t);
    cudaError_t (*call)(const In *, size_t, size_t, size_t, Out *, void *, size_t, cudaStream_t);
};

template <class In, class Out>
struct RowsScanFn {
    const char *name;
    size_t (*work_bytes)(size_t, size_t);
    cudaError_t (*call)(const In *, size_t, size_t, size_t, Out *, size_t, void *, size_t, cudaStream_t);
};

struct Stats { int passed = 0, failed = 0; };

// --exact: the scans' (plain and segmented) inputs, heads and outputs get allocations of exactly n
// elements, one per size, so that compute-sanitizer's memcheck sees any access past the caller's
// last element (the sanitizer runs use it)
static bool g_exact = false;
static size_t g_from = 0;   // --from N: the segmented reduces and reduces by key at sizes from N only

// The header's workspace contract: each call leaves the ticket counter (word 0) at zero, so that
// any function of the header may use the workspace next
static bool counter_zero(const void *work) {
    unsigned int c = 1;
    if (!work) return true;
    CK(cudaMemcpy(&c, work, 4, cudaMemcpyDeviceToHost));
    return c == 0;
}

// the workspace's header, zero between calls (tuning.SLOT0 32-bit words); past it, any data
static const size_t kWorkHeader = 256;

// A device buffer pair and a zeroed workspace sized for the largest n.
struct Buffers {
    void *in = nullptr, *out = nullptr, *work = nullptr;
    size_t work_bytes = 0;
    Buffers(size_t in_bytes, size_t out_bytes, size_t work) : work_bytes(work) {
        CK(cudaMalloc(&in, in_bytes));
        CK(cudaMalloc(&out, out_bytes));
        if (work) { CK(cudaMalloc(&this->work, work)); CK(cudaMemset(this->work, 0, work)); }
    }
    ~Buffers() { cudaFree(in); cudaFree(out); if (work) cudaFree(work); }
    bool counter_clean() const { return counter_zero(work); }
};

static uint64_t seed_for(const char *name, size_t si) {
    return 7919u * (si + 1) + std::hash<std::string>()(name) % 100000;
}

static void report(Stats &st, bool ok, const char *name, size_t max_n, size_t count) {
    if (ok) ++st.passed; else ++st.failed;
    (void)name; (void)max_n; (void)count;
}

// same value, bit for bit
template <class T>
static bool identical_impl(const T &a, const T &b, long) { return std::memcmp(&a, &b, sizeof a) == 0; }
template <class T>   // (value, index) pairs: padding bytes are not part of the value
static auto identical_impl(const T &a, const T &b, int) -> decltype(a.index, bool()) {
    return std::memcmp(&a.value, &b.value, sizeof a.value) == 0 && a.index == b.index;
}
template <class T>
static bool identical(const T &a, const T &b) { return identical_impl(a, b, 0); }
template <class T>
static bool identical(const std::vector<T> &a, const std::vector<T> &b, size_t m) {
    for (size_t i = 0; i < m; ++i) if (!identical(a[i], b[i])) return false;
    return true;
}

// `call(stream)` captured into a CUDA graph on a stream of its own twice over (the second call right
// after the first, on the same workspace), then the graph replayed `times` times and waited for;
// false (after a line) where the call or the graph fails.  Work queued before (a poisoning
// memset on the legacy stream) is waited for first: the stream does not order itself after it.
// bit for bit, with the bytes of both when they differ
template <class T>
static Result exact(const T &got, const T &want)
{
    if (identical(got, want))
        return { true, "" };
    std::string m = "got";
    char b[8];
    for (size_t k = 0; k < sizeof got; ++k) {
        snprintf(b, sizeof b, " %02x", ((const unsigned char *)&got)[k]);
        m += b;
    }
    m += ", want";
    for (size_t k = 0; k < sizeof want; ++k) {
        snprintf(b, sizeof b, " %02x", ((const unsigned char *)&want)[k]);
        m += b;
    }
    return { false, m };
}

template <class Call>
static bool graph_call(Call call, int times) {
    cudaStream_t s;
    cudaGraph_t g = nullptr;
    cudaGraphExec_t ge = nullptr;
    CK(cudaDeviceSynchronize());
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    cudaError_t e = call(s);
    if (e == cudaSuccess) e = call(s);
    cudaError_t e2 = cudaStreamEndCapture(s, &g);
    if (e == cudaSuccess && e2 == cudaSuccess) e2 = cudaGraphInstantiate(&ge, g, 0);
    for (int k = 0; k < times && e == cudaSuccess && e2 == cudaSuccess; ++k) e2 = cudaGraphLaunch(ge, s);
    if (e == cudaSuccess && e2 == cudaSuccess) e2 = cudaStreamSynchronize(s);
    if (e != cudaSuccess || e2 != cudaSuccess)
        std::printf("graph: %s\n", cudaGetErrorString(e != cudaSuccess ? e : e2));
    if (ge) cudaGraphExecDestroy(ge);
    if (g) cudaGraphDestroy(g);
    CK(cudaStreamDestroy(s));
    return e == cudaSuccess && e2 == cudaSuccess;
}

// ---- reduce: fold everything, compare once --------------------------------------------------------
template <class In, class Out, class Case>
void run_reduce(ReduceFn<In, Out> fn, Case c, const std::vector<size_t> &sizes, Stats &st) {
    size_t max_n = 0, work = 0;
    for (size_t n : sizes) { max_n = std::max(max_n, n); work = std::max(work, fn.work_bytes(n)); }
    Buffers b((max_n + 1) * sizeof(In), sizeof(Out), work);
    for (size_t si = 0; si < sizes.size(); ++si) {
        const size_t n = sizes[si];
        std::vector<In> h(n + 1);
        c.gen(h, seed_for(fn.name, si));
        CK(cudaMemcpy(b.in, h.data(), n * sizeof(In), cudaMemcpyHostToDevice));
        bool ok = true;
        for (int shifted = 0; shifted < 2 && ok; ++shifted) {
            if (shifted && (n < 2 || n > (1u << 21))) break;   // input one element in: not 16-byte aligned
            const In *dev = (const In *)b.in + shifted, *host = h.data() + shifted;
            const size_t m = n - shifted;
            Out got1, got2;
            CK(cudaMemset(b.out, 0xAB, sizeof(Out)));   // poison: an unwritten result fails
            cudaError_t e = fn.call(dev, m, (Out *)b.out, b.work, b.work_bytes, 0);
            if (e == cudaSuccess) e = cudaDeviceSynchronize();
            if (e != cudaSuccess) { std::printf("FAIL %s n=%zu: %s\n", fn.name, m, cudaGetErrorString(e)); ok = false; break; }
            CK(cudaMemcpy(&got1, b.out, sizeof(Out), cudaMemcpyDeviceToHost));
            CK(cudaMemset(b.out, 0xAB, sizeof(Out)));   // same poison: struct padding is never written
            CK(fn.call(dev, m, (Out *)b.out, b.work, b.work_bytes, 0));
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(&got2, b.out, sizeof(Out), cudaMemcpyDeviceToHost));
            // captured into a CUDA graph (where a reduce may fold its blocks' totals by a kernel of
            // their own), two calls in a row, replayed twice: the same bits again
            Out got3;
            CK(cudaMemset(b.out, 0xAB, sizeof(Out)));
            const bool graphed = graph_call([&](cudaStream_t s) { return fn.call(dev, m, (Out *)b.out, b.work, b.work_bytes, s); }, 2);
            CK(cudaMemcpy(&got3, b.out, sizeof(Out), cudaMemcpyDeviceToHost));
            auto ref = c.start();
            for (size_t i = 0; i < m; ++i) ref = c.step(ref, host[i], i);
            Result r = c.same(got1, ref);
            if (r.ok && !identical(got1, got2)) r = {false, "second call gave different bits"};
            if (r.ok && !graphed) r = {false, "the call captured into a graph failed"};
            if (r.ok && !identical(got1, got3)) r = {false, "the call replayed from a graph gave different bits"};
            if (r.ok && !b.counter_clean()) r = {false, "workspace counter not returned to zero"};
            if (!r.ok) { std::printf("FAIL %s n=%zu%s: %s\n", fn.name, m, shifted ? " (unaligned)" : "", r.msg.c_str()); ok = false; }
        }
        report(st, ok, fn.name, max_n, sizes.size());
    }
    std::printf("  %-36s %zu sizes up to %zu\n", fn.name, sizes.size(), max_n);
    std::fflush(stdout);
}

// ---- along rows (down = false): each row of a rows x cols array with a pitch folded on its own; down
// columns (down = true): each column folded down the rows, in order ---------------------------------
// Shapes: rows and cols from {1, 2, 31, 32, 33, 1000, 2^20 + 7} in combination (up to 2^24
// elements; quick: 2^21), and long rows that are few (several blocks a row); pitches of cols and
// of cols + 3; the input one element past the allocation's start (off 16-byte words) for some.
// Every allocation is exact, the workspace too; each result is compared with an in-order CPU fold.
template <class In, class Out, class Case>
void run_rows(RowsFn<In, Out> fn, Case c, bool quick, Stats &st, bool down = false) {
    const size_t dims[] = {1, 2, 31, 32, 33, 1000, (1u << 20) + 7};
    struct Shape { size_t rows, cols, pad, shift; };
    std::vector<Shape> shapes;
    const size_t most = quick ? (size_t)1 << 21 : (size_t)1 << 24;
    for (size_t r : dims)
        for (size_t cc : dims)
            if (r * cc <= most) shapes.push_back({r, cc, (r + cc) % 2 ? 3u : 0u, (r * 7 + cc) % 3 == 0 ? 1u : 0u});
    if (!down) {
        shapes.push_back({3, 0, 0, 0});                      // empty rows: the identity
        shapes.push_back({64, quick ? 65543u : 1u << 20, 0, 0});   // long rows, few: several blocks a row
        shapes.push_back({5, 300007, 3, 1});
        shapes.push_back({1, 1000003, 0, 0});
    } else {
        shapes.push_back({0, 5, 0, 0});                      // no rows: the identity
        shapes.push_back({quick ? 65543u : 1u << 20, 16, 0, 0});   // long columns, few: chunks of rows
        shapes.push_back({300007, 5, 3, 1});
        shapes.push_back({1000003, 1, 0, 0});
    }
    if (!quick && sizeof(In) == 1 && std::strstr(fn.name, "sum_u8")) {   // past 2^31 elements: in total, and in one row or column
        const size_t big = ((size_t)1 << 31) + 17, third = ((size_t)1 << 30) + 7;
        shapes.push_back(down ? Shape{big, 1, 0, 0} : Shape{1, big, 0, 0});
        shapes.push_back(down ? Shape{third, 3, 0, 0} : Shape{3, third, 0, 0});
    }
    int done = 0;
    for (size_t si = 0; si < shapes.size(); ++si) {
        const Shape &s = shapes[si];
        const size_t pitch = s.cols + s.pad, n = s.rows ? (s.rows - 1) * pitch + s.cols : 0;
        std::vector<In> h(s.shift + n + 1);
        c.gen(h, seed_for(fn.name, si));
        In *din = nullptr;
        Out *dout = nullptr;
        void *work = nullptr;
        const size_t work_bytes = fn.work_bytes(s.rows, s.cols);
        CK(cudaMalloc(&din, (s.shift + n) * sizeof(In) + 1));
        const size_t outs = down ? s.cols : s.rows;
        CK(cudaMalloc(&dout, outs * sizeof(Out) + 1));
        if (work_bytes) { CK(cudaMalloc(&work, work_bytes)); CK(cudaMemset(work, 0, work_bytes)); }
        CK(cudaMemcpy(din, h.data(), (s.shift + n) * sizeof(In), cudaMemcpyHostToDevice));
        CK(cudaMemset(dout, 0xAB, outs * sizeof(Out)));   // poison: an unwritten result fails
        bool ok = true;
        cudaError_t e = fn.call(din + s.shift, s.rows, s.cols, pitch, dout, work, work_bytes, 0);
        if (e == cudaSuccess) e = cudaDeviceSynchronize();
        if (e != cudaSuccess) {
            std::printf("FAIL %s %zu x %zu: %s\n", fn.name, s.rows, s.cols, cudaGetErrorString(e));
            ok = false;
        } else if (!counter_zero(work)) {
            std::printf("FAIL %s %zu x %zu: workspace counter not zero\n", fn.name, s.rows, s.cols);
            ok = false;
        } else {
            std::vector<Out> got(outs);
            CK(cudaMemcpy(got.data(), dout, outs * sizeof(Out), cudaMemcpyDeviceToHost));
            const In *base = h.data() + s.shift;
            for (size_t o = 0; o < outs && ok; ++o) {
                auto ref = c.start();
                if (down)
                    for (size_t r = 0; r < s.rows; ++r) ref = c.step(ref, base[r * pitch + o], r);
                else
                    for (size_t i = 0; i < s.cols; ++i) ref = c.step(ref, base[o * pitch + i], i);
                Result res = c.same(got[o], ref);
                if (!res.ok) {
                    std::printf("FAIL %s %zu x %zu pitch %zu shift %zu: %s %zu: %s\n", fn.name, s.rows, s.cols, pitch,
                                s.shift, down ? "column" : "row", o, res.msg.c_str());
                    ok = false;
                }
            }
        }
        cudaFree(din);
        cudaFree(dout);
        cudaFree(work);
        report(st, ok, fn.name, 0, shapes.size());
        ++done;
    }
    std::printf("  %-36s %d shapes %s\n", fn.name, done, down ? "down columns" : "along rows");
    std::fflush(stdout);
}

// Scans along rows (inclusive, or exclusive: `exclusive`): the same shapes as run_rows' (rows and
// cols from the set in combination, pitches past a row, inputs off 16-byte words, long rows that
// are few), each output with a pitch of its own (past a row, or off 16-byte words), and one in
// place where the output type is the input's.  Every element is compared with the in-order CPU
// fold of its row; allocations are exact.
template <class In, class Out, class Case>
void run_rows_scan(RowsScanFn<In, Out> fn, Case c, bool quick, Stats &st, bool exclusive) {
    const size_t dims[] = {1, 2, 31, 32, 33, 1000, (1u << 20) + 7};
    struct Shape { size_t rows, cols, pad, shift, out_pad; bool in_place; };
    std::vector<Shape> shapes;
    const size_t most = quick ? (size_t)1 << 21 : (size_t)1 << 24;
    for (size_t r : dims)
        for (size_t cc : dims)
            if (r * cc <= most)
                shapes.push_back({r, cc, (r + cc) % 2 ? 3u : 0u, (r * 7 + cc) % 3 == 0 ? 1u : 0u, (r + 2 * cc) % 3, false});
    shapes.push_back({3, 0, 0, 0, 0, false});                             // empty rows: nothing written
    shapes.push_back({64, quick ? 65543u : 1u << 20, 0, 0, 0, false});    // long rows, few: the whole GPU, one launch
    shapes.push_back({5, 300007, 3, 1, 1, false});
    shapes.push_back({1, 1000003, 0, 0, 0, false});
    shapes.push_back({4000, 16, 0, 0, 0, false});                         // many short rows
    shapes.push_back({9000, 4096, 0, 0, 0, false});                       // many long rows: a warp a row
    shapes.push_back({100, 5000, 0, 1, 0, false});                        // long rows, few, of few rounds: a block a row
    if (!quick && sizeof(In) == 1 && std::strstr(fn.name, "sum_u8")) {   // past 2^31 elements: in total, and in one row
        shapes.push_back({1, ((size_t)1 << 31) + 17, 0, 0, 0, false});
        shapes.push_back({3, ((size_t)1 << 30) + 7, 0, 0, 0, false});
    }
    if (std::is_same<In, Out>::value) {
        shapes.push_back({1000, 1000, 4, 0, 0, true});                    // in place
        shapes.push_back({33, 70001, 0, 0, 0, true});
    }
    int done = 0;
    for (size_t si = 0; si < shapes.size(); ++si) {
        const Shape &s = shapes[si];
        const size_t pitch = s.cols + s.pad, n = s.rows ? (s.rows - 1) * pitch + s.cols : 0;
        const size_t out_pitch = s.in_place ? pitch : s.cols + s.out_pad;
        const size_t out_n = s.rows ? (s.rows - 1) * out_pitch + s.cols : 0;
        const size_t oshift = s.in_place ? s.shift : s.out_pad % 2;   // output off 16-byte words too
        std::vector<In> h(s.shift + n + 1);
        c.gen(h, seed_for(fn.name, si));
        In *din = nullptr;
        Out *dout = nullptr;
        void *work = nullptr;
        const size_t work_bytes = fn.work_bytes(s.rows, s.cols);
        CK(cudaMalloc(&din, (s.shift + n) * sizeof(In) + 1));
        if (!s.in_place) CK(cudaMalloc(&dout, (oshift + out_n) * sizeof(Out) + 1));
        if (work_bytes) { CK(cudaMalloc(&work, work_bytes)); CK(cudaMemset(work, 0, work_bytes)); }
        CK(cudaMemcpy(din, h.data(), (s.shift + n) * sizeof(In), cudaMemcpyHostToDevice));
        Out *out = s.in_place ? (Out *)(void *)(din + s.shift) : dout + oshift;
        if (!s.in_place) CK(cudaMemset(dout, 0xAB, (oshift + out_n) * sizeof(Out) + 1));   // poison
        bool ok = true;
        cudaError_t e = fn.call(din + s.shift, s.rows, s.cols, pitch, out, out_pitch, work, work_bytes, 0);
        if (e == cudaSuccess) e = cudaDeviceSynchronize();
        if (e != cudaSuccess) {
            std::printf("FAIL %s %zu x %zu: %s\n", fn.name, s.rows, s.cols, cudaGetErrorString(e));
            ok = false;
        } else if (!counter_zero(work)) {
            std::printf("FAIL %s %zu x %zu: workspace counter not zero\n", fn.name, s.rows, s.cols);
            ok = false;
        } else {
            std::vector<Out> got(out_n);
            if (out_n) CK(cudaMemcpy(got.data(), out, out_n * sizeof(Out), cudaMemcpyDeviceToHost));
            const In *base = h.data() + s.shift;
            for (size_t r = 0; r < s.rows && ok; ++r) {
                auto ref = c.start();
                for (size_t i = 0; i < s.cols && ok; ++i) {
                    if (!exclusive) ref = c.step(ref, base[r * pitch + i], i);
                    Result res = c.same(got[r * out_pitch + i], ref);
                    if (exclusive) ref = c.step(ref, base[r * pitch + i], i);
                    if (!res.ok) {
                        std::printf("FAIL %s %zu x %zu pitch %zu out_pitch %zu shift %zu%s: [%zu][%zu]: %s\n", fn.name,
                                    s.rows, s.cols, pitch, out_pitch, s.shift, s.in_place ? " in place" : "", r, i,
                                    res.msg.c_str());
                        ok = false;
                    }
                }
            }
        }
        cudaFree(din);
        cudaFree(dout);
        cudaFree(work);
        report(st, ok, fn.name, 0, shapes.size());
        ++done;
    }
    std::printf("  %-36s %d shapes along rows\n", fn.name, done);
    std::fflush(stdout);
}

// ---- segments: lengths drawn from several distributions -------------------------------------------
// 0: 1..16   1: all 1   2: one segment   3: power law (1 .. 2^17)   4: 1..3000 (cross tile bounds; a segmented reduce by offsets: a block a segment)
// 5: with empty segments (offsets only: lengths 0..3, often 0, and now and then 1000s)
// offsets only, one for each group size of a segmented reduce by spans (tuning.SEGMENT_SPAN_LANES):
// 6..10: 1..2K-1 for K = 16, 32, 64, 128, 256 (2, 4, 8, 16 and 32 lanes a segment); 11: 1..4 with
// one in 256 of 300..3000 (a lane a segment, its long ones to the block)
// past 2^22 elements (where a segmented reduce by spans splits segments longer than a chunk across
// blocks, tuning.SEGMENT_SPAN_SPLIT_N): 12: 1..16 with one in 64 of 40000..2^21 (a block a segment,
// some split); 13: 1..4 with one in 4096 of 10^5..4 10^5 (8 lanes a segment, the long ones split)
static const char *const DIST_NAMES[] = {"1..16", "ones",   "one",    "power",   "1..3000", "empties", "avg16",
                                         "avg32", "avg64",  "avg128", "avg256",  "spikes",  "giants",  "rare giants"};
// the distributions past 2^22 elements: by offsets 1..16, power, one, giants, rare giants; else the first two
static int big_dist(int dist) { static const int d[] = {0, 3, 2, 12, 13}; return d[dist]; }
static std::vector<size_t> segment_lengths(size_t n, int dist, uint64_t seed, bool allow_empty) {
    Rng r(seed * 31 + (uint64_t)dist);
    std::vector<size_t> len;
    size_t total = 0;
    while (total < n || (allow_empty && dist == 5 && len.size() < 4)) {
        size_t l;
        switch (dist) {
        case 0: l = 1 + r.next() % 16; break;
        case 1: l = 1; break;
        case 2: l = n; break;
        case 3: l = (size_t)std::pow(2.0, r.unit() * 17.0); break;
        case 4: l = 1 + r.next() % 3000; break;   // averaging 1500: a block a segment up to 2^22
        case 6: case 7: case 8: case 9: case 10: l = 1 + r.next() % ((32u << (dist - 6)) - 1); break;
        case 11: l = r.next() % 256 ? 1 + r.next() % 4 : 300 + r.next() % 2701; break;
        case 12: l = r.next() % 64 ? 1 + r.next() % 16 : 40000 + r.next() % 2000000; break;
        case 13: l = r.next() % 4096 ? 1 + r.next() % 4 : 100000 + r.next() % 300000; break;
        default: { uint64_t u = r.next() % 16; l = u < 8 ? 0 : u < 15 ? 1 + u % 3 : 1000 + r.next() % 5000; }
        }
        if (!allow_empty && l == 0) l = 1;
        l = std::min(l, n - total);
        len.push_back(l);
        total += l;
        if (total == n && !(allow_empty && dist == 5 && len.size() < 4)) break;
        if (n == 0 && len.size() >= 4) break;
    }
    return len;
}
// head[i] = 1 where a segment starts (element 0 always)
static std::vector<uint8_t> heads_from(const std::vector<size_t> &len, size_t n) {
    std::vector<uint8_t> h(n, 0);
    size_t p = 0;
    for (size_t l : len) { if (l && p < n) h[p] = 1; p += l; }
    if (n) h[0] = 1;
    return h;
}

// ---- scan (plain or segmented): compare every prefix ---------------------------------------------
// Heads: void (plain scan), uint8_t (flags), or a key type.  call(in, heads, n, out, work, bytes).
// A kernel that lets the kernels after it in at once (programmatic dependent launch, sm_90), then
// spins for ~20 us and only then writes dst: a call launched right after it that read its input
// before the writes were done would see the poison.
static __global__ void slow_producer(const unsigned char *src, unsigned char *dst, size_t bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
    const long long start = clock64();
    while (clock64() - start < 40000) {
    }
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < bytes; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = src[i];
}

// Mode 3 of a scan (In == Out; segmented: by `heads`): the input written by a slow kernel just before the call,
// then a second call on the first one's results right after it, no sync between.  Each must read
// its input whole: the first gives `got` (the input's checked scan, bit for bit), the second what
// the same call gives once its input is settled; and the workspace counter is back at zero.
template <class In, class Out, class H, class Call>
bool chained_call(const char *name, const std::vector<In> &h, size_t n, Buffers &b, const std::vector<Out> &got,
                  Call call, const H *heads) {
    std::vector<Out> first(n), chained(n), again(n);
    void *src = nullptr;
    CK(cudaMalloc(&src, n * sizeof(In)));
    CK(cudaMemcpy(src, h.data(), n * sizeof(In), cudaMemcpyHostToDevice));
    CK(cudaMemset(b.in, 0xAB, n * sizeof(In)));
    CK(cudaMemset(b.out, 0xAB, n * sizeof(Out)));
    CK(cudaDeviceSynchronize());
    slow_producer<<<264, 256>>>((const unsigned char *)src, (unsigned char *)b.in, n * sizeof(In));
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) e = call((const In *)b.in, heads, n, (Out *)b.out, b.work, b.work_bytes);
    if (e == cudaSuccess) e = call((const In *)b.out, heads, n, (Out *)b.in, b.work, b.work_bytes);
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = cudaMemcpy(first.data(), b.out, n * sizeof(Out), cudaMemcpyDeviceToHost);
    if (e == cudaSuccess) e = cudaMemcpy(chained.data(), b.in, n * sizeof(Out), cudaMemcpyDeviceToHost);
    if (e == cudaSuccess) e = call((const In *)b.out, heads, n, (Out *)b.in, b.work, b.work_bytes);
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = cudaMemcpy(again.data(), b.in, n * sizeof(Out), cudaMemcpyDeviceToHost);
    CK(cudaFree(src));
    if (e != cudaSuccess) {
        std::printf("FAIL %s n=%zu chained: %s\n", name, n, cudaGetErrorString(e));
        return false;
    }
    if (!identical(first, got, n)) {
        std::printf("FAIL %s n=%zu: a call right after the kernel writing its input read other bits\n", name, n);
        return false;
    }
    if (!identical(chained, again, n)) {
        std::printf("FAIL %s n=%zu: a call right after the one writing its input read other bits\n", name, n);
        return false;
    }
    if (!b.counter_clean()) {
        std::printf("FAIL %s n=%zu chained: workspace counter not zero\n", name, n);
        return false;
    }
    return true;
}

template <class In, class Out, class Heads, class Case, class Call>
void run_scan_impl(const char *name, size_t (*work_bytes)(size_t), Call call, bool exclusive, Case c,
                   const std::vector<size_t> &sizes, Stats &st, bool by_key = false) {
    constexpr bool segmented = !std::is_void<Heads>::value;
    using H = typename std::conditional<segmented, Heads, uint8_t>::type;
    size_t max_n = 0, work = 0;
    for (size_t n : sizes) { max_n = std::max(max_n, n); work = std::max(work, work_bytes(n)); }
    const size_t room = g_exact ? 1 : max_n + 1;      // elements; --exact: per size, below
    Buffers whole(room * sizeof(In), room * sizeof(Out), work);
    H *dev_heads = nullptr;
    if (segmented) CK(cudaMalloc(&dev_heads, room * sizeof(H)));
    for (size_t si = 0; si < sizes.size(); ++si) {
        const size_t n = sizes[si];
        std::unique_ptr<Buffers> exact;
        if (g_exact) {
            exact.reset(new Buffers(std::max<size_t>(n, 1) * sizeof(In), std::max<size_t>(n, 1) * sizeof(Out), work));
            if (segmented) { CK(cudaFree(dev_heads)); CK(cudaMalloc(&dev_heads, std::max<size_t>(n, 1) * sizeof(H))); }
        }
        Buffers &b = g_exact ? *exact : whole;
        std::vector<In> h(n + 1);
        std::vector<Out> got(n + 1), again(n + 1);
        c.gen(h, seed_for(name, si));
        bool ok = true;
        const int dists = segmented ? (n > (1u << 22) ? 2 : 5) : 1;
        for (int dist = 0; dist < dists && ok; ++dist) {
            // the heads: flags (random nonzero bytes at segment starts) or keys (a new key each segment)
            std::vector<uint8_t> head(n, 0);
            std::vector<H> hh(n + 1, (H)0);
            if (segmented) {
                const int d = n > (1u << 22) ? (dist == 0 ? 0 : 3) : dist;
                head = heads_from(segment_lengths(n, d, seed_for(name, si), false), n);
                Rng r(seed_for(name, si) + 99);
                H key = (H)(r.next());
                for (size_t i = 0; i < n; ++i) {
                    if (!by_key) hh[i] = head[i] ? (H)(1 + r.next() % 255) : (H)0;
                    else { if (head[i] && i) key = (H)(key + (H)(1 + r.next() % 100)); hh[i] = key; }
                }
                if (n && !by_key && (r.next() & 1)) hh[0] = 0;   // a segment starts at 0 anyway
                CK(cudaMemcpy(dev_heads, hh.data(), n * sizeof(H), cudaMemcpyHostToDevice));
            }
            // 0: aligned, out of place; 1: one element in (unaligned); 2: in place; 3: after a
            // kernel that writes the input (below)
            for (int mode = 0; mode < 4 && ok; ++mode) {
                if (mode == 1 && (n < 2 || n > (1u << 21))) continue;
                if (mode == 2 && (!std::is_same<In, Out>::value || n > (1u << 21) || dist > 0)) continue;
                if (mode == 3) {
                    if (n == 0 || n > (1u << 23) || !std::is_same<In, Out>::value || dist > 0) continue;
                    ok = chained_call(name, h, n, b, got, call, dev_heads);
                    continue;
                }
                const size_t shift = mode == 1 ? 1 : 0, m = n - shift;
                CK(cudaMemcpy(b.in, h.data(), n * sizeof(In), cudaMemcpyHostToDevice));
                const In *dev_in = (const In *)b.in + shift;
                Out *dev_out = mode == 2 ? (Out *)b.in : (Out *)b.out + shift;
                for (int rep = 0; rep < 2 && ok; ++rep) {
                    if (rep == 1 && mode == 2) break;       // in place overwrote the input
                    if (mode != 2) CK(cudaMemset(b.out, 0xAB, (g_exact ? n : n + 1) * sizeof(Out)));
                    cudaError_t e = call(dev_in, dev_heads ? dev_heads + shift : nullptr, m, dev_out, b.work, b.work_bytes);
                    if (e == cudaSuccess) e = cudaDeviceSynchronize();
                    if (e != cudaSuccess) { std::printf("FAIL %s n=%zu: %s\n", name, m, cudaGetErrorString(e)); ok = false; break; }
                    CK(cudaMemcpy(rep ? again.data() : got.data(), dev_out, m * sizeof(Out), cudaMemcpyDeviceToHost));
                }
                if (!ok) break;
                if (mode != 2 && !identical(got, again, m)) {
                    std::printf("FAIL %s n=%zu: second call gave different bits\n", name, m);
                    ok = false;
                    break;
                }
                auto ref = c.start();
                const In *x = h.data() + shift;
                for (size_t i = 0; i < m; ++i) {
                    if (segmented && i > 0 && head[i + shift]) ref = c.start();
                    if (!exclusive) ref = c.step(ref, x[i], i);
                    Result r = c.same(got[i], ref);
                    if (!r.ok) {
                        std::printf("FAIL %s n=%zu mode=%s%s%s at i=%zu: %s\n", name, m,
                                    mode == 0 ? "aligned" : mode == 1 ? "unaligned" : "in-place",
                                    segmented ? " segments=" : "", segmented ? DIST_NAMES[dist] : "", i, r.msg.c_str());
                        ok = false;
                        break;
                    }
                    if (exclusive) ref = c.step(ref, x[i], i);
                }
                if (ok && mode == 0 && !b.counter_clean()) { std::printf("FAIL %s n=%zu: workspace counter not zero\n", name, m); ok = false; }
            }
        }
        report(st, ok, name, max_n, sizes.size());
    }
    if (dev_heads) CK(cudaFree(dev_heads));
    std::printf("  %-36s %zu sizes up to %zu\n", name, sizes.size(), max_n);
    std::fflush(stdout);
}

template <class In, class Out, class Case>
void run_scan(ScanFn<In, Out> fn, Case c, const std::vector<size_t> &sizes, Stats &st) {
    auto call = [fn](const In *i, const uint8_t *, size_t n, Out *o, void *w, size_t wb) { return fn.call(i, n, o, w, wb, 0); };
    run_scan_impl<In, Out, void>(fn.name, fn.work_bytes, call, false, c, sizes, st);
}

template <class In, class Out, class Acc, class Case>
void run_exscan(ExScanFn<In, Out, Acc> fn, Case c, const std::vector<size_t> &sizes, Stats &st) {
    auto call = [fn](const In *i, const uint8_t *, size_t n, Out *o, void *w, size_t wb) { return fn.call(i, n, o, nullptr, w, wb, 0); };
    run_scan_impl<In, Out, void>(fn.name, fn.work_bytes, call, true, c, sizes, st);
}

// segmented scans: by flags (H = uint8_t) or by keys (H = the key type); init NULL when exclusive
template <class In, class Out, class H>
struct SegScanFn {
    const char *name;
    size_t (*work_bytes)(size_t);
    cudaError_t (*call)(const In *, const H *, size_t, Out *, void *, size_t, cudaStream_t);
    bool by_key;       // H holds keys (else head flags)
};
template <class In, class Out, class H, class Acc>
struct ExSegScanFn {
    const char *name;
    size_t (*work_bytes)(size_t);
    cudaError_t (*call)(const In *, const H *, size_t, Out *, const Acc *, void *, size_t, cudaStream_t);
    bool by_key;
};
template <class In, class Out, class H, class Case>
void run_segscan(SegScanFn<In, Out, H> fn, Case c, const std::vector<size_t> &sizes, Stats &st) {
    auto call = [fn](const In *i, const H *h, size_t n, Out *o, void *w, size_t wb) { return fn.call(i, h, n, o, w, wb, 0); };
    run_scan_impl<In, Out, H>(fn.name, fn.work_bytes, call, false, c, sizes, st, fn.by_key);
}
template <class In, class Out, class H, class Acc, class Case>
void run_exsegscan(ExSegScanFn<In, Out, H, Acc> fn, Case c, const std::vector<size_t> &sizes, Stats &st) {
    auto call = [fn](const In *i, const H *h, size_t n, Out *o, void *w, size_t wb) { return fn.call(i, h, n, o, nullptr, w, wb, 0); };
    run_scan_impl<In, Out, H>(fn.name, fn.work_bytes, call, true, c, sizes, st, fn.by_key);
}

// An exclusive scan with a caller's initial value: the reference starts from it.
template <class T>
void run_exscan_init(ExScanFn<T, T, T> fn, T init, const std::vector<size_t> &sizes, Stats &st);

// ---- reduce by key: one result per run of equal keys ---------------------------------------------
template <class In, class Out, class K>
struct ReduceByKeyFn {
    const char *name;
    size_t (*work_bytes)(size_t);
    cudaError_t (*call)(const In *, const K *, size_t, Out *, K *, size_t *, void *, size_t, cudaStream_t);
};
// ---- segmented reduce by offsets: d_out[s] = fold of [off[s], off[s+1]) ----------------------------
template <class In, class Out, class O>
struct SegReduceFn {
    const char *name;
    size_t (*work_bytes)(size_t);
    cudaError_t (*call)(const In *, size_t, const O *, size_t, Out *, void *, size_t, cudaStream_t);
};

// Both: the segments from each distribution; results compared per segment, run twice for bits.
template <class In, class Out, class K, class Case, bool by_key>
void run_segments_impl(const char *name, size_t (*work_bytes)(size_t), std::function<cudaError_t(const In *, const K *, size_t, size_t, Out *, K *, size_t *, void *, size_t)> call,
                       Case c, const std::vector<size_t> &sizes, Stats &st) {
    size_t max_n = 0, work = 0;
    for (size_t n : sizes) { max_n = std::max(max_n, n); work = std::max(work, work_bytes(n)); }
    Buffers b((max_n + 1) * sizeof(In), (max_n + 1) * sizeof(Out), work);
    K *dev_k = nullptr, *dev_uk = nullptr;
    size_t *dev_count = nullptr;
    const size_t max_segs = max_n + 64;      // empty segments add a few beyond n
    CK(cudaMalloc(&dev_k, (max_segs + 1) * sizeof(K)));
    CK(cudaMalloc(&dev_uk, (max_segs + 1) * sizeof(K)));
    CK(cudaMalloc(&dev_count, sizeof(size_t)));
    for (size_t si = 0; si < sizes.size(); ++si) {
        const size_t n = sizes[si];
        if (n < g_from) continue;
        std::vector<In> h(n + 1);
        c.gen(h, seed_for(name, si));
        CK(cudaMemcpy(b.in, h.data(), n * sizeof(In), cudaMemcpyHostToDevice));
        bool ok = true;
        const int dists = n > (1u << 22) ? (by_key ? 2 : 5) : by_key ? 5 : 12;
        for (int dist = 0; dist < dists && ok; ++dist) {
            const int d = n > (1u << 22) ? big_dist(dist) : dist;
            std::vector<size_t> len = segment_lengths(n, d, seed_for(name, si), !by_key);
            // by key: the keys of each element; by offsets: the m+1 offsets (first one not 0 now and then)
            std::vector<K> kv;
            std::vector<size_t> starts;
            Rng r(seed_for(name, si) + 7);
            if (by_key) {
                K key = (K)r.next();
                for (size_t j = 0; j < len.size(); ++j) {
                    if (j) key = (K)(key + (K)(1 + r.next() % 100));
                    for (size_t q = 0; q < len[j]; ++q) kv.push_back(key);
                }
            } else {
                size_t p = 0;
                if (d == 5 && len[0] >= 3) { p = 3; len[0] -= 3; }      // skip a few at the start
                for (size_t l : len) { kv.push_back((K)p); starts.push_back(p); p += l; }
                kv.push_back((K)p);
                if (d == 5 && p > 2 && len.back() > 2) kv.back() = (K)(p - 2);         // and at the end
            }
            CK(cudaMemcpy(dev_k, kv.data(), kv.size() * sizeof(K), cudaMemcpyHostToDevice));
            const size_t m = by_key ? 0 : kv.size() - 1;
            // reference
            std::vector<decltype(c.start())> want;
            std::vector<K> want_keys;
            if (by_key) {
                for (size_t i = 0; i < n; ++i) {
                    if (i == 0 || kv[i] != kv[i - 1]) { want.push_back(c.start()); want_keys.push_back(kv[i]); }
                    want.back() = c.step(want.back(), h[i], i);
                }
            } else {
                for (size_t s = 0; s < m; ++s) {
                    auto acc = c.start();
                    for (size_t i = (size_t)kv[s]; i < (size_t)kv[s + 1]; ++i) acc = c.step(acc, h[i], i);
                    want.push_back(acc);
                }
            }
            const size_t outs = by_key ? want.size() : m;
            std::vector<Out> got(outs + 1), again(outs + 1);
            std::vector<K> got_keys(outs + 1);
            for (int rep = 0; rep < 2 && ok; ++rep) {
                if (rep == 1 && !by_key && n > (1u << 22) && b.work_bytes > kWorkHeader) {
                    // the contract keeps only the header zero between calls: another function's
                    // data past it, here segment numbers that fit this call's, must not count
                    std::vector<size_t> junk((b.work_bytes - kWorkHeader) / sizeof(size_t));
                    for (size_t j = 0; j < junk.size(); ++j) junk[j] = (j * 7919) % (m + 2);
                    CK(cudaMemcpy((char *)b.work + kWorkHeader, junk.data(), junk.size() * sizeof(size_t), cudaMemcpyHostToDevice));
                }
                CK(cudaMemset(b.out, 0xAB, (outs + 1) * sizeof(Out)));
                CK(cudaMemset(dev_count, 0xAB, sizeof(size_t)));
                cudaError_t e = call((const In *)b.in, dev_k, n, m, (Out *)b.out, dev_uk, dev_count, b.work, b.work_bytes);
                if (e == cudaSuccess) e = cudaDeviceSynchronize();
                if (e != cudaSuccess) { std::printf("FAIL %s n=%zu: %s\n", name, n, cudaGetErrorString(e)); ok = false; break; }
                CK(cudaMemcpy(rep ? again.data() : got.data(), b.out, outs * sizeof(Out), cudaMemcpyDeviceToHost));
                if (by_key && rep == 0) {
                    size_t count = 0;
                    CK(cudaMemcpy(&count, dev_count, sizeof count, cudaMemcpyDeviceToHost));
                    CK(cudaMemcpy(got_keys.data(), dev_uk, outs * sizeof(K), cudaMemcpyDeviceToHost));
                    if (count != outs) { std::printf("FAIL %s n=%zu segments=%s: %zu runs, want %zu\n", name, n, DIST_NAMES[d], count, outs); ok = false; }
                }
            }
            if (!ok) break;
            if (!identical(got, again, outs)) { std::printf("FAIL %s n=%zu: second call gave different bits\n", name, n); ok = false; break; }
            for (size_t s = 0; s < outs && ok; ++s) {
                Result res = c.same(got[s], want[s]);
                if (res.ok && by_key && got_keys[s] != want_keys[s]) res = {false, "wrong key"};
                if (!res.ok) {
                    std::printf("FAIL %s n=%zu segments=%s (%zu) at segment %zu: %s\n", name, n, DIST_NAMES[d], outs, s, res.msg.c_str());
                    ok = false;
                }
            }
            if (ok && !b.counter_clean()) { std::printf("FAIL %s n=%zu: workspace counter not zero\n", name, n); ok = false; }
            if (ok && !by_key && dist % 3 == 0 && n > 0) {
                // by offsets, the input one element past where it was (off 16 bytes: no whole words)
                In *shifted = (In *)b.in + 1;
                CK(cudaMemcpy(shifted, h.data(), n * sizeof(In), cudaMemcpyHostToDevice));
                CK(cudaMemset(b.out, 0xAB, (outs + 1) * sizeof(Out)));
                cudaError_t e = call(shifted, dev_k, n, m, (Out *)b.out, dev_uk, dev_count, b.work, b.work_bytes);
                if (e == cudaSuccess) e = cudaDeviceSynchronize();
                if (e != cudaSuccess) { std::printf("FAIL %s n=%zu (unaligned): %s\n", name, n, cudaGetErrorString(e)); ok = false; break; }
                CK(cudaMemcpy(got.data(), b.out, outs * sizeof(Out), cudaMemcpyDeviceToHost));
                for (size_t s = 0; s < outs && ok; ++s) {
                    Result res = c.same(got[s], want[s]);
                    if (!res.ok) {
                        std::printf("FAIL %s n=%zu segments=%s (unaligned) at segment %zu: %s\n", name, n, DIST_NAMES[d], s, res.msg.c_str());
                        ok = false;
                    }
                }
                CK(cudaMemcpy(b.in, h.data(), n * sizeof(In), cudaMemcpyHostToDevice));
            }
        }
        report(st, ok, name, max_n, sizes.size());
    }
    CK(cudaFree(dev_k));
    CK(cudaFree(dev_uk));
    CK(cudaFree(dev_count));
    std::printf("  %-36s %zu sizes up to %zu\n", name, sizes.size(), max_n);
    std::fflush(stdout);
}
template <class In, class Out, class K, class Case>
void run_reduce_by_key(ReduceByKeyFn<In, Out, K> fn, Case c, const std::vector<size_t> &sizes, Stats &st) {
    auto call = [fn](const In *i, const K *k, size_t n, size_t, Out *o, K *uk, size_t *cnt, void *w, size_t wb) {
        return fn.call(i, k, n, o, uk, cnt, w, wb, 0);
    };
    run_segments_impl<In, Out, K, Case, true>(fn.name, fn.work_bytes, call, c, sizes, st);
}
template <class In, class Out, class O, class Case>
void run_segreduce(SegReduceFn<In, Out, O> fn, Case c, const std::vector<size_t> &sizes, Stats &st) {
    auto call = [fn](const In *i, const O *off, size_t n, size_t m, Out *o, O *, size_t *, void *w, size_t wb) {
        return fn.call(i, n, off, m, o, w, wb, 0);
    };
    run_segments_impl<In, Out, O, Case, false>(fn.name, fn.work_bytes, call, c, sizes, st);
}

// ---- one workspace for several functions in turn -------------------------------------------------
// The header's contract: one workspace, zeroed once, serves any sequence of calls of its functions.
// A rows reduce of several blocks a row, a columns reduce of chunks of rows (both leave their
// folds in the workspace), a segmented reduce by offsets in one launch and a reduce of several
// blocks (both take tickets from the counter) run in turn, twice over, on one workspace; small
// integers as floats, so that every sum is exact in any order.
[[maybe_unused]] static void run_shared_workspace(RowsFn<float, float> rows, RowsFn<float, float> cols,
                                                  SegReduceFn<float, float, int32_t> seg, ReduceFn<float, float> red,
                                                  Stats &st) {
    const size_t r_rows = 64, r_cols = 65543, c_rows = 65543, c_cols = 16, seg_n = ((size_t)1 << 20) + 7,
                 red_n = ((size_t)1 << 22) + 3, seg_len = 997;
    const size_t n = std::max({r_rows * r_cols, c_rows * c_cols, seg_n, red_n});
    const size_t work_bytes = std::max({rows.work_bytes(r_rows, r_cols), cols.work_bytes(c_rows, c_cols),
                                        seg.work_bytes(seg_n), red.work_bytes(red_n)});
    std::vector<float> h(n);
    Rng rng(4242);
    for (float &x : h) x = (float)((int)(rng.next() % 7) - 3);
    std::vector<int32_t> off;
    for (size_t o = 0; o < seg_n; o += seg_len) off.push_back((int32_t)o);
    off.push_back((int32_t)seg_n);
    const size_t segs = off.size() - 1;
    float *din, *dout;
    int32_t *doff;
    void *work;
    CK(cudaMalloc(&din, n * sizeof(float)));
    const size_t outs = std::max({r_rows, c_cols, segs});
    CK(cudaMalloc(&dout, outs * sizeof(float)));
    CK(cudaMalloc(&doff, off.size() * sizeof(int32_t)));
    CK(cudaMalloc(&work, work_bytes));
    CK(cudaMemset(work, 0, work_bytes));   // zeroed once
    CK(cudaMemcpy(din, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(doff, off.data(), off.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
    bool ok = true;
    for (int step = 0; step < 8 && ok; ++step) {
        std::vector<double> want;
        const char *name;
        cudaError_t e;
        CK(cudaMemset(dout, 0xAB, outs * sizeof(float)));   // poison: an unwritten result fails
        switch (step % 4) {
        case 0:
            name = rows.name;
            for (size_t r = 0; r < r_rows; ++r) {
                double s = 0;
                for (size_t i = 0; i < r_cols; ++i) s += h[r * r_cols + i];
                want.push_back(s);
            }
            e = rows.call(din, r_rows, r_cols, r_cols, dout, work, work_bytes, 0);
            break;
        case 1:
            name = seg.name;
            for (size_t k = 0; k < segs; ++k) {
                double s = 0;
                for (int32_t i = off[k]; i < off[k + 1]; ++i) s += h[i];
                want.push_back(s);
            }
            e = seg.call(din, seg_n, doff, segs, dout, work, work_bytes, 0);
            break;
        case 2:
            name = cols.name;
            want.assign(c_cols, 0.0);
            for (size_t r = 0; r < c_rows; ++r)
                for (size_t j = 0; j < c_cols; ++j) want[j] += h[r * c_cols + j];
            e = cols.call(din, c_rows, c_cols, c_cols, dout, work, work_bytes, 0);
            break;
        default:
            name = red.name;
            want.push_back(0.0);
            for (size_t i = 0; i < red_n; ++i) want[0] += h[i];
            e = red.call(din, red_n, dout, work, work_bytes, 0);
        }
        if (e == cudaSuccess) e = cudaDeviceSynchronize();
        std::vector<float> got(want.size());
        if (e == cudaSuccess) e = cudaMemcpy(got.data(), dout, got.size() * sizeof(float), cudaMemcpyDeviceToHost);
        if (e != cudaSuccess) {
            std::printf("FAIL shared workspace, call %d (%s): %s\n", step, name, cudaGetErrorString(e));
            ok = false;
        }
        for (size_t k = 0; k < want.size() && ok; ++k)
            if ((double)got[k] != want[k]) {
                std::printf("FAIL shared workspace, call %d (%s): result %zu is %g, not %g\n", step, name, k, got[k], want[k]);
                ok = false;
            }
        if (ok && !counter_zero(work)) {
            std::printf("FAIL shared workspace, call %d (%s): workspace counter not zero\n", step, name);
            ok = false;
        }
    }
    cudaFree(din);
    cudaFree(dout);
    cudaFree(doff);
    cudaFree(work);
    report(st, ok, "shared workspace", 0, 8);
    std::printf("  %-36s 8 calls of 4 functions on one workspace\n", "shared workspace");
    std::fflush(stdout);
}

// ---- cases: input distribution, reference fold, comparison ---------------------------------------

static std::string num(long double v) { char b[64]; std::snprintf(b, sizeof b, "%.17Lg", v); return b; }

// Integer operators: exact, computed through uint64_t (wrapping like the C unsigned types).
enum class IntOp { sum, prod, min, max, band, bor, bxor };
template <class T>
struct IntCase {
    IntOp op;
    T init_value = 0;
    bool has_init = false;
    void gen(std::vector<T> &h, uint64_t seed) const {
        const bool odd = op == IntOp::prod;  // even factors would drive products to 0
        fill(h, seed, [odd](Rng &r, size_t) { T v = (T)r.next(); if (odd) v |= 1; if (v == 0) v = 1; return v; });
    }
    T start() const {
        if (has_init) return init_value;
        switch (op) {
        case IntOp::prod: return (T)1;
        case IntOp::band: return (T)~(T)0;
        case IntOp::min: return std::numeric_limits<T>::max();
        case IntOp::max: return std::numeric_limits<T>::lowest();
        default: return (T)0;
        }
    }
    T step(T a, T x, size_t) const {
        uint64_t u = (uint64_t)a, v = (uint64_t)x;
        switch (op) {
        case IntOp::sum: return (T)(u + v);
        case IntOp::prod: return (T)(u * v);
        case IntOp::band: return (T)(u & v);
        case IntOp::bor: return (T)(u | v);
        case IntOp::bxor: return (T)(u ^ v);
        case IntOp::min: return std::min(a, x);
        default: return std::max(a, x);
        }
    }
    Result same(T got, T want) const {
        if (got == want) return {true, ""};
        return {false, "got " + num((long double)got) + " want " + num((long double)want)};
    }
};

// Float sum / product / compensated sum: reference in long double; the bound grows like
// sqrt(n) rounding steps for plain sums and products, and stays at a few ulps when compensated.
// v + lo: the running value; sums carry the bits a long double addition drops in lo (Neumaier),
// since 2^28 plain long double additions of ~1e8 partial sums drift by ~1e-7, more than a
// compensated double sum's own error.
struct FloatRef { long double v, mag; size_t n; long double lo; };
template <class T>
struct FloatCase {
    enum Kind { sum, prod, ksum } kind;
    void gen(std::vector<T> &h, uint64_t seed) const {
        Kind k = kind;
        // products: x[i] = a(i) / a(i+1) with a() in [1, 2): factors spread over [0.5, 2], so
        // rounding is unbiased, while every partial product stays within [0.5, 2].  (Factors
        // all within 1e-4 of 1 round with a bias: float32 itself loses 0.7% over 2^20 of them.)
        auto a = [seed](size_t i) { Rng r(seed ^ (i * 0xD1B54A32D192ED03ull)); return 1.0 + r.unit(); };
        fill(h, seed, [k, a](Rng &r, size_t i) {
            double u = r.unit();
            if (k == prod) return (T)(a(i) / a(i + 1));
            if (k == ksum) return (T)((i % 2 ? 1.0e4 : -1.0e4) + u);  // big terms cancel: plain float sums lose digits
            return (T)(u * 2.0 - 1.0 + (u < 0.5 ? -0.01 : 0.01));
        });
    }
    FloatRef start() const { return {kind == prod ? 1.0L : 0.0L, 0.0L, 0, 0.0L}; }
    FloatRef step(FloatRef r, T x, size_t) const {
        if (kind == prod) {
            r.v *= (long double)x;
        } else {
            const long double y = (long double)x, t = r.v + y;
            r.lo += std::fabs(r.v) >= std::fabs(y) ? (r.v - t) + y : (y - t) + r.v;
            r.v = t;
        }
        r.mag += std::fabs((long double)x);
        r.n += 1;
        return r;
    }
    template <class Got>
    Result same(Got g, FloatRef r) const {
        const double got = value_of(g);
        const double eps = sizeof(T) == 4 ? 5.96e-8 : 1.11e-16;
        double bound;
        if (kind == sum) bound = 8.0 * eps * std::sqrt((double)r.n + 1) * (double)r.mag + 1e-300;
        else if (kind == prod) bound = 8.0 * eps * std::sqrt((double)r.n + 1) * std::fabs((double)r.v) + 1e-300;
        else bound = 4.0 * eps * std::fabs((double)r.v) + 1e-7 * eps * (double)r.mag + 1e-300;  // compensated
        const double want = (double)(r.v + r.lo);
        const double err = std::fabs(got - want);
        if (std::isfinite(got) && err <= bound) return {true, ""};
        char b[200];
        std::snprintf(b, sizeof b, "got %.17g want %.17g err %.3g bound %.3g", got, want, err, bound);
        return {false, b};
    }
    static double value_of(T v) { return (double)v; }
    template <class K> static double value_of(K k) { return (double)k.sum + (double)k.err; }
};

// Float min / max: exact.
template <class T>
struct FloatMinMaxCase {
    bool is_min;
    void gen(std::vector<T> &h, uint64_t seed) const {
        fill(h, seed, [](Rng &r, size_t) { return (T)((r.unit() - 0.5) * 2000.0 + 0.125); });
    }
    T start() const { return is_min ? (T)INFINITY : (T)-INFINITY; }
    T step(T a, T x, size_t) const { return is_min ? std::min(a, x) : std::max(a, x); }
    Result same(T got, T want) const {
        if (std::memcmp(&got, &want, sizeof(T)) == 0) return {true, ""};
        return {false, "got " + num(got) + " want " + num(want)};
    }
};

// argmin / argmax: value and the lowest index holding it; inputs with many ties.
template <class T, class Pair>
struct ArgCase {
    bool is_min;
    void gen(std::vector<T> &h, uint64_t seed) const {
        fill(h, seed, [](Rng &r, size_t) { return (T)(1 + (int)(r.next() % 100)); });  // many ties
    }
    Pair start() const {
        Pair p;
        p.value = is_min ? (std::is_floating_point<T>::value ? (T)INFINITY : std::numeric_limits<T>::max())
                         : (std::is_floating_point<T>::value ? (T)-INFINITY : std::numeric_limits<T>::lowest());
        p.index = -1;
        return p;
    }
    Pair step(Pair p, T x, size_t i) const {
        if (is_min ? x < p.value : x > p.value) { p.value = x; p.index = (int64_t)i; }
        return p;
    }
    Result same(Pair got, Pair want) const {
        if (got.value == want.value && got.index == want.index) return {true, ""};
        return {false, "got (" + num(got.value) + ", " + std::to_string(got.index) + ") want (" + num(want.value) +
                           ", " + std::to_string(want.index) + ")"};
    }
};

template <class T>
void run_exscan_init(ExScanFn<T, T, T> fn, T init, const std::vector<size_t> &sizes, Stats &st) {
    IntCase<T> c{IntOp::sum, init, true};
    auto call = [fn, init](const T *i, const uint8_t *, size_t n, T *o, void *w, size_t wb) { return fn.call(i, n, o, &init, w, wb, 0); };
    run_scan_impl<T, T, void>(fn.name, fn.work_bytes, call, true, c, sizes, st);
}
// the same for an exclusive segmented scan: init starts every segment
template <class T, class H>
void run_exsegscan_init(ExSegScanFn<T, T, H, T> fn, T init, const std::vector<size_t> &sizes, Stats &st) {
    IntCase<T> c{IntOp::sum, init, true};
    auto call = [fn, init](const T *i, const H *h, size_t n, T *o, void *w, size_t wb) { return fn.call(i, h, n, o, &init, w, wb, 0); };
    run_scan_impl<T, T, H>(fn.name, fn.work_bytes, call, true, c, sizes, st, fn.by_key);
}

// ---- user operators of examples/ (types come from the generated header) --------------------------
#ifdef HAVE_MAT2U
// 2x2 over uint32 with determinant 1: any reordering of the product shows in the bits.
static inline uint32_t inv_odd(uint32_t a) { uint32_t x = a; for (int k = 0; k < 5; ++k) x *= 2u - a * x; return x; }
struct Mat2Case {
    void gen(std::vector<mat2u> &h, uint64_t seed) const {
        fill(h, seed, [](Rng &r, size_t) {
            mat2u m;
            m.a = (uint32_t)r.next() | 1u; m.b = (uint32_t)r.next(); m.c = (uint32_t)r.next();
            m.d = (1u + m.b * m.c) * inv_odd(m.a);
            return m;
        });
    }
    mat2u start() const { return {1u, 0u, 0u, 1u}; }
    mat2u step(const mat2u &x, const mat2u &y, size_t) const {
        mat2u r;
        r.a = x.a * y.a + x.b * y.c; r.b = x.a * y.b + x.b * y.d;
        r.c = x.c * y.a + x.d * y.c; r.d = x.c * y.b + x.d * y.d;
        return r;
    }
    Result same(mat2u got, mat2u want) const {
        if (std::memcmp(&got, &want, sizeof want) == 0) return {true, ""};
        char b[160];
        std::snprintf(b, sizeof b, "got [%u %u %u %u] want [%u %u %u %u]", got.a, got.b, got.c, got.d,
                      want.a, want.b, want.c, want.d);
        return {false, b};
    }
};
#endif

#ifdef HAVE_MAT3U
// 3x3 over uint32, each a unit-lower times an odd-diagonal upper matrix (odd determinant).
static inline mat3u mat3_mul(const mat3u &x, const mat3u &y) {
    mat3u r;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            uint32_t s = 0;
            for (int k = 0; k < 3; ++k) s += x.m[3 * i + k] * y.m[3 * k + j];
            r.m[3 * i + j] = s;
        }
    return r;
}
struct Mat3Case {
    void gen(std::vector<mat3u> &h, uint64_t seed) const {
        fill(h, seed, [](Rng &r, size_t) {
            mat3u l = {{1, 0, 0, 0, 1, 0, 0, 0, 1}}, u = {{0, 0, 0, 0, 0, 0, 0, 0, 0}};
            l.m[3] = (uint32_t)r.next(); l.m[6] = (uint32_t)r.next(); l.m[7] = (uint32_t)r.next();
            for (int i = 0; i < 3; ++i)
                for (int j = i; j < 3; ++j) u.m[3 * i + j] = (uint32_t)r.next() | (i == j ? 1u : 0u);
            return mat3_mul(l, u);
        });
    }
    mat3u start() const { return {{1, 0, 0, 0, 1, 0, 0, 0, 1}}; }
    mat3u step(const mat3u &a, const mat3u &x, size_t) const { return mat3_mul(a, x); }
    Result same(mat3u got, mat3u want) const {
        if (std::memcmp(&got, &want, sizeof want) == 0) return {true, ""};
        return {false, "3x3 product differs (got m[0]=" + std::to_string(got.m[0]) + " want " + std::to_string(want.m[0]) + ")"};
    }
};
#endif

#ifdef HAVE_WELFORD
// Welford (count, mean, m2) of floats against Welford's online update in long double.
struct WelfordRef { long double n, mean, m2; };
struct WelfordCase {
    void gen(std::vector<float> &h, uint64_t seed) const {
        fill(h, seed, [](Rng &r, size_t) { return (float)(100.0 + 10.0 * r.unit()); });
    }
    WelfordRef start() const { return {0, 0, 0}; }
    WelfordRef step(WelfordRef r, float x, size_t) const {
        r.n += 1;
        long double d = x - r.mean;
        r.mean += d / r.n;
        r.m2 += d * (x - r.mean);
        return r;
    }
    Result same(welford got, WelfordRef w) const {
        bool ok = got.count == (double)w.n && std::fabs(got.mean - (double)w.mean) <= 1e-11 * std::fabs((double)w.mean) + 1e-300 &&
                  std::fabs(got.m2 - (double)w.m2) <= 1e-8 * (double)w.m2 + 1e-9;
        if (ok) return {true, ""};
        char b[200];
        std::snprintf(b, sizeof b, "got (%.17g, %.17g, %.17g) want (%.0Lf, %.17Lg, %.17Lg)", got.count, got.mean, got.m2, w.n, w.mean, w.m2);
        return {false, b};
    }
};
#endif

#ifdef HAVE_MINMAX_F32
struct MinMaxPairCase {
    void gen(std::vector<float> &h, uint64_t seed) const {
        fill(h, seed, [](Rng &r, size_t) { return (float)((r.unit() - 0.5) * 2000.0 + 0.125); });
    }
    minmax_f32 start() const { return {INFINITY, -INFINITY}; }
    minmax_f32 step(minmax_f32 a, float x, size_t) const { return {std::min(a.lo, x), std::max(a.hi, x)}; }
    Result same(minmax_f32 got, minmax_f32 want) const {
        if (got.lo == want.lo && got.hi == want.hi) return {true, ""};
        return {false, "got [" + num(got.lo) + ", " + num(got.hi) + "] want [" + num(want.lo) + ", " + num(want.hi) + "]"};
    }
};
#endif
