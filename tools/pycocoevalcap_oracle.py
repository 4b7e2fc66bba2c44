"""pycocoevalcap 1.2 with all its jars, run as a development-time oracle for the drop-in
(``capeval_core.pycocoevalcap``); and the model-like captions its golden and bench score.

pycocoevalcap's SPICE cannot run as installed: its downloader's links for CoreNLP 3.6.0 are
dead, its ``-cache`` fails on Java 9 and later, and on Java 15 and later the jar's scorer
lacks a JavaScript engine. :func:`oracle_copy` therefore copies the installed package into a
temporary folder (the installed one is never touched), puts CoreNLP 3.6.0 and its models from
``python -m tools.spice_oracle fetch`` into the copy's ``spice/lib``, drops ``-cache`` from the
copy's command, and :func:`java_env` puts the standalone Nashorn on the module path of every
``java`` it starts. Everything else is pycocoevalcap's own code and jars.

    python -m tools.pycocoevalcap_oracle golden [--images 300] [--out tests/golden/...]

writes ``tests/golden/pycocoevalcap-coco300.json.gz``: a client script run the way captioning
repositories run it (pycocotools' ``COCO``, ``loadRes``, ``COCOEvalCap``, ``evaluate``) on
COCO val2014 images (seeded random, in the annotation file's order) with model-like
candidates (:func:`model_like_captions`), plus each scorer class called directly on designed
token strings; every number as pycocoevalcap printed or returned it.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tools import spice_oracle

GOLDEN = Path(__file__).resolve().parents[1] / "tests" / "golden" / "pycocoevalcap-coco300.json.gz"
#: the CoreNLP jars pycocoevalcap's SPICE wants in ``spice/lib`` (its downloader's names)
CORENLP_JARS = ("stanford-corenlp-3.6.0.jar", "stanford-corenlp-3.6.0-models.jar")
#: the jars the standalone Nashorn needs on the module path
NASHORN_JARS = (
    "nashorn-core-15.4.jar",
    "asm-7.3.1.jar",
    "asm-commons-7.3.1.jar",
    "asm-tree-7.3.1.jar",
    "asm-util-7.3.1.jar",
    "asm-analysis-7.3.1.jar",
)


def available() -> str | None:
    """``None`` when pycocoevalcap can run with all its jars here, else why not."""
    why = spice_oracle.available()
    if why:
        return why
    lib = spice_oracle.oracle_dir() / "lib"
    missing = [j for j in (*CORENLP_JARS, *NASHORN_JARS) if not (lib / j).is_file()]
    if missing:
        return f"{', '.join(missing)} missing from {lib}: run `python -m tools.spice_oracle fetch`"
    return None


def oracle_copy(folder: Path) -> Path:
    """A copy of the installed pycocoevalcap under ``folder`` (returned: the folder to put on
    ``PYTHONPATH``) with CoreNLP 3.6.0 in ``spice/lib`` and SPICE run without ``-cache``."""
    from capeval_core.resources import pycocoevalcap_dir

    root = folder / "oracle-site"
    package = root / "pycocoevalcap"
    shutil.copytree(
        pycocoevalcap_dir(), package, ignore=shutil.ignore_patterns("__pycache__", "tmp", "cache")
    )
    lib = spice_oracle.oracle_dir() / "lib"
    for jar in CORENLP_JARS:
        shutil.copy2(lib / jar, package / "spice" / "lib" / jar)
    spice = package / "spice" / "spice.py"
    text = spice.read_text(encoding="utf-8")
    cached = "'-cache', cache_dir,"
    if cached not in text:
        raise RuntimeError(f"{spice}: pycocoevalcap's SPICE command changed; expected {cached}")
    spice.write_text(text.replace(cached, ""), encoding="utf-8")
    return root


def java_env(site: Path) -> dict[str, str]:
    """The environment for a process running the copy: the copy first on ``PYTHONPATH``,
    Nashorn on the module path of every JVM (``JDK_JAVA_OPTIONS``: SPICE's scorer needs a
    JavaScript engine, which Java 15 and later do not ship), after the options already set."""
    lib = spice_oracle.oracle_dir() / "lib"
    path = os.pathsep.join(str(lib / j) for j in NASHORN_JARS)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(site), *filter(None, [env.get("PYTHONPATH")])])
    nashorn = f"--module-path {path} --add-modules org.openjdk.nashorn"
    env["JDK_JAVA_OPTIONS"] = " ".join(filter(None, [env.get("JDK_JAVA_OPTIONS"), nashorn]))
    return env


# -- model-like captions ------------------------------------------------------------------------

_WORD = re.compile(r"[a-z]+")
#: a word in more training captions than this says little about an image
COMMON = 20000


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def model_like_captions(
    queries: Sequence[str], new_share: float = 0.5, seed: int = 2014
) -> list[str]:
    """One caption per query, made of COCO train2014 captions as a retrieval captioner
    (Devlin et al., 2015) makes them: the training caption sharing the most informative words
    with the query (here an image's first reference, standing in for what the image shows),
    so about half of a model's captions are training captions word for word, as beam search
    gives. The other ``new_share`` (chosen with ``seed``) are spliced from the two best
    training captions at a word they share (the first's start, the second's end): fluent,
    model-like, and new to the parser (not COCO captions, so not shipped parsed).
    """
    from capeval_core.resources import coco_captions

    train = sorted(coco_captions("train"), key=lambda c: c.annotation_id)
    texts = [c.caption.strip() for c in train]
    words = [_words(t) for t in texts]
    postings: dict[str, list[int]] = {}
    for i, ws in enumerate(words):
        for w in set(ws):
            postings.setdefault(w, []).append(i)
    n = len(texts)
    idf = {w: math.log(n / len(p)) for w, p in postings.items()}
    arrays = {w: np.asarray(p, dtype=np.int64) for w, p in postings.items() if len(p) <= COMMON}
    norms = np.sqrt(np.array([max(1, len(set(ws))) for ws in words], dtype=float))
    rng = random.Random(seed)
    splice = set(rng.sample(range(len(queries)), round(new_share * len(queries))))
    out = []
    for q, query in enumerate(queries):
        qw = [w for w in dict.fromkeys(_words(query)) if w in arrays]
        if not qw:
            out.append(texts[0])
            continue
        ids = np.concatenate([arrays[w] for w in qw])
        weight = np.concatenate([np.full(arrays[w].size, idf[w]) for w in qw])
        distinct, inverse = np.unique(ids, return_inverse=True)
        score = np.bincount(inverse, weights=weight) / norms[distinct]
        order = distinct[np.lexsort((distinct, -score))]
        best = [int(i) for i in order[:2]]
        caption = texts[best[0]]
        if q in splice and len(best) == 2:
            caption = _splice(words[best[0]], words[best[1]]) or " ".join(words[best[0]][:-1])
        out.append(caption)
    return out


def _splice(a: list[str], b: list[str]) -> str | None:
    """``a`` up to a word it shares with ``b`` (not the first two), then ``b`` from there."""
    for i in range(2, len(a) - 1):
        if a[i] in b[1:]:
            j = b.index(a[i], 1)
            joined = a[:i] + b[j:]
            if joined != a and joined != b and len(joined) >= 4:
                return " ".join(joined)
    return None


# -- the golden ---------------------------------------------------------------------------------

#: The client script, written as captioning repositories write it; ``IMPORT`` becomes the
#: import line (pycocoevalcap's or the drop-in's).
CLIENT = """\
import json
import sys

from pycocotools.coco import COCO
IMPORT

annotation_file, results_file, output_file = sys.argv[1:4]
coco = COCO(annotation_file)
cocoRes = coco.loadRes(results_file)
cocoEval = COCOEvalCap(coco, cocoRes)
cocoEval.params['image_id'] = cocoRes.getImgIds()
cocoEval.evaluate()
for metric, score in cocoEval.eval.items():
    print('%s: %.3f' % (metric, score))
imgToEval = cocoEval.imgToEval
for p in json.load(open(results_file)):
    imgToEval[p['image_id']]['caption'] = p['caption']
json.dump({'overall': cocoEval.eval, 'imgToEval': imgToEval}, open(output_file, 'w'))
"""
REFERENCE_IMPORT = "from pycocoevalcap.eval import COCOEvalCap"
DROPIN_IMPORT = "from capeval_core.pycocoevalcap.eval import COCOEvalCap"


def client_script(import_line: str) -> str:
    return CLIENT.replace("IMPORT", import_line)


def write_coco_files(
    folder: Path, image_ids: Sequence[int], captions: Sequence[str]
) -> tuple[Path, Path]:
    """COCO val2014's annotation file cut to ``image_ids`` (its ``images`` and annotations in
    the file's own order) and a results file of ``captions`` (one per image, in the order of
    ``image_ids``)."""
    from capeval_core.resources import coco_caption_file

    keep = set(image_ids)
    data = coco_caption_file("val")
    ann = {
        "info": data.get("info", {}),
        "licenses": data.get("licenses", []),
        "type": "captions",
        "images": [im for im in data["images"] if im["id"] in keep],
        "annotations": [a for a in data["annotations"] if a["image_id"] in keep],
    }
    ann_path = folder / "captions_val2014.json"
    ann_path.write_text(json.dumps(ann), encoding="utf-8")
    res_path = folder / "results.json"
    rows = [{"image_id": i, "caption": c} for i, c in zip(image_ids, captions, strict=True)]
    res_path.write_text(json.dumps(rows), encoding="utf-8")
    return ann_path, res_path


def run_client(
    import_line: str, ann: Path, res: Path, out: Path, env: dict[str, str] | None = None
) -> str:
    """Run the client script in a fresh interpreter; what it printed on stdout."""
    script = out.with_suffix(".py")
    script.write_text(client_script(import_line), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), str(ann), str(res), str(out)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        cwd=out.parent,
    )
    return done.stdout


#: scorer inputs with the token strings users pass (spacing, punctuation kept, no-break space)
DESIGNED = {
    "gts": {
        "1": ["a man riding a horse on a beach", "a person rides a brown horse near the ocean"],
        "2": ["two dogs play in the grass", "two  dogs are playing ", "dogs on a lawn"],
        "3": ["a red bus on a city street", "a bus parked by the curb"],
        "4": ["parking is off limits on west 25\u00a01/2 street", "a street sign on a pole"],
        "5": ["a plate of food with broccoli", "a dish with vegetables and rice on a table"],
        "6": ["a cat", "a cat sleeping on a couch next to a remote control"],
    },
    "res": {
        "1": ["a man rides a horse on the beach"],
        "2": ["two dogs playing in the grass  "],
        "3": [""],
        "4": ["a sign for west 25\u00a01/2 street"],
        "5": ["a plate of food with broccoli , rice and meat ."],
        "6": ["a\tcat sleeping on a couch"],
    },
}


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.floating | float):
        return float(value)
    return value


def _scorers_code() -> str:
    """Each scorer class on :data:`DESIGNED` (in the copy, jars included); prints JSON."""
    return (
        "import contextlib, io, json, sys\n"
        "from pycocoevalcap.bleu.bleu import Bleu\n"
        "from pycocoevalcap.cider.cider import Cider\n"
        "from pycocoevalcap.meteor.meteor import Meteor\n"
        "from pycocoevalcap.rouge.rouge import Rouge\n"
        "from pycocoevalcap.spice.spice import Spice\n"
        "data = json.loads(sys.argv[1])\n"
        "gts, res = data['gts'], data['res']\n"
        "out = {}\n"
        "printed = io.StringIO()\n"
        "with contextlib.redirect_stdout(printed):\n"
        "    out['Bleu'] = Bleu(4).compute_score(gts, res)\n"
        "out['Bleu_verbose'] = printed.getvalue()\n"
        "out['METEOR'] = Meteor().compute_score(gts, res)\n"
        "out['ROUGE_L'] = [float(x) for x in (lambda s: [s[0], *s[1]])(Rouge().compute_score(gts, res))]\n"  # noqa: E501
        "out['CIDEr'] = [float(x) for x in (lambda s: [s[0], *s[1]])(Cider().compute_score(gts, res))]\n"  # noqa: E501
        "score, scores = Spice().compute_score(gts, res)\n"
        "out['SPICE'] = [float(score), scores]\n"
        "print(json.dumps(out))\n"
    )


def make_golden(n_images: int, dest: Path) -> None:
    from capeval_core.resources import coco_caption_file

    data = coco_caption_file("val")
    first: dict[int, tuple[int, str]] = {}
    for a in data["annotations"]:
        key = (a["id"], a["caption"])
        if a["image_id"] not in first or key < first[a["image_id"]]:
            first[a["image_id"]] = key
    # images in the annotation file's order (unsorted, as COCO's own): SPICE's per-image
    # misassignment in pycocoevalcap shows on them
    file_order = [im["id"] for im in data["images"]]
    chosen = set(random.Random(2014).sample(sorted(first), n_images))
    ids = [i for i in file_order if i in chosen]
    captions = model_like_captions([first[i][1] for i in ids])
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        site = oracle_copy(folder)
        env = java_env(site)
        ann, res = write_coco_files(folder, ids, captions)
        printed = run_client(REFERENCE_IMPORT, ann, res, folder / "reference.json", env)
        reference = json.loads((folder / "reference.json").read_text(encoding="utf-8"))
        # the jar's own per-image SPICE, by image (pycocoevalcap's list is in sorted id order)
        code = (
            "import json, sys\n"
            "from pycocotools.coco import COCO\n"
            "from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer\n"
            "from pycocoevalcap.spice.spice import Spice\n"
            "coco = COCO(sys.argv[1]); res = coco.loadRes(sys.argv[2])\n"
            "ids = res.getImgIds()\n"
            "tok = PTBTokenizer()\n"
            "gts = tok.tokenize({i: coco.imgToAnns[i] for i in ids})\n"
            "rs = tok.tokenize({i: res.imgToAnns[i] for i in ids})\n"
            "score, scores = Spice().compute_score(gts, rs)\n"
            "print(json.dumps(dict(zip(map(str, sorted(gts)), scores))))\n"
        )
        spice = subprocess.run(
            [sys.executable, "-c", code, str(ann), str(res)],
            env=env,
            check=True,
            capture_output=True,
            text=True,
            cwd=folder,
        )
        by_image = json.loads(spice.stdout.strip().splitlines()[-1])
        scorers = subprocess.run(
            [sys.executable, "-c", _scorers_code(), json.dumps(DESIGNED)],
            env=env,
            check=True,
            capture_output=True,
            text=True,
            cwd=folder,
        )
        direct = json.loads(scorers.stdout.strip().splitlines()[-1])
    golden = {
        "description": (
            "pycocoevalcap 1.2 with its jars (Java 17: PTB tokenizer of CoreNLP 3.4.1, "
            "meteor-1.5.jar, spice-1.0.jar with CoreNLP 3.6.0 from Maven, without -cache, "
            "Nashorn 15.4 on the module path), written by `python -m tools.pycocoevalcap_oracle "
            f"golden --images {n_images}`. `client`: the client script "
            "(tools.pycocoevalcap_oracle.CLIENT) on COCO val2014 images chosen with seed 2014, "
            "in the annotation file's order, candidates from "
            "tools.pycocoevalcap_oracle.model_like_captions (COCO train2014 captions, CC BY "
            "4.0); references are re-read from the installed COCO val2014 annotations. "
            "`spice_by_image`: the jar's per-image SPICE of the same run by image id (Spice's "
            "list, which is in sorted id order). `scorers`: each scorer class called "
            "directly on `scorer_inputs`."
        ),
        "image_ids": ids,
        "captions": captions,
        "printed": printed,
        "client": reference,
        "spice_by_image": by_image,
        "scorer_inputs": DESIGNED,
        "scorers": direct,
    }
    write_golden(dest, _jsonable(golden))
    print(f"{dest}: {len(ids)} images")


def write_golden(dest: Path, golden: dict) -> None:
    """Compact JSON (NaN as pycocoevalcap's json.dump writes it), gzip level 9."""
    with gzip.open(dest, "wt", encoding="utf-8", compresslevel=9) as fh:
        json.dump(golden, fh, separators=(",", ":"))


def read_golden(path: Path = GOLDEN) -> dict:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return json.load(fh)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tools.pycocoevalcap_oracle")
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("golden", help="write the drop-in's golden file")
    g.add_argument("--images", type=int, default=300)
    g.add_argument("--out", type=Path, default=GOLDEN)
    args = parser.parse_args()
    why = available()
    if why:
        sys.exit(f"pycocoevalcap's jars cannot run here: {why}")
    make_golden(args.images, args.out)


if __name__ == "__main__":
    main()
