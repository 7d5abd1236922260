// GPU test of the generated matrix multiplies: every instance of tests/gpu/matmul/spec.toml
// against a CPU fold of every C element in k order with the spec's own semiring C (cases.inc,
// written by run.py), exactly: floats are quarters in [-4, 4), so every sum and product is exact
// and the order cannot matter.  Odd shapes, padded leading dimensions, k = 0, accumulate on and
// off, 5% of A's and B's elements the semiring's zero (unreachable, for the path semirings);
// witnesses compared too.  Exact-size buffers, the bytes past C's rows checked untouched.
//   ./matmul_test [--quick] [--only NAME]      prints a line a failure, then `N passed, M failed`
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "../family_driver.h"
#include "mt.h"

template <class T> static T random_value();
template <> float random_value<float>()
{
    return (float)((int)(next_u32() % 32) - 16) / 4.0f;
}
template <> double random_value<double>()
{
    return (double)((int)(next_u32() % 32) - 16) / 4.0;
}
template <> int32_t random_value<int32_t>()
{
    return (int32_t)(next_u32() % 201) - 100;
}
template <> uint8_t random_value<uint8_t>()
{
    return (uint8_t)next_u32();
}
template <> uint32_t random_value<uint32_t>()
{
    return next_u32();
}

// random elements, one in `zero_every` of them `zero` (the semiring's: an unreachable edge for the
// path semirings), none where it is 0 (a step's tiles all in a fast step's domain)
static unsigned zero_every = 20;
template <class T> static void fill(T *p, size_t count, T zero)
{
    for (size_t i = 0; i < count; ++i)
        p[i] = zero_every && next_u32() % zero_every == 0 ? zero : random_value<T>();
}

// C = zero (+) A[i][0] (x) B[0][j] (+) ..., in k order; the witness: the first k whose product
// changed the fold (-1: none); with accumulate, C's own value first
template <class A, class B, class C>
static void ref_mm(C (*zero)(void), C (*add)(C, C), C (*mul)(A, B), bool ta, bool tb, const A *a, size_t lda,
                   const B *b, size_t ldb, size_t m, size_t n, size_t k, int acc, C *c, size_t ldc, int32_t *w,
                   size_t ldw)
{
    for (size_t i = 0; i < m; ++i)
        for (size_t j = 0; j < n; ++j) {
            C v = zero();
            int32_t win = -1;
            for (size_t kk = 0; kk < k; ++kk) {
                const C next =
                    add(v, mul(ta ? a[kk * lda + i] : a[i * lda + kk], tb ? b[j * ldb + kk] : b[kk * ldb + j]));
                if (!(next == v)) {
                    v = next;
                    win = (int32_t)kk;
                }
            }
            if (acc) {
                const C old = c[i * ldc + j], both = add(old, v);
                if (both == old)
                    win = -1;
                v = both;
            }
            c[i * ldc + j] = v;
            if (w)
                w[i * ldw + j] = win;
        }
}

typedef cudaError_t (*CallFn)(const void *, size_t, const void *, size_t, size_t, size_t, size_t, int, void *, size_t,
                              int32_t *, size_t, void *, size_t, cudaStream_t);
typedef size_t (*WorkFn)(size_t, size_t, size_t);
typedef void (*RefFn)(const void *, size_t, const void *, size_t, size_t, size_t, size_t, int, void *, size_t,
                      int32_t *, size_t);
typedef void (*GenFn)(void *, size_t, int); // 0: A's elements, 1: B's, 2: C's

struct Instance {
    const char *name;
    size_t a_size, b_size, c_size;
    bool ta, tb, witness;
    CallFn fn;
    RefFn ref;
    GenFn gen;
    WorkFn work; // the workspace it asks for
};

#include "cases.inc"

static int passed = 0, failed = 0;

struct Case {
    size_t m, n, k, pad_a, pad_b, pad_c;
    int acc;
    size_t shift;        // A, B and C this many elements past an allocation's start (off 16-byte words)
    unsigned zero_every; // the inputs' zeros: one in this many (0: none)
    unsigned work_div;   // the workspace given: what the multiply asks for, divided by this (0: none)
};

static void run_case(const Instance &in, const Case &c)
{
    const size_t lda = (in.ta ? c.m : c.k) + c.pad_a, ldb = (in.tb ? c.k : c.n) + c.pad_b, ldc = c.n + c.pad_c;
    const size_t rows_a = in.ta ? c.k : c.m, rows_b = in.tb ? c.n : c.k;
    const size_t na = rows_a ? (rows_a - 1) * lda + (in.ta ? c.m : c.k) : 0;
    const size_t nb = rows_b ? (rows_b - 1) * ldb + (in.tb ? c.k : c.n) : 0;
    const size_t nc = c.m ? (c.m - 1) * ldc + c.n : 0;
    char what[160];
    snprintf(what, sizeof what, "%zux%zux%zu pads %zu/%zu/%zu shift %zu zeros 1/%u workspace /%u%s", c.m, c.n, c.k,
             c.pad_a, c.pad_b, c.pad_c, c.shift, c.zero_every, c.work_div, c.acc ? " accumulate" : "");
    zero_every = c.zero_every;
    std::vector<unsigned char> ha(na * in.a_size + 1), hb(nb * in.b_size + 1), hc(nc * in.c_size + 1), got(hc.size());
    std::vector<int32_t> hw(in.witness ? nc + 1 : 1, 0x5a5a5a5a), gw(hw.size());
    in.gen(ha.data(), na, 0);
    in.gen(hb.data(), nb, 1);
    in.gen(hc.data(), nc, 2); // C's elements (and the padding between its rows) start as values: accumulate
    char *base_a = nullptr, *base_b = nullptr, *base_c = nullptr;
    int32_t *dw = nullptr;
    cudaMalloc(&base_a, (na + c.shift) * in.a_size + 1);
    cudaMalloc(&base_b, (nb + c.shift) * in.b_size + 1);
    cudaMalloc(&base_c, (nc + c.shift) * in.c_size + 1);
    char *da = base_a + c.shift * in.a_size, *db = base_b + c.shift * in.b_size, *dc = base_c + c.shift * in.c_size;
    if (in.witness)
        cudaMalloc(&dw, (nc + 1) * sizeof(int32_t));
    cudaMemcpy(da, ha.data(), ha.size(), cudaMemcpyHostToDevice);
    cudaMemcpy(db, hb.data(), hb.size(), cudaMemcpyHostToDevice);
    cudaMemcpy(dc, hc.data(), hc.size(), cudaMemcpyHostToDevice);
    if (dw)
        cudaMemcpy(dw, hw.data(), hw.size() * sizeof(int32_t), cudaMemcpyHostToDevice);
    // the workspace, an exact-size allocation (a k split where C's tiles are fewer than a wave)
    const size_t work_bytes = c.work_div ? in.work(c.m, c.n, c.k) / c.work_div : 0;
    void *work = nullptr;
    if (work_bytes) {
        cudaMalloc(&work, work_bytes);
        cudaMemset(work, 0, work_bytes);   // zeroed once, as the header asks
    }
    cudaError_t err = in.fn(da, lda, db, ldb, c.m, c.n, c.k, c.acc, dc, ldc, dw, ldc, work, work_bytes, 0);
    cudaError_t sync = cudaDeviceSynchronize();
    unsigned int counter = 0;   // the workspace's ticket counter (word 0): left at zero for any next call
    if (work_bytes >= 4)
        cudaMemcpy(&counter, work, 4, cudaMemcpyDeviceToHost);
    if (err != cudaSuccess || sync != cudaSuccess) {
        ++failed;
        printf("FAIL %s %s: %s\n", in.name, what, cudaGetErrorString(err != cudaSuccess ? err : sync));
    } else if (counter != 0) {
        ++failed;
        printf("FAIL %s %s: workspace counter not zero\n", in.name, what);
    } else {
        cudaMemcpy(got.data(), dc, got.size(), cudaMemcpyDeviceToHost);
        if (dw)
            cudaMemcpy(gw.data(), dw, gw.size() * sizeof(int32_t), cudaMemcpyDeviceToHost);
        in.ref(ha.data(), lda, hb.data(), ldb, c.m, c.n, c.k, c.acc, hc.data(), ldc, in.witness ? hw.data() : nullptr,
               ldc);
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < got.size(); ++i)
            if (got[i] != hc[i] && bad++ == 0)
                first = i;
        size_t bad_w = 0;
        if (in.witness)
            for (size_t i = 0; i < gw.size(); ++i)
                bad_w += gw[i] != hw[i];
        if (bad || bad_w) {
            ++failed;
            printf("FAIL %s %s: %zu bytes of C differ (first at element %zu), %zu witnesses\n", in.name, what, bad,
                   first / in.c_size, bad_w);
        } else {
            ++passed;
        }
    }
    cudaFree(work);
    cudaFree(base_a);
    cudaFree(base_b);
    cudaFree(base_c);
    cudaFree(dw);
}

int main(int argc, char **argv)
{
    const Args args = parse_args(argc, argv);
    const bool quick = args.quick;
    const char *only = args.only;
    for (const Instance &in : instances) {
        if (only && strcmp(only, in.name))
            continue;
        std::vector<Case> cases = {
            { 0, 5, 3, 0, 0, 0, 0, 0, 20, 1 },
            { 5, 0, 3, 0, 0, 0, 0, 0, 20, 1 },
            { 3, 5, 0, 0, 0, 0, 0, 0, 20, 1 },
            { 3, 5, 0, 1, 2, 3, 1, 0, 20, 1 },
            { 1, 1, 1, 0, 0, 0, 0, 0, 20, 1 },
            { 7, 13, 5, 0, 0, 0, 1, 0, 20, 1 },
            { 128, 128, 8, 0, 0, 0, 0, 0, 20, 1 },
            { 129, 127, 9, 3, 5, 7, 0, 0, 20, 1 },
            { 257, 1, 300, 0, 1, 0, 1, 0, 20, 1 },
            { 1, 257, 300, 2, 0, 1, 0, 0, 20, 1 },
            { 64, 600, 33, 1, 1, 1, 1, 0, 20, 1 },
            // whole tiles in words; off words by the pointer or by the leading dimension; words with edges
            { 256, 256, 64, 0, 0, 0, 1, 0, 20, 1 },
            { 256, 256, 64, 0, 0, 0, 0, 1, 20, 1 },
            { 256, 256, 64, 1, 2, 0, 0, 0, 20, 1 },
            { 260, 132, 72, 4, 4, 0, 1, 0, 20, 1 },
            // no zeros (fast steps, where a semiring has one), but at the edges; a rare zero (some steps fast)
            { 256, 256, 64, 0, 0, 0, 1, 0, 0, 1 },
            { 129, 127, 40, 3, 5, 7, 0, 0, 0, 1 },
            { 256, 256, 160, 0, 0, 0, 0, 0, 5000, 1 },
            // k split in slices (few tiles, long k): the whole workspace, half of it, none
            { 64, 600, 3000, 1, 2, 3, 1, 0, 20, 1 },
            { 200, 130, 1111, 0, 0, 0, 0, 1, 0, 1 },
            { 64, 600, 3000, 0, 0, 0, 0, 0, 20, 2 },
            { 64, 600, 3000, 0, 0, 0, 1, 0, 20, 0 },
        };
        if (!quick) {
            cases.push_back({ 300, 200, 100, 3, 3, 3, 0, 0, 20, 1 });
            cases.push_back({ 521, 263, 517, 0, 0, 0, 1, 0, 20, 1 });
            cases.push_back({ 1000, 1000, 1000, 0, 0, 0, 0, 0, 20, 1 });
        }
        for (const Case &c : cases)
            run_case(in, c);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
