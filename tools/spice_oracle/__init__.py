"""The SPICE-1.0 jar with Stanford CoreNLP 3.6.0, run as a development-time oracle.

capeval's SPICE never runs Java: this package is for building the golden files its stage
tests read and the training data of its parser, and for measuring parity. It needs Java (8
or newer; on Java 15+ the jar's JavaScript engine comes from the standalone Nashorn) and
the jars, fetched once with Maven into a cache outside the repository:

    python -m tools.spice_oracle fetch            # CoreNLP 3.6.0 + models, Nashorn
    python -m tools.spice_oracle parse IN.tsv OUT.jsonl [--workers N]

``IN.tsv`` holds ``id<TAB>caption`` lines (captions as SPICE receives them: PTB-tokenized);
``OUT.jsonl`` gets one record per line from ``SpiceOracle.java`` (tokens, tags, lemmas, the
constituency tree, the basic / CC-processed / enhanced dependency graphs, the proposed
tuples). ``$CAPEVAL_SPICE_ORACLE_DIR`` moves the cache (default: the platform cache
directory's ``capeval-oracle/spice-1.0``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ENV = "CAPEVAL_SPICE_ORACLE_DIR"

#: Maven artifacts the jar needs beside what pycocoevalcap ships in spice/lib/.
ARTIFACTS = (
    "edu.stanford.nlp:stanford-corenlp:3.6.0",
    "edu.stanford.nlp:stanford-corenlp:3.6.0:jar:models",
    # SPICE's scorer evaluates a JavaScript expression; Java 15+ has no built-in engine
    "org.openjdk.nashorn:nashorn-core:15.4",
)
JAVA_SOURCES = ("SpiceOracle.java", "MorphologyOracle.java", "PcfgOracle.java")


def oracle_dir() -> Path:
    """Where the jars live (``$CAPEVAL_SPICE_ORACLE_DIR`` or the platform cache)."""
    override = os.environ.get(ENV)
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("capeval-oracle", appauthor=False)) / "spice-1.0"


def available() -> str | None:
    """``None`` when the oracle can run here, else why not (for a skip reason)."""
    if shutil.which("java") is None or shutil.which("javac") is None:
        return "no Java (java and javac) on PATH"
    root = oracle_dir()
    if not (root / "lib" / "stanford-corenlp-3.6.0-models.jar").is_file():
        return (
            f"the SPICE oracle jars are not in {root}: run `python -m tools.spice_oracle fetch` "
            f"(Maven), or point ${ENV} at them"
        )
    return None


def use_models_jar() -> Path | None:
    """Point SPICE's stanford-pcfg parser at the oracle's CoreNLP models jar, unless the user
    named one (``$CAPEVAL_CORENLP_MODELS``); the jar it will read, or None without either."""
    from capeval_core.spice.pcfg.grammar import MODELS_ENV, MODELS_JAR

    if MODELS_ENV not in os.environ:
        jar = oracle_dir() / "lib" / MODELS_JAR
        if not jar.is_file():
            return None
        os.environ[MODELS_ENV] = str(jar)
    return Path(os.environ[MODELS_ENV])


def fetch() -> Path:
    """Copy spice-1.0.jar and its lib/ from pycocoevalcap, then the Maven artifacts."""
    from capeval_core.resources import pycocoevalcap_file

    root = oracle_dir()
    (root / "lib").mkdir(parents=True, exist_ok=True)
    spice = pycocoevalcap_file("spice/spice-1.0.jar")
    shutil.copy2(spice, root / "spice-1.0.jar")
    for jar in (spice.parent / "lib").glob("*.jar"):
        shutil.copy2(jar, root / "lib" / jar.name)
    with tempfile.TemporaryDirectory() as tmp:
        for artifact in ARTIFACTS:
            subprocess.run(
                [
                    "mvn",
                    "-q",
                    "dependency:copy",
                    f"-Dartifact={artifact}",
                    f"-DoutputDirectory={tmp}",
                ],
                check=True,
            )
            if "nashorn" in artifact:  # with its ASM dependencies
                subprocess.run(
                    ["mvn", "-q", "dependency:get", f"-Dartifact={artifact}"], check=True
                )
        for jar in Path(tmp).glob("*.jar"):
            shutil.copy2(jar, root / "lib" / jar.name)
    _copy_nashorn_dependencies(root / "lib")
    return root


def _copy_nashorn_dependencies(lib: Path) -> None:
    repo = Path.home() / ".m2" / "repository" / "org" / "ow2" / "asm"
    for jar in repo.glob("*/7.3.1/*-7.3.1.jar"):
        shutil.copy2(jar, lib / jar.name)


def classpath() -> str:
    root = oracle_dir()
    jars = [root / "spice-1.0.jar", *sorted((root / "lib").glob("*.jar"))]
    return os.pathsep.join([str(root / "classes"), *map(str, jars)])


def compile_drivers() -> None:
    """javac the drivers into the cache (again only when a source is newer)."""
    out = oracle_dir() / "classes"
    sources = [HERE / name for name in JAVA_SOURCES if (HERE / name).is_file()]
    stamp = out / ".stamp"
    if stamp.is_file() and all(s.stat().st_mtime <= stamp.stat().st_mtime for s in sources):
        return
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            "javac",
            "-nowarn",
            "-encoding",
            "UTF-8",
            "-cp",
            classpath(),
            "-d",
            str(out),
            *map(str, sources),
        ],
        check=True,
        capture_output=True,
    )
    stamp.touch()


def java(main: str, *args: str, heap: str = "3G") -> None:
    compile_drivers()
    subprocess.run(
        ["java", f"-Xmx{heap}", "-XX:+UseSerialGC", "-cp", classpath(), main, *args],
        check=True,
        stderr=subprocess.DEVNULL,
    )


def parse(rows: Sequence[tuple[str, str]], output: Path, workers: int = 1) -> None:
    """The oracle's record of each ``(id, caption)``, in order, into ``output`` (JSON lines)."""
    with tempfile.TemporaryDirectory() as tmp:
        parts = [rows[k::workers] for k in range(workers)]
        ins = [Path(tmp) / f"in{k}.tsv" for k in range(workers)]
        outs = [Path(tmp) / f"out{k}.jsonl" for k in range(workers)]
        for part, path in zip(parts, ins, strict=True):
            path.write_text("".join(f"{i}\t{c}\n" for i, c in part), encoding="utf-8")
        with ThreadPoolExecutor(workers) as pool:
            list(
                pool.map(
                    lambda k: java("edu.anu.spice.SpiceOracle", str(ins[k]), str(outs[k])),
                    range(workers),
                )
            )
        lines = [p.read_text(encoding="utf-8").splitlines() for p in outs]
        merged = [lines[k % workers][k // workers] for k in range(len(rows))]
        output.write_text("".join(line + "\n" for line in merged), encoding="utf-8")


def lemmas(pairs: Sequence[tuple[str, str]]) -> list[str]:
    """CoreNLP 3.6.0's lemma of each ``(word, tag)``, as SPICE's lemma annotator gives it."""
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "in.tsv", Path(tmp) / "out.txt"
        src.write_text("".join(f"{w}\t{t}\n" for w, t in pairs), encoding="utf-8")
        java("edu.anu.spice.MorphologyOracle", str(src), str(dst), heap="1G")
        out = dst.read_text(encoding="utf-8").split("\n")
    return out[: len(pairs)]
