import * as vscode from "vscode";
import { readFrom, Settings } from "../logic/settings";

export const NAMESPACE = "copilotLsp";

/** The extension's settings, with `${userHome}` and `${workspaceFolder}` resolved in paths. */
export function readSettings(): Settings {
  const config = vscode.workspace.getConfiguration(NAMESPACE);
  const settings = readFrom({
    get: <T>(key: string, fallback: T) => config.get<T>(key, fallback),
    isSet: (key) => {
      const found = config.inspect(key);
      return [found?.globalValue, found?.workspaceValue, found?.workspaceFolderValue].some((v) => v !== undefined);
    },
  });
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? "";
  const home = process.env.HOME ?? process.env.USERPROFILE ?? "";
  const resolve = (value: string) => value.replace("${userHome}", home).replace("${workspaceFolder}", folder);
  return { ...settings, serverPath: resolve(settings.serverPath), serverArgs: settings.serverArgs.map(resolve) };
}
