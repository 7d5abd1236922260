"""Printing generated code within 120 columns, as a formatter would: a line that runs past them is
broken where a person would break it, and nothing else changes (the C tokens stay the same, so the
machine code does too).

- Code breaks after a comma or before `&&`, `||`, `?` or `:` (before a binary `+` or `-` only where
  none of those fits), the outermost such place that keeps the line within the width (the
  rightmost of them), never inside a string, a character literal or a comment; the continuation is
  indented four columns past the line's own indent, as the templates' wrapped calls and
  signatures are.  A preprocessor line's pieces end in `\\` but its last, which keeps its own end.
- A comment at the end of a long line of code goes on its own line above it (not in a macro).
- A comment alone on its lines is refilled word by word: `//` lines keep their `//`, a block
  comment's lines the column of its text (a `*` at the start of a line is kept, and a list
  item's text stays aligned).
- Left as they are: a line that goes on from a line ending in `\\` outside a macro (a spliced
  string or comment), a C++ raw string, a macro's line that holds a comment, and a line where a
  block comment ends and code follows.

The emitters apply it to every file they print (with simplify.blank_lines), so a template writes
a signature or a call on one line and the printer fits it; user code passes through it the same
way, its tokens unchanged.
"""

import re

WIDTH = 120
STEP = 4  # a continuation's indent past its line's own

# outside comments: what starts a string, a character literal or a comment
_OPENER = re.compile(r'"(?:\\.|[^"\\])*"?|\'(?:\\.|[^\'\\])*\'?|/\*|//')
# in code: a bracket, or a place to break (after a comma; before an operator)
_CODE = re.compile(r"[()\[\]{}]|, | (?:&&|\|\||\?|:|\+|-) ")
_ITEM = re.compile(r"(?:[-+] |\d+\. )")  # a list item's mark in a comment
_COMMENT_MARK = re.compile(r"/\*+!?|//[/!]?")

Segment = tuple[str, int, int]  # kind ("code", "string", "comment"), start, end


def fit(text: str, width: int = WIDTH) -> str:
    """The text with every line over `width` columns broken (see the module's docstring)."""
    out: list[str] = []
    in_comment = macro = spliced = False
    for line in text.split("\n"):
        starts_in_comment = in_comment
        segments, in_comment = _lex(line, in_comment)
        is_macro = macro or line.lstrip().startswith("#")
        macro = is_macro and line.endswith("\\")
        after_splice, spliced = spliced and not is_macro, line.endswith("\\")
        alone = all(k == "comment" or not line[a:b].strip() for k, a, b in segments)  # comment alone
        if len(line) <= width or after_splice:
            out.append(line)
        elif starts_in_comment or alone:
            out += _refill(line, width, starts_in_comment) if alone and not is_macro else [line]
        else:
            out += _fit_code(line, segments, width, is_macro)
    return "\n".join(out)


def _lex(line: str, in_comment: bool) -> tuple[list[Segment], bool]:
    """The line's segments (spaces before a comment count as code), and whether a block comment
    is still open at its end."""
    segments: list[Segment] = []
    i = 0
    while i < len(line):
        if in_comment:
            end = line.find("*/", i)
            in_comment = end < 0
            stop = len(line) if in_comment else end + 2
            segments.append(("comment", i, stop))
            i = stop
            continue
        m = _OPENER.search(line, i)
        if m is None:
            segments.append(("code", i, len(line)))
            break
        if m.start() > i:
            segments.append(("code", i, m.start()))
        tok = m.group()
        if tok == "/*":
            end = line.find("*/", m.start() + 2)
            in_comment = end < 0
            stop = len(line) if in_comment else end + 2
            segments.append(("comment", m.start(), stop))
            i = stop
        elif tok == "//":
            segments.append(("comment", m.start(), len(line)))
            i = len(line)
        else:
            segments.append(("string", m.start(), m.end()))
            i = m.end()
    return segments or [("code", 0, 0)], in_comment


def _refill(line: str, width: int, inside: bool) -> list[str]:
    """A comment's line refilled word by word within the width."""
    indent = line[: len(line) - len(line.lstrip())]
    body = line.lstrip()
    mark = None if inside else _COMMENT_MARK.match(body)
    if mark is not None:
        opener = mark.group()
        text = body[len(opener) :].strip()
        first = indent + opener + " "
        rest = first if opener.startswith("//") else indent + " " * (len(opener) + 1)
    elif body.startswith("*") and not body.startswith("*/"):
        text = body[1:].lstrip()
        first = indent + body[: len(body) - len(text)]
        rest = first + " " * len(m.group()) if (m := _ITEM.match(text)) else first
    else:
        first = rest = indent
        text = body
    return _fill(text.split(" "), first, rest, width)


def _fill(words: list[str], first: str, rest: str, width: int) -> list[str]:
    """Words (split at single spaces, so runs of spaces stay) laid out in lines from `first`'s
    column, then `rest`'s."""
    lines: list[str] = []
    cur, empty = first, True
    for w in words:
        if not empty and len(cur) + 1 + len(w) > width:
            lines.append(cur.rstrip())
            cur, empty = rest + w, not w
        elif empty:
            cur, empty = cur + w, not w
        else:
            cur += " " + w
    lines.append(cur.rstrip())
    return lines


def _fit_code(line: str, segments: list[Segment], width: int, macro: bool) -> list[str]:
    """A line of code broken within the width; a trailing comment first moved above it."""
    kind, start, end = segments[-1]
    comments = [s for s in segments if s[0] == "comment"]
    still_open = kind == "comment" and not line[start:end].startswith("//") and not line.rstrip().endswith("*/")
    if 'R"' in line or (macro and comments) or still_open:
        return [line]
    indent = line[: len(line) - len(line.lstrip())]
    moved: list[str] = []
    while segments[-1][0] == "comment":  # comments that end the line: above it, the code fitted alone
        start = segments[-1][1]
        moved.insert(0, line[start:].rstrip())
        line = line[:start].rstrip()
        segments = [(k, a, min(b, len(line))) for k, a, b in segments[:-1] if a < len(line)]
        segments = [s for s in segments if s[0] != "code" or line[s[1] : s[2]].strip()] or [("code", 0, 0)]
    above = [piece for c in moved for piece in _refill(indent + c, width, False)]
    return above + _break(line, segments, width, indent + " " * STEP, macro)


def _break(line: str, segments: list[Segment], width: int, cont: str, macro: bool) -> list[str]:
    """The pieces of a line of code: each break the outermost (then rightmost) that fits; a
    macro's pieces end in `\\` but its last, which keeps the line's own end."""
    tail = ""
    if macro and line.endswith("\\"):
        tail, line = " \\", line[:-1].rstrip()
        segments = [(k, a, min(b, len(line))) for k, a, b in segments if a < len(line)]
    room = width - (2 if macro else 0)  # a macro's pieces end in " \"
    places = _places(line, segments)
    pieces, start, prefix = [], 0, ""
    while len(prefix) + len(line) - start > room:
        fits = [
            (d, r, -p)
            for p, d, r in places
            if p > start and line[start:p].strip() and len(prefix + line[start:p].rstrip()) <= room
        ]
        if not fits:
            break
        p = -min(fits)[2]
        pieces.append(prefix + line[start:p].rstrip() + (" \\" if macro else ""))
        start, prefix = p, cont
    pieces.append(prefix + line[start:] + tail)
    return pieces


def _places(line: str, segments: list[Segment]) -> list[tuple[int, int, int]]:
    """(position, bracket depth, rank) of each place a line of code may break (the piece after it
    starts there), in its code alone; rank 1 for a `+` or `-`, taken where no other place of its
    depth fits."""
    places, depth = [], 0
    for kind, a, b in segments:
        if kind != "code":
            continue
        for m in _CODE.finditer(line, a, b):
            tok = m.group()
            if tok in ("(", "[", "{"):
                depth += 1
            elif tok in (")", "]", "}"):
                depth -= 1
            elif tok == ", ":
                places.append((m.end(), depth, 0))
            elif m.start() > 0:
                places.append((m.start() + 1, depth, int(tok in (" + ", " - "))))
    return places
