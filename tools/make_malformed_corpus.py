"""Write the corpus of malformed inputs in ``tests/malformed/`` (an offline step; the files
are committed, so the tests never run this).

    python tools/make_malformed_corpus.py tests/malformed

Each case is one file (or, where a format is a folder of files, one folder) that the command
line must refuse with exit status 2 and one line on stderr; ``expected.json`` maps each case
to a regular expression for that line's message and one for where it points (record, line,
column) and, where the message names another file than the case itself, that file's name
(or the option it names). A case whose command is not its folder's (an output path, an
option) carries its ``argv``, with ``{case}``, ``{good}`` and ``{out}`` standing for the
case's path, the folder of valid files and the test's empty output folder.
``tests/core/test_malformed_corpus.py`` runs every case. ``caches/`` holds damaged cache
files for ``tests/core/test_cache_repair.py``.
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
from scipy.io import savemat

CASES: dict[str, dict[str, Any]] = {}


def case(rel: str, content: bytes | str | None, message: str, where: str | None = None, **extra):
    """Record a case; ``content`` None means the caller wrote it (a folder, a .mat file)."""
    CASES[rel] = {"message": message, "where": where, **extra}
    if content is not None:
        path = OUT / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True)


#: 100,000 levels, as the probe sent (RecursionError); DEEPER_THAN_PYTHON suffices elsewhere
DEEP = "[" * 100_000 + "]" * 100_000
DEEPER_THAN_PYTHON = "[" * 5_000 + "]" * 5_000
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01"


def good_files() -> None:
    """The valid counterparts: a results file is run against good/captions.json, an
    annotations file against good/results.json, a scores file joined to good/graded.csv."""
    (OUT / "good").mkdir(parents=True, exist_ok=True)
    (OUT / "good" / "graded.csv").write_text(
        "id,candidate,references,score\n1,a dog runs,a dog running,3\n2,a red bus,a bus,4\n"
        "3,a cat sleeps,a cat on a bed,2\n4,two birds,birds on a wire,5\n"
    )
    (OUT / "good" / "gts.json").write_text(
        dumps({"1": ["a dog running", "a dog on grass"], "2": ["a bus", "a red bus"]}) + "\n"
    )
    results = [{"image_id": i, "caption": c} for i, c in ((1, "a dog runs"), (2, "a red bus"))]
    anns = [
        {"image_id": i, "id": 10 * i + k, "caption": c}
        for i, caps in ((1, ("a dog running", "a dog on grass")), (2, ("a bus", "a red bus")))
        for k, c in enumerate(caps)
    ]
    (OUT / "good" / "results.json").write_text(dumps(results) + "\n")
    (OUT / "good" / "captions.json").write_text(
        dumps({"images": [{"id": 1}, {"id": 2}], "annotations": anns}) + "\n"
    )


def results_cases() -> None:
    ok = [{"image_id": 1, "caption": "a dog runs on the grass"}]
    r = "results/"
    case(r + "empty.json", "", "file is empty")
    case(r + "whitespace-only.json", " \n\t\n", "file is empty")
    case(
        r + "truncated.json",
        '[{"image_id": 1, "caption": "a dog"',
        "invalid JSON",
        r"line 1, column \d+",
    )
    case(
        r + "trailing-comma.json",
        '[{"image_id": 1, "caption": "a dog"},]',
        "invalid JSON",
        r"line 1, column \d+",
    )
    case(r + "not-a-list.json", dumps(ok[0]), "expected a list of")
    case(r + "empty-list.json", "[]", "holds no captions")
    case(
        r + "record-not-object.json",
        dumps([*ok, 5]),
        "expected an object, got a number 5",
        "record 2, line 1",
    )
    case(
        r + "missing-caption.json",
        dumps([{"image_id": 1}]),
        "missing field 'caption'",
        "record 1, line 1",
    )
    case(
        r + "missing-image-id.json",
        dumps([{"caption": "a"}]),
        "missing field 'image_id'",
        "record 1, line 1",
    )
    case(
        r + "caption-number.json",
        dumps([{"image_id": 1, "caption": 5}]),
        "expected text, got a number 5",
        "record 1, line 1, column 'caption'",
    )
    case(
        r + "caption-null.json",
        dumps([{"image_id": 1, "caption": None}]),
        "expected text, got null",
        "record 1, line 1, column 'caption'",
    )
    case(
        r + "caption-list.json",
        dumps([{"image_id": 1, "caption": ["a", "dog"]}]),
        "expected text, got a list",
        "record 1, line 1, column 'caption'",
    )
    for name, value in (
        ("true", True),
        ("list", [1]),
        ("object", {"a": 1}),
        ("fraction", 1.5),
        ("null", None),
    ):
        case(
            r + f"image-id-{name}.json",
            dumps([*ok, {"image_id": value, "caption": "a cat"}]),
            "expected an integer or a string",
            "record 2, line 1, column 'image_id'",
        )
    case(
        r + "image-id-nan.json",
        '[{"image_id": NaN, "caption": "a dog"}]',
        "expected an integer or a string",
        "record 1, line 1, column 'image_id'",
    )
    case(r + "duplicate-image-id.json", dumps(ok * 2), "more than one caption", "record 2, line 1")
    case(
        r + "key-twice-in-a-record.json",
        '[{"image_id": 1, "image_id": 2, "caption": "a dog runs"}]',
        "key 'image_id' given twice in one object",
        "record 1, line 1, column 18",
    )
    case(
        r + "unknown-image.json",
        dumps([{"image_id": 999, "caption": "a"}]),
        "have no reference in",
        "image 999 \\(record 1, line 1\\)",
    )
    case(r + "deep-nesting.json", DEEP, "nested too deeply")
    case(
        r + "long-integer-id.json",
        '[{"image_id": 1, "caption": "a"},\n {"image_id": ' + "1" * 5000 + ', "caption": "b"}]',
        "a number of 5,000 digits",
        "line 2, column 15",
    )
    case(
        r + "deep-field.json",
        '[{"image_id": 1, "caption": "a", "x": ' + "[" * 100 + "]" * 100 + "}]",
        "nested too deeply",
        r"\[0\]\.x",
    )
    case(
        r + "lone-surrogate-caption.json",
        '[{"image_id": 1, "caption": "a \\ud800 dog"}]',
        "lone surrogate",
        r"\[0\]\.caption",
    )
    case(
        r + "lone-surrogate-id.json",
        '[{"image_id": "\\udc00", "caption": "a dog"}]',
        "lone surrogate",
        r"\[0\]\.image_id",
    )
    case(
        r + "lone-surrogate-key.json",
        '[{"image_id": 1, "caption": "a", "\\udbff": 1}]',
        "lone surrogate",
        r"\[0\]",
    )
    case(
        r + "huge-integer.json",
        '[{"image_id": ' + "9" * 5000 + ', "caption": "a"}]',
        "invalid JSON",
    )
    case(r + "utf16-bom.json", dumps(ok).encode("utf-16"), "UTF-16")
    case(
        r + "utf16-no-bom.json",
        dumps(ok).encode("utf-16-le"),
        "UTF-16 .* without a byte-order mark",
    )
    case(r + "utf32-bom.json", dumps(ok).encode("utf-32"), "UTF-32")
    case(
        r + "latin1.json",
        '[{"image_id": 1, "caption": "caf\xe9"}]'.encode("latin-1"),
        "not UTF-8: byte 0xe9 at offset 32",
        "line 1",
    )
    case(r + "binary.json", PNG, r"binary file \(NUL byte at offset 8\)")
    case(
        r + "caption-too-many-tokens.json",
        dumps([{"image_id": 1, "caption": "a dog " * 600}]),
        "1,200 tokens, above the 1,000-token limit.*--max-caption-tokens",
        "record 1, line 1, column 'caption'",
    )
    case(
        r + "caption-too-many-characters.json",
        dumps([{"image_id": 1, "caption": "x" * 40_000}]),
        "40,000 characters, above the limit of 32,000",
        "record 1, line 1, column 'caption'",
    )
    folder = OUT / r / "a-folder.json"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ".gitkeep").write_text("")
    case(r + "a-folder.json", None, "this is a folder, not a file")


def annotations_cases() -> None:
    a = "annotations/"
    anns = [{"image_id": 1, "id": k, "caption": f"a dog runs {k}"} for k in range(3)]
    anns.append({"image_id": 2, "id": 3, "caption": "a red bus"})
    good = {"images": [{"id": 1}, {"id": 2}], "annotations": anns}

    def with_ann(i: int, **fields: Any) -> str:
        rows = [dict(x) for x in anns]
        rows[i].update(fields)
        return dumps({"images": [{"id": 1}, {"id": 2}], "annotations": rows})

    case(a + "empty.json", "", "file is empty")
    case(a + "invalid-json.json", '{"annotations": [', "invalid JSON", r"line 1, column \d+")
    case(a + "a-list.json", dumps(anns), "expected an object with an 'annotations' list")
    case(
        a + "gts-image-twice.json",
        '{"1": ["a dog runs"],\n "2": ["a red bus"], "1": ["a cat"]}',
        "key '1' given twice in one object",
        "line 2, column 22",
    )
    case(
        a + "no-annotations.json",
        dumps({"images": []}),
        "expected an object with an 'annotations' list",
    )
    case(
        a + "annotations-an-object.json",
        dumps({"annotations": {"1": "a"}}),
        "expected a list of",
        "list 'annotations'",
    )
    case(
        a + "annotation-not-object.json",
        dumps({"annotations": [*anns, "a dog"]}),
        "expected an object, got text",
        "list 'annotations', record 5, line 1",
    )
    rows = [dict(x) for x in anns]
    del rows[2]["caption"]
    case(
        a + "missing-caption.json",
        dumps({"annotations": rows}),
        "missing field 'caption'",
        "list 'annotations', record 3, line 1",
    )
    case(
        a + "caption-number.json",
        with_ann(1, caption=3),
        "expected text, got a number 3",
        "record 2, line 1, column 'caption'",
    )
    case(
        a + "image-id-true.json",
        with_ann(0, image_id=True),
        "expected an integer or a string",
        "record 1, line 1, column 'image_id'",
    )
    case(
        a + "image-id-list.json",
        with_ann(2, image_id=[1]),
        "expected an integer or a string",
        "record 3, line 1, column 'image_id'",
    )
    bad_images = dict(good, images=[{"id": {"a": 1}}])
    case(
        a + "images-id-object.json",
        dumps(bad_images),
        "expected an integer or a string",
        "list 'images', record 1, line 1, column 'id'",
    )
    bad_images = dict(good, images=[{"id": 1}, {"id": [2]}])  # pycocotools: unhashable
    case(
        a + "images-id-list.json",
        dumps(bad_images),
        "expected an integer or a string",
        "list 'images', record 2, line 1, column 'id'",
    )
    case(a + "deep-nesting.json", '{"annotations": ' + DEEP + "}", "nested too deeply")
    case(
        a + "long-integer-id.json",
        dumps(good)[:-1] + ', "info": {"n": ' + "9" * 4301 + "}}",
        "a number of 4,301 digits",
        "line 1, column",
    )
    case(
        a + "lone-surrogate.json",
        with_ann(1, caption="a \udfff cat"),
        "lone surrogate",
        r"annotations\[1\]\.caption",
    )
    case(a + "utf16-bom.json", dumps(good).encode("utf-16"), "UTF-16")
    many = [{"image_id": 1, "id": k, "caption": "a dog"} for k in range(1001)] + anns[3:]
    case(
        a + "too-many-references.json",
        dumps({"annotations": many}),
        "image_id 1 has 1,001 references, above the limit of 1,000.*--max-references",
    )
    case(
        a + "reference-too-long.json",
        with_ann(2, caption="a dog " * 501),
        "1,002 tokens, above the 1,000-token limit",
        "record 3, line 1, column 'caption'",
    )
    case(a + "binary.json", PNG, "binary file")


HEADER = "id,candidate,references,score\n"
ROWS = "1,a dog,a dog runs,2\n2,a cat,a cat sits,3\n"


def graded_cases() -> None:
    g = "graded/"
    case(g + "empty.csv", "", "file is empty")
    case(
        g + "references-as-a-list.csv",
        'candidate,references,score\na dog runs,"[""a dog running"", ""a dog""]",3\n',
        r"written-out list .* separate the references with \|\|\|",
        "line 2, column 'references'",
    )
    case(
        g + "references-one-per-line.csv",
        'candidate,references,score\na dog runs,"a dog running\na dog",3\n',
        r"the cell breaks its line .* separate the references with \|\|\|, not one per line",
        "line 3, column 'references'",
    )
    case(g + "header-only.csv", HEADER, "no data rows")
    case(
        g + "missing-candidate.csv",
        "id,references,score\n1,a,2\n",
        "missing required column 'candidate'",
        "line 1, column 'candidate'",
    )
    case(
        g + "missing-references.csv",
        "candidate,score\na,2\n",
        "missing required column 'references'",
        "line 1, column 'references'",
    )
    case(
        g + "text-score.csv",
        HEADER + ROWS + "3,e,f,good\n",
        r"not a number: 'good'",
        "line 4, column 'score'",
    )
    case(
        g + "underscore-number.csv",
        HEADER + ROWS + "3,e,f,1_0\n",
        r"not a number: '1_0'",
        "line 4, column 'score'",
    )
    case(
        g + "fullwidth-digit.csv",
        HEADER + ROWS + "3,e,f,\uff14\n",
        "not a number",
        "line 4, column 'score'",
    )
    case(
        g + "arabic-indic-digit.csv",
        HEADER + ROWS + "3,e,f,\u0663\n",
        "not a number",
        "line 4, column 'score'",
    )
    case(
        g + "formula-score.csv", HEADER + ROWS + "3,e,f,=1+2\n", "formula", "line 4, column 'score'"
    )
    case(
        g + "infinite-score.csv",
        HEADER + "1,a,b,2\n2,c,d,inf\n3,e,f,1\n",
        "not a finite number",
        "line 3, column 'score'",
    )
    case(
        g + "duplicate-id.csv",
        HEADER + "1,a,b,2\n1,c,d,3\n",
        r"duplicate id '1' \(first seen on line 2\)",
        "line 3, column 'id'",
    )
    case(
        g + "ragged-row.csv",
        HEADER + "1,a,b,2\n2,c,d\n",
        "expected 4 fields separated by commas, got 3",
        "line 3",
    )
    case(g + "unclosed-quote.csv", HEADER + '1,"a,b,2\n', "malformed|expected", r"line \d")
    case(
        g + "wrong-delimiter.csv",
        "id;candidate;references;score\n1;a;b;2\n",
        "delimiter",
        "line 1, column 'candidate'",
    )
    case(
        g + "empty-header-field.csv",
        "candidate,,score\na,b,1\n",
        "header field 2 is empty",
        "line 1, column 2",
    )
    case(
        g + "no-score-column.csv",
        "candidate,references,note\na,b,hello\n",
        "no numeric human-score column",
        "line 1",
    )
    case(
        g + "decimal-comma-scores.csv",
        HEADER + '1,a,b,"3,5"\n2,c,d,"4,0"\n',
        r"not a number: '3,5' \(a decimal comma\? write 3\.5\)",
        "line 2, column 'score'",
    )
    case(
        g + "two-scores-none-named.csv",
        "candidate,references,fluency,quality\na,b,3,4\n",
        r"2 numeric columns could be the human score \('fluency', 'quality'\) .*--human NAME",
        "line 1",
    )
    case(
        g + "no-references-in-row.csv",
        HEADER + "1,a,b,2\n2,c,,3\n",
        "no references",
        "line 3, column 'references'",
    )
    case(g + "utf16-bom.csv", (HEADER + ROWS).encode("utf-16"), "UTF-16")
    case(
        g + "utf16-no-bom.tsv",
        (HEADER + ROWS).replace(",", "\t").encode("utf-16-le"),
        "UTF-16 .* without a byte-order mark",
    )
    case(g + "latin1.csv", HEADER.encode() + b"1,caf\xe9,x,2\n", "offset 35", "line 2")
    case(g + "binary.csv", PNG, r"binary file \(NUL byte at offset 8\)")
    case(g + "unknown-suffix.xlsx", "candidate\n", "cannot tell the format")
    folder = OUT / g / "a-folder.csv"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ".gitkeep").write_text("")
    case(g + "a-folder.csv", None, "this is a folder, not a file")
    case(
        g + "caption-too-long.csv",
        HEADER + f"1,{'a dog ' * 600},a dog,2\n",
        "1,200 tokens, above the 1,000-token limit.*--max-caption-tokens",
        "item '1', column 'candidate'",
    )
    rec = {"candidate": "a dog", "references": ["a dog runs"], "score": 1}
    case(
        g + "too-many-references.json",
        dumps([dict(rec, references=["a"] * 1001)]),
        "1,001 references, above the limit of 1,000",
        "column 'references'",
    )
    case(
        g + "bad-json.json", dumps([rec])[:-1] + ',\n{"cand', "invalid JSON", r"line 2, column \d+"
    )
    case(g + "not-an-array.json", dumps(rec), "expected a JSON array", "line 1")
    case(
        g + "record-not-object.json",
        dumps([rec])[:-1] + ",\n 5]",
        "expected an object",
        "record 2, line 2",
    )
    case(
        g + "reference-not-text.json",
        dumps([dict(rec, references=["b", 3])]),
        "reference 2: expected text, got int",
        "record 1, line 1, column 'references'",
    )
    case(
        g + "image-id-list.json",
        dumps([dict(rec, image_id=[1])]),
        "an id must be text or a whole number",
        "record 1, line 1, column 'image_id'",
    )
    case(
        g + "image-id-true.jsonl",
        dumps(dict(rec, image_id=True)) + "\n",
        "an id must be text or a whole number",
        "line 1, column 'image_id'",
    )
    case(
        g + "score-true.json",
        dumps([dict(rec, score=True), rec]),
        "not a number: true",
        "record 1, line 1, column 'score'",
    )
    case(g + "deep-nesting.json", DEEP, "nested too deeply")
    case(
        g + "long-integer.json",
        "[" + dumps(rec) + ",\n" + dumps(dict(rec, score=0))[:-2] + "1" * 5000 + "}]",
        "a number of 5,000 digits",
        "record 2, line 2, column",
    )
    case(
        g + "long-integer.jsonl",
        dumps(rec) + "\n" + dumps(dict(rec, score=0))[:-2] + "1" * 5000 + "}\n",
        "a number of 5,000 digits",
        "record 2, line 2, column",
    )
    case(g + "deep-record.json", "[" + DEEPER_THAN_PYTHON + "]", "nested too deeply", "record 1")
    case(
        g + "deep-field.jsonl",
        dumps(rec)[:-1] + ', "x": ' + "[" * 200 + "]" * 200 + "}\n",
        "nested too deeply",
        "line 1",
    )
    case(g + "deep-nesting.jsonl", DEEPER_THAN_PYTHON + "\n", "nested too deeply", "line 1")
    case(
        g + "lone-surrogate.json",
        '[{"candidate": "a \\ud83d dog", "references": ["b"], "score": 1}]',
        "lone surrogate",
        "record 1, line 1",
    )
    case(
        g + "lone-surrogate.jsonl",
        '{"candidate": "a", "references": ["\\ude00"], "score": 1}\n',
        "lone surrogate",
        "line 1",
    )
    case(
        g + "jsonl-bad-line.jsonl",
        dumps(rec) + '\n{"candidate": "c",,}\n',
        "invalid JSON",
        r"line 2, column \d+",
    )
    case(
        g + "huge-integer.json",
        '[{"candidate": "a", "references": ["b"], "score": ' + "1" * 5000 + "}]",
        "invalid JSON",
        "record 1",
    )


def pairwise_cases() -> None:
    p = "pairwise/"
    head = "candidate_a,candidate_b,references,"
    case(
        p + "preferred-invalid.csv",
        head + "preferred\nx,y,z,a\nx,y,z,maybe\n",
        r"preferred must be one of a, b, tie \(got 'maybe'\)",
        "line 3, column 'preferred'",
    )
    case(
        p + "negative-votes.csv",
        head + "votes_a,votes_b\nx,y,z,3,-1\n",
        "votes cannot be negative",
        "line 2, column 'votes_b'",
    )
    case(
        p + "fractional-votes.csv",
        head + "votes_a,votes_b\nx,y,z,2.5,1\n",
        "whole number",
        "line 2, column 'votes_a'",
    )
    case(
        p + "votes-as-words.json",
        dumps(
            [
                {
                    "candidate_a": "x",
                    "candidate_b": "y",
                    "references": ["z"],
                    "votes_a": "three",
                    "votes_b": 1,
                }
            ]
        ),
        "not a number: 'three'",
        "record 1, line 1, column 'votes_a'",
    )
    case(
        p + "votes-b-missing.csv",
        head + "votes_a\nx,y,z,3\n",
        "missing required column 'votes_b'",
        "line 1, column 'votes_b'",
    )
    case(
        p + "no-preference.tsv",
        "candidate_a\tcandidate_b\tref_1\nx\ty\tz\n",
        "missing required column 'preferred'",
        "line 1, column 'preferred'",
    )
    case(
        p + "preferred-disagrees.csv",
        head + "preferred,votes_a,votes_b\nx,y,z,b,3,1\n",
        "votes",
        "line 2, column 'preferred'",
    )
    case(p + "deep-nesting.json", DEEPER_THAN_PYTHON, "nested too deeply")
    case(
        p + "lone-surrogate.jsonl",
        '{"candidate_a": "\\udc80", "candidate_b": "y", "references": ["z"], "preferred": "a"}\n',
        "lone surrogate",
        "line 1",
    )
    case(p + "utf16-bom.csv", (head + "preferred\nx,y,z,a\n").encode("utf-16"), "UTF-16")


TOKEN = "".join(f"{i}.jpg#{k}\tcaption {k} of {i}\n" for i in ("a", "b") for k in range(5))


def flickr_cases() -> None:
    for fmt in ("flickr8k-expert", "flickr8k-cf", "composite"):
        (OUT / fmt).mkdir(parents=True, exist_ok=True)
        (OUT / fmt / "Flickr8k.token.txt").write_text(TOKEN)
    e = "flickr8k-expert/"
    case(e + "score-out-of-range.txt", "a.jpg\tb.jpg#1\t1\t5\t1\n", "1-4", "line 1, column 'e2'")
    case(
        e + "unknown-caption.txt",
        "a.jpg\tb.jpg#1\t1\t2\t1\na.jpg\tz.jpg#9\t1\t2\t1\n",
        r"not in Flickr8k\.token\.txt",
        "line 2, column 'caption_id'",
    )
    case(
        e + "ragged-row.txt",
        "a.jpg\tb.jpg#1\t1\t2\n",
        "expected 5 fields separated by tabs, got 4",
        "line 1",
    )
    case(
        e + "duplicate-row.txt",
        "a.jpg\tb.jpg#1\t1\t2\t1\na.jpg\tb.jpg#1\t2\t2\t2\n",
        "duplicate",
        "line 2, column 'caption_id'",
    )
    case(
        e + "text-score.txt", "a.jpg\tb.jpg#1\t1\tgood\t1\n", "not a number", "line 1, column 'e2'"
    )
    case(e + "utf16-bom.txt", "a.jpg\tb.jpg#1\t1\t2\t1\n".encode("utf-16"), "UTF-16")
    case(
        e + "half-score.txt",
        "a.jpg\tb.jpg#1\t1\t1.5\t1\n",
        "expert scores are whole numbers 1-4",
        "line 1, column 'e2'",
    )
    c = "flickr8k-cf/"
    case(
        c + "fraction-out-of-range.txt",
        "a.jpg\tb.jpg#1\t1.5\t3\t0\n",
        r"yes_fraction must lie in \[0, 1\]",
        "line 1, column 'yes_fraction'",
    )
    case(
        c + "fraction-not-its-counts.txt",
        "a.jpg\tb.jpg#1\t0.5\t0\t3\n",
        r"yes_fraction 0.5 is not n_yes / \(n_yes \+ n_no\)",
        "line 1, column 'yes_fraction'",
    )
    case(
        c + "no-votes.txt",
        "a.jpg\tb.jpg#1\t1\t3\t0\nb.jpg\ta.jpg#2\t0\t0\t0\n",
        "n_yes and n_no are both 0: a row without a vote is no judgment",
        "line 2, column 'n_yes'",
    )
    case(
        c + "text-count.txt",
        "a.jpg\tb.jpg#1\t0.5\tthree\t0\n",
        "not a number",
        "line 1, column 'n_yes'",
    )
    m = "composite/"
    case(
        m + "missing-score-column.csv",
        "image,caption\na.jpg,a dog\n",
        "cannot find the correctness column",
        "line 1, column 'correctness'",
    )
    case(
        m + "score-out-of-range.csv",
        "image,caption,correctness\na.jpg,a dog,9\n",
        "scores are 1-5",
        "line 2, column 'correctness'",
    )
    case(
        m + "no-source-in-name.csv",
        "image,caption,correctness\na.jpg,a dog,3\n",
        r"its name names none \(8k, 30k or coco\) and it has no source column; name the file "
        r"after its source \(e\.g\. '8k_no-source-in-name\.csv'\) or add a source column$",
    )
    case(
        m + "semicolon-separated.csv",
        "image;caption;correctness\na.jpg;a dog;3\n",
        r"cannot find the image column: .*is the file separated by ';'",
        "line 1, column 'image'",
    )
    case(
        m + "text-score.csv",
        "image,caption,correctness\na.jpg,a dog,good\n",
        "not a number",
        "line 2, column 'correctness'",
    )


def _pairs_mat(
    path: Path, votes: Any = (1, -1), category: Any = 1, drop: str | None = None
) -> None:
    inputs = np.zeros((1, 1), dtype=[("name", "O"), ("sent1", "O"), ("sent2", "O")])
    inputs[0, 0] = ("p.jpg", "a dog", "a cat")
    result = np.zeros((1, 1), dtype=[("result", "O")])
    result[0, 0] = (np.array([list(votes)], dtype=object if isinstance(votes[0], str) else float),)
    data = {"new_input": inputs, "result": result, "category": np.array([[category]])}
    if drop:
        del data[drop]
    buf = io.BytesIO()
    savemat(buf, data)
    path.write_bytes(buf.getvalue())


def pascal_cases() -> None:
    d = OUT / "pascal50s"
    d.mkdir(parents=True, exist_ok=True)
    refs = np.zeros((1, 1), dtype=[("image", "O"), ("sentences", "O")])
    refs[0, 0] = ("p.jpg", np.array([["a dog runs"], ["a dog"]], dtype=object))
    savemat(d / "pascal50S.mat", {"refs": refs})
    s = "pascal50s/"
    _pairs_mat(d / "votes-out-of-range.mat", votes=(1, 2))
    case(
        s + "votes-out-of-range.mat", None, r"votes must be \+1", "record 1, column 'result.result'"
    )
    _pairs_mat(d / "votes-as-text.mat", votes=("+1", "-1"))
    case(s + "votes-as-text.mat", None, r"votes must be \+1", "record 1, column 'result.result'")
    _pairs_mat(d / "bad-category.mat", category=7)
    case(s + "bad-category.mat", None, "category must be 1-4", "record 1, column 'category'")
    _pairs_mat(d / "missing-variable.mat", drop="new_input")
    case(s + "missing-variable.mat", None, "missing variable", "column 'new_input'")
    _pairs_mat(d / "truncated.mat")
    data = (d / "truncated.mat").read_bytes()
    (d / "truncated.mat").write_bytes(data[: len(data) // 2])
    case(s + "truncated.mat", None, "cannot read this MATLAB file: it ends early")
    case(
        s + "not-a-mat.mat",
        "this is text, not MATLAB\n",
        "cannot read this MATLAB file: it does not start with a MATLAB header",
    )


def abstract_cases() -> None:
    base = OUT / "abstract50s"

    def triplets(rows: list[tuple[str, str, str, Any]]) -> np.ndarray:
        """The distributed layout: a struct array of A, B, C (1x1 cells) and rating."""
        t = np.zeros((1, len(rows)), dtype=[("A", "O"), ("B", "O"), ("C", "O"), ("rating", "O")])
        for i, (ra, rb, rc, rating) in enumerate(rows):
            cells = []
            for text in (ra, rb, rc):
                cell = np.empty((1, 1), dtype=object)
                cell[0, 0] = text
                cells.append(cell)
            t[0, i] = (*cells, np.array([[rating]]) if np.isscalar(rating) else rating)
        return t

    def folder(name: str, refs: Any, b: Any, c: Any, labels: np.ndarray | None = None) -> Path:
        f = base / name
        f.mkdir(parents=True, exist_ok=True)
        for file, value in (
            ("abstract48S.json", refs),
            ("abstract_candsB.json", b),
            ("abstract_candsC.json", c),
        ):
            (f / file).write_text(value if isinstance(value, str) else dumps(value))
        if labels is not None:
            savemat(f / "consensus_abstract.mat", {"triplets": labels})
        return f

    refs = [{"image_id": i, "caption": f"a scene {i}"} for i in (1, 2)]
    b = [{"image_id": i, "caption": f"b {i}"} for i in (1, 2)]
    c = [{"image_id": i, "caption": f"c {i}"} for i in (1, 2)]
    a = "abstract50s/"
    nan = np.array([[np.nan]])
    folder(
        "nan-labels",
        refs,
        b,
        c,
        triplets([("a scene 1", "b 1", "c 1", 1.0), ("a scene 2", "b 2", "c 2", nan)]),
    )
    case(
        a + "nan-labels",
        None,
        "rating is NaN",
        "record 2, column 'triplets.rating'",
        names="consensus_abstract.mat",
    )
    folder("nan-votes", refs, b, c, triplets([("a scene 1", "b 1", "c 1", 3.0)]))
    case(
        a + "nan-votes",
        None,
        r"rating must be \+1 .*, got 3",
        "record 1, column 'triplets.rating'",
        names="consensus_abstract.mat",
    )
    folder("mismatched-pairs", refs, b, list(reversed(c)))
    case(
        a + "mismatched-pairs",
        None,
        "differs from",
        "record 1, line 1, column 'image_id'",
        names="abstract_candsC.json",
    )
    folder("deep-nesting", DEEPER_THAN_PYTHON, b, c)
    case(a + "deep-nesting", None, "nested too deeply", names="abstract48S.json")
    folder("missing-caption", refs, [{"image_id": 1}], c)
    case(
        a + "missing-caption",
        None,
        "record has no 'caption'",
        "record 1",
        names="abstract_candsB.json",
    )
    folder(
        "lone-surrogate",
        refs,
        b,
        '[{"image_id": 1, "caption": "\\ud800"}, {"image_id": 2, "caption": "c"}]',
    )
    case(a + "lone-surrogate", None, "lone surrogate", "record 1", names="abstract_candsC.json")


GOOD = "{good}/results.json"
GOOD_ANN = "{good}/captions.json"
GOOD_GRADED = "{good}/graded.csv"


def output_cases() -> None:
    """Output paths (issue 44): checked before any work, never an input, never shared."""
    o = "outputs/"
    results = dumps([{"image_id": 1, "caption": "a dog runs"}, {"image_id": 2, "caption": "a bus"}])
    graded = "id,candidate,references,score\n1,a dog,a dog runs,2\n2,a cat,a cat sits,3\n"

    def out_case(name, argv, message, content=results, **extra):
        case(o + name, content, message, None, argv=argv, **extra)

    out_case(
        "per-item-is-the-results.json",
        ["score", "--results", "{case}", "--annotations", GOOD_ANN, "--per-item", "{case}"],
        "--per-item .* is the --results file this run reads",
    )
    out_case(
        "json-is-the-annotations.json",
        ["compare", "--results", "{case}", GOOD, "--annotations", GOOD_ANN, "--json", GOOD_ANN],
        "--json .* is the --annotations file this run reads",
        names="captions.json",
    )
    out_case(
        "json-is-a-results-file.json",
        ["compare", "--results", GOOD, "{case}", "--annotations", GOOD_ANN, "--json", "{case}"],
        "--json .* is the --results file this run reads",
    )
    out_case(
        "json-in-a-missing-folder.json",
        [
            "compare",
            "--results",
            "{case}",
            GOOD,
            "--annotations",
            GOOD_ANN,
            "--json",
            "{out}/no-such-folder/out.json",
        ],
        "--json .*out.json: the folder .*no-such-folder does not exist",
        names="no-such-folder",
    )
    out_case(
        "per-item-in-a-missing-folder.json",
        [
            "score",
            "--results",
            "{case}",
            "--annotations",
            GOOD_ANN,
            "--per-item",
            "{out}/missing/items.csv",
        ],
        "--per-item .*items.csv: the folder .*missing does not exist",
        names="missing",
    )
    out_case(
        "json-where-nothing-can-be-written.json",
        [
            "compare",
            "--results",
            "{case}",
            GOOD,
            "--annotations",
            GOOD_ANN,
            "--json",
            "/proc/capeval-out.json",
        ],
        "--json /proc/capeval-out.json: cannot write in /proc",
        names="/proc",
    )
    out_case(
        "json-and-per-item-on-one-path.json",
        [
            "compare",
            "--results",
            "{case}",
            GOOD,
            "--annotations",
            GOOD_ANN,
            "--per-item",
            "{out}/same.json",
            "--json",
            "{out}/same.json",
        ],
        "--per-item and --json both write .*same.json: give each its own file",
        names="same.json",
    )
    out_case(
        "json-on-the-per-item-sidecar.json",
        [
            "compare",
            "--results",
            "{case}",
            GOOD,
            "--annotations",
            GOOD_ANN,
            "--per-item",
            "{out}/items.csv",
            "--json",
            "{out}/items.signatures.json",
        ],
        "the signatures of --per-item and --json both write .*items.signatures.json",
        names="items.signatures.json",
    )
    out_case(
        "per-item-a-folder.json",
        ["score", "--results", "{case}", "--annotations", GOOD_ANN, "--per-item", "{out}"],
        "--per-item must end in .csv or .json",
        names="--per-item",
    )
    out_case(
        "correlate-json-is-the-judgments.csv",
        ["correlate", "--judgments", "{case}", "--format", "graded", "--json", "{case}"],
        "--json .* is the --judgments file this run reads",
        content=graded,
    )
    out_case(
        "correlate-json-is-the-scores.csv",
        [
            "correlate",
            "--judgments",
            GOOD_GRADED,
            "--format",
            "graded",
            "--metric-scores",
            "{case}",
            "--json",
            "{case}",
        ],
        "--json .* is the --metric-scores file this run reads",
        content="id,mine\n1,0.5\n2,0.1\n3,0.3\n4,0.9\n",
    )
    folder = OUT / o / "json-is-a-file-of-the-folder"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "abstract48S.json").write_text(
        dumps([{"image_id": i, "caption": f"a scene {i}"} for i in (1, 2)])
    )
    (folder / "abstract_candsB.json").write_text(
        dumps([{"image_id": i, "caption": f"b {i}"} for i in (1, 2)])
    )
    (folder / "abstract_candsC.json").write_text(
        dumps([{"image_id": i, "caption": f"c {i}"} for i in (1, 2)])
    )
    case(
        o + "json-is-a-file-of-the-folder",
        None,
        "--json .*abstract_candsB.json is the abstract_candsB.json of --judgments this run reads",
        argv=[
            "correlate",
            "--judgments",
            "{case}",
            "--format",
            "abstract50s",
            "--json",
            "{case}/abstract_candsB.json",
        ],
    )


def option_cases() -> None:
    """Numeric options, names and splits: refused by the command line in one line, before
    any file is read (issue 44)."""
    o = "options/"
    results = dumps([{"image_id": 1, "caption": "a dog runs"}, {"image_id": 2, "caption": "a bus"}])
    graded = "id,candidate,references,score\n1,a dog,a dog runs,2\n2,a cat,a cat sits,3\n"
    compare = ["compare", "--results", "{case}", GOOD, "--annotations", GOOD_ANN]
    correlate = ["correlate", "--judgments", "{case}", "--format", "graded"]
    argparse_line = r"^capeval \w[\w-]*: error: "

    def opt(name, argv, message, option, content=results, prefix=argparse_line):
        case(o + name, content, message, None, argv=argv, names=option, prefix=prefix)

    opt(
        "compare-negative-seed.json",
        [*compare, "--seed", "-1"],
        "argument --seed: expected a whole number from 0",
        "--seed",
    )
    opt(
        "correlate-negative-seed.csv",
        [*correlate, "--seed", "-3"],
        "argument --seed: expected a whole number from 0",
        "--seed",
        graded,
    )
    opt(
        "perturb-negative-seed.json",
        [
            "perturb",
            "--candidate",
            "a dog",
            "--reference",
            "a dog",
            "--perturbation",
            "shuffle",
            "--seed",
            "-1",
        ],
        "expected a whole number",
        "--seed",
    )
    opt(
        "score-empty-annotations.json",
        ["score", "--results", "{case}", "--annotations", ""],
        "--annotations is empty: give a file name",
        "--annotations",
        prefix=r"^capeval: error: ",
    )
    opt(
        "perturb-candidate-beside-a-dataset.json",
        ["perturb", "--candidate", "a dog", "--reference", "a dog", "--perturbation", "shuffle",
         "--dataset", "demo-graded"],
        "--candidate, --reference: not used with --dataset demo-graded",
        "--candidate",
        prefix=r"^capeval: error: ",
    )  # fmt: skip
    opt(
        "score-cider-idf-without-cider.json",
        ["score", "--results", "{case}", "--annotations", GOOD_ANN, "--metrics", "bleu_4",
         "rouge_l", "--cider-idf", "coco-val2014"],
        r"--cider-idf: not used without cider_d among the metrics \(bleu_4 rouge_l\); leave it",
        "--cider-idf",
        prefix=r"^capeval: error: ",
    )  # fmt: skip
    opt(
        "compare-trials-with-paired-bs.json",
        [*compare, "--paired", "bs", "--trials", "50"],
        r"--trials: not used with --paired bs \(trials are approximate randomization's\); "
        "leave it out",
        "--trials",
        prefix=r"^capeval: error: ",
    )
    opt(
        "correlate-seed-without-resamples.csv",
        [*correlate, "--seed", "5"],
        r"--seed: not used with a graded set without --resamples \(it seeds the bootstrap "
        r"resamples\); leave it out",
        "--seed",
        graded,
        prefix=r"^capeval: error: ",
    )
    opt(
        "compare-one-resample.json",
        [*compare, "--resamples", "1"],
        "argument --resamples: expected a whole number from 2 to 1,000,000, got 1",
        "--resamples",
    )
    opt(
        "compare-negative-resamples.json",
        [*compare, "--resamples", "-5"],
        "argument --resamples: expected a whole number from 2 to 1,000,000",
        "--resamples",
    )
    opt(
        "correlate-one-resample.csv",
        [*correlate, "--resamples", "1"],
        "argument --resamples: expected 0 .* or at least 2",
        "--resamples",
        graded,
    )
    opt(
        "correlate-negative-workers.csv",
        [*correlate, "--workers", "-1"],
        "argument --workers: expected a whole number >= 0",
        "--workers",
        graded,
    )
    opt(
        "compare-negative-workers.json",
        [*compare, "--workers", "-2"],
        "argument --workers: expected a whole number >= 0",
        "--workers",
    )
    opt(
        "compare-zero-trials.json",
        [*compare, "--trials", "0"],
        "argument --trials: expected a whole number from 1 to 1,000,000",
        "--trials",
    )
    opt(
        "compare-text-seed.json",
        [*compare, "--seed", "abc"],
        "argument --seed: expected a whole number, got 'abc'",
        "--seed",
    )
    opt(
        "compare-zero-caption-limit.json",
        [*compare, "--max-caption-tokens", "0"],
        "argument --max-caption-tokens: expected a whole number >= 1",
        "--max-caption-tokens",
    )
    opt(
        "perturb-no-images.json",
        ["perturb", "--dataset", "demo-graded", "--perturbation", "shuffle", "--images", "0"],
        "argument --images: expected a whole number >= 1",
        "--images",
    )
    cli = "^capeval: error: "
    opt(
        "compare-empty-names.json",
        [*compare, "--names", ""],
        "--names is empty",
        "--names",
        prefix=cli,
    )
    opt(
        "compare-blank-names.json",
        [*compare, "--names", "a, "],
        "--names: name 2 .* is empty",
        "--names",
        prefix=cli,
    )
    opt(
        "compare-too-few-names.json",
        [*compare, "--names", "mine"],
        "--names gives 1 name.* for 2 results file",
        "--names",
        prefix=cli,
    )
    opt(
        "compare-same-file-twice.json",
        ["compare", "--results", "{case}", "{case}", "--annotations", GOOD_ANN],
        "--results lists .* twice",
        "--results",
        prefix=cli,
    )
    opt(
        "compare-names-twice.json",
        [*compare, "--names", "a,a"],
        "--names: 'a' is given twice",
        "--names",
        prefix=cli,
    )
    opt(
        "score-split-on-coco-captions.json",
        ["score", "--results", "{case}", "--annotations", GOOD_ANN, "--split", "val"],
        "--split val: references file .*captions.json has no splits",
        "--split",
        prefix=cli,
    )
    opt(
        "compare-split-on-gts.json",
        [
            "compare",
            "--results",
            "{case}",
            GOOD,
            "--annotations",
            "{good}/gts.json",
            "--split",
            "train",
        ],
        "--split train: references file .*gts.json has no splits",
        "--split",
        prefix=cli,
    )
    opt(
        "compare-caption-over-the-limit.json",
        [*compare, "--max-caption-tokens", "2"],
        "caption has 3 tokens, above the 2-token limit \\(raise it with --max-caption-tokens",
        "--max-caption-tokens",
        prefix=cli,
    )
    opt(
        "correlate-missing-judgments.csv",
        ["correlate", "--judgments", "{case}/nothing-here.csv", "--format", "graded"],
        "--judgments .*nothing-here.csv: no such file or folder",
        "--judgments",
        graded,
        prefix=cli,
    )


THUMB_ROW = {
    "SYS": "Up-Down",
    "seg_id": "974",
    "set_id": 5,
    "hyp": "a group of people",
    "image": "COCO_val2014_000000000974.jpg",
    "P": 4.0,
    "R": 3.0,
    "Fl": 0.0,
    "Inc": 0.0,
    "Con": 0.0,
    "human_score": 3.5,
}


def thumb_cases() -> None:
    """THumB 1.0 rows: its systems only, captions as text (issue 44)."""
    t = "thumb/"

    def rows(**change: Any) -> str:
        other = dict(THUMB_ROW, SYS="VinVL-base")
        return dumps(THUMB_ROW) + "\n" + dumps(dict(other, **change)) + "\n"

    case(
        t + "unknown-system.jsonl",
        rows(SYS="My-Model"),
        "SYS 'My-Model' is not one of THumB",
        "line 2, column 'SYS'",
    )
    case(
        t + "null-caption.jsonl", rows(hyp=None), "expected text, got null", "line 2, column 'hyp'"
    )
    case(
        t + "number-caption.jsonl",
        rows(hyp=42),
        "expected text, got a number 42",
        "line 2, column 'hyp'",
    )
    case(
        t + "list-caption.jsonl",
        rows(hyp=["a", "dog"]),
        "expected text, got a list",
        "line 2, column 'hyp'",
    )
    case(
        t + "precision-off-the-scale.jsonl",
        rows(P=7.0),
        "P is 7, outside THumB's 1 to 5",
        "line 2, column 'P'",
    )
    case(
        t + "human-score-not-the-sum.jsonl",
        rows(human_score=99.0),
        r"human_score is 99, but \(P \+ R\) / 2 \+ Fl \+ Con \+ Inc is 3.5",
        "line 2, column 'human_score'",
    )


def scores_cases() -> None:
    """Scores files joined to good/graded.csv (issue 44): long files pivoted, their damage
    refused with the line."""
    s = "scores/"
    long = "id,metric,score\n" + "".join(f"{i},mine,0.{i}\n" for i in range(1, 5))
    case(
        s + "long-repeated-score.csv",
        long + "2,mine,0.7\n",
        "a second 'mine' score for the same ids \\(first on line 3\\)",
        "line 6",
    )
    case(
        s + "long-two-value-columns.csv",
        "id,metric,score,other\n" + "".join(f"{i},mine,0.{i},1\n" for i in range(1, 5)),
        "a long scores file has .* one column of values",
        "line 1, column 'metric'",
    )
    case(
        s + "long-missing-score.csv",
        long + "".join(f"{i},theirs,0.{i}\n" for i in range(1, 4)),
        "no 'theirs' score for id '4'",
        "line 5, column 'theirs'",
    )
    case(
        s + "long-bad-metric-name.csv",
        "id,metric,score\n" + "".join(f"{i},my metric,0.{i}\n" for i in range(1, 5)),
        "external metric name 'my metric'",
        "column 'my metric'",
    )
    case(
        s + "long-text-value.csv",
        long.replace("0.3", "high"),
        "not a number: 'high'",
        "line 4, column 'mine'",
    )
    case(
        s + "wide-text-in-a-score.csv",
        "id,set_id,mine\n1,5,0.1\n2,6,0.2\n3,7,n/a\n4,8,0.4\n",
        "not a number: 'n/a'",
        "line 4, column 'mine'",
    )
    case(
        s + "semicolons-and-decimal-commas.csv",
        "id;mine\n" + "".join(f"{i};0,{i}\n" for i in range(1, 5)),
        "got 2; the header has a single column containing ';': is the file separated by ';'",
        "line 2",
    )
    case(
        s + "only-ids.csv",
        "id,set_id,image_id\n1,5,9\n2,6,9\n3,7,9\n4,8,9\n",
        "no metric column besides the ids",
        "line 1",
    )


def reference_cases() -> None:
    """References as distributed (issue 44), run like annotations/."""
    a = "annotations/"
    images = [
        {"split": "test", "cocoid": i, "sentences": [{"raw": f"a photo {i}"}, {"raw": "a thing"}]}
        for i in (1, 2)
    ]
    case(
        a + "karpathy-image-twice.json",
        dumps({"images": [*images, images[0]]}),
        "cocoid 1 is listed twice in split 'test' \\(records 1 and 3\\)",
        "list 'images', record 3, line 1, column 'cocoid'",
    )
    empty = [dict(images[0], sentences=[]), images[1]]
    case(a + "karpathy-no-sentences.json", dumps({"images": empty}), "image_id 1 has no reference")
    case(a + "gts-empty-list.json", dumps({"1": [], "2": ["a bus"]}), "image_id 1 has no reference")
    case(
        a + "gts-null-reference.json",
        dumps({"1": ["a dog", None], "2": ["a bus"]}),
        "expected text, got null",
        "image_id 1, record 2, line 1, column 'caption'",
    )


def more_judgment_cases() -> None:
    """Captions that are no text, and sets without labels (issue 44)."""
    rec = {"candidate": "a dog", "references": ["a dog runs"], "score": 1}
    case(
        "graded/null-candidate.json",
        dumps([rec, dict(rec, candidate=None)]),
        "expected text, got null",
        "record 2, line 1, column 'candidate'",
    )
    case(
        "graded/number-candidate.jsonl",
        dumps(rec) + "\n" + dumps(dict(rec, candidate=7)) + "\n",
        "expected text, got a number 7",
        "line 2, column 'candidate'",
    )
    pair = {"candidate_a": "a dog", "candidate_b": "a cat", "references": ["z"], "preferred": "a"}
    case(
        "pairwise/null-candidate.json",
        dumps([dict(pair, candidate_b=None)]),
        "expected text, got null",
        "record 1, line 1, column 'candidate_b'",
    )
    folder = OUT / "abstract50s" / "no-labels"
    folder.mkdir(parents=True, exist_ok=True)
    for file, prefix in (
        ("abstract48S.json", "a scene"),
        ("abstract_candsB.json", "b"),
        ("abstract_candsC.json", "c"),
    ):
        (folder / file).write_text(
            dumps([{"image_id": i, "caption": f"{prefix} {i}"} for i in (1, 2)])
        )
    case(
        "abstract50s/no-labels",
        None,
        "None of the 2 pairs has a human label",
        names="consensus_abstract.mat",
    )
    folder = OUT / "flickr8k-expert" / "no-token-file"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ExpertAnnotations.txt").write_text("a.jpg\tb.jpg#1\t1\t2\t1\n")
    case(
        "flickr8k-expert/no-token-file",
        None,
        "Flickr8k.token.txt not found beside ExpertAnnotations.txt: .*put it in the same folder",
        names="Flickr8k.token.txt",
    )


def cache_files() -> None:
    """Damaged cache entries (for test_cache_repair): variants of one valid score entry."""
    d = OUT / "caches"
    d.mkdir(parents=True, exist_ok=True)
    good = {"rouge_l": np.array([[0.5, 0.25, 1.0, 0.0, 0.75]])}
    buf = io.BytesIO()
    np.savez(buf, **good)
    data = buf.getvalue()
    (d / "scores-truncated.npz").write_bytes(data[: len(data) // 2])
    flipped = bytearray(data)
    flipped[data.index(b"\x93NUMPY") + 140] ^= 0xFF  # a byte of the array data: bad CRC-32
    (d / "scores-bad-crc.npz").write_bytes(bytes(flipped))
    (d / "scores-not-a-zip.npz").write_bytes(b"not an archive at all\n")
    buf = io.BytesIO()
    np.savez(buf, rouge=good["rouge_l"])
    (d / "scores-renamed-key.npz").write_bytes(buf.getvalue())
    buf = io.BytesIO()
    np.savez(buf, rouge_l=good["rouge_l"][:, :3])
    (d / "scores-wrong-length.npz").write_bytes(buf.getvalue())
    buf = io.BytesIO()
    np.savez(buf, rouge_l=np.array([["a", "b", "c", "d", "e"]]))
    (d / "scores-text-values.npz").write_bytes(buf.getvalue())
    with zipfile.ZipFile(d / "scores-empty-archive.npz", "w"):
        pass
    (d / "spice-rows.json").write_text(
        json.dumps(
            [
                '[["dog"',  # truncated JSON
                '{"dog": 1}',  # not a list
                '[["dog", 1]]',  # not strings
                "[[]]",  # an empty tuple
                '[["a", "b", "c", "d"]]',  # four elements
                "\u0000\u0001garbage",
            ],
            indent=1,
        )
        + "\n"
    )
    (d / "spice-not-a-database.sqlite").write_bytes(b"SQLite format 2\x00" + bytes(range(256)) * 8)


def main() -> None:
    global OUT
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path)
    OUT = parser.parse_args().out
    for sub in (
        "results",
        "annotations",
        "graded",
        "pairwise",
        "flickr8k-expert",
        "flickr8k-cf",
        "composite",
        "pascal50s",
        "abstract50s",
        "outputs",
        "options",
        "thumb",
        "scores",
        "caches",
        "good",
    ):
        shutil.rmtree(OUT / sub, ignore_errors=True)
    good_files()
    results_cases()
    annotations_cases()
    graded_cases()
    pairwise_cases()
    flickr_cases()
    pascal_cases()
    abstract_cases()
    output_cases()
    option_cases()
    thumb_cases()
    scores_cases()
    reference_cases()
    more_judgment_cases()
    cache_files()
    (OUT / "expected.json").write_text(json.dumps(CASES, indent=1, ensure_ascii=True) + "\n")
    print(f"{len(CASES)} cases written to {OUT}")


OUT = Path("tests/malformed")

if __name__ == "__main__":
    main()
