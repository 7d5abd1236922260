"""Where the default plus-times kernel's warps wait, beside cuBLAS's SGEMM (bench/matmul/run.sh,
STALLS=1): from `ncu --csv --metrics ...` of `matmul_bench --profile`, one column a kernel: the
time, the issue slots used, the FMA pipe's activity, achieved occupancy, shared-memory bank
conflicts, and each stall reason as warps waiting per issued instruction, largest first.

    python3 bench/matmul/stalls.py stalls.csv
"""

import csv
import sys

STALL = "smsp__average_warps_issue_stalled_"
HEAD = {
    "gpu__time_duration.sum": "time",
    "smsp__issue_active.avg.pct_of_peak_sustained_active": "issue active %",
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active": "FMA pipe %",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "warps active %",
    "launch__registers_per_thread": "registers",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": "bank conflicts ld",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": "bank conflicts st",
}


def read(path: str) -> dict[str, dict[str, tuple[float, str]]]:
    """Kernel (its name up to the first '(' and 40 characters, numbered where repeated) -> metric ->
    (value, unit)."""
    with open(path) as f:
        lines = [ln for ln in f if ln.startswith('"')]
    out: dict[str, dict[str, tuple[float, str]]] = {}
    ids: dict[str, str] = {}
    for r in csv.DictReader(lines):
        name = ids.setdefault(r["ID"], f"{r['ID']}: {r['Kernel Name'].split('(')[0][:40]}")
        value = r["Metric Value"].replace(",", "")
        out.setdefault(name, {})[r["Metric Name"]] = (float(value) if value else 0.0, r["Metric Unit"])
    return out


def main() -> int:
    kernels = read(sys.argv[1])
    for name, m in kernels.items():
        print(name)
        for key, label in HEAD.items():
            if key in m:
                print(f"  {label:<28} {m[key][0]:>12.1f} {m[key][1]}")
        stalls = sorted(((v, k[len(STALL) :]) for k, (v, _) in m.items() if k.startswith(STALL)), reverse=True)
        for v, reason in stalls:
            if v >= 0.01:
                print(f"  stall {reason.replace('_per_issue_active.ratio', ''):<22} {v:>12.2f} warps an issue")
    return 0


if __name__ == "__main__":
    sys.exit(main())
