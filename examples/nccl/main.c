/* Across GPUs: the ranks of one NCCL communicator, each holding a consecutive part of one
 * sequence of 3x3 matrices (uneven parts, the first one empty).  The ordered product of the whole
 * sequence on every rank (mg_reduce_mat3mul_mat3u_nccl_all), and every prefix product
 * (mg_scan_mat3mul_mat3u_nccl), checked against the CPU.  Two forms:
 *   build/examples/nccl/nccl [n]        every visible GPU a rank, a thread each
 *   python3 tests/gpu/nccl/launch.py -n 2 -- build/examples/nccl/nccl [n]
 *                                       one process a GPU (ranks.h: the rank, the NCCL id)
 * (n: matrices in all, default 3000017; every process makes the whole sequence, the same one). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <string.h>

#include "../common.h"
#include "mg.h"
#include "ranks.h"

#define MAX_RANKS 64

static mat3u mul(mat3u a, mat3u b)
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

struct rank {
    int r;
    ncclComm_t comm;
    const mat3u *part; /* host: this rank's matrices */
    size_t n;
    mat3u product, *prefix; /* host: the results */
};

static void *run_rank(void *arg)
{
    struct rank *k = arg;
    cudaStream_t s;
    mat3u *d_in = NULL, *d_out, *d_prefix = NULL;
    int ranks = 0;
    CHECK(cudaSetDevice(k->r));
    CHECK(cudaStreamCreate(&s));
    ncclCommCount(k->comm, &ranks);
    if (k->n) {
        CHECK(cudaMalloc((void **)&d_in, k->n * sizeof(mat3u)));
        CHECK(cudaMalloc((void **)&d_prefix, k->n * sizeof(mat3u)));
        CHECK(cudaMemcpy(d_in, k->part, k->n * sizeof(mat3u), cudaMemcpyHostToDevice));
    }
    CHECK(cudaMalloc((void **)&d_out, sizeof(mat3u)));
    size_t bytes = mg_reduce_mat3mul_mat3u_nccl_workspace_bytes(k->n, ranks);
    if (mg_scan_mat3mul_mat3u_nccl_workspace_bytes(k->n, ranks) > bytes)
        bytes = mg_scan_mat3mul_mat3u_nccl_workspace_bytes(k->n, ranks);
    void *d_work = workspace(bytes); /* one workspace serves both, one call after the other */
    CHECK(mg_reduce_mat3mul_mat3u_nccl_all(d_in, k->n, d_out, d_work, bytes, k->comm, s));
    CHECK(mg_scan_mat3mul_mat3u_nccl(d_in, k->n, d_prefix, d_work, bytes, k->comm, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemcpy(&k->product, d_out, sizeof(mat3u), cudaMemcpyDeviceToHost));
    if (k->n)
        CHECK(cudaMemcpy(k->prefix, d_prefix, k->n * sizeof(mat3u), cudaMemcpyDeviceToHost));
    cudaFree(d_in);
    cudaFree(d_out);
    cudaFree(d_prefix);
    cudaFree(d_work);
    CHECK(cudaStreamDestroy(s));
    return NULL;
}

/* rank r of `ranks` holds [b(r), b(r + 1)), b(r) = n r^2 / R^2: uneven parts, and rank 0's empty */
static size_t bound(size_t n, int r, int ranks)
{
    return r == ranks ? n : r <= 1 ? 0 : (size_t)((double)n * r * r / ((double)ranks * ranks));
}

/* the CPU: the product of x[0 .. n-1] in order; wrong prefixes among got[lo .. hi-1] counted */
static mat3u check(const mat3u *x, size_t n, const mat3u *got, size_t lo, size_t hi, size_t *bad)
{
    mat3u p = { { 1, 0, 0, 0, 1, 0, 0, 0, 1 } };
    *bad = 0;
    for (size_t i = 0; i < n; ++i) {
        p = mul(p, x[i]);
        if (i >= lo && i < hi)
            *bad += memcmp(&p, &got[i - lo], sizeof p) != 0;
    }
    return p;
}

/* one process a rank: this one's part, its product and its prefixes */
static int one_process(struct rank_env *e, const mat3u *x, size_t n)
{
    struct rank k = { e->rank, NULL, NULL, 0, { { 0 } }, NULL };
    if (rank_comm(e, &k.comm))
        return 1;
    const size_t lo = bound(n, e->rank, e->ranks), hi = bound(n, e->rank + 1, e->ranks);
    k.part = x + lo;
    k.n = hi - lo;
    k.prefix = malloc((k.n ? k.n : 1) * sizeof(mat3u));
    k.r = e->device;
    run_rank(&k);
    size_t bad = 0;
    const mat3u p = check(x, n, k.prefix, lo, hi, &bad);
    const int same = memcmp(&k.product, &p, sizeof p) == 0;
    printf("rank %d of %d (GPU %d, one process a rank), %zu of %zu matrices\nproduct: %s; prefixes: %zu wrong\n",
           e->rank, e->ranks, e->device, k.n, n, same ? "matches the CPU" : "WRONG", bad);
    ncclCommDestroy(k.comm);
    free(k.prefix);
    return same && bad == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    struct rank_env e;
    if (rank_begin(&e, &argc, &argv))
        return 2;
    const size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 3000017;
    int ranks = 0;
    ncclComm_t comms[MAX_RANKS];
    struct rank k[MAX_RANKS];
    pthread_t threads[MAX_RANKS];
    mat3u *x = malloc((n ? n : 1) * sizeof(mat3u)), *prefix = malloc((n ? n : 1) * sizeof(mat3u));
    for (size_t i = 0; i < n; ++i)
        for (int c = 0; c < 9; ++c)
            x[i].m[c] = (uint32_t)(rng() % 7);
    if (e.processes) {
        const int rc = one_process(&e, x, n);
        free(x);
        free(prefix);
        rank_end();
        return rc;
    }
    CHECK(cudaGetDeviceCount(&ranks));
    if (ranks > MAX_RANKS)
        ranks = MAX_RANKS;
    if (ncclCommInitAll(comms, ranks, NULL) != ncclSuccess) {
        fprintf(stderr, "ncclCommInitAll failed\n");
        return 1;
    }
    size_t b[MAX_RANKS + 1];
    for (int r = 0; r <= ranks; ++r)
        b[r] = bound(n, r, ranks);
    for (int r = 0; r < ranks; ++r)
        k[r] = (struct rank){ r, comms[r], x + b[r], b[r + 1] - b[r], { { 0 } }, prefix + b[r] };
    for (int r = 0; r < ranks; ++r)
        pthread_create(&threads[r], NULL, run_rank, &k[r]);
    for (int r = 0; r < ranks; ++r)
        pthread_join(threads[r], NULL);

    /* the CPU: the same product in the same order, and the prefixes */
    size_t bad = 0;
    const mat3u p = check(x, n, prefix, 0, n, &bad);
    int same = 1;
    for (int r = 0; r < ranks; ++r)
        same = same && memcmp(&k[r].product, &p, sizeof p) == 0;
    printf("%d GPU%s, %zu matrices (parts:", ranks, ranks > 1 ? "s" : "", n);
    for (int r = 0; r < ranks; ++r)
        printf(" %zu", k[r].n);
    printf(")\nproduct on every rank: %s; prefixes: %zu wrong\n", same ? "matches the CPU" : "WRONG", bad);
    for (int r = 0; r < ranks; ++r)
        ncclCommDestroy(comms[r]);
    free(x);
    free(prefix);
    return same && bad == 0 ? 0 : 1;
}
