"""After `module.` the real engine writes a name that module binds: the server holds it to
the workspace index's names with vLLM's structured outputs (completion/constraint.py)."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import pytest
from lsprotocol import types

from tests.engine.conftest import RealEngine
from tests.lspclient import server_session

pytestmark = [pytest.mark.engine, pytest.mark.timeout(600)]

HELPERS = (
    "def load_settings_file(path: str) -> dict[str, str]:\n    return {}\n\n\n"
    "def merge_layers(base: dict[str, str], top: dict[str, str]) -> dict[str, str]:\n"
    "    return {**base, **top}\n\n\n"
    "DEFAULT_LAYER_NAME = 'user'\n"
)
NAMES = {"load_settings_file", "merge_layers", "DEFAULT_LAYER_NAME"}
MAIN = (
    "import os\n\nimport pkg.helpers as hp\n\n\n"
    "def read(folder):\n    path = os.path.join(folder, 'app.toml')\n    data = hp.\n"
)


async def first_name(
    real_engine: RealEngine, env: dict[str, str], tmp_path: Path, member_names: bool
) -> str:
    root = tmp_path / f"ws-{member_names}"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "helpers.py").write_text(HELPERS)
    (root / "main.py").write_text(MAIN)
    async with server_session(env, real_engine.url, tmp_path / f"state-{member_names}") as s:
        await s.client.initialize_session(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                root_uri=root.as_uri(),
                initialization_options={
                    "engine": {"url": real_engine.url},
                    "completion": {"debounceMs": 0, "alternatives": 1},
                    "context": {"workspace": {"memberNames": member_names}},
                },
            )
        )

        deadline = time.monotonic() + 60
        while ((await s.stats()).get("index") or {}).get("first_pass_s") is None:
            assert time.monotonic() < deadline, "the index's first pass did not end"
            await asyncio.sleep(0.1)
        uri = s.open(MAIN, uri=(root / "main.py").as_uri())
        items = await s.complete(uri, 7, len("    data = hp."))
    text = items[0].insert_text if items else ""
    found = re.match(r"\w*", text)
    return found.group(0) if found else ""


async def test_the_completion_after_a_module_alias_is_one_of_its_names(
    real_engine: RealEngine, isolated_env: dict[str, str], tmp_path: Path
) -> None:
    held = await first_name(real_engine, isolated_env, tmp_path, True)
    assert held in NAMES, held  # unconstrained, this model writes `hp.read_data(` here
    free = await first_name(real_engine, isolated_env, tmp_path, False)
    print(f"held to the module's names: {held!r}; free: {free!r}")
