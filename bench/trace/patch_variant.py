"""Make an experimental copy of a generated scan with a resident, unpadded tile, or of a generated
reduce (bench/trace/ab.sh): its public functions renamed to ab_NAME, and one or more changes
applied, named on the command line and joined by '+':
  base       no change
scans:
  ticket     tiles by ticket even where they all fit at once (the generated scan's blockIdx order)
  prefetch   cp.async loads with an L2::256B prefetch hint
  bulkload   a full tile's run loaded by one bulk copy a warp (TMA, completes on an mbarrier)
  nosleep    the look-back polls without __nanosleep
  lanestore  a full tile's run stored by the lanes' 16-byte stores, not one bulk copy a warp
  lanebulk   each lane stores its own words by a bulk copy (no warp sync), not one a warp
reduces (diagnostics: each leaves out part of the blocks' hand-off, so the result is wrong and the
bench reports a mismatch; the time they save is what that part costs):
  notail     no hand-off: every block writes its own total to the result and stops
  relax      the ticket taken with a relaxed atomic (no release fence before it)
  nofold     the last block reads none of the blocks' totals (folds identities)
  seqtail    the ordered reduce's last block loads its slots one at a time, not four (as before)
(Measured on 2026-11-23, bench/results/h100-2026-11-23-ab-bulk.txt, with two more changes
since taken out: stores with the streaming hint, no gain; and the store of a full tile's run by
one bulk copy a warp, 1.4-1.7% faster at 2^28, which the template now does.  On 2026-11-25 a
third, foldk: the totals folded by a second kernel, which the template now does in a graph.)
The reduce changes are meant for the last block's path, which calls made directly take; the
graph columns mix paths (nofold also empties the fold kernel, which shares ag_grid_fold, and
under notail the fold kernel still runs, on slots this call did not write).
Stops with a message if the generated code no longer has the lines a change hooks into.
  python3 bench/trace/patch_variant.py SRC.cu DST.cu NAME CHANGE[+CHANGE...]
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from patch_trace import ticket_order  # noqa: E402


def replace(s, old, new, what):
    if old not in s:
        sys.exit(f"patch_variant: {what}: the generated scan no longer contains {old.strip()[:60]!r}")
    return s.replace(old, new, 1)


def ticket(s):
    return ticket_order(s, "patch_variant")


def prefetch(s):
    return replace(
        s,
        'asm volatile("cp.async.cg.shared.global [%0], [%1], 16;"',
        'asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16;"',
        "prefetch",
    )


FULL_LOAD = """        if (full) {
#pragma unroll
            for (int j = 0; j < RUNW; ++j) {
                const int k = j * 32 + lane;
                ag_copy_async16(&stage[warp][ag_chunk_at(k)], &src[k]);
            }
        }"""

BAR_HELPERS = r"""
/* experiment: a warp's run loaded by one bulk copy, completing on the warp's mbarrier */
static __device__ __forceinline__ void bulk_load(uint4 *smem, const uint4 *gmem, unsigned int bytes, unsigned long long *bar)
{
    const unsigned int b = (unsigned int)__cvta_generic_to_shared(bar);
    const unsigned int d = (unsigned int)__cvta_generic_to_shared(smem);
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(bytes) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 :: "r"(d), "l"(gmem), "r"(bytes), "r"(b) : "memory");
}

static __device__ __forceinline__ void bulk_wait(unsigned long long *bar)
{
    const unsigned int b = (unsigned int)__cvta_generic_to_shared(bar);
    unsigned int done = 0;
    while (!done)
        asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n\tselp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(done) : "r"(b) : "memory");
}

"""


def run_words(s):
    """16-byte words a lane of the tile's runs (unpadded: the stage holds 32 a lane-row)."""
    m = re.search(r"__shared__ uint4 stage\[(\d+)\]\[(\d+)\];", s)
    if not m:
        sys.exit("patch_variant: no stage array")
    if "return k;" not in s.split("ag_chunk_at(int k)")[1][:80]:
        sys.exit("patch_variant: these changes need the unpadded layout (ag_chunk_at(k) == k)")
    return int(m.group(2)) // 32


def add_helpers(s):
    if "bulk_load(" in s:
        return s
    s = replace(
        s,
        "static __device__ __forceinline__ void ag_copy_async_wait(void)",
        BAR_HELPERS + "\nstatic __device__ __forceinline__ void ag_copy_async_wait(void)",
        "helpers",
    )
    m = re.search(r"\n(    __shared__ \S+ warp_totals\[(\d+)\];)", s)
    if not m:
        sys.exit("patch_variant: helpers: no warp_totals array")
    return s.replace(m.group(1), f"    __shared__ unsigned long long run_bar[{m.group(2)}];\n" + m.group(1), 1)


def bulkload(s):
    w = run_words(s)
    s = add_helpers(s)
    s = replace(
        s,
        FULL_LOAD.replace("RUNW", str(w)),
        f"""        if (full) {{
            if (lane == 0)
                bulk_load(stage[warp], src, {w * 512}u, &run_bar[warp]);
            __syncwarp();                      /* the barrier is set up before anyone waits on it */
        }}""",
        "bulkload",
    )
    return replace(
        s,
        """    if (staged) {
        ag_copy_async_wait();
        __syncwarp();
    }""",
        """    if (staged && full) {
        bulk_wait(&run_bar[warp]);
    } else if (staged) {
        ag_copy_async_wait();
        __syncwarp();
    }""",
        "bulkload wait",
    )


def lanestore(s):
    w = run_words(s)
    return replace(
        s,
        "            ag_store_run(dst, stage[warp], lane);\n",
        f"""            __syncwarp();
#pragma unroll
            for (int j = 0; j < {w}; ++j)
                dst[j * 32 + lane] = stage[warp][j * 32 + lane];
""",
        "lanestore",
    )


def lanebulk(s):
    w = run_words(s)
    return replace(
        s,
        "            ag_store_run(dst, stage[warp], lane);\n",
        f"""            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            {{
                const unsigned int from = (unsigned int)__cvta_generic_to_shared(&stage[warp][lane * {w}]);
                asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                             :: "l"(dst + lane * {w}), "r"(from), "r"({w * 16}) : "memory");
                asm volatile("cp.async.bulk.commit_group;\\n\\tcp.async.bulk.wait_group.read 0;" ::: "memory");
            }}
""",
        "lanebulk",
    )


def notail(s):
    return replace(s, "    if (gridDim.x == 1) {", "    if (gridDim.x >= 1) {", "notail")


def relax(s):
    return replace(s, "atom.acq_rel.gpu.global.add.u32", "atom.relaxed.gpu.global.add.u32", "relax")


def nofold(s):
    return replace(s, "    const unsigned int per_thread = (", "    const unsigned int per_thread = 0 * (", "nofold")


def seqtail(s):
    m = re.search(
        r"    /\* four slots' loads in flight at a time, folded in order \*/\n"
        r"    for \(unsigned int b = lo; b < hi; b \+= 4\) \{\n.*?\n    \}\n",
        s,
        re.S,
    )
    if not m:
        sys.exit("patch_variant: seqtail: the generated reduce no longer loads four slots at a time")
    load = re.search(r"ag_load_slot\(work \+ (\d+) \+ \(size_t\)\(b \+ k\) \* (\d+)\)", m.group(0))
    return s.replace(
        m.group(0),
        f"""    for (unsigned int b = lo; b < hi; ++b)
        acc = ag_op_combine(acc, ag_load_slot(work + {load.group(1)} + (size_t)b * {load.group(2)}));
""",
        1,
    )


def nosleep(s):
    return replace(s, "        __nanosleep(32);\n", "", "nosleep")


CHANGES = {
    "base": lambda s: s,
    "ticket": ticket,
    "prefetch": prefetch,
    "bulkload": bulkload,
    "nosleep": nosleep,
    "lanestore": lanestore,
    "lanebulk": lanebulk,
    "notail": notail,
    "relax": relax,
    "nofold": nofold,
    "seqtail": seqtail,
}


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__ or "usage: patch_variant.py SRC DST NAME CHANGES")
    src, dst, name, changes = sys.argv[1:]
    s = open(src).read()
    m = re.search(r'extern "C" cudaError_t (\w+)\(', s)
    if not m:
        sys.exit("patch_variant: no public function")
    public = m.group(1)
    s = re.sub(rf"\b{public}(_workspace_bytes)?\b", lambda mm: f"ab_{name}" + (mm.group(1) or ""), s)
    for c in changes.split("+"):
        if c not in CHANGES:
            sys.exit(f"patch_variant: unknown change {c!r} (known: {', '.join(CHANGES)})")
        s = CHANGES[c](s)
    open(dst, "w").write(s)


if __name__ == "__main__":
    main()
