"""Element types: the builtin numeric types and the user's own structs.

A type is data: the name used in specs and function names (`f32`), its C spelling (`float`),
its size in bytes (the generator decides vector widths from it) and, for user types, the C
definition that goes into the header.
"""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class CType:
    name: str  # spec / function-name spelling: f32, u8, mat2u
    c: str  # C spelling: float, uint8_t, mat2u
    size: int  # bytes, as sizeof() gives it (checked at compile time for user types)
    kind: str  # "int", "uint", "float" or "struct"
    definition: str = ""  # C text that defines the type (user and generated struct types)
    public: bool = True  # defined in the header (True) or only inside the .cu (False)
    literal_min: str = ""  # most negative value, as a C expression (numeric types)
    literal_max: str = ""  # most positive value, as a C expression (numeric types)
    wide: str = ""  # unsigned type wide enough for wrapping + and * (integers)
    notes: tuple = field(default=())

    @property
    def is_integer(self) -> bool:
        return self.kind in ("int", "uint")

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def words(self) -> int:
        """32-bit words a value spans; shuffles and workspace slots move it word by word."""
        return (self.size + 3) // 4


def _int(name: str, c: str, size: int, signed: bool) -> CType:
    bits = size * 8
    if signed:
        lo, hi = f"INT{bits}_MIN", f"INT{bits}_MAX"
    else:
        lo, hi = f"(({c})0)", f"UINT{bits}_MAX"
    wide = "uint64_t" if size == 8 else "uint32_t"
    return CType(name, c, size, "int" if signed else "uint", literal_min=lo, literal_max=hi, wide=wide)


BUILTIN_TYPES = {
    t.name: t
    for t in (
        _int("i8", "int8_t", 1, True),
        _int("i16", "int16_t", 2, True),
        _int("i32", "int32_t", 4, True),
        _int("i64", "int64_t", 8, True),
        _int("u8", "uint8_t", 1, False),
        _int("u16", "uint16_t", 2, False),
        _int("u32", "uint32_t", 4, False),
        _int("u64", "uint64_t", 8, False),
        CType("f32", "float", 4, "float", literal_min="(-INFINITY)", literal_max="INFINITY"),
        CType("f64", "double", 8, "float", literal_min="(-(double)INFINITY)", literal_max="((double)INFINITY)"),
    )
}


def struct_type(name: str, c_name: str, size: int, definition: str, public: bool = True) -> CType:
    return CType(name, c_name, size, "struct", definition=definition, public=public)
