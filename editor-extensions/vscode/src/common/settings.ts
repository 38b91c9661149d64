import * as vscode from "vscode";
import { DEFAULTS, Settings } from "../logic/settings";

export const NAMESPACE = "copilotLsp";

/** The extension's settings, with `${userHome}` and `${workspaceFolder}` resolved in paths. */
export function readSettings(): Settings {
  const config = vscode.workspace.getConfiguration(NAMESPACE);
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? "";
  const home = process.env.HOME ?? process.env.USERPROFILE ?? "";
  const resolve = (value: string) => value.replace("${userHome}", home).replace("${workspaceFolder}", folder);
  return {
    serverPath: resolve(config.get<string>("serverPath", DEFAULTS.serverPath)),
    serverArgs: config.get<string[]>("serverArgs", DEFAULTS.serverArgs).map(resolve),
    engineUrl: config.get<string | null>("engine.url", DEFAULTS.engineUrl),
    engineProfile: config.get<string>("engine.profile", DEFAULTS.engineProfile),
    debounceMs: config.get<number>("debounceMs", DEFAULTS.debounceMs),
    streaming: config.get<boolean>("streaming", DEFAULTS.streaming),
    enable: config.get<Record<string, boolean>>("enable", DEFAULTS.enable),
    statusIntervalS: config.get<number>("statusIntervalS", DEFAULTS.statusIntervalS),
  };
}
