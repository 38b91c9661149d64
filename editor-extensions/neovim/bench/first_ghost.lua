-- Keystroke-to-first-ghost-text in real Neovim: `o` under a function header (a new body
-- line, a multi-line completion), timed from the key entering Neovim's input queue to the
-- first ghost text drawn (the plugin's streamed preview, or Neovim 0.12's own suggestion),
-- and to the server's answer. Driven by first_ghost.py; writes COPILOT_E2E_OUT.
local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h")
local H = dofile(vim.fs.joinpath(here, "..", "tests", "harness.lua"))
local plugin = require("copilot_lsp")
local ghost = require("copilot_lsp.ghost")
local util = require("copilot_lsp.util")

local runs = tonumber(os.getenv("COPILOT_E2E_RUNS") or "20")
local builtin_ns = vim.api.nvim_create_namespace("nvim.lsp.inline_completion")

H.result.nvim = tostring(vim.version())
H.result.builtin = vim.lsp.inline_completion ~= nil
H.result.samples = {}

local first_draw, answered

local function builtin_drawn()
  return #vim.api.nvim_buf_get_extmarks(0, builtin_ns, 0, -1, { limit = 1 }) > 0
end

H.run(function()
  assert(plugin.setup({
    cmd = vim.json.decode(os.getenv("COPILOT_E2E_SERVER")),
    init_options = { engine = { url = os.getenv("COPILOT_E2E_ENGINE_URL") } },
  }))
  ghost.listeners[#ghost.listeners + 1] = function(_, text)
    if text ~= "" and not first_draw then
      first_draw = vim.uv.hrtime()
    end
  end
  -- The built-in draws in its answer handler: a 1 ms poll adds at most 1 ms.
  local poll = assert(vim.uv.new_timer())
  poll:start(
    0,
    1,
    vim.schedule_wrap(function()
      if not first_draw and builtin_drawn() then
        first_draw = vim.uv.hrtime()
      end
    end)
  )
  vim.cmd.edit(os.getenv("COPILOT_E2E_FILE"))
  local client = H.wait_until(function()
    return util.client(0)
  end, "the client", 30000)
  local request = client.request
  client.request = function(self, method, params, handler, bufnr)
    if method == "textDocument/inlineCompletion" and type(handler) == "function" then
      local inner = handler
      handler = function(err, result, ctx)
        local items = result and (result.items or result) or {}
        if items[1] and not answered then
          answered = vim.uv.hrtime()
        end
        return inner(err, result, ctx)
      end
    end
    return request(self, method, params, handler, bufnr)
  end
  local base = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  for index = 0, runs do -- index 0 warms the engine's prefix cache and is not counted
    local header = ("def scale_%d(items: list[Item], factor: float) -> list[Item]:"):format(index)
    local lines = vim.list_extend(vim.deepcopy(base), { "", "", header })
    vim.api.nvim_buf_set_lines(0, 0, -1, false, lines)
    vim.api.nvim_win_set_cursor(0, { #lines, #header })
    H.sleep(50)
    first_draw, answered = nil, nil
    local pressed = vim.uv.hrtime()
    vim.api.nvim_input("o")
    local ok = pcall(H.wait_until, function()
      return first_draw and answered
    end, "ghost text", 20000)
    if index > 0 then
      table.insert(H.result.samples, {
        first_ghost_ms = first_draw and (first_draw - pressed) / 1e6 or vim.NIL,
        answer_ms = answered and (answered - pressed) / 1e6 or vim.NIL,
        ok = ok,
      })
    end
    H.type("<Esc>")
    H.sleep(300) -- let a cancelled stream close before the next run
  end
  poll:stop()
  poll:close()
  H.result.stats = plugin.stats(5000)
end, 20000 * (runs + 2))
