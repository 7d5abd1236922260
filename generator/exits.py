"""The exit codes of `assocgen` and `assocgen tune`, and the command-line parser they share.

0 done; 2 the spec or the command line is wrong (one `error:` line, nothing written); 1 anything
else (a missing dependency, a folder that cannot be written, no GPU, a failed build).
"""

import argparse
from typing import NoReturn

EXIT_OK, EXIT_FAILED, EXIT_SPEC = 0, 1, 2


class UsageError(Exception):
    """A mistake on the command line, as one line (the caller reports it as a spec error)."""


class Parser(argparse.ArgumentParser):
    """argparse, raising UsageError with one line instead of printing the usage and exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)
