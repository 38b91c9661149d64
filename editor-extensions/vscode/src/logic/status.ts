// copilot/stats → the status bar's text and tooltip (pure, unit-tested).

export interface StatusView {
  text: string;
  tooltip: string;
  healthy: boolean | null;
}

interface StageRow {
  p50?: number;
}

export interface Stats {
  stages?: Record<string, StageRow>;
  outcomes?: Record<string, number>;
  acceptance?: { offered?: number; accepted?: number; rate?: number };
  engine?: { url?: string; healthy?: boolean | null; inflight?: number };
}

function ms(value: number | undefined): string {
  return value === undefined ? "–" : `${Math.round(value)} ms`;
}

export function statusView(stats: Stats | undefined, error?: string): StatusView {
  if (!stats) {
    return { text: "$(circle-slash) copilot-lsp", tooltip: error ?? "copilot-lsp is not running", healthy: false };
  }
  const engine = stats.engine ?? {};
  const healthy = engine.healthy ?? null;
  const icon = healthy === false ? "$(warning)" : healthy === true ? "$(sparkle)" : "$(circle-outline)";
  const firstLine = stats.stages?.first_line?.p50 ?? stats.stages?.finished?.p50;
  const acceptance = stats.acceptance;
  const rate = acceptance && acceptance.offered ? `${Math.round((acceptance.rate ?? 0) * 100)}%` : "–";
  const text = `${icon} ${ms(firstLine)} · ${rate}`;
  const tooltip = [
    `engine: ${engine.url ?? "?"} (${healthy === true ? "healthy" : healthy === false ? "not answering" : "not used yet"})`,
    `first token p50: ${ms(stats.stages?.first_token?.p50)}`,
    `first line p50: ${ms(stats.stages?.first_line?.p50)}`,
    `whole suggestion p50: ${ms(stats.stages?.finished?.p50)}`,
    `accepted: ${acceptance?.accepted ?? 0} of ${acceptance?.offered ?? 0} shown (${rate})`,
  ].join("\n");
  return { text, tooltip, healthy };
}
