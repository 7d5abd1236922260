// bench/trace/inputs_resident.sh: the resident prototype (bi_recur_res) against the register path (bi_recur_t16,
// 256 x 16) on random data, every element within 1e-4, at odd sizes, n = 0 and 1, and inputs off 16-byte words
#include <cuda_runtime.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "bi.h"
extern "C" cudaError_t bi_recur_res(const float *, const float *, size_t, affine *, void *, size_t, cudaStream_t);
extern "C" size_t bi_recur_res_workspace_bytes(size_t);
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)
int main(int argc, char **argv)
{
    const size_t sizes[] = { 0, 1, 5, 4095, 4096, 4097, 8192 + 13, 100000, (1u << 20) + 3, 1u << 22 };
    const int offs[] = { 0, 1 };
    size_t maxn = argc > 1 ? (size_t)atol(argv[1]) : ((size_t)1 << 22);
    float *x, *y; affine *o1, *o2; void *w;
    CK(cudaMalloc(&x, (maxn + 8) * 4)); CK(cudaMalloc(&y, (maxn + 8) * 4));
    CK(cudaMalloc(&o1, (maxn + 8) * 8)); CK(cudaMalloc(&o2, (maxn + 8) * 8));
    size_t wb = bi_recur_res_workspace_bytes(maxn + 8);
    if (bi_recur_t16_workspace_bytes(maxn + 8) > wb) wb = bi_recur_t16_workspace_bytes(maxn + 8);
    CK(cudaMalloc(&w, wb + 16)); CK(cudaMemset(w, 0, wb + 16));
    std::vector<float> h(maxn + 8); uint32_t s = 7;
    for (auto &v : h) { s = s * 1664525u + 1013904223u; v = 0.5f + (float)(s >> 8) / 16777216.0f; }
    CK(cudaMemcpy(x, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
    for (auto &v : h) { s = s * 1664525u + 1013904223u; v = (float)(s >> 8) / 16777216.0f - 0.5f; }
    CK(cudaMemcpy(y, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
    int bad = 0, cases = 0;
    for (size_t n : sizes) for (int off : offs) {
        if (n > maxn) continue;
        CK(bi_recur_t16(x + off, y + off, n, o1, w, wb, 0));
        CK(bi_recur_res(x + off, y + off, n, o2, w, wb, 0));
        CK(cudaDeviceSynchronize());
        std::vector<affine> a(n + 1), b(n + 1);
        CK(cudaMemcpy(a.data(), o1, n * 8, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(b.data(), o2, n * 8, cudaMemcpyDeviceToHost));
        size_t wrong = 0;
        for (size_t i = 0; i < n; ++i)
            if (std::fabs(a[i].a - b[i].a) > 1e-4f * std::fabs(a[i].a) + 1e-30f || std::fabs(a[i].b - b[i].b) > 1e-4f * (std::fabs(a[i].b) + 1.0f))
                ++wrong;
        ++cases; bad += wrong != 0;
        printf("n=%zu off=%d wrong=%zu\n", n, off, wrong);
    }
    printf("%d cases, %d bad\n", cases, bad);
    return bad != 0;
}
