-- Next-edit suggestions (GitHub Copilot's `textDocument/copilotInlineEdit`): after a pause in
-- typing, ask the server for an edit anywhere near the cursor and draw it: the replaced text
-- highlighted, the new text inline (one line) or as virtual lines (several). <Tab> jumps to
-- an edit away from the cursor, then applies it; <Esc> or typing dismisses it.
local config = require("copilot_lsp.config")
local util = require("copilot_lsp.util")

local M = {}

M.ns = vim.api.nvim_create_namespace("copilot_lsp.nextedit")

local INLINE_EDIT = "textDocument/copilotInlineEdit"
local DID_SHOW = "textDocument/didShowInlineEdit"
local DID_DISMISS = "copilot/didDismissCompletion"
local DELETE_HL = "CopilotLspNextEditDelete"
local ADD_HL = "CopilotLspNextEditAdd"

--- Called with (bufnr, event, item) on "shown", "cleared", "dismissed", "jumped" and "applied"
--- (tests).
---@type fun(bufnr: integer, event: string, item: table|nil)[]
M.listeners = {}

---@class copilot_lsp.NextEditShown
---@field item table The server's item: {text, textDocument: {uri, version}, range, command}
---@field version integer The buffer's LSP version it was computed for
---@field client_id integer
---@field start_row integer 0-based
---@field start_col integer byte
---@field end_row integer 0-based, clamped into the buffer
---@field end_col integer byte

--- Per buffer: the client, the debounce timer, the request in flight, the change tick at which
--- an edit was dismissed (no new request until the text changes) and the edit on screen.
---@type table<integer, {client_id: integer, timer: uv.uv_timer_t|nil, request: integer|nil, dismissed_tick: integer|nil, shown: copilot_lsp.NextEditShown|nil}>
local buffers = {}

local function resolve(bufnr)
  return (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
end

local function emit(bufnr, event, item)
  for _, listener in ipairs(M.listeners) do
    pcall(listener, bufnr, event, item)
  end
end

function M.setup_highlight()
  vim.api.nvim_set_hl(0, DELETE_HL, { link = "DiffDelete", default = true })
  vim.api.nvim_set_hl(0, ADD_HL, { link = "DiffAdd", default = true })
end

--- The edit on screen in `bufnr`, or nil.
---@return copilot_lsp.NextEditShown|nil
function M.get(bufnr)
  local state = buffers[resolve(bufnr)]
  return state and state.shown or nil
end

function M.visible(bufnr)
  return M.get(bufnr) ~= nil
end

local function cancel(state)
  if state.timer then
    state.timer:stop()
  end
  local client = vim.lsp.get_client_by_id(state.client_id)
  if state.request and client then
    util.cancel(client, state.request)
  end
  state.request = nil
end

--- Remove the drawn edit (nothing is recorded: a newer edit may follow).
function M.clear(bufnr)
  bufnr = resolve(bufnr)
  local state = buffers[bufnr]
  if not state or not state.shown then
    return false
  end
  local item = state.shown.item
  state.shown = nil
  if vim.api.nvim_buf_is_valid(bufnr) then
    vim.api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
  end
  emit(bufnr, "cleared", item)
  return true
end

--- The server's id of `item` (its accept command's argument), or nil.
local function item_id(item)
  local arguments = type(item.command) == "table" and item.command.arguments or nil
  local id = type(arguments) == "table" and arguments[1] or nil
  return type(id) == "string" and id or nil
end

--- <Esc> (or leaving Insert mode): remove the edit, tell the server it was dismissed, and ask
--- for none until the text changes. False when none is shown.
function M.dismiss(bufnr)
  bufnr = resolve(bufnr)
  local state = buffers[bufnr]
  if not state or not state.shown then
    return false
  end
  cancel(state)
  state.dismissed_tick = vim.api.nvim_buf_get_changedtick(bufnr)
  local shown = state.shown
  M.clear(bufnr)
  local client = vim.lsp.get_client_by_id(shown.client_id)
  local id = item_id(shown.item)
  if client and id then
    -- Typing or a newer edit only clears: that is not the user turning this one down.
    util.notify(client, DID_DISMISS, { completionId = id })
  end
  emit(bufnr, "dismissed", shown.item)
  return true
end

local function line_text(bufnr, row)
  return vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ""
end

--- An LSP position as (row, byte col); a position past the last line is its end.
local function byte_position(bufnr, position, encoding)
  local count = vim.api.nvim_buf_line_count(bufnr)
  if position.line >= count then
    local last = count - 1
    return last, #line_text(bufnr, last), true
  end
  return position.line, util.byte_col(line_text(bufnr, position.line), position.character, encoding), false
end

local function mark(bufnr, row, col, opts)
  opts.strict = false
  return pcall(vim.api.nvim_buf_set_extmark, bufnr, M.ns, row, col, opts)
end

--- Draw `item` in `bufnr` and tell the server it is on screen.
---@param client vim.lsp.Client
function M.show(bufnr, item, client)
  bufnr = resolve(bufnr)
  local state = buffers[bufnr]
  if not state then
    return false
  end
  M.clear(bufnr)
  local encoding = client.offset_encoding or "utf-16"
  local start_row, start_col = byte_position(bufnr, item.range.start, encoding)
  local end_row, end_col, past_end = byte_position(bufnr, item.range["end"], encoding)
  local text = item.text:gsub("\r\n", "\n")
  if start_row ~= end_row or start_col ~= end_col or past_end then
    mark(bufnr, start_row, start_col, {
      end_row = past_end and end_row + 1 or end_row,
      end_col = past_end and 0 or end_col,
      hl_group = DELETE_HL,
      hl_eol = start_col == 0 and end_col == 0,
    })
  end
  local lines = vim.split(text, "\n", { plain = true })
  if #lines == 1 then
    -- One line: the new text right after what it replaces, inline.
    if text ~= "" then
      mark(bufnr, end_row, end_col, { virt_text = { { text, ADD_HL } }, virt_text_pos = "inline" })
    end
  elseif start_col == 0 and (end_col == 0 or past_end) and lines[#lines] == "" then
    -- Whole lines: the new lines where they will be, above the line the range ends before.
    table.remove(lines)
    local virt_lines = vim.tbl_map(function(line)
      return { { line, ADD_HL } }
    end, lines)
    if past_end or item.range["end"].line >= vim.api.nvim_buf_line_count(bufnr) then
      mark(bufnr, end_row, 0, { virt_lines = virt_lines })
    else
      mark(bufnr, end_row, 0, { virt_lines = virt_lines, virt_lines_above = true })
    end
  else
    -- Several lines inside lines: the lines as they will read, below the last replaced one.
    lines[1] = line_text(bufnr, start_row):sub(1, start_col) .. lines[1]
    lines[#lines] = lines[#lines] .. line_text(bufnr, end_row):sub(end_col + 1)
    mark(bufnr, end_row, 0, {
      virt_lines = vim.tbl_map(function(line)
        return { { line, ADD_HL } }
      end, lines),
    })
  end
  state.shown = {
    item = item,
    version = item.textDocument.version,
    client_id = client.id,
    start_row = start_row,
    start_col = start_col,
    end_row = end_row,
    end_col = end_col,
  }
  if item.command then
    util.notify(client, DID_SHOW, { item = item })
  end
  emit(bufnr, "shown", item)
  return true
end

local function on_answer(bufnr, client, version, err, result)
  if err or type(result) ~= "table" or not vim.api.nvim_buf_is_valid(bufnr) then
    return
  end
  local item = result.edits and result.edits[1]
  if not item or not item.range or type(item.text) ~= "string" then
    return
  end
  -- A stale answer (the buffer changed since it was asked) is never drawn.
  local document = item.textDocument or {}
  if util.version(bufnr) ~= version or document.version ~= version then
    return
  end
  if document.uri and vim.uri_to_bufnr(document.uri) ~= bufnr then
    return
  end
  M.show(bufnr, item, client)
end

--- Ask for a next edit at the cursor now. `force`: even when the current text's edit was
--- dismissed (the manual trigger).
function M.request(bufnr, force)
  bufnr = resolve(bufnr)
  local state = buffers[bufnr]
  if not state or bufnr ~= vim.api.nvim_get_current_buf() then
    return false
  end
  local client = vim.lsp.get_client_by_id(state.client_id)
  if not client then
    return false
  end
  if not force and state.dismissed_tick == vim.api.nvim_buf_get_changedtick(bufnr) then
    return false
  end
  cancel(state)
  local version = util.version(bufnr)
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding or "utf-16")
  params.textDocument.version = version
  local request_id
  local ok, id = util.request(client, INLINE_EDIT, params, function(err, result)
    if state.request == request_id then
      state.request = nil
    end
    on_answer(bufnr, client, version, err, result)
  end, bufnr)
  request_id = ok and id or nil
  state.request = request_id
  return ok
end

--- Typing: the drawn edit goes, and a new one is asked for after the pause.
local function on_change(bufnr)
  local state = buffers[bufnr]
  if not state then
    return
  end
  M.clear(bufnr)
  cancel(state)
  state.timer = state.timer or vim.uv.new_timer()
  state.timer:start(
    config.options.next_edits.debounce_ms,
    0,
    vim.schedule_wrap(function()
      if buffers[bufnr] == state and vim.api.nvim_buf_is_valid(bufnr) then
        M.request(bufnr, false)
      end
    end)
  )
end

--- Apply the drawn edit (when the buffer is still at the version it was computed for), then
--- run its command so that the server records the accept.
function M.apply(bufnr)
  bufnr = resolve(bufnr)
  local state = buffers[bufnr]
  local shown = state and state.shown
  if not shown then
    return false
  end
  local client = vim.lsp.get_client_by_id(shown.client_id)
  if not client or util.version(bufnr) ~= shown.version then
    M.clear(bufnr) -- stale: never applied
    return false
  end
  local item = shown.item
  M.clear(bufnr)
  local encoding = client.offset_encoding or "utf-16"
  vim.lsp.util.apply_text_edits({ { range = item.range, newText = item.text } }, bufnr, encoding)
  local lines = vim.split(item.text:gsub("\r\n", "\n"), "\n", { plain = true })
  local row = shown.start_row + #lines - 1
  local col = (#lines == 1 and shown.start_col or 0) + #lines[#lines]
  if vim.api.nvim_get_current_buf() == bufnr then
    pcall(vim.api.nvim_win_set_cursor, 0, { row + 1, col })
  end
  local command = item.command
  if command then
    if vim.fn.has("nvim-0.11") == 1 then
      client:exec_cmd(command, { bufnr = bufnr })
    else
      util.request(client, "workspace/executeCommand", command, function() end, bufnr)
    end
  end
  emit(bufnr, "applied", item)
  return true
end

--- <Tab>: jump to the edit when the cursor is away from it, else apply it. False when no
--- edit is drawn (the key keeps its own meaning).
function M.tab(bufnr)
  bufnr = resolve(bufnr)
  local shown = M.get(bufnr)
  if not shown then
    return false
  end
  if util.version(bufnr) ~= shown.version then
    M.clear(bufnr)
    return false
  end
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  if row < shown.start_row or row > shown.end_row then
    vim.api.nvim_win_set_cursor(0, { shown.start_row + 1, shown.start_col })
    emit(bufnr, "jumped", shown.item)
    return true
  end
  return M.apply(bufnr)
end

local function feed(key)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(key, true, false, true), "n", false)
end

--- Normal-mode keys while an edit is drawn: <Tab> (the accept key) jumps/applies, <Esc>
--- dismisses; both keep their own meaning otherwise. Insert mode goes through keymaps.lua.
local function map_normal(bufnr)
  local accept = config.options.keymaps.accept
  if accept then
    vim.keymap.set("n", accept, function()
      if not M.tab(bufnr) then
        feed(accept)
      end
    end, { buffer = bufnr, desc = "copilot_lsp: next edit: jump, then apply" })
  end
  vim.keymap.set("n", "<Esc>", function()
    if not M.dismiss(bufnr) then
      feed("<Esc>")
    end
  end, { buffer = bufnr, desc = "copilot_lsp: dismiss the next edit" })
end

function M.attach(bufnr, client)
  if not config.options.next_edits.enabled or buffers[bufnr] then
    return
  end
  buffers[bufnr] = { client_id = client.id }
  local group = vim.api.nvim_create_augroup("copilot_lsp.nextedit." .. bufnr, { clear = true })
  vim.api.nvim_create_autocmd({ "TextChanged", "TextChangedI", "TextChangedP" }, {
    group = group,
    buffer = bufnr,
    callback = function()
      on_change(bufnr)
    end,
  })
  vim.api.nvim_create_autocmd("InsertLeave", {
    group = group,
    buffer = bufnr,
    callback = function()
      M.dismiss(bufnr)
    end,
  })
  vim.api.nvim_create_autocmd("BufLeave", {
    group = group,
    buffer = bufnr,
    callback = function()
      local state = buffers[bufnr]
      if state then
        cancel(state)
        M.clear(bufnr)
      end
    end,
  })
  local function focus()
    util.notify(client, "textDocument/didFocus", { textDocument = { uri = vim.uri_from_bufnr(bufnr) } })
  end
  vim.api.nvim_create_autocmd("BufEnter", { group = group, buffer = bufnr, callback = focus })
  if vim.api.nvim_get_current_buf() == bufnr then
    focus()
  end
  map_normal(bufnr)
end

function M.detach(bufnr)
  local state = buffers[bufnr]
  if not state then
    return
  end
  cancel(state)
  M.clear(bufnr)
  if state.timer and not state.timer:is_closing() then
    state.timer:close()
  end
  buffers[bufnr] = nil
  pcall(vim.api.nvim_del_augroup_by_name, "copilot_lsp.nextedit." .. bufnr)
  local accept = config.options.keymaps.accept
  if accept then
    pcall(vim.keymap.del, "n", accept, { buffer = bufnr })
  end
  pcall(vim.keymap.del, "n", "<Esc>", { buffer = bufnr })
end

return M
