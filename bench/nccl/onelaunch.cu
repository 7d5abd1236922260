// The all-reduce of a user operator across GPUs in ONE launch (issue 48): a stand-alone prototype,
// not wired into the generator.  The operator is the product of 2x2 matrices over u32 (wrapping:
// exact, so any grouping gives the same bits; not commutative, so the rank order matters), each
// element of determinant 1 so that long products do not decay to zero.  Side by side, in one run,
// at n = 1, 32, 1024, 2^14, 2^17, 2^20 elements a rank, the same local reduce kernel in each:
//   (a) baseline: the local reduce + ncclAllReduce of one float;
//   (b) today's generated path: the local reduce -> ncclAllGather of the accumulators -> a
//       one-thread fold in rank order (three launches);
//   (c) one launch: the local reduce's last block stores the rank's accumulator into its slot of
//       every rank's mailbox (peer pointers, stores over NVLink), waits until every rank's slot
//       of this call has arrived, folds the slots in rank order and writes d_out.
// Before the timing, at each n, 48 calls of (b) and of (c) back to back (no host sync between
// them), on three data sets in turn, each call's result to its own slot, are checked on every
// rank bit for bit against a CPU fold in rank order, and (c) against (b).
//   ./onelaunch      every visible GPU a rank, a host thread each (bench/nccl/run.sh, STEPS=onelaunch)
// Prints a table (rank 0's medians of 15 runs of 50 calls, us a call): the local reduce alone,
// NCCL's all-reduce of one float alone, (a), (b), (c), and (c) over (a) and over the sum of the
// first two (the issue's measure, timed apart as bench/nccl/bench.cu does); the checks; any
// rank's timeout (a wait for the peers that gave up: a missing or late rank).  Exit 1 on a
// wrong result or a timeout.
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <thread>
#include <vector>

#include "../../examples/nccl/ranks.h"
#include "../common.cuh"
#include "../../tests/gpu/nccl/comms.h"

typedef unsigned long long u64;

constexpr int THREADS = 256, WARPS = THREADS / 32;
constexpr int ITEMS = 4, STEP = 32 * ITEMS; // a lane folds ITEMS consecutive elements; a warp, STEP a step
constexpr int MAX_BLOCKS = THREADS;         // the last block folds the blocks' partials, one a thread
constexpr int WORDS = 4;                    // 32-bit words of an accumulator
constexpr int MAX_RANKS = 32 / WORDS;       // every rank's slot's words: one warp stores and waits
constexpr u64 SPIN_NS = 5000000000ull;      // a wait for the peers gives up after 5 s
constexpr int DATASETS = 3, CHECK_CALLS = 48, REPS = 15, CALLS = 50;

struct __align__(16) mat2
{
    uint32_t a, b, c, d; // [[a b] [c d]]
};

__host__ __device__ inline mat2 mul(mat2 x, mat2 y)
{
    return { x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c, x.c * y.b + x.d * y.d };
}

__host__ __device__ inline mat2 identity()
{
    return { 1, 0, 0, 1 };
}

// ---------------------------------------------------------------------------------------------
// the local reduce, the same in (a), (b) and (c): a grid of at most MAX_BLOCKS blocks, each warp
// a consecutive piece of the part (warp w of block b: piece b * WARPS + w), folded in steps of
// STEP elements (a lane's ITEMS consecutive elements, then the 32 lanes in order by shuffles);
// a block folds its warps in order, and the last block to finish (an atomic ticket) the blocks'
// partials in order.  The last block then runs the tail: (a), (b) store the accumulator, (c)
// exchanges it with the peers.  (c) takes the last block by ticket rather than a cooperative
// launch and a grid-wide sync: an ordinary launch like the local reduce's (no cudaLaunchCooperativeKernel,
// no cap of the grid at what is resident at once), the other blocks leave as soon as their partial
// is out instead of waiting resident, and only one warp spins, starting the moment the last
// partial lands.

// this rank's scratch for the local reduce: the blocks' partials and the ticket counter (zero
// between calls: the last block puts it back)
struct Local {
    mat2 *partials;
    unsigned *ticket;
};

__device__ inline mat2 load(const mat2 *p)
{
    const uint4 v = __ldg(reinterpret_cast<const uint4 *>(p));
    return { v.x, v.y, v.z, v.w };
}

__device__ inline mat2 shfl_down(mat2 v, int off)
{
    const unsigned all = 0xffffffffu;
    return { __shfl_down_sync(all, v.a, off), __shfl_down_sync(all, v.b, off), __shfl_down_sync(all, v.c, off),
             __shfl_down_sync(all, v.d, off) };
}

// lane 0: the lanes' values folded in lane order (lane l holds x_l .. x_{l+2k-1} after the step
// of offset k; the lanes past 31 that the high lanes read only spoil what lane 0 never reads)
__device__ inline mat2 warp_fold(mat2 v)
{
    for (int off = 1; off < 32; off *= 2)
        v = mul(v, shfl_down(v, off));
    return v;
}

// lane 0: in[lo, hi) folded in order (lo, hi the same across the warp)
__device__ mat2 warp_part(const mat2 *in, size_t lo, size_t hi)
{
    const size_t lane = threadIdx.x % 32;
    mat2 acc = identity();
    for (size_t s = lo; s < hi; s += STEP) {
        mat2 e[ITEMS];
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const size_t i = s + lane * ITEMS + k;
            e[k] = i < hi ? load(in + i) : identity();
        }
        mat2 v = e[0];
#pragma unroll
        for (int k = 1; k < ITEMS; ++k)
            v = mul(v, e[k]);
        acc = mul(acc, warp_fold(v));
    }
    return acc;
}

// thread 0: the warps' values (each in its lane 0) folded in warp order
__device__ mat2 fold_warps(mat2 v, mat2 *sh)
{
    if (threadIdx.x % 32 == 0)
        sh[threadIdx.x / 32] = v;
    __syncthreads();
    mat2 acc = identity();
    if (threadIdx.x == 0)
        for (int w = 0; w < WARPS; ++w)
            acc = mul(acc, sh[w]);
    return acc;
}

// true in the last block to finish, with every block's partial folded in block order (thread 0's
// `acc`); false in the others, which are done
__device__ bool fold_blocks(Local work, mat2 *acc, mat2 *sh)
{
    __shared__ bool last;
    if (threadIdx.x == 0) {
        work.partials[blockIdx.x] = *acc;
        __threadfence(); // the partial before the ticket
        last = atomicAdd(work.ticket, 1u) == gridDim.x - 1;
        if (last)
            __threadfence(); // the ticket before the others' partials
    }
    __syncthreads();
    if (!last)
        return false;
    mat2 p = identity();
    if (threadIdx.x < gridDim.x) {
        const uint4 v = __ldcg(reinterpret_cast<const uint4 *>(work.partials + threadIdx.x));
        p = { v.x, v.y, v.z, v.w };
    }
    *acc = fold_warps(warp_fold(p), sh);
    if (threadIdx.x == 0)
        *work.ticket = 0; // free for the next call
    return true;
}

template <class Tail>
__global__ void __launch_bounds__(THREADS) reduce_kernel(const mat2 *in, size_t n, Local work, Tail tail)
{
    __shared__ mat2 sh[WARPS];
    const size_t pieces = (size_t)gridDim.x * WARPS, piece = (n + pieces - 1) / pieces;
    const size_t lo = min(n, ((size_t)blockIdx.x * WARPS + threadIdx.x / 32) * piece), hi = min(n, lo + piece);
    mat2 acc = fold_warps(warp_part(in, lo, hi), sh);
    if (gridDim.x > 1 && !fold_blocks(work, &acc, sh))
        return;
    tail(acc); // the whole last block; acc valid in thread 0
}

// (a), (b): the rank's accumulator to `out`
struct StoreAcc {
    mat2 *out;
    __device__ void operator()(mat2 acc) const
    {
        if (threadIdx.x == 0)
            *out = acc;
    }
};

// (b): the gathered accumulators folded in rank order (the generated ag_fold_ranks)
__global__ void fold_ranks(const mat2 *gathered, int ranks, mat2 *out)
{
    mat2 acc = identity();
    for (int r = 0; r < ranks; ++r)
        acc = mul(acc, gathered[r]);
    *out = acc;
}

// ---------------------------------------------------------------------------------------------
// (c): the exchange.  Every rank has a mailbox in its own memory, u64 box[2][MAX_RANKS][WORDS]:
// two buffers (by the parity of the call's epoch), in each a slot a rank, in each slot a word
// for each 32-bit word of the accumulator, as NCCL's LL protocol does: the high half the epoch
// of the call that wrote it, the low half the data.  An aligned 8-byte store is seen whole or
// not at all, so a word whose high half reads this call's epoch carries this call's data, with
// no fence or barrier.  The epoch is a per-rank call counter in device memory, advanced by the
// kernel itself: the ranks call in lockstep (as for any collective), so the counters agree.
//
// Why two buffers (by parity) suffice, with no barrier between calls: rank r writes call e's
// word into peer q's buffer e % 2, over what call e - 2 left there.  q has read that (e - 2)
// word already: r is in call e, so r's call e - 1 saw q's slot of epoch e - 1, which q wrote in
// its own call e - 1, after its call e - 2 had finished reading (calls on a stream run one after
// the other, writes before reads within a call).  And a word of an older epoch never passes
// for this one, as the reader waits for the exact epoch.  Nor can r get two calls ahead (write
// e + 2 while q still reads e): r's call e + 1 waits for q's word of e + 1.  The 32-bit epoch
// starts at 1 over zeroed mailboxes; it would wrap after 2^32 calls, by when every word has
// been overwritten by a nonzero epoch.
//
// One process a GPU (not built here): each rank would cudaMalloc its mailbox, take its
// cudaIpcGetMemHandle, and the ranks would swap the 64-byte handles by one ncclAllGather (a
// blocking setup, once); each rank then opens every peer's with cudaIpcOpenMemHandle(...,
// cudaIpcMemLazyEnablePeerAccess) and copies the resulting pointers into its table, as below.
// (Or NCCL 2.28's device API: a symmetric window registered once, ncclGetLsaPointer to a peer.)

struct Ctx {
    u64 *peers[MAX_RANKS]; // every rank's mailbox, this rank's own at [me]
    unsigned epoch;        // this rank's calls so far (advanced by the kernel)
    unsigned timeout;      // the epoch of the first call here whose wait gave up (0: none)
    int ranks, me;
};

__device__ inline size_t slot_word(unsigned epoch, int rank, int word)
{
    return ((size_t)(epoch & 1) * MAX_RANKS + rank) * WORDS + word;
}

// an 8-byte word stored and loaded whole, volatile (not kept in L1 nor merged; the peer's memory
// over NVLink, or this GPU's own)
__device__ inline void store_word(u64 *p, u64 v)
{
    asm volatile("st.volatile.global.u64 [%0], %1;" ::"l"(__cvta_generic_to_global(p)), "l"(v) : "memory");
}

__device__ inline u64 load_word(const u64 *p)
{
    u64 v;
    asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(v) : "l"(__cvta_generic_to_global(p)) : "memory");
    return v;
}

__device__ inline u64 globaltimer()
{
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// spins on `at` (volatile loads) until it carries `epoch`; false after SPIN_NS (a missing peer)
__device__ bool wait_word(const u64 *at, unsigned epoch, u64 *word)
{
    u64 start = 0;
    for (unsigned k = 0;; ++k) {
        *word = load_word(at);
        if ((unsigned)(*word >> 32) == epoch)
            return true;
        if (k % 1024 == 0) {
            const u64 now = globaltimer();
            if (k == 0)
                start = now;
            else if (now - start > SPIN_NS)
                return false;
        }
    }
}

struct Exchange {
    Ctx *ctx;
    mat2 *out;
    __device__ void operator()(mat2 acc) const;
};

__device__ void Exchange::operator()(mat2 acc) const
{
    __shared__ uint32_t mine[WORDS], got[MAX_RANKS * WORDS];
    __shared__ unsigned epoch;
    __shared__ int stale, late;
    const int t = threadIdx.x, ranks = ctx->ranks, me = ctx->me;
    if (t == 0) {
        epoch = ctx->epoch + 1;
        ctx->epoch = epoch;
        stale = ctx->timeout != 0; // once a wait here has given up, every later call gives up at once
        late = 0;
        mine[0] = acc.a, mine[1] = acc.b, mine[2] = acc.c, mine[3] = acc.d;
    }
    __syncthreads();
    if (stale)
        return;              // d_out left as it was
    if (t < ranks * WORDS) { // one warp: thread t stores word t % WORDS to rank t / WORDS ...
        const int q = t / WORDS, w = t % WORDS;
        store_word(ctx->peers[q] + slot_word(epoch, me, w), (u64)epoch << 32 | mine[w]);
        u64 word; // ... and waits for that word of rank q's slot in this rank's own mailbox
        if (!wait_word(ctx->peers[me] + slot_word(epoch, q, w), epoch, &word))
            atomicOr(&late, 1);
        got[t] = (uint32_t)word;
    }
    __syncthreads();
    if (t != 0)
        return;
    if (late) { // d_out left as it was
        if (ctx->timeout == 0)
            ctx->timeout = epoch;
        return;
    }
    mat2 f = identity();
    for (int q = 0; q < ranks; ++q)
        f = mul(f, mat2{ got[q * WORDS], got[q * WORDS + 1], got[q * WORDS + 2], got[q * WORDS + 3] });
    *out = f;
}

// ---------------------------------------------------------------------------------------------
// host

static int R = 0, sms = 0; // the ranks; the multiprocessors of GPU 0
static std::vector<ncclComm_t> comms;

// one rank's buffers on its device (rank r's device is r)
struct Rank {
    cudaStream_t s = nullptr;
    Local work{};
    Ctx *ctx = nullptr;       // (c)'s context, its peer table filled once
    u64 *box = nullptr;       // (c)'s mailbox
    mat2 *in[DATASETS] = {};  // the part, three data sets
    mat2 *acc = nullptr;      // (a), (b): the rank's accumulator
    mat2 *gathered = nullptr; // (b): every rank's
    mat2 *out = nullptr;      // CHECK_CALLS results
    float *one = nullptr;     // (a): NCCL's one float
};

static std::vector<Rank> ranks;

// every device idle (what the legacy stream or a pageable copy left queued done before the
// non-blocking streams' next kernels)
static void sync_all()
{
    for (int r = 0; r < R; ++r) {
        CHECK(cudaSetDevice(r));
        CHECK(cudaDeviceSynchronize());
    }
}

// f(r) on every rank at once, a host thread each, on its device
static void on_ranks(const std::function<void(int)> &f)
{
    std::vector<std::thread> threads;
    for (int r = 0; r < R; ++r)
        threads.emplace_back([&f, r] {
            CHECK(cudaSetDevice(r));
            f(r);
        });
    for (auto &t : threads)
        t.join();
}

// once: streams, scratch, mailboxes, peer access between every pair and each rank's table of
// the mailboxes (UVA pointers, valid on every device of this process with peer access on);
// false where some pair has no peer access
static bool setup()
{
    ranks.resize(R);
    for (int r = 0; r < R; ++r) {
        Rank &k = ranks[r];
        CHECK(cudaSetDevice(r));
        CHECK(cudaStreamCreateWithFlags(&k.s, cudaStreamNonBlocking));
        CHECK(cudaMalloc(&k.work.partials, MAX_BLOCKS * sizeof(mat2)));
        CHECK(cudaMalloc(&k.work.ticket, sizeof(unsigned)));
        CHECK(cudaMemset(k.work.ticket, 0, sizeof(unsigned)));
        CHECK(cudaMalloc(&k.box, 2 * MAX_RANKS * WORDS * sizeof(u64)));
        CHECK(cudaMemset(k.box, 0, 2 * MAX_RANKS * WORDS * sizeof(u64)));
        CHECK(cudaMalloc(&k.ctx, sizeof(Ctx)));
    }
    bool ok = true;
    for (int r = 0; r < R; ++r) {
        CHECK(cudaSetDevice(r));
        // the kernels loaded now: a lazy load at a first launch may wait for the context, and a
        // kernel that spins on peers must not wait on a load (CUDA_MODULE_LOADING=LAZY)
        cudaFuncAttributes fa;
        CHECK(cudaFuncGetAttributes(&fa, reduce_kernel<Exchange>));
        CHECK(cudaFuncGetAttributes(&fa, reduce_kernel<StoreAcc>));
        CHECK(cudaFuncGetAttributes(&fa, fold_ranks));
        for (int q = 0; q < R; ++q) {
            int can = 1;
            if (q != r)
                CHECK(cudaDeviceCanAccessPeer(&can, r, q));
            if (!can) {
                printf("no peer access from GPU %d to GPU %d: (c) skipped\n", r, q);
                ok = false;
            } else if (q != r) {
                const cudaError_t e = cudaDeviceEnablePeerAccess(q, 0);
                if (e == cudaErrorPeerAccessAlreadyEnabled) // (NCCL may have enabled it)
                    cudaGetLastError();
                else
                    CHECK(e);
            }
        }
        Ctx c{};
        for (int q = 0; q < R; ++q)
            c.peers[q] = ranks[q].box;
        c.ranks = R, c.me = r;
        CHECK(cudaMemcpy(ranks[r].ctx, &c, sizeof c, cudaMemcpyHostToDevice));
    }
    sync_all();
    return ok;
}

// a part of n elements of determinant 1 ([[1 + xy, x] [y, 1]]) from seed `seed`
static std::vector<mat2> random_part(size_t n, unsigned seed)
{
    std::mt19937 g(seed);
    std::vector<mat2> v(n);
    for (auto &m : v) {
        const uint32_t x = g(), y = g();
        m = { 1 + x * y, x, y, 1 };
    }
    return v;
}

static mat2 cpu_fold(const std::vector<mat2> &v)
{
    mat2 acc = identity();
    for (const auto &m : v)
        acc = mul(acc, m);
    return acc;
}

static bool same(mat2 x, mat2 y)
{
    return x.a == y.a && x.b == y.b && x.c == y.c && x.d == y.d;
}

// every rank's data sets uploaded; for each data set, the CPU fold in rank order (expect) and in
// reverse rank order (reversed: where it differs, the check can tell the order)
static void make_data(size_t n, mat2 *expect, mat2 *reversed)
{
    std::vector<mat2> parts(R);
    for (int d = 0; d < DATASETS; ++d) {
        for (int r = 0; r < R; ++r) {
            const auto v = random_part(n, (unsigned)(n * 131 + d * 17 + r));
            parts[r] = cpu_fold(v);
            CHECK(cudaSetDevice(r));
            CHECK(cudaMemcpy(ranks[r].in[d], v.data(), n * sizeof(mat2), cudaMemcpyHostToDevice));
        }
        expect[d] = reversed[d] = identity();
        for (int r = 0; r < R; ++r) {
            expect[d] = mul(expect[d], parts[r]);
            reversed[d] = mul(reversed[d], parts[R - 1 - r]);
        }
    }
    sync_all();
}

static void alloc(size_t n)
{
    for (int r = 0; r < R; ++r) {
        Rank &k = ranks[r];
        CHECK(cudaSetDevice(r));
        for (auto &p : k.in)
            CHECK(cudaMalloc(&p, n * sizeof(mat2)));
        CHECK(cudaMalloc(&k.acc, sizeof(mat2)));
        CHECK(cudaMalloc(&k.gathered, R * sizeof(mat2)));
        CHECK(cudaMalloc(&k.out, CHECK_CALLS * sizeof(mat2)));
        CHECK(cudaMalloc(&k.one, sizeof(float)));
        CHECK(cudaMemset(k.one, 0, sizeof(float)));
    }
}

static void release()
{
    for (int r = 0; r < R; ++r) {
        Rank &k = ranks[r];
        CHECK(cudaSetDevice(r));
        for (auto p : k.in)
            CHECK(cudaFree(p));
        CHECK(cudaFree(k.acc));
        CHECK(cudaFree(k.gathered));
        CHECK(cudaFree(k.out));
        CHECK(cudaFree(k.one));
    }
}

// the local reduce's grid: a block for each 2048 elements, at most one a multiprocessor
static int grid_for(size_t n)
{
    return (int)std::min<size_t>((n + 2047) / 2048, (size_t)std::min(sms, MAX_BLOCKS));
}

enum Path { LOCAL, BASELINE, THREE, ONE, NCCL_ONLY };

// one call of `path` on rank r over data set d, the result (b, c) to `out`
static void call(Path path, int r, size_t n, int d, mat2 *out)
{
    Rank &k = ranks[r];
    const int grid = grid_for(n);
    if (path == NCCL_ONLY) {
        ncclAllReduce(k.one, k.one, 1, ncclFloat32, ncclSum, comms[r], k.s);
        return;
    }
    if (path == ONE) {
        reduce_kernel<<<grid, THREADS, 0, k.s>>>(k.in[d], n, k.work, Exchange{ k.ctx, out });
        return;
    }
    reduce_kernel<<<grid, THREADS, 0, k.s>>>(k.in[d], n, k.work, StoreAcc{ k.acc });
    if (path == BASELINE)
        ncclAllReduce(k.one, k.one, 1, ncclFloat32, ncclSum, comms[r], k.s);
    if (path == THREE) {
        ncclAllGather(k.acc, k.gathered, sizeof(mat2), ncclUint8, comms[r], k.s);
        fold_ranks<<<1, 1, 0, k.s>>>(k.gathered, R, out);
    }
}

// rank 0's median us a call of `path` (every rank calling, after a warm-up)
static double time_path(Path path, size_t n)
{
    std::vector<double> med(R);
    on_ranks([&](int r) {
        Rank &k = ranks[r];
        cudaEvent_t a, b;
        CHECK(cudaEventCreate(&a));
        CHECK(cudaEventCreate(&b));
        for (int i = 0; i < 10; ++i)
            call(path, r, n, 0, k.out);
        std::vector<float> t;
        for (int rep = 0; rep < REPS; ++rep) {
            CHECK(cudaEventRecord(a, k.s));
            for (int i = 0; i < CALLS; ++i)
                call(path, r, n, 0, k.out);
            CHECK(cudaEventRecord(b, k.s));
            CHECK(cudaEventSynchronize(b));
            float ms = 0;
            CHECK(cudaEventElapsedTime(&ms, a, b));
            t.push_back(ms * 1000 / CALLS);
        }
        CHECK(cudaGetLastError());
        std::sort(t.begin(), t.end());
        med[r] = t[REPS / 2];
        CHECK(cudaEventDestroy(a));
        CHECK(cudaEventDestroy(b));
    });
    return med[0];
}

// CHECK_CALLS calls of `path` back to back on every rank (data sets in turn, call i's result to
// out[i]); the number of results that differ from `expect` (and, where given, from `other`,
// each rank's results of another path); every rank's results left in `got`
static int check_path(Path path, size_t n, const mat2 *expect, std::vector<std::vector<mat2>> &got,
                      const std::vector<std::vector<mat2>> *other)
{
    got.assign(R, std::vector<mat2>(CHECK_CALLS));
    on_ranks([&](int r) {
        Rank &k = ranks[r];
        CHECK(cudaMemsetAsync(k.out, 0, CHECK_CALLS * sizeof(mat2), k.s));
        for (int i = 0; i < CHECK_CALLS; ++i)
            call(path, r, n, i % DATASETS, k.out + i);
        CHECK(cudaStreamSynchronize(k.s));
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(got[r].data(), k.out, CHECK_CALLS * sizeof(mat2), cudaMemcpyDeviceToHost));
    });
    int wrong = 0;
    for (int r = 0; r < R; ++r)
        for (int i = 0; i < CHECK_CALLS; ++i) {
            const bool bad = !same(got[r][i], expect[i % DATASETS]) || (other && !same(got[r][i], (*other)[r][i]));
            if (bad && wrong++ < 5)
                printf("WRONG: path %c, n %zu, rank %d, call %d\n", "-abc"[path], n, r, i);
        }
    return wrong;
}

// every rank's timeout flag (the epoch whose wait gave up; each rank's later calls gave up at
// once); the number of ranks that have one, each printed where `say`
static int timeouts(bool say)
{
    int late = 0;
    for (int r = 0; r < R; ++r) {
        Ctx c;
        CHECK(cudaSetDevice(r));
        CHECK(cudaMemcpy(&c, ranks[r].ctx, sizeof c, cudaMemcpyDeviceToHost));
        if (c.timeout && say)
            printf("TIMEOUT: rank %d gave up waiting for its peers at call %u (of %u)\n", r, c.timeout, c.epoch);
        late += c.timeout != 0;
    }
    return late;
}

// after the timed calls of (c) (data set 0, to out[0]): the number of ranks whose last result is wrong
static int last_results(size_t n, mat2 expect)
{
    int wrong = 0;
    for (int r = 0; r < R; ++r) {
        mat2 got;
        CHECK(cudaSetDevice(r));
        CHECK(cudaMemcpy(&got, ranks[r].out, sizeof got, cudaMemcpyDeviceToHost));
        if (!same(got, expect)) {
            printf("WRONG: path c, n %zu, rank %d, after the timed calls\n", n, r);
            ++wrong;
        }
    }
    return wrong;
}

// one row of the table; the number of wrong results.  (c) only while no rank has timed out.
static int row(size_t n, bool &one_launch)
{
    alloc(n);
    mat2 expect[DATASETS], reversed[DATASETS];
    make_data(n, expect, reversed);
    std::vector<std::vector<mat2>> three, one;
    int wrong = check_path(THREE, n, expect, three, nullptr);
    if (one_launch) {
        wrong += check_path(ONE, n, expect, one, &three);
        one_launch = timeouts(false) == 0;
    }
    const double local = time_path(LOCAL, n), nccl = time_path(NCCL_ONLY, n);
    const double base = time_path(BASELINE, n), b = time_path(THREE, n);
    char c[64] = "       - |       -       -";
    if (one_launch) {
        const double t = time_path(ONE, n);
        wrong += last_results(n, expect[0]);
        one_launch = timeouts(false) == 0;
        snprintf(c, sizeof c, "%8.1f | %7.2f %7.2f", t, t / base, t / (local + nccl));
    }
    const bool order = !same(expect[0], reversed[0]);
    printf("%10zu %6d | %8.1f %8.1f | %8.1f %8.1f %s %7.2f | %s%s\n", n, grid_for(n), local, nccl, base, b, c, b / base,
           wrong ? "WRONG" : "ok", order || R == 1 ? "" : " (rank order not told apart)");
    fflush(stdout);
    release();
    return wrong;
}

int main(int argc, char **argv)
{
    rank_env e;
    if (rank_begin(&e, &argc, &argv))
        return 2;
    if (e.processes) {
        fprintf(stderr, "onelaunch: the threaded form only (one process drives every visible GPU)\n");
        return 2;
    }
    ag_comms c;
    if (!ag_make_comms(e, c)) {
        fprintf(stderr, "no communicator\n");
        return 1;
    }
    R = c.R, comms = c.comms;
    if (R > MAX_RANKS) {
        fprintf(stderr, "onelaunch: %d GPUs, at most %d\n", R, MAX_RANKS);
        return 2;
    }
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    sms = prop.multiProcessorCount;
    int version = 0;
    ncclGetVersion(&version);
    printf("%d x %s, NCCL %d, a thread a rank; 2x2 u32 matrix product; us a call, rank 0's median of %d runs of %d "
           "calls\n",
           R, prop.name, version, REPS, CALLS);
    bool one_launch = setup();
    printf("%10s %6s | %8s %8s | %8s %8s %8s | %7s %7s %7s | %s\n", "n a rank", "blocks", "local", "NCCL 1f",
           "(a) base", "(b) 3", "(c) 1", "(c)/(a)", "(c)/sum", "(b)/(a)", "check");
    int wrong = 0;
    for (size_t n : { (size_t)1, (size_t)32, (size_t)1024, (size_t)1 << 14, (size_t)1 << 17, (size_t)1 << 20 })
        wrong += row(n, one_launch);
    const int late = timeouts(true);
    printf("%s; %s\n", wrong ? "some results WRONG" : "every result right", late ? "TIMEOUTS above" : "no timeouts");
    for (auto cm : comms)
        ncclCommDestroy(cm);
    return wrong || late ? 1 : 0;
}
