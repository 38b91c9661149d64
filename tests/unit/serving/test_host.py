"""The embedded model's precision and the engine's cores follow the machine (serving/host.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from copilot_lsp.errors import ConfigError
from copilot_lsp.serving import host, launcher
from copilot_lsp.serving.profiles import load_profile

EPYC_AVX2 = """\
processor\t: 0
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC
flags\t\t: fpu vme sse sse2 avx f16c fma avx2 bmi2 sha_ni vaes

processor\t: 1
flags\t\t: fpu vme sse sse2 avx f16c fma avx2 bmi2 sha_ni vaes
"""
SAPPHIRE_RAPIDS = "flags\t\t: avx2 avx512f avx512_bf16 amx_bf16 amx_tile\n"
COOPER_LAKE = "flags\t\t: avx2 avx512f avx512_bf16\n"
GRAVITON3 = "processor\t: 0\nFeatures\t: fp asimd sve bf16 i8mm\n"
OLD_ARM = "processor\t: 0\nFeatures\t: fp asimd evtstrm crc32\n"


pytestmark = pytest.mark.usefixtures("repo_configs")


@pytest.mark.parametrize(
    ("cpuinfo", "dtype"),
    [
        (EPYC_AVX2, "float32"),
        (SAPPHIRE_RAPIDS, "bfloat16"),
        (COOPER_LAKE, "bfloat16"),
        (GRAVITON3, "bfloat16"),
        (OLD_ARM, "float32"),
        ("", "float32"),
    ],
)
def test_bfloat16_only_where_the_cpu_computes_in_it(cpuinfo: str, dtype: str) -> None:
    assert host.embedded_dtype_for(host.cpu_flags(cpuinfo)) == dtype


def test_flags_are_read_from_the_first_processor() -> None:
    flags = host.cpu_flags(EPYC_AVX2)
    assert "avx2" in flags and "sha_ni" in flags and "processor" not in flags


def test_an_auto_profile_is_resolved_for_this_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(host, "this_cpu_flags", lambda: host.cpu_flags(EPYC_AVX2))
    profile = load_profile("local-cpu")
    assert (profile.model.source, profile.model.dtype) == ("embedded:float32", "float32")
    monkeypatch.setattr(host, "this_cpu_flags", lambda: host.cpu_flags(SAPPHIRE_RAPIDS))
    profile = load_profile("local-cpu")
    assert (profile.model.source, profile.model.dtype) == ("embedded:bfloat16", "bfloat16")
    assert "--dtype" in (argv := profile.command("/m")) and argv[argv.index("--dtype") + 1] == (
        "bfloat16"
    )


def test_a_profile_naming_a_precision_keeps_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(host, "this_cpu_flags", lambda: host.cpu_flags(EPYC_AVX2))
    assert load_profile("gpu-smollm2-eagle").model.dtype == "bfloat16"


def test_an_unknown_embedded_precision_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(
        'name = "p"\n[model]\nsource = "embedded:int4"\nserved_name = "m"\n'
        '[server]\nbuild = "cpu"\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match="embedded model comes in auto, bfloat16, float32"):
        load_profile(str(path))


@pytest.mark.parametrize(
    ("cores", "reserved"), [(1, "0"), (2, "0"), (4, "0"), (8, None), (None, None)]
)
def test_small_machines_keep_no_core_back(cores: int | None, reserved: str | None) -> None:
    assert host.reserved_cores(cores) == reserved


def test_the_engine_gets_every_core_of_a_small_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VLLM_CPU_NUM_OF_RESERVED_CPU", raising=False)
    monkeypatch.setattr(launcher, "usable_cores", lambda: 2)
    profile = load_profile("local-cpu")
    assert launcher.engine_environment(profile)["VLLM_CPU_NUM_OF_RESERVED_CPU"] == "0"
    monkeypatch.setattr(launcher, "usable_cores", lambda: 16)
    assert "VLLM_CPU_NUM_OF_RESERVED_CPU" not in launcher.engine_environment(profile)
    # The user's own setting wins.
    monkeypatch.setattr(launcher, "usable_cores", lambda: 2)
    monkeypatch.setenv("VLLM_CPU_NUM_OF_RESERVED_CPU", "1")
    assert launcher.engine_environment(profile)["VLLM_CPU_NUM_OF_RESERVED_CPU"] == "1"
