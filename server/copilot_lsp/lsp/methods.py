"""Every LSP method and command name of our own, and Copilot's that we answer, in one place:
the server registers them, the in-package clients (client/) and the tests send them from here
(docs/protocol.md describes each)."""

ACCEPT_COMMAND = "copilot.acceptCompletion"
"""The item command an editor runs when the user accepts a suggestion: `[id]`, or
`[id, acceptedChars]` for a partial accept."""
STATS_REQUEST = "copilot/stats"
"""Rolling latency percentiles, outcome counts, recent timelines and engine state."""

PARTIAL_COMPLETION = "copilot/partialCompletion"
"""Server → client: the growing text of the current completion (`editor.streaming`)."""
DID_SHOW = "copilot/didShowCompletion"
"""Client → server `{completionId}`: the editor showed the suggestion."""
DID_PARTIALLY_ACCEPT = "copilot/didPartiallyAccept"
"""Client → server `{completionId, acceptedLength}`: the user accepted part of it."""
DID_DISMISS = "copilot/didDismissCompletion"
"""Client → server `{completionId}`: the user dismissed it."""

COPILOT_DID_SHOW = "textDocument/didShowCompletion"
"""GitHub Copilot's name for `DID_SHOW`, taking `{item}` (the id is in the item's command)."""
COPILOT_DID_PARTIALLY_ACCEPT = "textDocument/didPartiallyAcceptCompletion"
"""GitHub Copilot's name for `DID_PARTIALLY_ACCEPT`, taking `{item, acceptedLength}`."""

INLINE_EDIT = "textDocument/copilotInlineEdit"
"""GitHub Copilot's next-edit request: `{textDocument: {uri, version}, position}` answered
with `{edits: [{text, textDocument, range, command}]}` (alternatives)."""
DID_SHOW_INLINE_EDIT = "textDocument/didShowInlineEdit"
"""Client → server `{item}`: the editor showed a next edit (the id is in the item's command)."""
DID_FOCUS = "textDocument/didFocus"
"""Client → server `{textDocument: {uri}}`: the editor focused a document (accepted, unused)."""
ACCEPT_NEXT_EDIT_COMMAND = "copilot.acceptNextEdit"
"""The next edit's command, run by the editor when the user accepts it: `[id]`."""
