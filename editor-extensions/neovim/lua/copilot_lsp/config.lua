-- Options of the plugin: defaults, merging and validation (one place for all of them).
local M = {}

---@class copilot_lsp.Keymaps
---@field accept string|false Accept the whole suggestion (falls back to the key itself)
---@field accept_word string|false Accept the next word
---@field accept_line string|false Accept the next line
---@field dismiss string|false Hide the suggestion
---@field next string|false Show the next suggestion
---@field prev string|false Show the previous suggestion

---@class copilot_lsp.NextEdits
---@field enabled boolean Ask for next edits (sends the server `nextEditSuggestions.enabled`)
---@field debounce_ms integer Pause after a change before asking

---@class copilot_lsp.Config
---@field cmd string[]|nil Server command; nil: `copilot-lsp --stdio` from $PATH
---@field filetypes string[]|nil Filetypes to attach to; nil: every buffer with a filetype
---@field init_options table Merged into initializationOptions (the server's settings tree)
---@field streaming boolean Draw the suggestion while it streams (copilot/partialCompletion)
---@field debounce_ms integer Pause after a keystroke before asking (own renderer only)
---@field renderer "auto"|"builtin"|"extmark" auto: vim.lsp.inline_completion on 0.12+
---@field auto_trigger boolean Ask while typing; false: only on `:CopilotLsp suggest`
---@field hl_group string Highlight of the ghost text
---@field keymaps copilot_lsp.Keymaps
---@field next_edits copilot_lsp.NextEdits Next-edit suggestions (off by default, as in the server)
M.defaults = {
  cmd = nil,
  filetypes = nil,
  init_options = {},
  streaming = true,
  debounce_ms = 40,
  renderer = "auto",
  auto_trigger = true,
  hl_group = "CopilotLspGhost",
  keymaps = {
    accept = "<Tab>",
    accept_word = "<M-w>",
    accept_line = "<M-l>",
    dismiss = "<C-]>",
    next = "<M-]>",
    prev = "<M-[>",
  },
  next_edits = {
    enabled = false,
    debounce_ms = 300,
  },
}

---@type copilot_lsp.Config
M.options = vim.deepcopy(M.defaults)

local function optional_key(name, value)
  if value ~= false and type(value) ~= "string" then
    error(("keymaps.%s: expected a key string or false, got %s"):format(name, vim.inspect(value)), 0)
  end
end

--- Raise a readable error naming the first bad option.
---@param config copilot_lsp.Config
function M.validate(config)
  local function check(name, value, kinds)
    local ok, err = pcall(vim.validate, name, value, kinds)
    if not ok then
      error(err, 0)
    end
  end
  check("cmd", config.cmd, { "table", "nil" })
  check("filetypes", config.filetypes, { "table", "nil" })
  check("init_options", config.init_options, "table")
  check("streaming", config.streaming, "boolean")
  check("debounce_ms", config.debounce_ms, "number")
  check("auto_trigger", config.auto_trigger, "boolean")
  check("hl_group", config.hl_group, "string")
  check("keymaps", config.keymaps, "table")
  check("next_edits", config.next_edits, "table")
  check("next_edits.enabled", config.next_edits.enabled, "boolean")
  check("next_edits.debounce_ms", config.next_edits.debounce_ms, "number")
  if config.next_edits.debounce_ms < 0 or config.next_edits.debounce_ms > 5000 then
    error(("next_edits.debounce_ms: expected 0..5000, got %s"):format(config.next_edits.debounce_ms), 0)
  end
  if config.debounce_ms < 0 or config.debounce_ms > 2000 then
    error(("debounce_ms: expected 0..2000, got %s"):format(config.debounce_ms), 0)
  end
  if not vim.tbl_contains({ "auto", "builtin", "extmark" }, config.renderer) then
    error(("renderer: expected auto, builtin or extmark, got %s"):format(vim.inspect(config.renderer)), 0)
  end
  if config.cmd ~= nil and (#config.cmd == 0 or type(config.cmd[1]) ~= "string") then
    error("cmd: expected a non-empty list of strings", 0)
  end
  for name in pairs(config.keymaps) do
    if M.defaults.keymaps[name] == nil then
      error(
        ("keymaps.%s: unknown action (known: %s)"):format(name, table.concat(vim.tbl_keys(M.defaults.keymaps), ", ")),
        0
      )
    end
    optional_key(name, config.keymaps[name])
  end
end

--- Merge user options over the defaults, validate, and store them.
---@param opts table|nil
---@return copilot_lsp.Config
function M.set(opts)
  local merged = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts or {})
  M.validate(merged)
  M.options = merged
  return merged
end

--- The server command: the configured one, else `copilot-lsp` from $PATH.
---@return string[]
function M.command()
  return M.options.cmd or { "copilot-lsp", "--stdio" }
end

--- True when Neovim's own inline completion renders suggestions.
function M.use_builtin()
  local renderer = M.options.renderer
  local available = vim.lsp.inline_completion ~= nil
  if renderer == "builtin" and not available then
    error("renderer = 'builtin' needs Neovim 0.12+ (vim.lsp.inline_completion)", 0)
  end
  return renderer == "builtin" or (renderer == "auto" and available)
end

--- initializationOptions sent to the server.
function M.init_options()
  local options = vim.deepcopy(M.options.init_options)
  options.editor = vim.tbl_extend("keep", options.editor or {}, { streaming = M.options.streaming })
  options.nextEditSuggestions =
    vim.tbl_extend("keep", options.nextEditSuggestions or {}, { enabled = M.options.next_edits.enabled })
  return options
end

return M
