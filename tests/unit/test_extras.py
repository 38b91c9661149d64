"""A command whose optional extra is missing ends in one clear line naming the extra."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from copilot_lsp.cli import draft
from copilot_lsp.cli.main import main


def hide(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    """Make `import <module>` fail as if it were not installed (and re-import our users)."""
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)
    for name in list(sys.modules):
        if name.startswith("copilot_lsp.draft."):
            monkeypatch.delitem(sys.modules, name)


def test_draft_train_without_torch_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    hide(monkeypatch, "torch")
    argv = ["draft", "train", "--method", "eagle", "--target", str(tmp_path), "--out", "out"]
    assert main(argv) == 1
    err = capsys.readouterr().err.strip()
    assert err == "copilot-lsp: draft train needs torch: pip install 'copilot-lsp[engine-cpu]'"


def test_a_missing_module_of_no_extra_is_still_a_bug(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(args: object) -> int:
        raise ModuleNotFoundError("No module named 'nothing_we_ship'", name="nothing_we_ship")

    monkeypatch.setattr(draft, "run", broken)
    with pytest.raises(ModuleNotFoundError):
        main(["draft", "fingerprint", "x"])
