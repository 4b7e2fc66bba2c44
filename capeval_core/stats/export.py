"""CSV export that opens anywhere, is safe in a spreadsheet, and says how each number was made.

Every CSV capeval writes goes through one writer, :func:`capeval_core.files.csv_text`: a
header row, then the rows, so a plain ``pandas.read_csv(path)`` reads it. Text cells starting
with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return are prefixed with an apostrophe
(OWASP "CSV injection"), so captions such as ``=HYPERLINK(...)`` are shown as text instead of
evaluated; numbers are written as numbers. The capeval version and the metric signatures go to
a sidecar JSON file beside the CSV (:func:`sidecar_path`, :func:`signatures_text`), not into
the CSV: comment lines make ``pandas.read_csv`` fail (issue 33).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capeval_core._version import __version__
from capeval_core.files import DANGEROUS_PREFIXES, csv_text, safe_cell, write_text

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "DANGEROUS_PREFIXES",
    "export_csv",
    "safe_cell",
    "sidecar_path",
    "signatures_text",
    "to_csv_text",
]


def to_csv_text(frame: pd.DataFrame) -> str:
    """The CSV text: the header and the escaped rows, nothing before them.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"caption": ["a dog", "=HYPERLINK(1)"], "bleu_4": [0.5, 0.25]})
    >>> to_csv_text(frame).splitlines()
    ['caption,bleu_4', 'a dog,0.5', "'=HYPERLINK(1),0.25"]
    """
    rows = frame.itertuples(index=False, name=None)
    return csv_text(list(frame.columns), rows)


def sidecar_path(path: str | os.PathLike[str]) -> Path:
    """Where the signatures of a CSV go: ``scores.csv`` -> ``scores.signatures.json``.

    >>> sidecar_path("out/scores.csv").as_posix()
    'out/scores.signatures.json'
    """
    p = Path(path)
    return p.with_name(f"{p.stem}.signatures.json")


def signatures_text(signatures: Mapping[str, Any] | None, describes: str = "", **extra: Any) -> str:
    """The sidecar JSON: the capeval version, the file it describes, one signature per metric
    key, and any ``extra`` fields (plain JSON values)."""
    payload: dict[str, Any] = {"capeval": __version__}
    if describes:
        payload["describes"] = describes
    payload["signatures"] = {k: str(v) for k, v in (signatures or {}).items()}
    payload.update(extra)
    return json.dumps(payload, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def export_csv(
    path: str | os.PathLike[str],
    frame: pd.DataFrame,
    signatures: Mapping[str, Any] | None = None,
    *,
    option: str = "output",
) -> Path:
    """Write :func:`to_csv_text` to ``path`` and the signatures to its :func:`sidecar_path`
    (UTF-8, each complete or not at all); returns the CSV's path.

    >>> import tempfile
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"caption": ["a dog", "a cat"], "bleu_4": [0.5, 0.25]})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = export_csv(Path(tmp, "scores.csv"), frame, {"bleu_4": "bleu|tok:ptb"})
    ...     files = sorted(p.name for p in Path(tmp).iterdir())
    ...     sidecar = json.loads(sidecar_path(path).read_text())
    ...     shape = pd.read_csv(path).shape
    >>> path.name, files, sidecar["signatures"], shape
    ('scores.csv', ['scores.csv', 'scores.signatures.json'], {'bleu_4': 'bleu|tok:ptb'}, (2, 2))
    """
    p = Path(path)
    written = write_text(p, to_csv_text(frame), option=option)
    write_text(sidecar_path(p), signatures_text(signatures, p.name), option=option)
    return written
