/* All-pairs shortest paths on a random weighted directed graph with the generated min-plus
 * matrix multiply (examples/apsp/spec.toml):
 *   D = W (W[i][i] = 0, +inf where no edge), then D = D (x) D until paths of n - 1 edges are in;
 *   S = W' (x) D with witnesses (W' without the zero diagonal): the witness of S[i][j] is the
 *   first hop of a shortest path from i to j, so following witnesses rebuilds every path.
 * Checked against Dijkstra on the CPU from sampled sources: every distance, and every rebuilt
 * path's edges summing to its distance.  Weights are integers, so float sums are exact.
 *   build/examples/apsp/apsp [n]        (vertices, default 4096) */
#include <math.h>
#include <string.h>

#include "../common.h"
#include "ap.h"

#define DEGREE  8  /* out-edges a vertex */
#define SOURCES 16 /* sampled sources checked against Dijkstra */

/* Dijkstra from s over the dense weights (O(n^2), no heap needed for a check) */
static void dijkstra(const float *w, int n, int s, float *dist, unsigned char *done)
{
    for (int v = 0; v < n; ++v)
        dist[v] = INFINITY, done[v] = 0;
    dist[s] = 0;
    for (int it = 0; it < n; ++it) {
        int u = -1;
        for (int v = 0; v < n; ++v)
            if (!done[v] && (u < 0 || dist[v] < dist[u]))
                u = v;
        if (u < 0 || dist[u] == INFINITY)
            break;
        done[u] = 1;
        for (int v = 0; v < n; ++v)
            if (w[(size_t)u * n + v] < INFINITY && dist[u] + w[(size_t)u * n + v] < dist[v])
                dist[v] = dist[u] + w[(size_t)u * n + v];
    }
}

int main(int argc, char **argv)
{
    const int n = argc > 1 ? atoi(argv[1]) : 4096;
    const size_t nn = (size_t)n * n;
    float *w = malloc(nn * sizeof(float)), *d = malloc(nn * sizeof(float)), *dist = malloc(n * sizeof(float));
    int32_t *succ = malloc(nn * sizeof(int32_t));
    unsigned char *done = malloc(n);
    if (n < 2 || !w || !d || !dist || !succ || !done) {
        fprintf(stderr, "usage: apsp [n >= 2]\n");
        return 2;
    }
    for (size_t i = 0; i < nn; ++i)
        w[i] = INFINITY;
    for (int u = 0; u < n; ++u)
        for (int e = 0; e < DEGREE; ++e) {
            const int v = (int)(rng() % (unsigned long long)n);
            if (v != u)
                w[(size_t)u * n + v] = (float)(1 + rng() % 100);
        }

    float *d_w, *d_d, *d_t;
    int32_t *d_succ;
    CHECK(cudaMalloc((void **)&d_w, nn * sizeof(float)));
    CHECK(cudaMalloc((void **)&d_d, nn * sizeof(float)));
    CHECK(cudaMalloc((void **)&d_t, nn * sizeof(float)));
    CHECK(cudaMalloc((void **)&d_succ, nn * sizeof(int32_t)));
    /* D = W with a zero diagonal; W' = W (no diagonal) for the first hops */
    CHECK(cudaMemcpy(d_w, w, nn * sizeof(float), cudaMemcpyHostToDevice));
    for (int i = 0; i < n; ++i)
        w[(size_t)i * n + i] = 0;
    CHECK(cudaMemcpy(d_d, w, nn * sizeof(float), cudaMemcpyHostToDevice));
    for (int i = 0; i < n; ++i)
        w[(size_t)i * n + i] = INFINITY;

    cudaEvent_t t0, t1;
    CHECK(cudaEventCreate(&t0));
    CHECK(cudaEventCreate(&t1));
    CHECK(cudaEventRecord(t0, 0));
    int squarings = 0;
    for (long long reach = 1; reach < n - 1; reach *= 2, ++squarings) { /* paths of 2 reach edges */
        CHECK(ap_matmul_min_plus_f32(d_d, n, d_d, n, n, n, n, 0, d_t, n, NULL, 0, 0));
        float *x = d_d;
        d_d = d_t, d_t = x;
    }
    CHECK(ap_matmul_min_plus_f32_witness(d_w, n, d_d, n, n, n, n, 0, d_t, n, d_succ, n, NULL, 0, 0));
    CHECK(cudaEventRecord(t1, 0));
    CHECK(cudaEventSynchronize(t1));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, t0, t1));
    CHECK(cudaMemcpy(d, d_d, nn * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(succ, d_succ, nn * sizeof(int32_t), cudaMemcpyDeviceToHost));
    printf("%d vertices, %d edges a vertex: %d min-plus squarings and one with witnesses in %.1f ms "
           "(%.2f T steps/s)\n",
           n, DEGREE, squarings, ms, (squarings + 1) * (double)nn * n / (ms * 1e9));

    size_t wrong = 0, bad_paths = 0, paths = 0, reachable = 0;
    for (int k = 0; k < SOURCES; ++k) {
        const int s = (int)(rng() % (unsigned long long)n);
        dijkstra(w, n, s, dist, done);
        for (int j = 0; j < n; ++j) {
            if (j == s) {
                wrong += d[(size_t)s * n + j] != 0;
                continue;
            }
            wrong += d[(size_t)s * n + j] != dist[j];
            if (dist[j] == INFINITY)
                continue;
            ++reachable;
            /* follow the first hops from s to j: each an edge, summing to the distance */
            float total = 0;
            int v = s, hops = 0, ok = 1;
            while (v != j && ok) {
                const int32_t u = succ[(size_t)v * n + j];
                ok = u >= 0 && u < n && w[(size_t)v * n + u] < INFINITY && ++hops < n;
                if (ok) {
                    total += w[(size_t)v * n + u];
                    v = u;
                }
            }
            ++paths;
            bad_paths += !ok || total != dist[j];
        }
    }
    printf("%d sources against Dijkstra: %zu distances wrong; %zu of %zu paths rebuilt wrong (%zu reachable)\n",
           SOURCES, wrong, bad_paths, paths, reachable);
    cudaFree(d_w);
    cudaFree(d_d);
    cudaFree(d_t);
    cudaFree(d_succ);
    free(w);
    free(d);
    free(dist);
    free(succ);
    free(done);
    return wrong || bad_paths ? 1 : 0;
}
