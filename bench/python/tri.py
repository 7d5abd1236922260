# mypy: disallow-untyped-defs=False, disallow-incomplete-defs=False
# (the @triton.jit kernels take no Python annotations: Triton reads them as its own types)
"""The Triton column: kernels a Triton user would write for the rows.  The affine-map scan in three
kernels (each block's tl.associative_scan and total, a scan of the totals, each block's prefix
applied), the batched recurrence as one program a row carrying its prefix across chunks, and the
sum of squares and argmax as tl.reduce in persistent programs, then one program over their
partial results.  Imported only when Triton is."""

from typing import Any

import torch
import triton
import triton.language as tl

BLOCK = 1024  # elements a scan block (a chunk of a row in the recurrence)
RBLOCK = 2048  # elements a reduce program reads a step


@triton.jit
def _compose(a0, b0, a1, b1):
    """Affine maps in order: (x -> a0 x + b0) then (x -> a1 x + b1)."""
    return a1 * a0, a1 * b0 + b1


@triton.jit
def _load_maps(p, offs, n):
    mask = offs < n
    a = tl.load(p + 2 * offs, mask=mask, other=1.0)
    b = tl.load(p + 2 * offs + 1, mask=mask, other=0.0)
    return a, b


@triton.jit
def _block_scan(x, y, totals, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a, b = _load_maps(x, offs, n)
    sa, sb = tl.associative_scan((a, b), 0, _compose)
    tl.store(y + 2 * offs, sa, mask=offs < n)
    tl.store(y + 2 * offs + 1, sb, mask=offs < n)
    # the block's total: the scan's last lane (tl.reduce of these maps gave a wrong total on the
    # H100: it does not keep their order); masked lanes hold the identity, so BLOCK - 1 serves
    last = tl.arange(0, BLOCK) == BLOCK - 1
    tl.store(totals + 2 * tl.program_id(0), tl.sum(tl.where(last, sa, 0.0), 0))
    tl.store(totals + 2 * tl.program_id(0) + 1, tl.sum(tl.where(last, sb, 0.0), 0))


@triton.jit
def _totals_scan(totals, m, BLOCK: tl.constexpr):
    """One program: the inclusive scan of m block totals in place, chunk by chunk."""
    ca = tl.full([BLOCK], 1.0, tl.float32)  # the prefix so far, in every lane
    cb = tl.zeros([BLOCK], tl.float32)
    for start in range(0, m, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        a, b = _load_maps(totals, offs, m)
        sa, sb = tl.associative_scan((a, b), 0, _compose)
        ra, rb = sa * ca, sa * cb + sb
        tl.store(totals + 2 * offs, ra, mask=offs < m)
        tl.store(totals + 2 * offs + 1, rb, mask=offs < m)
        last = tl.arange(0, BLOCK) == BLOCK - 1
        ca = tl.zeros([BLOCK], tl.float32) + tl.sum(tl.where(last, ra, 0.0), 0)
        cb = tl.zeros([BLOCK], tl.float32) + tl.sum(tl.where(last, rb, 0.0), 0)


@triton.jit
def _apply_prefix(y, totals, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0) + 1  # block 0 has no prefix
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    pa = tl.load(totals + 2 * (pid - 1))
    pb = tl.load(totals + 2 * (pid - 1) + 1)
    a, b = _load_maps(y, offs, n)
    tl.store(y + 2 * offs, a * pa, mask=offs < n)
    tl.store(y + 2 * offs + 1, a * pb + b, mask=offs < n)


def affine_scan(x: torch.Tensor, y: torch.Tensor, totals: torch.Tensor) -> torch.Tensor:
    """The inclusive scan of (n, 2) float32 maps x into y; totals: (blocks, 2) float32."""
    n = x.shape[0]
    blocks = triton.cdiv(n, BLOCK)
    _block_scan[(blocks,)](x, y, totals, n, BLOCK=BLOCK)
    if blocks > 1:
        _totals_scan[(1,)](totals, blocks, BLOCK=BLOCK)
        _apply_prefix[(blocks - 1,)](y, totals, n, BLOCK=BLOCK)
    return y


@triton.jit
def _rows_scan(x, y, cols, BLOCK: tl.constexpr):
    """One program a row of (rows, cols) maps: chunks scanned in turn, the prefix carried."""
    row = tl.program_id(0).to(tl.int64) * cols
    ca = tl.full([BLOCK], 1.0, tl.float32)  # the prefix so far, in every lane
    cb = tl.zeros([BLOCK], tl.float32)
    for start in range(0, cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        a, b = _load_maps(x + 2 * row, offs, cols)
        sa, sb = tl.associative_scan((a, b), 0, _compose)
        ra, rb = sa * ca, sa * cb + sb
        tl.store(y + 2 * row + 2 * offs, ra, mask=offs < cols)
        tl.store(y + 2 * row + 2 * offs + 1, rb, mask=offs < cols)
        last = offs == tl.minimum(start + BLOCK, cols) - 1
        ca = tl.zeros([BLOCK], tl.float32) + tl.sum(tl.where(last, ra, 0.0), 0)
        cb = tl.zeros([BLOCK], tl.float32) + tl.sum(tl.where(last, rb, 0.0), 0)


def rows_scan(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The inclusive scan of each row of (rows, cols, 2) float32 maps x into y."""
    _rows_scan[(x.shape[0],)](x, y, x.shape[1], BLOCK=BLOCK)
    return y


@triton.jit
def _sumsq_part(x, part, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(tl.program_id(0) * BLOCK, n, tl.num_programs(0) * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        v = tl.load(x + offs, mask=offs < n, other=0.0)
        acc += v * v
    tl.store(part + tl.program_id(0), tl.sum(acc, 0))


@triton.jit
def _sum_final(part, out, m, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out, tl.sum(tl.load(part + offs, mask=offs < m, other=0.0), 0))


def programs() -> int:
    return 4 * torch.cuda.get_device_properties(0).multi_processor_count


def sumsq(x: torch.Tensor, part: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """The sum of x * x: part has programs() float32, out one."""
    m = part.shape[0]
    _sumsq_part[(m,)](x, part, x.shape[0], BLOCK=RBLOCK)
    _sum_final[(1,)](part, out, m, BLOCK=triton.next_power_of_2(m))
    return out


@triton.jit
def _argmax_pair(v0, i0, v1, i1):
    """The larger value; the lower index among equals."""
    take = (v1 > v0) | ((v1 == v0) & (i1 < i0))
    return tl.where(take, v1, v0), tl.where(take, i1, i0)


@triton.jit
def _argmax_part(x, pv, pi, n, BLOCK: tl.constexpr):
    best = tl.full([BLOCK], float("-inf"), tl.float32)
    where = tl.zeros([BLOCK], tl.int64)
    for start in range(tl.program_id(0) * BLOCK, n, tl.num_programs(0) * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        v = tl.load(x + offs, mask=offs < n, other=float("-inf"))
        take = v > best  # later positions of a lane only where strictly larger: its first index
        best = tl.where(take, v, best)
        where = tl.where(take, offs.to(tl.int64), where)
    bv, bi = tl.reduce((best, where), 0, _argmax_pair)
    tl.store(pv + tl.program_id(0), bv)
    tl.store(pi + tl.program_id(0), bi)


@triton.jit
def _argmax_final(pv, pi, out, m, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(pv + offs, mask=offs < m, other=float("-inf"))
    i = tl.load(pi + offs, mask=offs < m, other=0)
    bv, bi = tl.reduce((v, i), 0, _argmax_pair)
    tl.store(out, bi)


def argmax(x: torch.Tensor, pv: torch.Tensor, pi: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """The first index of the largest x: pv, pi have programs() float32 / int64, out one int64."""
    m = pv.shape[0]
    _argmax_part[(m,)](x, pv, pi, x.shape[0], BLOCK=RBLOCK)
    _argmax_final[(1,)](pv, pi, out, m, BLOCK=triton.next_power_of_2(m))
    return out


def scratch(n: int, device: Any) -> dict[str, torch.Tensor]:
    """The buffers the kernels above write besides their output, made once a row."""
    m = programs()
    return {
        "totals": torch.empty(triton.cdiv(n, BLOCK), 2, device=device),
        "part": torch.empty(m, device=device),
        "pv": torch.empty(m, device=device),
        "pi": torch.empty(m, dtype=torch.int64, device=device),
        "one_f": torch.empty(1, device=device),
        "one_i": torch.empty(1, dtype=torch.int64, device=device),
    }
