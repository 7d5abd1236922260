"""An experiment, not the generator's code: the recurrence's scan of bench/inputs (two f32 inputs,
8-byte affine maps, 256 x 16; `bi_recur_t16` of the generated bi_recur_t16.cu) rewritten with a
resident tile, as the plain scans keep theirs: each input's warp run goes by cp.async into its own
region of the warp's stage (x0's 4 words a lane, then x1's), the thread's fold reads them from
there, and after the look-back the thread's results (two 16-byte words for each word of x0 and of
x1, the same 4 items) are written over its own two words, so the tile is held in shared memory,
not in registers, while it waits. Full 16-byte aligned tiles only (the partial or unaligned tile
goes element by element); the public function is `bi_recur_res`.

    python3 bench/trace/patch_inputs_resident.py SRC/bi_recur_t16.cu OUT/bi_recur_res.cu
"""

import re
import sys

KERNEL = r"""static __global__ void AG_SCAN_BOUNDS
bi_k_recur_res(const float *in0, const float *in1, size_t n, affine *out, affine init,
    unsigned int *work, unsigned int n_tiles, int by_block, int aligned16)
{
    __shared__ uint4 stage[8][288];     /* a warp's run: x0's 128 words, then x1's, one pad word in 8 */
    __shared__ affine warp_totals[8];
    __shared__ affine tile_prefix;
    __shared__ unsigned int tile_ticket;
    const unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    unsigned long long *const slots = (unsigned long long *)(work + AG_HEADER_WORDS);
    ag_follow_stream();
    unsigned int tile = blockIdx.x;
    if (!by_block)
        tile = ag_take_ticket(&tile_ticket, work, n_tiles);
    const size_t tile_base = (size_t)tile * AG_TILE;
    const size_t base = tile_base + (size_t)threadIdx.x * 16;
    const int full = tile_base + AG_TILE <= n;
    const int staged = aligned16 && full;
    uint4 *const ws = stage[warp];
    affine t = ag_op_identity();
    if (staged) {
        const uint4 *src0 = (const uint4 *)(in0 + tile_base + warp * 512);
        const uint4 *src1 = (const uint4 *)(in1 + tile_base + warp * 512);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int k = j * 32 + lane;
            ag_copy_async16(&ws[ag_at0(k)], &src0[k]);
            ag_copy_async16(&ws[ag_at1(k)], &src1[k]);
        }
        ag_copy_async_wait();
        __syncwarp();
#pragma unroll
        for (int c = 0; c < 4; ++c) {
            const int k = lane * 4 + c;
            const uint4 wa = ws[ag_at0(k)], wb = ws[ag_at1(k)];
            float xa[4], xb[4];
            memcpy(xa, &wa, sizeof xa);
            memcpy(xb, &wb, sizeof xb);
#pragma unroll
            for (int e = 0; e < 4; ++e)
                t = ag_op_combine(t, ag_op_lift(xa[e], xb[e], base + c * 4 + e));
        }
    } else {
        for (int k = 0; k < 16; ++k)
            if (base + k < n)
                t = ag_op_combine(t, ag_op_lift(in0[base + k], in1[base + k], base + k));
    }
    affine before = ag_block_scan(t, warp_totals, lane, warp);
    const affine prefix = ag_tile_prefix(&tile_prefix, &warp_totals[7], slots, n_tiles, tile, lane, warp, init);
    before = ag_op_combine(prefix, before);
    if (staged) {
#pragma unroll
        for (int c = 0; c < 4; ++c) {
            const int k = lane * 4 + c;
            const uint4 wa = ws[ag_at0(k)], wb = ws[ag_at1(k)];
            float xa[4], xb[4];
            affine y[4];
            memcpy(xa, &wa, sizeof xa);
            memcpy(xb, &wb, sizeof xb);
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                before = ag_op_combine(before, ag_op_lift(xa[e], xb[e], base + c * 4 + e));
                y[e] = ag_op_finalize(before);
            }
            uint4 o[2];
            memcpy(o, y, sizeof o);
            ws[ag_at0(k)] = o[0];          /* items 4c, 4c+1: the lane's output word 2c */
            ws[ag_at1(k)] = o[1];          /* items 4c+2, 4c+3: word 2c+1 */
        }
        __syncwarp();
        uint4 *dst = (uint4 *)(out + tile_base + warp * 512);
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const int k = j * 32 + lane;           /* output word k: lane k / 8's word k % 8 */
            const int q = k & 7, w = (k >> 3) * 4 + (q >> 1);
            dst[k] = ws[q & 1 ? ag_at1(w) : ag_at0(w)];
        }
    } else {
        for (int k = 0; k < 16; ++k)
            if (base + k < n) {
                before = ag_op_combine(before, ag_op_lift(in0[base + k], in1[base + k], base + k));
                out[base + k] = ag_op_finalize(before);
            }
    }
}
"""

HELPERS = r"""
static __device__ __forceinline__ void ag_copy_async16(uint4 *smem, const uint4 *gmem)
{
    const unsigned int to = (unsigned int)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(to), "l"(gmem) : "memory");
}

static __device__ __forceinline__ void ag_copy_async_wait(void)
{
    asm volatile("cp.async.commit_group;\n\tcp.async.wait_group 0;" ::: "memory");
}

/* word k (0..127) of x0's run and of x1's: one pad word in eight; x1's turned by 4 words, so that
   a lane's two words of a pair sit on other banks */
static __device__ __forceinline__ int ag_at0(int k) { return k + k / 8; }
static __device__ __forceinline__ int ag_at1(int k) { const int r = (k + 4) & 127; return 144 + r + r / 8; }

"""


def main() -> None:
    src, dst = sys.argv[1], sys.argv[2]
    s = open(src).read()
    start = s.index("static __global__ void AG_SCAN_BOUNDS")
    end = s.index("/* The ticket counter and the slots")
    s = s[:start] + HELPERS + KERNEL + "\n" + s[end:]
    s = re.sub(r"__launch_bounds__\(256, 4\)", "__launch_bounds__(256, 6)", s)
    s = s.replace("bi_k_scan_recur_f32_b256_t16_clear", "bi_k_recur_res_clear")
    s = s.replace("bi_k_scan_recur_f32_b256_t16", "bi_k_recur_res")
    s = s.replace("bi_recur_t16", "bi_recur_res")
    open(dst, "w").write(s)


if __name__ == "__main__":
    main()
