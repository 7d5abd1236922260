// Prototypes for the segmented reduce by offsets at small and medium n (issue 19), timed beside
// the generated function (bench/spec.toml's bench_segreduce_sum_f32) and CUB's
// DeviceSegmentedReduce::Sum, per call and replayed from a CUDA graph.  Hand-written kernels, f32
// sums only: a group of G lanes a segment (G = 32: a warp a segment), a block a segment; with and
// without programmatic dependent launch.  Not part of the product: it tells which shapes to
// generate.  bash bench/trace/segspans.sh on the GPU machine.
#include <cub/cub.cuh>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>

#include "bench.h"
#include "../common.cuh"


static cudaStream_t g_stream = 0;  // where the calls go: 0, or the stream being captured

static __device__ __forceinline__ void pdl_enter()
{
    asm volatile("griddepcontrol.launch_dependents;\n\tgriddepcontrol.wait;" ::: "memory");
}

static __device__ __forceinline__ float fold4(float4 w, size_t e, size_t lo, size_t hi)
{
    float v = 0.0f;
    const float x[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
    for (int k = 0; k < 4; ++k)
        if (e + k >= lo && e + k < hi)
            v += x[k];
    return v;
}

// a lane's sum of elements lo .. hi - 1 taken by L lanes (`lane` its place among them) in 16-byte
// words, U words loaded before any is folded (the input aligned and n a multiple of 4)
template <int L, int U> static __device__ __forceinline__ float lane_sum(const float *in, size_t lo, size_t hi, unsigned int lane)
{
    float acc = 0.0f;
    for (size_t c = lo / 4 * 4 + lane * 4; c < hi; c += (size_t)L * 4 * U) {
        float4 w[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const size_t e = c + (size_t)u * L * 4;
            w[u] = e < hi ? *(const float4 *)(in + e) : make_float4(0, 0, 0, 0);
        }
#pragma unroll
        for (int u = 0; u < U; ++u)
            acc += fold4(w[u], c + (size_t)u * L * 4, lo, hi);
    }
    return acc;
}

// G lanes a segment, U 16-byte words a lane loaded before any is folded
template <int G, int U, bool PDL>
__global__ void __launch_bounds__(256) k_group(const float *in, size_t n, const int *off, size_t ns, float *out)
{
    if (PDL)
        pdl_enter();
    const unsigned int gl = threadIdx.x % G;
    const size_t s = (size_t)blockIdx.x * (256 / G) + threadIdx.x / G;
    size_t lo = 0, hi = 0;
    if (s < ns) {
        size_t a = (size_t)off[s], b = (size_t)off[s + 1];
        b = b < n ? b : n;
        lo = a < b ? a : b;
        hi = b;
    }
    float acc = lane_sum<G, U>(in, lo, hi, gl);
#pragma unroll
    for (int o = G / 2; o > 0; o /= 2)
        acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (gl == 0 && s < ns)
        out[s] = acc;
}

// a block of B threads a segment, lanes striped over 16-byte words, U words a thread in flight
template <int B, int U, bool PDL>
__global__ void __launch_bounds__(B) k_block(const float *in, size_t n, const int *off, size_t ns, float *out)
{
    __shared__ float part[B / 32];
    if (PDL)
        pdl_enter();
    const size_t s = blockIdx.x;
    size_t a = (size_t)off[s], b = (size_t)off[s + 1];
    b = b < n ? b : n;
    const size_t lo = a < b ? a : b, hi = b;
    float acc = lane_sum<B, U>(in, lo, hi, threadIdx.x);
#pragma unroll
    for (int o = 16; o > 0; o /= 2)
        acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (threadIdx.x % 32 == 0)
        part[threadIdx.x / 32] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.0f;
        for (int w = 0; w < B / 32; ++w)
            t += part[w];
        out[s] = t;
    }
}

template <class K>
static void launch(K kernel, unsigned int grid, unsigned int block, bool pdl, const float *in, size_t n, const int *off,
                   size_t ns, float *out)
{
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr;
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(block);
    cfg.stream = g_stream;
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = pdl ? 1 : 0;
    CHECK(cudaLaunchKernelEx(&cfg, kernel, in, n, off, ns, out));
}

struct Variant {
    std::string name;
    long min_avg, max_avg;  // measured where the average lies in [min_avg, max_avg]
    std::function<void(const float *, size_t, const int *, size_t, float *)> call;
};

static const int CALLS = 20;

// us a call: per call (CALLS back to back), and replayed from a graph of CALLS calls
static void time_both(const std::function<void()> &f, double &per_call, double &graph)
{
    per_call = time_us(f, CALLS, 7);
    cudaStream_t cap;  // the legacy stream cannot be captured: the calls go to `cap` meanwhile
    CHECK(cudaStreamCreateWithFlags(&cap, cudaStreamNonBlocking));
    cudaGraph_t g;
    cudaGraphExec_t ex;
    CHECK(cudaStreamBeginCapture(cap, cudaStreamCaptureModeRelaxed));
    g_stream = cap;
    for (int i = 0; i < CALLS; ++i)
        f();
    g_stream = 0;
    CHECK(cudaStreamEndCapture(cap, &g));
    CHECK(cudaGraphInstantiate(&ex, g, 0));
    graph = time_us([&] { CHECK(cudaGraphLaunch(ex, 0)); }, 1, 7) / CALLS;
    CHECK(cudaGraphExecDestroy(ex));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaStreamDestroy(cap));
}

// segspans [LOG2N AVG]: every point, or one (for ncu)
int main(int argc, char **argv)
{
    const int one_log = argc == 3 ? atoi(argv[1]) : 0;
    const long one_avg = argc == 3 ? atol(argv[2]) : 0;
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, 0));
    printf("GPU: %s (sm_%d%d, %d SMs)\n", p.name, p.major, p.minor, p.multiProcessorCount);
    const size_t max_n = (size_t)1 << 24;
    float *in, *out, *ref;
    int *off;
    CHECK(cudaMalloc(&in, max_n * 4 + 64));
    CHECK(cudaMalloc(&out, max_n * 4));
    CHECK(cudaMalloc(&ref, max_n * 4));
    CHECK(cudaMalloc(&off, (max_n + 1) * 4));
    std::vector<float> h(max_n);
    for (size_t i = 0; i < max_n; ++i)
        h[i] = (float)((mix64(i) >> 40) % 1000) / 64.0f - 7.0f;
    CHECK(cudaMemcpy(in, h.data(), max_n * 4, cudaMemcpyHostToDevice));
    void *cub_tmp = nullptr, *work = nullptr;
    size_t cub_bytes = 0, work_bytes = 0;

    std::vector<Variant> vs;
#define GROUP(G, U, PDL, LO, HI)                                                                                       \
    vs.push_back({"g" #G "u" #U + std::string(PDL ? "p" : ""), LO, HI,                                                 \
                  [](const float *i, size_t n, const int *o, size_t ns, float *r) {                                    \
                      launch(k_group<G, U, PDL>, (unsigned int)((ns + 256 / G - 1) / (256 / G)), 256, PDL, i, n, o, ns, \
                             r);                                                                                       \
                  }})
#define BLOCK(B, U, PDL, LO, HI)                                                                                       \
    vs.push_back({"b" #B "u" #U + std::string(PDL ? "p" : ""), LO, HI,                                                 \
                  [](const float *i, size_t n, const int *o, size_t ns, float *r) {                                    \
                      launch(k_block<B, U, PDL>, (unsigned int)ns, B, PDL, i, n, o, ns, r);                            \
                  }})
    GROUP(1, 1, false, 1, 16);
    GROUP(2, 1, false, 1, 32);
    GROUP(4, 1, false, 1, 64);
    GROUP(4, 2, false, 1, 64);
    GROUP(8, 1, false, 4, 128);
    GROUP(8, 2, false, 4, 128);
    GROUP(16, 2, false, 16, 1000);
    GROUP(32, 2, false, 16, 4096);
    GROUP(32, 2, true, 16, 4096);
    GROUP(8, 2, true, 4, 128);
    BLOCK(128, 2, false, 64, 1 << 20);
    BLOCK(128, 2, true, 64, 1 << 20);
    BLOCK(256, 2, false, 64, 1 << 20);
    BLOCK(256, 4, false, 64, 1 << 20);
    BLOCK(512, 2, false, 64, 1 << 20);

    printf("%-6s %-9s %8s | %9s %9s | %9s %9s | variants: name per-call/graph us (x CUB graph)\n", "n", "avg",
           "segments", "gen", "g:gen", "cub", "g:cub");
    const int logs[] = {12, 16, 20, 24};
    const long avgs[] = {2, 4, 8, 16, 32, 64, 128, 256, 1000, 4096, 16384};
    int bad = 0;
    for (int lg : logs) {
        const size_t n = (size_t)1 << lg;
        for (long avg : avgs) {
            if (avg * 2 > (long)n || (one_log && (lg != one_log || avg != one_avg)))
                continue;
            std::vector<int> st;
            uint64_t state = 12345 + lg * 131 + avg;
            for (size_t q = 0; q < n;) {
                st.push_back((int)q);
                state = mix64(state);
                q += 1 + state % (2 * avg - 1);
            }
            const size_t ns = st.size();
            st.push_back((int)n);
            CHECK(cudaMemcpy(off, st.data(), st.size() * 4, cudaMemcpyHostToDevice));
            std::vector<double> want(ns);
            for (size_t s = 0; s < ns; ++s) {
                double t = 0;
                for (int i = st[s]; i < st[s + 1]; ++i)
                    t += h[i];
                want[s] = t;
            }
            auto check = [&](const float *d, const char *name) {
                std::vector<float> got(ns);
                CHECK(cudaMemcpy(got.data(), d, ns * 4, cudaMemcpyDeviceToHost));
                for (size_t s = 0; s < ns; ++s)
                    if (std::fabs(got[s] - want[s]) > 1e-3 * (1 + std::fabs(want[s]))) {
                        printf("MISMATCH %s n=2^%d avg=%ld segment %zu: %g want %g\n", name, lg, avg, s, got[s], want[s]);
                        ++bad;
                        return;
                    }
            };
            size_t need = 0;
            CHECK(cub::DeviceSegmentedReduce::Sum(nullptr, need, in, ref, (int64_t)ns, off, off + 1, 0));
            if (need > cub_bytes) {
                CHECK(cudaFree(cub_tmp));
                CHECK(cudaMalloc(&cub_tmp, need));
                cub_bytes = need;
            }
            const size_t wneed = bench_segreduce_sum_f32_workspace_bytes(n);
            if (wneed > work_bytes) {
                CHECK(cudaFree(work));
                CHECK(cudaMalloc(&work, wneed));
                work_bytes = wneed;
            }
            double gen_c, gen_g, cub_c, cub_g;
            time_both([&] { CHECK(bench_segreduce_sum_f32(in, n, off, ns, out, work, work_bytes, g_stream)); }, gen_c,
                      gen_g);
            check(out, "gen");
            time_both(
                [&] {
                    CHECK(cub::DeviceSegmentedReduce::Sum(cub_tmp, cub_bytes, in, ref, (int64_t)ns, off, off + 1,
                                                          g_stream));
                },
                cub_c, cub_g);
            check(ref, "cub");
            printf("2^%-4d avg%-6ld %8zu | %9.2f %9.2f | %9.2f %9.2f |", lg, avg, ns, gen_c, gen_g, cub_c, cub_g);
            for (const Variant &v : vs) {
                if (avg < v.min_avg || avg > v.max_avg)
                    continue;
                CHECK(cudaMemset(out, 0, ns * 4));
                double c, g;
                time_both([&] { v.call(in, n, off, ns, out); }, c, g);
                check(out, v.name.c_str());
                printf(" %s %.2f/%.2f(%.2f)", v.name.c_str(), c, g, cub_g / g);
            }
            printf("   [gen x CUB graph %.2f]\n", cub_g / gen_g);
            fflush(stdout);
        }
    }
    printf("%s\n", bad ? "SOME RESULTS WRONG" : "all results checked: ok");
    return bad != 0;
}
