"""Judgment files given as (name, bytes), as the app's uploads give them: loaded like files on
disk, and named as uploaded in the set's source and in every error, never by the temporary
folder they pass through (``capeval_core.judgments.uploads``)."""

from __future__ import annotations

import hashlib

import pytest

from capeval_core import JudgmentFormatError, files
from capeval_core.judgments import load_judgments
from capeval_core.judgments.uploads import (
    join_uploaded_scores,
    load_uploaded,
    uploaded_columns,
)

ROWS = [
    ("a dog runs on the grass", "a dog running on grass|||a brown dog on grass", 5, 0.9),
    ("a dog on grass", "a dog running on grass|||a brown dog on grass", 4, 0.7),
    ("a cat sits on a mat", "a cat on a mat|||a kitten on a rug", 5, 0.8),
    ("a cat", "a cat on a mat|||a kitten on a rug", 3, 0.4),
]
#: a graded file in its own column names (mapped to the generic format's on upload)
OWN = "id,caption,refs,quality,metric:mine,theirs\n" + "".join(
    f"r{i},{c},{r},{s},{m},{1 - m}\n" for i, (c, r, s, m) in enumerate(ROWS)
)
PLAIN = "id,candidate,references,quality\n" + "".join(
    f"r{i},{c},{r},{s}\n" for i, (c, r, s, _) in enumerate(ROWS)
)
MAPPING = (("caption", "candidate"), ("refs", "references"), ("theirs", "metric:theirs"))


def test_an_upload_loads_like_the_file_and_is_named_as_uploaded(tmp_path) -> None:
    path = tmp_path / "plain.csv"
    path.write_text(PLAIN)
    on_disk = load_judgments(path, "graded")
    jset = load_uploaded([("some/folder/plain.csv", PLAIN.encode())], "graded")
    assert jset.source == ("plain.csv",)
    assert jset.items == on_disk.items and jset.describe() == "4 read, 4 scored"


def test_columns_of_an_upload() -> None:
    assert uploaded_columns("mine.csv", OWN.encode()) == (
        ["id", "caption", "refs", "quality", "metric:mine", "theirs"],
        ["quality", "theirs"],
    )


def test_a_mapped_upload_is_signed_with_the_file_as_uploaded() -> None:
    jset = load_uploaded([("mine.csv", OWN.encode())], "graded", mapping=MAPPING)
    assert jset.source == ("mine.csv",)  # neither the folder nor the mapped copy
    assert jset.candidates == [c for c, *_ in ROWS] and jset.score_names == ("quality",)
    sha = hashlib.sha256(OWN.encode()).hexdigest()[:12]
    assert jset.external_names == ("mine", "theirs")
    assert [str(e.signature) for e in jset.external] == [
        f"external:mine|sha256:{sha}",
        f"external:theirs|sha256:{sha}",
    ]
    # a mapping given as a dict reads the same
    again = load_uploaded([("mine.csv", OWN.encode())], "graded", mapping=dict(MAPPING))
    assert again.content_digest == jset.content_digest


def test_the_same_rows_uploaded_under_another_name_or_mapping_are_another_set() -> None:
    """The server holds sets by digest: a second person's upload of the same rows under
    another name took the first's place, and the first person's reload showed the other
    file's name, its column mapping in the URL and its signatures download."""
    first = load_uploaded([("plain.csv", PLAIN.encode())], "graded")
    renamed = load_uploaded([("mine.csv", PLAIN.encode())], "graded")
    own = PLAIN.replace("candidate,references", "caption,refs", 1)
    mapped = load_uploaded(
        [("plain.csv", own.encode())],
        "graded",
        mapping={"caption": "candidate", "refs": "references"},
    )
    assert first.items == renamed.items == mapped.items
    assert len({first.content_digest, renamed.content_digest, mapped.content_digest}) == 3
    again = load_uploaded([("plain.csv", PLAIN.encode())], "graded")
    assert again.content_digest == first.content_digest


def test_score_columns_choose_the_human_scores() -> None:
    jset = load_uploaded(
        [("mine.csv", OWN.encode())], "graded", mapping=MAPPING[:2], score_columns=["theirs"]
    )
    assert jset.score_names == ("theirs",)
    assert jset.human("theirs").tolist() == pytest.approx([1 - m for *_, m in ROWS])


def test_errors_name_the_uploaded_files_not_a_temporary_folder() -> None:
    files = [("Flickr8k.token.txt", b"a.jpg#0\ta dog\n"), ("notes.txt", b"x")]
    with pytest.raises(JudgmentFormatError) as info:
        load_uploaded(files, "flickr8k-expert")
    assert str(info.value) == (
        "ExpertAnnotations.txt: ExpertAnnotations.txt not found among the uploaded files"
    )


@pytest.mark.parametrize(
    ("fmt", "companion", "main"),
    [
        ("flickr8k-expert", "Flickr8k.token.txt", "ExpertAnnotations.txt"),
        ("flickr8k-cf", "Flickr8k.token.txt", "CrowdFlowerAnnotations.txt"),
        ("pascal50s", "pascal50S.mat", "pair_pascal.mat"),
        ("pascal50s", "consensus_pascal.mat", "pair_pascal.mat"),
        ("thumb", "mscoco_references.json", "mscoco_THumB-1.0.jsonl"),
    ],
)
def test_a_companion_uploaded_alone_is_not_read_as_the_main_file(
    fmt: str, companion: str, main: str
) -> None:
    """Before, the token file alone was read as the annotations ("Flickr8k.token.txt, line 1:
    expected 5 fields"): the message blamed the one good file."""
    with pytest.raises(JudgmentFormatError) as info:
        load_uploaded([(companion, b"a.jpg#0\ta dog\n")], fmt)
    assert str(info.value).startswith(f"{main}: ")
    assert "not found among the uploaded files" in str(info.value)
    assert companion not in str(info.value).split(": ", 1)[0]


def test_a_missing_companion_is_asked_for_as_an_upload() -> None:
    with pytest.raises(JudgmentFormatError) as info:
        load_uploaded([("ExpertAnnotations.txt", b"a.jpg\ta.jpg#0\t1\t1\t1\n")], "flickr8k-expert")
    assert str(info.value).endswith("upload it too")
    assert "folder" not in str(info.value)


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        (
            "mine.xyz",
            b"a,b\n1,2\n",
            "mine.xyz: cannot tell the format from the suffix 'xyz': name the file .csv, "
            ".tsv, .json or .jsonl, or pass `file_format`",
        ),
        (
            "mine.csv",
            b"\xff\xfe\x00garbage",
            "mine.csv: this file is UTF-16 (little-endian) text (byte-order mark at offset 0); "
            "save it as UTF-8",
        ),
    ],
)
def test_errors_of_one_uploaded_file_name_it(name: str, data: bytes, message: str) -> None:
    with pytest.raises(JudgmentFormatError) as info:
        uploaded_columns(name, data)
    assert str(info.value) == message
    with pytest.raises(JudgmentFormatError) as info:
        load_uploaded([(name, data)], "graded")
    assert str(info.value) == message


def test_unmapped_columns_are_named_with_the_file() -> None:
    with pytest.raises(JudgmentFormatError) as info:
        load_uploaded([("mine.csv", OWN.encode())], "graded")
    assert str(info.value).startswith(
        "mine.csv, line 1, column 'candidate': missing required column 'candidate'"
    )


def test_a_scores_file_joins_on_the_ids_and_names_itself_when_it_does_not() -> None:
    jset = load_uploaded([("plain.csv", PLAIN.encode())], "graded")
    good = "id,clip\n" + "".join(f"r{i},{r[3]}\n" for i, r in enumerate(ROWS))
    joined = join_uploaded_scores(jset, "clip.csv", good.encode())
    assert joined.external_names == ("clip",) and joined.items_digest == jset.items_digest
    sha = hashlib.sha256(good.encode()).hexdigest()[:12]
    assert str(joined.external[0].signature) == f"external:clip|sha256:{sha}"
    with pytest.raises(JudgmentFormatError) as info:
        join_uploaded_scores(jset, "clip.csv", b"id,clip\nr0,0.5\n")
    assert str(info.value) == (
        "clip.csv, column 'id': 3 of the set's 4 ids have no row here (joined on ['id']): "
        "'r1', 'r2', 'r3'; the set is unchanged"
    )


def test_a_warning_of_the_loader_is_a_note_of_an_uploaded_set() -> None:
    """A page shows the set's notes, and a cached load warns only once: the warning that
    references look joined with '|' is kept as a note."""
    data = b"candidate,references,score\na,a dog|a pup,1\nb,a cat|a kitten,2\n"
    jset = load_uploaded([("piped.csv", data)], "graded")
    assert any(n.startswith("piped.csv: every row has one reference") for n in jset.notes)


def _records(rows):
    return [{"caption": c, "refs": r.split("|||"), "quality": s} for c, r, s, _ in rows]


@pytest.mark.parametrize("suffix", ["json", "jsonl"])
def test_a_mapped_json_upload_keeps_every_check_and_every_line(suffix) -> None:
    """The mapping rewrote a JSON file with ``json.loads``, which keeps the last of a key given
    twice (a grade of 1 and 5 was read as 5) and moves every record to other lines."""
    import json

    records = _records(ROWS)
    mapping = (("caption", "candidate"), ("refs", "references"))
    if suffix == "json":
        good = json.dumps(records, indent=2)
        twice = good.replace('"quality": 3', '"quality": 1,\n    "quality": 3')
        bad = good.replace('"quality": 3', '"quality": "three"')
        bad_line = files.json_line(good, [3])  # where the fourth record opens
    else:
        good = "\n".join(json.dumps(r) for r in records) + "\n"
        twice = good.replace('"quality": 3', '"quality": 1, "quality": 3')
        bad = good.replace('"quality": 3', '"quality": "three"')
        bad_line = 4
    name = f"mine.{suffix}"
    jset = load_uploaded([(name, good.encode())], "graded", mapping=mapping)
    assert jset.candidates == [c for c, *_ in ROWS]
    with pytest.raises(JudgmentFormatError, match="key 'quality' given twice"):
        load_uploaded([(name, twice.encode())], "graded", mapping=mapping)
    where = rf"{name}, record 4, line {bad_line}, column 'quality'"
    with pytest.raises(JudgmentFormatError, match=where):
        load_uploaded([(name, bad.encode())], "graded", mapping=mapping)


@pytest.mark.parametrize("suffix", ["csv", "json", "jsonl"])
def test_a_column_mapped_onto_a_name_the_file_has_is_said_as_such(suffix) -> None:
    """A file with its own ``candidate`` column (a system's name) and ``caption``: mapping
    caption -> candidate was refused as "key 'candidate' given twice" of a JSON file that
    gives no key twice (before, the later key won: names scored as captions)."""
    import json

    rows = [{"candidate": "sys1", "caption": c, "refs": r, "quality": s} for c, r, s, _ in ROWS]
    if suffix == "csv":
        text = "candidate,caption,refs,quality\n" + "".join(
            f"sys1,{c},{r},{s}\n" for c, r, s, _ in ROWS
        )
    elif suffix == "json":
        text = json.dumps([{**r, "refs": r["refs"].split("|||")} for r in rows], indent=1)
    else:
        text = "".join(json.dumps({**r, "refs": r["refs"].split("|||")}) + "\n" for r in rows)
    mapping = (("caption", "candidate"), ("refs", "references"))
    with pytest.raises(JudgmentFormatError) as info:
        load_uploaded([(f"mine.{suffix}", text.encode())], "graded", mapping=mapping)
    said = str(info.value)
    assert said.startswith(f"mine.{suffix}, line ") and "given twice" not in said
    assert "'caption' is mapped to 'candidate', a column the file has too" in said
    # the file's own candidate column mapped away too: the mapping is taken
    both = (*mapping, ("candidate", "system"))
    jset = load_uploaded([(f"mine.{suffix}", text.encode())], "graded", mapping=both)
    assert jset.candidates == [c for c, *_ in ROWS]


def test_a_blank_distractor_of_an_upload_is_said_with_its_file_line_and_column() -> None:
    """Robustness shows the set's summary: an empty candidate_b (a distractor that always
    loses) was loaded as "6 read, 6 scored" and nothing else."""
    data = (
        b"id,image_id,candidate_a,candidate_b,references,category,preferred\n"
        b"p1,i1,a dog runs,a cat sits,a dog running,share-scene,a\n"
        b"p3,i3,two cats on a couch,,two cats sleeping on a couch|||a pair of cats resting "
        b"on a sofa,share-scene,a\n"
    )
    jset = load_uploaded([("distractors.csv", data)], "pairwise")
    assert str(jset) == (
        "pairwise (distractors.csv): 2 read, 2 scored (blank captions scored as given: "
        "column 'candidate_b', line 3)"
    )


def test_errors_under_a_mapping_name_the_files_own_columns() -> None:
    """Loaded through a column mapping, an error listed the renamed copy's header
    (['candidate', 'grade'] of a file whose header is caption,grade) and named a cell by its
    canonical name: the user looked in vain for a 'candidate' column. It now lists the file's
    own header with what each mapped column was read as, and names the file's column."""
    mapping = (("caption", "candidate"),)
    with pytest.raises(JudgmentFormatError) as info:
        load_uploaded([("mine.csv", b"caption,grade\na dog,3\n")], "graded", mapping=mapping)
    assert str(info.value).endswith(
        "columns found: ['caption', 'grade'] ('caption' read as 'candidate')"
    )
    mapping = (("caption", "candidate"), ("refs", "references"))
    with pytest.raises(JudgmentFormatError) as info:
        load_uploaded([("mine.csv", b"caption,refs,q\na,x,3\nb,,4\n")], "graded", mapping=mapping)
    assert str(info.value) == (
        "mine.csv, line 3, column 'refs' (read as 'references'): no references: every "
        "candidate needs at least one"
    )
    assert info.value.column == "refs"
    text = b'{"caption": "a", "refs": ["x"], "q": 3}\n{"caption": null, "refs": ["y"], "q": 1}\n'
    with pytest.raises(JudgmentFormatError) as info:
        load_uploaded([("mine.jsonl", text)], "graded", mapping=mapping)
    assert str(info.value) == (
        "mine.jsonl, record 2, line 2, column 'caption' (read as 'candidate'): expected text, "
        "got null"
    )
    pairs = b"a,b,grade\na dog,a cat,3\n"
    with pytest.raises(JudgmentFormatError) as info:
        load_uploaded(
            [("p.csv", pairs)], "pairwise", mapping=(("a", "candidate_a"), ("b", "candidate_b"))
        )
    assert "columns found: ['a', 'b', 'grade'] ('a' read as 'candidate_a', 'b' read as " in (
        str(info.value)
    )


def test_a_mapped_sets_summary_names_the_files_own_columns() -> None:
    data = b"caption,refs,q\na dog,x,\n,|||y,4\n"
    jset = load_uploaded(
        [("mine.csv", data)], "graded", mapping=(("caption", "candidate"), ("refs", "references"))
    )
    assert jset.blank == (("caption", "line 3"),)
    assert jset.blank_references == (("refs", "line 3"),)
    assert jset.describe() == (
        "2 read, 1 dropped (missing human score in column 'q' (line 2): 1), 1 scored (blank "
        "captions scored as given: column 'caption', line 3; blank references scored as "
        "given: column 'refs', line 3)"
    )
