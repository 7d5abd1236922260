"""The spec's C code read as tokens, for the checks that look at its text before a compiler does:
comments and string and character literals are blanked first, so that a `return` or an `i` in a
comment (or in a string) counts for nothing, and a member access (`.i`, `->i`) is not the name `i`.
"""

import re

# a comment, or a string or character literal (with its escapes); the rest is code
_NOT_CODE = re.compile(r"//[^\n]*|/\*.*?(?:\*/|\Z)|\"(?:\\.|[^\"\\\n])*\"?|'(?:\\.|[^'\\\n])*'?", re.S)
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\.?\d(?:[eEpP][+-]|[\w.])*|->|\S")  # a name, a number, ...


def code_only(text: str) -> str:
    """`text` with its comments and literals blanked (a space each; newlines kept)."""
    return _NOT_CODE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def names(text: str) -> list[str]:
    """The identifiers of `text`'s code, in order; members left out: a name after `.` or `->`, and
    one declared in a struct or union's braces (followed by `;`, `,`, `[` or `:`)."""
    toks = _TOKEN.findall(code_only(text))
    out, bodies, depth = [], [], 0  # bodies: the brace depths of the struct and union bodies open
    for k, tok in enumerate(toks):
        previous, following = toks[k - 1] if k else "", toks[k + 1] if k + 1 < len(toks) else ""
        if tok == "{":
            depth += 1
            if "struct" in toks[max(0, k - 2) : k] or "union" in toks[max(0, k - 2) : k]:
                bodies.append(depth)
        elif tok == "}":
            if bodies and bodies[-1] == depth:
                bodies.pop()
            depth -= 1
        elif tok[0].isalpha() or tok[0] == "_":
            declared = bool(bodies) and bodies[-1] == depth and following != "" and following in ";,[:"
            if not (previous in (".", "->") or declared):
                out.append(tok)
    return out


def all_names(text: str) -> list[str]:
    """Every identifier of `text`'s code, members too (a macro would replace any of them)."""
    return [tok for tok in _TOKEN.findall(code_only(text)) if tok[0].isalpha() or tok[0] == "_"]


def uses(text: str, name: str) -> bool:
    """Whether the code of `text` names `name` (not in a comment or a literal, not as a member)."""
    return name in names(text)
