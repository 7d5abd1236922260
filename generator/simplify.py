"""Printing generated code simplified, as Halide prints its lowered code: a loop that a shape
makes run once is printed as its body, with the loop's variable set to 0 and the arithmetic that
folds away (`0 * 4 + e`, `c + 0`) left out; and never two blank lines in a row.

It reads the templates' own output, never a user's code: the templates apply it (the filter
`simplified`) to the kernels' bodies and helpers that they wrote, which follow one layout: four
spaces an indent, `#pragma unroll` on the line before a loop, and either a braced body closed by
`}` at the loop's indent or a body indented deeper than the loop.

And a file of several shapes of one kernel (common/sized.cu.j2, a namespace a shape) prints once,
before the namespaces, the items that every shape's code holds word for word and that depend on
nothing that differs between them (`shared`): the shuffles, block scan steps, look-back and its
macros that the shapes would otherwise repeat.  It reads top-level items by the templates'
layout: each at column 0 with the comment that begins right above it (a comment apart from it by
a blank line stays where it is), a macro with its continued lines, an `#if` block to its
`#endif`, a function to the closing brace that brings its braces back to level 0, a declaration
to its `;`.  It assumes what the file defines before the namespaces (the operator's functions,
the launch helper) is not defined again in a shape, as the templates' parts never do.
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
_COMMENT_AT_END = re.compile(r"\s*(?:/\*.*\*/)?\s*$")
_DECLARATOR = re.compile(r"[\s*]*([A-Za-z_]\w*)")


def _declared(lines: list, ind: int) -> set:
    """The names that a braced body (its lines at indent `ind`) declares of its own: each
    declarator's, split at the commas outside brackets, up to the `;`."""
    names = set()
    for line in lines:
        m = _DECLARATION.match(line)
        if not (m and _indent(line) == ind and m[1] not in _NOT_TYPES):
            continue
        depth, piece = 0, ""
        for ch in line[m.end(1) :].split(";")[0] + ",":
            depth += (ch in "([{") - (ch in ")]}")
            if ch == "," and depth == 0:
                # a declarator not read as a name: "", which every line names (the braces stay)
                names.add(m2[1] if (m2 := _DECLARATOR.match(piece)) else "")
                piece = ""
            else:
                piece += ch
    return names


def _inside(line: str, ind: int) -> bool:
    """Whether a line belongs to a block whose body is at indent `ind` (blank lines and
    preprocessor lines do)."""
    return not line.strip() or line.lstrip().startswith("#") or _indent(line) >= ind


def _scope(lines: list, i: int, end: int, ind: int) -> tuple | None:
    """(first, last) lines of the block around lines[i:end] (a body at indent `ind`): from the
    line that opens it to the one that closes it; None where the text does not hold both."""
    lo, hi = i, end
    while lo > 0 and _inside(lines[lo - 1], ind):
        lo -= 1
    while hi < len(lines) and _inside(lines[hi], ind):
        hi += 1
    if lo == 0 or hi == len(lines) or not _COMMENT_AT_END.sub("", lines[lo - 1]).endswith("{"):
        return None
    return lo - 1, hi


def _keeps_scope(lines: list, i: int, end: int, ind: int, body: list) -> bool:
    """Whether a one-trip loop's braced body (lines[i:end], `body` folded) stays a block: where
    it declares a name that the block around it names in its code (or the text does not show that
    block)."""
    names = _declared(body, ind + 4)
    if not names:
        return False
    around = _scope(lines, i, end, ind)
    if around is None:
        return True
    rest = masked("\n".join(lines[around[0] : i] + lines[end : around[1] + 1]))  # a comment names nothing
    return any(re.search(rf"\b{name}\b", rest) for name in names)


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
        found = next(((k, m) for k, line in enumerate(lines) if (m := _ONE_TRIP.match(line))), None)
        if found is None:
            return "\n".join(lines)
        i, m = found
        ind, var, brace = len(m["ind"]), m["v"], bool(m["brace"])
        end = _body_end(lines, i + 1, ind, brace)
        body = [_fold(b, var) for b in lines[i + 1 : end]]
        if brace and _keeps_scope(lines, i, end, ind, body[:-1]):
            new = [" " * ind + "{"] + body  # the body's declarations keep their own scope
        else:
            body = body[:-1] if brace else body
            new = [b[4:] if b.startswith("    ") else b for b in body]
        first = i - 1 if i > 0 and _PRAGMA.match(lines[i - 1]) else i
        lines[first:end] = new


def blank_lines(text: str) -> str:
    """`text` with runs of blank lines cut to one (templates join pieces that each end in one)."""
    return re.sub(r"\n{3,}", "\n\n", text)


# ---- what the shapes of one kernel share

_MASK = re.compile(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)
_NAME = re.compile(r"[A-Za-z_]\w*")
_ATTRIBUTE = re.compile(r"\b__\w+__\s*\([^()]*\)")  # __launch_bounds__(256, 8), __align__(16)
_CONDITIONAL = re.compile(r"#\s*if")
_MACRO = re.compile(r"^\s*#\s*(?:define|undef)\s+(\w+)", re.M)
_STATIC = re.compile(r"\bstatic\b")


def masked(text: str) -> str:
    """`text` with comments and literals blanked (newlines kept): what the compiler reads as code,
    which names nothing in a comment or a string."""
    return _MASK.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)


def _items(text: str) -> list:
    """The top-level items of generated code: [(text, code, first line, end line)], each with the
    comment lines right above it; `code` is its masked text (no comments, no literals)."""
    lines, code = text.split("\n"), masked(text).split("\n")
    out, i = [], 0
    while i < len(lines):
        if not code[i].strip():
            i += 1
            continue
        start = i
        if code[i].startswith("#"):
            depth = 0  # a conditional block to its #endif; a macro with its continued lines
            while True:
                depth += bool(_CONDITIONAL.match(code[i])) - code[i].startswith("#endif")
                more = code[i].rstrip().endswith("\\") or depth > 0
                i += 1
                if not more or i == len(lines):
                    break
        else:
            depth = 0
            while i < len(lines):
                depth += code[i].count("{") - code[i].count("}")
                end = depth == 0 and code[i].rstrip().endswith(("}", ";"))
                i += 1
                if end:
                    break
        first = start
        while first > 0 and lines[first - 1].strip() and not code[first - 1].strip():
            first -= 1  # the comment right above it, if it begins there (not on a line of code)
        if not lines[first].lstrip().startswith(("/*", "//")):
            first = start
        out.append(("\n".join(lines[first:i]), "\n".join(code[start:i]), first, i))
    return out


def _defines(code: str) -> set:
    """The names an item defines or undefines: every macro in it (an `#if` block's, a function
    body's), and a type's, a function's or a variable's name."""
    names = set(_MACRO.findall(code))
    if code.startswith("#") or code.startswith("static_assert"):
        return names
    if code.startswith("typedef"):  # typedef struct { ... } name;
        return names | {_NAME.findall(code)[-1]}
    head = _ATTRIBUTE.sub("", code.split("{")[0])
    head = head.split("(")[0] if "(" in head else re.split(r"[\[=;]", head)[0]
    return names | set(_NAME.findall(head)[-1:])


def _stateless(code: str) -> bool:
    """Whether an item can be written once for every shape, going by its text: a macro, a type, a
    static assertion, or a device or static host function with no static local (never a variable, a kernel or
    an `#if` block); what the names it uses mean, `shared` checks."""
    if code.startswith(("#define", "typedef", "static_assert")):
        return True
    head = _ATTRIBUTE.sub("", code.split("{")[0])
    function = "{" in code and "(" in head and "=" not in head.split("(")[0]
    body = code[code.index("{") :] if function else ""
    host = head.lstrip().startswith("static ") and "__" not in head.split("(")[0]  # a static host function
    return function and ("__device__" in head or host) and "__global__" not in head and not _STATIC.search(body)


def shared(sources: list) -> tuple:
    """(what every source shares, each source less it): the items that are the same text in every
    source, stateless, and use no name that an item left in a source defines (nor define one),
    in the first source's order; nothing where there is one source."""
    if len(sources) < 2:
        return "", list(sources)
    items = [_items(s) for s in sources]
    texts = [{it[0] for it in its} for its in items]
    code = {it[0]: it[1] for its in items for it in its}
    common = {t for t, c, *_ in items[0] if _stateless(c) and all(t in other for other in texts[1:])}
    while True:
        kept = set().union(*(_defines(c) for its in items for t, c, *_ in its if t not in common))
        drop = {t for t in common if kept & (_defines(code[t]) | set(_NAME.findall(code[t])))}
        if not drop:
            break
        common -= drop
    rest = []
    for source, its in zip(sources, items, strict=True):
        lines = source.split("\n")
        for t, _, first, end in reversed(its):
            if t in common:
                del lines[first:end]
        rest.append(blank_lines("\n".join(lines)).strip("\n"))
    out, end = "", None
    for t, _, first, last in items[0]:
        if t in common:  # items on adjacent lines stay adjacent
            out += ("" if end is None else "\n" if first == end else "\n\n") + t
            end = last
    return out, rest
