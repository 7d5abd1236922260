# Make a traced copy of a generated one-pass scan of one shape (bench/trace/run.sh, sweep.sh): per
# tile, globaltimer at start (before its tile is known), ticket known, thread 0's loads and fold
# done (before the block scan), prefix known (after the look-back) and the end of warp 0's store
# (the staged path), and the SM,
# into g_trace[tile * 6 + k].  A file of several shapes by n is refused (render one shape: an
# explicit block and items).  --ticket takes tiles by ticket even where they all fit at once.  Stops
# with a message if the generated code no longer has the lines it hooks into.
import re
import sys

STAMPS = 6  # start, loads and fold done, prefix known, end, SM, ticket known
# where every tile fits on the GPU at once the host picks blockIdx order; without this, tickets always
BY_BLOCK = re.compile(r" +if \(tiles >= \d+ && tiles <= \(size_t\)at_once\)\n +by_block = 1;\n")


def ticket_order(s, what="patch_trace"):
    """The scan source `s` taking its tiles by ticket at every size (more than one tile)."""
    if not BY_BLOCK.search(s):
        sys.exit(f"{what}: the generated scan no longer picks blockIdx order where its tiles fit")
    return BY_BLOCK.sub("", s)


def insert(s, anchor, text, before=True):
    if anchor not in s:
        sys.exit(f"patch_trace: the generated scan no longer contains {anchor.strip()!r}")
    return s.replace(anchor, text + anchor if before else anchor + text, 1)


def traced(s, trace="g_trace"):
    """The scan source `s` with stamps written to the device pointer `trace` (when not NULL)."""
    if "namespace ag_s" in s:
        sys.exit("patch_trace: a scan of several shapes by n: render one shape (an explicit block and items)")
    s = insert(
        s,
        "#include <cuda_runtime.h>\n",
        f"__device__ unsigned long long *{trace};\n"
        "static __device__ __forceinline__ unsigned long long ag_gtime()\n"
        '{ unsigned long long t; asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t)); return t; }\n',
        before=False,
    )
    s = insert(s, "    unsigned int tile = blockIdx.x;\n", "    const unsigned long long t_start = ag_gtime();\n")
    s = insert(
        s,
        "        tile = ag_take_ticket(&tile_ticket, work, n_tiles);\n",
        f"    if (threadIdx.x == 0 && {trace}) {{\n"
        "        unsigned int sm;\n"
        '        asm volatile("mov.u32 %0, %smid;" : "=r"(sm));\n'
        f"        {trace}[tile * {STAMPS}] = t_start;\n"
        f"        {trace}[tile * {STAMPS} + 4] = sm;\n"
        f"        {trace}[tile * {STAMPS} + 5] = ag_gtime();\n"
        "    }\n",
        before=False,
    )
    s = insert(
        s,
        "    /* scan: what precedes this thread inside the tile */",
        f"    if (threadIdx.x == 0 && {trace}) {trace}[tile * {STAMPS} + 1] = ag_gtime();\n",
    )
    combine = re.search(r"    before = ag_\w+_combine\(prefix, before\);", s)
    if not combine:
        sys.exit("patch_trace: the generated scan no longer combines the tile's prefix")
    s = insert(
        s, combine.group(0), f"    if (threadIdx.x == 0 && {trace}) {trace}[tile * {STAMPS} + 2] = ag_gtime();\n"
    )
    store = re.search(r"        ag_store_words\([^;]*\);\n", s)
    if not store:
        sys.exit("patch_trace: the generated scan no longer stores its words by ag_store_words")
    s = insert(
        s,
        store.group(0),
        f"        if (threadIdx.x == 0 && {trace}) {trace}[tile * {STAMPS} + 3] = ag_gtime();\n",
        before=False,
    )
    return s


if __name__ == "__main__":
    src, dst = sys.argv[1], sys.argv[2]
    s = traced(open(src).read())
    s += "\nextern const unsigned int g_trace_tile = AG_TILE;   /* elements a tile, for the host side */\n"
    if "--ticket" in sys.argv[3:]:
        s = ticket_order(s)
    open(dst, "w").write(s)
