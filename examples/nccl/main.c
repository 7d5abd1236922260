/* Across GPUs: every visible GPU a rank of one NCCL communicator (a thread each), holding a
 * consecutive part of one sequence of 3x3 matrices (uneven parts, the first one empty).  The
 * ordered product of the whole sequence on every rank (mg_reduce_mat3mul_mat3u_nccl_all), and
 * every prefix product (mg_scan_mat3mul_mat3u_nccl), checked against the CPU.
 *   build/examples/nccl/nccl [n]        (n: matrices in all, default 3000017) */
#include <pthread.h>
#include <string.h>

#include "../common.h"
#include "mg.h"

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

int main(int argc, char **argv)
{
    const size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 3000017;
    int ranks = 0;
    ncclComm_t comms[MAX_RANKS];
    struct rank k[MAX_RANKS];
    pthread_t threads[MAX_RANKS];
    CHECK(cudaGetDeviceCount(&ranks));
    if (ranks > MAX_RANKS)
        ranks = MAX_RANKS;
    if (ncclCommInitAll(comms, ranks, NULL) != ncclSuccess) {
        fprintf(stderr, "ncclCommInitAll failed\n");
        return 1;
    }
    mat3u *x = malloc((n ? n : 1) * sizeof(mat3u)), *prefix = malloc((n ? n : 1) * sizeof(mat3u));
    for (size_t i = 0; i < n; ++i)
        for (int e = 0; e < 9; ++e)
            x[i].m[e] = (uint32_t)(rng() % 7);
    /* rank r holds [b(r), b(r + 1)), b(r) = n r^2 / R^2: uneven parts, and rank 0's empty */
    size_t b[MAX_RANKS + 1];
    for (int r = 0; r <= ranks; ++r)
        b[r] = r == ranks ? n : r <= 1 ? 0 : (size_t)((double)n * r * r / ((double)ranks * ranks));
    for (int r = 0; r < ranks; ++r)
        k[r] = (struct rank){ r, comms[r], x + b[r], b[r + 1] - b[r], { { 0 } }, prefix + b[r] };
    for (int r = 0; r < ranks; ++r)
        pthread_create(&threads[r], NULL, run_rank, &k[r]);
    for (int r = 0; r < ranks; ++r)
        pthread_join(threads[r], NULL);

    /* the CPU: the same product in the same order, and the prefixes */
    mat3u p = { { 1, 0, 0, 0, 1, 0, 0, 0, 1 } };
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) {
        p = mul(p, x[i]);
        bad += memcmp(&p, &prefix[i], sizeof p) != 0;
    }
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
