import * as vscode from "vscode";
import { LanguageClient } from "vscode-languageclient/node";
import { Stats, statusView } from "../logic/status";

/** The status bar item: engine health, first-line p50 and acceptance from copilot/stats. */
export class Status implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly client: () => LanguageClient | undefined) {
    this.item.command = "copilotLsp.showLog";
    this.render(undefined, "starting");
    this.item.show();
  }

  start(intervalS: number): void {
    this.stop();
    this.timer = setInterval(() => void this.refresh(), intervalS * 1000);
    void this.refresh();
  }

  stop(): void {
    if (this.timer) {
      clearInterval(this.timer);
    }
    this.timer = undefined;
  }

  async refresh(): Promise<void> {
    const client = this.client();
    if (!client || !client.isRunning()) {
      this.render(undefined, "copilot-lsp is not running (see the output channel)");
      return;
    }
    try {
      this.render(await client.sendRequest<Stats>("copilot/stats", {}));
    } catch (error) {
      this.render(undefined, `copilot/stats failed: ${String(error)}`);
    }
  }

  private render(stats: Stats | undefined, error?: string): void {
    const view = statusView(stats, error);
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.backgroundColor =
      view.healthy === false ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
  }

  dispose(): void {
    this.stop();
    this.item.dispose();
  }
}
