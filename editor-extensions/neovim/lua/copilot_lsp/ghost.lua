-- Ghost text: one extmark per buffer, updated in place so that growing text never blinks.
local M = {}

M.ns = vim.api.nvim_create_namespace("copilot_lsp.ghost")

---@type table<integer, {id: integer, row: integer, col: integer, text: string}>
local shown = {}

--- Called with (bufnr, text) after every draw; text "" after a clear (tests and benchmarks).
---@type fun(bufnr: integer, text: string)[]
M.listeners = {}

local function resolve(bufnr)
  return (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
end

local function emit(bufnr, text)
  for _, listener in ipairs(M.listeners) do
    pcall(listener, bufnr, text)
  end
end

--- Draw `text` as inserted at (row, col) (0-based row, byte col): the first line inline at
--- the position, the other lines below it. `overlay` draws over the text right of the cursor
--- instead (the suggestion replaces closing brackets there).
function M.show(bufnr, row, col, text, overlay)
  bufnr = resolve(bufnr)
  if text == "" then
    return M.clear(bufnr)
  end
  local current = shown[bufnr]
  if current and current.row == row and current.col == col and current.text == text then
    return
  end
  local hl = require("copilot_lsp.config").options.hl_group
  local lines = vim.split(text, "\n", { plain = true })
  local virt_lines = {}
  for index = 2, #lines do
    virt_lines[#virt_lines + 1] = { { lines[index], hl } }
  end
  local opts = {
    virt_text = { { lines[1], hl } },
    virt_text_pos = overlay and "overlay" or "inline",
    virt_lines = #virt_lines > 0 and virt_lines or nil,
    hl_mode = "combine",
  }
  if current and current.row == row then
    opts.id = current.id -- same line: move and retext the same mark, no clear-and-redraw
  elseif current then
    pcall(vim.api.nvim_buf_del_extmark, bufnr, M.ns, current.id)
  end
  local ok, id = pcall(vim.api.nvim_buf_set_extmark, bufnr, M.ns, row, col, opts)
  if not ok then
    shown[bufnr] = nil
    return
  end
  shown[bufnr] = { id = id, row = row, col = col, text = text }
  emit(bufnr, text)
end

function M.clear(bufnr)
  bufnr = resolve(bufnr)
  if shown[bufnr] == nil then
    return
  end
  shown[bufnr] = nil
  if vim.api.nvim_buf_is_valid(bufnr) then
    vim.api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
  end
  emit(bufnr, "")
end

--- What is drawn in the buffer now, or nil.
function M.get(bufnr)
  return shown[resolve(bufnr)]
end

function M.setup_highlight()
  local has_hint = next(vim.api.nvim_get_hl(0, { name = "ComplHint" })) ~= nil
  -- Link to Neovim 0.12's inline-completion group when it exists: a streamed preview and
  -- the built-in's final suggestion must look the same, or the hand-over shows.
  vim.api.nvim_set_hl(0, "CopilotLspGhost", { link = has_hint and "ComplHint" or "Comment", default = true })
end

return M
