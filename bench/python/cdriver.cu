// The "C" column of bench/python/bench.py: the same generated functions as the Python calls (the
// library assocgen.load built, its functions' addresses passed in from Python), called from C in a
// loop.  Each function here times `reps` samples of `calls` calls back to back between two CUDA
// events on `stream`, writes each sample's microseconds a call to us[], and returns the first
// CUDA error (0: none).  The workspace is the driver's own, zeroed once, as the header asks.
// Built by bench.py: nvcc -shared -Xcompiler -fPIC -I<the build's folder> cdriver.cu
#include <cuda_runtime.h>

#include "pyb.h"

namespace {

// a zeroed workspace of `bytes` (NULL for 0), freed by the caller
cudaError_t workspace(size_t bytes, cudaStream_t stream, void **w)
{
    *w = nullptr;
    if (bytes == 0) return cudaSuccess;
    cudaError_t e = cudaMalloc(w, bytes);
    if (e != cudaSuccess) return e;
    e = cudaMemsetAsync(*w, 0, bytes, stream);
    return e != cudaSuccess ? e : cudaStreamSynchronize(stream);
}

template <class F> cudaError_t time_calls(F call, cudaStream_t stream, int calls, int reps, float *us)
{
    cudaEvent_t a, b;
    cudaError_t e = call();  // warm-up
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) return e;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    for (int r = 0; r < reps && e == cudaSuccess; ++r) {
        cudaEventRecord(a, stream);
        for (int k = 0; k < calls && e == cudaSuccess; ++k)
            e = call();
        cudaEventRecord(b, stream);
        if (e == cudaSuccess) e = cudaEventSynchronize(b);
        float ms = 0;
        cudaEventElapsedTime(&ms, a, b);
        us[r] = ms * 1000.0f / calls;
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return e;
}

// one C function of the header, its workspace, its timing
template <class F, class Args> cudaError_t run(F fn, size_t bytes, Args args, cudaStream_t s, int calls, int reps, float *us)
{
    void *w;
    cudaError_t e = workspace(bytes, s, &w);
    if (e != cudaSuccess) return e;
    e = time_calls([&] { return args(fn, w, bytes); }, s, calls, reps, us);
    cudaFree(w);
    return e;
}

}  // namespace

extern "C" {

const char *agb_error_name(int e) { return cudaGetErrorName((cudaError_t)e); }

// scans: affine maps and 3x3 matrices, (in, n, out)
int agb_scan_affine(void *fn, void *size, const void *in, size_t n, void *out, cudaStream_t s, int calls, int reps, float *us)
{
    auto f = (decltype(&pyb_scan_compose_affine))fn;
    size_t bytes = ((decltype(&pyb_scan_compose_affine_workspace_bytes))size)(n);
    auto args = [&](decltype(f) g, void *w, size_t wb) { return g((const affine *)in, n, (affine *)out, w, wb, s); };
    return run(f, bytes, args, s, calls, reps, us);
}

int agb_scan_mat3(void *fn, void *size, const void *in, size_t n, void *out, cudaStream_t s, int calls, int reps, float *us)
{
    auto f = (decltype(&pyb_scan_mat3mul_mat3u))fn;
    size_t bytes = ((decltype(&pyb_scan_mat3mul_mat3u_workspace_bytes))size)(n);
    auto args = [&](decltype(f) g, void *w, size_t wb) { return g((const mat3u *)in, n, (mat3u *)out, w, wb, s); };
    return run(f, bytes, args, s, calls, reps, us);
}

// the ordered reduce of affine maps (out: one map)
int agb_reduce_affine(void *fn, void *size, const void *in, size_t n, void *out, cudaStream_t s, int calls, int reps, float *us)
{
    auto f = (decltype(&pyb_reduce_compose_affine))fn;
    size_t bytes = ((decltype(&pyb_reduce_compose_affine_workspace_bytes))size)(n);
    auto args = [&](decltype(f) g, void *w, size_t wb) { return g((const affine *)in, n, (affine *)out, w, wb, s); };
    return run(f, bytes, args, s, calls, reps, us);
}

// reduces of float: sum of squares (out: a float) and argmax (out: a pyb_arg_f32)
int agb_reduce_sumsq(void *fn, void *size, const void *in, size_t n, void *out, cudaStream_t s, int calls, int reps, float *us)
{
    auto f = (decltype(&pyb_reduce_sumsq_f32))fn;
    size_t bytes = ((decltype(&pyb_reduce_sumsq_f32_workspace_bytes))size)(n);
    auto args = [&](decltype(f) g, void *w, size_t wb) { return g((const float *)in, n, (float *)out, w, wb, s); };
    return run(f, bytes, args, s, calls, reps, us);
}

int agb_reduce_argmax(void *fn, void *size, const void *in, size_t n, void *out, cudaStream_t s, int calls, int reps, float *us)
{
    auto f = (decltype(&pyb_reduce_argmax_f32))fn;
    size_t bytes = ((decltype(&pyb_reduce_argmax_f32_workspace_bytes))size)(n);
    auto args = [&](decltype(f) g, void *w, size_t wb) { return g((const float *)in, n, (pyb_arg_f32 *)out, w, wb, s); };
    return run(f, bytes, args, s, calls, reps, us);
}

// the segmented reduce of affine maps by int32 offsets (n_segments + 1 of them)
int agb_segreduce_affine(void *fn, void *size, const void *in, size_t n, const void *offsets, size_t segments, void *out,
                         cudaStream_t s, int calls, int reps, float *us)
{
    auto f = (decltype(&pyb_segreduce_compose_affine))fn;
    size_t bytes = ((decltype(&pyb_segreduce_compose_affine_workspace_bytes))size)(n);
    auto args = [&](decltype(f) g, void *w, size_t wb) {
        return g((const affine *)in, n, (const int32_t *)offsets, segments, (affine *)out, w, wb, s);
    };
    return run(f, bytes, args, s, calls, reps, us);
}

// the scan of each row of a rows x cols array of affine maps (packed rows)
int agb_rows_scan_affine(void *fn, void *size, const void *in, size_t rows, size_t cols, void *out, cudaStream_t s, int calls,
                         int reps, float *us)
{
    auto f = (decltype(&pyb_rows_scan_compose_affine))fn;
    size_t bytes = ((decltype(&pyb_rows_scan_compose_affine_workspace_bytes))size)(rows, cols);
    auto args = [&](decltype(f) g, void *w, size_t wb) {
        return g((const affine *)in, rows, cols, cols, (affine *)out, cols, w, wb, s);
    };
    return run(f, bytes, args, s, calls, reps, us);
}

}  // extern "C"
