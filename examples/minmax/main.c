/* Minimum, maximum, argmin and both bounds in one pass, checked against a loop on the CPU. */
#include "../common.h"
#include "mm.h"

int main(void)
{
    const size_t n = 3000017;
    float *h = malloc(n * sizeof *h), *d_in, *d_min, *d_max, lo = 1e30f, hi = -1e30f, got_min, got_max;
    mm_arg_f32 *d_arg, arg;
    minmax_f32 *d_mm, mm;
    size_t i, lo_at = 0, bytes = 0;
    void *d_work;

    for (i = 0; i < n; ++i) {
        h[i] = 1000.0f * (rng_unit() - 0.5f);
        if (h[i] < lo) {
            lo = h[i];
            lo_at = i;
        }
        if (h[i] > hi)
            hi = h[i];
    }
    h[n - 1] = lo; /* a tie: argmin must keep the lower index */
    CHECK(cudaMalloc((void **)&d_in, n * sizeof *d_in));
    CHECK(cudaMalloc((void **)&d_min, sizeof *d_min));
    CHECK(cudaMalloc((void **)&d_max, sizeof *d_max));
    CHECK(cudaMalloc((void **)&d_arg, sizeof *d_arg));
    CHECK(cudaMalloc((void **)&d_mm, sizeof *d_mm));
    CHECK(cudaMemcpy(d_in, h, n * sizeof *h, cudaMemcpyHostToDevice));
#define MAX_BYTES(f)                                                                                                   \
    if (f##_workspace_bytes(n) > bytes)                                                                                \
    bytes = f##_workspace_bytes(n)
    MAX_BYTES(mm_reduce_min_f32);
    MAX_BYTES(mm_reduce_max_f32);
    MAX_BYTES(mm_reduce_argmin_f32);
    MAX_BYTES(mm_reduce_minmax_f32);
    d_work = workspace(bytes);

    CHECK(mm_reduce_min_f32(d_in, n, d_min, d_work, bytes, 0));
    CHECK(mm_reduce_max_f32(d_in, n, d_max, d_work, bytes, 0));
    CHECK(mm_reduce_argmin_f32(d_in, n, d_arg, d_work, bytes, 0));
    CHECK(mm_reduce_minmax_f32(d_in, n, d_mm, d_work, bytes, 0));
    CHECK(cudaMemcpy(&got_min, d_min, sizeof got_min, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&got_max, d_max, sizeof got_max, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&arg, d_arg, sizeof arg, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&mm, d_mm, sizeof mm, cudaMemcpyDeviceToHost));

    printf("min %g (cpu %g)  max %g (cpu %g)\n", got_min, lo, got_max, hi);
    printf("argmin %g at %lld (cpu at %zu)  minmax [%g, %g]\n", arg.value, (long long)arg.index, lo_at, mm.lo, mm.hi);
    if (got_min != lo || got_max != hi || arg.value != lo || arg.index != (int64_t)lo_at || mm.lo != lo ||
        mm.hi != hi) {
        printf("FAIL\n");
        return 1;
    }
    printf("ok\n");
    cudaFree(d_in);
    cudaFree(d_min);
    cudaFree(d_max);
    cudaFree(d_arg);
    cudaFree(d_mm);
    cudaFree(d_work);
    free(h);
    return 0;
}
