"""The tuning tables: the measured numbers that choose kernels' shapes, as data.

One row a choice, each row or constant with one line of provenance: the results file under
bench/results/ that chose it, and the figure.  Measured on the H100 (sm_90) unless a line says
otherwise; "x CUB" is CUB's time over ours.  The experiments behind each table are told in
bench/notes/tuning.md; the logic that reads these tables is tuning.py.
"""

from dataclasses import dataclass
from typing import NamedTuple

# ---- architectures


@dataclass(frozen=True)
class Arch:
    """What an architecture's SM holds: the limits that shapes are fitted to."""

    name: str
    smem_per_sm: int  # bytes of shared memory an SM (the largest carveout)
    smem_per_block: int  # bytes of shared memory a block may take at most (dynamic, opted in)
    threads_per_sm: int
    blocks_per_sm: int  # resident blocks an SM at most
    regs_per_sm: int = 65536  # 32-bit registers an SM (64 K on every architecture here)

    @property
    def cuda_arch(self) -> int:
        """The architecture's __CUDA_ARCH__ (sm_86: 860)."""
        return int(self.name[3:]) * 10


# Every real architecture nvcc 13.0 builds for (`nvcc --list-gpu-code`).  Shared memory: the CUDA C
# Programming Guide's table of compute capabilities (an SM; a block, opted in; a block's static
# shared memory is 48 KiB at most everywhere).  Threads and blocks an SM: the same table, checked
# against ptxas 13.0, which warns that __launch_bounds__' minimum blocks is out of range past them
# (tests/cpu/test_archs.py asks it again).  Unsure (not in the Guide we read, or new): sm_88's,
# sm_110's and sm_121's shared memory, taken as the smaller of their neighbours' (100 KiB), which
# only lowers the occupancy asked of the compiler.
ARCHS: dict[str, Arch] = {
    a.name: a
    for a in (
        # 7.5 (Turing: T4, RTX 20xx, GTX 16xx): 64 KiB an SM and a block, 1024 threads, 16 blocks
        Arch("sm_75", smem_per_sm=64 * 1024, smem_per_block=64 * 1024, threads_per_sm=1024, blocks_per_sm=16),
        # 8.0 (A100): 164 KiB an SM, 163 a block, 2048 threads, 32 blocks
        Arch("sm_80", smem_per_sm=164 * 1024, smem_per_block=163 * 1024, threads_per_sm=2048, blocks_per_sm=32),
        # 8.6 (RTX 30xx, A10, A40): 100 KiB an SM, 99 a block, 1536 threads, 16 blocks
        Arch("sm_86", smem_per_sm=100 * 1024, smem_per_block=99 * 1024, threads_per_sm=1536, blocks_per_sm=16),
        # 8.7 (Jetson Orin): 164 KiB an SM, 163 a block, 1536 threads, 16 blocks
        Arch("sm_87", smem_per_sm=164 * 1024, smem_per_block=163 * 1024, threads_per_sm=1536, blocks_per_sm=16),
        # 8.8: threads and blocks from ptxas 13.0 (as 8.6); shared memory unsure: 8.6's
        Arch("sm_88", smem_per_sm=100 * 1024, smem_per_block=99 * 1024, threads_per_sm=1536, blocks_per_sm=16),
        # 8.9 (L4, L40, RTX 40xx): 100 KiB an SM, 99 a block, 1536 threads, 24 blocks
        Arch("sm_89", smem_per_sm=100 * 1024, smem_per_block=99 * 1024, threads_per_sm=1536, blocks_per_sm=24),
        # 9.0 (H100, H200): 228 KiB an SM, 227 a block, 2048 threads, 32 blocks
        Arch("sm_90", smem_per_sm=228 * 1024, smem_per_block=227 * 1024, threads_per_sm=2048, blocks_per_sm=32),
        # 10.0 (B200): as 9.0
        Arch("sm_100", smem_per_sm=228 * 1024, smem_per_block=227 * 1024, threads_per_sm=2048, blocks_per_sm=32),
        # 10.3 (B300): as 10.0
        Arch("sm_103", smem_per_sm=228 * 1024, smem_per_block=227 * 1024, threads_per_sm=2048, blocks_per_sm=32),
        # 11.0 (Jetson Thor): threads and blocks from ptxas 13.0 (1536, 24); shared memory unsure: 100 KiB
        Arch("sm_110", smem_per_sm=100 * 1024, smem_per_block=99 * 1024, threads_per_sm=1536, blocks_per_sm=24),
        # 12.0 (RTX 50xx, RTX PRO 6000): 100 KiB an SM, 99 a block, 1536 threads, 24 blocks
        Arch("sm_120", smem_per_sm=100 * 1024, smem_per_block=99 * 1024, threads_per_sm=1536, blocks_per_sm=24),
        # 12.1 (DGX Spark): threads and blocks from ptxas 13.0 (as 12.0); shared memory unsure: 12.0's
        Arch("sm_121", smem_per_sm=100 * 1024, smem_per_block=99 * 1024, threads_per_sm=1536, blocks_per_sm=24),
    )
}
STATIC_SMEM_PER_BLOCK = 48 * 1024  # static shared memory a block may declare, on every architecture
TARGET = ARCHS["sm_90"]  # the architecture the shapes are chosen for


# ---- programmatic dependent launch (PDL) and launches

# h100-2026-11-23-pdl-everywhere.txt: f32 sums 1.16-3.23x CUB per call to 2^20, but 348 us at 2^28 against 343
PDL_MAX_BYTES = 4 << 20  # a commutative reduce launches with PDL up to this many input bytes
# h100-2026-11-23-ordered-reduce-ab.txt, runs 11-12: 1.13 / 1.04 / 1.05 / 0.94 / 1.01x CUB from a graph, 2^12-2^20
ORDERED_PDL_MAX_BYTES = 16 << 20  # ... and an ordered one
# h100-2026-11-24-segmented-pdl.txt: 2^20 averaging 1000 10.5 -> 10.0 us from a graph; 2^28 500 -> 712 us
SEGMENT_PDL_MAX_BYTES = 4 << 20  # ... and a segmented reduce by offsets (its bounds, tiles and carry)
# h100-2026-11-24-segreduce-one-launch.txt: 2^20 averaging 1000 7.16 us from a graph against 9.95 in three launches
SEGMENT_ONE_LAUNCH_TOTALS = 4  # tiles a thread of a segmented reduce's block, at most, in one launch
# h100-2026-11-25-fold-apart.txt (foldk): the 2x2 matrix product 4.77 -> 4.15 us at 2^18 from a graph (CUB 4.48)
REDUCE_FOLD_APART = True  # captured into a graph, a second kernel folds a reduce's block totals (no ticket)


# ---- the order of a one-pass scan's tiles

# h100-2026-11-25-key-heads.txt: scan by key, 512 tiles 10.37 us against 11.89 by ticket; 8 tiles 4.09 against 3.92
BY_BLOCK_MIN_TILES = 128  # tiles in blockIdx order (no ticket) from this many, where all fit at once
# h100-2026-11-25-early-loads.txt: the f32 scan 0.96x -> 1.18x CUB at 2^13, 0.94x -> 1.10x at 2^15, cold, graph
EARLY_MIN_TILES = 2  # resident tiles in blockIdx order load before the clear, from this many


# ---- shapes by size: where a default tile leaves the GPU short of work


class SizeShape(NamedTuple):
    """A shape taken up to `upto` elements: the first row that holds n; past the last, the default."""

    upto: int
    block: int  # threads a block
    items: int  # items a thread


# A plain scan of 4-byte elements, default 256 x 36 (resident); from a graph against CUB
SCAN_SIZE_SHAPES: tuple[SizeShape, ...] = (
    # h100-2026-11-24-scan-sizes.txt: 1.68x CUB at 2^12 (the default 1.16x)
    SizeShape(1 << 13, 256, 16),
    # h100-2026-11-24-scan-sizes.txt: 0.96x / 0.99x at 2^14 / 2^16 (the default 0.76x / 0.80x)
    SizeShape(1 << 16, 256, 8),
    # h100-2026-11-25-scan-table.txt: 1.03-1.04x at 2^17 (256 x 8 0.96x)
    SizeShape(1 << 17, 256, 16),
    # h100-2026-11-25-scan-table.txt: 1.03-1.04x at 2^19 (the default 0.98-0.99x); within 2% at 2^18
    SizeShape(1 << 19, 256, 8),
    # h100-2026-11-25-scan-table.txt: 1.01-1.02x at 2^20 (the default 0.94x), per call 1.16x at 2^21 (1.13x)
    SizeShape(1 << 21, 128, 36),
    # h100-2026-11-24-scan-sizes.txt: per call 1.06x at 2^22 (the default 0.95x)
    SizeShape(1 << 22, 256, 16),
)

# A segmented reduce by offsets of 4-byte elements, default 256 x 32; past 2^21 its tiles pass one launch's count
SEGMENT_SIZE_SHAPES: tuple[SizeShape, ...] = (
    # bench --only segvariants (rows in h100-2026-11-24-segreduce-one-launch.txt): 2^20 avg 1000 7.0 us, 256 x 32 8.5
    SizeShape(1 << 21, 256, 8),
)

# A segmented scan (flags or keys) of 4-byte elements, default 256 x 28; the sweep's tiles are of 4096 elements
SEGSCAN_SIZE_SHAPES: tuple[SizeShape, ...] = (
    # h100-2026-11-25-key-heads.txt: within 1-2% of 512 x 8 at 1-16 tiles; 1.03x it at 2^12 in the benchmark
    SizeShape(1 << 13, 256, 16),
    # h100-2026-11-25-lookback-sweep.txt: 3.58 / 3.49 us at 2^14 / 2^15 against 4.45 / 4.52 (512 x 8)
    SizeShape(1 << 15, 256, 4),
    # h100-2026-11-25-scan-table.txt: 1.12-1.15x -> 1.21-1.23x Thrust at 2^16, from a graph (was 512 x 8)
    SizeShape(1 << 16, 256, 8),
    # h100-2026-11-25-key-heads.txt: 32 tiles 4.38 us against 4.52 (512 x 8)
    SizeShape(1 << 17, 256, 16),
    # h100-2026-11-25-key-heads.txt: 48-64 tiles 5.36-5.38 us against 5.67-5.82 (512 x 8)
    SizeShape(1 << 18, 1024, 8),
    # h100-2026-11-25-key-heads.txt: 96 / 128 tiles 6.03 / 6.37 us against 6.34 / 6.81 (1024 x 8)
    SizeShape(1 << 19, 1024, 4),
    # h100-2026-11-25-key-heads.txt: 256 tiles 7.70 us against 7.99 (512 x 8)
    SizeShape(1 << 20, 1024, 8),
    # h100-2026-11-25-key-heads.txt: 512 tiles 10.37 us against 13.39 (512 x 8)
    SizeShape(1 << 21, 256, 16),
)


# ---- a segmented reduce by offsets by spans (a group of lanes or a block a segment)


class SpanLanes(NamedTuple):
    """A group of `lanes` lanes a segment, where the segments average at most `most` elements."""

    most: int
    lanes: int


class SpanBlock(NamedTuple):
    """A block of `threads` threads a segment, where the segments average at most `most`; passed
    over where n passes `max_n` or the segments pass `max_segments` (0: no limit)."""

    most: int
    threads: int
    max_n: int = 0
    max_segments: int = 0


class SpanShift(NamedTuple):
    """Up to `upto` elements, the average counts 2^`shift` times (more lanes a segment)."""

    upto: int
    shift: int


class SpanWait(NamedTuple):
    """Up to these many elements a span kernel lets the next kernel in only as it ends."""

    groups: int  # a lane-group kernel
    blocks: int  # a block kernel (but the block of one warp, and where its blocks prefetch)


# Averages by f32 sums at 2^24 from a graph (h100-2026-11-24-segspans.txt: gG = G lanes, bB = B threads a segment)
SEGMENT_SPAN_LANES: tuple[SpanLanes, ...] = (
    # h100-2026-11-24-segspans.txt: averages 8 at 2^24 g1 35.6 us, g2 37.2
    SpanLanes(11, 1),
    # h100-2026-11-24-segspans.txt: averages 16 at 2^24 g2 33.4 us, g1 34.7 (g4 with 2 words 33.2)
    SpanLanes(23, 2),
    # h100-2026-11-24-segspans.txt: averages 32 at 2^24 g4 28.9 us, g8 31.3
    SpanLanes(47, 4),
    # h100-2026-11-24-segspans.txt: averages 64 at 2^24 g8 27.6 us, g4 29.0
    SpanLanes(95, 8),
    # h100-2026-11-24-segspans.txt: averages 128 at 2^24 g16 26.3 us, g8 27.2, g32 29.7
    SpanLanes(191, 16),
    # h100-2026-11-24-segspans.txt: averages 256 at 2^24 g32 25.0 us, g16 26.3
    SpanLanes(767, 32),
)
# Searched by average, an entry with limits before one without at the same average; the last has none
SEGMENT_SPAN_BLOCKS: tuple[SpanBlock, ...] = (
    # h100-2026-11-27-warp-alone.txt: averages 128 at 2^17 (1008 segments) 2.65 -> 2.21 us cold (CUB 2.38)
    SpanBlock(767, 32, max_n=1 << 17, max_segments=1024),
    # h100-2026-11-25-fold-apart.txt: averages 128 at 2^16 1.83 us against 2.20 in blocks of 128 (CUB 2.14)
    SpanBlock(1535, 32, max_n=1 << 16),
    # h100-2026-11-24-segspans.txt: averages 1000 at 2^24 b128 23.9 us, g32 25.3
    SpanBlock(2047, 128),
    # h100-2026-11-24-segspans.txt: averages 4096 at 2^24 b256 24.2 us, b128 24.9
    SpanBlock(8191, 256),
    # h100-2026-11-24-segspans.txt: averages 16384 at 2^24 b512 25.4 us, b256 26.2
    SpanBlock(32767, 512),
)
SEGMENT_SPAN_SHIFTS: tuple[SpanShift, ...] = (
    # h100-2026-11-25-span-shifts.txt: averages 128 at 2^16, cold, 2.47 -> 2.30 us (CUB 2.13); 16x 2.40
    SpanShift(1 << 16, 3),
    # h100-2026-11-25-span-shifts.txt: averages 256 at 2^18 0.60x -> 0.97x CUB; 4x at 2^20 1.6-2.3 us slower
    SpanShift(1 << 18, 2),
    # h100-2026-11-25-span-shifts.txt: kept from the run before it (a = ((2^17, 2), (2^21, 1)))
    SpanShift(1 << 21, 1),
)
# h100-2026-11-25-span-wait.txt, section 6: averages 1000 at 2^18, hot, 2.40 -> 1.60 us (CUB 2.06)
SEGMENT_SPAN_WAIT_N = SpanWait(groups=1 << 18, blocks=1 << 19)

# h100-2026-11-24-segsplit.txt: with the split, spans at every size: 1.43 / 1.02 / 1.03x CUB at 2^28
SEGMENT_SPAN_MAX_N = 1 << 40  # spans up to this many elements
# h100-2026-11-24-segsplit.txt: split from 2^15 cost ~2 us a call at 2^16-2^20 (averages 256-4096 0.60-0.99x)
SEGMENT_SPAN_SPLIT_N = 1 << 22  # past it, segments longer than a chunk are split across blocks
# h100-2026-11-24-segsplit.txt: one segment of n/2 among 1..16 at 2^28 in 541 us
SEGMENT_SPAN_CHUNK_BYTES = 128 << 10  # a chunk of the split
SEGMENT_SPAN_SPLIT_BLOCK = 512  # the split kernel's threads (h100-2026-11-24-segsplit.txt, as above)
SEGMENT_SPAN_SPLIT_GRID = 1024  # ... and its most blocks (h100-2026-11-24-segsplit.txt, as above)
# h100-2026-11-24-segsplit.txt: all of length 1 at 2^28 2075 us by lanes against 1554 in tiles
SEGMENT_SPAN_MIN_AVG = 2  # past the split's size, segments averaging less keep the tiles
# h100-2026-11-25-segmented-cold.txt: PDL saves 0.15-0.35 us a call cold at 2^12-2^16 (avg 128, 2^12: 1.95 -> 1.68)
SEGMENT_SPAN_PDL_MIN_N = 0  # the span kernels launch with PDL past this many elements (0: always)
# h100-2026-11-25-fold-apart.txt: power-law lengths at 2^16 (20 segments) 7.88 -> 5.40 us, cold, from a graph
SEGMENT_SPAN_PREFETCH_BYTES = 4 << 20  # block kernels ask L2 for the whole input up to this many bytes
# h100-2026-11-25-fold-apart.txt: every block prefetching, averages 128 at 2^14 (129 segments) 1.81 -> 2.25 us
SEGMENT_SPAN_PREFETCH_BLOCKS = 64  # ... where the grid has at most this many blocks
# h100-2026-11-24-segspans.txt: two 16-byte words in flight (u2) ahead of one from averages 32 (g4 28.9 us, 32.4)
SEGMENT_SPAN_BYTES = 32  # bytes of 16-byte words a lane loads before it folds any
# not measured alone: the bound the generated groups ran with in h100-2026-11-24-segspans.txt
SEGMENT_SPAN_LONG = 4  # a group's segment longer than this many of its rounds goes to its block
# h100-2026-11-24-segspans.txt: the generated groups' block (at 32 registers, 8 blocks a full SM)
SEGMENT_SPAN_BLOCK = 256  # a group kernel's threads
# ptxas -v of bench/spec.toml's segmented reduce as compute_75 PTX (bench/notes/architectures.md):
# below sm_80 the segmented reduce by offsets of a one-word accumulator (its tiles and its group
# kernels) takes a cap on registers instead of what sm_75's SM holds (1-4 blocks, whose budget the
# H100's JIT spent: 40-55 registers, 4-5 blocks where sm_90 code runs 6-8): what sm_90's ask leaves,
# but no fewer than this floor.  At 32 sm_75 spilled 108 bytes in the group kernels, at 40 neither
# sm_75 nor sm_90 spills (6 blocks of the tiles and of the groups on the H100).  By accumulator's
# 32-bit words
SEGMENT_REGS_BEFORE_80 = {1: 40}


# ---- transposes


class TransposeDefault(NamedTuple):
    """Elements of `size` bytes move in tiles of `tile` x `tile` by `rows` warps."""

    size: int
    tile: int
    rows: int


TRANSPOSE_DEFAULTS: tuple[TransposeDefault, ...] = (
    # h100-2026-11-24-transpose-rgb8-shapes.txt: 8192^2 at 0.666 of a copy (32 x 32 with 8 warps 0.487)
    TransposeDefault(3, 32, 4),
    # h100-2026-11-23-transpose.txt: 8192^2 at 0.972 of a copy (the seeds' 32 x 32 with 8 warps 0.897)
    TransposeDefault(4, 64, 16),
    # h100-2026-11-23-transpose.txt: 4096^2 at 0.980 of a copy (with 8 warps 0.959)
    TransposeDefault(16, 32, 16),
)
# h100-2026-11-23-transpose.txt: the seeds' BLOCK_ROWS, 32 x 32 with 8 warps 0.897 of a copy (padded)
TRANSPOSE_ROWS = 8  # warps a block where no row above and no spec says


# ---- the tiled matrix multiply over a semiring


class MatmulTile(NamedTuple):
    """A block's bm x bn tile of C, k by bk a step, a thread's tm x tn of it."""

    bm: int
    bn: int
    bk: int
    tm: int
    tn: int


class MatmulDefault(NamedTuple):
    """The tile for C's elements of `size` bytes, with or without a witness."""

    size: int
    witness: bool
    tile: MatmulTile


MATMUL_DEFAULTS: tuple[MatmulDefault, ...] = (
    # h100-2026-11-24-matmul-warps-pipelines.txt: plus-times f32 0.837x SGEMM at 8192^3 (k 8: 0.801x)
    MatmulDefault(4, False, MatmulTile(128, 128, 16, 8, 8)),
    # h100-2026-11-24-matmul-warps-pipelines.txt: plus-times f64 0.255-0.304x DGEMM (not tuned further)
    MatmulDefault(8, False, MatmulTile(64, 64, 8, 4, 4)),
)
# h100-2026-11-24-matmul.txt: the witness variant (twice the registers a C element) in 64 x 64, 4 x 4
MATMUL_SMALL = MatmulTile(64, 64, 8, 4, 4)  # any other size, or with a witness
