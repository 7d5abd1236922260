/* Sum of floats on the GPU, plain and compensated, checked against a double-precision sum. */
#include <math.h>
#include "../common.h"
#include "vec.h"

int main(void)
{
    const size_t n = 10000019; /* not a multiple of anything */
    float *h = malloc(n * sizeof *h), *d_in, *d_out, got[2];
    double ref = 0.0;
    size_t i, bytes;
    void *d_work;

    for (i = 0; i < n; ++i) { /* large terms that cancel, small ones that don't */
        h[i] = (i % 2 ? 1.0e4f : -1.0e4f) + rng_unit();
        ref += h[i];
    }
    CHECK(cudaMalloc((void **)&d_in, n * sizeof *d_in));
    CHECK(cudaMalloc((void **)&d_out, 2 * sizeof *d_out));
    CHECK(cudaMemcpy(d_in, h, n * sizeof *h, cudaMemcpyHostToDevice));
    bytes = vec_reduce_sum_f32_workspace_bytes(n);
    if (vec_reduce_ksum_f32_workspace_bytes(n) > bytes)
        bytes = vec_reduce_ksum_f32_workspace_bytes(n);
    d_work = workspace(bytes); /* one workspace serves both, one call after the other */

    CHECK(vec_reduce_sum_f32(d_in, n, d_out, d_work, bytes, 0));
    CHECK(vec_reduce_ksum_f32(d_in, n, d_out + 1, d_work, bytes, 0));
    CHECK(cudaMemcpy(got, d_out, sizeof got, cudaMemcpyDeviceToHost));

    printf("n = %zu\n", n);
    printf("double reference   %.3f\n", ref);
    printf("sum   (float)      %.3f  relative error %.2e\n", got[0], fabs(got[0] - ref) / fabs(ref));
    printf("ksum  (float)      %.3f  relative error %.2e\n", got[1], fabs(got[1] - ref) / fabs(ref));
    if (fabs(got[1] - ref) > 1e-6 * fabs(ref)) {
        printf("FAIL: compensated sum off by more than 1e-6\n");
        return 1;
    }
    printf("ok\n");
    cudaFree(d_in);
    cudaFree(d_out);
    cudaFree(d_work);
    free(h);
    return 0;
}
