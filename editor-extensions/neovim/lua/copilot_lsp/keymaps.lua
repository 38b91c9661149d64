-- Insert-mode keys. Each falls back to the key's own meaning when no suggestion is shown,
-- so <Tab> still indents (the most common complaint about completion plugins).
local config = require("copilot_lsp.config")

local M = {}

local function backend()
  return config.use_builtin() and require("copilot_lsp.builtin") or require("copilot_lsp.suggestion")
end

local function visible()
  return backend().visible(vim.api.nvim_get_current_buf())
end

local function feed(key)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(key, true, false, true), "n", false)
end

local function nextedit()
  return require("copilot_lsp.nextedit")
end

M.actions = {
  -- Ghost text first: when an inline completion is drawn, <Tab> accepts it (and the change
  -- dismisses a next edit); otherwise <Tab> jumps to the next edit, then applies it.
  accept = function()
    if visible() then
      return backend().accept("all")
    end
    return nextedit().tab(vim.api.nvim_get_current_buf())
  end,
  accept_word = function()
    return visible() and backend().accept("word")
  end,
  accept_line = function()
    return visible() and backend().accept("line")
  end,
  dismiss = function()
    if not visible() then
      return nextedit().dismiss(vim.api.nvim_get_current_buf())
    end
    if config.use_builtin() then
      require("copilot_lsp.builtin").dismiss()
    else
      require("copilot_lsp.suggestion").dismiss(nil, "dismissed")
    end
    return true
  end,
  next = function()
    backend().cycle(1)
    return true
  end,
  prev = function()
    backend().cycle(-1)
    return true
  end,
}

--- Map the configured keys in `bufnr`.
function M.attach(bufnr)
  for name, key in pairs(config.options.keymaps) do
    if key then
      vim.keymap.set("i", key, function()
        if not M.actions[name]() then
          feed(key)
        end
      end, { buffer = bufnr, desc = "copilot_lsp: " .. name:gsub("_", " ") })
    end
  end
end

function M.detach(bufnr)
  for _, key in pairs(config.options.keymaps) do
    if key then
      pcall(vim.keymap.del, "i", key, { buffer = bufnr })
    end
  end
end

return M
