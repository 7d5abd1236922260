/* bench.cu: the generated kernels (bench/spec.toml) against CUB and Thrust, side by side.
 *
 *   ninja bench && build/bench/bench [--quick] [--hot] [--no-graph] [--only KIND] [--logs L,...] [--csv FILE]
 *   (KIND: reduce, scan, segmented, variants, segvariants, segavg, segsizes, medium: see usage())
 *
 * Three tables: reduces (below), scans (run_scan_row: against cub::DeviceScan and a copy), and
 * segmented primitives (run_segreduce_rows, run_segscan_rows: against cub::DeviceSegmentedReduce
 * and thrust::inclusive_scan_by_key over several distributions of segment lengths).
 *
 * ROWS     f32 sum, i32 sum, f32 min, i32 min, and mat2u: the ordered product of 2x2 uint32
 *          matrices (16-byte elements, NOT commutative), for n = 2^12, 2^14, ..., 2^28
 *          (mat2u also 2^27); --quick: n = 2^12, 2^16, 2^20, 2^24, 2^28.
 * COLUMNS  generated reduce: us a call and GB/s (bytes read = n * sizeof(element));
 *          cub::DeviceReduce (Sum, Min, or Reduce with the same 2x2 product and identity) on
 *          the same data: us and GB/s; gen/cub = CUB's time / ours (> 1: we are faster);
 *          a cudaMemcpyAsync device-to-device copy of the same bytes, GB/s counting read +
 *          write; a read-only kernel (below) GB/s, the ceiling for a reduction, and
 *          gen/read = our GB/s / its GB/s.  For n <= 2^20 also the same calls replayed from a
 *          CUDA graph (ours and CUB's), where launch cost is what separates them.
 *
 * TIMING METHOD
 *   Each measured operation is a host function that enqueues one call on one stream.
 *   - Warm-up: 3 calls, then 10 timed calls give an estimate t of one call.
 *   - One sample: K = max(20, 2 ms / t) calls (at most 20000) enqueued back to back between
 *     two CUDA events; the sample is the elapsed time / K.  Launch overhead is included as
 *     a program calling the function in a loop sees it: CUB's two launches a call against
 *     our one, and the host-side cost of each API call when it is longer than the kernel.
 *   - 7 samples of each operation, interleaved (ours, CUB, copy, read-only, ours, ...) so
 *     clock or thermal drift hits all alike; the MEDIAN sample is reported.
 *   - Graph columns: K calls (cold inputs: enough that their slices span 4x L2, at most 4096)
 *     captured once into a CUDA graph; one sample = one replay / K.
 *   Buffers (CUB's temp storage, our workspace, outputs) are allocated outside the timed
 *   region; our workspace is zeroed once at start and shared by every call of every
 *   function, as the header's contract allows (each call leaves it zeroed).
 *
 * DATA     random and non-zero, made on the device from a counter-based hash of the element
 *          index, so the host can recompute any element: f32 in (0, 1], i32 over the whole
 *          range (sums wrap), mat2u random with determinant 1 (a product of many such
 *          matrices never collapses to zero, so any ordering error shows).
 *          Cold inputs (the default): calls rotate over R slices of one data pool, R chosen
 *          so that the slices span at least 4x the L2 size; every call then reads its input
 *          from HBM, as for data much larger than L2 (2^24 floats = 64 MB already is).
 *          --hot: one slice; inputs that fit in L2 (<= ~50 MB on an H100) stay there.
 *          The segmented rows too: a slice holds its values and its own copy of the offsets or
 *          keys (the same segments in every slice), and every call writes its own output slice.
 *
 * CHECKS   At every n, on slice 0 (elements 0..n-1), before and after the timing:
 *          integers and f32 min must equal CUB's exactly, f32 sum must be within a relative
 *          1e-4 of CUB's, mat2u must equal the ordered product computed on the host. CUB's
 *          mat2u result is compared too, but only noted: CUB assumes its operator is
 *          commutative and is known to be wrong for this one from n ~ 1000 on.  Our result
 *          after the thousands of timed calls must equal the first (same bits: the order is
 *          deterministic, and the workspace must have been left zeroed).  Any failure of
 *          ours prints MISMATCH and makes the exit status 1.
 */
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include <cuda_runtime.h>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <thrust/execution_policy.h>
#include <thrust/scan.h>

#include "bench.h"
#include "common.cuh"   // CHECK, mix64, CachedAlloc
#ifdef BENCH_AB
#include "ab_rows.h"   // bench/trace/ab.sh: experimental copies of a generated scan or reduce, rows of --only ab
#endif

static const double MIN_SAMPLE_US = 2000.0;  // a sample lasts at least ~2 ms...
static const int MIN_CALLS = 20;             // ...and holds at least 20 calls
static const int MAX_CALLS = 20000;
static const int MAX_GRAPH_CALLS = 4096;
static const int SAMPLES = 7;
static const int GRAPH_MAX_LOG2 = 20;        // graph columns for n <= 2^20
static const int MAX_LOG2 = 28;
static const size_t SLICE_ALIGN = 256;
static const int RO_BLOCK = 256;             // read-only kernel's block

// ------------------------------------------------------------------------------------------
// data: element i of every buffer is a pure function of i, on the device and on the host

__host__ __device__ static inline uint32_t inverse_odd(uint32_t a)  // a * x == 1 mod 2^32
{
    uint32_t x = a;
    for (int k = 0; k < 5; ++k)
        x *= 2u - a * x;
    return x;
}

template <class T> struct Data;
template <> struct Data<float> {
    __host__ __device__ static float at(uint64_t i)  // (0, 1], 24 random bits
    {
        return (float)((mix64(i ^ 0x5EED0F32ull) >> 40) + 1) * (1.0f / 16777216.0f);
    }
};
template <> struct Data<int32_t> {
    __host__ __device__ static int32_t at(uint64_t i)  // any non-zero int32
    {
        const int32_t v = (int32_t)(uint32_t)(mix64(i ^ 0x5EED0132ull) >> 32);
        return v != 0 ? v : 1;
    }
};
template <> struct Data<mat2u> {
    __host__ __device__ static mat2u at(uint64_t i)  // a*d - b*c == 1 (mod 2^32)
    {
        const uint64_t h1 = mix64(2 * i + 0x5EED2000ull), h2 = mix64(2 * i + 0x5EED2001ull);
        mat2u m;
        m.a = (uint32_t)h1 | 1u;
        m.b = (uint32_t)(h1 >> 32);
        m.c = (uint32_t)h2;
        m.d = (1u + m.b * m.c) * inverse_odd(m.a);
        return m;
    }
};

template <class T> __global__ void fill_kernel(T *p, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = Data<T>::at(i);
}

// the mat2mul operator of bench/spec.toml, for CUB and for the host reference
struct Mat2Mul {
    __host__ __device__ mat2u operator()(const mat2u &x, const mat2u &y) const
    {
        mat2u r;
        r.a = x.a * y.a + x.b * y.c;
        r.b = x.a * y.b + x.b * y.d;
        r.c = x.c * y.a + x.d * y.c;
        r.d = x.c * y.b + x.d * y.d;
        return r;
    }
};

// ------------------------------------------------------------------------------------------
// the bandwidth ceiling: read every byte with 16-byte loads (four in flight a thread),
// fold with XOR, grid-stride, one write per block

__global__ void __launch_bounds__(RO_BLOCK) read_only_kernel(const uint4 *__restrict__ in, size_t n16, uint4 *__restrict__ out)
{
    __shared__ uint4 warp_acc[RO_BLOCK / 32];
    const size_t stride = (size_t)gridDim.x * RO_BLOCK;
    size_t i = (size_t)blockIdx.x * RO_BLOCK + threadIdx.x;
    uint4 acc = make_uint4(0u, 0u, 0u, 0u);
    for (; i + 3 * stride < n16; i += 4 * stride) {
        const uint4 v0 = in[i], v1 = in[i + stride], v2 = in[i + 2 * stride], v3 = in[i + 3 * stride];
        acc.x ^= v0.x ^ v1.x ^ v2.x ^ v3.x;
        acc.y ^= v0.y ^ v1.y ^ v2.y ^ v3.y;
        acc.z ^= v0.z ^ v1.z ^ v2.z ^ v3.z;
        acc.w ^= v0.w ^ v1.w ^ v2.w ^ v3.w;
    }
    for (; i < n16; i += stride) {
        const uint4 v = in[i];
        acc.x ^= v.x; acc.y ^= v.y; acc.z ^= v.z; acc.w ^= v.w;
    }
    for (int o = 16; o > 0; o /= 2) {
        acc.x ^= __shfl_xor_sync(0xffffffffu, acc.x, o);
        acc.y ^= __shfl_xor_sync(0xffffffffu, acc.y, o);
        acc.z ^= __shfl_xor_sync(0xffffffffu, acc.z, o);
        acc.w ^= __shfl_xor_sync(0xffffffffu, acc.w, o);
    }
    if (threadIdx.x % 32 == 0)
        warp_acc[threadIdx.x / 32] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < RO_BLOCK / 32; ++w) {
            acc.x ^= warp_acc[w].x; acc.y ^= warp_acc[w].y; acc.z ^= warp_acc[w].z; acc.w ^= warp_acc[w].w;
        }
        out[blockIdx.x] = acc;
    }
}

// ------------------------------------------------------------------------------------------
// CUB calls, one shape for all rows (int item count: CUB's 32-bit offsets, its fastest path)

struct CubSum {
    template <class T>
    cudaError_t operator()(void *tmp, size_t &bytes, const T *in, T *out, int n, cudaStream_t s) const
    {
        return cub::DeviceReduce::Sum(tmp, bytes, in, out, n, s);
    }
};
struct CubMin {
    template <class T>
    cudaError_t operator()(void *tmp, size_t &bytes, const T *in, T *out, int n, cudaStream_t s) const
    {
        return cub::DeviceReduce::Min(tmp, bytes, in, out, n, s);
    }
};
struct CubMat2Mul {
    cudaError_t operator()(void *tmp, size_t &bytes, const mat2u *in, mat2u *out, int n, cudaStream_t s) const
    {
        const mat2u identity = {1u, 0u, 0u, 1u};
        return cub::DeviceReduce::Reduce(tmp, bytes, in, out, n, Mat2Mul(), identity, s);
    }
};

template <class T> using GenFn = cudaError_t (*)(const T *, size_t, T *, void *, size_t, cudaStream_t);

enum CheckKind { CHECK_EXACT, CHECK_REL_1E4, CHECK_HOST_PRODUCT };

// ------------------------------------------------------------------------------------------
// state shared by all measurements

struct Bench {
    cudaStream_t stream;
    cudaEvent_t ev0, ev1;
    char *pool, *dst;            // input slices; the copy's destination slices
    char *out_gen, *out_cub;     // scans' output slices
    size_t pool_bytes;
    void *work;                  // our workspace, zeroed once
    size_t work_bytes;
    void *cub_tmp;
    size_t cub_tmp_bytes;
    void *gen_out, *cub_out;     // one result each
    uint4 *ro_out;
    int ro_max_grid;
    size_t l2_bytes;
    bool hot, graphs;
    // the current point: every call reads the next slice, round robin
    size_t slice_stride, slices, next_slice;
    size_t next() { return next_slice++ % slices; }
};

struct Result {
    std::string row;
    int log2n;
    size_t n, bytes, slices;
    double gen_us, cub_us, copy_us, read_us, ggen_us, gcub_us;  // < 0: not measured
    bool gen_ok, cub_ok;
};

static std::vector<Result> results;
static int failures;

// One measured operation: `call` enqueues one call; K calls a sample.
struct Op {
    std::function<void()> call;
    bool graph;
    int calls;
    cudaGraph_t g;
    cudaGraphExec_t exec;
    std::vector<double> samples;   // us a call
};

static double elapsed_us(const Bench &b)
{
    float ms = 0.0f;
    CHECK(cudaEventElapsedTime(&ms, b.ev0, b.ev1));
    return 1e3 * ms;
}

// warm up, choose K; for a graph op, capture K calls
static void prepare(Bench &b, Op &op, size_t cold_calls)
{
    for (int i = 0; i < 3; ++i)
        op.call();
    CHECK(cudaStreamSynchronize(b.stream));
    CHECK(cudaEventRecord(b.ev0, b.stream));
    for (int i = 0; i < 10; ++i)
        op.call();
    CHECK(cudaEventRecord(b.ev1, b.stream));
    CHECK(cudaEventSynchronize(b.ev1));
    const double t = std::max(elapsed_us(b) / 10, 0.05);
    const double k = std::ceil(MIN_SAMPLE_US / t);
    // at least MIN_CALLS a sample, except for calls over 1 ms (a slow reference): then ~2 ms
    op.calls = (int)std::min(std::max(k, t > 1000.0 ? 1.0 : (double)MIN_CALLS), (double)MAX_CALLS);
    op.g = nullptr;
    op.exec = nullptr;
    if (op.graph) {
        // enough calls that replays do not find their inputs in L2 (cold), within a bound
        op.calls = (int)std::min(std::max((size_t)op.calls, cold_calls), (size_t)MAX_GRAPH_CALLS);
        CHECK(cudaStreamBeginCapture(b.stream, cudaStreamCaptureModeRelaxed));
        for (int i = 0; i < op.calls; ++i)
            op.call();
        CHECK(cudaStreamEndCapture(b.stream, &op.g));
        CHECK(cudaGraphInstantiate(&op.exec, op.g, 0));
        CHECK(cudaGraphLaunch(op.exec, b.stream));
        CHECK(cudaStreamSynchronize(b.stream));
    }
}

static void sample(Bench &b, Op &op)
{
    CHECK(cudaEventRecord(b.ev0, b.stream));
    if (op.graph)
        CHECK(cudaGraphLaunch(op.exec, b.stream));
    else
        for (int i = 0; i < op.calls; ++i)
            op.call();
    CHECK(cudaEventRecord(b.ev1, b.stream));
    CHECK(cudaEventSynchronize(b.ev1));
    op.samples.push_back(elapsed_us(b) / op.calls);
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

static void release(Op &op)
{
    if (op.exec)
        CHECK(cudaGraphExecDestroy(op.exec));
    if (op.g)
        CHECK(cudaGraphDestroy(op.g));
}

// warm up every op, then SAMPLES rounds of one sample each, interleaved
static void time_ops(Bench &b, const std::vector<Op *> &ops, size_t cold_calls)
{
    for (Op *op : ops)
        prepare(b, *op, cold_calls);
    for (int s = 0; s < SAMPLES; ++s)
        for (Op *op : ops)
            sample(b, *op);
    for (Op *op : ops)
        release(*op);
}

// ours and the reference per call, with `others` (a copy, a read-only kernel) in between, then both
// replayed from a CUDA graph where n <= 2^GRAPH_MAX_LOG2: their medians into ggen_us and gref_us
// (left as they are otherwise).  The per-call samples stay in the ops.
static void time_with_graphs(Bench &b, int lg, Op &gen, Op &ref, const std::vector<Op *> &others, size_t cold_calls,
                             double &ggen_us, double &gref_us)
{
    Op ggen, gref;
    ggen.call = gen.call;
    gref.call = ref.call;
    gen.graph = ref.graph = false;
    ggen.graph = gref.graph = true;
    std::vector<Op *> ops = {&gen, &ref};
    for (Op *op : others) {
        op->graph = false;
        ops.push_back(op);
    }
    const bool graphs = b.graphs && lg <= GRAPH_MAX_LOG2;
    if (graphs) {
        ops.push_back(&ggen);
        ops.push_back(&gref);
    }
    time_ops(b, ops, cold_calls);
    if (graphs) {
        ggen_us = median(ggen.samples);
        gref_us = median(gref.samples);
    }
}

// slices of `bytes` each for the calls to rotate over; returns how many calls make a cold graph
static size_t set_point(Bench &b, size_t bytes)
{
    b.slice_stride = (bytes + SLICE_ALIGN - 1) / SLICE_ALIGN * SLICE_ALIGN;
    const size_t cold_calls = b.hot ? 1 : (4 * b.l2_bytes + bytes - 1) / bytes;
    b.slices = std::max<size_t>(1, std::min(cold_calls, b.pool_bytes / b.slice_stride));
    b.next_slice = 0;
    return cold_calls;
}

// ------------------------------------------------------------------------------------------
// printing values

static std::string show(float v) { char s[64]; snprintf(s, sizeof s, "%.9g", v); return s; }
static std::string show(int32_t v) { char s[64]; snprintf(s, sizeof s, "%d", v); return s; }
static std::string show(const mat2u &m)
{
    char s[96];
    snprintf(s, sizeof s, "[[%u %u] [%u %u]]", m.a, m.b, m.c, m.d);
    return s;
}

template <class T> static bool same(const T &x, const T &y) { return memcmp(&x, &y, sizeof x) == 0; }

// ------------------------------------------------------------------------------------------
// one row: a generated function and its CUB counterpart over every n

template <class T> static void fill(Bench &b)
{
    const size_t n = b.pool_bytes / sizeof(T);
    fill_kernel<T><<<4096, 256, 0, b.stream>>>((T *)b.pool, n);
    CHECK(cudaGetLastError());
    CHECK(cudaStreamSynchronize(b.stream));
}

template <class T, class Cub>
static void run_row(Bench &b, const char *row, GenFn<T> gen, Cub cub, CheckKind kind, const std::vector<int> &logs)
{
    fill<T>(b);
    fprintf(stderr, "%-10s", row);
    mat2u host_prod = {1u, 0u, 0u, 1u};   // mat2u: x[0] x[1] ... x[done-1], grown with n
    size_t done = 0;
    (void)host_prod;
    (void)done;

    for (int lg : logs) {
        const size_t n = (size_t)1 << lg, bytes = n * sizeof(T);
        fprintf(stderr, " 2^%d", lg);
        Result r = {row, lg, n, bytes, 0, -1, -1, -1, -1, -1, -1, true, true};
        if (bytes > b.pool_bytes) {      // did not fit in this GPU's memory
            r.slices = 0;
            results.push_back(r);
            continue;
        }
        const size_t cold_calls = set_point(b, bytes);
        r.slices = b.slices;

        size_t need = 0;
        CHECK(cub(nullptr, need, (const T *)b.pool, (T *)b.cub_out, (int)n, b.stream));
        if (need > b.cub_tmp_bytes) {
            CHECK(cudaFree(b.cub_tmp));
            CHECK(cudaMalloc(&b.cub_tmp, need));
            b.cub_tmp_bytes = need;
        }

        // results on slice 0, i.e. elements 0..n-1
        const T *in0 = (const T *)b.pool;
        T got_gen, got_cub, got_gen_after;
        CHECK(gen(in0, n, (T *)b.gen_out, b.work, b.work_bytes, b.stream));
        CHECK(cub(b.cub_tmp, b.cub_tmp_bytes, in0, (T *)b.cub_out, (int)n, b.stream));
        CHECK(cudaMemcpyAsync(&got_gen, b.gen_out, sizeof(T), cudaMemcpyDeviceToHost, b.stream));
        CHECK(cudaMemcpyAsync(&got_cub, b.cub_out, sizeof(T), cudaMemcpyDeviceToHost, b.stream));
        CHECK(cudaStreamSynchronize(b.stream));

        // the measured operations
        Op op_gen, op_cub, op_copy, op_read;
        op_gen.call = [&] {
            const T *in = (const T *)(b.pool + b.next() * b.slice_stride);
            CHECK(gen(in, n, (T *)b.gen_out, b.work, b.work_bytes, b.stream));
        };
        op_cub.call = [&] {
            const T *in = (const T *)(b.pool + b.next() * b.slice_stride);
            CHECK(cub(b.cub_tmp, b.cub_tmp_bytes, in, (T *)b.cub_out, (int)n, b.stream));
        };
        op_copy.call = [&] {
            const size_t s = b.next() * b.slice_stride;
            CHECK(cudaMemcpyAsync(b.dst + s, b.pool + s, bytes, cudaMemcpyDeviceToDevice, b.stream));
        };
        const size_t n16 = bytes / 16;
        const int ro_grid = (int)std::min<size_t>((size_t)b.ro_max_grid, (n16 + RO_BLOCK - 1) / RO_BLOCK);
        op_read.call = [&] {
            const uint4 *in = (const uint4 *)(b.pool + b.next() * b.slice_stride);
            read_only_kernel<<<ro_grid, RO_BLOCK, 0, b.stream>>>(in, n16, b.ro_out);
            CHECK(cudaGetLastError());
        };
        time_with_graphs(b, lg, op_gen, op_cub, {&op_copy, &op_read}, cold_calls, r.ggen_us, r.gcub_us);
        r.gen_us = median(op_gen.samples);
        r.cub_us = median(op_cub.samples);
        r.copy_us = median(op_copy.samples);
        r.read_us = median(op_read.samples);

        // ours again on slice 0, after all those calls on the same workspace
        CHECK(gen(in0, n, (T *)b.gen_out, b.work, b.work_bytes, b.stream));
        CHECK(cudaMemcpyAsync(&got_gen_after, b.gen_out, sizeof(T), cudaMemcpyDeviceToHost, b.stream));
        CHECK(cudaStreamSynchronize(b.stream));

        // checks
        std::string why;
        if constexpr (std::is_same_v<T, mat2u>) {
            (void)kind;  // always CHECK_HOST_PRODUCT
            for (; done < n; ++done)
                host_prod = Mat2Mul()(host_prod, Data<mat2u>::at(done));
            r.gen_ok = same(got_gen, host_prod);
            r.cub_ok = same(got_cub, host_prod);
            if (!r.gen_ok)
                why = "generated " + show(got_gen) + " != host ordered product " + show(host_prod);
            if (!r.cub_ok)
                printf("note: %s n=2^%d: CUB's result %s != the ordered product (expected: CUB"
                       " assumes a commutative operator)\n", row, lg, show(got_cub).c_str());
        } else if (kind == CHECK_REL_1E4) {
            const double g = (double)got_gen, c = (double)got_cub;
            const double rel = std::fabs(g - c) / std::max(std::fabs(c), 1e-30);
            r.gen_ok = rel <= 1e-4;
            if (!r.gen_ok) {
                char s[64];
                snprintf(s, sizeof s, " (relative difference %.3g > 1e-4)", rel);
                why = "generated " + show(got_gen) + " vs CUB " + show(got_cub) + s;
            }
        } else {
            r.gen_ok = same(got_gen, got_cub);
            if (!r.gen_ok)
                why = "generated " + show(got_gen) + " != CUB " + show(got_cub);
        }
        if (r.gen_ok && !same(got_gen, got_gen_after)) {
            r.gen_ok = false;
            why = "result changed after the timed calls: " + show(got_gen) + " then " + show(got_gen_after) +
                  " (workspace not left zeroed?)";
        }
        if (!r.gen_ok) {
            ++failures;
            printf("\n!!!!!!!! MISMATCH %s n=2^%d: %s\n\n", row, lg, why.c_str());
        }
        fflush(stdout);
        results.push_back(r);
    }
    fprintf(stderr, "\n");
}

// ------------------------------------------------------------------------------------------
// scans: a generated scan and CUB's on the same data, and a copy of the same bytes (the ceiling:
// a scan reads and writes every element once, as a copy does)

template <class T> using GenScanFn = std::function<cudaError_t(const T *, size_t, T *, void *, size_t, cudaStream_t)>;

struct CubInclusiveSum {
    template <class T>
    cudaError_t operator()(void *tmp, size_t &bytes, const T *in, T *out, int n, cudaStream_t s) const
    {
        return cub::DeviceScan::InclusiveSum(tmp, bytes, in, out, n, s);
    }
};
struct CubExclusiveSum {
    template <class T>
    cudaError_t operator()(void *tmp, size_t &bytes, const T *in, T *out, int n, cudaStream_t s) const
    {
        return cub::DeviceScan::ExclusiveSum(tmp, bytes, in, out, n, s);
    }
};
struct CubMat2Scan {
    cudaError_t operator()(void *tmp, size_t &bytes, const mat2u *in, mat2u *out, int n, cudaStream_t s) const
    {
        return cub::DeviceScan::InclusiveScan(tmp, bytes, in, out, Mat2Mul(), n, s);
    }
};

struct ScanResult {
    std::string row;
    int log2n;
    size_t n, bytes;              // bytes moved: n elements read + n written
    double gen_us, cub_us, copy_us, ggen_us, gcub_us;
    bool gen_ok, cub_ok;
};
static std::vector<ScanResult> scan_results;

// element i of the two results (ours, CUB's) against each other, or against the host's ordered
// scan for mat2u; returns "" when they agree
template <class T>
static std::string compare_scans(const std::vector<T> &g, const std::vector<T> &c, bool exclusive, bool *cub_ok)
{
    *cub_ok = true;
    if constexpr (std::is_same_v<T, mat2u>) {
        mat2u acc = {1u, 0u, 0u, 1u};
        std::string why;
        for (size_t i = 0; i < g.size(); ++i) {
            if (!exclusive)
                acc = Mat2Mul()(acc, Data<mat2u>::at(i));
            if (why.empty() && !same(g[i], acc))
                why = "element " + std::to_string(i) + ": generated " + show(g[i]) + " != host " + show(acc);
            if (*cub_ok && !same(c[i], acc))
                *cub_ok = false;
            if (exclusive)
                acc = Mat2Mul()(acc, Data<mat2u>::at(i));
        }
        return why;
    } else {
        for (size_t i = 0; i < g.size(); ++i) {
            bool ok;
            if constexpr (std::is_floating_point_v<T>)
                ok = std::fabs((double)g[i] - (double)c[i]) <= 1e-3 * std::fabs((double)c[i]) + 1e-6;
            else
                ok = g[i] == c[i];
            if (!ok)
                return "element " + std::to_string(i) + ": generated " + show(g[i]) + " vs CUB " + show(c[i]);
        }
        return "";
    }
}

// the exclusive scans with no initial value (the identity), as run_scan_row calls a scan
static cudaError_t exscan_f32(const float *in, size_t n, float *out, void *w, size_t wb, cudaStream_t s)
{
    return bench_exscan_sum_f32(in, n, out, NULL, w, wb, s);
}
static cudaError_t exscan_i32(const int32_t *in, size_t n, int32_t *out, void *w, size_t wb, cudaStream_t s)
{
    return bench_exscan_sum_i32(in, n, out, NULL, w, wb, s);
}

template <class T, class Cub>
static void run_scan_row(Bench &b, const char *row, GenScanFn<T> gen, Cub cub, bool exclusive, const std::vector<int> &logs)
{
    fill<T>(b);
    fprintf(stderr, "%-12s", row);
    for (int lg : logs) {
        const size_t n = (size_t)1 << lg, bytes = n * sizeof(T);
        fprintf(stderr, " 2^%d", lg);
        ScanResult r = {row, lg, n, 2 * bytes, -1, -1, -1, -1, -1, true, true};
        if (bytes > b.pool_bytes)
            continue;
        const size_t cold_calls = set_point(b, bytes);
        size_t need = 0;
        CHECK(cub(nullptr, need, (const T *)b.pool, (T *)b.out_cub, (int)n, b.stream));
        if (need > b.cub_tmp_bytes) {
            CHECK(cudaFree(b.cub_tmp));
            CHECK(cudaMalloc(&b.cub_tmp, need));
            b.cub_tmp_bytes = need;
        }
        // results on slice 0
        std::vector<T> got(n), ref(n), again(n);
        CHECK(cudaMemsetAsync(b.out_gen, 0xAB, bytes, b.stream));
        CHECK(gen((const T *)b.pool, n, (T *)b.out_gen, b.work, b.work_bytes, b.stream));
        CHECK(cub(b.cub_tmp, b.cub_tmp_bytes, (const T *)b.pool, (T *)b.out_cub, (int)n, b.stream));
        CHECK(cudaMemcpyAsync(got.data(), b.out_gen, bytes, cudaMemcpyDeviceToHost, b.stream));
        CHECK(cudaMemcpyAsync(ref.data(), b.out_cub, bytes, cudaMemcpyDeviceToHost, b.stream));
        CHECK(cudaStreamSynchronize(b.stream));

        Op op_gen, op_cub, op_copy;
        op_gen.call = [&] {
            const size_t s = b.next() * b.slice_stride;
            CHECK(gen((const T *)(b.pool + s), n, (T *)(b.out_gen + s), b.work, b.work_bytes, b.stream));
        };
        op_cub.call = [&] {
            const size_t s = b.next() * b.slice_stride;
            CHECK(cub(b.cub_tmp, b.cub_tmp_bytes, (const T *)(b.pool + s), (T *)(b.out_cub + s), (int)n, b.stream));
        };
        op_copy.call = [&] {
            const size_t s = b.next() * b.slice_stride;
            CHECK(cudaMemcpyAsync(b.dst + s, b.pool + s, bytes, cudaMemcpyDeviceToDevice, b.stream));
        };
        time_with_graphs(b, lg, op_gen, op_cub, {&op_copy}, cold_calls, r.ggen_us, r.gcub_us);
        r.gen_us = median(op_gen.samples);
        r.cub_us = median(op_cub.samples);
        r.copy_us = median(op_copy.samples);
        // ours again on slice 0 after the timed calls: the same bits
        CHECK(gen((const T *)b.pool, n, (T *)b.out_gen, b.work, b.work_bytes, b.stream));
        CHECK(cudaMemcpyAsync(again.data(), b.out_gen, bytes, cudaMemcpyDeviceToHost, b.stream));
        CHECK(cudaStreamSynchronize(b.stream));

        std::string why = compare_scans(got, ref, exclusive, &r.cub_ok);
        if (why.empty() && memcmp(got.data(), again.data(), bytes) != 0)
            why = "result changed after the timed calls";
        r.gen_ok = why.empty();
        if (!r.gen_ok) {
            ++failures;
            printf("\n!!!!!!!! MISMATCH %s n=2^%d: %s\n\n", row, lg, why.c_str());
        }
        if (!r.cub_ok)
            printf("note: %s n=2^%d: CUB's scan differs from the host's ordered scan\n", row, lg);
        fflush(stdout);
        scan_results.push_back(r);
    }
    fprintf(stderr, "\n");
}

// ------------------------------------------------------------------------------------------
// segmented primitives: segment lengths from several distributions, at one n each
//   segreduce: ours (CSR offsets, int32) against cub::DeviceSegmentedReduce::Sum
//   segscan:   ours (runs of equal int32 keys) against thrust::inclusive_scan_by_key
// Bytes counted: everything read and written once (values, offsets or keys, results).
// Cold by default like the other tables (--hot: one slice): slice k is at k * stride in the pool,
// its n values (pool elements k * stride / 4 on) and then, from byte `at` of the slice (n floats
// rounded up to SLICE_ALIGN), its own copy of the offsets or keys; its results are at k * stride
// in out_gen and out_cub, the copy's bytes at k * stride in dst.

static double gbs(size_t bytes, double us);
static std::string human(size_t bytes);

struct SegResult {
    std::string row, dist;
    int log2n;
    size_t n, segments, bytes;
    double gen_us, ref_us, copy_us;
    bool gen_ok;
    double ggen_us = -1, gref_us = -1;  // replayed from a CUDA graph (n <= 2^GRAPH_MAX_LOG2), < 0: not measured
};
static std::vector<SegResult> seg_results;

// ours and the reference timed per call (with the copy), and from a CUDA graph of at least cold_calls
// calls where n is small enough; the medians in r
static void time_seg(Bench &b, int lg, Op &gen, Op &ref, Op &copy, size_t cold_calls, SegResult &r)
{
    time_with_graphs(b, lg, gen, ref, {&copy}, cold_calls, r.ggen_us, r.gref_us);
    r.gen_us = median(gen.samples);
    r.ref_us = median(ref.samples);
    r.copy_us = median(copy.samples);
}

// `bytes` of host data (offsets or keys) at `at` in every slice that set_point made
static void copy_to_slices(Bench &b, size_t at, const void *host, size_t bytes)
{
    CHECK(cudaMemcpyAsync(b.pool + at, host, bytes, cudaMemcpyHostToDevice, b.stream));
    for (size_t k = 1; k < b.slices; ++k) {
        char *to = b.pool + k * b.slice_stride + at;
        CHECK(cudaMemcpyAsync(to, b.pool + at, bytes, cudaMemcpyDeviceToDevice, b.stream));
    }
    CHECK(cudaStreamSynchronize(b.stream));
}

// lengths: "avgK" (1..2K-1, e.g. avg1000: 1..1999), "1..16", "ones", "one" (a single segment),
// "power" (2^(17u)), "giant" (1..16 with one segment of n/2 from n/4 on)
static std::vector<int> segment_starts(size_t n, const std::string &dist)
{
    std::vector<int> starts;
    uint64_t state = 12345;
    size_t p = 0;
    while (p < n) {
        starts.push_back((int)p);
        state = mix64(state);
        size_t len;
        if (dist.compare(0, 3, "avg") == 0) len = 1 + state % (2 * std::stoul(dist.substr(3)) - 1);
        else if (dist == "1..16") len = 1 + state % 16;
        else if (dist == "ones") len = 1;
        else if (dist == "one") len = n;
        else if (dist == "giant") len = p >= n / 4 && p < n / 4 + 16 ? n / 2 : 1 + state % 16;
        else len = (size_t)std::pow(2.0, (double)(state >> 11) * (17.0 / 9007199254740992.0));
        p += len;
    }
    return starts;
}

typedef cudaError_t (*SegReduceFn)(const float *, size_t, const int32_t *, size_t, float *, void *, size_t, cudaStream_t);
typedef size_t (*WorkFn)(size_t);
typedef cudaError_t (*SegScanFn)(const float *, const int32_t *, size_t, float *, void *, size_t, cudaStream_t);

static void run_segreduce_rows(Bench &b, int lg, const std::vector<std::string> &dists, const char *row = "f32 segreduce",
                               SegReduceFn fn = bench_segreduce_sum_f32, WorkFn fn_work = bench_segreduce_sum_f32_workspace_bytes)
{
    const size_t n = (size_t)1 << lg;
    if (n * sizeof(float) > b.pool_bytes)
        return;
    fill<float>(b);
    const float *in = (const float *)b.pool;   // slice 0
    std::vector<float> host(n);
    CHECK(cudaMemcpy(host.data(), in, n * sizeof(float), cudaMemcpyDeviceToHost));
    const size_t at = (n * sizeof(float) + SLICE_ALIGN - 1) / SLICE_ALIGN * SLICE_ALIGN;   // a slice's offsets
    for (const std::string &dist : dists) {
        fprintf(stderr, "segreduce %s 2^%d\n", dist.c_str(), lg);
        std::vector<int> off = segment_starts(n, dist);
        const size_t m = off.size();
        off.push_back((int)n);
        if (at + (m + 1) * sizeof(int) > b.pool_bytes) {
            printf("note: %s %s n=2^%d skipped: not enough GPU memory\n", row, dist.c_str(), lg);
            continue;
        }
        const size_t cold_calls = set_point(b, at + (m + 1) * sizeof(int));
        copy_to_slices(b, at, off.data(), (m + 1) * sizeof(int));
        const int *d_off = (const int *)(b.pool + at);
        float *d_gen = (float *)b.out_gen, *d_cub = (float *)b.out_cub;   // slice 0's
        size_t need = 0;
        CHECK(cub::DeviceSegmentedReduce::Sum(nullptr, need, in, d_cub, (int64_t)m, d_off, d_off + 1, b.stream));
        if (need > b.cub_tmp_bytes) {
            CHECK(cudaFree(b.cub_tmp));
            CHECK(cudaMalloc(&b.cub_tmp, need));
            b.cub_tmp_bytes = need;
        }
        void *work = nullptr;
        const size_t work_bytes = fn_work(n);
        CHECK(cudaMalloc(&work, work_bytes + 16));
        CHECK(cudaMemset(work, 0, work_bytes + 16));

        Op op_gen, op_ref, op_copy;
        op_gen.call = [&] {
            const size_t s = b.next() * b.slice_stride;
            CHECK(fn((const float *)(b.pool + s), n, (const int *)(b.pool + s + at), m, (float *)(b.out_gen + s), work,
                     work_bytes, b.stream));
        };
        op_ref.call = [&] {
            const size_t s = b.next() * b.slice_stride;
            const int *o = (const int *)(b.pool + s + at);
            CHECK(cub::DeviceSegmentedReduce::Sum(b.cub_tmp, b.cub_tmp_bytes, (const float *)(b.pool + s),
                                                  (float *)(b.out_cub + s), (int64_t)m, o, o + 1, b.stream));
        };
        const size_t bytes = n * sizeof(float) + (m + 1) * sizeof(int) + m * sizeof(float);
        op_copy.call = [&] {   // bytes / 2 <= at + (m + 1) * sizeof(int): within the slice
            const size_t s = b.next() * b.slice_stride;
            CHECK(cudaMemcpyAsync(b.dst + s, b.pool + s, bytes / 2, cudaMemcpyDeviceToDevice, b.stream));
        };
        SegResult r = {row, dist, lg, n, m, bytes, 0, 0, 0, true};
        time_seg(b, lg, op_gen, op_ref, op_copy, cold_calls, r);

        // check, on slice 0 after the timed calls: each segment's sum against the host's (double),
        // relative to the sum of |x|
        CHECK(fn(in, n, d_off, m, d_gen, work, work_bytes, b.stream));
        CHECK(cudaStreamSynchronize(b.stream));
        std::vector<float> got(m);
        CHECK(cudaMemcpy(got.data(), d_gen, m * sizeof(float), cudaMemcpyDeviceToHost));
        for (size_t s = 0; s < m && r.gen_ok; ++s) {
            double want = 0, mag = 0;
            for (int i = off[s]; i < off[s + 1]; ++i) { want += host[i]; mag += std::fabs(host[i]); }
            if (std::fabs(got[s] - want) > 1e-5 * mag + 1e-30) {
                r.gen_ok = false;
                ++failures;
                printf("\n!!!!!!!! MISMATCH f32 segreduce %s n=2^%d segment %zu: %.9g want %.9g\n\n", dist.c_str(), lg, s, got[s], want);
            }
        }
        seg_results.push_back(r);
        CHECK(cudaFree(work));
        fill<float>(b);   // the values again where these offsets lay: another m moves the slices
    }
}

static void run_segscan_rows(Bench &b, int lg, const std::vector<std::string> &dists, const char *row = "f32 segscan/key",
                             SegScanFn fn = bench_segscan_sum_f32_by_i32, WorkFn fn_work = bench_segscan_sum_f32_by_i32_workspace_bytes)
{
    const size_t n = (size_t)1 << lg;
    const size_t at = (n * sizeof(float) + SLICE_ALIGN - 1) / SLICE_ALIGN * SLICE_ALIGN;   // a slice's keys
    if (at + n * sizeof(int) > b.pool_bytes)
        return;
    fill<float>(b);
    const float *in = (const float *)b.pool;   // slice 0
    std::vector<float> host(n);
    CHECK(cudaMemcpy(host.data(), in, n * sizeof(float), cudaMemcpyDeviceToHost));
    CachedAlloc alloc;
    for (const std::string &dist : dists) {
        fprintf(stderr, "segscan %s 2^%d\n", dist.c_str(), lg);
        std::vector<int> starts = segment_starts(n, dist), keys(n);
        int key = 7;
        for (size_t j = 0; j < starts.size(); ++j) {
            const size_t end = j + 1 < starts.size() ? (size_t)starts[j + 1] : n;
            key += 1 + (int)(mix64(j) % 5);
            for (size_t i = (size_t)starts[j]; i < end; ++i)
                keys[i] = key;
        }
        const size_t cold_calls = set_point(b, at + n * sizeof(int));   // the same slices for every distribution
        copy_to_slices(b, at, keys.data(), n * sizeof(int));
        const int *d_keys = (const int *)(b.pool + at);
        float *d_gen = (float *)b.out_gen, *d_ref = (float *)b.out_cub;   // slice 0's
        void *work = nullptr;
        const size_t work_bytes = fn_work(n);
        CHECK(cudaMalloc(&work, work_bytes + 16));
        CHECK(cudaMemset(work, 0, work_bytes + 16));
        Op op_gen, op_ref, op_copy;
        op_gen.call = [&] {
            const size_t s = b.next() * b.slice_stride;
            CHECK(fn((const float *)(b.pool + s), (const int *)(b.pool + s + at), n, (float *)(b.out_gen + s), work,
                     work_bytes, b.stream));
        };
        op_ref.call = [&] {
            const size_t s = b.next() * b.slice_stride;
            const int *k = (const int *)(b.pool + s + at);
            thrust::inclusive_scan_by_key(thrust::cuda::par_nosync(alloc).on(b.stream), k, k + n,
                                          (const float *)(b.pool + s), (float *)(b.out_cub + s));
        };
        const size_t bytes = n * (2 * sizeof(float) + sizeof(int));
        op_copy.call = [&] {   // bytes / 2 <= at + n * sizeof(int): within the slice
            const size_t s = b.next() * b.slice_stride;
            CHECK(cudaMemcpyAsync(b.dst + s, b.pool + s, bytes / 2, cudaMemcpyDeviceToDevice, b.stream));
        };
        SegResult r = {row, dist, lg, n, starts.size(), bytes, 0, 0, 0, true};
        time_seg(b, lg, op_gen, op_ref, op_copy, cold_calls, r);

        // check, on slice 0 after the timed calls (thrust's result only for the message)
        CHECK(fn(in, d_keys, n, d_gen, work, work_bytes, b.stream));
        thrust::inclusive_scan_by_key(thrust::cuda::par_nosync(alloc).on(b.stream), d_keys, d_keys + n, in, d_ref);
        CHECK(cudaStreamSynchronize(b.stream));

        std::vector<float> got(n), ref(n);
        CHECK(cudaMemcpy(got.data(), d_gen, n * sizeof(float), cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(ref.data(), d_ref, n * sizeof(float), cudaMemcpyDeviceToHost));
        double acc = 0, mag = 0;
        for (size_t i = 0; i < n && r.gen_ok; ++i) {
            if (i == 0 || keys[i] != keys[i - 1]) acc = mag = 0;
            acc += host[i];
            mag += std::fabs(host[i]);
            if (std::fabs(got[i] - acc) > 1e-5 * mag + 1e-30) {
                r.gen_ok = false;
                ++failures;
                printf("\n!!!!!!!! MISMATCH f32 segscan %s n=2^%d at %zu: %.9g want %.9g (thrust %.9g)\n\n", dist.c_str(), lg, i,
                       got[i], acc, ref[i]);
            }
        }
        seg_results.push_back(r);
        CHECK(cudaFree(work));
    }
    if (alloc.block)
        CHECK(cudaFree(alloc.block));
}

static void print_seg_table()
{
    printf("\n%-16s %-8s %5s %10s %9s | %8s %7s | %8s %7s | %7s | %8s %8s | %8s %8s %7s | %s\n", "row", "segments",
           "n", "count", "bytes", "gen us", "GB/s", "ref us", "GB/s", "gen/ref", "copyGB/s", "gen/copy", "g:gen us",
           "g:ref us", "gen/ref", "check");
    for (const SegResult &r : seg_results) {
        char n[16], gg[80];
        snprintf(n, sizeof n, "2^%d", r.log2n);
        if (r.ggen_us > 0)
            snprintf(gg, sizeof gg, "%8.2f %8.2f %6.2fx", r.ggen_us, r.gref_us, r.gref_us / r.ggen_us);
        else
            snprintf(gg, sizeof gg, "%8s %8s %7s", "-", "-", "-");
        const double g = gbs(r.bytes, r.gen_us), c = gbs(2 * (r.bytes / 2), r.copy_us);
        printf("%-16s %-8s %5s %10zu %9s | %8.1f %7.1f | %8.1f %7.1f | %6.2fx | %8.1f %8.2f | %s | %s\n", r.row.c_str(),
               r.dist.c_str(), n, r.segments, human(r.bytes).c_str(), r.gen_us, g, r.ref_us, gbs(r.bytes, r.ref_us),
               r.ref_us / r.gen_us, c, g / c, gg, r.gen_ok ? "ok" : "MISMATCH");
    }
    printf("\nref: cub::DeviceSegmentedReduce::Sum (segreduce), thrust::inclusive_scan_by_key with a cached allocator\n"
           "(segscan/key).  GB/s count every byte read and written once; copy moves the same number of bytes.\n");
}

// ------------------------------------------------------------------------------------------
// output

static double gbs(size_t bytes, double us) { return us > 0 ? bytes / (us * 1e3) : 0.0; }

static std::string human(size_t bytes)
{
    const char *unit[] = {"B", "KiB", "MiB", "GiB"};
    int u = 0;
    double v = (double)bytes;
    while (v >= 1024 && u < 3) {
        v /= 1024;
        ++u;
    }
    char s[32];
    snprintf(s, sizeof s, "%.0f %s", v, unit[u]);
    return s;
}

static void print_table()
{
    printf("\n%-10s %5s %8s | %8s %7s | %8s %7s | %7s | %8s %8s %8s | %8s %8s %7s | %s\n", "row", "n",
           "bytes", "gen us", "GB/s", "cub us", "GB/s", "gen/cub", "copyGB/s", "readGB/s", "gen/read",
           "g:gen us", "g:cub us", "gen/cub", "check");
    std::string last;
    for (const Result &r : results) {
        if (!last.empty() && r.row != last)
            printf("\n");
        last = r.row;
        char n[16], gg[80];
        snprintf(n, sizeof n, "2^%d", r.log2n);
        if (r.slices == 0) {
            printf("%-10s %5s %8s | skipped: not enough GPU memory\n", r.row.c_str(), n, human(r.bytes).c_str());
            continue;
        }
        if (r.ggen_us > 0)
            snprintf(gg, sizeof gg, "%8.2f %8.2f %6.2fx", r.ggen_us, r.gcub_us, r.gcub_us / r.ggen_us);
        else
            snprintf(gg, sizeof gg, "%8s %8s %7s", "-", "-", "-");
        const double g = gbs(r.bytes, r.gen_us), rd = gbs(r.bytes, r.read_us);
        printf("%-10s %5s %8s | %8.2f %7.1f | %8.2f %7.1f | %6.2fx | %8.1f %8.1f %8.2f | %s | %s%s\n",
               r.row.c_str(), n, human(r.bytes).c_str(), r.gen_us, g, r.cub_us, gbs(r.bytes, r.cub_us),
               r.cub_us / r.gen_us, gbs(2 * r.bytes, r.copy_us), rd, g / rd, gg,
               r.gen_ok ? "ok" : "MISMATCH", r.cub_ok ? "" : " (cub wrong)");
    }
}

static bool wanted(const char *only, const char *kind) { return only == nullptr || strcmp(only, kind) == 0; }

static void print_scan_table()
{
    printf("\n%-12s %5s %8s | %8s %7s | %8s %7s | %7s | %8s %8s | %8s %8s %7s | %s\n", "row", "n", "bytes",
           "gen us", "GB/s", "cub us", "GB/s", "gen/cub", "copyGB/s", "gen/copy", "g:gen us", "g:cub us", "gen/cub",
           "check");
    std::string last;
    for (const ScanResult &r : scan_results) {
        if (!last.empty() && r.row != last)
            printf("\n");
        last = r.row;
        char n[16], gg[80];
        snprintf(n, sizeof n, "2^%d", r.log2n);
        if (r.ggen_us > 0)
            snprintf(gg, sizeof gg, "%8.2f %8.2f %6.2fx", r.ggen_us, r.gcub_us, r.gcub_us / r.ggen_us);
        else
            snprintf(gg, sizeof gg, "%8s %8s %7s", "-", "-", "-");
        const double g = gbs(r.bytes, r.gen_us), c = gbs(r.bytes, r.copy_us);
        printf("%-12s %5s %8s | %8.2f %7.1f | %8.2f %7.1f | %6.2fx | %8.1f %8.2f | %s | %s%s\n", r.row.c_str(), n,
               human(r.bytes).c_str(), r.gen_us, g, r.cub_us, gbs(r.bytes, r.cub_us), r.cub_us / r.gen_us, c, g / c,
               gg, r.gen_ok ? "ok" : "MISMATCH", r.cub_ok ? "" : " (cub differs)");
    }
}

static void write_csv(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(2);
    }
    fprintf(f, "row,n,bytes,slices,gen_us,gen_gbs,cub_us,cub_gbs,gen_over_cub,copy_gbs_rw,read_gbs,"
               "gen_over_read,graph_gen_us,graph_cub_us,graph_gen_over_cub,gen_ok,cub_ok\n");
    for (const Result &r : results) {
        if (r.slices == 0)
            continue;
        const double g = gbs(r.bytes, r.gen_us), rd = gbs(r.bytes, r.read_us);
        fprintf(f, "%s,%zu,%zu,%zu,%.3f,%.2f,%.3f,%.2f,%.4f,%.2f,%.2f,%.4f,", r.row.c_str(), r.n, r.bytes,
                r.slices, r.gen_us, g, r.cub_us, gbs(r.bytes, r.cub_us), r.cub_us / r.gen_us,
                gbs(2 * r.bytes, r.copy_us), rd, g / rd);
        if (r.ggen_us > 0)
            fprintf(f, "%.3f,%.3f,%.4f,", r.ggen_us, r.gcub_us, r.gcub_us / r.ggen_us);
        else
            fprintf(f, ",,,");
        fprintf(f, "%d,%d\n", r.gen_ok ? 1 : 0, r.cub_ok ? 1 : 0);
    }
    fclose(f);
    printf("wrote %s\n", path);
}

// ------------------------------------------------------------------------------------------

static void usage(FILE *f)
{
    fprintf(f, "usage: bench [--quick] [--hot] [--no-graph] [--only reduce|scan|segmented|variants|segvariants|segavg|\n"
               "             segsizes|medium|small] [--logs L,...] [--csv FILE]\n"
               "  --quick     n = 2^12, 2^16, 2^20, 2^24, 2^28 only\n"
               "  --hot       one input buffer (inputs up to L2 size stay in L2); default: cold,\n"
               "              rotating over slices that span 4x the L2 size\n"
               "  --no-graph  skip the CUDA graph columns\n"
               "  --only KIND only the rows of one kind (reduce, scan, segmented), or other shapes (variants,\n"
               "              segvariants: the segmented reduce from 2^16 to 2^24; segavg: the segmented\n"
               "              reduce by average segment length, 16 to 16384, and power-law, 2^16 to 2^24\n"
               "              (2^28 without --quick); segsizes:\n"
               "              the segmented rows from 2^12 to 2^18; medium: the scans and the scan by key\n"
               "              from 2^17 to 2^21; small: the scans from 2^12 to 2^16 and at 2^18, the 2x2\n"
               "              matrix reduce at 2^14-2^18)\n"
               "  --logs L,... the sizes (log2 n) instead of each kind's own (the segmented scan at most 2^27)\n"
               "  --csv FILE  also write the results as CSV\n");
}

int main(int argc, char **argv)
{
    bool quick = false;
    const char *csv = nullptr, *only = nullptr;
    std::vector<int> sizes;   // --logs: the sizes instead of each kind's own
    Bench b = {};
    b.graphs = true;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--quick"))
            quick = true;
        else if (!strcmp(argv[i], "--hot"))
            b.hot = true;
        else if (!strcmp(argv[i], "--no-graph"))
            b.graphs = false;
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc)
            csv = argv[++i];
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--logs") && i + 1 < argc) {
            for (const char *p = argv[++i]; *p;) {
                char *end = nullptr;
                const long lg = strtol(p, &end, 10);
                if (end == p || lg < 1 || lg > MAX_LOG2 || (*end && *end != ',')) {
                    fprintf(stderr, "bench: --logs takes sizes as log2 n, 1 to %d, e.g. 17,19\n", MAX_LOG2);
                    return 2;
                }
                sizes.push_back((int)lg);
                p = *end ? end + 1 : end;
            }
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }

    std::vector<int> logs, logs16;
    if (quick)
        logs = {12, 16, 20, 24, 28};
    else
        for (int lg = 12; lg <= MAX_LOG2; lg += 2)
            logs.push_back(lg);
    logs16 = logs;
    if (!quick)
        logs16.insert(logs16.end() - 1, 27);
    if (!sizes.empty())
        logs = logs16 = sizes;

    int dev = 0, mem_khz = 0;
    cudaDeviceProp prop;
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaGetDeviceProperties(&prop, dev));
    CHECK(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, dev));
    b.l2_bytes = (size_t)prop.l2CacheSize;
    printf("GPU: %s (sm_%d%d, %d SMs, L2 %s, %s, theoretical DRAM peak %.0f GB/s)\n", prop.name, prop.major,
           prop.minor, prop.multiProcessorCount, human(b.l2_bytes).c_str(), human(prop.totalGlobalMem).c_str(),
           2.0 * mem_khz * 1e3 * (prop.memoryBusWidth / 8) / 1e9);
    printf("CUB %d.%d.%d; generated kernels: bench/spec.toml (reduce 256x16, mat2u 256x4; 4-byte scans 256x36, scan by key 256x28)\n",
           CUB_VERSION / 100000, CUB_VERSION / 100 % 1000, CUB_VERSION % 100);
    printf("inputs: %s; times: median of %d samples of >= %d back-to-back calls (>= ~2 ms)\n",
           b.hot ? "hot (one buffer; small inputs stay in L2)" : "cold (rotating slices spanning 4x L2)",
           SAMPLES, MIN_CALLS);

    CHECK(cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking));
    CHECK(cudaEventCreate(&b.ev0));
    CHECK(cudaEventCreate(&b.ev1));

    // the data pool and the copy's destination: the largest input each (4 GiB: 2^28 mat2u),
    // halved until both fit with 1 GiB to spare
    size_t free_bytes = 0, total_bytes = 0;
    CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    b.pool_bytes = ((size_t)1 << MAX_LOG2) * sizeof(mat2u);
    while (b.pool_bytes > ((size_t)64 << 20) && 4 * b.pool_bytes + ((size_t)1 << 30) > free_bytes)
        b.pool_bytes /= 2;
    if (b.pool_bytes < ((size_t)1 << MAX_LOG2) * sizeof(mat2u))
        printf("note: only %s free: the largest inputs are skipped\n", human(free_bytes).c_str());
    CHECK(cudaMalloc((void **)&b.pool, b.pool_bytes));
    CHECK(cudaMalloc((void **)&b.dst, b.pool_bytes));
    CHECK(cudaMalloc((void **)&b.out_gen, b.pool_bytes));
    CHECK(cudaMalloc((void **)&b.out_cub, b.pool_bytes));

    // one workspace for every function (the contract allows it), zeroed once
    const size_t max_n = (size_t)1 << MAX_LOG2;
    b.work_bytes = std::max({bench_reduce_sum_f32_workspace_bytes(max_n), bench_reduce_sum_i32_workspace_bytes(max_n),
                             bench_reduce_min_f32_workspace_bytes(max_n), bench_reduce_min_i32_workspace_bytes(max_n),
                             bench_reduce_mat2mul_mat2u_workspace_bytes(max_n), bench_scan_sum_f32_workspace_bytes(max_n),
                             bench_exscan_sum_f32_workspace_bytes(max_n), bench_scan_sum_i32_workspace_bytes(max_n),
                             bench_exscan_sum_i32_workspace_bytes(max_n), bench_scan_mat2mul_mat2u_workspace_bytes(max_n),
                             bench_scan_f32_b256_t28_workspace_bytes(max_n), bench_scan_f32_b256_t32_workspace_bytes(max_n),
                             bench_scan_f32_b256_t44_workspace_bytes(max_n)});
    CHECK(cudaMalloc(&b.work, b.work_bytes));
    CHECK(cudaMemset(b.work, 0, b.work_bytes));
    CHECK(cudaMalloc(&b.gen_out, 256));
    CHECK(cudaMalloc(&b.cub_out, 256));

    int ro_per_sm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&ro_per_sm, read_only_kernel, RO_BLOCK, 0));
    b.ro_max_grid = prop.multiProcessorCount * std::max(ro_per_sm, 1);
    CHECK(cudaMalloc((void **)&b.ro_out, (size_t)b.ro_max_grid * sizeof(uint4)));
    CHECK(cudaDeviceSynchronize());

    if (wanted(only, "reduce")) {
        run_row<float>(b, "f32 sum", bench_reduce_sum_f32, CubSum(), CHECK_REL_1E4, logs);
        run_row<int32_t>(b, "i32 sum", bench_reduce_sum_i32, CubSum(), CHECK_EXACT, logs);
        run_row<float>(b, "f32 min", bench_reduce_min_f32, CubMin(), CHECK_EXACT, logs);
        run_row<int32_t>(b, "i32 min", bench_reduce_min_i32, CubMin(), CHECK_EXACT, logs);
        run_row<mat2u>(b, "mat2u mul", bench_reduce_mat2mul_mat2u, CubMat2Mul(), CHECK_HOST_PRODUCT, logs16);
    }
    if (wanted(only, "scan")) {
        run_scan_row<float>(b, "f32 scan", bench_scan_sum_f32, CubInclusiveSum(), false, logs);
        run_scan_row<float>(b, "f32 exscan", exscan_f32, CubExclusiveSum(), true, logs);
        run_scan_row<int32_t>(b, "i32 scan", bench_scan_sum_i32, CubInclusiveSum(), false, logs);
        run_scan_row<int32_t>(b, "i32 exscan", exscan_i32, CubExclusiveSum(), true, logs);
        run_scan_row<mat2u>(b, "mat2u scan", bench_scan_mat2mul_mat2u, CubMat2Scan(), false, logs16);
    }

    if (only && strcmp(only, "variants") == 0) {   // other shapes of the f32 scan family
        run_scan_row<float>(b, "scan default", bench_scan_sum_f32, CubInclusiveSum(), false, logs);
        run_scan_row<float>(b, "scan b256t28", bench_scan_f32_b256_t28, CubInclusiveSum(), false, logs);
        run_scan_row<float>(b, "scan b256t32", bench_scan_f32_b256_t32, CubInclusiveSum(), false, logs);
        run_scan_row<float>(b, "scan b256t44", bench_scan_f32_b256_t44, CubInclusiveSum(), false, logs);
        run_scan_row<float>(b, "scan b128t8", bench_scan_f32_b128_t8, CubInclusiveSum(), false, logs);
        run_scan_row<float>(b, "scan b128t16", bench_scan_f32_b128_t16, CubInclusiveSum(), false, logs);
        run_scan_row<float>(b, "scan b256t8", bench_scan_f32_b256_t8, CubInclusiveSum(), false, logs);
        run_scan_row<float>(b, "scan b256t16", bench_scan_f32_b256_t16, CubInclusiveSum(), false, logs);
        run_scan_row<float>(b, "scan b64t16", bench_scan_f32_b64_t16, CubInclusiveSum(), false, logs);
        run_segreduce_rows(b, 28, {"avg1000", "1..16", "one"}, "segreduce t8", bench_segreduce_f32_t8,
                           bench_segreduce_f32_t8_workspace_bytes);
        run_segscan_rows(b, 27, {"1..16"}, "segscan/key t16", bench_segscan_f32_t16, bench_segscan_f32_t16_workspace_bytes);
    }
    if (only && strcmp(only, "segvariants") == 0) {   // the segmented reduce at small and medium n, two shapes
        const std::vector<std::string> dists = {"avg1000", "1..16", "one", "power"};
        for (int lg : {16, 20, 22, 24}) {
            run_segreduce_rows(b, lg, dists);
            run_segreduce_rows(b, lg, dists, "seg b256t8", bench_segreduce_f32_t8, bench_segreduce_f32_t8_workspace_bytes);
        }
    }
    if (only && strcmp(only, "segavg") == 0) {   // the segmented reduce by average segment length
        const std::vector<std::string> dists = {"avg16", "avg32", "avg64", "avg128", "avg256", "avg1000", "avg4096",
                                                "avg16384", "power"};
        for (int lg : !sizes.empty() ? sizes : quick ? std::vector<int>{16, 18, 20, 24} : std::vector<int>{16, 18, 20, 24, 28})
            run_segreduce_rows(b, lg, dists);
    }
#ifdef BENCH_AB
    if (only && strcmp(only, "ab") == 0) {
        AB_ROWS
    }
#endif
    if (only && strcmp(only, "medium") == 0) {   // between the small-input shapes and the large ones
        const std::vector<int> mid = {17, 18, 19, 20, 21};
        run_scan_row<float>(b, "f32 scan", bench_scan_sum_f32, CubInclusiveSum(), false, mid);
        run_scan_row<float>(b, "f32 exscan", exscan_f32, CubExclusiveSum(), true, mid);
        run_scan_row<int32_t>(b, "i32 scan", bench_scan_sum_i32, CubInclusiveSum(), false, mid);
        run_scan_row<mat2u>(b, "mat2u scan", bench_scan_mat2mul_mat2u, CubMat2Scan(), false, mid);
        for (int lg : mid)
            run_segscan_rows(b, lg, {"1..16", "avg1000"});
    }
    if (only && strcmp(only, "small") == 0) {   // the scans where launches and latency are most of a call
        const std::vector<int> small = {12, 13, 14, 15, 16, 18};
        run_scan_row<float>(b, "f32 scan", bench_scan_sum_f32, CubInclusiveSum(), false, small);
        run_scan_row<float>(b, "f32 exscan", exscan_f32, CubExclusiveSum(), true, small);
        run_scan_row<int32_t>(b, "i32 scan", bench_scan_sum_i32, CubInclusiveSum(), false, small);
        run_scan_row<mat2u>(b, "mat2u scan", bench_scan_mat2mul_mat2u, CubMat2Scan(), false, small);
        run_row<mat2u>(b, "mat2u mul", bench_reduce_mat2mul_mat2u, CubMat2Mul(), CHECK_HOST_PRODUCT, {14, 16, 18});
    }
    if (only && strcmp(only, "segsizes") == 0) {   // the segmented rows at small and medium n
        for (int lg : !sizes.empty() ? sizes : std::vector<int>{12, 14, 16, 18}) {
            run_segreduce_rows(b, lg, {"avg128", "avg1000", "1..16", "power"});
            run_segscan_rows(b, lg, {"1..16", "avg1000", "power"});
        }
    }
    if (wanted(only, "segmented")) {
        const std::vector<std::string> dists = {"avg1000", "1..16", "ones", "one", "power", "giant"};
        for (int lg : !sizes.empty() ? sizes : quick ? std::vector<int>{20, 28} : std::vector<int>{20, 24, 28})
            run_segreduce_rows(b, lg, dists);
        for (int lg : !sizes.empty() ? sizes : quick ? std::vector<int>{20, 27} : std::vector<int>{20, 24, 27})
            run_segscan_rows(b, std::min(lg, 27), {"1..16", "avg1000", "power"});
    }

    if (!results.empty()) {
        print_table();
        printf("\ngen/cub: CUB's time / ours (> 1: the generated reduce is faster).  copyGB/s counts read + write.\n"
               "gen/read: our GB/s / the read-only kernel's (the ceiling for a reduce; 1.00 = at the ceiling).\n"
               "g: = the same calls replayed from a CUDA graph (no host launch cost), n <= 2^%d.\n", GRAPH_MAX_LOG2);
    }
    if (!seg_results.empty())
        print_seg_table();
    if (!scan_results.empty()) {
        print_scan_table();
        printf("\nGB/s count the bytes read and written (2 n sizeof(T)); gen/copy: our GB/s / a device-to-device copy's.\n");
    }
    if (csv)
        write_csv(csv);
    if (failures)
        printf("\n%d MISMATCH(ES) in the generated results\n", failures);
    else
        printf("\nall generated results checked: ok\n");

    CHECK(cudaFree(b.ro_out));
    CHECK(cudaFree(b.cub_out));
    CHECK(cudaFree(b.gen_out));
    CHECK(cudaFree(b.work));
    CHECK(cudaFree(b.cub_tmp));
    CHECK(cudaFree(b.dst));
    CHECK(cudaFree(b.out_gen));
    CHECK(cudaFree(b.out_cub));
    CHECK(cudaFree(b.pool));
    CHECK(cudaEventDestroy(b.ev1));
    CHECK(cudaEventDestroy(b.ev0));
    CHECK(cudaStreamDestroy(b.stream));
    return failures ? 1 : 0;
}
