"""Blank captions are scored as given and said (``JudgmentSet.blank``, "blank captions scored
as given: column ..., line ..."): the dataset loaders' blank candidates, on small files in
each dataset's format (the published files have none, a hand-edited copy can), and the
generic files' blank references beside filled ones."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.io import savemat

from capeval_core.errors import JudgmentFormatError
from capeval_core.judgments import load_judgments
from capeval_core.judgments.scoring import JudgmentScores, on_common_items
from tests.core.consensus_files import (
    PASCAL_ROWS,
    write_abstract,
    write_pascal_pairs,
    write_pascal_refs,
    write_triplets,
)
from tests.core.test_judgments import caption, write_token

THUMB = Path(__file__).resolve().parent.parent / "golden" / "thumb" / "mscoco_THumB-1.0.jsonl"


def test_thumb_blank_hyp_is_scored_and_said(tmp_path):
    rows = [json.loads(line) for line in THUMB.read_text().splitlines()]
    rows[1]["hyp"] = " "  # Unified-VLP, record 1 on line 2
    rows[4]["hyp"] = ""  # Human: left out by the default preset, so not said there
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    js = load_judgments(path, "thumb")
    assert js.items[1].candidate == "" and js.blank == (("hyp", "record 2, line 2"),)
    assert js.describe().endswith(
        "(blank captions scored as given: column 'hyp', record 2, line 2)"
    )
    with_human = load_judgments(path, "thumb", "kasai2022-with-human")
    assert with_human.blank == (("hyp", "records 2 (line 2) and 5 (line 5)"),)
    assert load_judgments(THUMB, "thumb").blank == ()


def test_composite_blank_candidates_name_their_file_line_and_column(tmp_path):
    write_token(tmp_path)
    (tmp_path / "8k_correctness.csv").write_text(
        f"image,caption,correctness\na.jpg,{caption('b.jpg', 0)},4\nb.jpg, ,1\n"
    )
    packed = f"http://x/a.jpg;{caption('c.jpg', 1)};;5;2"  # its second candidate is blank
    (tmp_path / "8k_more_correctness.csv").write_text(f'HITId,Input.data\nh1,"{packed}"\n')
    js = load_judgments(tmp_path, "composite")
    assert js.source[:2] == ("8k_correctness.csv", "8k_more_correctness.csv")
    assert [it.candidate for it in js.items] == [caption("b.jpg", 0), "", caption("c.jpg", 1), ""]
    assert js.blank == (
        ("caption", "line 3"),
        ("Input.data", "8k_more_correctness.csv, line 2"),
    )
    assert js.describe().endswith(
        "(blank captions scored as given: column 'caption', line 3; column 'Input.data', "
        "8k_more_correctness.csv, line 2)"
    )


def test_flickr8k_blank_captions_name_the_token_file_line(tmp_path):
    write_token(tmp_path)
    token = tmp_path / "Flickr8k.token.txt"
    lines = token.read_text().splitlines()
    lines[6] = "b.jpg#1\t "  # line 7: the caption judged on line 2 of both files below
    token.write_text("\n".join(lines) + "\n")
    (tmp_path / "ExpertAnnotations.txt").write_text(
        "c.jpg\tc.jpg#0\t1\t1\t2\na.jpg\tb.jpg#1\t1\t2\t1\n"
    )
    (tmp_path / "CrowdFlowerAnnotations.txt").write_text(
        "a.jpg\tb.jpg#1\t0.0\t0\t3\nc.jpg\ta.jpg#0\t1.0\t3\t0\n"
    )
    expert = load_judgments(tmp_path, "flickr8k-expert")  # one caption, three expert rows
    assert [it.candidate for it in expert.items] == ["", "", ""]
    assert expert.blank == (("caption", "Flickr8k.token.txt, line 7"),)
    assert expert.describe().endswith(
        "(blank captions scored as given: column 'caption', Flickr8k.token.txt, line 7)"
    )
    cf = load_judgments(tmp_path, "flickr8k-cf")
    assert cf.blank == (("caption", "Flickr8k.token.txt, line 7"),)
    assert [it.candidate for it in cf.items] == ["", caption("a.jpg", 0)]


def test_abstract50s_blank_candidates_name_their_file_and_record(tmp_path):
    write_abstract(tmp_path, n_pairs=4)
    for name, record in (("abstract_candsB.json", 1), ("abstract_candsC.json", 3)):
        data = json.loads((tmp_path / name).read_text())
        data[record]["caption"] = ""
        (tmp_path / name).write_text(json.dumps(data, indent=0))  # a record per few lines
    js = load_judgments(tmp_path, "abstract50s")
    assert (js.items[1].candidate_a, js.items[3].candidate_b) == ("", "")
    assert js.source[0] == "abstract48S.json"
    assert js.blank == (
        ("caption", "abstract_candsB.json, record 2, line 6"),
        ("caption", "abstract_candsC.json, record 4, line 14"),
    )
    # without the pair lists, the pairs and their candidates are the triplets'
    only = tmp_path / "only"
    only.mkdir()
    write_abstract(only, n_pairs=2, per_pair=2, lists=False, refs=False)
    rows = [(f"ref {k}", "b 0" if k < 2 else "", "c 1", 1) for k in range(4)]
    write_triplets(only / "consensus_abstract.mat", rows)
    js = load_judgments(only, "abstract50s")
    assert [(it.candidate_a, it.candidate_b) for it in js.items] == [("b 0", "c 1"), ("", "c 1")]
    assert js.blank == (("triplets.B", "record 3"),)


def test_pascal50s_blank_sentences_name_their_record_and_field(tmp_path):
    rows = list(PASCAL_ROWS)
    rows[1] = ("p1.jpg", "", "a cat", 4, (-1, -1, 1))
    rows[2] = ("p2.jpg", "", "", 3, (1, -1))
    write_pascal_pairs(tmp_path, rows)
    write_pascal_refs(tmp_path)
    js = load_judgments(tmp_path, "pascal50s", "clipscore-table7")
    assert [it.candidate_a for it in js.items] == ["a man", "", ""]
    assert js.blank == (("new_input.sent1", "records 2 and 3"), ("new_input.sent2", "record 3"))
    assert js.describe() == (
        "3 read, 3 scored (blank captions scored as given: column 'new_input.sent1', records "
        "2 and 3; column 'new_input.sent2', record 3)"
    )


def test_a_blank_reference_beside_others_is_kept_and_said(tmp_path):
    """A blank piece of a ||| cell, a blank ref_k cell or a blank entry of a JSON list among
    filled ones is scored as an empty reference, as `capeval score` scores one (and
    coco-caption: it lowers CIDEr-D), and said as a blank reference with its column and line;
    it was dropped without a word. Blanks after a row's last reference are no reference (a
    ref_k row narrower than the file, a ||| at the end), in every spelling alike; an entirely
    empty references cell is still refused."""
    p = tmp_path / "g.csv"
    p.write_text(
        "candidate,references,score\n"
        "a dog,a dog runs||| |||a pup,3\n"
        "a cat,a cat sits,2\n"
        "a bus,a red bus|||,1\n"  # a separator at the end: no reference after it
        "a car,a car|||x,\n"  # dropped for its score: not said
    )
    js = load_judgments(p, "graded")
    assert [it.references for it in js.items] == [
        ("a dog runs", "", "a pup"),
        ("a cat sits",),
        ("a red bus",),
    ]
    assert js.blank == () and js.blank_references == (("references", "line 2"),)
    assert js.describe().endswith(
        "3 scored (blank references scored as given: column 'references', line 2)"
    )
    q = tmp_path / "k.csv"
    q.write_text(
        "candidate,ref_1,ref_2,ref_3,score\n"
        "a dog,a dog runs,,a pup,3\n"  # ref_2 blank before ref_3: a blank reference
        "a cat,a cat sits,,,2\n"  # one reference: the row is narrower than the file
        ",a bird,a red bird,,1\n"
    )
    js = load_judgments(q, "graded")
    assert [it.references for it in js.items] == [
        ("a dog runs", "", "a pup"),
        ("a cat sits",),
        ("a bird", "a red bird"),
    ]
    assert js.blank == (("candidate", "line 4"),)
    assert js.blank_references == (("ref_2", "line 2"),)
    r = tmp_path / "p.jsonl"
    r.write_text(
        json.dumps(
            {"candidate_a": "x", "candidate_b": "y", "references": [" ", "a"], "preferred": "a"}
        )
        + "\n"
    )
    js = load_judgments(r, "pairwise")
    assert js.items[0].references == ("", "a")
    assert js.blank == () and js.blank_references == (("references", "record 1, line 1"),)
    for text in ("candidate,references,score\na,,1\n", "candidate,references,score\na, ||| ,1\n"):
        p.write_text(text)
        with pytest.raises(JudgmentFormatError, match=r"^g\.csv, line 2, column 'references'"):
            load_judgments(p, "graded")


def test_a_set_on_the_items_every_metric_scored_says_its_counts_are_the_files(tmp_path):
    """On the common items (a metric left one out), the set still described the file as
    read ("4 scored", a blank caption on line 3) as if it were what the statistics use; it
    now says how many items it shows, and that those counts are the file's."""
    p = tmp_path / "g.csv"
    p.write_text(
        "candidate,references,score\na dog,a dog runs,3\n,a cat sits,2\na bus,x,1\nc,d,\ne,f,4\n"
    )
    js = load_judgments(p, "graded")
    values = {"m": np.array([0.1, 0.2, np.nan, 0.4])}
    scores = JudgmentScores(js.content_digest, "graded", ("m",), values, missing={"m": {2: "x"}})
    common, _ = on_common_items(js, scores)
    assert (len(common), common.left_out, js.left_out) == (3, 1, 0)
    assert common.describe() == (
        "5 read, 1 dropped (missing human score in column 'score' (line 5): 1), 4 scored "
        "(blank captions scored as given: column 'candidate', line 3); 3 of these 4 items "
        "shown, those every metric scored (1 left out; the counts and places before are the "
        "file's as read)"
    )
    assert js.describe().endswith("line 3)")  # the set as read says nothing more


# -- blank references of the datasets' own reference files ---------------------------------------
# Each loader scores the references its dataset's files give as it did (the published
# tables stand on them); what changed is that a set now says the blank ones: those it keeps
# (scored as an empty reference, as coco-caption scores one) in the summary line's
# "blank references scored as given", and those a dataset's rule leaves out in a note.


def _coco_file(path, captions):
    """A COCO captions file, one annotation per line: ``captions`` = (image_id, caption)."""
    anns = [{"image_id": img, "id": k, "caption": c} for k, (img, c) in enumerate(captions)]
    body = ",\n".join(json.dumps(a) for a in anns)
    path.write_text(f'{{"images": [{{"id": 7}}, {{"id": 8}}],\n"annotations": [\n{body}\n]}}\n')


def test_a_blank_caption_of_a_coco_references_file_is_said_where_it_is(tmp_path):
    """A COCO captions file given as references_from holding "" was scored with it (as
    coco-caption and `capeval score` score it) but only `capeval score` said so; the set's
    summary now names the caption's record and line, for the rows whose images take it."""
    refs = tmp_path / "caps.json"
    _coco_file(refs, [(7, "seven a"), (7, " "), (8, ""), (8, "eight"), (9, "")])
    g = tmp_path / "g.tsv"
    g.write_text("image_id\tcandidate\tscore\n7\ta seven\t3\n8\tan eight\t2\n")
    js = load_judgments(g, "graded", references_from=refs)
    assert js.references == [("seven a", " "), ("", "eight")]  # scored as before
    assert js.blank_references == (("caption", "caps.json, records 2 (line 4) and 3 (line 5)"),)
    assert js.describe().endswith(
        "2 scored (blank references scored as given: column 'caption', caps.json, records 2 "
        "(line 4) and 3 (line 5))"
    )
    g.write_text("image_id\tcandidate\tscore\n7\ta seven\t3\n")  # image 8 unused: not said
    js = load_judgments(g, "graded", references_from=refs)
    assert js.blank_references == (("caption", "caps.json, record 2, line 4"),)
    p = tmp_path / "p.csv"
    p.write_text("image_id,candidate_a,candidate_b,preferred\n8,x,y,a\n")
    js = load_judgments(p, "pairwise", references_from=refs)
    assert js.blank_references == (("caption", "caps.json, record 3, line 5"),)


def test_flickr8k_blank_token_captions_are_said_as_blank_references(tmp_path):
    """A blank caption of the token file is a reference of its own image too, scored as an
    empty one; only the judged caption was said. The CrowdFlower preset removes an image's
    candidates from its references: a blank candidate of the image takes its blank
    reference with it, and nothing is said of it."""
    write_token(tmp_path)
    token = tmp_path / "Flickr8k.token.txt"
    lines = token.read_text().splitlines()
    lines[6] = "b.jpg#1\t "  # line 7: b.jpg's second caption
    token.write_text("\n".join(lines) + "\n")
    (tmp_path / "ExpertAnnotations.txt").write_text(
        "b.jpg\tc.jpg#3\t1\t1\t2\na.jpg\ta.jpg#1\t1\t2\t1\nc.jpg\ta.jpg#2\t2\t2\t2\n"
    )
    (tmp_path / "CrowdFlowerAnnotations.txt").write_text(
        "b.jpg\tc.jpg#0\t0.0\t0\t3\nc.jpg\ta.jpg#0\t1.0\t3\t0\n"
    )
    expert = load_judgments(tmp_path, "flickr8k-expert")
    assert expert.items[0].references == tuple(
        "" if k == 1 else caption("b.jpg", k) for k in range(5)
    )
    assert expert.blank == ()
    assert expert.blank_references == (("caption", "Flickr8k.token.txt, line 7"),)
    assert expert.describe().endswith(
        "(blank references scored as given: column 'caption', Flickr8k.token.txt, line 7)"
    )
    cf = load_judgments(tmp_path, "flickr8k-cf")
    assert "" in cf.items[0].references
    assert cf.blank_references == (("caption", "Flickr8k.token.txt, line 7"),)
    (tmp_path / "CrowdFlowerAnnotations.txt").write_text(
        "b.jpg\tc.jpg#0\t0.0\t0\t3\nb.jpg\tb.jpg#1\t0.0\t0\t3\n"
    )
    cf = load_judgments(tmp_path, "flickr8k-cf")  # the blank is a candidate of b.jpg
    assert all("" not in it.references for it in cf.items)
    assert cf.blank == (("caption", "Flickr8k.token.txt, line 7"),)
    assert cf.blank_references == ()


def test_composite_blank_references_name_their_caption_file(tmp_path):
    """The caption files' blank captions were scored as references without a word; a set
    now names them, in a token file by line and in a COCO file by record and line."""
    write_token(tmp_path)
    token = tmp_path / "Flickr8k.token.txt"
    lines = token.read_text().splitlines()
    lines[2] = "a.jpg#2\t"  # line 3
    token.write_text("\n".join(lines) + "\n")
    (tmp_path / "8k_correctness.csv").write_text(
        f"image,caption,correctness\na.jpg,{caption('b.jpg', 0)},4\nb.jpg,x,1\n"
    )
    js = load_judgments(tmp_path, "composite")
    assert "" in js.items[0].references and "" not in js.items[1].references
    assert js.blank_references == (("caption", "Flickr8k.token.txt, line 3"),)
    assert js.describe().endswith(
        "(blank references scored as given: column 'caption', Flickr8k.token.txt, line 3)"
    )
    coco = tmp_path / "coco"
    coco.mkdir()
    _coco_file(coco / "captions_val2014.json", [(7, "seven"), (8, "eight"), (8, "")])
    (coco / "coco_correctness.csv").write_text(
        "image,caption,correctness\nCOCO_val2014_000000000008.jpg,an eight,3\n"
        "COCO_val2014_000000000007.jpg,a seven,2\n"
    )
    js = load_judgments(coco, "composite")
    assert js.items[0].references == ("eight", "")
    assert js.blank_references == (("caption", "captions_val2014.json, record 3, line 5"),)


def _thumb_with_references(tmp_path, refs_of):
    """THumB's test file with its references file, ``refs_of`` changing the references of a
    record (from 0) of the references file."""
    rows = (Path(THUMB).parent / "mscoco_references.json").read_text().splitlines()
    out = [json.loads(r) for r in rows]
    for k, refs in refs_of.items():
        out[k]["refs"] = refs
    path = tmp_path / "mscoco_references.json"
    path.write_text("\n".join(json.dumps(r) for r in out) + "\n")
    return path


def test_thumb_blank_references_left_out_of_its_references_file_are_said(tmp_path):
    """THumB's references file is read without its blank references (its rule: kept as
    before), which was silent; a note now names the file's lines where a blank stood
    before a filled reference (one after the last is no reference, as in every file)."""
    before = load_judgments(THUMB, "thumb", references_from=_thumb_with_references(tmp_path, {}))
    refs = [json.loads(r)["refs"] for r in (THUMB.parent / "mscoco_references.json").open()]
    path = _thumb_with_references(tmp_path, {1: [refs[1][0], " ", *refs[1][1:]], 2: [*refs[2], ""]})
    js = load_judgments(THUMB, "thumb", references_from=path)
    assert js.references == before.references  # the blanks are left out, as before
    said = (
        "blank references left out (not scored): column 'refs', mscoco_references.json, "
        "record 2, line 2"
    )
    assert said in js.notes and not any("line 3" in n for n in js.notes)
    assert js.blank_references == ()


def test_thumb_blank_coco_captions_are_said_as_blank_references(tmp_path):
    rows = [json.loads(r) for r in THUMB.read_text().splitlines()]
    image = rows[0]["image"]
    rows = [r for r in rows if r["image"] == image]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    human = next(r["hyp"] for r in rows if r["SYS"] == "Human")
    js = load_judgments(path, "thumb", coco={image: ("c1", human, "", "c4", "c5")})
    assert {it.references for it in js.items} == {("c1", "", "c4", "c5")}
    assert js.blank_references == (
        ("caption", f"COCO val2014 captions (installed package), image {image!r}"),
    )


def _pascal_refs_with_blank(folder):
    """pascal50S.mat with 51 sentences for p1.jpg, its second one blank, and 50 for
    p2.jpg, its last one blank (no reference after it)."""
    refs = np.zeros((1, 2), dtype=[("image", "O"), ("sent", "O")])
    for i, name in enumerate(("p1.jpg", "p2.jpg")):
        texts = [f"file ref {k} of {name}" for k in range(51 if i == 0 else 50)]
        texts[1 if i == 0 else -1] = ""
        sentences = np.empty((1, len(texts)), dtype=object)
        sentences[0, :] = texts
        refs[0, i] = (name, sentences)
    savemat(folder / "pascal50S.mat", {"refs": refs})


def test_pascal50s_blank_references_left_out_are_said(tmp_path):
    """pascal50S.mat is read without its blank sentences (the first 50 filled ones are the
    references: kept as before), which was silent; a note names the element. A pair scored
    against its triplets' A sentences leaves a blank A out too, and says its triplet."""
    write_pascal_pairs(tmp_path, PASCAL_ROWS)
    _pascal_refs_with_blank(tmp_path)
    js = load_judgments(tmp_path, "pascal50s", "clipscore-table7")
    first = js.items[0].references
    assert len(first) == 50 and "" not in first and first[1] == "file ref 2 of p1.jpg"
    assert js.notes[-1] == (
        "blank references left out (not scored): column 'refs.sent', pascal50S.mat, record 1"
    )
    # the triplets' A sentences: pair 1 (a man / a woman) has a blank one
    rows = [("a ref", "a man", "a woman", 1), ("", "a man", "a woman", 1)]
    rows += [("r", "a dog", "a cat", -1), ("r", "a tree", "a road", 1)]
    write_triplets(tmp_path / "consensus_pascal.mat", rows)
    js = load_judgments(tmp_path, "pascal50s", "clipscore-table4")
    assert js.items[0].references == ("a ref",)
    assert js.notes[-1] == (
        "blank references left out (not scored): column 'triplets.A', consensus_pascal.mat, "
        "record 2"
    )


def test_abstract50s_blank_references_are_said(tmp_path):
    """abstract48S.json's blank captions are kept as references of their scene (scored as
    given, as before) and now said."""
    write_abstract(tmp_path, n_pairs=4)
    data = json.loads((tmp_path / "abstract48S.json").read_text())
    data[50]["caption"] = " "  # scene 1's third reference: record 51
    (tmp_path / "abstract48S.json").write_text(json.dumps(data, indent=0))
    js = load_judgments(tmp_path, "abstract50s")
    assert js.items[2].references[2] == "" and "" not in js.items[0].references
    assert js.source[0] == "abstract48S.json"
    assert js.blank_references == (("caption", "record 51, line 202"),)
    assert js.describe().endswith(
        "(blank references scored as given: column 'caption', record 51, line 202)"
    )


def test_abstract50s_blank_triplet_references_left_out_are_said(tmp_path):
    """A set on the triplets alone is scored against their A sentences, without a blank
    one (as before), and now says which triplet it left out."""
    only = tmp_path / "only"
    only.mkdir()
    write_abstract(only, n_pairs=2, per_pair=2, lists=False, refs=False)
    rows = [("ref 0", "b 0", "c 0", 1), ("", "b 0", "c 0", 1)]
    rows += [("ref 2", "b 1", "c 1", -1), ("ref 3", "b 1", "c 1", -1)]
    write_triplets(only / "consensus_abstract.mat", rows)
    js = load_judgments(only, "abstract50s")
    assert js.items[0].references == ("ref 0",)
    assert (
        "blank references left out (not scored): column 'triplets.A', consensus_abstract.mat, "
        "record 2"
    ) in js.notes


def test_correlate_says_a_datasets_blank_references(tmp_path, monkeypatch, capsys):
    """`capeval correlate` shows what the set says: the blank references kept in its
    summary line and its JSON's ``blank_references``, those left out as a warning."""
    from capeval_core.cli import main

    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path / "cache"))
    write_token(tmp_path)
    token = tmp_path / "Flickr8k.token.txt"
    lines = token.read_text().splitlines()
    lines[6] = "b.jpg#1\t "  # line 7: a reference of b.jpg
    token.write_text("\n".join(lines) + "\n")
    (tmp_path / "ExpertAnnotations.txt").write_text(
        "b.jpg\tc.jpg#3\t1\t1\t2\na.jpg\tc.jpg#1\t2\t2\t1\nc.jpg\ta.jpg#2\t4\t3\t4\n"
    )
    out = tmp_path / "out.json"
    argv = ["correlate", "--judgments", str(tmp_path), "--format", "flickr8k-expert"]
    assert main([*argv, "--metrics", "bleu_1", "--workers", "0", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["blank_references"] == {
        "caption": "Flickr8k.token.txt, line 7"
    }
    assert (
        "(blank references scored as given: column 'caption', Flickr8k.token.txt, line 7)"
        in capsys.readouterr().err
    )
    refs = [json.loads(r)["refs"] for r in (THUMB.parent / "mscoco_references.json").open()]
    folder = tmp_path / "thumb"  # the judgments with their references file beside them
    folder.mkdir()
    _thumb_with_references(folder, {1: [refs[1][0], "", *refs[1][1:]]})
    (folder / THUMB.name).write_bytes(THUMB.read_bytes())
    argv = ["correlate", "--judgments", str(folder), "--format", "thumb"]
    assert main([*argv, "--metrics", "bleu_1", "--workers", "0"]) == 0
    assert (
        "capeval: warning: blank references left out (not scored): column 'refs', "
        "mscoco_references.json, record 2, line 2\n"
    ) in capsys.readouterr().err
