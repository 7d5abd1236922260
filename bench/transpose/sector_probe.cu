// Probe (bench/notes/transpose.md, "output rows off sectors"): why 8191 x 8193 floats transposed at 0.73 of
// a copy. Two hand-written 64 x 64 float kernels over the four combinations of input and output
// pitches on or off 32-byte sectors: A, the plain tile; B, output rows written in windows shifted
// to start on a sector (the block loads 72 input rows). Prints each against a copy.
//   nvcc -O3 -arch=sm_90 -o sector_probe bench/transpose/sector_probe.cu && ./sector_probe
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define T 64
#define W 16
__global__ void __launch_bounds__(512)
    kA(const float *in, size_t ip, float *out, size_t op, int rows, int cols, int across)
{
    __shared__ float tile[T][T + 1];
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    int tc = blockIdx.x % across, tr = blockIdx.x / across;
    int row0 = tr * T, col0 = tc * T;
    float v[T / W][2];
#pragma unroll
    for (int k = 0; k < T / W; ++k)
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            int r = row0 + warp + W * k, c = col0 + lane + 32 * j;
            v[k][j] = (r < rows && c < cols) ? in[(size_t)r * ip + c] : 0.f;
        }
#pragma unroll
    for (int k = 0; k < T / W; ++k)
#pragma unroll
        for (int j = 0; j < 2; ++j)
            tile[warp + W * k][lane + 32 * j] = v[k][j];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < T / W; ++k)
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            int c = col0 + warp + W * k, r = row0 + lane + 32 * j;
            if (r < rows && c < cols)
                out[(size_t)c * op + r] = tile[lane + 32 * j][warp + W * k];
        }
}
__global__ void __launch_bounds__(512)
    kB(const float *in, size_t ip, float *out, size_t op, int rows, int cols, int across)
{
    __shared__ float tile[T + 8][T + 1];
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    int tc = blockIdx.x % across, tr = blockIdx.x / across;
    int base = (tr - 1) * T, col0 = tc * T;
    float v[5][2];
#pragma unroll
    for (int k = 0; k < 5; ++k)
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            int i = warp + W * k, r = base + i, c = col0 + lane + 32 * j;
            v[k][j] = (i < T + 8 && r >= 0 && r < rows && c < cols) ? in[(size_t)r * ip + c] : 0.f;
        }
#pragma unroll
    for (int k = 0; k < 5; ++k)
#pragma unroll
        for (int j = 0; j < 2; ++j)
            if (warp + W * k < T + 8)
                tile[warp + W * k][lane + 32 * j] = v[k][j];
    __syncthreads();
    size_t ob = (size_t)out / 4;
#pragma unroll
    for (int k = 0; k < T / W; ++k) {
        int c = col0 + warp + W * k;
        int d = (int)((0 - (ob + (size_t)c * op)) & 7);
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            int i = d + lane + 32 * j, r = base + i;
            if (r >= 0 && r < rows && c < cols)
                out[(size_t)c * op + r] = tile[i][warp + W * k];
        }
    }
}
template <class F> double us(F f)
{
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    f();
    cudaDeviceSynchronize();
    std::vector<float> t;
    for (int rep = 0; rep < 7; ++rep) {
        cudaEventRecord(a);
        for (int k = 0; k < 10; ++k)
            f();
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float ms;
        cudaEventElapsedTime(&ms, a, b);
        t.push_back(ms * 100);
    }
    std::sort(t.begin(), t.end());
    return t[3];
}
int main()
{
    const int rows = 8191, cols = 8193;
    size_t maxp = 8200;
    float *in, *o1, *o2;
    cudaMalloc(&in, (size_t)rows * maxp * 4 + 64);
    cudaMalloc(&o1, (size_t)cols * maxp * 4 + 64);
    cudaMalloc(&o2, (size_t)cols * maxp * 4 + 64);
    std::vector<float> h((size_t)rows * maxp);
    for (size_t i = 0; i < h.size(); ++i)
        h[i] = (float)(i * 2654435761u % 1000003);
    cudaMemcpy(in, h.data(), h.size() * 4, cudaMemcpyHostToDevice);
    size_t bytes = 2.0 * rows * cols * 4;
    double cp = us([&] { cudaMemcpyAsync(o1, in, (size_t)rows * cols * 4, cudaMemcpyDeviceToDevice); });
    printf("copy %.1f us\n", cp);
    struct P {
        size_t ip, op;
    } ps[] = { { 8193, 8191 }, { 8200, 8191 }, { 8193, 8200 }, { 8200, 8200 } };
    int across = (cols + T - 1) / T, down = (rows + T - 1) / T;
    for (auto p : ps) {
        double a = us([&] { kA<<<down * across, 512>>>(in, p.ip, o1, p.op, rows, cols, across); });
        double b = us([&] { kB<<<(down + 1) * across, 512>>>(in, p.ip, o2, p.op, rows, cols, across); });
        std::vector<float> x((size_t)cols * p.op), y((size_t)cols * p.op);
        cudaMemset(o1, 0, (size_t)cols * p.op * 4);
        cudaMemset(o2, 0, (size_t)cols * p.op * 4);
        kA<<<down * across, 512>>>(in, p.ip, o1, p.op, rows, cols, across);
        kB<<<(down + 1) * across, 512>>>(in, p.ip, o2, p.op, rows, cols, across);
        cudaMemcpy(x.data(), o1, x.size() * 4, cudaMemcpyDeviceToHost);
        cudaMemcpy(y.data(), o2, y.size() * 4, cudaMemcpyDeviceToHost);
        bool same = x == y;
        bool right = true;
        for (int r = 0; r < rows && right; r += 97)
            for (int c = 0; c < cols; c += 3)
                if (x[(size_t)c * p.op + r] != h[(size_t)r * p.ip + c]) {
                    right = false;
                    break;
                }
        printf("in pitch %zu out pitch %zu | A %.1f us %.3f of copy | B(write-aligned) %.1f us %.3f | %s %s\n", p.ip,
               p.op, a, cp / a, b, cp / b, same ? "same" : "DIFFER", right ? "right" : "WRONG");
    }
    printf("%s\n", cudaGetErrorString(cudaGetLastError()));
}
