"""Tuning files: the shapes `assocgen tune` measured on one GPU, read back at generation.

A tuning file is TOML, written by `assocgen tune SPEC` (generator/tune.py) and given to the
generator with `--tuning FILE`:

    format = 1
    gpu = "NVIDIA H100 80GB HBM3"       # the GPU it was measured on, as the CUDA runtime names it
    arch = "sm_90"                      # and its architecture

    [[instance]]
    name = "bench_scan_sum_f32"         # an instance's public name in the spec
    what = "scan sum f32 -> f32 (operator sha256:...)"   # what it computes: a changed operator
    shapes = [                                          # no longer matches
        { upto = 16384, block = 256, items = 16 },      # n <= upto: this shape; the first that holds n
        { block = 256, items = 36 },                    # the last: every larger n
    ]

Each shape may also give `blocks_per_sm` (resident blocks an SM asked of the compiler).  Every
problem is one `TuningError` line naming the file and the key; the caller decides whether it
stops generation or, told to fall back, is a note and the built-in shapes apply.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn

from . import tuning
from .model import Heads, Primitive
from .spec import Instance, Kernel
from .tuning import TunedShape

if TYPE_CHECKING:
    from os import PathLike

    from .spec import Spec

FORMAT = 1
# the instances a tuning file may shape: reduces and scans of one input array, scans also segmented
# (by flags or keys); a segmented reduce by offsets runs by spans whose tables are not a block and
# items (tuning.segment_spans), so it keeps the built-in shapes
TUNABLE = (Primitive.REDUCE, Primitive.SCAN, Primitive.EXSCAN, Primitive.SEGSCAN, Primitive.EXSEGSCAN)


class TuningError(ValueError):
    """One clear line: `file: key: problem`."""


class TunedEntry(NamedTuple):
    """An instance's entry in a tuning file: what it computes (tunefile.what) and its shapes by n."""

    what: str
    shapes: tuple[TunedShape, ...]


@dataclass(frozen=True)
class Tuning:
    path: str
    gpu: str
    arch: str
    entries: dict[str, TunedEntry]  # by public name
    digest: str  # of the file's content: the header names it

    @property
    def summary(self) -> str:
        return f"tuned on {self.gpu} ({self.arch}), tuning file {self.digest}"


def what(inst: Instance) -> str:
    """What an instance computes, as a tuning file records it: the primitive, the operator and its
    types, and a digest of the operator's contract (its C and flags), so that a tuning measured for
    one operator is never applied to another of the same name."""
    op = inst.op
    contract = "\n".join(
        (
            *(t.name for t in op.in_types),
            op.acc_type.name,
            op.out_type.name,
            op.combine,
            op.identity,
            op.lift,
            op.finalize,
            str(op.commutative),
            *(t.definition for t in (*op.in_types, op.acc_type, op.out_type)),
        )
    )
    digest = hashlib.sha256(contract.encode()).hexdigest()[:16]
    heads = ""  # none for an unsegmented instance, as tuning files have always said
    if inst.heads:
        heads = f" by {inst.heads}" + (f" {inst.index.name}" if inst.heads == Heads.KEYS and inst.index else "")
    return f"{inst.primitive} {op.name} {op.in_type.name} -> {op.out_type.name}{heads} (operator sha256:{digest})"


def tunable(inst: Kernel, spec: Spec | None = None) -> str:
    """Why `inst` (of `spec`) cannot take tuned shapes, or '' where it can."""
    if not isinstance(inst, Instance) or inst.family not in ("reduce", "scan") or inst.primitive not in TUNABLE:
        return "only reduces and scans (inclusive, exclusive, segmented by flags or keys) are tuned"
    if spec is not None and spec.nccl:
        return "the spec's functions across ranks (nccl = true) keep one shape"
    if inst.op.inputs:
        return "an operator of several inputs keeps its one shape"
    if not inst.sized:
        return "the spec gives its shape (items or blocks_per_sm, or a block other than 256)"
    return ""


def _fail(path: str | PathLike[str], key: str, problem: str) -> NoReturn:
    raise TuningError(f"{path}: {key}: {problem}" if key else f"{path}: {problem}")


def _int(path: str | PathLike[str], key: str, value: Any, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        _fail(path, key, f"{value!r} is not an integer")
    if not lo <= value <= hi:
        _fail(path, key, f"{value} is outside {lo}..{hi}")
    return value


def _shapes(path: str | PathLike[str], where: str, raw: Any) -> tuple[TunedShape, ...]:
    if not isinstance(raw, list) or not raw:
        _fail(path, f"{where}.shapes", "must be a non-empty list of {upto, block, items} tables")
    out, last = [], 0
    for k, s in enumerate(raw):
        key = f"{where}.shapes[{k}]"
        if not isinstance(s, dict):
            _fail(path, key, "must be a table such as { upto = 16384, block = 256, items = 16 }")
        extra = set(s) - {"upto", "block", "items", "blocks_per_sm"}
        if extra:
            _fail(path, key, f"unknown key {sorted(extra)[0]!r} (upto, block, items, blocks_per_sm)")
        for need in ("block", "items"):
            if need not in s:
                _fail(path, key, f"{need} is missing")
        block = _int(path, f"{key}.block", s["block"], 32, 1024)
        if block & (block - 1):
            _fail(path, f"{key}.block", f"{block} is not a power of two")
        items = _int(path, f"{key}.items", s["items"], 1, tuning.MAX_ITEMS)
        per_sm = _int(path, f"{key}.blocks_per_sm", s.get("blocks_per_sm", 0), 0, min(32, 2048 // block))
        upto = s.get("upto")
        if k + 1 < len(raw):
            if upto is None:
                _fail(path, key, "upto is missing (only the last shape, for every larger n, has none)")
            upto = _int(path, f"{key}.upto", upto, 1, 1 << 62)
            if upto <= last:
                _fail(path, f"{key}.upto", f"{upto} does not grow from the shape before ({last})")
            last = upto
        elif upto is not None:
            _fail(path, f"{key}.upto", "the last shape takes every larger n: leave upto out")
        out.append(TunedShape(upto, block, items, per_sm))
    return tuple(out)


def read(path: str | PathLike[str]) -> Tuning:
    """Read and check a tuning file's form (not yet against a spec or a GPU)."""
    content, data = _load(path)
    extra = set(data) - {"format", "gpu", "arch", "instance"}
    if extra:
        _fail(path, "", f"unknown key {sorted(extra)[0]!r}: is this a tuning file written by `assocgen tune`?")
    if type(data.get("format")) is not int or data["format"] != FORMAT:
        _fail(path, "format", f"{data.get('format')!r}: this generator reads tuning files of format {FORMAT}")
    for key in ("gpu", "arch"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            _fail(path, key, "missing: the GPU the shapes were measured on")
        if re.search(r'["\\]|/\*|\*/|[\x00-\x1f\x7f]', data[key]):
            _fail(
                path, key, f"{data[key]!r}: quotes, backslashes, comment marks and control characters are not allowed"
            )
    entries = _entries(path, data.get("instance", []))
    digest = "sha256:" + hashlib.sha256(content).hexdigest()[:16]
    return Tuning(str(path), data["gpu"].strip(), data["arch"].strip(), entries, digest)


def _load(path: str | PathLike[str]) -> tuple[bytes, dict[str, Any]]:
    """The file's bytes and its TOML, or TuningError."""
    try:
        with open(path, "rb") as f:
            content = f.read()
        return content, tomllib.loads(content.decode())
    except FileNotFoundError:
        _fail(path, "", "no such tuning file")
    except IsADirectoryError:
        _fail(path, "", "is a directory, not a tuning file")
    except PermissionError:
        _fail(path, "", "cannot be read (permission denied)")
    except UnicodeDecodeError as e:
        _fail(path, "", f"is not UTF-8 text ({e.reason})")
    except tomllib.TOMLDecodeError as e:
        _fail(path, "", f"not a tuning file (not valid TOML: {e})")


def _entries(path: str | PathLike[str], raw: Any) -> dict[str, TunedEntry]:
    """The [[instance]] tables, checked, by public name."""
    entries: dict[str, TunedEntry] = {}
    if not isinstance(raw, list):
        _fail(path, "instance", "must be a list of [[instance]] tables")
    for k, e in enumerate(raw):
        where = f"instance[{k}]"
        if not isinstance(e, dict):
            _fail(path, where, "must be a table")
        extra = set(e) - {"name", "what", "shapes"}
        if extra:
            _fail(path, where, f"unknown key {sorted(extra)[0]!r} (name, what, shapes)")
        for key in ("name", "what"):
            if not isinstance(e.get(key), str):
                _fail(path, f"{where}.{key}", "missing (a string)")
        if e["name"] in entries:
            _fail(path, f"{where}.name", f"{e['name']!r} is tuned twice")
        entries[e["name"]] = TunedEntry(e["what"], _shapes(path, where, e.get("shapes")))
    return entries


def check_gpu(t: Tuning, gpu: str = "") -> None:
    """A tuning for another GPU than the one named (or an architecture the generator does not
    know) is foreign."""
    m = re.fullmatch(r"sm_(\d+)", t.arch)
    if not m or int(m[1]) < 75:
        _fail(t.path, "arch", f"{t.arch!r} is not an architecture the kernels run on (sm_75 or newer, e.g. sm_90)")
    if gpu and gpu.strip() != t.gpu:
        _fail(t.path, "gpu", f"measured on {t.gpu!r}, not on {gpu.strip()!r}: run `assocgen tune` on that GPU")


def apply(spec: Spec, t: Tuning, gpu: str = "") -> Spec:
    """The spec with the tuning's shapes on its instances (each takes its shapes by n and, as its
    own shape, the one for the largest n), and the header's word on the tuning."""
    check_gpu(t, gpu)
    by_name = {getattr(i, "public_name", ""): i for i in spec.instances}
    for name, entry in t.entries.items():
        inst = by_name.get(name)
        if inst is None:
            _fail(t.path, name, f"the spec {spec.source} has no instance of that name: tuned for another spec?")
        why = tunable(inst, spec)
        if why or not isinstance(inst, Instance):
            _fail(t.path, name, f"cannot take tuned shapes: {why}")
        if entry.what != what(inst):
            _fail(t.path, name, f"tuned for {entry.what!r}, but the spec's computes {what(inst)!r}: tune it again")
    out: list[Kernel] = []
    for inst in spec.instances:
        tuned = t.entries.get(getattr(inst, "public_name", ""))
        out.append(_shaped(t, inst, tuned.shapes) if tuned is not None and isinstance(inst, Instance) else inst)
    return replace(spec, instances=out, tuning=t.summary)


def _shaped(t: Tuning, inst: Instance, shapes: tuple[TunedShape, ...]) -> Instance:
    """`inst` with its tuned shapes by n, each checked, and as its own shape the last one's."""
    for k, s in enumerate(shapes):
        shaped = replace(inst, block=s.block, items=s.items, blocks_per_sm=s.blocks_per_sm)
        problem = tuning.items_problem(shaped, s.items)
        if problem:
            _fail(t.path, f"{inst.public_name}.shapes[{k}]", problem)
    last = shapes[-1]
    return replace(inst, block=last.block, items=last.items, blocks_per_sm=last.blocks_per_sm, shapes=shapes)


def _shape_text(shape: tuple[int | None, int, int, int]) -> str:
    s = TunedShape(*shape)
    parts = ([f"upto = {s.upto}"] if s.upto is not None else []) + [f"block = {s.block}", f"items = {s.items}"]
    if s.blocks_per_sm:
        parts.append(f"blocks_per_sm = {s.blocks_per_sm}")
    return "{ " + ", ".join(parts) + " }"


def write_text(gpu: str, arch: str, entries: list[tuple[Instance, Any, list[str]]], header: str = "") -> str:
    """A tuning file's text: entries [(inst, shapes, notes)], notes being comment lines."""
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    lines += [f"format = {FORMAT}", f"gpu = {_toml_str(gpu)}", f"arch = {_toml_str(arch)}"]
    for inst, shapes, notes in entries:
        lines += ["", "[[instance]]"]
        lines += [f"# {n}" for n in notes]
        lines += [f"name = {_toml_str(inst.public_name)}", f"what = {_toml_str(what(inst))}", "shapes = ["]
        lines += [f"    {_shape_text(s)}," for s in shapes]
        lines.append("]")
    return "\n".join(lines) + "\n"


def _toml_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
