"""The kinds an instance is made of, as enums: what it computes (Primitive), where its segments
start (Heads) and the kind of a scan table (ScanKind).  They are StrEnums: a member is its
value wherever a string is read (kernel names, templates, dictionary keys).
"""

from enum import StrEnum


class Primitive(StrEnum):
    """What an instance computes (the values are the names' spelling in kernel names)."""

    REDUCE = "reduce"
    SCAN = "scan"  # inclusive
    EXSCAN = "exscan"  # exclusive
    SEGSCAN = "segscan"
    EXSEGSCAN = "exsegscan"
    SEGREDUCE = "segreduce"  # by offsets
    REDUCE_BY_KEY = "reduce_by_key"


class Heads(StrEnum):
    """Where a segmented primitive's segments start (NONE: not segmented; false in a condition)."""

    NONE = ""
    FLAGS = "flags"
    KEYS = "keys"
    OFFSETS = "offsets"


class ScanKind(StrEnum):
    INCLUSIVE = "inclusive"
    EXCLUSIVE = "exclusive"
