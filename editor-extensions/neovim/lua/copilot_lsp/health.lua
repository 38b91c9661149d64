-- :checkhealth copilot_lsp — Neovim version, the server command, the engine.
local config = require("copilot_lsp.config")
local util = require("copilot_lsp.util")

local M = {}

local health = vim.health

local function engine_status(cmd)
  -- `copilot-lsp engine status --json` resolves the URL the way the server does.
  local binary = cmd[1]
  local args = { binary }
  if binary:match("python[%d.]*$") then
    vim.list_extend(args, { "-m", "copilot_lsp" })
  end
  vim.list_extend(args, { "engine", "status", "--json" })
  local ok, result = pcall(function()
    return vim.system(args, { text = true }):wait(10000)
  end)
  if not ok or not result then
    return nil, tostring(result)
  end
  -- It exits non-zero when the engine is down, but still prints its JSON.
  local decoded_ok, status = pcall(vim.json.decode, result.stdout or "", { luanil = { object = true } })
  if not decoded_ok or type(status) ~= "table" then
    return nil, ((result.stderr or ""):gsub("%s+$", ""))
  end
  return status, nil
end

function M.check()
  health.start("copilot_lsp: Neovim")
  local version = vim.version()
  local text = ("%d.%d.%d"):format(version.major, version.minor, version.patch)
  if vim.fn.has("nvim-0.10") == 0 then
    health.error("Neovim " .. text .. " is too old", { "Install Neovim 0.10 or newer" })
  elseif vim.lsp.inline_completion then
    health.ok("Neovim " .. text .. ": vim.lsp.inline_completion draws suggestions, streamed previews on top")
  else
    health.ok("Neovim " .. text .. ": the plugin draws suggestions with extmarks")
  end
  if not require("copilot_lsp").setup_done then
    health.warn("setup() has not been called", { 'Add require("copilot_lsp").setup({}) to your config' })
  end
  local ok, err = pcall(config.validate, config.options)
  if ok then
    health.ok("options are valid")
  else
    health.error("invalid option: " .. tostring(err))
  end

  health.start("copilot_lsp: server")
  local cmd = config.command()
  local path = vim.fn.exepath(cmd[1])
  if path == "" then
    health.error(("server command not found: %s"):format(cmd[1]), {
      "Run `make setup` in the copilot-lsp checkout and put its .venv/bin on $PATH,",
      'or set cmd = { "/path/to/copilot-lsp/.venv/bin/copilot-lsp", "--stdio" } in setup()',
    })
    return
  end
  health.ok("server command: " .. table.concat(vim.list_extend({ path }, vim.list_slice(cmd, 2)), " "))
  local client = util.client()
  if client then
    health.ok(("client running (id %d), streaming %s"):format(client.id, tostring(config.options.streaming)))
  else
    health.info("no copilot_lsp client is running yet (open a file to start one)")
  end
  if config.options.next_edits.enabled then
    health.ok(("next edits on (asked %d ms after a change)"):format(config.options.next_edits.debounce_ms))
  else
    health.info("next edits off (setup({ next_edits = { enabled = true } }) turns them on)")
  end

  health.start("copilot_lsp: engine")
  local stats = client and require("copilot_lsp").stats(3000)
  local engine = stats and stats.engine
  if engine and engine.healthy == true then
    health.ok(("engine at %s answers completions"):format(engine.url))
    return
  end
  local status, problem = engine_status(cmd)
  if status and status.healthy then
    health.ok(("engine reachable at %s (model %s)"):format(status.url, tostring(status.model)))
  elseif status then
    health.error(("engine not reachable at %s"):format(status.url or "(no embedded engine running)"), {
      "Start the embedded engine: copilot-lsp engine up",
      "or point init_options.engine.url at your vLLM server",
    })
  else
    health.warn("cannot ask the server for the engine status: " .. tostring(problem))
  end
end

return M
