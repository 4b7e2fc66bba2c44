"""One writer for the SPICE goldens, so every golden names its source the same way."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

SOURCE = "spice-1.0.jar + CoreNLP 3.6.0 (tools/spice_oracle/SpiceOracle.java)"


def write_golden(dst: Path, payload: dict) -> None:
    """Compact JSON, gzip level 9 (the goldens are committed)."""
    with gzip.open(dst, "wt", encoding="utf-8", compresslevel=9) as fh:
        json.dump(payload, fh, separators=(",", ":"))
