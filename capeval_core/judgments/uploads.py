"""Judgment files given as ``(name, bytes)`` pairs, as a browser uploads them.

The loaders read paths, so the files are written to a temporary folder first (under their
own names, without the browser's directories) and the folder is removed afterwards. Errors
and the set's ``source`` name the files as uploaded ("ExpertAnnotations.txt not found among
the uploaded files"), never that folder.

>>> data = b"candidate\\treferences\\tscore\\na dog\\ta dog runs\\t4\\n"
>>> jset = load_uploaded([("mine.tsv", data)], "graded")
>>> jset.source, jset.describe()
(('mine.tsv',), '1 read, 1 scored')
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import tempfile
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from capeval_core.errors import CapevalError, CapevalWarning, JudgmentFormatError
from capeval_core.judgments.base import JudgmentSet

#: one uploaded file: its name as the browser gives it, and its content
Upload = tuple[str, bytes]


@contextlib.contextmanager
def _uploaded(
    files: Sequence[Upload], companions: tuple[str, ...] = ()
) -> Iterator[tuple[Path, Path]]:
    """``(what to read, the folder)``: the one file, or the folder for multi-file formats
    (also when the one file is a companion of the format's main file, which is then
    missing). A CapevalError raised inside names the uploads instead of the folder."""
    with tempfile.TemporaryDirectory() as tmp:
        try:
            path = _write(files, tmp)
            yield (Path(tmp) if path.name in companions else path), Path(tmp)
        except CapevalError as exc:
            raise _as_uploaded(exc, tmp) from None


def _write(files: Sequence[Upload], folder: str) -> Path:
    paths = []
    for name, data in files:
        path = Path(folder) / Path(name).name  # no directories from the browser's name
        path.write_bytes(data)
        paths.append(path)
    return paths[0] if len(paths) == 1 else Path(folder)


def _as_uploaded(exc: CapevalError, folder: str) -> CapevalError:
    """``exc`` with the temporary folder the uploads were written to named as what the user
    uploaded ("ExpertAnnotations.txt not found among the uploaded files", not "... in the
    folder 'tmpqs6a2tlb'")."""
    tmp = Path(folder)
    message = str(exc)
    for quoted in (f"'{tmp}'", f"'{tmp.name}'", f'"{tmp}"', f'"{tmp.name}"'):
        message = message.replace(f"in the folder {quoted}", "among the uploaded files")
        message = message.replace(f"in folder {quoted}", "among the uploaded files")
        message = message.replace(quoted, "the uploaded files")
    message = message.replace(f"{tmp}{os.sep}", "").replace(str(tmp), "the uploaded files")
    message = message.replace(tmp.name, "the uploaded files")
    message = message.replace("put it in the same folder", "upload it too")
    exc.args = (message, *exc.args[1:])
    return exc


def _named_as_uploaded(
    jset: JudgmentSet, files: Sequence[Upload], folder: Path, mapping: Mapping[str, str]
) -> JudgmentSet:
    """The set with its ``source`` naming the uploaded files, never the temporary folder.

    Its digest names the files and the column mapping too: a server holds sets by digest,
    and the same rows uploaded by another person under another name or mapping are another
    set to show (its summary and downloads name that file), not this one renamed."""
    names = [Path(name).name for name, _ in files]
    source = tuple(s for s in jset.source if folder.name not in s and s != "mapped")
    return dataclasses.replace(
        jset,
        source=source or tuple(names),
        provenance=(*names, *(f"{own}:{role}" for own, role in sorted(mapping.items()))),
        content_digest="",
    )


def uploaded_columns(name: str, data: bytes) -> tuple[list[str], list[str]]:
    """``(columns, numeric columns)`` of an uploaded generic file, for a column mapping
    (:func:`~capeval_core.judgments.mapping.peek_columns`); pandas' index (an empty first
    header, ``Unnamed: 0``) is no column a role could take, so it is not offered.

    >>> uploaded_columns("mine.csv", b",caption,refs,grade\\n0,a dog,a dog runs,4\\n")
    (['caption', 'refs', 'grade'], ['grade'])
    """
    from capeval_core.judgments.external import is_index_column
    from capeval_core.judgments.mapping import peek_columns

    with _uploaded(((name, data),)) as (path, _):
        columns, numeric = peek_columns(path)
    return (
        [c for c in columns if not is_index_column(c)],
        [c for c in numeric if not is_index_column(c)],
    )


def load_uploaded(
    files: Sequence[Upload],
    format: str,
    preset: str | None = None,
    *,
    mapping: Mapping[str, str] | Sequence[tuple[str, str]] = (),
    score_columns: Sequence[str] | None = None,
) -> JudgmentSet:
    """Load uploaded judgment file(s) with the registry loader ``format``
    (:func:`~capeval_core.judgments.load_judgments`).

    ``mapping`` renames the columns of one uploaded file to the generic format's names first
    (graded and pairwise only); external metrics are then signed with the file as uploaded,
    not the renamed copy. Raises ``JudgmentFormatError`` naming file, line and column.
    """
    from capeval_core.judgments import LOADERS, load_judgments
    from capeval_core.judgments.mapping import (
        in_own_names,
        peek_columns,
        remap_columns,
        set_in_own_names,
    )

    options: dict[str, object] = {}
    if score_columns:
        options["score_columns"] = list(score_columns)
    mapping = dict(mapping)
    loader = LOADERS.get(format)
    if loader is not None and loader.one_file and len(files) > 1:  # "this is a folder"
        names = ", ".join(Path(name).name for name, _ in files)
        raise JudgmentFormatError(
            f"{names}: the {format} format reads one file, and {len(files)} were uploaded: "
            "remove all but one"
        )
    renamed = bool(mapping) and len(files) == 1
    with _uploaded(files, loader.companions if loader else ()) as (path, folder):
        own = path
        if renamed:
            mapped = folder / "mapped"
            mapped.mkdir()
            path = remap_columns(path, mapping, mapped / path.name)
            options["checksum"] = hashlib.sha256(files[0][1]).hexdigest()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", CapevalWarning)
            try:
                jset = load_judgments(path, format, preset, **options)
            except JudgmentFormatError as exc:
                if not renamed:
                    raise
                # said in the file's own column names, not the renamed copy's
                try:
                    columns = peek_columns(own)[0]
                except CapevalError:  # unreadable: the loader's error says so already
                    raise exc from None
                raise in_own_names(exc, columns, mapping) from None
        if renamed:
            jset = set_in_own_names(jset, mapping)
    # a page shows the set's notes, not warnings (a cached load would not warn again)
    said = []
    for w in caught:
        if issubclass(w.category, CapevalWarning):
            said.append(str(w.message))
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if said:
        jset = dataclasses.replace(jset, notes=(*jset.notes, *said))
    return _named_as_uploaded(jset, files, folder, mapping)


def join_uploaded_scores(
    jset: JudgmentSet,
    name: str,
    data: bytes,
    *,
    replace: bool = False,
    id_names: Mapping[str, str] | None = None,
) -> JudgmentSet:
    """``jset`` with an uploaded scores file joined (its external metrics,
    :func:`~capeval_core.judgments.external.join_scores_file`, ``replace`` and ``id_names``
    as there); errors name the file as uploaded."""
    from capeval_core.judgments.external import join_scores_file

    with _uploaded(((name, data),)) as (path, _):
        return join_scores_file(jset, path, replace=replace, id_names=id_names)
