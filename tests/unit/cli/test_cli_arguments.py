"""The command line as a newcomer meets it: ports checked before anything starts, `-v` after
the command, help on a terminal, one meaning of `--json`, `stats` that follows the settings
and says when there is no log, `engine up` that says what it waits for."""

from __future__ import annotations

import importlib
import io
import itertools
import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from copilot_lsp.cli.main import main
from copilot_lsp.errors import ConfigError, LauncherError
from copilot_lsp.serving import launcher
from copilot_lsp.serving.profiles import load_profile
from copilot_lsp.serving.startup import StartupLog
from tests.conftest import REPO

cli_main = importlib.import_module("copilot_lsp.cli.main")  # the module: the package's
"""`main` attribute is the function."""


pytestmark = pytest.mark.usefixtures("clean_env")


def write_log(path: Path, count: int = 3) -> None:
    records = [
        {"id": f"c{i}", "outcome": "shown", "ms": {"first_token": 10.0 + i, "finished": 20.0}}
        for i in range(count)
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")


# --- ports ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [["--port", "70000"], ["--port=-1"], ["--port", "-1"], ["--port", "0"], ["--port", "eighty"]],
)
def test_engine_up_refuses_a_port_out_of_range_before_preparing_anything(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    started: list[Any] = []
    monkeypatch.setattr(launcher, "engine_up", lambda *a, **k: started.append(a))
    monkeypatch.setattr(launcher, "model_path_for", lambda *a, **k: started.append(a))
    with pytest.raises(SystemExit) as exit_:
        main(["engine", "up", *argv])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "argument --port" in err and "1-65535" in err
    assert started == []


def test_bench_engine_refuses_a_port_out_of_range(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["bench", "engine", "--out", "x", "--port", "65536"])
    assert exit_.value.code == 2
    assert "1-65535" in capsys.readouterr().err


def test_the_launcher_refuses_port_zero_instead_of_using_the_profiles(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def prepare(*args: Any, **kwargs: Any) -> str:
        raise AssertionError("prepared a model for a port that cannot work")

    monkeypatch.setattr(launcher, "model_path_for", prepare)
    for port in (0, -1, 70000):
        with pytest.raises(ConfigError, match="1-65535"):
            launcher.engine_up(load_profile("local-cpu"), port=port)


# --- -v after the command, help on a terminal ------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "level"),
    [
        (["stats", "-v"], logging.INFO),
        (["stats", "-vv"], logging.DEBUG),
        (["-v", "stats", "-v"], logging.DEBUG),
        (["-v", "stats"], logging.INFO),
        (["stats"], logging.WARNING),
    ],
)
def test_verbose_is_accepted_before_and_after_the_command(
    argv: list[str], level: int, tmp_path: Path
) -> None:
    log = tmp_path / "log.jsonl"
    write_log(log)
    assert main([*argv, "--log", str(log)]) == 0
    assert logging.getLogger().level == level


def test_log_file_after_a_nested_command(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    write_log(log)
    target = tmp_path / "out.log"
    assert main(["stats", "--log", str(log), "-vv", "--log-file", str(target)]) == 0
    logging.getLogger("copilot_lsp").debug("into the file")
    logging.shutdown()
    assert "into the file" in target.read_text()


class Terminal(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def recorded(served: list[bool]) -> Callable[[], int]:
    """A stand-in for the language server's stdio loop that notes that it ran."""

    def serve() -> int:
        served.append(True)
        return 0

    return serve


def test_bare_command_on_a_terminal_prints_help_instead_of_waiting(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    served: list[bool] = []
    monkeypatch.setattr(cli_main, "_serve", recorded(served))
    monkeypatch.setattr(sys, "stdin", Terminal(tty=True))
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: copilot-lsp") and "copilot-lsp --stdio" in out
    assert served == []


def test_stdio_stays_the_default_on_a_pipe_and_with_stdio_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    served: list[bool] = []
    monkeypatch.setattr(cli_main, "_serve", recorded(served))
    monkeypatch.setattr(sys, "stdin", Terminal(tty=False))
    assert main([]) == 0
    monkeypatch.setattr(sys, "stdin", Terminal(tty=True))
    assert main(["--stdio"]) == 0
    assert served == [True, True]
    assert capsys.readouterr().out == ""  # nothing but JSON-RPC on stdout


# --- --json prints, --out writes ------------------------------------------------------------


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "m.py"
    path.write_text("import os\n\n\ndef f(x):\n    return os.path.join(x, 'a')\n" * 20)
    return path


def test_bench_json_prints_the_report_on_stdout(
    source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bench", "context", str(source), "-n", "3", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert "m.py" in str(report["files"]) and "full_parse_ms" in report


def test_bench_out_writes_the_report_and_prints_the_table(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "reports" / "context.json"
    assert main(["bench", "context", str(source), "-n", "3", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "full parse" in captured.out and not captured.out.lstrip().startswith("{")
    assert "files" in json.loads(out.read_text())
    assert f"report written to {out}" in captured.err


def test_bench_json_with_a_path_still_writes_it_with_a_deprecation(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "old.json"
    assert main(["bench", "context", str(source), "-n", "3", "--json", str(out)]) == 0
    captured = capsys.readouterr()
    assert "files" in json.loads(out.read_text())
    assert "deprecated" in captured.err and f"--out {out}" in captured.err
    assert "full parse" in captured.out


def test_no_caller_passes_a_path_to_json() -> None:
    callers = [REPO / "Makefile", REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    offenders = [
        f"{path.name}: {line.strip()}"
        for path in callers
        for line in path.read_text(encoding="utf-8").splitlines()
        if "--json " in line
        and "bench" in line
        and ".json" in line.split("--json ", 1)[1]
        and "deprecated" not in line  # the docs saying the old spelling still works
    ]
    assert offenders == []


# --- stats ------------------------------------------------------------------------------------


def test_stats_follows_telemetry_log_path(
    clean_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "elsewhere" / "c.jsonl"
    write_log(log, count=4)
    clean_env.write_text(f'[telemetry]\nlog_path = "{log}"\n', encoding="utf-8")
    assert main(["stats"]) == 0
    assert f"4 completions in {log}" in capsys.readouterr().out


def test_stats_on_a_missing_log_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.jsonl"
    assert main(["stats", "--log", str(missing)]) == 2
    assert f"no such log file: {missing}" in capsys.readouterr().err
    assert main(["stats"]) == 1  # nothing logged yet at the default place
    err = capsys.readouterr().err
    assert "no completion log at" in err and "telemetry.logPath" in err


# --- engine up progress -------------------------------------------------------------------


VLLM_LOG = [
    "(APIServer pid=1) INFO non-default args: {...}",
    "(EngineCore pid=2) INFO [core.py:133] Initializing a V1 LLM engine (v0.32.0) with config",
    "(Worker pid=3) INFO [cpu_model_runner.py:68] Starting to load model /m...",
    "(EngineCore pid=2) INFO [kv_cache_utils.py:2327] CPU KV cache size: 93,184 tokens",
    "(APIServer pid=1) INFO [entry.py:136] Supported tasks: ['generate']",
]


class Starting:
    """A vLLM process that writes one more log line per health poll, and never exits."""

    returncode = None

    def poll(self) -> None:
        return None


def test_engine_up_says_the_phase_and_the_seconds_while_it_waits(tmp_path: Path) -> None:
    log_path = tmp_path / "engine.log"
    log_path.write_text("")
    now = [0.0]
    said: list[str] = []
    polls = [0]

    def healthy(root: str) -> bool:
        polls[0] += 1
        line = polls[0] // 12  # a new line every 6 s of waiting
        if line < len(VLLM_LOG):
            log_path.write_text("\n".join(VLLM_LOG[: line + 1]) + "\n")
        return line > len(VLLM_LOG)

    def sleep(seconds: float) -> None:
        now[0] += seconds

    assert launcher.wait_until_healthy(
        Starting(),
        "http://h",
        log_path,
        300.0,
        said.append,
        healthy=healthy,
        clock=lambda: now[0],
        sleep=sleep,
    )
    assert said[0].startswith("waiting for the engine: starting vLLM, 5 s")
    phases = [line.split(": ", 1)[1].rsplit(",", 1)[0] for line in said]
    assert phases.index("loading the weights") < phases.index("allocating the KV cache")
    assert phases[-1] == "starting the HTTP server"
    seconds = [int(line.rsplit(", ", 1)[1].split(" s")[0]) for line in said]
    assert seconds == sorted(seconds) and all(b - a == 5 for a, b in itertools.pairwise(seconds))


def test_engine_up_progress_stops_at_the_deadline(tmp_path: Path) -> None:
    now = [0.0]
    said: list[str] = []

    def sleep(seconds: float) -> None:
        now[0] += seconds

    assert not launcher.wait_until_healthy(
        Starting(),
        "http://h",
        tmp_path / "none.log",
        12.0,
        said.append,
        healthy=lambda root: False,
        clock=lambda: now[0],
        sleep=sleep,
    )
    assert [line.split(", ")[1].split(" ")[0] for line in said] == ["5", "10"]


def test_an_engine_that_exits_while_starting_is_an_error(tmp_path: Path) -> None:
    class Exited:
        returncode = 1

        def poll(self) -> int:
            return 1

    with pytest.raises(LauncherError, match="exited with code 1"):
        launcher.wait_until_healthy(Exited(), "http://h", tmp_path / "x.log", 10.0, print)


def test_startup_log_reads_a_line_written_in_two_pieces(tmp_path: Path) -> None:
    path = tmp_path / "engine.log"
    path.write_text("INFO Starting to lo")
    startup = StartupLog(path)
    assert startup.phase() == "starting vLLM"
    with path.open("a") as handle:
        handle.write("ad model /m\n")
    assert startup.phase() == "loading the weights"
