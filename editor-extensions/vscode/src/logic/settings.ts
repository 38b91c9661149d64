// Settings → server initializationOptions and per-language enablement (pure, unit-tested).

export interface Settings {
  serverPath: string;
  serverArgs: string[];
  engineUrl: string | null;
  engineProfile: string;
  debounceMs: number;
  streaming: boolean;
  enable: Record<string, boolean>;
  statusIntervalS: number;
}

export const DEFAULTS: Settings = {
  serverPath: "copilot-lsp",
  serverArgs: [],
  engineUrl: null,
  engineProfile: "local-cpu",
  debounceMs: 40,
  streaming: true,
  enable: { "*": true },
  statusIntervalS: 5,
};

/** The server's settings tree (camelCase, docs/protocol.md and the README's table). */
export function initializationOptions(settings: Settings): Record<string, unknown> {
  const options: Record<string, unknown> = {
    completion: { debounceMs: settings.debounceMs },
    editor: { streaming: settings.streaming },
  };
  if (settings.engineUrl) {
    options.engine = { url: settings.engineUrl };
  }
  return options;
}

/** Whether suggestions are wanted in `languageId` (the language's entry, else "*", else on). */
export function enabledFor(enable: Record<string, boolean>, languageId: string): boolean {
  if (languageId in enable) {
    return enable[languageId] !== false;
  }
  return enable["*"] !== false;
}

/** Settings whose change needs a server restart (the rest are read when used). */
export const RESTART_KEYS = ["serverPath", "serverArgs", "engine.url", "debounceMs", "streaming"];
