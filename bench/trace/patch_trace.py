# Make a traced copy of a generated f32 scan (bench/trace/run.sh): per tile, globaltimer at start,
# ticket known, total known, prefix known and end, and the SM, into g_trace[tile * 6 + k].
# --blockidx takes tiles in blockIdx order instead of by ticket.  Stops with a message if the
# generated code no longer has the lines it hooks into.
import sys

STAMPS = 6  # start, total known, prefix known, end, SM, ticket known


def insert(s, anchor, text, before=True):
    if anchor not in s:
        sys.exit(f"patch_trace: the generated scan no longer contains {anchor.strip()!r}")
    return s.replace(anchor, text + anchor if before else anchor + text, 1)


src, dst = sys.argv[1], sys.argv[2]
s = open(src).read()
s = insert(
    s,
    "#include <cuda_runtime.h>\n",
    "__device__ unsigned long long *g_trace;\n"
    "static __device__ __forceinline__ unsigned long long gtime()\n"
    '{ unsigned long long t; asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t)); return t; }\n',
    before=False,
)
s = insert(
    s, "    if (threadIdx.x == 0) {\n        tile_ticket = ", "    const unsigned long long t_start = gtime();\n"
)
s = insert(
    s,
    "    const unsigned int tile = tile_ticket;\n",
    "    if (threadIdx.x == 0 && g_trace) {\n"
    "        unsigned int sm;\n"
    '        asm volatile("mov.u32 %0, %smid;" : "=r"(sm));\n'
    f"        g_trace[tile * {STAMPS}] = t_start;\n"
    f"        g_trace[tile * {STAMPS} + 4] = sm;\n"
    f"        g_trace[tile * {STAMPS} + 5] = gtime();\n"
    "    }\n",
    before=False,
)
s = insert(
    s,
    "    /* what precedes this thread inside the tile */",
    f"    if (threadIdx.x == 0 && g_trace) g_trace[tile * {STAMPS} + 1] = gtime();\n",
)
s = insert(
    s,
    "    before = ag_op_combine(tile_prefix, before);",
    f"    if (threadIdx.x == 0 && g_trace) g_trace[tile * {STAMPS} + 2] = gtime();\n",
)
s = insert(
    s,
    "        return;\n    } else {",
    f"        if (threadIdx.x == 0 && g_trace) g_trace[tile * {STAMPS} + 3] = gtime();\n",
)
s += "\nextern const unsigned int g_trace_tile = AG_TILE;   /* elements a tile, for the host side */\n"
if "--blockidx" in sys.argv[3:]:
    anchor = "tile_ticket = n_tiles == 1 ? 0u : atomicAdd(work, 1u);"
    if anchor not in s:
        sys.exit("patch_trace: no ticket to replace")
    s = s.replace(anchor, "tile_ticket = blockIdx.x;", 1)
open(dst, "w").write(s)
