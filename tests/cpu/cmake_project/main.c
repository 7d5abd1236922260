/* Calls the kernels of two libraries generated from one spec (prefixes cm and cs), so that the
 * link is real.  C99; it needs a GPU to run, but the test only builds it. */
#include <stdio.h>

#include <cuda_runtime_api.h>

#include "cm.h"
#include "cs.h"

int main(void)
{
    size_t n = 1u << 20;
    size_t bytes = cm_reduce_sum_f32_workspace_bytes(n);
    if (cs_reduce_sum_f32_workspace_bytes(n) > bytes)
        bytes = cs_reduce_sum_f32_workspace_bytes(n);
    float *d_in = NULL, *d_out = NULL;
    void *d_work = NULL;
    if (cudaMalloc((void **)&d_in, n * sizeof(float)) != cudaSuccess ||
        cudaMalloc((void **)&d_out, 2 * sizeof(float)) != cudaSuccess || cudaMalloc(&d_work, bytes) != cudaSuccess) {
        fprintf(stderr, "no GPU memory\n");
        return 1;
    }
    cudaMemset(d_in, 0, n * sizeof(float));
    cudaError_t err = cm_reduce_sum_f32(d_in, n, d_out, d_work, bytes, 0);
    if (err == cudaSuccess)
        err = cs_reduce_sum_f32(d_in, n, d_out + 1, d_work, bytes, 0);
    float out[2] = { 1.0f, 1.0f };
    if (err == cudaSuccess)
        err = cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost);
    cudaFree(d_work);
    cudaFree(d_out);
    cudaFree(d_in);
    if (err != cudaSuccess) {
        fprintf(stderr, "%s\n", cudaGetErrorString(err));
        return 1;
    }
    printf("sums %g %g\n", out[0], out[1]);
    return out[0] == 0.0f && out[1] == 0.0f ? 0 : 1;
}
