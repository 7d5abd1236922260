"""Seed 002's Nsight Compute table (bench/matmul/run.sh): one row a kernel launch of seed002
--once, from `ncu --csv --metrics ...`: time, GFLOP/s at n = 3072, registers a thread, shared
memory a block, occupancy (theoretical and achieved), shared-memory bank conflicts (loads, stores)
against the shared instructions.

    python3 bench/matmul/ncu_table.py seed002-ncu.csv [n]
"""

import csv
import sys

NAMES = {"seed_tiled": "tiled", "seed_eight": "8 outputs"}


def main():
    path = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 3072
    rows = {}
    with open(path) as f:
        lines = [ln for ln in f if ln.startswith('"')]
    for r in csv.DictReader(lines):
        key = (r["ID"], r["Kernel Name"])
        value = r["Metric Value"].replace(",", "")
        rows.setdefault(key, {})[r["Metric Name"]] = (float(value) if value else 0.0, r["Metric Unit"])
    print(
        f"{'kernel':<44} {'time':>10} {'GFLOP/s':>9} {'regs':>5} {'smem B':>7} {'occ th.':>8} {'occ ach.':>8}"
        f" {'conflicts ld/st':>17} {'shared ld/st instr':>19}"
    )
    for (_, name), m in rows.items():
        v = {k: x[0] for k, x in m.items()}
        t, unit = m["gpu__time_duration.sum"]
        us = t * {"ns": 1e-3, "nsecond": 1e-3, "ms": 1e3, "msecond": 1e3, "s": 1e6, "second": 1e6}.get(unit, 1)
        label = name.split("(")[0]
        for k, what in NAMES.items():
            if label.startswith(k):
                label = label.replace(k, f"seed {what}").replace("<", " BLOCK_SIZE ").replace(">", "")
        ld, st = (v[f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{x}.sum"] for x in ("ld", "st"))
        conflicts = f"{ld:.0f}/{st:.0f}"
        ld, st = (v[f"smsp__inst_executed_op_shared_{x}.sum"] for x in ("ld", "st"))
        shared = f"{ld:.0f}/{st:.0f}"
        print(
            f"{label[:44]:<44} {us:8.1f}us {2 * n**3 / us / 1e3:9.1f}"
            f" {v['launch__registers_per_thread']:5.0f} {v['launch__shared_mem_per_block_static']:7.0f}"
            f" {v['sm__maximum_warps_per_active_cycle_pct']:7.1f}%"
            f" {v['sm__warps_active.avg.pct_of_peak_sustained_active']:7.1f}%"
            f" {conflicts:>17} {shared:>19}"
        )


if __name__ == "__main__":
    main()
