"""Printing generated code within 120 columns, as a formatter would: a line that runs past them is
broken where a person would break it, and nothing else changes (the C tokens stay the same, so the
machine code does too).

- Code breaks after a comma or before `&&`, `||`, `?` or `:` (before a binary `+` or `-` only where
  none of those fits), the outermost such place that keeps the line within the width (the
  rightmost of them), never inside a string or character literal;
  the continuation is indented four columns past the line's own indent, as the templates' wrapped
  calls and signatures are.  A macro's line keeps its `\\` at the end of each piece.
- A comment at the end of a long line of code goes on its own line above it.
- A comment is refilled word by word: `//` lines keep `// `, a block comment's lines the column
  of its text (a `*` at the start of a line is kept, and a list item's text stays aligned).

The emitters apply it to every file they print (with simplify.blank_lines), so a template writes
a signature or a call on one line and the printer fits it; user code passes through it the same
way, its tokens unchanged.
"""

import re

WIDTH = 120
STEP = 4  # a continuation's indent past its line's own

# a string or character literal, a block comment's start or end, a line comment, a bracket, or a
# place to break (what follows a comma; an operator a continuation starts with)
_LEX = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|/\*|\*/|//|[()\[\]{}]|, | (?:&&|\|\||\?|:|\+|-) ')
_ITEM = re.compile(r"(?:[-+] |\d+\. )")  # a list item's mark in a comment


def fit(text: str, width: int = WIDTH) -> str:
    """The text with every line over `width` columns broken (see the module's docstring)."""
    out: list[str] = []
    in_comment = macro = False
    for line in text.split("\n"):
        starts_in_comment = in_comment
        in_comment = _ends_in_comment(line, in_comment)
        is_macro = macro or line.lstrip().startswith("#")
        macro = is_macro and line.endswith("\\")
        if len(line) <= width:
            out.append(line)
        elif starts_in_comment or _is_comment(line):
            out += _refill(line, width, starts_in_comment)
        else:
            out += _fit_code(line, width, is_macro)
    return "\n".join(out)


def _ends_in_comment(line: str, inside: bool) -> bool:
    """Whether a block comment is still open at the end of the line."""
    for m in _LEX.finditer(line):
        tok = m.group()
        if inside:
            inside = tok != "*/"
        elif tok == "/*":
            inside = True
        elif tok == "//":
            break
    return inside


def _is_comment(line: str) -> bool:
    """A line that holds a comment alone (its start, or a `//` line)."""
    s = line.lstrip()
    if s.startswith("//"):
        return True
    if not s.startswith("/*"):
        return False
    close = s.find("*/")
    return close < 0 or not s[close + 2 :].strip()


def _refill(line: str, width: int, inside: bool) -> list[str]:
    """A comment's line refilled word by word within the width."""
    indent = line[: len(line) - len(line.lstrip())]
    body = line.lstrip()
    if body.startswith("//"):
        first, rest, text = indent + "// ", indent + "// ", body[2:].strip()
    elif body.startswith("/*") and not inside:
        first, rest, text = indent + "/* ", indent + "   ", body[2:].strip()
    elif body.startswith("*") and not body.startswith("*/"):
        text = body[1:].lstrip()
        lead = body[: len(body) - len(text)]
        first = indent + lead
        rest = first + " " * len(m.group()) if (m := _ITEM.match(text)) else first
    else:
        first = rest = indent
        text = body
    return _fill(text.split(" "), first, rest, width)


def _fill(words: list[str], first: str, rest: str, width: int) -> list[str]:
    """Words (split at single spaces, so runs of spaces stay) laid out in lines from `first`'s
    column, then `rest`'s."""
    lines, cur = [], first
    for w in words:
        if cur not in (first, rest) and len(cur) + 1 + len(w) > width and cur.strip():
            lines.append(cur.rstrip())
            cur = rest + w
        else:
            cur = cur + w if cur in (first, rest) else cur + " " + w
    lines.append(cur.rstrip())
    return lines


def _fit_code(line: str, width: int, macro: bool) -> list[str]:
    """A line of code broken within the width; a trailing comment first moved above it."""
    code, comment = _split_comment(line)
    indent = line[: len(line) - len(line.lstrip())]
    above = []
    if comment and not macro:
        above = _refill(indent + comment, width, False) if len(indent + comment) > width else [indent + comment]
        line = code.rstrip()
    tail = ""
    if macro and line.endswith("\\"):
        tail, line = " \\", line[:-1].rstrip()
    pieces = _break(line, width - len(tail), indent + " " * STEP)
    return above + [p + tail for p in pieces]


def _split_comment(line: str) -> tuple[str, str]:
    """(code, the comment that ends the line, or '')."""
    for m in _LEX.finditer(line):
        if m.group() in ("//", "/*"):
            rest = line[m.start() :]
            if m.group() == "//" or rest.rstrip().endswith("*/") and rest.find("*/") == len(rest.rstrip()) - 2:
                return line[: m.start()], rest.rstrip()
            return line, ""
    return line, ""


def _break(line: str, width: int, cont: str) -> list[str]:
    """The pieces of a line of code: each break the outermost (then rightmost) that fits."""
    places = _places(line)
    pieces, start, prefix = [], 0, ""
    while len(prefix) + len(line) - start > width:
        fits = [(d, r, -p) for p, d, r in places if p > start and len(prefix + line[start:p].rstrip()) <= width]
        if not fits:
            break
        p = -min(fits)[2]
        pieces.append(prefix + line[start:p].rstrip())
        start, prefix = p, cont
    pieces.append(prefix + line[start:])
    return pieces


def _places(line: str) -> list[tuple[int, int, int]]:
    """(position, bracket depth, rank) of each place a line of code may break (the piece after it
    starts there); rank 1 for a `+` or `-`, taken where no other place of its depth fits."""
    places, depth = [], 0
    for m in _LEX.finditer(line):
        tok = m.group()
        if tok in ("(", "[", "{"):
            depth += 1
        elif tok in (")", "]", "}"):
            depth -= 1
        elif tok == ", ":
            places.append((m.end(), depth, 0))
        elif tok.startswith(" ") and m.start() > 0:
            places.append((m.start() + 1, depth, int(tok in (" + ", " - "))))
    return places
