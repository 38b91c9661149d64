"""`bench index`'s table."""

from __future__ import annotations

from typing import Any


def _ms(data: dict[str, Any] | None) -> str:
    if not data or not data.get("n"):
        return "-"
    return f"p50 {data['p50']:.2f}  p99 {data['p99']:.2f}  (n={data['n']})"


def _mark(ok: bool) -> str:
    return "meets" if ok else "MISSES"


def _target(data: dict[str, Any] | None, targets: dict[str, float]) -> str:
    if not data or not data.get("n"):
        return ""
    ok = data["p50"] <= targets["round_trip_p50_ms"] and data["p99"] <= targets["round_trip_p99_ms"]
    return _mark(ok)


def _ratio(on: dict[str, Any], off: dict[str, Any] | None) -> str:
    """p50 and p99 of `on`'s round trips over `off`'s, measured in turns on one host."""
    if not off or not off["round_trip_ms"].get("n") or not on["round_trip_ms"].get("n"):
        return ""
    a, b = on["round_trip_ms"], off["round_trip_ms"]
    if not b["p50"] or not b["p99"]:
        return ""
    return f"p50 x{a['p50'] / b['p50']:.2f}, p99 x{a['p99'] / b['p99']:.2f}"


def render(report: dict[str, Any]) -> str:
    targets = report["targets"]
    retrieval = report["retrieval"]
    lines = [
        f"bench index: {report['root']} (maxFiles {report['max_files']:,}; {report['cpus']} "
        f"CPUs, load {report['load_before'][0]:.1f} / {report['load_mid'][0]:.1f} / "
        f"{report['load_after'][0]:.1f} at start / mid / end)",
        f"  files {retrieval['files']:,}, lines {retrieval['lines']:,}, "
        f"{retrieval['bytes'] / 1e6:,.1f} MB; definitions {retrieval['index']['definitions']:,},"
        f" windows {retrieval['index']['windows']:,}",
    ]
    on, off = report.get("on"), report.get("off")
    if on:
        index, rate = on["index"], report.get("server_rate") or {}
        lines += [
            "",
            "server (over stdio, worker process)",
            f"  first pass           {index.get('first_pass_s')} s for {index.get('files'):,} "
            f"files: {rate.get('files_per_s')} files/s, {rate.get('lines_per_s')} lines/s",
        ]
        memory = on["memory"]
        peak = memory.get("peak", {})
        lines.append(
            f"  server RSS           {memory['at_start']['server_mb']} MiB at start -> "
            f"{memory['built']['server_mb']} MiB built (peak {peak.get('server_mb')}); "
            f"index off {off['memory']['server_mb'] if off else '-'} MiB"
        )
        lines.append(
            f"  worker RSS           {memory['built']['worker_mb']} MiB built "
            f"(peak {peak.get('worker_mb')})"
        )
    lines += [
        "",
        "in process (one thread, no server)",
        f"  build                {retrieval['build_s']} s: {retrieval['files_per_s']} files/s, "
        f"{retrieval['lines_per_s']:,} lines/s (discovery {retrieval['discover_s']} s)",
        f"  process RSS          {retrieval['process_rss_mb']['before']} -> "
        f"{retrieval['process_rss_mb']['after']} MiB",
        f"  retrieval per cursor {_ms(retrieval['retrieval_ms'])}  max "
        f"{retrieval['retrieval_ms'].get('max')} ms  "
        f"{_mark(retrieval['retrieval_ms'].get('p99', 0) <= targets['retrieval_p99_ms'])} "
        f"p99 <= {targets['retrieval_p99_ms']:g} ms",
    ]
    if on:
        lines += [
            "",
            f"keystrokes: {report['edit']} edits on a {report['file_lines']:,}-line file, "
            f"{report['gap_ms']:g} ms apart; round trip at the client (prompt built, server)",
        ]
        for name, data in (
            ("index off", off["keystrokes"] if off else None),
            ("while indexing", on["during"]),
            ("  off, alongside", on.get("during_off")),
            ("index built", on["after"]),
            ("  off, alongside", on.get("after_off")),
        ):
            if data is None:
                continue
            lines.append(
                f"  {name:<20} {_ms(data['round_trip_ms'])}  max {data['max_ms']}  "
                f"[built {_ms(data['prompt_built_ms'])}]  {_target(data['round_trip_ms'], targets)}"
            )
        for name, phase in (("while indexing", "during"), ("index built", "after")):
            if ratio := _ratio(on[phase], on.get(f"{phase}_off")):
                lines.append(f"  {name}, over off alongside: {ratio}")
        lines.append(
            f"  targets: p50 <= {targets['round_trip_p50_ms']:g} ms, p99 <= "
            f"{targets['round_trip_p99_ms']:g} ms"
        )
    return "\n".join(lines)
