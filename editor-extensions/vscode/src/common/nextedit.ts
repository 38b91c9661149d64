import * as vscode from "vscode";
import { LanguageClient } from "vscode-languageclient/node";
import { LspRange } from "../logic/items";
import {
  DecorationDisplay,
  display,
  Display,
  editId,
  endOf,
  firstEdit,
  LspInlineEdit,
  LspPosition,
  tabStep,
} from "../logic/nextedit";
import { enabledFor, Settings } from "../logic/settings";
import { channel } from "./logging";

export const INLINE_EDIT = "textDocument/copilotInlineEdit";
export const DID_SHOW_INLINE_EDIT = "textDocument/didShowInlineEdit";
export const DID_DISMISS = "copilot/didDismissCompletion";
/** A decorated edit is on screen: Tab and Escape are its. */
export const VISIBLE_KEY = "copilotLsp.nextEditVisible";
/** An edit is on screen as ghost text: Escape (with VS Code's inlineSuggestionVisible) is its. */
export const INLINE_KEY = "copilotLsp.nextEditInline";
/** The command of the ghost-text item: VS Code inserted the edit, the server hears of it. */
export const ACCEPTED_COMMAND = "copilotLsp.nextEditAccepted";
/** Pause after a change before asking (Neovim's `next_edits.debounce_ms`). */
export const DEBOUNCE_MS = 300;

/** The edit on screen: in which document, at which version, drawn how. */
interface Shown {
  editor: vscode.TextEditor;
  uri: string;
  version: number;
  edit: LspInlineEdit;
  display: Display;
  reported: boolean;
}

function range(r: LspRange): vscode.Range {
  return new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
}

function position(p: LspPosition): vscode.Position {
  return new vscode.Position(p.line, p.character);
}

/**
 * Next-edit suggestions (the server's `textDocument/copilotInlineEdit`), as Neovim's plugin
 * shows them: after a pause in typing the edit near the cursor is asked for; one that VS Code
 * can draw as ghost text is served by the inline-completion provider (`inlineItem`), any other
 * is drawn as decorations with Tab (`accept`) and Escape (`dismiss`) bound while
 * `copilotLsp.nextEditVisible` holds. Typing or leaving the editor takes it away; the server
 * hears when one is shown (`didShowInlineEdit`), accepted (the item's command) and dismissed
 * (`copilot/didDismissCompletion` with its id, Escape only: a newer edit may follow typing).
 */
export class NextEdits implements vscode.Disposable {
  private shown: Shown | undefined;
  private timer: NodeJS.Timeout | undefined;
  private source: vscode.CancellationTokenSource | undefined;
  /** The document version whose edit was dismissed: none is asked for until it changes. */
  private dismissed: { uri: string; version: number } | undefined;
  private hint: vscode.Disposable | undefined;
  private readonly deleted: vscode.TextEditorDecorationType;
  private readonly inserted: vscode.TextEditorDecorationType;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly client: () => LanguageClient | undefined,
    private readonly settings: () => Settings,
    /** Whether an inline completion is on screen in `uri` at `version`: Tab is its then. */
    private readonly completionShown: (uri: string, version: number) => boolean,
  ) {
    this.deleted = vscode.window.createTextEditorDecorationType({
      backgroundColor: new vscode.ThemeColor("diffEditor.removedTextBackground"),
      textDecoration: "line-through",
    });
    this.inserted = vscode.window.createTextEditorDecorationType({
      after: {
        backgroundColor: new vscode.ThemeColor("diffEditor.insertedTextBackground"),
        color: new vscode.ThemeColor("editorGhostText.foreground"),
      },
    });
    this.disposables.push(
      this.deleted,
      this.inserted,
      vscode.workspace.onDidChangeTextDocument((event) => this.changed(event)),
      vscode.window.onDidChangeActiveTextEditor(() => {
        this.cancel();
        this.clear();
      }),
    );
  }

  /** The edit on screen, for tests and the provider. */
  get current(): { edit: LspInlineEdit; display: Display } | undefined {
    return this.shown && { edit: this.shown.edit, display: this.shown.display };
  }

  private enabled(document: vscode.TextDocument): boolean {
    const settings = this.settings();
    return settings.nextEdits && enabledFor(settings.enable, document.languageId);
  }

  /** Typing: the drawn edit goes, and a new one is asked for after the pause. */
  private changed(event: vscode.TextDocumentChangeEvent): void {
    if (event.contentChanges.length === 0) {
      return;
    }
    const uri = event.document.uri.toString();
    if (this.shown?.uri === uri) {
      this.clear();
    }
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.document.uri.toString() !== uri) {
      return;
    }
    this.cancel();
    if (this.enabled(event.document)) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        void this.request(false);
      }, DEBOUNCE_MS);
    }
  }

  private cancel(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.source?.cancel();
    this.source = undefined;
  }

  /** Ask for a next edit at the cursor of the active editor now; `force` (the command):
   * even where the current text's edit was dismissed or a completion is on screen. */
  async request(force: boolean): Promise<boolean> {
    const editor = vscode.window.activeTextEditor;
    const client = this.client();
    if (!editor || !client || !client.isRunning() || !this.enabled(editor.document)) {
      return false;
    }
    const document = editor.document;
    const uri = document.uri.toString();
    const version = document.version;
    if (!force && this.dismissed?.uri === uri && this.dismissed.version === version) {
      return false;
    }
    this.cancel();
    const source = new vscode.CancellationTokenSource();
    this.source = source;
    const cursor = editor.selection.active;
    const params = {
      textDocument: { uri, version },
      position: { line: cursor.line, character: cursor.character },
    };
    let result: unknown;
    try {
      result = await client.sendRequest<unknown>(INLINE_EDIT, params, source.token);
    } catch (error) {
      if (!source.token.isCancellationRequested) {
        channel.warn(`next edit failed: ${String(error)}`);
      }
      return false;
    } finally {
      if (this.source === source) {
        this.source = undefined;
      }
    }
    const edit = firstEdit(result);
    // A stale answer (the text or the editor changed since it was asked) is never drawn.
    if (
      !edit ||
      source.token.isCancellationRequested ||
      vscode.window.activeTextEditor !== editor ||
      document.version !== version ||
      edit.textDocument.version !== version ||
      edit.textDocument.uri !== uri
    ) {
      return false;
    }
    if (!force && this.completionShown(uri, version)) {
      return false; // a completion is on screen: it keeps Tab (asked by hand: both show)
    }
    return this.show(editor, edit);
  }

  private show(editor: vscode.TextEditor, edit: LspInlineEdit): boolean {
    this.clear();
    const document = editor.document;
    const cursor = editor.selection.active;
    const shown: Shown = {
      editor,
      uri: document.uri.toString(),
      version: document.version,
      edit,
      display: display(edit, cursor, (line) => document.lineAt(line).text),
      reported: false,
    };
    this.shown = shown;
    const drawn = shown.display;
    void vscode.commands.executeCommand("setContext", drawn.kind === "inline" ? INLINE_KEY : VISIBLE_KEY, true);
    if (drawn.kind === "inline") {
      // The provider serves it (inlineItem). Hidden first: VS Code asks no provider again at
      // the place and version where it already has an answer.
      void vscode.commands
        .executeCommand("editor.action.inlineSuggest.hide")
        .then(() => vscode.commands.executeCommand("editor.action.inlineSuggest.trigger"));
      return true;
    }
    this.decorate(shown, drawn);
    return true;
  }

  private decorate(shown: Shown, drawn: DecorationDisplay): void {
    const { editor, edit } = shown;
    const line = edit.range.start.line + 1;
    const hover = new vscode.MarkdownString(`**Next edit** (line ${line}): Tab applies it, Escape dismisses it.`);
    editor.setDecorations(this.deleted, drawn.deleted ? [{ range: range(drawn.deleted), hoverMessage: hover }] : []);
    editor.setDecorations(
      this.inserted,
      drawn.inserted
        ? [
            {
              range: new vscode.Range(position(drawn.at), position(drawn.at)),
              hoverMessage: hover,
              renderOptions: { after: { contentText: drawn.inserted } },
            },
          ]
        : [],
    );
    this.hint = vscode.window.setStatusBarMessage(`$(lightbulb) Next edit on line ${line}: Tab applies, Escape dismisses`);
    this.report(shown);
  }

  private report(shown: Shown): void {
    if (!shown.reported && shown.edit.command) {
      shown.reported = true;
      void this.client()?.sendNotification(DID_SHOW_INLINE_EDIT, { item: shown.edit });
    }
  }

  /** The ghost-text item for the provider when an inline edit is on screen at `position`. */
  inlineItem(document: vscode.TextDocument, at: vscode.Position): vscode.InlineCompletionItem | undefined {
    const shown = this.shown;
    if (!shown || shown.uri !== document.uri.toString() || shown.version !== document.version) {
      return undefined;
    }
    // Placed for the cursor where VS Code asks (it may have moved along the line).
    const drawn = display(shown.edit, { line: at.line, character: at.character }, (line) => document.lineAt(line).text);
    if (drawn.kind !== "inline") {
      return undefined;
    }
    this.report(shown);
    // The server's command travels with the item: VS Code's change event, which takes the
    // edit off the controller, comes before the item's command runs.
    return new vscode.InlineCompletionItem(drawn.insertText, range(drawn.range), {
      title: "Accept next edit",
      command: ACCEPTED_COMMAND,
      arguments: [shown.edit.command],
    });
  }

  /** Tab on a decorated edit: jump to it when it is off screen, else apply it. */
  async accept(): Promise<boolean> {
    const shown = this.shown;
    const editor = vscode.window.activeTextEditor;
    if (!shown || shown.display.kind !== "decoration") {
      return false;
    }
    if (!editor || editor !== shown.editor || editor.document.version !== shown.version) {
      this.clear(); // stale: never applied, and Tab keeps its own meaning
      await vscode.commands.executeCommand("tab");
      return false;
    }
    const target = range(shown.edit.range);
    const visible = editor.visibleRanges.map((r) => ({
      start: { line: r.start.line, character: r.start.character },
      end: { line: r.end.line, character: r.end.character },
    }));
    if (tabStep(shown.edit.range, visible) === "jump") {
      editor.selection = new vscode.Selection(target.start, target.start);
      editor.revealRange(target, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
      return true;
    }
    const edit = shown.edit;
    this.clear();
    const applied = await editor.edit((builder) => builder.replace(target, edit.text));
    if (!applied) {
      return false;
    }
    const end = position(endOf(edit.range.start, edit.text));
    editor.selection = new vscode.Selection(end, end);
    await this.runCommand(edit.command);
    return true;
  }

  /** The ghost-text item's command, with the server's: VS Code inserted the edit. */
  async accepted(command: LspInlineEdit["command"]): Promise<void> {
    this.clear();
    await this.runCommand(command);
  }

  private async runCommand(command: LspInlineEdit["command"]): Promise<void> {
    const client = this.client();
    if (command && client) {
      await client
        .sendRequest("workspace/executeCommand", { command: command.command, arguments: command.arguments })
        .catch((error: unknown) => channel.warn(`accepting the next edit: ${String(error)}`));
    }
  }

  /** Escape: the edit goes, the server hears it was dismissed, and none is asked for until
   * the text changes. */
  async dismiss(): Promise<void> {
    const shown = this.shown;
    if (!shown) {
      return;
    }
    this.cancel();
    this.dismissed = { uri: shown.uri, version: shown.version };
    this.clear();
    if (shown.display.kind === "inline") {
      await vscode.commands.executeCommand("editor.action.inlineSuggest.hide");
    }
    const id = editId(shown.edit);
    if (id) {
      void this.client()?.sendNotification(DID_DISMISS, { completionId: id });
    }
  }

  /** Take the drawn edit away (nothing is reported: a newer edit may follow). */
  clear(): void {
    const shown = this.shown;
    if (!shown) {
      return;
    }
    this.shown = undefined;
    this.hint?.dispose();
    this.hint = undefined;
    shown.editor.setDecorations(this.deleted, []);
    shown.editor.setDecorations(this.inserted, []);
    void vscode.commands.executeCommand("setContext", shown.display.kind === "inline" ? INLINE_KEY : VISIBLE_KEY, false);
  }

  dispose(): void {
    this.cancel();
    this.clear();
    for (const item of this.disposables) {
      item.dispose();
    }
  }
}
