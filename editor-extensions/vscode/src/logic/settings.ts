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
  /** Next-edit suggestions (the server's `nextEditSuggestions.enabled`; off, as the server). */
  nextEdits: boolean;
}

/** The defaults package.json declares (a test compares them). */
export const DEFAULTS: Settings = {
  serverPath: "copilot-lsp",
  serverArgs: [],
  engineUrl: null,
  engineProfile: "",
  debounceMs: 40,
  streaming: true,
  enable: { "*": true, plaintext: false, markdown: false, scminput: false },
  statusIntervalS: 5,
  nextEdits: false,
};

/**
 * Where each setting lives under `copilotLsp`, and the key it had up to 0.1.0. The extension's
 * own settings are under `client.` (the server skips them); the rest are the server's settings
 * by the server's names, so the section the server pulls holds nothing it rejects.
 */
export const KEYS: Record<keyof Settings, { key: string; old: string }> = {
  serverPath: { key: "client.serverPath", old: "serverPath" },
  serverArgs: { key: "client.serverArgs", old: "serverArgs" },
  engineUrl: { key: "engine.url", old: "engine.url" },
  engineProfile: { key: "client.engineProfile", old: "engine.profile" },
  debounceMs: { key: "completion.debounceMs", old: "debounceMs" },
  streaming: { key: "editor.streaming", old: "streaming" },
  enable: { key: "client.enable", old: "enable" },
  statusIntervalS: { key: "client.statusIntervalS", old: "statusIntervalS" },
  nextEdits: { key: "nextEditSuggestions.enabled", old: "nextEditSuggestions.enabled" },
};

/** Reads the `copilotLsp` section (VS Code's WorkspaceConfiguration, or a test's table). */
export interface Lookup {
  /** The value in effect: the user's, else the declared default, else `fallback`. */
  get<T>(key: string, fallback: T): T;
  /** Whether the user set `key` in some scope (a default does not count). */
  isSet(key: string): boolean;
}

/**
 * The settings, each from its key, or from its 0.1.0 key where only that one is set (the user
 * has not renamed it yet). The server names the old keys it sees in a deprecation warning.
 */
export function readFrom(lookup: Lookup): Settings {
  const read = <K extends keyof Settings>(name: K): Settings[K] => {
    const { key, old } = KEYS[name];
    const from = !lookup.isSet(key) && lookup.isSet(old) ? old : key;
    return lookup.get(from, DEFAULTS[name]);
  };
  return {
    serverPath: read("serverPath"),
    serverArgs: read("serverArgs"),
    engineUrl: read("engineUrl"),
    engineProfile: read("engineProfile"),
    debounceMs: read("debounceMs"),
    streaming: read("streaming"),
    enable: read("enable"),
    statusIntervalS: read("statusIntervalS"),
    nextEdits: read("nextEdits"),
  };
}

/** The server's settings tree (camelCase, docs/settings.md): the extension's server settings. */
export function initializationOptions(settings: Settings): Record<string, unknown> {
  const options: Record<string, unknown> = {
    completion: { debounceMs: settings.debounceMs },
    editor: { streaming: settings.streaming },
    nextEditSuggestions: { enabled: settings.nextEdits },
  };
  if (settings.engineUrl) {
    options.engine = { url: settings.engineUrl };
  }
  return options;
}

/** The terminal command of 'Start the Embedded Engine': no profile, the command line's default. */
export function engineUpCommand(settings: Settings): string {
  const profile = settings.engineProfile ? ` --profile ${settings.engineProfile}` : "";
  return `"${settings.serverPath}" engine up${profile}`;
}

/** Whether suggestions are wanted in `languageId` (the language's entry, else "*", else on). */
export function enabledFor(enable: Record<string, boolean>, languageId: string): boolean {
  if (languageId in enable) {
    return enable[languageId] !== false;
  }
  return enable["*"] !== false;
}

/** Settings whose change needs a server restart (the rest are read when used). */
export const RESTART_KEYS = (["serverPath", "serverArgs", "engineUrl", "debounceMs", "streaming"] as const).flatMap(
  (name) => [KEYS[name].key, KEYS[name].old],
);
