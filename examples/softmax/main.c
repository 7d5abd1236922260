/* Softmax statistics (log-sum-exp) of each row of a rows x cols float matrix with a row pitch, in
 * one pass, by the generated reduce along rows over a user operator (examples/softmax/spec.toml).
 * Checked against a two-pass CPU reference in double: log-sum-exp within a few float ulps of the
 * row's scale, and every softmax row summing to 1.
 *   build/examples/softmax/softmax */
#include <math.h>

#include "../common.h"
#include "sm.h"

static int check(size_t rows, size_t cols, size_t pitch, float scale)
{
    const size_t n = rows * pitch;
    float *h = malloc(n * sizeof *h), *d_in;
    lse *got = malloc(rows * sizeof *got), *d_out;
    double worst = 0, worst_sum = 0;
    size_t r, c;
    for (r = 0; r < rows; ++r)
        for (c = 0; c < pitch; ++c)
            h[r * pitch + c] = c < cols ? scale * (rng_unit() - 0.5f) : NAN; /* NaN in the padding: never read */
    CHECK(cudaMalloc((void **)&d_in, n * sizeof *d_in));
    CHECK(cudaMalloc((void **)&d_out, rows * sizeof *d_out));
    CHECK(cudaMemcpy(d_in, h, n * sizeof *h, cudaMemcpyHostToDevice));
    const size_t bytes = sm_rows_reduce_softmax_stats_f32_workspace_bytes(rows, cols);
    void *d_work = workspace(bytes);
    CHECK(sm_rows_reduce_softmax_stats_f32(d_in, rows, cols, pitch, d_out, d_work, bytes, 0));
    CHECK(cudaMemcpy(got, d_out, rows * sizeof *got, cudaMemcpyDeviceToHost));
    for (r = 0; r < rows; ++r) {
        const float *x = h + r * pitch;
        double m = -INFINITY, s = 0, sum = 0;
        for (c = 0; c < cols; ++c)
            m = x[c] > m ? x[c] : m;
        for (c = 0; c < cols; ++c)
            s += exp((double)x[c] - m);
        const double want = m + log(s), lse_got = (double)got[r].m + log((double)got[r].s);
        const double err = fabs(lse_got - want) / (fabs(want) + 1.0);
        worst = err > worst ? err : worst;
        for (c = 0; c < cols; ++c) /* softmax from the GPU's statistics */
            sum += exp((double)x[c] - got[r].m) / got[r].s;
        worst_sum = fabs(sum - 1.0) > worst_sum ? fabs(sum - 1.0) : worst_sum;
    }
    const int ok = worst < 1e-5 && worst_sum < 1e-4;
    printf(
        "%8zu rows x %-8zu (pitch %zu): log-sum-exp worst relative error %.2e, softmax rows sum to 1 within %.2e: %s\n",
        rows, cols, pitch, worst, worst_sum, ok ? "ok" : "WRONG");
    free(h);
    free(got);
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    if (d_work)
        CHECK(cudaFree(d_work));
    return ok;
}

int main(void)
{
    int ok = 1;
    ok &= check(65536, 37, 40, 20.0f);      /* short rows: a group of lanes a row */
    ok &= check(4096, 4096, 4096, 200.0f);  /* a warp a row; exp(100) would overflow a float unscaled */
    ok &= check(8, 1000003, 1000003, 5.0f); /* long rows, few: several blocks a row */
    return ok ? 0 : 1;
}
