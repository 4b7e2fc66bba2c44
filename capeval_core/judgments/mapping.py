"""Column mapping for generic judgment files whose headers use other names.

The app asks which column holds the candidate, the references, the ids, ...; the file is
then rewritten with the canonical names (judgment-formats.md, "Generic formats") and read by
the ordinary loader, so every validation rule still applies.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Mapping
from pathlib import Path

from capeval_core.errors import CapevalError
from capeval_core.judgments.base import DEFAULT_MAX_BYTES, _format_from_suffix, read_records
from capeval_core.judgments.graded import KNOWN_COLUMNS, numeric_columns, reference_columns

#: canonical roles of the generic graded and pairwise formats
GRADED_ROLES = ("candidate", "references", "id", "image_id", "system")
PAIRWISE_ROLES = (
    "candidate_a",
    "candidate_b",
    "references",
    "preferred",
    "votes_a",
    "votes_b",
    "category",
    "id",
    "image_id",
)


def peek_columns(
    path: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_BYTES
) -> tuple[list[str], list[str]]:
    """``(columns, numeric columns)`` of a CSV/TSV/JSON/JSONL file, validated as the loaders do.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "j.csv"
    >>> _ = p.write_text("caption,refs,grade\\na dog,a dog runs,3\\n")
    >>> peek_columns(p)
    (['caption', 'refs', 'grade'], ['grade'])
    """
    _, columns, rows = read_records(path, max_bytes=max_bytes)
    exclude = set(KNOWN_COLUMNS) | set(reference_columns(columns))
    return columns, numeric_columns(columns, rows, exclude)


def remap_columns(
    path: str | os.PathLike[str], mapping: Mapping[str, str], out: str | os.PathLike[str]
) -> Path:
    """Write ``path`` to ``out`` with columns renamed ``{file column: canonical name}``.

    Columns not in ``mapping`` keep their names. A file that cannot be decoded is copied
    unchanged, so the loader reports the problem with its usual message.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "j.csv").write_text("caption,grade\\na dog,3\\n")
    >>> remap_columns(d / "j.csv", {"caption": "candidate"}, d / "m.csv").read_text()
    'candidate,grade\\na dog,3\\n'
    """
    src, dst = Path(path), Path(out)
    data = src.read_bytes()
    mapping = {k: v for k, v in mapping.items() if k and v and k != v}
    try:
        text = data.decode("utf-8-sig")
        fmt = _format_from_suffix(src)
    except (UnicodeDecodeError, CapevalError):  # the loader reports these properly
        dst.write_bytes(data)
        return dst
    if not mapping:
        dst.write_bytes(data)
        return dst
    if fmt in ("csv", "tsv"):
        head, sep, rest = text.partition("\n")
        delimiter = "," if fmt == "csv" else "\t"
        fields = next(csv.reader([head.rstrip("\r")], delimiter=delimiter), [])
        buf = io.StringIO()
        csv.writer(buf, delimiter=delimiter, lineterminator="").writerow(
            [mapping.get(f.strip(), f) for f in fields]
        )
        dst.write_text(buf.getvalue() + sep + rest, encoding="utf-8")
    elif fmt == "jsonl":
        lines = []
        for raw in text.splitlines():
            try:
                obj = json.loads(raw) if raw.strip() else None
            except json.JSONDecodeError:
                lines.append(raw)
                continue
            lines.append(raw if not isinstance(obj, dict) else json.dumps(_rename(obj, mapping)))
        dst.write_text("\n".join(lines) + "\n", encoding="utf-8")
    else:
        try:
            obj = json.loads(text)
        except json.JSONDecodeError:
            dst.write_bytes(data)
            return dst
        if isinstance(obj, list):
            obj = [_rename(o, mapping) if isinstance(o, dict) else o for o in obj]
        dst.write_text(json.dumps(obj, ensure_ascii=False, indent=0), encoding="utf-8")
    return dst


def _rename(obj: dict, mapping: Mapping[str, str]) -> dict:
    return {mapping.get(k, k): v for k, v in obj.items()}
