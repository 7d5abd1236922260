"""Printing generated code simplified, as Halide prints its lowered code: a loop that a shape
makes run once is printed as its body, with the loop's variable set to 0 and the arithmetic that
folds away (`0 * 4 + e`, `c + 0`) left out; and never two blank lines in a row.

It reads the templates' own output, never a user's code: the templates apply it (the filter
`simplified`) to the kernels' bodies and helpers that they wrote, which follow one layout: four
spaces an indent, `#pragma unroll` on the line before a loop, and either a braced body closed by
`}` at the loop's indent or a body indented deeper than the loop.
"""

import re

_ONE_TRIP = re.compile(r"^(?P<ind> *)for \(int (?P<v>\w+) = 0; (?P=v) < 1; \+\+(?P=v)\)(?P<brace> \{)?$")
_PRAGMA = re.compile(r"^\s*#pragma unroll( \d+)?$")

# after the loop's variable became 0: the terms and factors that vanish
_FOLDS = [
    (re.compile(r"\b0 \* (?:\w+|\([^()]*\)) \+ "), ""),  # 0 * k + x  -> x
    (re.compile(r" \+ 0 \* (?:\w+|\([^()]*\))(?![\w.(\[])"), ""),  # x + 0 * k  -> x
    (re.compile(r" \+ 0(?![\w.])"), ""),  # x + 0  -> x
    (re.compile(r"(?<=[(\[] )0 \+ |(?<=[(\[])0 \+ "), ""),  # (0 + x  -> (x
    (re.compile(r"(?<=\))\((\w+(?:\.\w+)?)\)"), r"\1"),  # (size_t)(x.y)  -> (size_t)x.y
]


_DECLARATION = re.compile(r"\s*(?:const\s+)?(?:unsigned\s+|signed\s+)?([A-Za-z_]\w*)[\s*]+[A-Za-z_]\w*\s*(?:=|;|\[|,)")
_NOT_TYPES = {"return", "if", "else", "for", "while", "do", "switch", "case", "goto"}


def _declares(lines: list, ind: int) -> bool:
    """Whether a braced body (its lines at indent `ind`) declares a name of its own."""
    for line in lines:
        m = _DECLARATION.match(line)
        if m and _indent(line) == ind and m[1] not in _NOT_TYPES:
            return True
    return False


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _fold(line: str, var: str) -> str:
    line = re.sub(rf"\b{re.escape(var)}\b", "0", line)
    changed = True
    while changed:
        changed = False
        for pattern, repl in _FOLDS:
            new = pattern.sub(repl, line)
            changed, line = changed or new != line, new
    return line


def _body_end(lines: list, start: int, ind: int, brace: bool) -> int:
    """The index just past the loop's body, which begins at `start`."""
    j = start
    while j < len(lines):
        line = lines[j]
        if brace and line == " " * ind + "}":
            return j + 1
        if not line.strip():
            j += 1
            continue
        if line.startswith("#"):
            # a pragma or directive belongs to the body when the code after it does
            k = j + 1
            while k < len(lines) and lines[k].startswith("#"):
                k += 1
            if k < len(lines) and _indent(lines[k]) > ind:
                j = k
                continue
            break
        if _indent(line) <= ind:
            break
        j += 1
    if brace:
        raise ValueError("simplify: a braced one-trip loop without its closing brace")
    return j


def one_trip_loops(text: str) -> str:
    """`text` with every one-trip loop printed as its body (a braced body stays a block)."""
    lines = str(text).split("\n")
    while True:
        i = next((k for k, line in enumerate(lines) if _ONE_TRIP.match(line)), None)
        if i is None:
            return "\n".join(lines)
        m = _ONE_TRIP.match(lines[i])
        ind, var, brace = len(m["ind"]), m["v"], bool(m["brace"])
        end = _body_end(lines, i + 1, ind, brace)
        body = [_fold(b, var) for b in lines[i + 1 : end]]
        if brace and _declares(body[:-1], ind + 4):
            new = [" " * ind + "{"] + body  # the body's declarations keep their own scope
        else:
            body = body[:-1] if brace else body
            new = [b[4:] if b.startswith("    ") else b for b in body]
        first = i - 1 if i > 0 and _PRAGMA.match(lines[i - 1]) else i
        lines[first:end] = new


def blank_lines(text: str) -> str:
    """`text` with runs of blank lines cut to one (templates join pieces that each end in one)."""
    return re.sub(r"\n{3,}", "\n\n", text)
