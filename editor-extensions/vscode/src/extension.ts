import * as vscode from "vscode";
import { LanguageClient } from "vscode-languageclient/node";
import { RESTART_KEYS } from "./logic/settings";
import { Partial } from "./logic/stream";
import { channel } from "./common/logging";
import { ACCEPTED_COMMAND, NextEdits } from "./common/nextedit";
import { Provider } from "./common/provider";
import { LspInlineEdit } from "./logic/nextedit";
import { createClient, startEngine } from "./common/server";
import { NAMESPACE, readSettings } from "./common/settings";
import { Status } from "./common/status";

let client: LanguageClient | undefined;
let restarting = false;

async function startClient(provider: Provider, status: Status): Promise<void> {
  const settings = readSettings();
  const next = createClient(settings);
  next.onNotification("copilot/partialCompletion", (partial: Partial) => provider.onPartial(partial));
  try {
    await next.start();
    client = next;
    channel.info(`copilot-lsp started: ${settings.serverPath} ${settings.serverArgs.join(" ")}`);
  } catch (error) {
    client = undefined;
    channel.error(`cannot start ${settings.serverPath}: ${String(error)}`);
    void vscode.window.showErrorMessage(
      `copilot-lsp: cannot start "${settings.serverPath}". Set copilotLsp.client.serverPath to the copilot-lsp executable.`,
    );
  }
  status.start(settings.statusIntervalS);
}

async function restart(provider: Provider, status: Status): Promise<void> {
  if (restarting) {
    return;
  }
  restarting = true;
  try {
    status.stop();
    const old = client;
    client = undefined;
    if (old) {
      await old.stop().catch((error: unknown) => channel.warn(`stopping the server: ${String(error)}`));
    }
    await startClient(provider, status);
  } finally {
    restarting = false;
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const status = new Status(() => client);
  const provider = new Provider(() => client, readSettings);
  const nextEdits = new NextEdits(() => client, readSettings, (uri, version) => provider.suggestionShown(uri, version));
  provider.nextEdits = nextEdits;
  context.subscriptions.push(
    channel,
    status,
    provider,
    nextEdits,
    vscode.languages.registerInlineCompletionItemProvider({ pattern: "**" }, provider),
    vscode.commands.registerCommand("copilotLsp.accepted", (id?: string, chars?: number) => provider.accepted(id, chars)),
    vscode.commands.registerCommand("copilotLsp.acceptNextWord", () => provider.acceptPart("word")),
    vscode.commands.registerCommand("copilotLsp.acceptNextLine", () => provider.acceptPart("line")),
    vscode.commands.registerCommand("copilotLsp.dismiss", () => provider.dismiss()),
    vscode.commands.registerCommand("copilotLsp.acceptNextEdit", () => nextEdits.accept()),
    vscode.commands.registerCommand("copilotLsp.dismissNextEdit", () => nextEdits.dismiss()),
    vscode.commands.registerCommand("copilotLsp.suggestNextEdit", () => nextEdits.request(true)),
    vscode.commands.registerCommand(ACCEPTED_COMMAND, (command?: LspInlineEdit["command"]) => nextEdits.accepted(command)),
    vscode.commands.registerCommand("copilotLsp.restart", () => restart(provider, status)),
    vscode.commands.registerCommand("copilotLsp.showLog", () => channel.show()),
    vscode.commands.registerCommand("copilotLsp.startEngine", () => startEngine(readSettings())),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (RESTART_KEYS.some((key) => event.affectsConfiguration(`${NAMESPACE}.${key}`))) {
        channel.info("settings changed: restarting the server");
        void restart(provider, status);
      }
    }),
  );
  await startClient(provider, status);
}

export async function deactivate(): Promise<void> {
  try {
    await client?.stop();
  } catch (error) {
    channel.error(`stopping the server: ${String(error)}`);
  }
}
