/* GPU test of one library built for several architectures (tests/gpu/arch/run.sh): which image of a
 * generated kernel runs (cudaFuncGetAttributes: the cubin's architecture and the PTX it came from),
 * and the library's results against the CPU at sizes that take each shape by n.
 *
 *   driver <binary> <ptx>    the versions the image must have (e.g. 90 90 for a fat build with
 *                            sm_90 code on an H100; 90 75 for compute_75 PTX JIT-compiled there)
 *
 * Its source includes ar_fixed.cu, the scan whose kernel it asks about (the kernels are static);
 * the other generated sources are linked.  The last line: `N passed, M failed`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>
#include "ar_fixed.cu"

static int passed, failed;

static void check(int ok, const char *what, size_t n)
{
    if (ok) {
        ++passed;
    } else {
        ++failed;
        printf("FAIL %s n=%zu\n", what, n);
    }
}

static int image(int want_binary, int want_ptx)
{
    struct cudaFuncAttributes fa;
    int dev = 0, major = 0, minor = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaFuncGetAttributes(&fa, ar_k_scan_sum_i32_b256_t16) != cudaSuccess
        || cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess
        || cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
        printf("FAIL cannot read the kernel's attributes\n");
        return 0;
    }
    printf("device sm_%d%d runs ar_k_scan_sum_i32_b256_t16 as binaryVersion %d, ptxVersion %d\n", major, minor,
        fa.binaryVersion, fa.ptxVersion);
    return fa.binaryVersion == want_binary && fa.ptxVersion == want_ptx;
}

/* d_work of `bytes` (grown as asked) */
static void *work(size_t bytes)
{
    static void *d = NULL;
    static size_t have = 0;
    if (bytes > have) {
        cudaFree(d);
        if (cudaMalloc(&d, bytes) != cudaSuccess)
            return NULL;
        have = bytes;
    }
    return d;
}

static void one_size(size_t n, int32_t *d_in, int32_t *d_out, int64_t *d_off, const std::vector<int32_t> &x)
{
    std::vector<int32_t> got(n), want(n);
    uint32_t acc = 0;
    for (size_t i = 0; i < n; ++i)
        want[i] = (int32_t)(acc += (uint32_t)x[i]);
    /* the scans, both kinds, and the fixed shape's */
    check(ar_scan_sum_i32(d_in, n, d_out, work(ar_scan_sum_i32_workspace_bytes(n)), ar_scan_sum_i32_workspace_bytes(n), 0) == cudaSuccess
        && cudaMemcpy(got.data(), d_out, n * 4, cudaMemcpyDeviceToHost) == cudaSuccess && got == want, "scan", n);
    check(ar_fixed(d_in, n, d_out, work(ar_fixed_workspace_bytes(n)), ar_fixed_workspace_bytes(n), 0) == cudaSuccess
        && cudaMemcpy(got.data(), d_out, n * 4, cudaMemcpyDeviceToHost) == cudaSuccess && got == want, "fixed scan", n);
    const int32_t init = 7;
    check(ar_exscan_sum_i32(d_in, n, d_out, &init, work(ar_exscan_sum_i32_workspace_bytes(n)),
              ar_exscan_sum_i32_workspace_bytes(n), 0) == cudaSuccess
        && cudaMemcpy(got.data(), d_out, n * 4, cudaMemcpyDeviceToHost) == cudaSuccess
        && got[0] == 7 && (n < 2 || got[n - 1] == (int32_t)((uint32_t)want[n - 2] + 7u)), "exscan", n);
    /* the reduce */
    int32_t total = 0;
    check(ar_reduce_sum_i32(d_in, n, d_out, work(ar_reduce_sum_i32_workspace_bytes(n)), ar_reduce_sum_i32_workspace_bytes(n), 0) == cudaSuccess
        && cudaMemcpy(&total, d_out, 4, cudaMemcpyDeviceToHost) == cudaSuccess && total == want[n - 1], "reduce", n);
    /* segments by offsets, of lengths 0..2 * avg - 1 (an average of 8, then 1000) */
    for (size_t avg : {(size_t)8, (size_t)1000}) {
        std::vector<int64_t> off(1, 0);
        while ((size_t)off.back() < n)
            off.push_back(off.back() + (int64_t)((off.size() * 2654435761u) % (2 * avg)));
        off.back() = (int64_t)n;
        const size_t segs = off.size() - 1;
        std::vector<int32_t> seg(segs), want_seg(segs);
        for (size_t s = 0; s < segs; ++s) {
            uint32_t a = 0;
            for (int64_t i = off[s]; i < off[s + 1]; ++i)
                a += (uint32_t)x[i];
            want_seg[s] = (int32_t)a;
        }
        const size_t bytes = ar_segreduce_sum_i32_workspace_bytes(n);
        check(cudaMemcpy(d_off, off.data(), off.size() * 8, cudaMemcpyHostToDevice) == cudaSuccess
            && ar_segreduce_sum_i32(d_in, n, d_off, segs, d_out, work(bytes), bytes, 0) == cudaSuccess
            && cudaMemcpy(seg.data(), d_out, segs * 4, cudaMemcpyDeviceToHost) == cudaSuccess && seg == want_seg,
            avg == 8 ? "segreduce (average 8)" : "segreduce (average 1000)", n);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: driver <binaryVersion> <ptxVersion>\n");
        return 2;
    }
    check(image(atoi(argv[1]), atoi(argv[2])), "the image that runs", 0);
    const size_t sizes[] = {1, 1000, 8193, 65539, 1 << 20, (1 << 22) + 7, 1 << 24};
    const size_t most = 1 << 24;
    std::vector<int32_t> x(most);
    uint32_t r = 12345;
    for (size_t i = 0; i < most; ++i)
        x[i] = (int32_t)((r = r * 1664525u + 1013904223u) >> 8);
    int32_t *d_in, *d_out;
    int64_t *d_off;
    if (cudaMalloc(&d_in, most * 4) != cudaSuccess || cudaMalloc(&d_out, most * 4) != cudaSuccess
        || cudaMalloc(&d_off, (most + 2) * 8) != cudaSuccess
        || cudaMemcpy(d_in, x.data(), most * 4, cudaMemcpyHostToDevice) != cudaSuccess) {
        printf("FAIL cannot allocate\n");
        return 1;
    }
    for (size_t n : sizes)
        one_size(n, d_in, d_out, d_off, x);
    const cudaError_t err = cudaDeviceSynchronize();
    check(err == cudaSuccess, cudaGetErrorString(err), 0);
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
