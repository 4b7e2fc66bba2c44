"""MATLAB ``.mat`` files of the 50S datasets, read with ``scipy.io.loadmat``.

Files are loaded with ``squeeze_me=True, struct_as_record=False`` (struct arrays become
lists of objects, 1xN and Nx1 alike, cells of one string become the string); the accessors
below also take the unsqueezed record layout, so a struct array reads the same either way.
Every problem is a :class:`JudgmentFormatError` naming the file, the element (``record``,
counted from 1 as MATLAB does) and the variable or field (``column``).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np

from capeval_core.judgments.base import DEFAULT_MAX_BYTES, format_error, read_bytes


def load_mat(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> dict[str, Any]:
    """``scipy.io.loadmat`` with structs as objects; unreadable files give a clear error."""
    from scipy.io import loadmat

    data = read_bytes(path, max_bytes)
    try:
        return loadmat(io.BytesIO(data), squeeze_me=True, struct_as_record=False)
    except Exception as exc:  # scipy raises ValueError, TypeError, OSError... on bad files
        raise format_error(path, f"cannot read this MATLAB file: {_why(exc, data)}") from None


def _why(exc: Exception, data: bytes) -> str:
    """What a reader of the file can act on, from scipy's exception (its class name and
    internals such as "Expecting matrix here" say nothing to them)."""
    text = str(exc)
    if "v7.3" in text:
        return "it is a MATLAB v7.3 (HDF5) file; save it with -v7 or earlier"
    if not data.startswith(b"MATLAB"):  # every file MATLAB 5 and later writes starts so
        return "it does not start with a MATLAB header (not a .mat file?)"
    if "truncated" in text or "could not read bytes" in text:
        return "it ends early (truncated: copy or download it again)"
    return "it is damaged (copy or download it again)"


def variable(mat: dict[str, Any], names: tuple[str, ...], path: Path) -> Any:
    for name in names:
        if name in mat:
            return mat[name]
    found = sorted(k for k in mat if not k.startswith("__"))
    raise format_error(
        path, f"missing variable {names[0]!r} (variables found: {found})", column=names[0]
    )


def elements(value: Any) -> list[Any]:
    """A squeezed struct array / vector as a list (a single element becomes a list of one)."""
    arr = np.atleast_1d(
        np.asarray(value, dtype=object) if not isinstance(value, np.ndarray) else value
    )
    return list(arr.ravel())


def is_struct(obj: Any) -> bool:
    """A struct element, as an object or as a record."""
    return hasattr(obj, "_fieldnames") or (isinstance(obj, np.void) and bool(obj.dtype.names))


def field_of(obj: Any, names: tuple[str, ...], path: Path, var: str, index: int) -> Any:
    """A field of one struct element, loaded as an object (``struct_as_record=False``) or as
    a record (numpy void); the first of ``names`` that exists."""
    if isinstance(obj, np.void) and obj.dtype.names:
        for name in names:
            if name in obj.dtype.names:
                return obj[name]
        fields = list(obj.dtype.names)
    else:
        for name in names:
            if hasattr(obj, name):
                return getattr(obj, name)
        fields = list(getattr(obj, "_fieldnames", []) or [])
    raise format_error(
        path,
        f"element {index + 1} of {var!r} has no field {names[0]!r} (fields: {fields})",
        record=index,
        column=f"{var}.{names[0]}",
    )


def field_name(obj: Any, names: tuple[str, ...]) -> str:
    """The name of the field :func:`field_of` reads of ``obj``: the first of ``names`` it
    has (else the first, which its error names)."""
    has = (
        (lambda n: n in obj.dtype.names)
        if isinstance(obj, np.void) and obj.dtype.names
        else (lambda n: hasattr(obj, n))
    )
    return next((n for n in names if has(n)), names[0])


def unwrap(value: Any) -> Any:
    """The one value inside nested 1x1 arrays (a MATLAB cell holding a char array loads as
    ``array([[array(['text'])]], dtype=object)`` unless squeezed)."""
    while isinstance(value, np.ndarray) and value.size == 1:
        value = value.reshape(-1)[0]
    return value


def text_of(value: Any, path: Path, where: str, index: int) -> str:
    """One sentence from a char array or a cell holding one, stripped; empty arrays are ""."""
    value = unwrap(value)
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, np.ndarray) and value.size == 0:
        return ""
    got = (
        f"{value.size} values"
        if isinstance(value, np.ndarray)
        else f"{type(value).__name__} {shown(value)}"
    )
    raise format_error(path, f"expected one sentence (text), got {got}", record=index, column=where)


def number_of(value: Any, path: Path, where: str, index: int) -> float:
    """One number (NaN included: the caller decides what a missing value means)."""
    value = unwrap(value)
    if isinstance(value, np.ndarray) and value.size == 0:
        raise format_error(path, "the value is empty", record=index, column=where)
    if isinstance(value, bool | np.bool_ | int | float | np.integer | np.floating):
        return float(value)
    got = f"{value.size} values" if isinstance(value, np.ndarray) else shown(value)
    raise format_error(path, f"expected one number, got {got}", record=index, column=where)


def shown(value: Any, limit: int = 40) -> str:
    """A value of a MATLAB file as a message quotes it: a number plainly (``5``, not
    ``np.float64(5.0)``, MATLAB's doubles being whole numbers more often than not).

    >>> shown(np.array([[5.0]])), shown(np.float64(2.5)), shown("HX")
    ('5', '2.5', "'HX'")
    """
    value = unwrap(value)
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def image_name(value: str) -> str:
    return value.strip().replace("\\", "/").rsplit("/", 1)[-1]
