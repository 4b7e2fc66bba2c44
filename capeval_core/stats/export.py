"""CSV export that is safe to open in a spreadsheet and says how each number was made.

Text cells starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return are
prefixed with an apostrophe (OWASP "CSV injection"), so captions such as ``=HYPERLINK(...)``
are shown as text instead of evaluated. Numbers are written as numbers. Leading ``#`` lines
carry the capeval version and one metric signature per line (read back with
``pandas.read_csv(path, comment="#")``).
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from capeval_core._version import __version__

DANGEROUS_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any) -> Any:
    """Escape one cell.

    >>> safe_cell("=1+2"), safe_cell("a dog"), safe_cell(-0.5)
    ("'=1+2", 'a dog', -0.5)
    """
    if isinstance(value, str) and value.startswith(DANGEROUS_PREFIXES):
        return "'" + value
    return value


def to_csv_text(frame: pd.DataFrame, signatures: Mapping[str, Any] | None = None) -> str:
    """The CSV text: ``#`` header lines with the signatures, then the escaped table."""
    buf = io.StringIO()
    buf.write(f"# capeval {__version__}\n")
    for key, sig in (signatures or {}).items():
        buf.write(f"# signature {key}: {str(sig).replace(chr(10), ' ')}\n")
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([safe_cell(str(c)) for c in frame.columns])
    for row in frame.itertuples(index=False, name=None):
        writer.writerow([safe_cell(v) for v in row])
    return buf.getvalue()


def export_csv(
    path: str | os.PathLike[str],
    frame: pd.DataFrame,
    signatures: Mapping[str, Any] | None = None,
) -> Path:
    """Write :func:`to_csv_text` to ``path`` (UTF-8) and return the path."""
    p = Path(path)
    p.write_text(to_csv_text(frame, signatures), encoding="utf-8")
    return p
