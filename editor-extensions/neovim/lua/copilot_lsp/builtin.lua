-- Neovim 0.12+: vim.lsp.inline_completion asks, draws and accepts; this module adds the
-- streamed preview before its answer arrives, accept word/line, dismiss and tracking.
local config = require("copilot_lsp.config")
local ghost = require("copilot_lsp.ghost")
local util = require("copilot_lsp.util")

local M = {}

local INLINE_COMPLETION = "textDocument/inlineCompletion"
local INVOKED = 1
local builtin_ns = vim.api.nvim_create_namespace("nvim.lsp.inline_completion")

--- Per buffer: the items of the built-in's last answer, which of them it shows, whether they
--- answer an explicit request (alternatives asked for), where the buffer stood when they came
--- (change tick and cursor), and a step waiting for the next answer.
---@type table<integer, {items: table[], index: integer, invoked: boolean, place: string|nil, step: integer|nil}>
local answers = {}

local function answer(bufnr)
  answers[bufnr] = answers[bufnr] or { items = {}, index = 1, invoked = false }
  return answers[bufnr]
end

--- The buffer's text and cursor now: an answer is only cycled through where it was given.
local function place(bufnr)
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  return ("%d:%d:%d"):format(vim.api.nvim_buf_get_changedtick(bufnr), row, col)
end

--- True while the built-in draws a suggestion in the buffer.
function M.builtin_visible(bufnr)
  return #vim.api.nvim_buf_get_extmarks(bufnr, builtin_ns, 0, -1, { limit = 1 }) > 0
end

function M.visible(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  return M.builtin_visible(bufnr) or ghost.get(bufnr) ~= nil
end

--- A streamed update: draw it unless the built-in already shows a suggestion (two ghost
--- texts at one place would be worse than a late one).
function M.on_partial(bufnr, params, row, col)
  if M.builtin_visible(bufnr) then
    return
  end
  if params.text == "" then
    return ghost.clear(bufnr)
  end
  ghost.show(bufnr, row, col, params.text, false)
  require("copilot_lsp.suggestion").report_shown(bufnr, params.completionId)
end

--- Wrap the client's request method so that the preview is removed in the same step in
--- which the built-in draws the answer: no frame with both, no frame with neither.
function M.wrap_client(client)
  if client._copilot_lsp_wrapped then
    return
  end
  client._copilot_lsp_wrapped = true
  local request = client.request
  client.request = function(self, method, params, handler, bufnr)
    if method == INLINE_COMPLETION and type(handler) == "function" then
      local inner = handler
      local asked = answer(bufnr or vim.api.nvim_get_current_buf())
      local step = asked.step
      if step == nil and not config.options.auto_trigger then
        -- The built-in asks on every move in Insert mode, whatever `auto_trigger` says: with
        -- automatic requests off only the user's own (`:CopilotLsp suggest`, the cycle keys)
        -- reach the server. An empty answer takes down what was shown, as a new one would.
        local target = bufnr or vim.api.nvim_get_current_buf()
        ghost.clear(target)
        asked.items, asked.index, asked.invoked = {}, 1, false
        inner(nil, { items = {} }, { method = method, client_id = self.id, bufnr = target })
        return true, nil
      end
      if step ~= nil then
        -- The built-in only asks automatically; this one is the user's cycle key.
        params = vim.tbl_extend("force", params, { context = { triggerKind = INVOKED } })
        asked.step = nil
      end
      handler = function(err, result, ctx)
        local target = ctx and ctx.bufnr or bufnr or vim.api.nvim_get_current_buf()
        ghost.clear(target)
        inner(err, result, ctx)
        local items = result and (result.items or result) or {}
        local state = answer(target)
        state.items, state.index, state.invoked = items, 1, step ~= nil
        state.place = place(target)
        if step and step ~= 0 and #items > 1 then
          vim.lsp.inline_completion.select({ bufnr = target, count = step })
          state.index = (step % #items) + 1
        end
        if items[state.index] and M.builtin_visible(target) then
          require("copilot_lsp.suggestion").report_shown(target, util.item_id(items[state.index]))
        end
      end
    end
    return request(self, method, params, handler, bufnr)
  end
end

local accepted = {} ---@type table<string, integer> characters taken so far per completion id

--- Accept all (the built-in's own accept, which runs the item's command), a word or a line.
---@param part "all"|"word"|"line"
function M.accept(part)
  local inline = vim.lsp.inline_completion
  if part == "all" then
    return inline.get()
  end
  return inline.get({
    on_accept = function(item)
      local text = type(item.insert_text) == "string" and item.insert_text or item.insert_text.value
      local take = part == "word" and util.next_word(text) or util.next_line(text)
      util.insert_at_cursor(0, take)
      local id = util.item_id(item)
      local client = vim.lsp.get_client_by_id(item.client_id)
      if take == text and item.command and client then
        util.request(client, "workspace/executeCommand", item.command, function() end)
      elseif id and client then
        accepted[id] = (accepted[id] or 0) + util.chars(take)
        util.notify(client, "copilot/didPartiallyAccept", { completionId = id, acceptedLength = accepted[id] })
      end
    end,
  })
end

--- Hide the suggestion and report it dismissed.
function M.dismiss()
  local bufnr = vim.api.nvim_get_current_buf()
  ghost.clear(bufnr)
  return vim.lsp.inline_completion.get({
    on_accept = function(item) -- `get` hides the item before handing it here
      local client = vim.lsp.get_client_by_id(item.client_id)
      local id = util.item_id(item)
      if client and id then
        util.notify(client, "copilot/didDismissCompletion", { completionId = id, reason = "dismissed" })
      end
    end,
  })
end

--- Show the next (count 1) or previous (count -1) suggestion: the built-in's own `select`
--- over the items it holds. The first time after typing it holds only the automatic answer,
--- so the server is asked explicitly (which brings the alternatives) through the built-in's
--- next request, and the step is taken when they arrive. An explicit answer with one item
--- keeps it (asking again would bring the same).
function M.cycle(count)
  local bufnr = vim.api.nvim_get_current_buf()
  local state = answer(bufnr)
  local visible = M.builtin_visible(bufnr)
  if state.invoked and visible and state.place == place(bufnr) then
    if #state.items > 1 then
      vim.lsp.inline_completion.select({ count = count })
      state.index = (state.index - 1 + count) % #state.items + 1
      require("copilot_lsp.suggestion").report_shown(bufnr, util.item_id(state.items[state.index]))
    end
    return
  end
  M.request_now(bufnr, visible and count or 0)
end

--- Ask the server explicitly (Invoked: the alternatives come too) through the built-in's next
--- request; when the answer arrives, move `step` from its first item.
function M.request_now(bufnr, step)
  answer(bufnr).step = step
  -- 0.12 has no public "request now": its request runs (debounced) on CursorMovedI.
  vim.api.nvim_exec_autocmds("CursorMovedI", { buffer = bufnr })
end

--- Which suggestion is on screen and how many there are (e.g. for a statusline).
function M.position(bufnr)
  local state = answer(bufnr or vim.api.nvim_get_current_buf())
  return state.index, #state.items
end

function M.attach(bufnr, client)
  M.wrap_client(client)
  vim.lsp.inline_completion.enable(true, { bufnr = bufnr })
  local group = vim.api.nvim_create_augroup("copilot_lsp.builtin." .. bufnr, { clear = true })
  vim.api.nvim_create_autocmd({ "InsertLeave", "BufLeave" }, {
    group = group,
    buffer = bufnr,
    callback = function()
      ghost.clear(bufnr)
    end,
  })
  vim.api.nvim_create_autocmd({ "TextChangedI", "CursorMovedI" }, {
    group = group,
    buffer = bufnr,
    callback = function()
      local drawn = ghost.get(bufnr)
      local row, col = unpack(vim.api.nvim_win_get_cursor(0))
      if drawn and (drawn.row ~= row - 1 or drawn.col ~= col) then
        ghost.clear(bufnr) -- a preview belongs to one cursor position
      end
    end,
  })
end

function M.detach(bufnr)
  answers[bufnr] = nil
  pcall(vim.api.nvim_del_augroup_by_name, "copilot_lsp.builtin." .. bufnr)
  ghost.clear(bufnr)
end

return M
