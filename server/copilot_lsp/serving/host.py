"""What the machine running the CPU engine can do, for the choices that depend on it.

The embedded model's precision: bfloat16 only pays on CPUs with bfloat16 instructions
(AVX512-BF16 or AMX on x86, the BF16 extension on Arm). Elsewhere vLLM's oneDNN matmul
refuses bfloat16 and falls back to a generic kernel whose cost grows with the rows it
multiplies, so a prompt is prefilled at decoding speed: measured on a 2-core AVX2 EPYC, a
370-token prompt took 9.5 s to its first token in bfloat16 and 1.0 s in float32, with
decoding at 15.6 against 16.0 tokens/s (docs/benchmarks/replay/README.md).

The cores the engine computes on: vLLM's CPU build keeps one core back for its API server by
default. On a box with a handful of cores that halves (or thirds) the engine's compute, and
an editor's completions are prefill-bound, so small machines give the engine every core.
"""

from __future__ import annotations

import os
import platform
from functools import cache
from pathlib import Path
from typing import Literal

EmbeddedDtype = Literal["bfloat16", "float32"]

_BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16", "bf16"})
"""x86 (`flags`) and Arm (`Features`) names of bfloat16 arithmetic in /proc/cpuinfo."""

SMALL_MACHINE_CORES = 4
"""Up to this many cores the engine is given all of them (no core kept back)."""


def cpu_flags(cpuinfo: str) -> frozenset[str]:
    """The feature flags /proc/cpuinfo lists (those of the first processor)."""
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() in ("flags", "features"):
            return frozenset(value.split())
    return frozenset()


def native_bfloat16(flags: frozenset[str]) -> bool:
    return not _BF16_FLAGS.isdisjoint(flags)


def embedded_dtype_for(flags: frozenset[str]) -> EmbeddedDtype:
    """The precision the embedded model runs fastest in on a CPU with these flags."""
    return "bfloat16" if native_bfloat16(flags) else "float32"


@cache
def this_cpu_flags() -> frozenset[str]:
    try:
        return cpu_flags(Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return frozenset()


def this_machine_embedded_dtype() -> EmbeddedDtype:
    """bfloat16 where this CPU computes in it natively, else float32 (also where the CPU
    cannot be inspected: float32 is never the slow path)."""
    if platform.system() != "Linux":
        return "float32"
    return embedded_dtype_for(this_cpu_flags())


def reserved_cores(cores: int | None) -> str | None:
    """VLLM_CPU_NUM_OF_RESERVED_CPU for a machine with `cores`: "0" on a small machine,
    None (vLLM's own default) on a larger one."""
    return "0" if cores is not None and cores <= SMALL_MACHINE_CORES else None


def usable_cores() -> int | None:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count()
