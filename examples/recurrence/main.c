/* Linear recurrences x[t] = a[t] x[t-1] + b[t] and sums over several arrays, by the generated
 * kernels of examples/recurrence/spec.toml: one long recurrence read from two arrays (a scan of
 * affine maps whose lift pairs a[t] with b[t]), a batch of recurrences along the rows of an
 * array of (a, b) records, a cumulative sum per row, and a dot product of two arrays.  Checked
 * against sequential CPU loops in double, within a bound of float rounding.
 *   build/examples/recurrence/recurrence */
#include <math.h>

#include "../common.h"
#include "rc.h"

/* a[t] in [0.5, 1), b[t] in [-0.5, 0.5): every x[t] stays within [-1, 1] */
static float coef(void)
{
    return 0.5f + 0.5f * rng_unit();
}
static float term(void)
{
    return rng_unit() - 0.5f;
}

static int report(const char *what, double err, double bound)
{
    const int ok = err <= bound;
    printf("%-46s worst error %.2e (bound %.0e): %s\n", what, err, bound, ok ? "ok" : "WRONG");
    return ok;
}

/* one sequence of n steps from x[-1] = x0: maps[t] applied to x0 gives x[t] */
static int one_sequence(size_t n, float x0)
{
    float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *d_a, *d_b;
    affine *maps = malloc(n * sizeof *maps), *d_maps;
    double x = x0, worst = 0;
    size_t t;
    char what[80];
    for (t = 0; t < n; ++t) {
        a[t] = coef();
        b[t] = term();
    }
    CHECK(cudaMalloc((void **)&d_a, n * sizeof *a));
    CHECK(cudaMalloc((void **)&d_b, n * sizeof *b));
    CHECK(cudaMalloc((void **)&d_maps, n * sizeof *maps));
    CHECK(cudaMemcpy(d_a, a, n * sizeof *a, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_b, b, n * sizeof *b, cudaMemcpyHostToDevice));
    const size_t bytes = rc_scan_recur_f32_workspace_bytes(n);
    void *d_work = workspace(bytes);
    CHECK(rc_scan_recur_f32(d_a, d_b, n, d_maps, d_work, bytes, 0));
    CHECK(cudaMemcpy(maps, d_maps, n * sizeof *maps, cudaMemcpyDeviceToHost));
    for (t = 0; t < n; ++t) {
        x = a[t] * x + b[t];
        const double got = (double)maps[t].a * x0 + maps[t].b, err = fabs(got - x);
        worst = err > worst ? err : worst;
    }
    snprintf(what, sizeof what, "recurrence of %zu steps (a, b: two arrays)", n);
    free(a);
    free(b);
    free(maps);
    CHECK(cudaFree(d_a));
    CHECK(cudaFree(d_b));
    CHECK(cudaFree(d_maps));
    if (d_work)
        CHECK(cudaFree(d_work));
    return report(what, worst, 1e-5);
}

/* a batch of `rows` recurrences of `cols` steps (records (a, b) with a row pitch), then the
   cumulative sums of the same rows' b */
static int batch(size_t rows, size_t cols, size_t pitch)
{
    const size_t n = rows * pitch;
    affine *in = malloc(n * sizeof *in), *got = malloc(n * sizeof *got), *d_in, *d_out;
    float *bs = malloc(n * sizeof *bs), *sums = malloc(n * sizeof *sums), *d_bs, *d_sums;
    double worst = 0, worst_sum = 0;
    size_t r, c;
    char what[80];
    for (r = 0; r < n; ++r) {
        in[r].a = coef();
        in[r].b = bs[r] = term();
    }
    CHECK(cudaMalloc((void **)&d_in, n * sizeof *in));
    CHECK(cudaMalloc((void **)&d_out, n * sizeof *got));
    CHECK(cudaMalloc((void **)&d_bs, n * sizeof *bs));
    CHECK(cudaMalloc((void **)&d_sums, n * sizeof *sums));
    CHECK(cudaMemcpy(d_in, in, n * sizeof *in, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_bs, bs, n * sizeof *bs, cudaMemcpyHostToDevice));
    size_t bytes = rc_rows_scan_compose_affine_workspace_bytes(rows, cols);
    void *d_work = workspace(bytes);
    CHECK(rc_rows_scan_compose_affine(d_in, rows, cols, pitch, d_out, pitch, d_work, bytes, 0));
    if (d_work)
        CHECK(cudaFree(d_work));
    bytes = rc_rows_scan_sum_f32_workspace_bytes(rows, cols);
    d_work = workspace(bytes);
    CHECK(rc_rows_scan_sum_f32(d_bs, rows, cols, pitch, d_sums, pitch, d_work, bytes, 0));
    CHECK(cudaMemcpy(got, d_out, n * sizeof *got, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(sums, d_sums, n * sizeof *sums, cudaMemcpyDeviceToHost));
    for (r = 0; r < rows; ++r) {
        double x = 0, s = 0;
        for (c = 0; c < cols; ++c) {
            const size_t i = r * pitch + c;
            x = in[i].a * x + in[i].b; /* from x[-1] = 0: x[t] is the map's b */
            s += bs[i];
            worst = fabs(got[i].b - x) > worst ? fabs(got[i].b - x) : worst;
            worst_sum = fabs(sums[i] - s) > worst_sum ? fabs(sums[i] - s) : worst_sum;
        }
    }
    snprintf(what, sizeof what, "%zu recurrences of %zu steps (pitch %zu)", rows, cols, pitch);
    int ok = report(what, worst, 1e-5);
    snprintf(what, sizeof what, "%zu cumulative sums of %zu (pitch %zu)", rows, cols, pitch);
    ok &= report(what, worst_sum, 4e-6 * sqrt((double)cols));
    free(in);
    free(got);
    free(bs);
    free(sums);
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    CHECK(cudaFree(d_bs));
    CHECK(cudaFree(d_sums));
    if (d_work)
        CHECK(cudaFree(d_work));
    return ok;
}

/* the dot product of two arrays of n floats */
static int dot(size_t n)
{
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *d_x, *d_y, *d_out, got;
    double want = 0, mag = 0;
    size_t i;
    char what[80];
    for (i = 0; i < n; ++i) {
        x[i] = term();
        y[i] = term();
        want += (double)x[i] * y[i];
        mag += fabs((double)x[i] * y[i]);
    }
    CHECK(cudaMalloc((void **)&d_x, n * sizeof *x));
    CHECK(cudaMalloc((void **)&d_y, n * sizeof *y));
    CHECK(cudaMalloc((void **)&d_out, sizeof got));
    CHECK(cudaMemcpy(d_x, x, n * sizeof *x, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_y, y, n * sizeof *y, cudaMemcpyHostToDevice));
    const size_t bytes = rc_reduce_dot_f32_workspace_bytes(n);
    void *d_work = workspace(bytes);
    CHECK(rc_reduce_dot_f32(d_x, d_y, n, d_out, d_work, bytes, 0));
    CHECK(cudaMemcpy(&got, d_out, sizeof got, cudaMemcpyDeviceToHost));
    snprintf(what, sizeof what, "dot product of %zu (relative to sum |x y|)", n);
    free(x);
    free(y);
    CHECK(cudaFree(d_x));
    CHECK(cudaFree(d_y));
    CHECK(cudaFree(d_out));
    if (d_work)
        CHECK(cudaFree(d_work));
    return report(what, fabs(got - want) / mag, 1e-6);
}

int main(void)
{
    int ok = 1;
    ok &= one_sequence(1, 0.25f);
    ok &= one_sequence(10000019, -0.5f); /* many tiles, chained in order */
    ok &= batch(65536, 100, 103);        /* short rows: groups of lanes a row */
    ok &= batch(16, 300007, 300007);     /* long rows, few */
    ok &= dot(33554467);
    return ok ? 0 : 1;
}
