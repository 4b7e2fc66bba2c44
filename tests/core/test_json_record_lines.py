"""A bad record of a JSON file is named with the line it starts on, as well as its number:
results, references in their three shapes and the judgments' COCO references, written the
way people write them (indented, one record per line or spread over several)."""

from __future__ import annotations

import json

import pytest

from capeval_core import files
from capeval_core.coco_files import load_coco
from capeval_core.errors import InputError, JudgmentFormatError
from capeval_core.judgments.coco import load_coco_references

GOOD_RESULTS = [{"image_id": 1, "caption": "a dog runs"}, {"image_id": 2, "caption": "a bus"}]
GOOD_REFS = {"1": ["a dog running"], "2": ["a red bus"]}
GOOD_ANN = {"image_id": 1, "id": 1, "caption": "a dog running"}


def _write(path, value, indent=2):
    path.write_text(json.dumps(value, indent=indent))
    return path


def _error(results, refs, tmp_path):
    r = _write(tmp_path / "r.json", results)
    a = _write(tmp_path / "a.json", refs)
    with pytest.raises(InputError) as info:
        load_coco(r, a)
    return str(info.value)


def test_a_results_record_is_named_with_its_line(tmp_path):
    results = [*GOOD_RESULTS, {"image_id": 3, "caption": 5}]
    message = _error(results, {**GOOD_REFS, "3": ["a cat"]}, tmp_path)
    # indent=2: "[", then four lines per record; record 3 opens on line 10
    assert "record 3, line 10, column 'caption': expected text" in message


def test_a_caption_given_twice_is_named_with_its_line(tmp_path):
    results = [*GOOD_RESULTS, {"image_id": 1, "caption": "again"}]
    assert "record 3, line 10: image_id 1 has more than one caption" in _error(
        results, GOOD_REFS, tmp_path
    )


def test_each_reference_shape_names_the_line(tmp_path):
    gts = {"1": ["a dog running"], "2": ["a red bus", ["nested"]]}
    assert "image_id 2, record 2, line 7, column 'caption'" in _error(GOOD_RESULTS, gts, tmp_path)
    coco = {
        "images": [{"id": 1}, {"id": 2}],
        "annotations": [{"image_id": 1, "caption": "a dog"}, {"image_id": 2}],
    }
    message = _error(GOOD_RESULTS, coco, tmp_path)
    # the references file is called so in every shape (a COCO file's was "annotations file")
    assert "references file" in message
    assert "list 'annotations', record 2, line 15: missing field 'caption'" in message
    karpathy = {
        "images": [
            {"split": "test", "cocoid": 1, "sentences": [{"raw": "a dog"}]},
            {"split": "test", "cocoid": [2], "sentences": [{"raw": "a bus"}]},
        ]
    }
    assert "list 'images', record 2, line 12, column 'cocoid'" in _error(
        GOOD_RESULTS, karpathy, tmp_path
    )


def test_an_upload_names_the_line_too(tmp_path):
    refs = _write(tmp_path / "a.json", GOOD_REFS)
    data = json.dumps([GOOD_RESULTS[0], {"image_id": 2}], indent=1).encode()
    with pytest.raises(InputError, match=r"results file up\.json, record 2, line 6: missing"):
        load_coco(("up.json", data), refs)


def test_judgments_coco_references_name_the_line(tmp_path):
    path = tmp_path / "captions.json"
    anns = [{"image_id": 1, "id": 1, "caption": "a dog"}, {"image_id": [1], "caption": "x"}]
    _write(path, {"annotations": anns})
    with pytest.raises(JudgmentFormatError, match=r"record 2, line 8"):
        load_coco_references(path)
    _write(path, {"annotations": [anns[0], {"image_id": 1}]})
    with pytest.raises(JudgmentFormatError, match=r"record 2, line 8"):
        load_coco_references(path)


@pytest.mark.parametrize(
    ("text", "path", "line"),
    [
        ("[\n1,\n\n[2, 3],\n4]", [2], 5),
        ("[\n1,\n\n[2, 3],\n4]", [1, 1], 4),
        ('{"a": {"b\\"c": [0, {"d": 1}]},\n "e": [\n 7]}', ["e", 0], 3),
        ('{"a": {"b\\"c": [0,\n{"d": 1}]}}', ["a", 'b"c', 1], 2),
        ("[1, 2]", [2], None),  # no such record
        ('{"a": 1}', ["b"], None),
        ("[1, 2]", ["a"], None),  # a key asked of a list
        ("[1, 2", [1], 1),  # a text cut short still names what it can
        ("[1 2]", [1], None),
    ],
)
def test_json_line_finds_a_value_or_says_none(text, path, line):
    assert files.json_line(text, path) == line


def test_an_images_entry_is_named_by_its_place_in_the_file(tmp_path):
    """The ids of a COCO file's ``images`` were checked after entries that are no objects
    were dropped, so the record named was one too low past such an entry."""
    refs = {"images": [{"id": 1}, "junk", {"id": [2]}], "annotations": [GOOD_ANN]}
    message = _error(GOOD_RESULTS[:1], refs, tmp_path)
    assert "list 'images', record 3, line 7, column 'id'" in message


def test_records_count_from_one_as_the_lines_beside_them(tmp_path):
    """The message "record 4 (line 6)" named the fifth record: records counted from 0 while
    the lines and columns beside them count from 1. One record a line after "[": record n is
    on line n + 1."""
    from capeval_core.judgments import load_judgments
    from capeval_core.systems.loading import load_systems

    rows = [{"image_id": i, "caption": f"caption {i}"} for i in range(1, 5)]
    r = tmp_path / "r.json"
    r.write_text("[\n" + ",\n".join(json.dumps(x) for x in [*rows, {"image_id": 5}]) + "\n]")
    a = _write(tmp_path / "a.json", {str(i): ["a ref"] for i in range(1, 6)})
    with pytest.raises(InputError, match=r"r\.json, record 5, line 6: missing field 'caption'"):
        load_coco(r, a)
    # a list of several records: each counted from 1 too
    twice = [*rows, rows[1]]
    r.write_text("[\n" + ",\n".join(json.dumps(x) for x in twice) + "\n]")
    with pytest.raises(InputError, match=r"image_id\(s\) have more than one caption .*: 2 \("
                       r"records 2, 5\)"):  # fmt: skip
        load_systems([r], a)
    graded = tmp_path / "g.jsonl"
    good = {"candidate": "a dog", "references": ["a dog runs"], "score": 3}
    graded.write_text("\n".join(json.dumps(x) for x in [good, good, {**good, "score": None}]))
    js = load_judgments(graded, "graded")
    assert js.dropped_at == {"missing human score in column 'score'": "record 3, line 3"}


def test_a_key_given_twice_is_named_with_its_record(tmp_path):
    """A repeated key was placed by line and column only: on a results file written on one
    line, that is column 129 of line 1, and no record. The record of a top-level list is
    numbered; deeper, the object's JSON path is said."""
    r = tmp_path / "r.json"
    r.write_text(
        '[{"image_id": 1, "caption": "a dog runs"}, {"image_id": 2, "image_id": 3, "caption": "x"}]'
    )
    a = _write(tmp_path / "a.json", GOOD_REFS)
    with pytest.raises(InputError) as info:
        load_coco(r, a)
    assert str(info.value) == (
        f"results file {r}, record 2, line 1, column 60: invalid JSON: key 'image_id' given "
        "twice in one object"
    )
    a.write_text(
        '{"annotations": [\n {"image_id": 1, "caption": "a"},\n'
        ' {"image_id": 2, "caption": "b", "caption": "c"}]}'
    )
    with pytest.raises(InputError) as info:
        load_coco(_write(r, GOOD_RESULTS), a)
    assert str(info.value) == (
        f"references file {a}, line 3, column 34: invalid JSON: key 'caption' given twice in "
        "one object (at annotations[1])"
    )


@pytest.mark.parametrize(
    ("text", "pos", "path"),
    [
        ('[{"a": 1}, {"b": 2, "b": 3}]', 20, [1]),
        ('{"x": {"y": [1, {"z": 1, "z": 2}]}}', 25, ["x", "y", 1]),
        ('{"a": 1, "a": 2}', 9, []),
        ("[1, 2", 4, []),  # a text that does not read: no record, never an error
    ],
)
def test_json_path_at_finds_the_innermost_container(text, pos, path):
    assert files.json_path_at(text, pos) == path
