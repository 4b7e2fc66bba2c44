"""Reading user files and writing outputs safely: what the command line and the loaders share.

Readers report every problem as one :class:`~capeval_core.errors.InputError` line that names
the file (and the record, line and column where one applies); no input makes them raise
anything else:

* :func:`read_bytes` refuses missing files, folders, empty files and files above a size cap;
* :func:`decode_text` accepts UTF-8 with or without a byte-order mark, and names UTF-16,
  UTF-32 and binary files as what they are;
* :func:`parse_json` / :func:`check_json_value` turn syntax errors, nesting deeper than
  :data:`MAX_JSON_DEPTH` levels and lone surrogate escapes (``"\\ud800"``: text that no
  UTF-8 file can hold, and that no output could write back) into such errors.

Outputs go through :func:`atomic_output`: a temporary file beside the destination, moved into
place only when it is complete, so a failed run never leaves a partial file behind. CSV text
comes from :func:`csv_text` only, which escapes cells that a spreadsheet would run as
formulas.

:class:`Limits` holds the documented input limits (file size, caption length, references
per image); each can be raised by an option.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from capeval_core.errors import InputError, OptionError

#: Files above this many bytes are refused unless the cap is raised (judgment-formats.md:
#: "default 200 MB"). Counted in MiB, as Streamlit counts its upload limit
#: (``server.maxUploadSize`` in .streamlit/config.toml is the same 200): the app's uploader and
#: the loaders refuse the same files.
DEFAULT_MAX_BYTES = 200 * 1024 * 1024
#: Deepest JSON nesting read; COCO and judgment files need 3 or 4 levels.
MAX_JSON_DEPTH = 64

#: ``fail(message, record=..., line=..., column=...)`` builds the error a reader raises;
#: ``record`` is the record's index in its list (from 0), written counted from 1
Fail = Callable[..., Exception]
#: record index (from 0) -> the line it starts on (None where it cannot be found)
Lines = Callable[[int], "int | None"]


def locate(
    label: str,
    message: str,
    *,
    record: int | None = None,
    line: int | None = None,
    column: str | int | None = None,
    error: type[InputError] = InputError,
) -> InputError:
    """An error whose message starts with where the problem is. ``record`` is the record's
    index in its list (from 0, as the file's format indexes it), and is written counted from
    1, as lines and columns are beside it: "record 4" is the fourth.

    >>> str(locate("results file r.json", "expected a string", record=3, column="caption"))
    "results file r.json, record 4, column 'caption': expected a string"
    """
    where = [label]
    if record is not None:
        where.append(f"record {record + 1}")
    if line is not None:
        where.append(f"line {line}")
    if column is not None:
        where.append(f"column {column!r}" if isinstance(column, str) else f"column {column}")
    return error(f"{', '.join(where)}: {message}")


def failer(label: str | os.PathLike[str], lines: Lines | None = None) -> Fail:
    """A ``fail`` for :func:`read_bytes` and friends whose messages start with ``label``.

    ``lines`` gives the line a record starts on (see :func:`json_line`), asked only when an
    error names a record and no line: a JSON file's record number alone sends a person
    counting objects, where an editor shows lines.
    """

    def fail(message: str, **where: Any) -> InputError:
        if lines is not None and where.get("record") is not None and where.get("line") is None:
            where["line"] = lines(where["record"])
        return locate(str(label), message, **where)

    return fail


def read_bytes(
    path: str | os.PathLike[str],
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    fail: Fail | None = None,
    raise_with: str = "the `max_bytes` option",
) -> bytes:
    """The file's bytes; missing files, folders, oversize and empty files are errors.

    ``raise_with`` names how a caller raises the cap (an option, a command-line flag).
    """
    p = Path(path)
    fail = fail or failer(p)
    try:
        info = p.stat()
    except FileNotFoundError:
        raise fail("file does not exist") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the name
        raise fail(f"cannot read the file: {_reason(exc)}") from None
    if stat.S_ISDIR(info.st_mode):
        raise fail("this is a folder, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise fail("not a regular file")
    if info.st_size > max_bytes:
        raise fail(_size_message(info.st_size, max_bytes, raise_with))
    try:
        with p.open("rb") as fh:
            # the file's size and a byte, not max_bytes + 1: a read allocates what it asks for
            data = fh.read(min(max_bytes, info.st_size) + 1)
            while info.st_size < len(data) <= max_bytes:  # it has grown since stat
                more = fh.read(min(1 << 24, max_bytes + 1 - len(data)))
                if not more:
                    break
                data += more
    except OSError as exc:
        raise fail(f"cannot read the file: {_reason(exc)}") from None
    if len(data) > max_bytes:
        raise fail(_size_message(len(data), max_bytes, raise_with))
    if not data.strip():
        raise fail("file is empty")
    return data


def _size_message(size: int, max_bytes: int, raise_with: str) -> str:
    return (
        f"file is {size:,} bytes, above the {max_bytes:,}-byte cap "
        f"(raise it with {raise_with} if the file is genuine)"
    )


def _reason(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or str(exc)


_BOMS = (
    (b"\x00\x00\xfe\xff", "UTF-32 (big-endian)"),
    (b"\xff\xfe\x00\x00", "UTF-32 (little-endian)"),
    (b"\xfe\xff", "UTF-16 (big-endian)"),
    (b"\xff\xfe", "UTF-16 (little-endian)"),
)


def byte_order_mark(data: bytes) -> str | None:
    """The encoding a UTF-16 or UTF-32 byte-order mark at the start of ``data`` names.

    >>> byte_order_mark("a".encode("utf-16")), byte_order_mark(b"a")
    ('UTF-16 (little-endian)', None)
    """
    return next((name for bom, name in _BOMS if data.startswith(bom)), None)


#: the first bytes of a gzip file (a ``.json.gz`` given where text is read)
GZIP_MAGIC = b"\x1f\x8b"


def decode_text(data: bytes, fail: Fail) -> str:
    """UTF-8 text (a byte-order mark is dropped); anything else is an error saying what it is.

    >>> decode_text("\\ufeffa,b".encode(), failer("x.csv"))
    'a,b'
    >>> decode_text("a,b".encode("utf-16"), failer("x.csv"))
    Traceback (most recent call last):
    ...
    capeval_core.errors.InputError: x.csv: this file is UTF-16 (little-endian) text \
(byte-order mark at offset 0); save it as UTF-8
    >>> import gzip
    >>> decode_text(gzip.compress(b"[]"), failer("x.json.gz"))
    Traceback (most recent call last):
    ...
    capeval_core.errors.InputError: x.json.gz: this file is gzip-compressed; decompress it first
    """
    if name := byte_order_mark(data):
        raise fail(f"this file is {name} text (byte-order mark at offset 0); save it as UTF-8")
    if data.startswith(GZIP_MAGIC):
        raise fail("this file is gzip-compressed; decompress it first")
    nul = data.find(b"\x00")
    if nul >= 0:
        guess = _utf16_without_bom(data)
        if guess:
            raise fail(
                f"this looks like {guess} text without a byte-order mark (NUL byte at offset "
                f"{nul}); save it as UTF-8"
            )
        raise fail(f"this looks like a binary file (NUL byte at offset {nul}), not UTF-8 text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        offset = exc.start + (3 if data.startswith(b"\xef\xbb\xbf") else 0)
        line = data[:offset].count(b"\n") + 1
        raise fail(
            f"not UTF-8: byte 0x{data[offset]:02x} at offset {offset} cannot be decoded "
            "(save the file as UTF-8)",
            line=line,
        ) from None


def _utf16_without_bom(data: bytes) -> str | None:
    """'UTF-16 (little-endian)' etc. when the NUL bytes sit where ASCII text in UTF-16 has them."""
    sample = data[:4096]
    even, odd = sample[0::2], sample[1::2]
    if len(odd) < 2:
        return None
    for zeros, chars, name in ((odd, even, "little"), (even, odd, "big")):
        if zeros.count(0) >= 0.9 * len(zeros) and chars.count(0) <= 0.1 * len(chars):
            return f"UTF-16 ({name}-endian)"
    return None


def read_text(
    path: str | os.PathLike[str],
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    fail: Fail | None = None,
    raise_with: str = "the `max_bytes` option",
) -> str:
    """:func:`read_bytes` then :func:`decode_text`."""
    fail = fail or failer(path)
    return decode_text(
        read_bytes(path, max_bytes=max_bytes, fail=fail, raise_with=raise_with), fail
    )


#: A JSON ``\\u`` escape of a UTF-16 surrogate; text without one cannot hold a lone surrogate.
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")


class _RepeatedKey(ValueError):
    """A key met twice in one JSON object: ``json`` keeps the last value without a word."""

    def __init__(self, key: str) -> None:
        super().__init__(f"key {key!r} given twice in one object")
        self.key = key
        self.pos: int | None = None


def unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's dict (an ``object_pairs_hook``), refusing a key given twice."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _RepeatedKey(key)
            seen.add(key)
    return out


class RepeatedKeyError(json.JSONDecodeError):
    """A ``JSONDecodeError`` for a key given twice in one object (:func:`loads`), at the
    key's second time."""


def loads(text: str) -> Any:
    """``json.loads`` refusing a key given twice in one object (a :class:`RepeatedKeyError`,
    a ``JSONDecodeError``, where it is given the second time), where ``json`` would keep the
    last value: two reference lists for one image, or two image ids in one record, are not
    read as one of them.

    >>> loads('[{"image_id": 1, "image_id": 2}]')
    Traceback (most recent call last):
    ...
    capeval_core.files.RepeatedKeyError: key 'image_id' given twice in one object: line 1 \
column 18 (char 17)
    """
    try:
        return json.loads(text, object_pairs_hook=unique_object)
    except _RepeatedKey as exc:
        raise RepeatedKeyError(str(exc), text, _repeated_key_at(text)) from None


def json_path_at(text: str, pos: int) -> list[str | int]:
    """The path (object keys and array indexes) of the innermost object or array of the JSON
    ``text`` that holds position ``pos`` (a repeated key's, or a syntax error's: a value
    that does not decode holds the error when it starts before it): a record's number for an
    error that ``json`` gives as a line and column only. Run on an error only; ``[]`` where
    the text cannot be walked.

    >>> json_path_at('[{"a": 1},\\n {"b": [{"c": 2, "c": 3}]}]', 28)
    [1, 'b', 0]
    >>> json_path_at('[{"a": 1},\\n {"b": [{"c": 2 "d": 3}]}]', 28)
    [1, 'b', 0]
    """
    from json import decoder

    space = decoder.WHITESPACE.match
    dec = json.JSONDecoder()  # no hook: a repeated key before ``pos`` is passed, not refused

    def end_of(at: int) -> int:
        try:
            return dec.raw_decode(text, at)[1]
        except ValueError:  # a syntax error inside: the value runs past ``pos``
            return len(text) + 1

    path: list[str | int] = []
    try:
        start = space(text, 0).end()
        while True:
            found: tuple[str | int, int] | None = None
            if text[start] == "[":
                at, index = space(text, start + 1).end(), 0
                while text[at] != "]" and at <= pos:
                    end = end_of(at)
                    if pos < end:
                        found = (index, at)
                        break
                    at = space(text, end).end()
                    if text[at] != ",":  # a missing comma: between two values, in neither
                        break
                    at, index = space(text, at + 1).end(), index + 1
            elif text[start] == "{":
                at = space(text, start + 1).end()
                while text[at] == '"' and at <= pos:
                    name, end = decoder.scanstring(text, at + 1)
                    value = space(text, space(text, end).end() + 1).end()  # past the colon
                    end = end_of(value)
                    if value <= pos < end:
                        found = (name, value)
                        break
                    at = space(text, end).end()
                    if text[at] != ",":
                        break
                    at = space(text, at + 1).end()
            if found is None or text[found[1]] not in "[{":
                return path
            path.append(found[0])
            start = found[1]
    except (ValueError, IndexError, RecursionError):
        return path


def json_path_text(path: Sequence[str | int]) -> str:
    """A path of :func:`json_path_at` as code writes it.

    >>> json_path_text(["annotations", 3, "caption"]), json_path_text([0, "a b"])
    ('annotations[3].caption', '[0]["a b"]')
    """
    out = ""
    for step in path:
        out = f"{out}[{step}]" if isinstance(step, int) else _key_path(out, step)
    return out


def _repeated_key_at(text: str) -> int:
    """Where the first repeated key is given the second time (in a ``{image_id: [...]}``
    file, the start of its one object said nothing): the pure-Python decoder, run again on
    this error only, knows each object's position."""
    from json import decoder, scanner

    dec = json.JSONDecoder(object_pairs_hook=unique_object)

    def parse_object(s_and_end: tuple[str, int], *args: Any, **kwargs: Any) -> Any:
        try:
            return decoder.JSONObject(s_and_end, *args, **kwargs)
        except _RepeatedKey as exc:
            if exc.pos is None:  # the innermost object: the one with the repeated key
                start = s_and_end[1] - 1
                try:
                    exc.pos = _second_key_at(s_and_end[0], start, exc.key, dec)
                except (ValueError, IndexError):  # not expected: the object's start then
                    exc.pos = start
            raise

    dec.parse_object = parse_object  # type: ignore[assignment]
    dec.scan_once = scanner.py_make_scanner(dec)  # type: ignore[assignment]
    try:
        dec.decode(text)
    except _RepeatedKey as exc:
        return exc.pos or 0
    return 0


def _second_key_at(text: str, start: int, key: str, dec: json.JSONDecoder) -> int:
    """The position of ``key``'s second time in the object at ``start`` (whose values read
    well: it is the innermost object with a repeated key)."""
    members, _ = object_members(text, start, dec)
    again = [m.key_start for m in members if m.name == key][1:]
    return again[0] if again else start


@dataclass(frozen=True)
class Member:
    """A member of a JSON object where the text has it: its name, its key's span (quotes
    included) and where its value starts."""

    name: str
    key_start: int
    key_end: int
    value: int


def object_members(
    text: str, pos: int, dec: json.JSONDecoder | None = None
) -> tuple[list[Member], int]:
    """The members of the JSON object opening at ``pos``, and the position after it. Each
    value is decoded only to be passed: for an error's place or a rewrite in place, never to
    read a file. ``ValueError`` or ``IndexError`` where the text holds no such object.

    >>> members, end = object_members('{"a": [1, 2], "b": {"c": 3}} tail', 0)
    >>> [(m.name, m.key_start, m.value) for m in members], end
    ([('a', 1, 6), ('b', 14, 19)], 28)
    """
    from json import decoder

    space = decoder.WHITESPACE.match
    dec = dec or json.JSONDecoder()
    if text[pos] != "{":
        raise ValueError("no object here")
    members: list[Member] = []
    pos = space(text, pos + 1).end()
    while text[pos] != "}":
        if text[pos] != '"':
            raise ValueError("a key was expected")
        name, end = decoder.scanstring(text, pos + 1)
        value = space(text, space(text, end).end() + 1).end()  # past the colon
        members.append(Member(name, pos, end, value))
        pos = space(text, dec.raw_decode(text, value)[1]).end()
        if text[pos] == ",":
            pos = space(text, pos + 1).end()
        elif text[pos] != "}":
            raise ValueError("',' or '}' was expected")
    return members, pos + 1


def json_line(text: str, path: Sequence[str | int]) -> int | None:
    """The line on which the value at ``path`` (object keys and array indexes) starts in the
    JSON ``text``, or None where there is no such value. Run on an error only: it decodes
    every value before the one it looks for.

    >>> text = '{"annotations": [\\n  {"caption": 1},\\n  {"caption": 2}\\n]}'
    >>> json_line(text, ["annotations", 1]), json_line(text, ["annotations", 2])
    (3, None)
    """
    from json import decoder

    space = decoder.WHITESPACE.match
    dec = json.JSONDecoder()
    try:
        pos = space(text, 0).end()
        for step in path:
            if isinstance(step, int):
                if text[pos] != "[":
                    return None
                pos = space(text, pos + 1).end()
                for _ in range(step):
                    pos = space(text, dec.raw_decode(text, pos)[1]).end()
                    if text[pos] != ",":
                        return None
                    pos = space(text, pos + 1).end()
                if text[pos] == "]":
                    return None
                continue
            found = [m.value for m in object_members(text, pos, dec)[0] if m.name == step]
            if not found:
                return None
            pos = found[0]
    except (ValueError, IndexError, RecursionError):
        return None
    return text.count("\n", 0, pos) + 1


#: a CSV header line: two or more names (quoted or not) separated by commas, semicolons or
#: tabs, nothing of JSON or code around them
_CSV_HEADER = re.compile(r'"?[A-Za-z_][\w .-]*"?(?:[,;\t]"?[\w .-]*"?)+')


def json_reason(exc: json.JSONDecodeError, unit: str = "file") -> str:
    """Why ``json`` refused a text, in words that end: its message ("Unterminated string
    starting at") expects the position that capeval gives as line and column, and a text cut
    short (``unit``: a file, or a JSON-lines line) or a CSV named ``.json`` say what they are.

    >>> try:
    ...     json.loads('[{"caption": "a dog')
    ... except json.JSONDecodeError as exc:
    ...     json_reason(exc)
    'invalid JSON: a string that is never closed (is the file cut short?)'
    >>> try:
    ...     json.loads("image_id,caption\\n1,a dog")
    ... except json.JSONDecodeError as exc:
    ...     json_reason(exc)
    "invalid JSON: Expecting value; its first line reads like a CSV file's ('image_id,caption')"
    >>> try:
    ...     json.loads('{"image_id": 1}\\n{"image_id": 2}\\n')
    ... except json.JSONDecodeError as exc:
    ...     json_reason(exc)
    'invalid JSON: Extra data; the file reads like JSON Lines (one value per line)'
    """
    text, pos = exc.doc, exc.pos
    if exc.msg.startswith("Unterminated string"):
        return f"invalid JSON: a string that is never closed (is the {unit} cut short?)"
    if pos >= len(text.rstrip()):
        return f"invalid JSON: {exc.msg} at the end of the {unit} (is it cut short?)"
    first = text.lstrip("\ufeff").split("\n", 1)[0].strip()
    if pos <= 1 and _CSV_HEADER.fullmatch(first):
        return f"invalid JSON: {exc.msg}; its first line reads like a CSV file's ({first[:60]!r})"
    if exc.msg == "Extra data" and _starts_json_lines(text, pos):
        return f"invalid JSON: {exc.msg}; the {unit} reads like JSON Lines (one value per line)"
    return f"invalid JSON: {exc.msg}"


def _starts_json_lines(text: str, pos: int) -> bool:
    """Whether the extra data at ``pos`` is a second value on a line of its own, after a first
    that filled its lines: the shape of a JSON-lines file read as one JSON value."""
    line_start = text.rfind("\n", 0, pos) + 1
    return text[line_start:pos].strip() == "" and text[pos] in "{[" and line_start > 0


def parse_json(text: str, fail: Fail, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` whose every failure is one error from ``fail``; the value is checked by
    :func:`check_json_value`.

    >>> parse_json('{"a": [1, 2]}', failer("x.json"))
    {'a': [1, 2]}
    >>> parse_json('[1 2]', failer("x.json"))
    Traceback (most recent call last):
    ...
    capeval_core.errors.InputError: x.json, line 1, column 4: invalid JSON: Expecting ',' \
delimiter
    """
    try:
        value = loads(text)
    except json.JSONDecodeError as exc:  # a repeated key too (RepeatedKeyError)
        message, where = _json_error_place(exc)
        raise fail(message, line=exc.lineno, column=exc.colno, **where) from None
    except RecursionError:
        raise fail(_depth_message(max_depth)) from None
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        if (long := long_number(text)) is not None:
            line, column, message = long
            raise fail(message, line=line, column=column) from None
        raise fail(f"invalid JSON: {exc}") from None
    check_json_value(
        value, fail, max_depth=max_depth, surrogates=bool(SURROGATE_ESCAPE.search(text))
    )
    return value


def _json_error_place(exc: json.JSONDecodeError) -> tuple[str, dict[str, int]]:
    """The message of a JSON error (a syntax error or a repeated key) and its record: in a
    file whose top level is a list (a results file), the number of the record that holds
    it; deeper, the JSON path of the object or list that holds it in the message
    (``annotations[3]``), as a place inside a record is written."""
    path = json_path_at(exc.doc, exc.pos)
    where = {"record": path[0]} if path and isinstance(path[0], int) else {}
    inner = path[1:] if where else path
    repeated = isinstance(exc, RepeatedKeyError)
    message = f"invalid JSON: {exc.msg}" if repeated else json_reason(exc)
    if inner:
        message += f" (at {json_path_text(path)})"
    return message, where


#: a JSON string (skipped) or a run of digits
_STRING_OR_DIGITS = re.compile(r'"(?:[^"\\]|\\.)*"|\d+')


def long_number(text: str, start: int = 0) -> tuple[int, int, str] | None:
    """Where the first integer in JSON ``text`` (from ``start``) is longer than Python reads
    (``sys.get_int_max_str_digits``), as (line, column, message); None if there is none.
    Python's own error names neither place nor remedy a user has ("use
    sys.set_int_max_str_digits()").

    >>> long_number('{"id": "%s",\\n "n": %s}' % ("9" * 5000, "1" * 5000))[:2]
    (2, 7)
    """
    limit = sys.get_int_max_str_digits()
    if not limit:
        return None
    for match in _STRING_OR_DIGITS.finditer(text, start):
        digits = match.group()
        if digits[0] != '"' and len(digits) > limit:
            pos = match.start()
            line, column = text.count("\n", 0, pos) + 1, pos - text.rfind("\n", 0, pos)
            return (
                line,
                column,
                f"invalid JSON: a number of {len(digits):,} digits (at most {limit:,})",
            )
    return None


def _depth_message(max_depth: int) -> str:
    return f"JSON nested too deeply (more than {max_depth} levels)"


def check_json_value(
    value: Any,
    fail: Fail,
    *,
    max_depth: int = MAX_JSON_DEPTH,
    surrogates: bool = True,
    **where: Any,
) -> None:
    """Refuse nesting deeper than ``max_depth`` and text (keys included) holding a lone
    surrogate; the message says where (``annotations[3].caption``). Iterative, so any depth
    is safe to check; ``surrogates=False`` skips the text check (the source held no
    surrogate escape). ``where`` goes to ``fail``.

    >>> check_json_value({"a": [["\\ud800"]]}, failer("x.json"))
    Traceback (most recent call last):
    ...
    capeval_core.errors.InputError: x.json: text at a[0][0] holds a lone surrogate \
(\\ud800) at character 0: not a character, and not writable as UTF-8
    """
    deep = _too_deep(value, max_depth)
    if deep is not None:
        raise fail(f"{_depth_message(max_depth)} at {_path_to(value, deep)}", **where)
    if not surrogates:
        return
    stack = [value]
    while stack:  # depth first, in file order: the first problem is the one reported
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                raise fail(_surrogate_message(item, _path_to(value, item), "text"), **where)
        elif isinstance(item, dict):
            for key in item:
                if _SURROGATE.search(key):
                    raise fail(_surrogate_message(key, _path_to(value, item), "key"), **where)
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))


def _too_deep(value: Any, max_depth: int) -> Any:
    """A container nested deeper than ``max_depth``, or None. Level by level, so the walk
    costs a fraction of what parsing did (0.1 s for COCO's 32 MB val2014 captions)."""
    level = [value] if isinstance(value, dict | list) else []
    depth = 1
    while level:
        if depth > max_depth:
            return level[0]
        below = []
        for item in level:
            children = item.values() if isinstance(item, dict) else item
            below.extend([c for c in children if type(c) is dict or type(c) is list])
        level = below
        depth += 1
    return None


def _surrogate_message(text: str, path: str, what: str) -> str:
    m = _SURROGATE.search(text)
    assert m is not None
    return (
        f"{what} at {path} holds a lone surrogate (\\u{ord(m.group()):04x}) at character "
        f"{m.start()}: not a character, and not writable as UTF-8"
    )


def _key_path(path: str, key: str) -> str:
    """``path.key``, or ``path["key"]`` (JSON-escaped) for a key that is not a plain name: a
    key may hold spaces, newlines or a lone surrogate, and the message must stay one line."""
    if key.isidentifier() and key.isascii():
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"


def _path_to(root: Any, target: Any) -> str:
    """Where ``target`` (found by identity) sits in ``root``: ``annotations[3].caption``."""
    stack: list[tuple[Any, str]] = [(root, "")]
    while stack:
        item, path = stack.pop()
        if item is target:
            path = path or "the top level"
            return path if len(path) <= 60 else path[:57] + "..."
        if isinstance(item, dict):
            stack.extend(reversed([(v, _key_path(path, k)) for k, v in item.items()]))
        elif isinstance(item, list):
            stack.extend(reversed([(v, f"{path}[{i}]") for i, v in enumerate(item)]))
    return "the top level"


def json_kind(value: Any) -> str:
    """A JSON value as a message shows it: its kind, and the value itself if short.

    >>> json_kind(None), json_kind(True), json_kind([1]), json_kind(1.5)
    ('null', 'true', 'a list [1]', 'a number 1.5')
    """
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    kind = {dict: "an object", list: "a list", str: "text"}.get(type(value), "a number")
    try:
        shown = json.dumps(value)
    except (TypeError, ValueError):
        shown = repr(value)
    return f"{kind} {shown if len(shown) <= 40 else shown[:37] + '...'}"


def lone_surrogate(text: str) -> int | None:
    """Position of the first lone surrogate in ``text`` (None when it has none).

    >>> lone_surrogate("ok"), lone_surrogate("a\\ud800")
    (None, 1)
    """
    m = _SURROGATE.search(text)
    return None if m is None else m.start()


# -- limits -----------------------------------------------------------------------------------

#: A caption may hold this many characters per allowed token, so that text without spaces
#: cannot slip past the token limit.
CHARS_PER_TOKEN = 32


@dataclass(frozen=True)
class Limits:
    """The documented input limits; every one can be raised by an option.

    * ``max_bytes``: size of one input file (default 200 MiB, 209,715,200 bytes);
    * ``max_caption_tokens``: tokens (runs of non-space characters) in one caption, candidate
      or reference (default 1,000), and at most :data:`CHARS_PER_TOKEN` characters per
      allowed token (32,000 by default);
    * ``max_references``: references of one image or item (default 1,000).

    >>> Limits().caption_problem("a dog " * 600)
    'caption has 1,200 tokens, above the 1,000-token limit'
    """

    max_bytes: int = DEFAULT_MAX_BYTES
    max_caption_tokens: int = 1000
    max_references: int = 1000

    def __post_init__(self) -> None:

        for name in ("max_bytes", "max_caption_tokens", "max_references"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise OptionError(f"`{name}` must be a whole number >= 1 (got {value!r})")

    def caption_problem(self, text: str) -> str | None:
        """Why ``text`` is over the caption limit, or None."""
        limit = self.max_caption_tokens
        if len(text) > CHARS_PER_TOKEN * limit:
            return (
                f"caption has {len(text):,} characters, above the limit of "
                f"{CHARS_PER_TOKEN * limit:,} ({CHARS_PER_TOKEN} per allowed token)"
            )
        n = len(text.split())
        if n > limit:
            return f"caption has {n:,} tokens, above the {limit:,}-token limit"
        return None

    def references_problem(self, n: int) -> str | None:
        """Why ``n`` references are over the limit, or None."""
        if n > self.max_references:
            return f"{n:,} references, above the limit of {self.max_references:,} per image"
        return None


# -- outputs ----------------------------------------------------------------------------------


#: characters that would break a line of a terminal or a text table, or act on the terminal:
#: C0 and C1 controls (newline, tab, ESC of ANSI sequences, DEL), line and paragraph
#: separators, and the bidirectional overrides that reorder what a terminal shows
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural but for one ("1 system", "2 systems"; it said "1 systems").

    >>> counted(1, "system"), counted(1200, "image")
    ('1 system', '1,200 images')
    """
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def signed(value: float, decimals: int) -> str:
    """A difference with its sign, one that rounds to zero as +0 (a tiny negative float
    difference printed "-0.000000").

    >>> signed(-1e-12, 6), signed(0.25, 2), signed(-0.25, 2)
    ('+0.000000', '+0.25', '-0.25')
    """
    return f"{round(value, decimals) + 0.0:+.{decimals}f}"


def printable(text: str) -> str:
    """``text`` safe to print on one line: each control character as its escape.

    >>> printable("sys\\n\\x1b[31mred")
    'sys\\\\n\\\\u001b[31mred'
    """
    return _CONTROL.sub(lambda m: json.dumps(m.group())[1:-1], str(text))


def shared_name(source: str | os.PathLike[str]) -> str:
    """An input as a shared output names it: the file name without its folders (a table in a
    paper, a sidecar sent to a colleague must not carry the machine's paths); text that is
    no path (``COCO val2014 captions ...``) is kept.

    >>> shared_name("/home/me/data/captions_val2014.json, split test")
    'captions_val2014.json, split test'
    """
    return str(source).replace("\\", "/").rsplit("/", 1)[-1]


def text_digest(text: str) -> str:
    """First 12 hex digits of the sha256 of ``text`` (UTF-8): a content digest for outputs
    that name an input by its file name only."""
    import hashlib

    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def check_output(path: str | os.PathLike[str], *, option: str = "output") -> Path:
    """The output path, refused where it could not be written: a folder, or in a folder that
    does not exist. Called before the work starts, so a long run does not end in this."""
    if not str(path):
        raise InputError(f"{option} is empty: give a file name")
    p = Path(path)
    try:
        is_dir, parent_is_dir, parent_exists = p.is_dir(), p.parent.is_dir(), p.parent.exists()
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the name
        raise InputError(f"{option} {str(p)!r}: not a usable file name ({_reason(exc)})") from None
    if is_dir:
        raise InputError(f"{option} {p}: this is a folder; give a file name")
    if not parent_is_dir and parent_exists:
        raise InputError(f"{option} {p}: {p.parent} is a file, not a folder")
    if not parent_is_dir:
        raise InputError(f"{option} {p}: the folder {p.parent} does not exist")
    # an output replaces its file once complete: a link's target is replaced, not the link
    # (the link became a file); a device or a pipe is written to (see is_stream)
    if p.is_symlink() and not is_stream(p):
        return Path(os.path.realpath(p))
    return p


def check_output_folder(path: str | os.PathLike[str], *, option: str = "--output") -> Path:
    """A folder a run writes its files into, refused before the work where it could not be:
    a file, under a file, or in a place that takes no new files (read-only, no permission).
    A folder that does not exist yet is made by the run (with its parents)."""
    if not str(path):
        raise InputError(f"{option} is empty: give a folder name")
    p = Path(path)
    try:
        existing = next(q for q in (p, *p.parents) if q.exists() or q.is_symlink())
        is_dir = existing.is_dir()
    except (OSError, ValueError, StopIteration) as exc:  # ValueError: a NUL byte in the name
        raise InputError(
            f"{option} {str(p)!r}: not a usable folder name ({_reason(exc)})"
        ) from None
    if not is_dir:
        what = "is a file" if existing == p else f"is under {existing}, a file"
        raise InputError(f"{option} {p}: {what}; give a folder (its files are written there)")
    try:  # a probe file: a read-only folder or mount, or one without permission, is found now
        fd, tmp = tempfile.mkstemp(prefix=".capeval.", suffix=".probe", dir=existing)
    except OSError as exc:
        raise InputError(f"{option} {p}: cannot write in {existing} ({_reason(exc)})") from None
    os.close(fd)
    Path(tmp).unlink(missing_ok=True)
    return p


def is_stream(path: Path) -> bool:
    """Whether an output path is an existing device or pipe (``/dev/null``, ``/dev/stdout``,
    a fifo): written to as it is, where replacing it by a file (as a file output is, once
    complete) made ``--json /dev/full`` a JSON file, and a failed write no error."""
    try:
        return not stat.S_ISREG(path.stat().st_mode) and not path.is_dir()
    except (OSError, ValueError):
        return False


def _write_stream(option: str, path: Path, text: str | bytes) -> None:
    data = text.encode("utf-8") if isinstance(text, str) else text
    try:
        with path.open("wb") as fh:
            fh.write(data)
    except OSError as exc:
        raise InputError(f"{option} {path}: cannot write it ({_reason(exc)})") from None


def same_place(a: Path, b: Path) -> bool:
    """Whether two paths name one file (the same inode where both exist, else the same
    resolved path: a link, ``./x`` and ``x`` are one place)."""
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
        return a.resolve() == b.resolve()
    except (OSError, ValueError):
        return False


def check_outputs(
    outputs: Iterable[tuple[str, str | os.PathLike[str]]],
    inputs: Iterable[tuple[str, str | os.PathLike[str]]] = (),
) -> list[Path]:
    """Every output of a run, checked together before any work: each is a file name in a
    folder that exists and takes a new file (a probe file is made and removed), none is a
    file the run reads (``inputs``: ``(what, path)``; a folder given as an input is passed
    again, as the files read from it, once they are known), and no two share a path.
    ``outputs`` are ``(option, path)`` pairs; a sidecar is passed as its own pair.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> try:
    ...     check_outputs([("--json", d / "a.json"), ("--per-item", d / "a.json")])
    ... except InputError as exc:
    ...     print(str(exc).replace(str(d), "D"))
    --json and --per-item both write D/a.json: give each its own file
    """
    seen: list[tuple[str, Path]] = []
    given = [(what, Path(p)) for what, p in inputs]
    checked = []
    for option, path in outputs:
        p = check_output(path, option=option)
        for other, q in seen:
            if same_place(p, q):
                raise InputError(f"{other} and {option} both write {p}: give each its own file")
        for what, q in given:
            if same_place(p, q):
                raise InputError(
                    f"{option} {p} is the {what} this run reads: write the output elsewhere"
                )
        if not is_stream(p):  # a device or a pipe takes its text as it is
            _probe(p, option)
        seen.append((option, p))
        checked.append(p)
    return checked


def _probe(p: Path, option: str) -> None:
    """Make and remove a file beside ``p``: a folder that takes none (read-only, full, on a
    read-only mount) is found before the work, not after it."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".probe", dir=p.parent)
    except OSError as exc:
        raise InputError(f"{option} {p}: cannot write in {p.parent} ({_reason(exc)})") from None
    os.close(fd)
    Path(tmp).unlink(missing_ok=True)


@contextlib.contextmanager
def atomic_output(
    path: str | os.PathLike[str], *, option: str = "output", binary: bool = False
) -> Iterator[IO[Any]]:
    """A temporary file beside ``path``, moved onto it when the block completes; removed
    when the block fails, so nothing partial is ever left at ``path``."""
    p = check_output(path, option=option)
    if is_stream(p):  # written as it comes: nothing to replace
        buffer = io.BytesIO() if binary else io.StringIO()
        yield buffer
        _write_stream(option, p, buffer.getvalue())
        return
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".part", dir=p.parent)
    except OSError as exc:
        raise InputError(f"{option} {p}: cannot write there ({_reason(exc)})") from None
    try:
        mode = stat.S_IMODE(p.stat().st_mode) if p.is_file() else 0o644
        fh = os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline="")
        with fh:
            yield fh
        os.chmod(tmp, mode)  # mkstemp creates 0600
        os.replace(tmp, p)
    except OSError as exc:
        raise InputError(f"{option} {p}: cannot write it ({_reason(exc)})") from None
    finally:
        Path(tmp).unlink(missing_ok=True)


def write_all(outputs: Sequence[tuple[str, str | os.PathLike[str], str]]) -> list[Path]:
    """Write several outputs of one run, ``(option, path, text)`` each, all or none: every
    text goes to a temporary file beside its destination first, and only when all are
    complete are they moved into place (a failure removes the temporary files and leaves
    every destination as it was)."""
    staged: list[tuple[str, str, Path]] = []
    streams: list[tuple[str, Path, str]] = []  # devices and pipes: written once all are made
    try:
        for option, path, text in outputs:
            p = check_output(path, option=option)
            if is_stream(p):
                streams.append((option, p, text))
                continue
            try:
                fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".part", dir=p.parent)
            except OSError as exc:
                raise InputError(f"{option} {p}: cannot write there ({_reason(exc)})") from None
            staged.append((option, tmp, p))
            try:
                with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                    fh.write(text)
                mode = stat.S_IMODE(p.stat().st_mode) if p.is_file() else 0o644
                os.chmod(tmp, mode)  # mkstemp creates 0600
            except OSError as exc:
                raise InputError(f"{option} {p}: cannot write it ({_reason(exc)})") from None
        for option, tmp, p in staged:
            try:
                os.replace(tmp, p)
            except OSError as exc:
                raise InputError(f"{option} {p}: cannot write it ({_reason(exc)})") from None
        for option, p, text in streams:
            _write_stream(option, p, text)
    finally:
        for _, tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)
    return [p for _, _, p in staged] + [p for _, p, _ in streams]


def write_text(path: str | os.PathLike[str], text: str, *, option: str = "output") -> Path:
    """Write ``text`` (UTF-8) to ``path`` through :func:`atomic_output`."""
    with atomic_output(path, option=option) as fh:
        fh.write(text)
    return Path(path)


def write_json(path: str | os.PathLike[str], value: Any, *, option: str = "output") -> Path:
    """``value`` as indented JSON (NaN refused: pass None), written atomically. The text is
    made before the file is opened, so a value that cannot be written leaves no file."""
    return write_text(path, json.dumps(value, indent=1, allow_nan=False) + "\n", option=option)


#: Cells starting with these are run as formulas by spreadsheets (OWASP "CSV injection").
DANGEROUS_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any) -> Any:
    """Escape one CSV cell: text a spreadsheet would run as a formula gets an apostrophe.

    Numbers stay numbers.

    >>> safe_cell("=1+2"), safe_cell("a dog"), safe_cell(-0.5)
    ("'=1+2", 'a dog', -0.5)
    """
    if isinstance(value, str) and value.startswith(DANGEROUS_PREFIXES):
        return "'" + value
    return value


def csv_text(header: Sequence[Any], rows: Iterable[Sequence[Any]]) -> str:
    """The one CSV writer: the header and rows, every cell escaped with :func:`safe_cell`,
    and nothing else (no comment lines: a plain ``pandas.read_csv`` must read it).

    >>> csv_text(["id", "caption"], [["=HYPERLINK(1)", "a dog"], [7, "a cat"]]).splitlines()
    ['id,caption', "'=HYPERLINK(1),a dog", '7,a cat']
    """
    buf = io.StringIO()
    # CRLF rows (RFC 4180): the csv module quotes only cells holding a character of the line
    # terminator, so with "\n" alone a cell holding "\r" would split its row in a reader
    writer = csv.writer(buf, lineterminator="\r\n")
    writer.writerow([safe_cell(str(c)) for c in header])
    for row in rows:
        writer.writerow([safe_cell(v) for v in row])
    return buf.getvalue()
