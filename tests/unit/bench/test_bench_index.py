"""`bench index` over a small synthetic workspace: the real server indexes it while the
rounds run, `copilot/stats` says when and how much, retrieval is timed at sampled cursors, and
the table renders. Seconds; nothing timed is asserted."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from copilot_lsp.bench.index import command
from copilot_lsp.bench.index.report import render
from copilot_lsp.bench.index.run import children, rss_mb
from copilot_lsp.cli.bench import REPORTS
from copilot_lsp.cli.main import build_parser


def _workspace(root: Path) -> None:
    for package in range(3):
        folder = root / f"pkg{package}"
        folder.mkdir(parents=True)
        (folder / "__init__.py").write_text("")
        for module in range(4):
            body = [f"import pkg{(package + 1) % 3}.mod{module}", ""]
            for function in range(12):
                body += [
                    f"def handle_{package}_{module}_{function}(records, limit):",
                    "    total = compute_total(records, limit)",
                    f"    return total + {function}",
                    "",
                ]
            (folder / f"mod{module}.py").write_text("\n".join(body))
    (root / ".env").write_text("SECRET=1\n")  # never indexed


def test_index_bench_over_a_small_workspace(tmp_path: Path) -> None:
    root = tmp_path / "workspace"
    _workspace(root)
    out = tmp_path / "index.json"
    ceiling = os.environ.get("GIT_CEILING_DIRECTORIES")
    args = build_parser().parse_args(
        [
            "bench",
            "index",
            "--root",
            str(root),
            "--walk",
            "-n",
            "5",
            "--warmup",
            "1",
            "--gap-ms",
            "0",
            "--cursors",
            "6",
            "--out",
            str(out),
        ]
    )
    report, table = command.run(args)
    assert report["git_ceiling"] == str(root.parent)
    assert os.environ.get("GIT_CEILING_DIRECTORIES") == ceiling  # put back

    on = report["on"]
    assert on["index"]["files"] == 15 and on["index"]["indexing"] is False
    assert on["index"]["first_pass_files"] == 15 and on["index"]["first_pass_s"] > 0
    assert on["index"]["definitions"] >= 144 and on["index"]["windows"] > 0
    assert report["off"]["index"]["enabled"] is False and report["off"]["index"]["files"] == 0
    assert on["after"]["round_trip_ms"]["n"] == 5
    assert on["after_off"]["round_trip_ms"]["n"] == 5  # the index-off server, in turns
    assert on["during_off"]["round_trip_ms"]["n"] > 0
    assert report["off"]["keystrokes"]["prompt_built_ms"]["n"] == 5
    assert on["memory"]["built"]["server_mb"] > 0
    retrieval = report["retrieval"]
    assert retrieval["files"] == 15 and retrieval["lines"] > 500
    assert retrieval["retrieval_ms"]["n"] == 6
    assert report["server_rate"]["same_files_as_in_process"] is True
    assert "while indexing" in table and "retrieval per cursor" in table
    assert "off, alongside" in table and "index built, over off alongside: p50 x" in table
    assert render(json.loads(json.dumps(report))) == table


def test_index_bench_is_registered_with_its_options() -> None:
    assert REPORTS["index"] is command
    args = build_parser().parse_args(["bench", "index"])
    assert isinstance(args, argparse.Namespace)
    assert args.max_files == 20_000 and args.root is None and not args.walk
    assert command.default_root().name == "site-packages"


def test_memory_of_this_process_and_its_children() -> None:
    assert (rss_mb(os.getpid()) or 0) > 0
    assert os.getpid() not in children(os.getpid())
