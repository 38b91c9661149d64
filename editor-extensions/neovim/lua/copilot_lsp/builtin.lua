-- Neovim 0.12+: vim.lsp.inline_completion asks, draws and accepts; this module adds the
-- streamed preview before its answer arrives, accept word/line, dismiss and tracking.
local ghost = require("copilot_lsp.ghost")
local util = require("copilot_lsp.util")

local M = {}

local INLINE_COMPLETION = "textDocument/inlineCompletion"
local builtin_ns = vim.api.nvim_create_namespace("nvim.lsp.inline_completion")

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
      handler = function(err, result, ctx)
        local target = ctx and ctx.bufnr or bufnr or vim.api.nvim_get_current_buf()
        ghost.clear(target)
        inner(err, result, ctx)
        local items = result and (result.items or result) or {}
        if items[1] and M.builtin_visible(target) then
          require("copilot_lsp.suggestion").report_shown(target, util.item_id(items[1]))
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

function M.cycle(count)
  vim.lsp.inline_completion.select({ count = count })
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
  pcall(vim.api.nvim_del_augroup_by_name, "copilot_lsp.builtin." .. bufnr)
  ghost.clear(bufnr)
end

return M
