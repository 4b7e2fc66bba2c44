"""CSV export that is safe to open in a spreadsheet and says how each number was made.

Every CSV capeval writes goes through one writer, :func:`capeval_core.files.csv_text`: text
cells starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return are prefixed with
an apostrophe (OWASP "CSV injection"), so captions such as ``=HYPERLINK(...)`` are shown as
text instead of evaluated. Numbers are written as numbers. Leading ``#`` lines carry the
capeval version and one metric signature per line (read back with
``pandas.read_csv(path, comment="#")``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capeval_core._version import __version__
from capeval_core.files import DANGEROUS_PREFIXES, csv_text, safe_cell, write_text

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DANGEROUS_PREFIXES", "export_csv", "safe_cell", "to_csv_text"]


def to_csv_text(frame: pd.DataFrame, signatures: Mapping[str, Any] | None = None) -> str:
    """The CSV text: ``#`` header lines with the signatures, then the escaped table."""
    comments = [f"capeval {__version__}"]
    comments += [f"signature {key}: {sig}" for key, sig in (signatures or {}).items()]
    rows = frame.itertuples(index=False, name=None)
    return csv_text(list(frame.columns), rows, comments=comments)


def export_csv(
    path: str | os.PathLike[str],
    frame: pd.DataFrame,
    signatures: Mapping[str, Any] | None = None,
) -> Path:
    """Write :func:`to_csv_text` to ``path`` (UTF-8, complete or not at all) and return it."""
    return write_text(path, to_csv_text(frame, signatures))
