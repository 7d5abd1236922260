"""Tuning: every decision about a kernel's shape, kept apart from the algorithm (the templates)
and from reading the spec (spec.py), as CUB keeps its tuning policies apart from its agents.

A shape is what generation resolves for one instance: threads a block, items a thread, how a
lane's items travel (16-byte words, staged through shared memory or resident there), the
occupancy asked of the compiler, and when to launch with programmatic dependent launch (PDL).
The numbers here were measured on the H100 (bench/NOTES.md says which experiment chose each).
"""

import math
from dataclasses import dataclass, replace

from .model import Heads, Primitive


@dataclass(frozen=True)
class Arch:
    """What an architecture's SM holds: the limits that shapes are fitted to."""

    name: str
    smem_per_sm: int  # bytes of shared memory an SM
    threads_per_sm: int
    regs_per_sm: int  # 32-bit registers an SM
    blocks_per_sm: int  # resident blocks an SM at most


ARCHS = {
    a.name: a
    for a in (
        Arch("sm_80", 164 * 1024, 2048, 65536, 32),
        Arch("sm_90", 228 * 1024, 2048, 65536, 32),
    )
}
TARGET = ARCHS["sm_90"]  # the architecture the shapes are chosen for

DEFAULT_BLOCK = 256
MAX_ITEMS = 64  # items a thread, at most
MAX_TILE_BYTES = 1024  # items x size a thread holds in registers at once
SEGMENT_TILE_BYTES = 40 * 1024  # shared memory a segmented reduce's tile of folds and head marks may take
STAGE_LIMIT = 44 * 1024  # static shared memory a scan block may spend on staging (48 KB in all)
REDUCE_STAGE_LIMIT = 24 * 1024  # a reduce block's staging: 8 blocks an SM still fit
PDL_MAX_BYTES = 4 << 20  # a commutative reduce launches with PDL up to this many input bytes
# and a segmented reduce by offsets (its three launches: bounds, tiles, carry), every kernel
# waiting for the one before: at 2^20 floats (4 MiB) from a graph 10.5 -> 10.0 us (segments
# averaging 1000), 6.9 -> 6.5 (one), 8.7 -> 8.2 (power law); at 2^28 PDL cost 42% (500 -> 712 us:
# the next launch's early blocks hold SMs the tiles need), so not past this size
SEGMENT_PDL_MAX_BYTES = 4 << 20
# A segmented reduce by offsets (resident tiles) of up to this many tiles a thread of its block
# runs in one launch: each tile finds its own segments (a warp's 32-way search of the offsets,
# overlapping the tile's loads) and the last tile to finish carries across the tiles, all its
# thread's tiles loaded at once; past it, a bounds kernel before and a carry kernel of 1024
# threads after the tiles
SEGMENT_ONE_LAUNCH_TOTALS = 4
ORDERED_PDL_MAX_BYTES = 16 << 20  # and an ordered one up to this many
# A reduce captured into a graph folds its blocks' totals by a second kernel of one block (launched
# with PDL), not by the last block to take a ticket: replayed, the launches cost the host nothing,
# and the kernels' boundary costs the device less than the ticket and its release fence.  From a
# graph on the H100 (bench/trace/ab.sh foldk): the 2x2 matrix product 4.77 -> 4.15 us at 2^18
# (CUB 4.48), 2.98 -> 2.72 at 2^14, 8.79 -> 8.37 at 2^20; f32 sums 2.95 -> 2.75 at 2^18, 3.96 ->
# 3.75 at 2^20; the same from 2^22 on.  Launched directly a small call is bound by the host's
# launches (f32 sum at 2^14: 3.1 us a call with one launch, 5.7 with two), so it keeps the ticket.
REDUCE_FOLD_APART = True
MAX_GRID = 2048  # bound on a reduce's blocks a launch (its workspace is sized from it)
# Every workspace starts with a header of SLOT0 32-bit words: word 0 is the ticket counter of the
# functions that keep one, zero between calls. A reduce's blocks' slots and a scan's look-back
# slots start after it, and functions that leave data in the workspace (rows, columns, split k,
# across ranks) leave it past it, so no call finds another's data in a counter
SLOT0 = 64
WARP_STEPS = (1, 2, 4, 8, 16)  # shuffle distances of a warp's fold or scan


# ---- tiles: what a thread holds


def stage_chunks(words: int) -> int:
    """16-byte chunks of shared memory a warp stages `words` 16-byte words a lane in: an odd count
    puts a quarter warp's 16-byte accesses on distinct banks as it is; an even one needs one pad
    chunk in eight."""
    return 32 * words if words % 2 else 36 * words


def words16(items: int, size: int) -> int:
    """16-byte words a lane's run of `items` elements of `size` bytes spans, or 0 if not whole."""
    return items * size // 16 if (items * size) % 16 == 0 else 0


def resident_tile(prim: str, op, block: int, items: int) -> bool:
    """Whether a scan-family instance keeps its tile's inputs in shared memory from load to store:
    results written over the inputs (so of their type), whole 16-byte words a thread, for the
    segmented forms a bit an item in 32, and the staging within the static limit; one input."""
    size = op.in_type.size
    if op.inputs:  # several input arrays: their items go through registers
        return False
    if (items * size) % 16 or stage_chunks(items * size // 16) * 16 * (block // 32) > STAGE_LIMIT:
        return False
    if prim in (Primitive.SCAN, Primitive.EXSCAN):
        return op.out_type.c == op.in_type.c
    if items > 32:
        return False
    if prim in (Primitive.SEGSCAN, Primitive.EXSEGSCAN):
        return op.out_type.c == op.in_type.c
    return prim == Primitive.SEGREDUCE and op.acc_type.c == op.in_type.c and 16 % size == 0


def _held_type(inst):
    """The type whose size sizes a thread's tile: a reduce's input; a scan's accumulator, or the
    key where that is wider (keys ride along)."""
    if inst.primitive == Primitive.REDUCE:
        return inst.op.in_type
    index = inst.index
    return index if inst.heads == Heads.KEYS and index.size > inst.op.acc_type.size else inst.op.acc_type


def _items_for(ty, thread_bytes: int) -> int:
    return max(1, min(thread_bytes // 4, thread_bytes // ty.size))


def items_problem(inst, items: int) -> str:
    """Why `items` items a thread do not fit instance `inst` (its items ignored), or ''."""
    ty = _held_type(inst)
    if items < 1 or items > MAX_ITEMS:
        return f"{items} items a thread is outside 1..{MAX_ITEMS}"
    if items * ty.size > MAX_TILE_BYTES:
        return f"{items} items of {ty.name} ({ty.size} bytes) is more than {MAX_TILE_BYTES} bytes a thread"
    if inst.primitive != Primitive.REDUCE and items * inst.tile_op.acc_type.size > MAX_TILE_BYTES:
        return (
            f"{items} items of {inst.tile_op.acc_type.size}-byte segmented accumulators"
            f" is more than {MAX_TILE_BYTES} bytes a thread"
        )
    op, block = inst.op, inst.block
    if (
        inst.primitive == Primitive.SEGREDUCE
        and not resident_tile(inst.primitive, op, block, items)
        and block * items * (1 + op.acc_type.size) > SEGMENT_TILE_BYTES
    ):
        return (
            f"a segmented reduce keeps its tile's folds in shared memory: {block} x {items}"
            f" x ({op.acc_type.size} + 1) bytes is more than {SEGMENT_TILE_BYTES}"
        )
    return ""


def default_items(inst) -> int:
    """Items a thread when the spec gives none."""
    ty = _held_type(inst)
    if inst.primitive == Primitive.REDUCE:
        # 64 bytes a thread per step: four 16-byte loads in flight per lane, whatever the type
        items = max(1, min(64, 64 // ty.size)) if ty.size <= 64 else 1
    else:
        # a whole tile of accumulators in registers: 64 bytes a thread; or, held in shared
        # memory, 144 bytes (nine 16-byte words, no pad) where they fit, else 128, either twice
        # the registers' or more.  Keyed: 112 (seven words), as the keys pass through registers too
        items = _items_for(ty, 64)
        sizes = (112,) if inst.heads == Heads.KEYS else (144, 128)
        held = [n for n in (_items_for(ty, b) for b in sizes) if resident_tile(inst.primitive, inst.op, inst.block, n)]
        items = held[0] if held else items
    while items > 1 and items_problem(inst, items):
        items //= 2  # e.g. a segmented reduce's folds of a block of 1024 threads
    return items


# ---- shapes: everything about an instance resolved at generation time


@dataclass(frozen=True)
class ReduceShape:
    block: int
    items: int
    warps: int
    warp_tile: int  # elements a warp's tile
    unit: int  # elements a block folds a step (commutative) or a warp's tile (ordered)
    striped: bool  # commutative: lane-striped 16-byte words in block tiles
    words: int  # 16-byte words a lane's items span (0: element by element)
    per_word: int  # elements a 16-byte word (striped)
    stage: int  # 16-byte chunks a warp turns its words through shared memory (0: none)
    min_blocks: int  # resident blocks an SM asked of the compiler
    pdl_max_bytes: int  # launches with PDL up to this many input bytes
    fold_apart: bool  # captured into a graph, a fold kernel folds the blocks' totals (no ticket)


def reduce_shape(inst) -> ReduceShape:
    op, size, ipt = inst.op, inst.op.in_type.size, inst.items
    striped = op.commutative
    if striped:
        # a 16-byte word holds whole elements, and a lane's items are whole words
        vec = ipt * size // 16 if (16 % size == 0 and (ipt * size) % 16 == 0) else 0
        per_vec = 16 // size if vec else 0
    else:
        # a lane's items are consecutive: they load as whole 16-byte words
        vec, per_vec = words16(ipt, size), 0
    warps = inst.block // 32
    # ordered: a lane's run of several 16-byte words comes in coalesced and turns through shared
    # memory (load_blocked: one pad word in eight), where that fits in REDUCE_STAGE_LIMIT
    stage = 36 * vec if not striped and vec >= 2 and 36 * vec * 16 * warps <= REDUCE_STAGE_LIMIT else 0
    # Ask the compiler for at least half the SM's threads (unless the spec says): with no minimum,
    # ptxas aims at full occupancy's 32 registers and, to stay there, issues the second half of a
    # lane's 16-byte loads only after the first half is folded, a second memory round trip a tile
    min_blocks = inst.blocks_per_sm or max(1, TARGET.threads_per_sm // 2 // inst.block)
    # Programmatic dependent launch (bench/NOTES.md), on inputs up to PDL_MAX_BYTES, where the
    # launch is a large part of the call.  The commutative reduce lets the next kernel in at its
    # start; the ordered one only once its blocks have folded their runs (at its start it was slower:
    # the next call's early blocks took SMs this one needed), so the next call's blocks fill the
    # SMs during the blocks' hand-off
    pdl_max = PDL_MAX_BYTES if striped else ORDERED_PDL_MAX_BYTES
    return ReduceShape(
        inst.block,
        ipt,
        warps,
        32 * ipt,
        (inst.block if striped else 32) * ipt,
        striped,
        vec,
        per_vec,
        stage,
        min_blocks,
        pdl_max,
        REDUCE_FOLD_APART,
    )


@dataclass(frozen=True)
class SegmentSpans:
    """A segmented reduce by offsets by spans instead of tiles, up to `max_n` elements, picked by
    the segments' average length (n / n_segments, which the host knows, counted 2^shift times on
    small inputs): a group of G lanes a segment while the average is at most the bound `lanes`
    gives G, then a block of B threads a segment (`blocks`, likewise), past the last bound of
    `blocks` (unshifted) the tiles.  A lane folds 16-byte words of `vec` elements (one element
    where they are not whole), `unroll` words loaded before any is folded; a group's segment longer
    than `long_rounds` of its rounds is left to its block's threads together.  Past `split_n`
    elements, a segment longer than a chunk is split across blocks (the only use of the workspace)."""

    vec: int
    unroll: int
    lanes: tuple  # ((largest average, lanes a segment), ...)
    # ((largest average, threads a block, largest n, largest number of segments), ...) past the
    # lanes, 0 for any n or number
    blocks: tuple
    max_n: int
    shifts: tuple  # ((largest n, shift), ...): up to n, the average counts 2^shift times
    long_rounds: int
    min_blocks: int  # a group kernel's resident blocks an SM asked of the compiler (0: its choice)
    block: int  # a group kernel's threads
    split_n: int  # past this many elements, segments longer than `chunk` are split across blocks (0: never, no code)
    chunk: int  # elements a chunk of the split (a power of two)
    split_block: int  # the split kernel's threads
    split_grid: int  # ... and its most blocks
    min_avg: int  # past split_n elements, segments averaging less keep the tiles
    pdl_min_n: int  # the span kernels launch with PDL only past this many elements (0: always)
    prefetch_n: int  # up to this many elements a block a segment first asks L2 for the input (0: never, no code)
    prefetch_blocks: int  # ... where the grid has at most this many blocks
    # up to this many elements a group kernel lets the next kernel in only as it ends (0: never; max_n: always)
    wait_n: int
    block_wait_n: int  # ... a block kernel (but the block of one warp, and where its blocks prefetch)

    def long(self, lanes: int) -> int:
        """Elements past which a group of `lanes` lanes leaves its segment to the block."""
        return self.long_rounds * self.unroll * lanes * self.vec

    @property
    def picks(self) -> tuple:
        """The host's table in the order it is searched: ((largest average, kernel ("lanes32",
        "block128", ...), threads a block, segments a block, largest n, largest number of segments),
        ...) by average, an entry with either limit before one without at the same average (it is
        passed over past its limits)."""
        lanes = [(m, f"lanes{g}", self.block, self.block // g, 0, 0) for m, g in self.lanes]
        blocks = [(m, f"block{b}", b, 1, n_most, s_most) for m, b, n_most, s_most in self.blocks]
        return tuple(sorted(lanes + blocks, key=lambda e: (e[0], not (e[4] or e[5]))))

    @property
    def limits(self) -> tuple:
        """The host's tests of an entry's limits, for the fields some entry uses: ((field, what it
        bounds), ...)."""
        fields = (("upto", "n", 2), ("segments", "n_segments", 3))
        return tuple((f, v) for f, v, k in fields if any(e[k] for e in self.blocks))

    @property
    def block_threads(self) -> tuple:
        """The block kernels' sizes, one kernel each."""
        return tuple(sorted({e[1] for e in self.blocks}))


@dataclass(frozen=True)
class ScanShape:
    block: int
    items: int
    warps: int
    words_in: int  # 16-byte words a lane's inputs span (0: element by element)
    words_out: int  # ... its results (per-element primitives)
    words_flags: int  # ... its head flags
    words_keys: int  # ... its keys
    stage: int  # 16-byte chunks a warp stages (0: none)
    resident: bool  # the tile's inputs stay in shared memory from load to store
    pad: bool  # the staging has a pad chunk in eight
    chunk: int  # 16-byte words a chunk of whole elements spans
    elems_per_chunk: int
    bulk_store: bool  # a warp's run of results stored by one bulk copy (TMA, sm_90)
    min_blocks: int  # resident blocks an SM asked of the compiler (0: the compiler's choice)
    pdl: bool  # launches with programmatic dependent launch
    pdl_max_bytes: int = 0  # ... only up to this many input bytes (0: at any size)
    one_launch_totals: int = 0  # segments by offsets: one launch up to block x this many tiles
    seg_spans: SegmentSpans = None  # segments by offsets: a group or a block a segment, by average length
    by_block_min: int = 0  # a one-pass scan: tiles in blockIdx order from this many (where all fit at once)
    early_min: int = 0  # ... and from this many, blockIdx order with the tiles loaded early (0: never)

    @property
    def tile(self) -> int:
        """Elements a tile (a block's share of the input)."""
        return self.block * self.items


def scan_shape(inst) -> ScanShape:
    """A scan tile: lane-blocked items, staged through shared memory where 16-byte words fit."""
    op, ipt, warps = inst.op, inst.items, inst.block // 32
    vin = words16(ipt, op.in_type.size)
    vout = words16(ipt, op.out_type.size) if inst.per_element else 0
    vflag = words16(ipt, 1) if inst.heads == Heads.FLAGS else 0
    vkey = words16(ipt, inst.index.size) if inst.heads == Heads.KEYS else 0
    stage = 36 * max(vin, vout, vflag, vkey)  # 32 words a lane-row, plus one pad word in eight
    # resident tiles: the inputs stay in shared memory from load to store and are read a chunk of
    # whole elements at a time; keys only pass through registers
    size = op.in_type.size
    resident = resident_tile(inst.primitive, op, inst.block, ipt)
    if resident:
        stage = stage_chunks(vin)
    tile_smem = inst.block * ipt * (1 + op.acc_type.size) if inst.heads == Heads.OFFSETS else 0
    if not resident and stage * 16 * warps > STAGE_LIMIT - tile_smem:
        vin = vout = vflag = vkey = stage = 0
    chunk = size // math.gcd(size, 16)
    if resident:
        # as many blocks as shared memory holds (1 KB a block is the system's), leaving each
        # thread registers for a few accumulators (and, keyed, for its run of keys: at 32
        # registers a 256 x 28 keyed tile spills and runs at 0.75 of copy, at 40 at 0.90; by
        # offsets, for its 64-bit segment bounds: 256 x 8 spilled at 32)
        smem = warps * stage * 16 + 2 * warps * inst.tile_op.acc_type.size + 64
        regs = 24 + 4 * inst.tile_op.acc_type.words + (8 if inst.heads in (Heads.KEYS, Heads.OFFSETS) else 0)
        min_blocks = min(
            TARGET.blocks_per_sm,
            TARGET.threads_per_sm // inst.block,
            TARGET.smem_per_sm // (smem + 1024),
            TARGET.regs_per_sm // (inst.block * regs),
        )
    elif inst.tile_op.acc_type.words <= 2:
        # narrow totals: ask for 3/4 of the SM's threads resident (register cap), which hides the
        # look-back's latency; wide ones would spill, so the compiler chooses.  No more blocks than
        # leave a thread registers for its items (and their head bits) past 24 of its own: under
        # the cap, 36 keyed items spilled 2 KB a thread (40 registers; 108-112 without spills)
        held = 24 + ipt * (inst.tile_op.acc_type.words + (1 if inst.heads else 0))
        min_blocks = min(TARGET.blocks_per_sm, TARGET.threads_per_sm * 3 // 4 // inst.block)
        min_blocks = max(1, min(min_blocks, TARGET.regs_per_sm // (inst.block * held)))
    else:
        min_blocks = 0
    pad = stage != 32 * vin
    # a warp's run of results, where it lies in shared memory as in global memory (no pad), is
    # stored by one bulk copy (TMA, sm_90): 1.7% faster for a 4-byte scan at 2^28.  Not for
    # accumulators wider than 8 bytes: there ptxas spilled under the register cap and the 2x2
    # matrix scan ran 3% slower (bench/results/h100-2026-11-23-ab-bulk2.txt).  A segmented reduce
    # by offsets stores no tile.
    bulk_store = resident and not pad and inst.heads != Heads.OFFSETS and inst.tile_op.acc_type.words <= 2
    return ScanShape(
        inst.block,
        ipt,
        warps,
        vin,
        vout,
        vflag,
        vkey,
        stage,
        resident,
        pad,
        chunk,
        chunk * 16 // size,
        bulk_store,
        inst.blocks_per_sm or min_blocks,
        # programmatic dependent launch; for segments by offsets only on small inputs
        pdl=True,
        pdl_max_bytes=SEGMENT_PDL_MAX_BYTES if inst.heads == Heads.OFFSETS else 0,
        one_launch_totals=SEGMENT_ONE_LAUNCH_TOTALS if resident and inst.heads == Heads.OFFSETS else 0,
        seg_spans=segment_spans(op) if inst.heads == Heads.OFFSETS else None,
        by_block_min=BY_BLOCK_MIN_TILES,
        early_min=min(EARLY_MIN_TILES, BY_BLOCK_MIN_TILES) if resident and inst.heads != Heads.OFFSETS else 0,
    )


# A segmented reduce by offsets of up to SEGMENT_SPAN_MAX_N elements whose segments average at
# most the last SEGMENT_SPAN_BLOCKS bound takes spans instead of tiles: a group of lanes a segment,
# as many as SEGMENT_SPAN_LANES gives for the average (a lane a segment up to 11 elements, a warp
# from 192), then a block a segment (SEGMENT_SPAN_BLOCKS); no search and no carry across tiles.  A
# lane loads SEGMENT_SPAN_BYTES of words before it folds any; a group's segment longer than
# SEGMENT_SPAN_LONG of its rounds takes the block's threads together.  H100, f32 sums
# (bench/trace/segspans.cu: hand-written kernels of the same form beside the generated function
# and CUB, bench/results/h100-2026-11-24-segspans.txt), per call at 2^24 against the tiles: averages
# 2 / 8 / 128 / 1000 / 4096 / 16384 in 69 / 37 / 33 / 25 / 24 / 26 us against 96 / 69 / 55 / 45 /
# 41 / 38 (CUB 9043 / 2440 / 170 / 36 / 27 / 32); from a graph at 2^20 averaging 1000 / 4096 2.29 /
# 2.68 us against CUB's 2.56 / 3.29 (tiles 3.5 / 6.7).  Few and long segments keep the tiles, which
# split any lengths evenly (one segment of n).
# The pick sees only the average: up to SEGMENT_SPAN_SPLIT_N elements one very long segment among
# short ones is folded by one block, as in CUB's block a segment (a review, 2^22 elements: one
# segment of 2^22 - 65535 among 65535 empty ones 919 us against 107 in tiles).  Past it, the kernels
# leave every segment longer than a chunk of SEGMENT_SPAN_CHUNK_BYTES to a second kernel (the
# split: a block a chunk's piece, at most SEGMENT_SPAN_SPLIT_GRID blocks of SEGMENT_SPAN_SPLIT_BLOCK,
# the last block of a segment folding its pieces in order), so that no block folds more than a chunk.
# With the split the spans run at every size (bench/results/h100-2026-11-24-segsplit.txt, per call
# against CUB): at 2^24 averages 1000 / 4096 / 16384 1.32 / 1.02 / 1.06x (the tiles: 0.82 / 0.67 /
# 0.83x) and power-law lengths 1.67x; at 2^28 1.43 / 1.02 / 1.03x and power law 1.01x (tiles 0.92x);
# one segment of n/2 among 1..16 at 2^28 in 541 us.  The split from 2^15 elements instead cost about 2
# us a call at 2^16-2^20 (graph: averages 256-4096 at 2^20 0.60-0.99x CUB), though it took one segment
# of n/2 at 2^20 from 108 us (CUB: 112) to 13.6.
SEGMENT_SPAN_LANES = ((11, 1), (23, 2), (47, 4), (95, 8), (191, 16), (767, 32))
# A block a segment: (largest average, threads a block[, largest n[, largest number of segments]]),
# an entry passed over past either limit (0: none), and searched before an entry of the same
# average without them.  A warp a segment, alone in its block, on small inputs: from a graph, cold
# (bench/results/h100-2026-11-25-fold-apart.txt), averages 128 at 2^16 (497 segments, counted 8x:
# 1048) took 1.83-1.85 us against 2.20 in blocks of 128 (CUB 2.14) and 2.13 in blocks of 64, but at
# 2^12 (32 segments) 1.65 against 1.50 (CUB 1.89); past 2^16 it lost: averages 256 at 2^18 2.49
# against 2.44, and at 2^24 averaging 1000 (16796 segments, where 32 blocks of 32 threads fill an
# SM only half) 30.5 us a call against 27.8.  It also takes the counted averages of a warp of lanes
# (192-767) up to 2^17 where the segments are at most 1024 (bench/results/h100-2026-11-27-warp-alone.txt,
# cold, from a graph, against eight warps to a block of 256): averages 128 at 2^17 (1008 segments)
# 2.65 -> 2.21 us (CUB 2.38), averages 32 and 64 at 2^13-2^15 (138-523 segments) 1.98-2.07 ->
# 1.69-1.76; with 2048 segments it lost (averages 32 at 2^16 2.22 -> 2.71, 64 at 2^17 2.25 -> 2.69),
# and at 1024-1028 segments of averages 32-64 it was within 6% either way
SEGMENT_SPAN_BLOCKS = ((767, 32, 1 << 17, 1024), (1535, 32, 1 << 16), (2047, 128), (8191, 256), (32767, 512))
SEGMENT_SPAN_MAX_N = 1 << 40
SEGMENT_SPAN_SPLIT_N = 1 << 22
SEGMENT_SPAN_CHUNK_BYTES = 128 << 10
SEGMENT_SPAN_SPLIT_BLOCK = 512
SEGMENT_SPAN_SPLIT_GRID = 1024
# Past the split's size, segments averaging less than this keep the tiles: all of length 1 at 2^28
# took 2075 us by a lane a segment against 1554 in tiles, while 1..16 took 527 against 603
SEGMENT_SPAN_MIN_AVG = 2
# The span kernels launch with PDL only past this many elements (0: always).  Measured on inputs
# hot in L2 (bench/results/h100-2026-11-24-segspans-pdl.txt), PDL at 2^16 took averages 16 / 64 /
# 128 / 256 / 1000 to 2.70 / 2.71 / 2.17 / 2.27 / 2.27 us from a graph against 1.83 / 1.78 / 1.91 /
# 1.78 / 1.78 without, so it began past 2^17.  On cold inputs (the benchmark's rows since 723f517,
# bench/results/h100-2026-11-25-segmented-cold.txt) it saves 0.15-0.35 us a call from 2^12 to 2^16
# (averages 128 at 2^12 1.95 -> 1.68 us, CUB 1.89; power-law lengths at 2^14 2.96 -> 2.64), except
# segments of 1..16 at 2^14 / 2^16 (2.26 / 2.43 -> 2.47 / 3.02 us, still 1.4x / 3.3x CUB); at 2^20
# it saves 0.2-0.4 us (avg16 3.54 against 3.90)
SEGMENT_SPAN_PDL_MIN_N = 0
# Up to these many elements (a lane-group kernel, a block kernel) a span kernel waits for the kernel
# before it without letting the next one in at its start: the next is scheduled as its blocks
# finish, instead of its blocks sitting on the SMs beside this call's, waiting.  The block kernels
# whose blocks are few (those that prefetch, below, and the block of one warp) let it in at the
# start there too.  H100, from a graph against CUB, letting it in at every span kernel's start ->
# this (bench/results/h100-2026-11-25-span-wait.txt, section 6): hot, averages 1000 at 2^16 / 2^18
# 2.07 / 2.40 -> 1.38 / 1.60 us (CUB 2.00 / 2.06), averages 128 at 2^18 2.35 -> 1.67 (2.97), 1..16 at
# 2^16 2.30 -> 1.54; cold, averages 1000 at 2^18 2.79 -> 2.33 (3.46), 1..16 at 2^16 / 2^18 3.04 /
# 3.25 -> 2.29 / 2.68.  Every span kernel waiting cost the few-block rows (section 1: power-law
# lengths at 2^14 / 2^16 / 2^18, cold, 2.12 / 5.39 / 6.73 -> 2.24 / 5.50 / 6.96 us) and the warp a
# segment (averages 128 at 2^16, cold, 1.81 -> 1.96).  Waiting past 2^18 cost the group kernels
# 0.4-0.5 us cold at 2^19 (section 2: averages 16 3.19 -> 3.67, 256 3.66 -> 4.11), and any kernel
# 0.3-0.6 us cold at 2^20 (averages 1000 3.42 -> 3.96); the block kernels waiting up to 2^19 took
# averages 1000 there from 2.94 to 1.98 us hot (CUB 2.41) for 3.12 -> 3.46 cold on averages 4096
# (CUB 5.11; section 3)
SEGMENT_SPAN_WAIT_N = (1 << 18, 1 << 19)
# Up to this many input bytes, and where a block a segment makes at most SEGMENT_SPAN_PREFETCH_BLOCKS
# blocks, the span kernels first ask L2 for the whole input, each block an even share of its lines
# (a prefetch), while they load their segments' offsets: a long segment's block then loads from L2
# rather than taking round trip after round trip to memory.  From a graph, cold, on the H100
# (bench/trace/seg_ab.sh --only segsizes, bench/results/h100-2026-11-25-fold-apart.txt): power-law
# lengths 7.88 -> 5.40 us at 2^16 (20 segments), 9.96 -> 6.75 at 2^18 (46), 2.65 -> 2.13 at 2^14,
# 2.10 -> 1.89 at 2^12; averages 1000 1.77 -> 1.54 at 2^12 (7 segments), 1.92 -> 1.71 at 2^14 (19);
# averages 128 at 2^12 (32) 1.69 -> 1.50.  With more blocks it cost (every block a prefetch, a
# first version): averages 128 at 2^14 (129 segments) 1.81 -> 2.25 and at 2^16 (497) 2.29 -> 2.50,
# averages 1000 at 2^16 (73) 2.08 -> 2.20; in the lane-group kernels mixed (1..16: 2^12 and 2^18
# faster, 2^14 and 2^16 slower), so they never prefetch.  One prefetch.global.L2 a line; a bulk
# prefetch of each block's share (cp.async.bulk.prefetch.L2) was 2-8% slower
SEGMENT_SPAN_PREFETCH_BYTES = 4 << 20
SEGMENT_SPAN_PREFETCH_BLOCKS = 64
# On small inputs a segment takes more lanes than its average asks (the GPU is short of work, and a
# group's rounds are round trips one after another): up to n, the average counts 2^shift times.
# From a graph against CUB (bench/trace/seg_ab.sh, bench/results/h100-2026-11-25-span-shifts.txt),
# 8x up to 2^14 took averages 128 at 2^12 from 0.82x to 0.96x and power-law lengths from 0.96x to
# 1.02-1.03x; 4x up to 2^18 (was 2^17) every average of the benchmark's inputs at 2^18 as fast or
# faster (256: 0.60x -> 0.97x, 1000: 0.83x -> 0.87x, 16: 5.1x -> 6.4x), though on another input
# averaging 1000 (bench/trace/sweep.sh B) the block of 256 it now takes ran 2.36 us against 2.20 for
# the block of 128; 4x at 2^20 was slower (averages 16 / 32 / 64 / 256 by 1.6-2.3 us, 1000 by 0.3),
# and 2^19 was not measured with 4x.  Then, cold (the file above), 8x up to 2^16 (was 2^14) took
# averages 128 at 2^16 from 2.47 to 2.30 us (CUB 2.13), 1000 / 256 / 4096 / power law as fast or
# faster; 16x there was slower (2.40).  Measured on f32 sums; it applies to every segmented reduce
SEGMENT_SPAN_SHIFTS = ((1 << 16, 3), (1 << 18, 2), (1 << 21, 1))
SEGMENT_SPAN_BYTES = 32
SEGMENT_SPAN_LONG = 4
SEGMENT_SPAN_BLOCK = 256  # a group kernel's threads


def segment_spans(op):
    """The spans form of a segmented reduce by offsets of `op` (None for operators of several
    inputs: their tiles only)."""
    if op.inputs:
        return None
    size = op.in_type.size
    vec = 16 // size if size in (1, 2, 4, 8) else 1
    unroll = max(1, min(8, SEGMENT_SPAN_BYTES // (vec * size)))
    # the entries at any n ascend by average, the blocks' past the lanes', and the last block entry
    # takes what is left at any n
    bounds = [e[0] for e in SEGMENT_SPAN_LANES + SEGMENT_SPAN_BLOCKS if not any(e[2:])]
    assert bounds == sorted(bounds) and not any(SEGMENT_SPAN_BLOCKS[-1][2:]), "SEGMENT_SPAN tables"
    assert SEGMENT_SPAN_BLOCKS[-1][0] == max(e[0] for e in SEGMENT_SPAN_BLOCKS), "SEGMENT_SPAN tables"
    # a power of two, and never shorter than what a group leaves to its block (a longer segment a
    # group folded would go unmarked); 128 KiB of elements where that is longer
    longest = SEGMENT_SPAN_LONG * unroll * SEGMENT_SPAN_LANES[-1][1] * vec
    chunk = 1 << max((SEGMENT_SPAN_CHUNK_BYTES // size).bit_length() - 1, (longest - 1).bit_length())
    return SegmentSpans(
        vec,
        unroll,
        SEGMENT_SPAN_LANES,
        tuple((*e, 0, 0)[:4] for e in SEGMENT_SPAN_BLOCKS),
        max_n=SEGMENT_SPAN_MAX_N,
        shifts=SEGMENT_SPAN_SHIFTS,
        long_rounds=SEGMENT_SPAN_LONG,
        # a full SM for 4-byte accumulators: left to itself, ptxas took 38 registers (6 blocks an
        # SM), and with a cap of 32 it spills nothing; 8-byte ones spill 8-16 bytes at 32, so 6
        min_blocks={1: TARGET.threads_per_sm // SEGMENT_SPAN_BLOCK, 2: 6}.get(op.acc_type.words, 0),
        block=SEGMENT_SPAN_BLOCK,
        split_n=SEGMENT_SPAN_SPLIT_N,
        chunk=chunk,
        split_block=SEGMENT_SPAN_SPLIT_BLOCK,
        split_grid=SEGMENT_SPAN_SPLIT_GRID,
        min_avg=SEGMENT_SPAN_MIN_AVG,
        pdl_min_n=SEGMENT_SPAN_PDL_MIN_N,
        prefetch_n=SEGMENT_SPAN_PREFETCH_BYTES // size,
        prefetch_blocks=SEGMENT_SPAN_PREFETCH_BLOCKS,
        wait_n=SEGMENT_SPAN_WAIT_N[0],
        block_wait_n=SEGMENT_SPAN_WAIT_N[1],
    )


# A one-pass scan takes its tiles in blockIdx order, with no ticket (an atomic on one counter that
# every tile waits on), where they are at least this many and all fit on the GPU at once (the host
# asks the occupancy API once a device); otherwise in ticket order, the order blocks really start.
# Measured on the H100, hot, from a graph (bench/results/h100-2026-11-25-key-heads.txt): the scan by
# key in 256 x 16 tiles took 10.37 us at 512 tiles against 11.89 by ticket, 8.06 against 8.60 at 256,
# 6.62 against 6.94 at 128; but by ticket 3.92 against 4.09 at 8 tiles, and with blockIdx order
# from 1 tile on the benchmark's scan by key at 2^14 (16 tiles) ran at 0.91 of ticket order and at
# 2^17 (32 tiles) at 1.00-1.02 of before, against 1.04-1.05 by ticket.  A compromise: the sweep had
# blockIdx order ahead at 32-96 tiles too (4.38 / 5.68 / 6.15 us against 4.53 / 5.87 / 6.68).
BY_BLOCK_MIN_TILES = 128
# A plain scan's resident tiles (16-byte cp.async.cg loads, through L2) in blockIdx order load
# early: the launch before the tile kernel is the call's own clear of the look-back's slots, which
# under programmatic dependent launch lets the tile kernel in only once the work before the call
# has finished, so a whole tile's loads go out before the kernel waits for the clear, and their
# latency overlaps it.  They take blockIdx order from this many tiles (where all fit at once).
# The clear waits for the work before the call and only then lets the tile kernel in (until then
# it let it in at once, and the tile kernel waited on the GPU for both).  H100, cold, from a graph
# against CUB, before -> after (bench/trace/seg_ab.sh, bench/results/h100-2026-11-25-early-loads.txt):
# the f32 scan 0.96x -> 1.18x at 2^13, 0.96x -> 1.15x at 2^14, 0.94x -> 1.10x at 2^15, 0.99x ->
# 1.06x at 2^16, 1.07x -> 1.11x at 2^17, 0.96x -> 0.99x at 2^18, 1.01x -> 1.07x at 2^20; the 2x2
# matrix scans 1.01-1.42x -> 1.15-1.68x at 2^12-2^18.  The clear's new order alone, early loads
# from 128 tiles, took 2^13-2^15 to 1.02-1.08x.  Register tiles and segmented reduces keep ticket
# order below BY_BLOCK_MIN_TILES and wait first.  Where the tiles will not load early (more than fit
# at once, unaligned data), the clear lets them in at once.
# The same for segmented scans by flags or keys (their heads load by __ldcg, through L2, where they
# load early).  The scan by key from a graph against Thrust, before -> after (same file, section 11):
# cold 1.18x -> 1.39x at 2^14, 1.27x -> 1.38x at 2^16, 1.17x -> 1.29x at 2^17, unchanged at 2^18-2^19,
# 1.07x -> 1.05x at 2^20 (128 tiles of 1024 threads: resident early, they had started sooner);
# hot 1.21x -> 1.28x at 2^14, 1.02x -> 1.13x at 2^17, 0.95x -> 0.93x at 2^20.  From 128 tiles only:
# 1.19-1.25x at 2^14-2^16
EARLY_MIN_TILES = 2


# ---- shapes by size: where a scan's default tile leaves the GPU short of work

# A plain scan of 4-byte elements (and accumulators) in its default shape (256 x 36, resident)
# takes other tiles for other sizes of n, picked at run time: (largest n, block, items), the first
# that holds n; past the last, the default.  Measured on the H100 against
# CUB's scan, replayed from a CUDA graph (bench --only variants, 2026-11-24,
# bench/results/h100-2026-11-24-scan-sizes.txt): 256 x 16 at 2^12 1.68x (default 1.16x); 256 x 8
# at 2^14 / 2^16 0.96x / 0.99x (default 0.76x / 0.80x); the default from 2^18 (0.96x) to 2^20
# (0.98x); 256 x 16 at 2^22 per call 1.06x (default 0.95x); the default from 2^24 (1.11-1.15x).
# Once tiles went in blockIdx order from BY_BLOCK_MIN_TILES, smaller tiles won between 2^17 and
# 2^21 (`assocgen tune`, cold, then bench --only medium before/after in one run, 2026-11-25,
# bench/results/h100-2026-11-25-scan-table.txt): from a graph against CUB 256 x 16 at 2^17 1.03-1.04x
# (256 x 8: 0.96x), 256 x 8 at 2^19 1.03-1.04x (the default: 0.98-0.99x), 128 x 36 at 2^20
# 1.01-1.02x (the default: 0.94x) and per call at 2^21 1.16-1.17x (1.13-1.14x); at 2^18 every
# candidate was within 2% (256 x 8 and the default both 0.96x).
SCAN_SIZE_SHAPES = (
    (1 << 13, 256, 16),
    (1 << 16, 256, 8),
    (1 << 17, 256, 16),
    (1 << 19, 256, 8),
    (1 << 21, 128, 36),
    (1 << 22, 256, 16),
)


# A segmented reduce by offsets of 4-byte elements (and accumulators) takes 256 x 8 tiles up to
# 2^21 elements, in one launch there (bench --only segvariants, 2026-11-24): from a CUDA graph at
# 2^20, 7.0 us against 8.5 in the default 256 x 32 with segments averaging 1000, 5.3 against 7.0
# with one segment, 6.0 against 6.6 power-law, 10.9 against 13.4 with 1..16; at 2^16 4.5 against
# 5.2 (averaging 1000) and 3.6 against 4.3 (one).  Past 2^21 its tiles pass one launch's count.
SEGMENT_SIZE_SHAPES = ((1 << 21, 256, 8),)
# A segmented scan (flags or keys) of 4-byte elements takes 256 x 16 tiles up to 2^21 elements, more
# tiles where the default 256 x 28 leaves the GPU short of work (bench/results/
# h100-2026-11-24-segscan-sizes.txt, by keys, cold): at 2^20 from a graph 9.34 us against 11.8
# (Thrust 7.8), per call 0.95-0.97x Thrust against 0.89x; 256 x 8 took 9.5, 256 x 4 11.5.  Up to
# 2^17, 512 x 8: `assocgen tune` on the H100, timing hot, picked it (or 256 x 8, 128 x 8 within
# noise) at 2^12 and 2^16 by keys, 1.13-1.16x the 256 x 16 from a graph, and kept 256 x 16 from 2^18
# (bench/results/h100-2026-11-25-segscan-tuned.txt); timing cold it took 512 x 8 at 2^18 and 2^20
# too (1.06-1.10x).  Up to 2^20 since: hot, from a graph, it is ahead of 256 x 16 at every tile count
# of bench/trace/sweep.sh from 1 to 256 (6.17 / 6.46 / 7.17 / 7.76 / 9.16 us against 6.66 / 6.84 /
# 7.82 / 8.69 / 9.28 at 48 / 64 / 128 / 192 / 256 tiles), and the benchmark's scan by key went 1.08x
# at 2^18 and 2^19 (0.77-0.79x -> 0.83-0.88x Thrust) and 1.03x at 2^20 (0.78x -> 0.80x; bench --only
# medium, bench/results/h100-2026-11-25-lookback-sweep.txt).  Between 2^13 and 2^15, 256 x 4 (tiles
# of 1024): 3.58 / 3.49 us at 2^14 / 2^15 in the sweep against 4.45 / 4.52 for 512 x 8 (2.74 against
# 3.38 at 2^12, where 512 x 8 stays), and the benchmark's scan by key at 2^14 1.26-1.30x from a graph
# (0.95-0.96x -> 1.21-1.25x Thrust).  Since the keys' head bits merge without a slow path and tiles
# that all fit at once go in blockIdx order, the sweep (hot, from a graph, against Thrust; bench/
# results/h100-2026-11-25-key-heads.txt) puts 256 x 16 within 1-2% of 512 x 8 at 1 and 16 tiles of
# 4096 (in the benchmark, from a graph, 1.03x at 2^12 but 0.94-0.98x at 2^16, where 512 x 8 stays)
# and ahead at 32 (4.38 against 4.52 us), 1024 x 8 ahead at 48-64 (5.36-5.38; 512 x 8 5.67-
# 5.82, Thrust 5.19-5.29) and at 256 (7.70 against 7.99, Thrust 7.27), 1024 x 4 at 96-128 (6.03 /
# 6.37 against 6.34 / 6.81 for 1024 x 8, Thrust 5.63 / 6.16), and 256 x 16 at 512 (10.37; 512 x 8,
# too many tiles to fit at once there, 13.39; Thrust 13.14).  Measured on the f32 sum by i32 keys; it
# applies to every 4-byte segmented scan, by flags or keys, inclusive or exclusive.  The sweep ran
# every count in blockIdx order; the shapes of 2^17 and 2^18 (32 tiles) run by ticket.  At 2^16,
# 256 x 8 (32 tiles by ticket) then beat 512 x 8 by 1.07-1.10x from a graph in the benchmark
# (bench --only segsizes before/after, bench/results/h100-2026-11-25-scan-table.txt: 1.12-1.15x
# -> 1.21-1.23x Thrust), as the hot tuner said (1.08x)
SEGSCAN_SIZE_SHAPES = (
    (1 << 13, 256, 16),
    (1 << 15, 256, 4),
    (1 << 16, 256, 8),
    (1 << 17, 256, 16),
    (1 << 18, 1024, 8),
    (1 << 19, 1024, 4),
    (1 << 20, 1024, 8),
    (1 << 21, 256, 16),
)


def size_shapes(inst) -> list:
    """[(largest n or None for the rest, Instance)]: the shapes of `inst` by the size of its input,
    or [] where it keeps one shape (its shape given by the spec, or a form not measured here)."""
    if not getattr(inst, "sized", False):  # a shape the spec gave, or another family
        return []
    if inst.shapes:  # measured on the user's GPU (a tuning file); one shape: the instance's own
        if len(inst.shapes) == 1:
            return []
        base = replace(inst, shapes=())
        return [(upto, replace(base, block=b, items=t, blocks_per_sm=m)) for upto, b, t, m in inst.shapes]
    op = inst.op
    if op.inputs or not op.in_type.size == op.acc_type.size == op.out_type.size == 4:
        return []
    table = {
        Primitive.SCAN: SCAN_SIZE_SHAPES,
        Primitive.EXSCAN: SCAN_SIZE_SHAPES,
        Primitive.SEGREDUCE: SEGMENT_SIZE_SHAPES,
        Primitive.SEGSCAN: SEGSCAN_SIZE_SHAPES,
        Primitive.EXSEGSCAN: SEGSCAN_SIZE_SHAPES,
    }.get(inst.primitive)
    if table is None:
        return []
    out = []
    for upto, block, items in table:
        out.append((upto, replace(inst, block=block, items=items)))
    return out + [(None, inst)]


# ---- candidates for `assocgen tune`: the shapes measured on the user's GPU

TUNE_BLOCKS = (128, 256, 512, 1024)
# bytes a thread's tile holds (of the held type: tiles.  _held_type): a reduce's in flight a step,
# a scan's whole tile (in registers, or resident in shared memory up to 144)
TUNE_THREAD_BYTES = {"reduce": (16, 32, 64, 128), "scan": (32, 64, 96, 128, 144)}


def tune_candidates(inst) -> list:
    """The shapes `assocgen tune` measures for `inst`: the built-in ones first (each shape of
    size_shapes, or the instance's own), then blocks of TUNE_BLOCKS threads by tiles of
    TUNE_THREAD_BYTES bytes a thread, and the large-n shape asking the compiler for full occupancy.
    Instances whose shape fits (items_problem), without repeats; of the added ones, none that would
    load unstaged (_unstaged)."""
    base = replace(inst, shapes=(), sized=False)
    out = [s for _, s in size_shapes(inst)] or [base]
    out = [replace(s, sized=False, shapes=()) for s in out]
    builtin = len(out)  # the built-in shapes stay candidates whatever they are
    size = _held_type(inst).size
    for block in TUNE_BLOCKS:
        for nbytes in TUNE_THREAD_BYTES[inst.family]:
            items = max(1, nbytes // size)
            out.append(replace(base, block=block, items=items, blocks_per_sm=0))
    full = TARGET.threads_per_sm // base.block
    out.append(replace(base, blocks_per_sm=min(full, TARGET.blocks_per_sm)))
    seen, kept = set(), []
    for k, s in enumerate(out):
        key = (s.block, s.items, s.blocks_per_sm)
        if key not in seen and not items_problem(s, s.items) and (k < builtin or not _unstaged(s)):
            seen.add(key)
            kept.append(s)
    return kept


def _unstaged(inst) -> bool:
    """Whether a scan-family shape loads its whole 16-byte words one thread's run at a time (its
    staging does not fit in STAGE_LIMIT, nor is the tile resident): right, but 3-7x slower than a
    staged tile on the H100 (`assocgen tune`, 512 x 24 and 1024 x 16 floats), so not worth a
    candidate's time."""
    if inst.family != "scan" or not words16(inst.items, inst.op.in_type.size):
        return False
    shape = scan_shape(inst)
    return not shape.resident and not shape.stage


# ---- transposes: the tile, the threads that move it, and the shared-memory remedy

TRANSPOSE_SMEM_LIMIT = 40 * 1024  # static shared memory a transpose's tile may take
TRANSPOSE_ROWS = 8  # warps a block (the seeds' BLOCK_ROWS: a 32 x 8 block measured best)
# measured on the H100 (bench/NOTES.md): 4-byte elements move fastest in tiles of 64 x 64 with 16
# warps (8192^2 floats at 0.972 of a copy, against 0.897 with the seeds' 32 x 32 and 8 warps),
# 16-byte ones in 32 x 32 with 16 warps (4096^2 at 0.977, against 0.959 with 8), 3-byte ones in
# 32 x 32 with 4 warps (8192^2 at 0.666, against 0.487 with 8 and 0.648 in 64 x 64 with 8)
TRANSPOSE_DEFAULTS = {3: (32, 4), 4: (64, 16), 16: (32, 16)}  # element size: (tile, rows)
TRANSPOSE_REMEDIES = ("pad", "swizzle", "none")


class ShapeError(ValueError):
    """A shape that cannot be made: the spec key to blame and the problem."""

    def __init__(self, key: str, problem: str):
        self.key, self.problem = key, problem
        super().__init__(problem)


@dataclass(frozen=True)
class TransposeShape:
    """A transpose's tile of `tile` x `tile` elements of `size` bytes, moved by 32 x `rows`
    threads through shared memory held as 4-byte words (`unit` 4) or bytes (`unit` 1).

    Words: an element of 4k bytes is `per_elem` words; one of 1 or 2 bytes shares a word with
    `per_word` - 1 others of its row, and `per_word` rows' words are transposed in registers on
    the way out, so every global access is a whole word a lane.  A tile row is `row_units` units;
    shared memory keeps rows `stride` units apart, and where a unit goes in its row is the bank
    remedy: `pad` (rows padded so that a column's elements fall on distinct banks), `swizzle`
    (the unit column XORed with the row, no padding) or `none` (the seeds' unpadded tile).

    Sector-aligned writes: a row of the output whose start is not on a 32-byte sector would be
    written as a partial sector at each end of every tile, and partial sectors cost the H100 a
    third of its bandwidth (bench/NOTES.md).  Where `skew` > 0, the tile holds `skew` rows more
    than `tile`, and a block writes each output row in a window of `tile` elements shifted by up
    to `skew` so that it starts on a sector (the first tile row also writes the window's lead)."""

    size: int
    tile: int
    rows: int
    remedy: str
    unit: int  # 4: whole words; 1: bytes (sizes neither 1, 2 nor a multiple of 4)
    per_word: int  # elements a word (4 / size for 1 and 2 bytes, else 1)
    per_elem: int  # units an element (size / 4 for words, size for bytes; 1 for sub-words)
    row_units: int  # units a tile row
    stride: int  # units from one tile row to the next in shared memory
    swizzle_rows: int  # rows of the XOR pattern (swizzle): row r XORs element column r % this
    skew: int  # tile rows beyond `tile`, so that output windows can start on 32-byte sectors
    naive: bool = False  # the seeds' naive kernel: no shared memory, columns written strided
    words: bool = False  # a byte tile (unit 1) whose rows are whole words: full tiles move as words

    @property
    def threads(self) -> int:
        return 32 * self.rows

    @property
    def smem_bytes(self) -> int:
        return (self.tile + self.skew) * self.stride * self.unit

    @property
    def groups(self) -> int:
        """Output rows handled together: per_word rows share the registers' transposition."""
        return self.tile // self.per_word


def _naive_shape(size: int, unit: int, per_elem: int, tile: int, rows: int, remedy: str) -> TransposeShape:
    """The seeds' naive kernel (000): a block of 32 x `rows` threads a tile, no shared memory."""
    if remedy:
        raise ShapeError("remedy", "a naive transpose has no tile in shared memory, so no bank remedy")
    tile, rows = tile or 32, rows or TRANSPOSE_ROWS
    if tile & (tile - 1) or not 1 <= tile <= 128:
        raise ShapeError("tile", f"{tile} is not a power of two in 1..128")
    if rows & (rows - 1) or not 1 <= rows <= min(32, tile):
        top = min(32, tile)
        raise ShapeError("rows", f"{rows} is not a power of two in 1..{top} (warps a block, at most the tile)")
    return TransposeShape(size, tile, rows, "none", unit, 1, per_elem, 0, 0, 0, 0, naive=True)


def _transpose_units(size: int):
    if size in (1, 2):
        return 4, 4 // size, 1
    if size % 4 == 0:
        return 4, 1, size // 4
    return 1, 1, size


SECTOR = 32  # bytes: the unit in which the L2 cache and memory move data


def transpose_shape(size: int, tile: int = 0, rows: int = 0, remedy: str = "", naive: bool = False) -> TransposeShape:
    """The shape for elements of `size` bytes; 0 / "" for a parameter: the default.  Raises
    ShapeError when the asked shape cannot be made."""
    unit, per_word, per_elem = _transpose_units(size)
    if naive:
        return _naive_shape(size, unit, per_elem, tile, rows, remedy)
    remedy = remedy or ("swizzle" if per_word > 1 else "pad")
    if remedy not in TRANSPOSE_REMEDIES:
        raise ShapeError("remedy", f"{remedy!r} is not one of: {', '.join(TRANSPOSE_REMEDIES)}")
    if per_word > 1:
        # a tile row is one word a lane of a warp: 32 words, so 32 * per_word elements
        want = 32 * per_word
        if tile and tile != want:
            raise ShapeError("tile", f"elements of {size} bytes move in tiles of {want} (a word a lane), not {tile}")
        tile = want
        if remedy == "pad":
            raise ShapeError(
                "remedy",
                f"elements of {size} bytes are gathered {per_word} to a word, and a padded tile puts the "
                f"{per_word} rows of a word on one bank: use remedy = 'swizzle' (or 'none')",
            )
    elif not tile and size in TRANSPOSE_DEFAULTS:
        tile = TRANSPOSE_DEFAULTS[size][0]
        rows = rows or TRANSPOSE_DEFAULTS[size][1]
    elif not tile:
        tile = 32
        while tile > 1 and tile * (tile * per_elem + 32) * unit > TRANSPOSE_SMEM_LIMIT:
            tile //= 2
    if tile & (tile - 1) or not 1 <= tile <= 128:
        raise ShapeError("tile", f"{tile} is not a power of two in 1..128")
    groups = tile // per_word
    rows = rows or min(TRANSPOSE_ROWS, groups)
    if rows & (rows - 1) or not 1 <= rows <= 32:
        raise ShapeError("rows", f"{rows} is not a power of two in 1..32 (warps a block)")
    if rows > groups:
        what = "words" if per_word > 1 else "elements"
        raise ShapeError("rows", f"{rows} is more than the tile's {groups} rows of {what}")
    row_units = tile * per_elem // per_word if per_word > 1 else tile * per_elem
    words = unit == 1 and row_units % 4 == 0
    swizzle_rows = 0
    if remedy == "swizzle":
        if unit != 4 or 32 % per_elem or row_units % 32:
            raise ShapeError(
                "remedy",
                f"an XOR swizzle needs rows of whole 32-word lines and elements of 4, 8, 16, ... 128 bytes "
                f"(or 1 and 2): {size} bytes in tiles of {tile} is not one: use remedy = 'pad'",
            )
        swizzle_rows = 32 // per_elem
        stride = row_units
    elif remedy == "pad" and words:
        # a byte tile moved as words: rows an odd number of words apart, so that the words of
        # 32 successive rows fall on distinct banks
        stride = 4 * (row_units // 4 | 1)
    elif remedy == "pad":
        # one element's units more a row (the seeds' TILE_DIM + 1): the rows of a column then start
        # on successive banks; with words, rows `per_elem` words apart mod 32
        stride = row_units + ((per_elem - row_units) % 32 if unit == 4 else per_elem)
    else:
        stride = row_units
    # windows on sectors: for whole-word elements that tile a sector (4, 8, 16 bytes) in tiles
    # whose rows are whole sectors
    sectors = per_word == 1 and size % 4 == 0 and SECTOR % size == 0 and tile * size % SECTOR == 0
    skew = SECTOR // size - 1 if sectors else 0
    shape = TransposeShape(
        size, tile, rows, remedy, unit, per_word, per_elem, row_units, stride, swizzle_rows, skew, words=words
    )
    if shape.smem_bytes > 48 * 1024:
        raise ShapeError(
            "tile",
            f"a tile of {tile} x {tile} elements of {size} bytes takes {shape.smem_bytes} bytes of shared "
            "memory (48 KiB at most): ask for a smaller tile",
        )
    return shape


# ----------------------------------------------------------------------------------------------
# the tiled matrix multiply over a semiring


@dataclass(frozen=True)
class MatmulShape:
    """A block computes a bm x bn tile of C, stepping k by bk through tiles of A (bm x bk) and B
    (bk x bn) in shared memory; each warp a wm x wn part of it, and each thread tm x tn elements
    of C, from tm of A's and tn of B's a step.  The tiles travel one of two ways (`pipeline`):
    "registers", global memory to registers to shared memory, two tiles of each (the next step's
    loads in flight while this one's products run); or "async", cp.async straight to shared
    memory (sm_80+), `stages` tiles of each, stages - 1 steps' copies in flight."""

    size: int  # bytes of C's element
    bm: int
    bn: int
    bk: int
    tm: int
    tn: int
    wm: int
    wn: int
    pipeline: str = "registers"
    stages: int = 2
    a_size: int = 4  # bytes of A's and B's elements
    b_size: int = 4

    @property
    def threads(self) -> int:
        return (self.bm // self.tm) * (self.bn // self.tn)

    @property
    def min_blocks(self) -> int:
        """Blocks an SM to ask of the compiler: two of 256 threads (128 registers a thread: a
        thread's 64 elements of C and its operands fit without spilling)"""
        return max(1, 512 // self.threads)

    @property
    def a_pad(self) -> int:
        """Elements each k row of A's tile is padded by, so that a warp's transposing stores fall
        on distinct banks"""
        return 4

    @property
    def lanes_n(self) -> int:
        """A warp's lanes along n (the rest along m)"""
        return self.wn // self.tn

    @property
    def smem_bytes(self) -> int:
        return self.stages * self.bk * ((self.bm + self.a_pad) * self.a_size + self.bn * self.b_size)

    @property
    def name(self) -> str:
        """The shape's part of a kernel's name"""
        pipe = f"_async{self.stages}" if self.pipeline == "async" else ""
        return f"b{self.bm}x{self.bn}x{self.bk}_w{self.wm}x{self.wn}_t{self.tm}x{self.tn}{pipe}"

    def tile_io(self, operand: str, layout: str) -> "MatmulTileIO":
        """How the threads bring a step's tile of A or B in: as stored, A m x k (layout n) or k x m
        (t), B k x n (n) or n x k (t); shared memory holds A k-major and B k x n"""
        size = self.a_size if operand == "a" else self.b_size
        k_along = (operand == "a") == (layout == "n")  # the stored rows run along k
        fixed = self.bm if operand == "a" else self.bn
        rows, rowlen = (fixed, self.bk) if k_along else (self.bk, fixed)
        each = rows * rowlen // self.threads
        if self.pipeline == "async" and k_along:
            # element by element into the transposed tile: a warp's copies 8 along k (a 32-byte
            # sector of a row) by 4 rows, which land on 32 distinct banks of the padded tile
            return MatmulTileIO(rows, rowlen, 1, each, k_along, transposed=True, slab=min(8, rowlen))
        vec = 1
        while vec * 2 * size <= 16 and each % (vec * 2) == 0 and rowlen % (vec * 2) == 0:
            vec *= 2
        if vec * size not in (4, 8, 16):
            vec = 1  # no word that size: element by element
        return MatmulTileIO(rows, rowlen, vec, each // vec, k_along, transposed=k_along)


@dataclass(frozen=True)
class MatmulTileIO:
    """A step's tile of one operand as stored (`rows` x `rowlen` elements, rows along the stored
    matrix's rows): each thread loads `chunks` runs of `vec` consecutive elements, as one word of
    vec x size bytes where the matrix's pointer and leading dimension allow (and the tile is
    whole), else element by element; `k_along` says the stored rows run along k (a step moves
    along a row, else down rows); `transposed`, that shared memory holds the tile [col][row];
    `slab` (0: none), that the runs go down slabs of that many columns, a column a lane."""

    rows: int
    rowlen: int
    vec: int
    chunks: int
    k_along: bool
    transposed: bool
    slab: int = 0

    def chunk(self, s: int, threads: int) -> tuple:
        """(rows, cols) that chunk s is offset from chunk 0 by, when threads x vec is a multiple of
        a row or divides one (the shapes allowed make it so); down slabs, the same holds of a slab's
        elements (powers of two: a thread's place plus its chunk's offset never carries)"""
        e = s * threads * self.vec
        if self.slab:
            return ((e // self.slab) % self.rows, e // (self.slab * self.rows) * self.slab)
        return (e // self.rowlen, e % self.rowlen)


MATMUL_DEFAULTS = {
    # (C's element size, witness): (bm, bn, bk, tm, tn)
    (4, False): (128, 128, 16, 8, 8),
    (8, False): (64, 64, 8, 4, 4),
}
MATMUL_SMALL = (64, 64, 8, 4, 4)  # with a witness (twice the registers a C element) or wider types
PIPELINES = ("registers", "async")
ASYNC_SIZES = (4, 8, 16)  # bytes cp.async copies at once


def _default_warp(bm: int, bn: int, tm: int, tn: int) -> tuple:
    """A warp's part of the tile, where the spec leaves it out: a row of lanes along n as wide as
    the tile (32 lanes at most), as many such rows as make 32 lanes"""
    across = min(bn // tn, 32)
    return (tm * 32 // across, tn * across)


def matmul_shape(
    size: int,
    witness: bool = False,
    block=(),
    thread=(),
    warp=(),
    pipeline=None,
    stages=None,
    operands=None,
    structs=False,
) -> MatmulShape:
    """The shape for C elements of `size` bytes (A's and B's: `operands`, else the same); `block`
    (m, n, k), `thread` (m, n), `warp` (m, n), `pipeline` and `stages` override the default.
    `structs`: A or B is a struct type, whose alignment may be less than its size.
    Raises ShapeError when the asked shape cannot be made."""
    bm, bn, bk, tm, tn = MATMUL_DEFAULTS.get((size, witness), MATMUL_SMALL)
    a_size, b_size = operands or (size, size)
    key = "block"
    if block:
        bm, bn, bk = block
    if thread:
        tm, tn = thread
    for k, v in (("block", bm), ("block", bn), ("block", bk), ("thread", tm), ("thread", tn)):
        if v < 1 or v & (v - 1):
            raise ShapeError(k, f"{v} is not a power of two")
    if bm % tm or bn % tn:
        raise ShapeError("thread", f"a thread's {tm} x {tn} does not divide the block's {bm} x {bn}")
    threads = (bm // tm) * (bn // tn)
    if not 32 <= threads <= 1024:
        raise ShapeError(key, f"{bm} x {bn} by threads of {tm} x {tn} is {threads} threads (32..1024)")
    wm, wn = warp or _default_warp(bm, bn, tm, tn)
    if warp:
        for v in warp:
            if v < 1 or v & (v - 1):
                raise ShapeError("warp", f"{v} is not a power of two")
        if (wm // tm) * (wn // tn) != 32 or wm % tm or wn % tn:
            raise ShapeError("warp", f"{wm} x {wn} by threads of {tm} x {tn} is not 32 lanes")
        if bm % wm or bn % wn:
            raise ShapeError("warp", f"a warp's {wm} x {wn} does not divide the block's {bm} x {bn}")
    pipeline = pipeline or "registers"
    if pipeline not in PIPELINES:
        raise ShapeError("pipeline", f"{pipeline!r} is not one of: {', '.join(PIPELINES)}")
    if stages is None:
        stages = 2
    elif pipeline == "registers" and stages != 2:
        raise ShapeError("stages", f'the registers pipeline holds 2 tiles, not {stages} (stages: pipeline = "async")')
    elif not 2 <= stages <= 8:
        raise ShapeError("stages", f"{stages} is not in 2..8")
    if pipeline == "async" and not (a_size in ASYNC_SIZES and b_size in ASYNC_SIZES):
        raise ShapeError(
            "pipeline", f"cp.async copies 4, 8 or 16 bytes, not elements of {a_size} and {b_size}: use the registers"
        )
    if pipeline == "async" and structs:
        raise ShapeError(
            "pipeline",
            "cp.async copies an element as one word, aligned to its size, which a struct need not be: "
            "use the registers",
        )
    shape = MatmulShape(size, bm, bn, bk, tm, tn, wm, wn, pipeline, stages, a_size, b_size)
    if (bm * bk) % shape.threads or (bn * bk) % shape.threads:
        raise ShapeError(
            key, f"a step's tiles ({bm} x {bk}, {bk} x {bn}) do not split evenly over {shape.threads} threads"
        )
    if tm * tn > 128:
        raise ShapeError("thread", f"{tm} x {tn} elements a thread is more than 128 (registers)")
    if shape.smem_bytes > 48 * 1024:
        what = f"{stages} stages of " if pipeline == "async" else ""
        raise ShapeError(key, f"{what}the tiles take {shape.smem_bytes} bytes of shared memory (48 KiB at most)")
    return shape


# ----------------------------------------------------------------------------------------------
# reduce along rows


@dataclass(frozen=True)
class RowsShape:
    """Each row of a rows x cols array folded on its own.  A run of a row is read `vec` elements a
    lane a round (one 16-byte word where the row's start allows); short rows take a group of `g`
    lanes each (g from 1, a thread a row, to 32, a warp a row: the kernel for g is generated for
    every g in GROUPS, the host picks by cols); long rows, where rows are too few to fill the GPU
    with warps, take blocks of `warps` warps, each warp a contiguous run, several blocks a row
    (their folds in the workspace, folded after in order)."""

    size: int  # bytes of the input element
    block: int = 256

    GROUPS = (1, 2, 4, 8, 16, 32)

    @property
    def vec(self) -> int:
        return 16 // self.size if self.size in (1, 2, 4, 8) else 1

    @property
    def warps(self) -> int:
        return self.block // 32

    @property
    def long_cols(self) -> int:
        """Rows longer than this (8 rounds of a warp) may take blocks when rows are few"""
        return 8 * 32 * self.vec

    @property
    def min_run(self) -> int:
        """A warp's run in the block kernel: at least 4 rounds"""
        return 4 * 32 * self.vec

    # Scans along rows, long rows that are few: a block a row runs a block scan a round (its
    # rounds one after another), or the whole GPU scans every row in one launch (the scan
    # family's kernel, each row's tiles chained by a look-back of their own).  The host picks
    # the faster by this model, measured on the H100 (bench/rows): a block's round of 256
    # threads takes ROUND_NS; the GPU's scan LINE_NS plus the bytes (read and written) at
    # COPY_BYTES_PER_NS.
    ROUND_NS = 600
    LINE_NS = 3000
    COPY_BYTES_PER_NS = 2700


def rows_shape(size: int) -> RowsShape:
    return RowsShape(size)


@dataclass(frozen=True)
class ColsShape:
    """One result a column.  A lane takes `vec` adjacent columns (one 16-byte word of a row where
    the rows allow), a warp g column lanes by 32 / g row lanes (g from 1 to 32: the kernel for g is
    generated for every g in GROUPS, the host picks the fewest that cover the columns), so a warp
    reads 32 / g runs of g x vec consecutive elements; a block's `warps` warps take a chunk of the
    rows, each of its warps x 32 / g lanes a row-lane a contiguous slice, folded in row order, the
    slices' folds then in slice order.  Where the columns' blocks are too few to fill the GPU, the
    rows are cut into chunks (blockIdx.y), their folds to the workspace, folded after in order."""

    size: int
    acc_size: int  # the accumulator's: a block's slices hold block x vec of them
    block: int = 256

    GROUPS = (1, 2, 4, 8, 16, 32)

    @property
    def vec(self) -> int:
        """Elements a lane: a 16-byte word of them, fewer where the slices would pass 32 KiB"""
        v = 16 // self.size if self.size in (1, 2, 4, 8) else 1
        while v > 1 and self.block * v * self.acc_size > 32 * 1024:
            v //= 2
        return v

    @property
    def word(self) -> str:
        """The word a lane loads its vec elements as ("" for one element)"""
        return {16: "uint4", 8: "uint2", 4: "unsigned int", 2: "unsigned short"}.get(self.vec * self.size, "")

    @property
    def warps(self) -> int:
        return self.block // 32

    @property
    def min_slice(self) -> int:
        """Rows a lane's slice holds at least, where the rows are cut into chunks"""
        return 16


def cols_shape(size: int, acc_size: int) -> ColsShape:
    return ColsShape(size, acc_size)
