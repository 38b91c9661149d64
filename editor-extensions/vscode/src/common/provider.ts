import * as vscode from "vscode";
import { LanguageClient } from "vscode-languageclient/node";
import { enabledFor, Settings } from "../logic/settings";
import { LspItem, itemId, itemText, offered, reusable } from "../logic/items";
import { Anchor, Partial, StreamState } from "../logic/stream";
import { chars, nextLine, nextWord, remainder } from "../logic/text";
import { inlineCompletionParams, LSP_INVOKED, LspTriggerKind, lspTriggerKind } from "../logic/trigger";
import { channel } from "./logging";

interface Request {
  anchor: Anchor;
  kind: LspTriggerKind;
  source: vscode.CancellationTokenSource;
  settled: boolean;
  items: LspItem[];
  promise: Promise<void>;
}

/** What the user sees now: the text as inserted at `anchor`, and its completion id. */
interface Shown {
  anchor: Anchor;
  id: string | undefined;
  text: string;
  accepted: number;
  /** A final item (Tab accepts the completion), not a streamed preview (Tab accepts part). */
  whole: boolean;
}

const RETRIGGER_MS = 40;

function sameAnchor(a: Anchor, b: Anchor): boolean {
  return a.uri === b.uri && a.version === b.version && a.line === b.line && a.character === b.character;
}

/**
 * Inline completions from copilot-lsp. While a completion streams, the pending
 * `provideInlineCompletionItems` call is answered as soon as `copilot/partialCompletion`
 * carries a complete first line (no new request): the ghost text appears at first-line time.
 * VS Code then draws nothing new for the same position and version, however often it is
 * re-triggered, so when the final answer differs from that preview the suggestion is hidden
 * and requested again, once: the preview is swapped for the whole completion. That call is
 * explicit in VS Code (the trigger command's default) and is served the final answer, not
 * sent to the server as a new Invoked request.
 *
 * A suggestion on screen stays until something replaces it: a final non-empty answer, a newer
 * suggestion, or typing. An answer that comes back empty, failed or cancelled at the place
 * where a suggestion is shown answers with the shown one (a preview stays a preview: Tab
 * accepts what is shown), however slow the engine.
 */
export class Provider implements vscode.InlineCompletionItemProvider, vscode.Disposable {
  readonly stream = new StreamState();
  private request: Request | undefined;
  private shown: Shown | undefined;
  private reported = new Set<string>();
  private retrigger: NodeJS.Timeout | undefined;
  /** The request whose final answer the swap's re-trigger (hide, then trigger) is to show. */
  private swap: Request | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  /** Next edits VS Code can draw as ghost text (common/nextedit.ts): served before completions. */
  nextEdits: { inlineItem(document: vscode.TextDocument, position: vscode.Position): vscode.InlineCompletionItem | undefined } | undefined;

  constructor(
    private readonly client: () => LanguageClient | undefined,
    private readonly settings: () => Settings,
  ) {
  }

  onPartial(partial: Partial): void {
    this.stream.accept(partial);
  }

  async provideInlineCompletionItems(
    document: vscode.TextDocument,
    position: vscode.Position,
    context: vscode.InlineCompletionContext,
    token: vscode.CancellationToken,
  ): Promise<vscode.InlineCompletionItem[] | undefined> {
    const client = this.client();
    if (!client || !client.isRunning() || !enabledFor(this.settings().enable, document.languageId)) {
      return undefined;
    }
    const nextEdit = this.nextEdits?.inlineItem(document, position);
    if (nextEdit) {
      return [nextEdit];
    }
    const anchor: Anchor = {
      uri: document.uri.toString(),
      version: document.version,
      line: position.line,
      character: position.character,
    };
    // Explicit (the trigger command, Alt+] / Alt+[): the server adds its alternatives.
    const invoked = lspTriggerKind(context.triggerKind) === LSP_INVOKED;
    const typedThrough = invoked ? undefined : this.typedThrough(document, position);
    if (typedThrough !== undefined) {
      return typedThrough;
    }
    // An explicit call after an automatic request at the same place asks again: the automatic
    // answer holds one suggestion (or none: it was debounced away or skipped in a backoff).
    // The swap's own re-trigger (explicit: the trigger command's default) takes the final
    // answer that it was made for, whatever its kind.
    const previous = this.request;
    const swapping = previous !== undefined && previous === this.swap && sameAnchor(previous.anchor, anchor);
    this.swap = undefined;
    const earlier = previous && { sameAnchor: sameAnchor(previous.anchor, anchor), invoked: previous.kind === LSP_INVOKED };
    if (!swapping && !reusable(earlier, invoked)) {
      this.startRequest(client, anchor, context.triggerKind);
    }
    const request = this.request!;
    if (invoked && !request.settled) {
      // All the suggestions come with the answer: wait for it (a preview would be one).
      await new Promise<void>((resolve) => {
        const cancel = token.onCancellationRequested(() => done());
        function done() {
          cancel.dispose();
          resolve();
        }
        void request.promise.then(done, done);
      });
    } else if (!request.settled && this.stream.previewAt(anchor) === undefined && this.shownAt(anchor) === undefined) {
      // Wait for the answer, a streamed first line, or VS Code giving up on this call.
      await new Promise<void>((resolve) => {
        const stop = this.stream.onChange(() => {
          if (this.stream.previewAt(anchor) !== undefined) {
            done();
          }
        });
        const cancel = token.onCancellationRequested(() => done());
        function done() {
          stop();
          cancel.dispose();
          resolve();
        }
        void request.promise.then(done, done);
      });
    }
    if (token.isCancellationRequested) {
      return undefined;
    }
    if (request.settled) {
      return this.present(anchor, position, request.items);
    }
    const text = this.stream.previewAt(anchor);
    if (!text) {
      // The stream was cleared (it ended empty) but its preview is on screen: it stays.
      const shown = this.shownAt(anchor);
      return shown && [this.itemFor(shown, position)];
    }
    // Tab on a preview takes what is shown: a partial accept of the completion.
    const id = this.stream.completionId;
    const item = new vscode.InlineCompletionItem(text, new vscode.Range(position, position), {
      title: "Accept",
      command: "copilotLsp.accepted",
      arguments: [id, chars(text)],
    });
    this.markShown(anchor, id, text, false);
    return [item];
  }

  private startRequest(client: LanguageClient, anchor: Anchor, triggerKind: vscode.InlineCompletionTriggerKind): void {
    this.request?.source.cancel(); // the server cancels superseded work too; this frees it at once
    this.swap = undefined;
    this.stream.start(anchor);
    const source = new vscode.CancellationTokenSource();
    const kind = lspTriggerKind(triggerKind);
    const request: Request = { anchor, kind, source, settled: false, items: [], promise: Promise.resolve() };
    const params = inlineCompletionParams(anchor.uri, anchor.line, anchor.character, triggerKind);
    request.promise = client
      .sendRequest<{ items: LspItem[] } | LspItem[] | null>("textDocument/inlineCompletion", params, source.token)
      .then(
        (result) => {
          request.items = Array.isArray(result) ? result : result?.items ?? [];
        },
        (error: unknown) => {
          if (!source.token.isCancellationRequested) {
            channel.warn(`inline completion failed: ${String(error)}`);
          }
        },
      )
      .finally(() => {
        request.settled = true;
        if (this.request === request) {
          this.swapPreview(request); // the preview on screen for the final item
        }
      });
    this.request = request;
  }

  private present(anchor: Anchor, position: vscode.Position, items: LspItem[]): vscode.InlineCompletionItem[] {
    const kept = items.length === 0 ? this.shownAt(anchor) : undefined;
    if (kept) {
      // Empty, failed or cancelled where a suggestion is on screen: nothing replaces it.
      void vscode.commands.executeCommand("setContext", "copilotLsp.suggestionVisible", true);
      return [this.itemFor(kept, position)];
    }
    // Every suggestion, in the server's order: VS Code shows the first and cycles with Alt+].
    const result = offered(items).map(
      ({ text, range, id }) =>
        new vscode.InlineCompletionItem(
          text,
          range
            ? new vscode.Range(range.start.line, range.start.character, range.end.line, range.end.character)
            : new vscode.Range(position, position),
          { title: "Accept", command: "copilotLsp.accepted", arguments: [id] },
        ),
    );
    const first = result.length > 0 ? offered(items)[0] : undefined;
    if (first !== undefined) {
      this.markShown(anchor, first.id, first.text, true);
    }
    void vscode.commands.executeCommand("setContext", "copilotLsp.suggestionVisible", result.length > 0);
    return result;
  }

  /** Whether a suggestion is on screen in `uri` at `version` (a next edit then waits). */
  suggestionShown(uri: string, version: number): boolean {
    const shown = this.shown;
    return shown !== undefined && shown.anchor.uri === uri && shown.anchor.version === version && shown.text !== "";
  }

  /** The suggestion on screen when it was drawn for exactly `anchor` (place and version). */
  private shownAt(anchor: Anchor): Shown | undefined {
    const shown = this.shown;
    return shown && sameAnchor(shown.anchor, anchor) ? shown : undefined;
  }

  /** The shown suggestion as an item again: Tab accepts it as it did when it was drawn. */
  private itemFor(shown: Shown, position: vscode.Position): vscode.InlineCompletionItem {
    return new vscode.InlineCompletionItem(shown.text, new vscode.Range(position, position), {
      title: "Accept",
      command: "copilotLsp.accepted",
      arguments: shown.whole ? [shown.id] : [shown.id, chars(shown.text)],
    });
  }

  private markShown(anchor: Anchor, id: string | undefined, text: string, whole: boolean): void {
    const accepted = this.shown && this.shown.id === id ? this.shown.accepted : 0;
    this.shown = { anchor, id, text, accepted, whole };
    void vscode.commands.executeCommand("setContext", "copilotLsp.suggestionVisible", true);
    if (id && !this.reported.has(id)) {
      this.reported.add(id);
      void this.client()?.sendNotification("copilot/didShowCompletion", { completionId: id });
    }
  }

  /** The rest of the shown suggestion when the user typed (or partially accepted) into it. */
  private typedThrough(document: vscode.TextDocument, position: vscode.Position): vscode.InlineCompletionItem[] | undefined {
    const shown = this.shown;
    if (!shown || shown.anchor.uri !== document.uri.toString() || shown.anchor.version === document.version) {
      return undefined;
    }
    const start = new vscode.Position(shown.anchor.line, shown.anchor.character);
    if (position.isBefore(start)) {
      return undefined;
    }
    const rest = remainder(shown.text, document.getText(new vscode.Range(start, position)));
    if (!rest) {
      return undefined;
    }
    return [
      new vscode.InlineCompletionItem(rest, new vscode.Range(position, position), {
        title: "Accept",
        command: "copilotLsp.accepted",
        arguments: [shown.id],
      }),
    ];
  }

  private swapPreview(request: Request): void {
    const shown = this.shown;
    const first = request.items[0];
    if (!shown || !sameAnchor(shown.anchor, request.anchor) || this.retrigger) {
      return;
    }
    if (shown.id !== this.stream.completionId) {
      return; // not this request's preview: e.g. the typed suggestion an Alt+] answer replaces
    }
    if (first === undefined) {
      return; // empty, failed or cancelled: the preview stays (`present` answers with it)
    }
    if (itemText(first) === shown.text && shown.id === itemId(first)) {
      return; // the final item is what is on screen already
    }
    this.retrigger = setTimeout(() => {
      this.retrigger = undefined;
      const editor = vscode.window.activeTextEditor;
      const anchor = this.request?.anchor;
      if (
        this.request === request &&
        editor &&
        anchor &&
        editor.document.uri.toString() === anchor.uri &&
        editor.document.version === anchor.version
      ) {
        this.swap = request; // the call this re-trigger makes is served `request`'s answer
        // Hidden first: a plain re-trigger at the same place and version draws nothing new.
        void vscode.commands
          .executeCommand("editor.action.inlineSuggest.hide")
          .then(() => vscode.commands.executeCommand("editor.action.inlineSuggest.trigger"));
      }
    }, RETRIGGER_MS);
  }

  /** The item's command ran: VS Code inserted it (or a preview of it). */
  async accepted(id: string | undefined, acceptedChars?: number): Promise<void> {
    const client = this.client();
    if (!id || !client) {
      return;
    }
    const args = acceptedChars === undefined ? [id] : [id, acceptedChars];
    await client.sendRequest("workspace/executeCommand", { command: "copilot.acceptCompletion", arguments: args });
    this.shown = undefined;
    void vscode.commands.executeCommand("setContext", "copilotLsp.suggestionVisible", false);
  }

  /** Accept the next word or line of the suggestion on screen. */
  async acceptPart(part: "word" | "line"): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const shown = this.shown;
    if (!editor || !shown) {
      return;
    }
    const position = editor.selection.active;
    const start = new vscode.Position(shown.anchor.line, shown.anchor.character);
    const rest = position.isBefore(start)
      ? undefined
      : remainder(shown.text, editor.document.getText(new vscode.Range(start, position)));
    if (!rest) {
      return;
    }
    const take = part === "word" ? nextWord(rest) : nextLine(rest);
    await editor.edit((edit) => edit.insert(position, take));
    if (take === rest) {
      await this.accepted(shown.id);
      return;
    }
    shown.accepted += chars(take);
    void this.client()?.sendNotification("copilot/didPartiallyAccept", {
      completionId: shown.id,
      acceptedLength: shown.accepted,
    });
    await vscode.commands.executeCommand("editor.action.inlineSuggest.trigger");
  }

  /** Hide the suggestion and report it dismissed. */
  async dismiss(): Promise<void> {
    await vscode.commands.executeCommand("editor.action.inlineSuggest.hide");
    const shown = this.shown;
    this.shown = undefined;
    void vscode.commands.executeCommand("setContext", "copilotLsp.suggestionVisible", false);
    if (shown?.id) {
      void this.client()?.sendNotification("copilot/didDismissCompletion", { completionId: shown.id });
    }
  }

  dispose(): void {
    this.request?.source.cancel();
    if (this.retrigger) {
      clearTimeout(this.retrigger);
    }
    for (const item of this.disposables) {
      item.dispose();
    }
  }
}
