"""Turn the browser tests' screenshots into the small ones committed under docs/screenshots/.

``make test`` (the browser tests) writes full-size screenshots to tests/app/screenshots/
(git-ignored); this keeps one per page, at most 1400 px wide, cut to the first
:data:`MAX_HEIGHT` pixels and stored with a 256-colour palette, so the folder stays small
(under 4 MB). Run ``python tools/docs_screenshots.py`` after the browser tests.
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "tests" / "app" / "screenshots"
DEST = ROOT / "docs" / "screenshots"
#: one screenshot per page (the browser tests' names), plus Compare with two candidates
PAGES = (
    "home",
    "compare",
    "compare-two-candidates",
    "perturbation-lab",
    "judgments",
    "correlations",
    "significance",
    "pairwise-accuracy",
    "robustness",
    "systems",
    # Compare with two candidates side by side at a laptop's and a desktop's width (issue 34)
    "compare-2-bleu-1280",
    "compare-2-bleu-1920",
)
MAX_HEIGHT = 2400
WIDTH = 1400


def shrink(source: Path, dest: Path) -> int:
    """``source`` cut to :data:`MAX_HEIGHT`, 256 colours, written to ``dest``; its bytes."""
    with Image.open(source) as image:
        image = image.convert("RGB")
        if image.width > WIDTH:  # a narrower one keeps its width
            image = image.resize((WIDTH, round(image.height * WIDTH / image.width)))
        image = image.crop((0, 0, image.width, min(image.height, MAX_HEIGHT)))
        image = image.quantize(colors=256, method=Image.Quantize.MEDIANCUT)
        image.save(dest, optimize=True)
    return dest.stat().st_size


def main() -> None:
    DEST.mkdir(parents=True, exist_ok=True)
    total = 0
    for name in PAGES:
        source = SOURCE / f"{name}.png"
        if not source.is_file():
            raise SystemExit(f"{source} is missing: run the browser tests first")
        size = shrink(source, DEST / f"{name}.png")
        total += size
        print(f"{name:<24} {size / 1e3:7.0f} kB")
    print(f"{'total':<24} {total / 1e6:7.2f} MB")


if __name__ == "__main__":
    main()
