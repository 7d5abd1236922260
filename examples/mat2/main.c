/* The ordered product of n 2x2 matrices over uint32 (determinant 1), checked bit for bit. */
#include <stdint.h>
#include "../common.h"
#include "mat.h"

static mat2u mul(mat2u x, mat2u y)
{
    mat2u r;
    r.a = x.a * y.a + x.b * y.c;
    r.b = x.a * y.b + x.b * y.d;
    r.c = x.c * y.a + x.d * y.c;
    r.d = x.c * y.b + x.d * y.d;
    return r;
}

/* inverse of an odd number modulo 2^32 (Newton) */
static uint32_t inverse(uint32_t a)
{
    uint32_t x = a;
    int k;
    for (k = 0; k < 5; ++k)
        x *= 2u - a * x;
    return x;
}

int main(void)
{
    const size_t n = 1000003;
    mat2u *h = malloc(n * sizeof *h), *d_in, *d_out, got, ref = { 1u, 0u, 0u, 1u };
    size_t i, bytes;
    void *d_work;

    for (i = 0; i < n; ++i) { /* random matrix with a*d - b*c = 1 (mod 2^32) */
        h[i].a = (uint32_t)rng() | 1u;
        h[i].b = (uint32_t)rng();
        h[i].c = (uint32_t)rng();
        h[i].d = (1u + h[i].b * h[i].c) * inverse(h[i].a);
        ref = mul(ref, h[i]);
    }
    CHECK(cudaMalloc((void **)&d_in, n * sizeof *d_in));
    CHECK(cudaMalloc((void **)&d_out, sizeof *d_out));
    CHECK(cudaMemcpy(d_in, h, n * sizeof *h, cudaMemcpyHostToDevice));
    bytes = mat_reduce_mat2mul_mat2u_workspace_bytes(n);
    d_work = workspace(bytes);
    CHECK(mat_reduce_mat2mul_mat2u(d_in, n, d_out, d_work, bytes, 0));
    CHECK(cudaMemcpy(&got, d_out, sizeof got, cudaMemcpyDeviceToHost));

    printf("product of %zu matrices: gpu [[%u %u] [%u %u]]  cpu [[%u %u] [%u %u]]\n", n, got.a, got.b, got.c, got.d,
           ref.a, ref.b, ref.c, ref.d);
    if (got.a != ref.a || got.b != ref.b || got.c != ref.c || got.d != ref.d) {
        printf("FAIL\n");
        return 1;
    }
    printf("ok\n");
    cudaFree(d_in);
    cudaFree(d_out);
    cudaFree(d_work);
    free(h);
    return 0;
}
