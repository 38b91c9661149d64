import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions, ServerOptions, TransportKind } from "vscode-languageclient/node";
import { engineUpCommand, initializationOptions, Settings } from "../logic/settings";
import { channel } from "./logging";

/** A language client for `copilot-lsp` (the client adds `--stdio` itself). */
export function createClient(settings: Settings): LanguageClient {
  const serverOptions: ServerOptions = {
    command: settings.serverPath,
    args: settings.serverArgs,
    transport: TransportKind.stdio,
    options: { env: { ...process.env } },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: "file" }, { scheme: "untitled" }],
    initializationOptions: initializationOptions(settings),
    outputChannel: channel,
    revealOutputChannelOn: 4, // RevealOutputChannelOn.Never: errors go to the status bar
    synchronize: { configurationSection: "copilotLsp" },
  };
  return new LanguageClient("copilotLsp", "copilot-lsp", serverOptions, clientOptions);
}

/** Start the embedded engine in a terminal, where its progress is visible. */
export function startEngine(settings: Settings): void {
  const terminal = vscode.window.createTerminal("copilot-lsp engine");
  terminal.show();
  terminal.sendText(engineUpCommand(settings));
}
