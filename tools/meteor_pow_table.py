"""Write ``capeval_core/data/meteor_pow.npz``: meteor-1.5.jar's ``Math.pow(frag, beta)``.

    python -m tools.meteor_pow_table          # needs a JDK (javac, java) on x86-64

The jar raises the fragmentation ``frag = c / (s / 2.0)`` (``c`` chunks, ``s`` matched words
of both sides, ``c <= s / 2``) to the power beta with ``Math.pow`` (metric-spec §5.7), whose
results are not always correctly rounded (see :mod:`capeval_core.meteor_pow`). For each beta
of METEOR's tasks this tool asks the JVM for ``Math.pow`` of every such base with
``s <= SPARSE_MAX`` (a ten-line Java program compiled here, which reads doubles and writes the
bits of ``Math.pow``), and keeps

* ``dense_k``: every value for ``s <= DENSE_MAX``, indexed by ``offsets[s] + c``
  (``capeval_core.meteor_pow.dense_offsets``); the base of row 0 is 0.0;
* ``error_p_k``, ``error_q_k``, ``error_sign_k``: each base ``p / q`` (lowest terms) up to
  ``SPARSE_MAX`` where ``Math.pow`` is not the correctly rounded power, and whether it is the
  double above (+1) or below (-1) it.

The correctly rounded power is decided from the 64-bit-mantissa ``long double`` power (numpy's
``np.longdouble``, glibc's ``powl``) where that lies clearly off the midpoint between two
doubles, and otherwise by :func:`capeval_core.meteor_pow.correctly_rounded_pow`; a sample is
checked both ways first. The values are the JVM's outputs (numbers, no code of it), recorded
with the JVM's version.
"""

from __future__ import annotations

import platform
import subprocess
import sys
import tempfile
from math import gcd
from pathlib import Path

import numpy as np

from capeval_core.meteor_pow import (
    DENSE_MAX,
    SPARSE_MAX,
    TABLE,
    correctly_rounded_pow,
    dense_offsets,
)
from capeval_core.metrics.meteor import TASKS

_SOURCE = """
import java.io.*;
import java.nio.*;

public class JarPow {
    public static void main(String[] args) throws IOException {
        double beta = Double.parseDouble(args[0]);
        DataInputStream in = new DataInputStream(new BufferedInputStream(System.in, 1 << 20));
        OutputStream out = new BufferedOutputStream(System.out, 1 << 20);
        byte[] raw = new byte[8];
        ByteBuffer buf = ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN);
        while (true) {
            try { in.readFully(raw); } catch (EOFException e) { break; }
            double x = buf.getDouble(0);
            buf.putLong(0, Double.doubleToRawLongBits(Math.pow(x, beta)));
            out.write(raw);
        }
        out.flush();
    }
}
"""

#: distance (in units of the gap between the two doubles) from their midpoint under which
#: the long double power does not decide the rounding
MARGIN = 1 / 256


def _java_pow(classes: Path, beta: float, x: np.ndarray) -> np.ndarray:
    out = subprocess.run(
        ["java", "-cp", str(classes), "JarPow", repr(beta)],
        input=x.astype("<f8").tobytes(),
        capture_output=True,
        check=True,
    ).stdout
    return np.frombuffer(out, dtype="<f8").astype(np.float64)


def _rounded(x: np.ndarray, beta: float) -> np.ndarray:
    """The correctly rounded ``x ** beta``, elementwise (see the module doc)."""
    y = np.power(x.astype(np.longdouble), np.longdouble(beta))
    f = y.astype(np.float64)
    lo = np.where(f.astype(np.longdouble) <= y, f, np.nextafter(f, -np.inf))
    hi = np.nextafter(lo, np.inf)
    mid = (lo.astype(np.longdouble) + hi.astype(np.longdouble)) / 2
    near = np.abs(y - mid) <= MARGIN * (hi.astype(np.longdouble) - lo.astype(np.longdouble))
    for k in np.flatnonzero(near).tolist():
        f[k] = correctly_rounded_pow(float(x[k]), beta)
    return f


def _check_long_double(beta: float) -> None:
    rng = np.random.default_rng(40)
    s = rng.integers(2, SPARSE_MAX + 1, 20_000)
    c = 1 + (rng.random(20_000) * (s // 2)).astype(np.int64)
    x = c / (s / 2.0)
    exact = np.array([correctly_rounded_pow(v, beta) for v in x.tolist()])
    assert np.array_equal(_rounded(x, beta), exact), "the long double power is not accurate"


def _bases(s_lo: int, s_hi: int) -> tuple[np.ndarray, np.ndarray]:
    """Every (c, s) with 1 <= c <= s // 2 and s_lo <= s < s_hi, by s then c."""
    s = np.repeat(np.arange(s_lo, s_hi), np.arange(s_lo, s_hi) // 2)
    starts = np.cumsum(np.arange(s_lo, s_hi) // 2) - np.arange(s_lo, s_hi) // 2
    c = np.arange(len(s)) - np.repeat(starts, np.arange(s_lo, s_hi) // 2) + 1
    return c, s


def table_for(classes: Path, beta: float) -> dict[str, np.ndarray]:
    offsets = dense_offsets()
    s_dense = np.repeat(np.arange(DENSE_MAX + 1), np.diff(offsets))
    c_dense = np.arange(int(offsets[-1])) - offsets[s_dense]
    with np.errstate(invalid="ignore"):
        x_dense = np.where(c_dense == 0, 0.0, c_dense / (s_dense / 2.0))
    dense = _java_pow(classes, beta, x_dense)
    errors: dict[tuple[int, int], int] = {}
    s_lo = 2
    while s_lo <= SPARSE_MAX:
        s_hi = min(SPARSE_MAX + 1, s_lo + 256)
        c, s = _bases(s_lo, s_hi)
        x = c / (s / 2.0)
        java = _java_pow(classes, beta, x)
        rounded = _rounded(x, beta)
        for k in np.flatnonzero(java != rounded).tolist():
            j, r = float(java[k]), float(rounded[k])
            sign = 1 if j > r else -1
            assert j == np.nextafter(r, sign * np.inf), (x[k], j, r)  # one unit off at most
            g = gcd(2 * int(c[k]), int(s[k]))
            key = (2 * int(c[k]) // g, int(s[k]) // g)
            assert errors.setdefault(key, sign) == sign
        s_lo = s_hi
    # the dense values are the same function of the base
    for k in range(1, len(x_dense)):
        if c_dense[k]:
            g = gcd(2 * int(c_dense[k]), int(s_dense[k]))
            key = (2 * int(c_dense[k]) // g, int(s_dense[k]) // g)
            r = correctly_rounded_pow(float(x_dense[k]), beta)
            want = np.nextafter(r, errors[key] * np.inf) if key in errors else r
            assert dense[k] == want, (x_dense[k], dense[k], want)
    keys = sorted(errors)
    return {
        "dense": dense,
        "error_p": np.array([p for p, _ in keys], dtype=np.uint16),
        "error_q": np.array([q for _, q in keys], dtype=np.uint16),
        "error_sign": np.array([errors[k] for k in keys], dtype=np.int8),
    }


def main() -> None:
    if platform.machine() not in ("x86_64", "AMD64"):
        sys.exit("the jar's values are those of an x86-64 JVM: run this on x86-64")
    betas = sorted({task[1] for task in TASKS.values()})
    version = subprocess.run(
        ["java", "-XshowSettings:properties", "-version"], capture_output=True, text=True
    ).stderr
    keys = ("java.vm.name", "java.runtime.version", "os.arch")
    vm = [
        line.split("=", 1)[1].strip()
        for line in version.splitlines()
        if line.strip().startswith(keys)
    ]
    arrays: dict[str, np.ndarray] = {"betas": np.array(betas)}
    with tempfile.TemporaryDirectory(prefix="capeval-pow-") as tmp:
        classes = Path(tmp)
        (classes / "JarPow.java").write_text(_SOURCE)
        subprocess.run(["javac", "-d", str(classes), str(classes / "JarPow.java")], check=True)
        for k, beta in enumerate(betas):
            _check_long_double(beta)
            for name, values in table_for(classes, beta).items():
                arrays[f"{name}_{k}"] = values
            print(f"beta {beta}: {len(arrays[f'error_p_{k}'])} bases where Math.pow is not "
                  f"correctly rounded (s <= {SPARSE_MAX})")  # fmt: skip
    arrays["origin"] = np.array(
        f"Math.pow(frag, beta) of {', '.join(vm)}; written by python -m tools.meteor_pow_table"
    )
    path = Path(__file__).resolve().parents[1] / "capeval_core" / TABLE
    np.savez_compressed(path, **arrays)
    print(f"wrote {path.name} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
