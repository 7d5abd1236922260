"""A batched linear recurrence x[t] = a[t] x[t-1] + b[t] (batch x length x channels) in PyTorch,
through assocgen's scan of affine maps along rows, eagerly and under torch.compile.

Needs a GPU and a CUDA build of PyTorch; not run in CI (docs/python.md).
Run: python3 examples/python/recurrence_torch.py
"""

from pathlib import Path

import torch

import assocgen
from assocgen import pytorch

m = assocgen.load(Path(__file__).with_name("recurrence.toml"))
ops = pytorch.register(m)


def recurrence(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """x[:, t, :] for x[-1] = 0: a, b are (batch, length, channels) float32."""
    batch, length, channels = a.shape
    maps = torch.stack((a, b), dim=-1).permute(0, 2, 1, 3).reshape(batch * channels, length, 2)
    scanned = ops["rows_scan_compose_affine"](maps)  # (batch * channels, length, 2): (A[t], B[t])
    return scanned[..., 1].reshape(batch, channels, length).permute(0, 2, 1)  # x[t] = B[t] from x[-1] = 0


def reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    x, out = torch.zeros_like(a[:, 0]), []
    for t in range(a.shape[1]):
        x = a[:, t] * x + b[:, t]
        out.append(x)
    return torch.stack(out, dim=1)


if __name__ == "__main__":
    a = torch.rand(64, 1 << 10, 16, device="cuda") * 0.5 + 0.5
    b = torch.randn(64, 1 << 10, 16, device="cuda")
    want = reference(a.double(), b.double()).float()
    for name, f in (("eager", recurrence), ("torch.compile", torch.compile(recurrence, fullgraph=True))):
        error = (f(a, b) - want).abs().max().item()
        print(f"{name}: largest error {error:.2e}")
        assert error <= 1e-4 * (1 + want.abs().max().item()), name
    print("recurrence: ok")
