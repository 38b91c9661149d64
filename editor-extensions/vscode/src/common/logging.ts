import * as vscode from "vscode";

/** The extension's output channel ("copilot-lsp"); the language client logs there too. */
export const channel: vscode.LogOutputChannel = vscode.window.createOutputChannel("copilot-lsp", { log: true });
