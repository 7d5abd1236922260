// Probe: what a graph of back-to-back small launches costs a call, with and without programmatic
// dependent launch (PDL), and with a memset node or a clearing kernel before each launch.
//   nvcc -arch=sm_90 -O3 -o pdl_probe bench/trace/pdl_probe.cu && ./pdl_probe
#include <cstdio>
#include <cuda_runtime.h>

__device__ __forceinline__ void wait_prior() { asm volatile("griddepcontrol.wait;" ::: "memory"); }
__device__ __forceinline__ void let_next() { asm volatile("griddepcontrol.launch_dependents;"); }

template <bool PDL>
__global__ void __launch_bounds__(256) fold(const float4 *in, float *out, unsigned int *work)
{
    if (PDL) {
        let_next();
        wait_prior();
    }
    const float4 *p = in + (size_t)blockIdx.x * 1024;
    float4 a = p[threadIdx.x], b = p[threadIdx.x + 256], c = p[threadIdx.x + 512], d = p[threadIdx.x + 768];
    float s = a.x + a.y + a.z + a.w + b.x + b.y + b.z + b.w + c.x + c.y + c.z + c.w + d.x + d.y + d.z + d.w;
    for (int o = 16; o; o /= 2)
        s += __shfl_down_sync(0xffffffffu, s, o);
    __shared__ float w[8];
    if (threadIdx.x % 32 == 0)
        w[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        s = 0;
        for (int k = 0; k < 8; ++k)
            s += w[k];
        out[blockIdx.x] = s;
        if (work)
            atomicAdd(work, 1u);
    }
}

template <bool PDL>
__global__ void clear(unsigned int *work, int words)
{
    if (PDL) {
        let_next();
        wait_prior();
    }
    for (int i = threadIdx.x; i < words; i += blockDim.x)
        work[i] = 0;
}

template <typename K, typename... A>
static void launch(K kernel, bool pdl, unsigned grid, unsigned block, cudaStream_t s, A... args)
{
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.stream = s;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = pdl ? 1 : 0;
    cudaLaunchKernelEx(&cfg, kernel, args...);
}

int main()
{
    const int blocks_list[] = {1, 16, 256};
    float4 *in;
    float *out;
    unsigned int *work;
    cudaMalloc(&in, 256 * 1024 * sizeof(float4));
    cudaMemset(in, 0, 256 * 1024 * sizeof(float4));
    cudaMalloc(&out, 4096 * sizeof(float));
    cudaMalloc(&work, 4096);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    printf("%-28s %8s %8s %8s   (us a call, graph of 20 calls)\n", "variant", "1 blk", "16 blk", "256 blk");
    const char *names[] = {"kernel", "kernel, PDL", "memset + kernel", "clear + kernel",
                           "clear + kernel, both PDL", "clear + kernel PDL", "memset + kernel PDL"};
    for (int v = 0; v < 7; ++v) {
        printf("%-28s", names[v]);
        for (int blocks : blocks_list) {
            cudaGraph_t g;
            cudaGraphExec_t ge;
            cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
            for (int c = 0; c < 20; ++c) {
                switch (v) {
                case 0: launch(fold<false>, false, blocks, 256, s, (const float4 *)in, out, (unsigned *)nullptr); break;
                case 1: launch(fold<true>, true, blocks, 256, s, (const float4 *)in, out, (unsigned *)nullptr); break;
                case 2:
                    cudaMemsetAsync(work, 0, 1024, s);
                    launch(fold<false>, false, blocks, 256, s, (const float4 *)in, out, work);
                    break;
                case 3:
                    launch(clear<false>, false, 1, 256, s, work, 256);
                    launch(fold<false>, false, blocks, 256, s, (const float4 *)in, out, work);
                    break;
                case 4:
                    launch(clear<true>, true, 1, 256, s, work, 256);
                    launch(fold<true>, true, blocks, 256, s, (const float4 *)in, out, work);
                    break;
                case 5:
                    launch(clear<true>, false, 1, 256, s, work, 256);
                    launch(fold<true>, true, blocks, 256, s, (const float4 *)in, out, work);
                    break;
                case 6:
                    cudaMemsetAsync(work, 0, 1024, s);
                    launch(fold<true>, true, blocks, 256, s, (const float4 *)in, out, work);
                    break;
                }
            }
            cudaStreamEndCapture(s, &g);
            if (cudaGraphInstantiate(&ge, g, 0) != cudaSuccess) {
                printf(" %8s", "fail");
                continue;
            }
            cudaEvent_t e0, e1;
            cudaEventCreate(&e0);
            cudaEventCreate(&e1);
            for (int w = 0; w < 5; ++w)
                cudaGraphLaunch(ge, s);
            float best = 1e30f;
            for (int r = 0; r < 7; ++r) {
                cudaEventRecord(e0, s);
                for (int k = 0; k < 10; ++k)
                    cudaGraphLaunch(ge, s);
                cudaEventRecord(e1, s);
                cudaEventSynchronize(e1);
                float ms;
                cudaEventElapsedTime(&ms, e0, e1);
                best = ms < best ? ms : best;
            }
            printf(" %8.2f", best * 1000.0f / 200.0f);
            cudaGraphExecDestroy(ge);
            cudaGraphDestroy(g);
        }
        printf("\n");
    }
    printf("last error: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 0;
}
