"""Tuning: every decision about a kernel's shape, kept apart from the algorithm (the templates)
and from reading the spec (spec.py), as CUB keeps its tuning policies apart from its agents.

A shape is what generation resolves for one instance: threads a block, items a thread, how a
lane's items travel (16-byte words, staged through shared memory or resident there), the
occupancy asked of the compiler, and when to launch with programmatic dependent launch (PDL).
This module is the logic; the measured numbers it reads are the tables of tables.py (each row
with the results file that chose it; the experiments: bench/notes/tuning.md), re-exported here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from .model import Heads, Primitive

# tables.py's tables, read here; these and the `as` ones below are what other modules read as tuning.X
from .tables import ARCHS as ARCHS
from .tables import (
    BY_BLOCK_MIN_TILES,
    EARLY_MIN_TILES,
    MATMUL_DEFAULTS,
    MATMUL_SMALL,
    ORDERED_PDL_MAX_BYTES,
    PDL_MAX_BYTES,
    REDUCE_FOLD_APART,
    SCAN_SIZE_SHAPES,
    SEGMENT_ONE_LAUNCH_TOTALS,
    SEGMENT_PDL_MAX_BYTES,
    SEGMENT_REGS_BEFORE_80,
    SEGMENT_SIZE_SHAPES,
    SEGMENT_SPAN_BLOCK,
    SEGMENT_SPAN_BLOCKS,
    SEGMENT_SPAN_BYTES,
    SEGMENT_SPAN_CHUNK_BYTES,
    SEGMENT_SPAN_LANES,
    SEGMENT_SPAN_LONG,
    SEGMENT_SPAN_MAX_N,
    SEGMENT_SPAN_MIN_AVG,
    SEGMENT_SPAN_PDL_MIN_N,
    SEGMENT_SPAN_PREFETCH_BLOCKS,
    SEGMENT_SPAN_PREFETCH_BYTES,
    SEGMENT_SPAN_SHIFTS,
    SEGMENT_SPAN_SPLIT_BLOCK,
    SEGMENT_SPAN_SPLIT_GRID,
    SEGMENT_SPAN_SPLIT_N,
    SEGMENT_SPAN_WAIT_N,
    SEGSCAN_SIZE_SHAPES,
    TARGET,
    TRANSPOSE_DEFAULTS,
    TRANSPOSE_ROWS,
    MatmulTile,
    SpanBlock,
    SpanLanes,
    SpanShift,
)
from .tables import Arch as Arch
from .tables import SizeShape as SizeShape
from .tables import SpanWait as SpanWait

if TYPE_CHECKING:
    from .ctypes_ import CType
    from .operators import Operator
    from .spec import Instance

# limits the shapes are fitted to (not measured choices: those are tables.py's)
DEFAULT_BLOCK = 256
MAX_ITEMS = 64  # items a thread, at most
MAX_TILE_BYTES = 1024  # items x size a thread holds in registers at once
SEGMENT_TILE_BYTES = 40 * 1024  # shared memory a segmented reduce's tile of folds and head marks may take
STAGE_LIMIT = 44 * 1024  # static shared memory a scan block may spend on staging (48 KB in all)
REDUCE_STAGE_LIMIT = 24 * 1024  # a reduce block's staging: 8 blocks an SM still fit
MAX_GRID = 2048  # bound on a reduce's blocks a launch (its workspace is sized from it)
# Every workspace starts with a header of SLOT0 32-bit words: word 0 is the ticket counter of the
# functions that keep one, zero between calls. A reduce's blocks' slots and a scan's look-back
# slots start after it, and functions that leave data in the workspace (rows, columns, split k,
# across ranks) leave it past it, so no call finds another's data in a counter
SLOT0 = 64
WARP_STEPS = (1, 2, 4, 8, 16)  # shuffle distances of a warp's fold or scan


# ---- architectures: the occupancy asked of the compiler, by __CUDA_ARCH__

ByArch = tuple[tuple[int, int], ...]  # ((lowest __CUDA_ARCH__ of a run of architectures, value), ...)
# the occupancy asked of the compiler: ((lowest __CUDA_ARCH__ of a run, resident blocks an SM, a cap
# on a thread's registers in their place, 0 for none), ...)
Bounds = tuple[tuple[int, int, int], ...]
NO_CAP: ByArch = ((0, 0),)  # no register cap, on any architecture
V = TypeVar("V")


def by_arch(rule: Callable[[Arch], V]) -> tuple[tuple[int, V], ...]:
    """`rule` for every architecture of ARCHS, as the generated `#if __CUDA_ARCH__ >=` chain reads
    it: the runs of consecutive architectures that agree, newest first, each by its lowest
    __CUDA_ARCH__ (one entry, and no chain, where all agree).  A newer architecture than the table
    knows takes the newest run's value (and so does the host's compile, which ignores it)."""
    runs: list[tuple[int, V]] = []
    for a in sorted(ARCHS.values(), key=lambda a: a.cuda_arch):
        value = rule(a)
        if not runs or runs[-1][1] != value:
            runs.append((a.cuda_arch, value))
    return tuple(reversed(runs))


def bounds(min_blocks: ByArch, max_regs: ByArch = NO_CAP) -> Bounds:
    """The runs of architectures that agree on both: the minimum blocks an SM, and where
    `max_regs` is not 0, a register cap instead (`__maxnreg__` cannot stand beside
    `__launch_bounds__`); templates/common/launch.cuh.j2 writes them."""
    runs = by_arch(lambda a: (at_arch(min_blocks, a.cuda_arch), at_arch(max_regs, a.cuda_arch)))
    if any(regs for _, (_, regs) in runs[:-1]) or len(runs) == 1 and runs[0][1][1]:
        raise ValueError("a register cap is for the oldest architectures only, and never all")
    return tuple((at, blocks, regs) for at, (blocks, regs) in runs)


def fit_blocks(arch: Arch, block: int, asked: int) -> int:
    """`asked` resident blocks of `block` threads an SM, but no more than `arch`'s SM holds."""
    return min(asked, arch.blocks_per_sm, arch.threads_per_sm // block)


def smem_from(arch: Arch) -> int:
    """The most shared memory an SM holds of `arch` or of any later architecture: its PTX is
    JIT-compiled there, so blocks asked by shared memory follow the largest SM that runs them
    (where `arch`'s own SM holds fewer, only the registers asked are fewer)."""
    return max(a.smem_per_sm for a in ARCHS.values() if a.cuda_arch >= arch.cuda_arch)


def at_arch(values: ByArch, cuda_arch: int) -> int:
    """A by_arch table's value for one __CUDA_ARCH__, as the generated #if chain reads it."""
    return next((v for at, v in values if at <= cuda_arch), values[-1][1])


def at_target(values: ByArch) -> int:
    """The value for TARGET (the architecture the shapes are chosen for) of a by_arch table."""
    return at_arch(values, TARGET.cuda_arch)


# ---- tiles: what a thread holds


def stage_chunks(words: int) -> int:
    """16-byte chunks of shared memory a warp stages `words` 16-byte words a lane in: an odd count
    puts a quarter warp's 16-byte accesses on distinct banks as it is; an even one needs one pad
    chunk in eight."""
    return 32 * words if words % 2 else 36 * words


def words16(items: int, size: int) -> int:
    """16-byte words a lane's run of `items` elements of `size` bytes spans, or 0 if not whole."""
    return items * size // 16 if (items * size) % 16 == 0 else 0


def resident_tile(prim: str, op: Operator, block: int, items: int) -> bool:
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


def _held_type(inst: Instance) -> CType:
    """The type whose size sizes a thread's tile: a reduce's input; a scan's accumulator, or the
    key where that is wider (keys ride along)."""
    if inst.primitive == Primitive.REDUCE:
        return inst.op.in_type
    index = inst.index
    if inst.heads == Heads.KEYS and index is not None and index.size > inst.op.acc_type.size:
        return index
    return inst.op.acc_type


def _items_for(ty: CType, thread_bytes: int) -> int:
    return max(1, min(thread_bytes // 4, thread_bytes // ty.size))


def items_problem(inst: Instance, items: int) -> str:
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


def default_items(inst: Instance) -> int:
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
        if inst.op.inputs and inst.primitive in (Primitive.SCAN, Primitive.EXSCAN) and ty.size <= 8:
            # several inputs keep the tile in registers: 16 items a thread, 128 bytes of 8-byte maps
            # (h200-2026-12-01-inputs-shapes.txt: 0.58 -> 0.70 of copy; 8, 12 and 4 and 5 blocks
            # an SM slower), as 4-byte accumulators already had (32 were 0.54x of 16)
            items = 16
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
    min_blocks: int  # resident blocks an SM asked of the compiler (TARGET's)
    pdl_max_bytes: int  # launches with PDL up to this many input bytes
    fold_apart: bool  # captured into a graph, a fold kernel folds the blocks' totals (no ticket)
    min_blocks_by_arch: ByArch = ()  # ... by architecture (by_arch)
    run: int = 0  # striped, several inputs: a lane's runs of this many elements (narrower inputs in whole words)


def reduce_shape(inst: Instance) -> ReduceShape:
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
    # (the spec's blocks_per_sm, or the host's cap where the SM holds fewer)
    min_blocks = by_arch(
        lambda a: fit_blocks(a, inst.block, inst.blocks_per_sm or max(1, a.threads_per_sm // 2 // inst.block))
    )
    # PDL on small inputs, where the launch is a large part of the call: the commutative reduce
    # lets the next kernel in at its start, the ordered one once its blocks have folded their runs
    # (bench/notes/tuning.md, "Programmatic dependent launch")
    pdl_max = PDL_MAX_BYTES if striped else ORDERED_PDL_MAX_BYTES
    run = _narrow_run(op.in_types, size, vec) if striped and op.inputs else 0
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
        at_target(min_blocks),
        pdl_max,
        REDUCE_FOLD_APART,
        min_blocks,
        run,
    )


def _narrow_run(types: tuple, size: int, words: int) -> int:
    """Elements a lane's run on the striped path of several inputs where some are narrower than the
    widest (`size` bytes, `words` 16-byte words a lane a step): the fewest whole 16-byte words of
    the widest in which every narrower input spans whole 4-byte words, loaded as such rather than
    element by element (the masked sum's u8 mask beside f64: 1.015x CUB against 0.996x,
    h200-2026-12-01-inputs-protos.txt); 0 where none is narrower or the step holds no whole runs."""
    narrow = [t.size for t in types if t.size < size]
    if not narrow or not words:
        return 0
    run = 16 // size
    while any(run * s % 4 for s in narrow):
        run *= 2
    return run if words % (run * size // 16) == 0 else 0


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
    lanes: tuple[SpanLanes, ...]  # a group of lanes a segment, by largest average
    blocks: tuple[SpanBlock, ...]  # past the lanes, a block a segment (each with its limits, 0: none)
    max_n: int
    shifts: tuple[SpanShift, ...]  # up to n, the average counts 2^shift times
    long_rounds: int
    min_blocks: int  # a group kernel's resident blocks an SM asked of the compiler (0: its choice; TARGET's)
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
    min_blocks_by_arch: ByArch = ()  # min_blocks by architecture (by_arch)
    max_regs_by_arch: ByArch = NO_CAP  # a cap on registers in its place, by architecture (0: none)

    def long(self, lanes: int) -> int:
        """Elements past which a group of `lanes` lanes leaves its segment to the block."""
        return self.long_rounds * self.unroll * lanes * self.vec

    @property
    def picks(self) -> tuple[SpanPick, ...]:
        """The host's table in the order it is searched: by average, an entry with either limit
        before one without at the same average (it is passed over past its limits)."""
        lanes = [SpanPick(e.most, f"lanes{e.lanes}", self.block, self.block // e.lanes) for e in self.lanes]
        blocks = [SpanPick(e.most, f"block{e.threads}", e.threads, 1, e.max_n, e.max_segments) for e in self.blocks]
        return tuple(sorted(lanes + blocks, key=lambda e: (e.most, not (e.max_n or e.max_segments))))

    @property
    def limits(self) -> tuple[tuple[str, str], ...]:
        """The host's tests of an entry's limits, for the fields some entry uses: ((field, what it
        bounds), ...)."""
        used = (
            ("upto", "n", any(e.max_n for e in self.blocks)),
            ("segments", "n_segments", any(e.max_segments for e in self.blocks)),
        )
        return tuple((f, v) for f, v, some in used if some)

    @property
    def block_threads(self) -> tuple[int, ...]:
        """The block kernels' sizes, one kernel each."""
        return tuple(sorted({e.threads for e in self.blocks}))


class SpanPick(NamedTuple):
    """An entry of the host's table of span kernels (SegmentSpans.picks)."""

    most: int  # largest average
    kernel: str  # the kernel's suffix: "lanes32", "block128", ...
    threads: int  # threads a block
    per_block: int  # segments a block
    max_n: int = 0  # largest n (0: any)
    max_segments: int = 0  # largest number of segments (0: any)


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
    seg_spans: SegmentSpans | None = None  # segments by offsets: a group or a block a segment, by average length
    by_block_min: int = 0  # a one-pass scan: tiles in blockIdx order from this many (where all fit at once)
    early_min: int = 0  # ... and from this many, blockIdx order with the tiles loaded early (0: never)
    min_blocks_by_arch: ByArch = ()  # min_blocks by architecture (by_arch; TARGET's is min_blocks)
    max_regs_by_arch: ByArch = NO_CAP  # a cap on registers in its place, by architecture (0: none)

    @property
    def tile(self) -> int:
        """Elements a tile (a block's share of the input)."""
        return self.block * self.items


def scan_shape(inst: Instance) -> ScanShape:
    """A scan tile: lane-blocked items, staged through shared memory where 16-byte words fit."""
    op, ipt, warps = inst.op, inst.items, inst.block // 32
    vin = words16(ipt, op.in_type.size)
    vout = words16(ipt, op.out_type.size) if inst.per_element else 0
    vflag = words16(ipt, 1) if inst.heads == Heads.FLAGS else 0
    vkey = words16(ipt, inst.index.size) if inst.heads == Heads.KEYS and inst.index else 0
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
    min_blocks = by_arch(lambda a: _scan_min_blocks(inst, resident, stage, a))
    pad = stage != 32 * vin
    # a warp's run of results, laid out in shared memory as in global memory (no pad), is stored
    # by one bulk copy (TMA, sm_90); not for accumulators wider than 8 bytes, which spilled
    # (h100-2026-11-23-ab-bulk2.txt); a segmented reduce by offsets stores no tile
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
        at_target(min_blocks),
        # programmatic dependent launch; for segments by offsets only on small inputs
        pdl=True,
        pdl_max_bytes=SEGMENT_PDL_MAX_BYTES if inst.heads == Heads.OFFSETS else 0,
        one_launch_totals=SEGMENT_ONE_LAUNCH_TOTALS if resident and inst.heads == Heads.OFFSETS else 0,
        seg_spans=segment_spans(op) if inst.heads == Heads.OFFSETS else None,
        by_block_min=BY_BLOCK_MIN_TILES,
        early_min=min(EARLY_MIN_TILES, BY_BLOCK_MIN_TILES) if resident and inst.heads != Heads.OFFSETS else 0,
        min_blocks_by_arch=min_blocks,
        max_regs_by_arch=segment_max_regs(op, inst.block, min_blocks) if inst.heads == Heads.OFFSETS else NO_CAP,
    )


def _scan_min_blocks(inst: Instance, resident: bool, stage: int, arch: Arch) -> int:
    """Resident blocks an SM of `arch` to ask of the compiler for a scan tile (0: its choice)."""
    warps, acc = inst.block // 32, inst.tile_op.acc_type
    if inst.blocks_per_sm:  # the spec's (or a tuning file's), where the SM holds that many
        return fit_blocks(arch, inst.block, inst.blocks_per_sm)
    if resident:
        # as many blocks as shared memory holds (1 KB a block is the system's), leaving each thread
        # registers for a few accumulators, and keyed or by offsets for its keys or 64-bit bounds
        smem = warps * stage * 16 + 2 * warps * acc.size + 64
        regs = 24 + 4 * acc.words + (8 if inst.heads in (Heads.KEYS, Heads.OFFSETS) else 0)
        held = arch.smem_per_sm
        if not inst.heads and arch.threads_per_sm >= TARGET.threads_per_sm:
            # its PTX runs on later SMs too: blocks by the largest's shared memory; and without bulk
            # copies (before sm_90) a thread holds more (2x2 matrices took 56 registers, not 40).
            # Not for segmented tiles, nor SMs of fewer threads (sm_75, sm_86): those spilled so
            held = smem_from(arch)
            regs += 2 * acc.words if arch.cuda_arch < 900 else 0
        return min(
            fit_blocks(arch, inst.block, arch.blocks_per_sm),
            held // (smem + 1024),
            arch.regs_per_sm // (inst.block * regs),
        )
    if acc.words > 2:  # wide totals would spill under a register cap: the compiler chooses
        return 0
    # narrow totals: 3/4 of the SM's threads (hides the look-back's latency), but no more blocks
    # than leave a thread registers for its items and their head bits past 24 of its own
    held = 24 + inst.items * (acc.words + (1 if inst.heads else 0))
    min_blocks = fit_blocks(arch, inst.block, arch.threads_per_sm * 3 // 4 // inst.block)
    return max(1, min(min_blocks, arch.regs_per_sm // (inst.block * held)))


def segment_max_regs(op: Operator, block: int, min_blocks: ByArch) -> ByArch:
    """A segmented reduce by offsets' register cap by architecture, for a kernel of `block`
    threads asking `min_blocks`: below sm_80, where one was measured for its accumulator, what
    TARGET's ask leaves a thread (never less than the measured floor) in place of that
    architecture's fewer blocks, whose budget a newer GPU's JIT of the PTX would spend; 0 (none)
    where that is no fewer registers than its own blocks leave."""

    def budget(arch: Arch) -> int:
        blocks = at_arch(min_blocks, arch.cuda_arch)
        return arch.regs_per_sm // (block * blocks) // 8 * 8 if blocks else 255

    floor = SEGMENT_REGS_BEFORE_80.get(op.acc_type.words, 0)
    cap = max(floor, budget(TARGET))
    return by_arch(lambda a: cap if floor and a.cuda_arch < 800 and cap < budget(a) else 0)


def segment_spans(op: Operator) -> SegmentSpans | None:
    """The spans form of a segmented reduce by offsets of `op` (None for operators of several
    inputs: their tiles only)."""
    if op.inputs:
        return None
    size = op.in_type.size
    vec = 16 // size if size in (1, 2, 4, 8) else 1
    unroll = max(1, min(8, SEGMENT_SPAN_BYTES // (vec * size)))
    _check_span_tables()
    # a full SM for 4-byte accumulators: left to itself, ptxas took 38 registers (6 blocks an
    # SM), and with a cap of 32 it spills nothing; 8-byte ones spill 8-16 bytes at 32, so 6
    most = {1: 64, 2: 6}.get(op.acc_type.words, 0)
    min_blocks = by_arch(lambda a: fit_blocks(a, SEGMENT_SPAN_BLOCK, most))
    # a power of two, and never shorter than what a group leaves to its block (a longer segment a
    # group folded would go unmarked); 128 KiB of elements where that is longer
    longest = SEGMENT_SPAN_LONG * unroll * SEGMENT_SPAN_LANES[-1].lanes * vec
    chunk = 1 << max((SEGMENT_SPAN_CHUNK_BYTES // size).bit_length() - 1, (longest - 1).bit_length())
    return SegmentSpans(
        vec,
        unroll,
        SEGMENT_SPAN_LANES,
        SEGMENT_SPAN_BLOCKS,
        max_n=SEGMENT_SPAN_MAX_N,
        shifts=SEGMENT_SPAN_SHIFTS,
        long_rounds=SEGMENT_SPAN_LONG,
        min_blocks=at_target(min_blocks),
        block=SEGMENT_SPAN_BLOCK,
        split_n=SEGMENT_SPAN_SPLIT_N,
        chunk=chunk,
        split_block=SEGMENT_SPAN_SPLIT_BLOCK,
        split_grid=SEGMENT_SPAN_SPLIT_GRID,
        min_avg=SEGMENT_SPAN_MIN_AVG,
        pdl_min_n=SEGMENT_SPAN_PDL_MIN_N,
        prefetch_n=SEGMENT_SPAN_PREFETCH_BYTES // size,
        prefetch_blocks=SEGMENT_SPAN_PREFETCH_BLOCKS,
        wait_n=SEGMENT_SPAN_WAIT_N.groups,
        block_wait_n=SEGMENT_SPAN_WAIT_N.blocks,
        min_blocks_by_arch=min_blocks,
        max_regs_by_arch=segment_max_regs(op, SEGMENT_SPAN_BLOCK, min_blocks),
    )


def _check_span_tables() -> None:
    """The entries without limits ascend by average, the blocks' past the lanes', and the last
    block entry, the largest average, has no limits (it takes what is left at any n)."""
    last = SEGMENT_SPAN_BLOCKS[-1]
    bounds = [e.most for e in SEGMENT_SPAN_LANES] + [e.most for e in SEGMENT_SPAN_BLOCKS if not _limited(e)]
    assert bounds == sorted(bounds) and not _limited(last), "SEGMENT_SPAN tables"
    assert last.most == max(e.most for e in SEGMENT_SPAN_BLOCKS), "SEGMENT_SPAN tables"


def _limited(e: SpanBlock) -> bool:
    """Whether a block entry is passed over past a largest n or number of segments."""
    return bool(e.max_n or e.max_segments)


# ---- shapes by size: where a scan's default tile leaves the GPU short of work


class TunedShape(NamedTuple):
    """A shape a tuning file gives an instance (tunefile.read): up to `upto` elements (None: every
    larger n), blocks of `block` threads by `items` items, `blocks_per_sm` asked (0: chosen here)."""

    upto: int | None
    block: int
    items: int
    blocks_per_sm: int = 0


def size_shapes(inst: Instance) -> list[tuple[int | None, Instance]]:
    """[(largest n or None for the rest, Instance)]: the shapes of `inst` by the size of its input,
    or [] where it keeps one shape (its shape given by the spec, or a form not measured here)."""
    if not getattr(inst, "sized", False):  # a shape the spec gave, or another family
        return []
    if inst.shapes:  # measured on the user's GPU (a tuning file); one shape: the instance's own
        if len(inst.shapes) == 1:
            return []
        base = replace(inst, shapes=())
        return [
            (s.upto, replace(base, block=s.block, items=s.items, blocks_per_sm=s.blocks_per_sm)) for s in inst.shapes
        ]
    op = inst.op
    if op.inputs or not op.in_type.size == op.acc_type.size == op.out_type.size == 4:
        return []
    table = {  # read at each call: a test may put other tables in this module
        Primitive.SCAN: SCAN_SIZE_SHAPES,
        Primitive.EXSCAN: SCAN_SIZE_SHAPES,
        Primitive.SEGREDUCE: SEGMENT_SIZE_SHAPES,
        Primitive.SEGSCAN: SEGSCAN_SIZE_SHAPES,
        Primitive.EXSEGSCAN: SEGSCAN_SIZE_SHAPES,
    }.get(inst.primitive)
    if table is None:
        return []
    out: list[tuple[int | None, Instance]] = [(s.upto, replace(inst, block=s.block, items=s.items)) for s in table]
    return out + [(None, inst)]


# ---- candidates for `assocgen tune`: the shapes measured on the user's GPU

TUNE_BLOCKS = (128, 256, 512, 1024)
# bytes a thread's tile holds (of the held type: tiles.  _held_type): a reduce's in flight a step,
# a scan's whole tile (in registers, or resident in shared memory up to 144)
TUNE_THREAD_BYTES = {"reduce": (16, 32, 64, 128), "scan": (32, 64, 96, 128, 144)}


def tune_candidates(inst: Instance, arch: Arch = TARGET) -> list[Instance]:
    """The shapes `assocgen tune` measures for `inst`: the built-in ones first (each shape of
    size_shapes, or the instance's own), then blocks of TUNE_BLOCKS threads by tiles of
    TUNE_THREAD_BYTES bytes a thread, and the large-n shape asking the compiler for full occupancy
    of `arch`'s SM (the GPU's).
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
    out.append(replace(base, blocks_per_sm=fit_blocks(arch, base.block, arch.blocks_per_sm)))
    seen, kept = set(), []
    for k, s in enumerate(out):
        key = (s.block, s.items, s.blocks_per_sm)
        if key not in seen and not items_problem(s, s.items) and (k < builtin or not _unstaged(s)):
            seen.add(key)
            kept.append(s)
    return kept


def _unstaged(inst: Instance) -> bool:
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
TRANSPOSE_REMEDIES = ("pad", "swizzle", "none")


class ShapeError(ValueError):
    """A shape that cannot be made: the spec key to blame and the problem."""

    def __init__(self, key: str, problem: str) -> None:
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
    third of its bandwidth (bench/notes/transpose.md).  Where `skew` > 0, the tile holds `skew` rows more
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


def _transpose_units(size: int) -> tuple[int, int, int]:
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
    tile, rows = _transpose_tile(size, tile, rows, remedy)
    groups = tile // per_word
    rows = rows or min(TRANSPOSE_ROWS, groups)
    if rows & (rows - 1) or not 1 <= rows <= 32:
        raise ShapeError("rows", f"{rows} is not a power of two in 1..32 (warps a block)")
    if rows > groups:
        what = "words" if per_word > 1 else "elements"
        raise ShapeError("rows", f"{rows} is more than the tile's {groups} rows of {what}")
    row_units = tile * per_elem // per_word if per_word > 1 else tile * per_elem
    words = unit == 1 and row_units % 4 == 0
    swizzle_rows, stride = _transpose_stride(size, tile, remedy, row_units, words)
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


def _transpose_tile(size: int, tile: int, rows: int, remedy: str) -> tuple[int, int]:
    """(tile, rows) for elements of `size` bytes: those asked (0: the default), checked; rows may
    stay 0 (transpose_shape's default)."""
    unit, per_word, per_elem = _transpose_units(size)
    default = next((d for d in TRANSPOSE_DEFAULTS if d.size == size), None)
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
    elif not tile and default:
        tile = default.tile
        rows = rows or default.rows
    elif not tile:
        tile = 32
        while tile > 1 and tile * (tile * per_elem + 32) * unit > TRANSPOSE_SMEM_LIMIT:
            tile //= 2
    if tile & (tile - 1) or not 1 <= tile <= 128:
        raise ShapeError("tile", f"{tile} is not a power of two in 1..128")
    return tile, rows


def _transpose_stride(size: int, tile: int, remedy: str, row_units: int, words: bool) -> tuple[int, int]:
    """(swizzle_rows, stride): the rows of the XOR pattern and the units from one tile row to the
    next in shared memory, by the bank remedy."""
    unit, _, per_elem = _transpose_units(size)
    if remedy == "swizzle":
        if unit != 4 or 32 % per_elem or row_units % 32:
            raise ShapeError(
                "remedy",
                f"an XOR swizzle needs rows of whole 32-word lines and elements of 4, 8, 16, ... 128 bytes "
                f"(or 1 and 2): {size} bytes in tiles of {tile} is not one: use remedy = 'pad'",
            )
        return 32 // per_elem, row_units
    if remedy == "pad" and words:
        # a byte tile moved as words: rows an odd number of words apart, so that the words of
        # 32 successive rows fall on distinct banks
        return 0, 4 * (row_units // 4 | 1)
    if remedy == "pad":
        # one element's units more a row (the seeds' TILE_DIM + 1): the rows of a column then start
        # on successive banks; with words, rows `per_elem` words apart mod 32
        return 0, row_units + ((per_elem - row_units) % 32 if unit == 4 else per_elem)
    return 0, row_units


# ----------------------------------------------------------------------------------------------
# the tiled matrix multiply over a semiring


@dataclass(frozen=True)
class MatmulShape:
    """A block computes a bm x bn tile of C, stepping k by bk through tiles of A (bm x bk) and B
    (bk x bn) in shared memory; each warp a wm x wn part of it, and each thread tm x tn elements
    of C, from tm of A's and tn of B's a step.  The tiles travel one of two ways (`pipeline`):
    "registers", global memory to registers to shared memory, two tiles of each (the next step's
    loads in flight while this one's products run); or "async", cp.async straight to shared
    memory (sm_80+), `stages` tiles of each, stages - 1 steps' copies in flight; built for an
    older GPU, an async shape runs the registers pipeline in two of them."""

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

    def registers(self) -> MatmulShape:
        """The same tiles on the registers pipeline: what an async shape runs before sm_80, where
        there is no cp.async (two of its stages' tiles used)"""
        return replace(self, pipeline="registers", stages=2)

    def tile_io(self, operand: str, layout: str) -> MatmulTileIO:
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


PIPELINES = ("registers", "async")
ASYNC_SIZES = (4, 8, 16)  # bytes cp.async copies at once


def _default_warp(bm: int, bn: int, tm: int, tn: int) -> tuple[int, int]:
    """A warp's part of the tile, where the spec leaves it out: a row of lanes along n as wide as
    the tile (32 lanes at most), as many such rows as make 32 lanes"""
    across = min(bn // tn, 32)
    return (tm * 32 // across, tn * across)


def matmul_default(size: int, witness: bool) -> MatmulTile:
    """The built-in tile for C's elements of `size` bytes (MATMUL_DEFAULTS, else MATMUL_SMALL)."""
    row = next((d for d in MATMUL_DEFAULTS if d.size == size and d.witness == witness), None)
    return row.tile if row else MATMUL_SMALL


def matmul_shape(
    size: int,
    witness: bool = False,
    block: Sequence[int] = (),
    thread: Sequence[int] = (),
    warp: Sequence[int] = (),
    pipeline: str | None = None,
    stages: int | None = None,
    operands: tuple[int, int] | None = None,
    structs: bool = False,
) -> MatmulShape:
    """The shape for C elements of `size` bytes (A's and B's: `operands`, else the same); `block`
    (m, n, k), `thread` (m, n), `warp` (m, n), `pipeline` and `stages` override the default.
    `structs`: A or B is a struct type, whose alignment may be less than its size.
    Raises ShapeError when the asked shape cannot be made."""
    bm, bn, bk, tm, tn = matmul_default(size, witness)
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
    wm, wn = _matmul_warp(bm, bn, tm, tn, warp)
    pipeline, stages = _matmul_pipeline(pipeline, stages, a_size, b_size, structs)
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


def _matmul_warp(bm: int, bn: int, tm: int, tn: int, warp: Sequence[int]) -> tuple[int, int]:
    """A warp's wm x wn part of the block's tile: `warp` checked, or the default."""
    if not warp:
        return _default_warp(bm, bn, tm, tn)
    wm, wn = warp
    for v in warp:
        if v < 1 or v & (v - 1):
            raise ShapeError("warp", f"{v} is not a power of two")
    if (wm // tm) * (wn // tn) != 32 or wm % tm or wn % tn:
        raise ShapeError("warp", f"{wm} x {wn} by threads of {tm} x {tn} is not 32 lanes")
    if bm % wm or bn % wn:
        raise ShapeError("warp", f"a warp's {wm} x {wn} does not divide the block's {bm} x {bn}")
    return wm, wn


def _matmul_pipeline(
    pipeline: str | None, stages: int | None, a_size: int, b_size: int, structs: bool
) -> tuple[str, int]:
    """(pipeline, stages): those asked (None: registers, 2 stages), checked against the operands."""
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
    return pipeline, stages


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

    # Scans along long rows that are few: a block a row (a block scan a round, ROUND_NS each) or
    # the whole GPU in one launch (LINE_NS plus the bytes read and written at COPY_BYTES_PER_NS);
    # the host picks the faster by this model of the H100 (bench/rows; bench/notes/tuning.md)
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
