"""train-i2ce's --output is checked before training (and before torch is needed): a file,
a folder under a file or a place that takes no files was found only after the training."""

from __future__ import annotations

import os
import sys

import pytest

from capeval_core.cli import main


def _run(capsys, output) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    code = main(["train-i2ce", "--output", str(output), "--max-captions", "10"])
    return code, capsys.readouterr().err


def test_an_existing_file_is_refused_before_training(tmp_path, capsys) -> None:
    target = tmp_path / "model.npz"
    target.write_text("kept")
    code, err = _run(capsys, target)
    assert code == 2 and err == (
        f"capeval: error: --output {target}: is a file; give a folder (its files are "
        "written there)\n"
    )
    assert target.read_text() == "kept"
    code, err = _run(capsys, target / "sub")
    assert code == 2 and err.endswith(f"is under {target}, a file; give a folder (its files "
                                      "are written there)\n")  # fmt: skip


@pytest.mark.skipif(
    sys.platform == "win32" or os.geteuid() == 0, reason="needs a folder this user cannot write"
)
def test_an_unwritable_place_is_refused_before_training(tmp_path, capsys) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        code, err = _run(capsys, locked / "new" / "model")
    finally:
        locked.chmod(0o700)
    assert code == 2 and f"cannot write in {locked}" in err and len(err.splitlines()) == 1


def test_an_unwritable_place_is_refused_as_root_too(tmp_path, capsys, monkeypatch) -> None:
    """A read-only mount refuses even root: a probe file that cannot be made is said."""
    import tempfile

    def refused(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise PermissionError(13, "Read-only file system")

    monkeypatch.setattr(tempfile, "mkstemp", refused)
    code, err = _run(capsys, tmp_path / "model")
    assert (code, err) == (
        2,
        f"capeval: error: --output {tmp_path / 'model'}: cannot write in {tmp_path} "
        "(Read-only file system)\n",
    )


def test_a_new_folder_passes_the_check(tmp_path, capsys) -> None:
    """Where the output is fine, the command goes on to torch (not installed here: its
    own one-line error) or to training."""
    try:
        import torch  # noqa: F401
    except ImportError:
        code, err = _run(capsys, tmp_path / "a" / "b")
        assert code == 2 and "train-i2ce needs torch" in err
    else:
        pytest.skip("torch is installed: the command would train")
