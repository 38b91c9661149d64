-- Suggestions for Neovim 0.10/0.11 (and `renderer = "extmark"`): ask, draw, accept, dismiss.
-- On 0.12 with the built-in renderer only the streamed preview and tracking live here.
local config = require("copilot_lsp.config")
local ghost = require("copilot_lsp.ghost")
local util = require("copilot_lsp.util")

local M = {}

local INLINE_COMPLETION = "textDocument/inlineCompletion"
local AUTOMATIC, INVOKED = 2, 1

--- Per buffer: the pending request and the suggestion on screen.
---@class copilot_lsp.State
---@field request_id integer|nil
---@field timer uv.uv_timer_t|nil
---@field items table[] items of the last answer
---@field index integer
---@field invoked boolean the items answer an explicit request (alternatives were asked for)
---@field cycling boolean asked for the alternatives while a suggestion is on screen: it stays
--- there (no streamed preview) until they arrive
---@field id string|nil completion id on screen
---@field text string|nil the suggestion as inserted at `anchor`
---@field anchor integer[]|nil {row, col} (0-based, byte) where `text` goes
---@field replace_to integer|nil byte col on the anchor row up to which the item replaces text
---@field accepted integer characters accepted so far (partial accepts)
---@field shown table<string, boolean> ids reported as displayed
---@field dismissed table<string, boolean> ids the user dismissed: late updates of them are ignored
---@type table<integer, copilot_lsp.State>
local states = {}

local function state(bufnr)
  states[bufnr] = states[bufnr] or { items = {}, index = 1, invoked = false, accepted = 0, shown = {}, dismissed = {} }
  return states[bufnr]
end

local function cursor()
  local pos = vim.api.nvim_win_get_cursor(0)
  return pos[1] - 1, pos[2]
end

local function typed_since_anchor(bufnr, s)
  local row, col = cursor()
  if not s.anchor or row ~= s.anchor[1] or col < s.anchor[2] then
    return nil
  end
  local line = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ""
  return line:sub(s.anchor[2] + 1, col)
end

--- The suggestion still to insert at the cursor, or nil when what was typed diverged.
function M.remaining(bufnr)
  local s = state(bufnr)
  if not s.text then
    return nil
  end
  local typed = typed_since_anchor(bufnr, s)
  if typed == nil or s.text:sub(1, #typed) ~= typed then
    return nil
  end
  return s.text:sub(#typed + 1)
end

local function report_shown(bufnr, id)
  local s = state(bufnr)
  local client = util.client(bufnr)
  if id and client and not s.shown[id] then
    s.shown[id] = true
    util.notify(client, "copilot/didShowCompletion", { completionId = id })
  end
end

local function draw(bufnr)
  local rest = M.remaining(bufnr)
  if not rest or rest == "" then
    return ghost.clear(bufnr)
  end
  local row, col = cursor()
  local s = state(bufnr)
  ghost.show(bufnr, row, col, rest, s.replace_to ~= nil and s.replace_to > col)
  report_shown(bufnr, s.id)
end

--- Forget the suggestion; report a dismissal when one was on screen and not taken.
function M.dismiss(bufnr, reason)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local s = state(bufnr)
  local client = util.client(bufnr)
  if s.id and s.shown[s.id] and client then
    util.notify(client, "copilot/didDismissCompletion", { completionId = s.id, reason = reason })
  end
  if s.id then
    -- Its stream may still deliver a late partial or answer: that must not bring it back.
    if vim.tbl_count(s.dismissed) > 200 then
      s.dismissed = {}
    end
    s.dismissed[s.id] = true
  end
  s.id, s.text, s.anchor, s.items, s.index, s.accepted, s.replace_to = nil, nil, nil, {}, 1, 0, nil
  s.invoked = false
  ghost.clear(bufnr)
end

local function set_suggestion(bufnr, id, text, anchor, replace_to)
  local s = state(bufnr)
  if s.id ~= id then
    s.accepted = 0
  end
  s.id, s.text, s.anchor, s.replace_to = id, text, anchor, replace_to
  draw(bufnr)
end

local function cancel_pending(bufnr, client)
  local s = state(bufnr)
  if s.timer then
    s.timer:stop()
    s.timer:close()
    s.timer = nil
  end
  if s.request_id and client then
    util.cancel(client, s.request_id)
  end
  s.request_id = nil
end

local function item_anchor(bufnr, item, client)
  local row, col = cursor()
  if not item.range then
    return { row, col }, nil
  end
  local start, stop = item.range.start, item.range["end"]
  local line = vim.api.nvim_buf_get_lines(bufnr, start.line, start.line + 1, false)[1] or ""
  local anchor = { start.line, util.byte_col(line, start.character, client.offset_encoding) }
  local replace_to = nil
  if stop.line == start.line and stop.character > start.character then
    replace_to = util.byte_col(line, stop.character, client.offset_encoding)
  end
  return anchor, replace_to
end

local function show_item(bufnr, client)
  local s = state(bufnr)
  local item = s.items[s.index]
  if not item then
    return M.dismiss(bufnr, "empty")
  end
  local id = util.item_id(item)
  if id and s.dismissed[id] then
    return -- the answer of a suggestion dismissed while it was still streaming
  end
  local text = type(item.insertText) == "table" and item.insertText.value or item.insertText
  local anchor, replace_to = item_anchor(bufnr, item, client)
  set_suggestion(bufnr, id, text, anchor, replace_to)
end

--- Ask the server for a suggestion at the cursor now. An explicit request (kind INVOKED)
--- gets the alternatives too; `step` then moves that far from the first before showing.
function M.request(bufnr, kind, step)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local client = util.client(bufnr)
  if not client then
    return
  end
  cancel_pending(bufnr, client)
  local s = state(bufnr)
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  params.context = { triggerKind = kind or AUTOMATIC }
  local version = util.version(bufnr)
  local row, col = cursor()
  s.cycling = step ~= nil and step ~= 0 and s.text ~= nil
  local ok, id
  ok, id = util.request(client, INLINE_COMPLETION, params, function(err, result)
    if s.request_id == id then
      s.request_id = nil
      s.cycling = false
    end
    local now_row, now_col = cursor()
    if err or util.version(bufnr) ~= version or now_row ~= row or now_col ~= col then
      return -- stale: the user typed or moved meanwhile
    end
    if vim.api.nvim_get_current_buf() ~= bufnr or not vim.fn.mode():match("^[iR]") then
      return
    end
    s.items = result and (result.items or result) or {}
    s.invoked = kind == INVOKED
    s.index = #s.items > 0 and ((step or 0) % #s.items) + 1 or 1
    show_item(bufnr, client)
  end, bufnr)
  if ok then
    s.request_id = id
  end
end

--- Text changed or the cursor moved in Insert mode: keep what still matches, ask again.
function M.on_edit(bufnr)
  local s = state(bufnr)
  local rest = M.remaining(bufnr)
  if rest and rest ~= "" then
    draw(bufnr) -- typed through: the rest stays on screen while the server is asked again
  elseif s.text then
    M.dismiss(bufnr, rest == "" and "completed" or "typed")
  end
  if not config.options.auto_trigger then
    return
  end
  local client = util.client(bufnr)
  cancel_pending(bufnr, client)
  local timer = assert(vim.uv.new_timer())
  s.timer = timer
  timer:start(
    config.options.debounce_ms,
    0,
    vim.schedule_wrap(function()
      if s.timer ~= timer then
        return
      end
      s.timer = nil
      timer:close()
      if vim.api.nvim_get_current_buf() == bufnr and vim.fn.mode():match("^[iR]") then
        M.request(bufnr, AUTOMATIC)
      end
    end)
  )
end

--- A `copilot/partialCompletion` notification: draw the text as it grows.
function M.on_partial(params, client)
  local bufnr = vim.uri_to_bufnr(params.uri)
  if bufnr ~= vim.api.nvim_get_current_buf() or not vim.fn.mode():match("^[iR]") then
    return
  end
  if params.version ~= vim.NIL and params.version ~= util.version(bufnr) then
    return -- written for an older buffer state
  end
  local row, col = cursor()
  local start = params.range.start
  local line = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ""
  if start.line ~= row or util.byte_col(line, start.character, client.offset_encoding) ~= col then
    return
  end
  if config.use_builtin() then
    return require("copilot_lsp.builtin").on_partial(bufnr, params, row, col)
  end
  local s = state(bufnr)
  if s.dismissed[params.completionId] or (s.cycling and s.request_id) then
    return
  end
  if params.text == "" then
    if s.id == params.completionId then
      M.dismiss(bufnr, "empty")
    end
    return
  end
  set_suggestion(bufnr, params.completionId, params.text, { row, col }, nil)
end

local function execute_accept(client, bufnr, s)
  local item = s.items[s.index]
  local command = item and item.command
  if not command and s.id then
    command = { title = "Accept", command = "copilot.acceptCompletion", arguments = { s.id } }
  end
  if command then
    util.request(client, "workspace/executeCommand", command, function() end, bufnr)
  end
end

--- Accept the whole suggestion, its next word or its next line. False if none is shown.
---@param part "all"|"word"|"line"
function M.accept(part)
  local bufnr = vim.api.nvim_get_current_buf()
  local s = state(bufnr)
  local rest = M.remaining(bufnr)
  local client = util.client(bufnr)
  if not rest or rest == "" or not client then
    return false
  end
  local take = part == "word" and util.next_word(rest) or part == "line" and util.next_line(rest) or rest
  local whole = take == rest
  local row, col = cursor()
  local replace_to = whole and s.replace_to and s.anchor and s.anchor[1] == row and s.replace_to > col and s.replace_to
    or nil
  cancel_pending(bufnr, client)
  local id = s.id
  s.accepted = s.accepted + util.chars(take)
  if whole then
    execute_accept(client, bufnr, s)
    s.shown[id or ""] = nil -- taken, not dismissed
    s.id = nil
  else
    util.notify(client, "copilot/didPartiallyAccept", { completionId = id, acceptedLength = s.accepted })
  end
  -- The insertion fires TextChangedI: the rest (if any) stays drawn as typed-through text.
  util.insert_at_cursor(bufnr, take, replace_to)
  if whole then
    s.text, s.anchor, s.items = nil, nil, {}
    ghost.clear(bufnr)
  else
    draw(bufnr)
  end
  return true
end

--- Show the next (count 1) or previous (count -1) suggestion. The first time after typing,
--- the server is asked explicitly, which brings the alternatives (the first of them is the
--- suggestion on screen, so the step lands on the next one).
function M.cycle(count)
  local bufnr = vim.api.nvim_get_current_buf()
  local s = state(bufnr)
  local client = util.client(bufnr)
  if not s.invoked or #s.items == 0 then
    if client then
      M.request(bufnr, INVOKED, #s.items > 0 and count or 0)
    end
    return
  end
  s.index = (s.index - 1 + count) % #s.items + 1
  show_item(bufnr, client)
end

--- Which suggestion is on screen and how many there are (e.g. for a statusline).
function M.position(bufnr)
  local s = state(bufnr or vim.api.nvim_get_current_buf())
  return s.index, #s.items
end

--- True when a suggestion is on screen in the buffer.
function M.visible(bufnr)
  return ghost.get(bufnr or vim.api.nvim_get_current_buf()) ~= nil
end

--- Hook the buffer's Insert-mode events (own renderer).
function M.attach(bufnr)
  local group = vim.api.nvim_create_augroup("copilot_lsp.suggestion." .. bufnr, { clear = true })
  vim.api.nvim_create_autocmd({ "TextChangedI", "TextChangedP" }, {
    group = group,
    buffer = bufnr,
    callback = function()
      M.on_edit(bufnr)
    end,
  })
  vim.api.nvim_create_autocmd("CursorMovedI", {
    group = group,
    buffer = bufnr,
    callback = function()
      -- Moving without typing (arrows, mouse) invalidates the position; typing is handled
      -- by TextChangedI, which fires too.
      local s = state(bufnr)
      if s.text and M.remaining(bufnr) == nil then
        M.dismiss(bufnr, "moved")
      end
    end,
  })
  vim.api.nvim_create_autocmd({ "InsertLeave", "BufLeave" }, {
    group = group,
    buffer = bufnr,
    callback = function()
      cancel_pending(bufnr, util.client(bufnr))
      M.dismiss(bufnr, "left")
    end,
  })
  vim.api.nvim_create_autocmd("InsertEnter", {
    group = group,
    buffer = bufnr,
    callback = function()
      M.on_edit(bufnr)
    end,
  })
end

function M.detach(bufnr)
  pcall(vim.api.nvim_del_augroup_by_name, "copilot_lsp.suggestion." .. bufnr)
  M.dismiss(bufnr, "detached")
  states[bufnr] = nil
end

--- Testing and :checkhealth: the state of a buffer.
function M._state(bufnr)
  return state(bufnr)
end

M.report_shown = report_shown

return M
