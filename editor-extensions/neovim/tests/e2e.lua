-- End-to-end scenarios in real headless Neovim against the real server (driven by
-- tests/editors/test_neovim.py, which runs the scripted engine and checks the results).
-- Environment: COPILOT_E2E_OUT (result JSON), COPILOT_E2E_SCENARIO, COPILOT_E2E_FILE,
-- COPILOT_E2E_ENGINE_URL, COPILOT_E2E_SERVER (JSON list: the server command).
local H = dofile(vim.fs.joinpath(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h"), "harness.lua"))

local scenario = os.getenv("COPILOT_E2E_SCENARIO")
local ghost = require("copilot_lsp.ghost")
local util = require("copilot_lsp.util")
local plugin = require("copilot_lsp")

H.result.nvim = tostring(vim.version())
H.result.builtin = vim.lsp.inline_completion ~= nil

local function start(extra)
  local options = vim.tbl_deep_extend("force", {
    cmd = vim.json.decode(os.getenv("COPILOT_E2E_SERVER")),
    debounce_ms = 0,
    init_options = {
      engine = { url = os.getenv("COPILOT_E2E_ENGINE_URL") },
      completion = { debounceMs = 0 },
      telemetry = { enableLog = true },
    },
  }, extra or {})
  H.assert(plugin.setup(options) == true, "setup() refused valid options")
  ghost.listeners[#ghost.listeners + 1] = function(_, text)
    H.log("render", text)
  end
  vim.cmd.edit(os.getenv("COPILOT_E2E_FILE"))
  local client = H.wait_until(function()
    return util.client(0)
  end, "the copilot_lsp client to attach")
  H.wait_until(function()
    return client.initialized ~= false and #vim.lsp.get_clients({ bufnr = 0, name = util.name }) > 0
  end, "initialization")
  -- Outermost wrapper: notes when an answer arrives, before the plugin or the built-in see it.
  local request = client.request
  client.request = function(self, method, params, handler, bufnr)
    if method == "textDocument/inlineCompletion" and type(handler) == "function" then
      local inner = handler
      handler = function(err, result, ctx)
        local items = result and (result.items or result) or {}
        H.log("response", items[1] and items[1].insertText or "")
        H.log(
          "items",
          vim.tbl_map(function(item)
            return { text = item.insertText, id = util.item_id(item) }
          end, items)
        )
        return inner(err, result, ctx)
      end
    end
    return request(self, method, params, handler, bufnr)
  end
  return client
end

local function answered()
  for _, event in ipairs(H.result.events) do
    if event.kind == "response" then
      return true
    end
  end
  return false
end

local function suggestion_text()
  if H.result.builtin then
    local marks = vim.api.nvim_buf_get_extmarks(
      0,
      vim.api.nvim_create_namespace("nvim.lsp.inline_completion"),
      0,
      -1,
      { details = true }
    )
    if #marks == 0 then
      return nil
    end
    local details = marks[1][4]
    local parts = { details.virt_text[1][1] }
    for _, line in ipairs(details.virt_lines or {}) do
      parts[#parts + 1] = line[1][1]
    end
    return table.concat(parts, "\n")
  end
  local drawn = ghost.get(0)
  return drawn and drawn.text or nil
end

local function stats_where(check, what)
  return H.wait_until(function()
    local stats = plugin.stats(2000)
    return stats and check(stats) and stats
  end, what)
end

local scenarios = {}

-- Streamed preview, then the answer, then <Tab> accepts; the accept reaches the stats.
function scenarios.stream_accept()
  start()
  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  H.type("A") -- Insert at the end of the blank body line: a multi-line completion
  local full = os.getenv("COPILOT_E2E_EXPECT")
  H.wait_until(function()
    return answered() and suggestion_text() == full
  end, "the answer on screen")
  H.log("final", suggestion_text())
  H.type("<Tab>")
  H.wait_until(function()
    return table.concat(H.lines(), "\n"):find(full, 1, true)
  end, "the suggestion in the buffer")
  H.result.lines = H.lines()
  H.result.cursor = vim.api.nvim_win_get_cursor(0)
  H.type("<Esc>")
  H.result.stats = stats_where(function(s)
    return (s.outcomes.accepted or 0) >= 1
  end, "the accept in copilot/stats")
  vim.cmd("checkhealth copilot_lsp")
  H.result.health = H.lines()
end

-- Dismiss, then a new suggestion of which one word and then one line are accepted.
function scenarios.partial_dismiss()
  start()
  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  H.type("A")
  local full = os.getenv("COPILOT_E2E_EXPECT")
  H.wait_until(function()
    return suggestion_text() == full
  end, "the first suggestion")
  H.type("<C-]>")
  H.wait_until(function()
    return suggestion_text() == nil
  end, "the suggestion to go")
  H.result.after_dismiss = H.lines()
  stats_where(function(s)
    return (s.outcomes.dismissed or 0) == 1
  end, "the dismissal in copilot/stats")
  H.type("<Esc>A") -- ask again at the same place
  H.wait_until(function()
    return suggestion_text() == full
  end, "the second suggestion")
  H.type("<M-w>")
  H.wait_until(function()
    return H.lines()[2] == "    result"
  end, "one word accepted")
  H.result.after_word = H.lines()
  H.result.stats = stats_where(function(s)
    return (s.outcomes.partially_accepted or 0) >= 1
  end, "the partial accept in copilot/stats")
  H.type("<Esc>")
end

-- With automatic requests off: <M-]> asks the server now (nothing shown), <M-[> keeps the
-- answer's only item, <M-l> accepts its next line.
function scenarios.keys()
  start({ auto_trigger = false })
  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  H.type("A")
  local full = os.getenv("COPILOT_E2E_EXPECT")
  H.result.before_next = suggestion_text()
  H.type("<M-]>")
  -- The answer itself, not only its streamed preview: <M-[> before the answer would ask again.
  H.wait_until(function()
    return answered() and suggestion_text() == full
  end, "the suggestion <M-]> asked for")
  H.type("<M-[>")
  H.result.after_prev = suggestion_text()
  H.type("<M-l>")
  H.wait_until(function()
    return H.lines()[2] == "    result = 0"
  end, "one line accepted")
  H.result.after_line = H.lines()
  H.result.stats = stats_where(function(s)
    return (s.outcomes.partially_accepted or 0) >= 1
  end, "the partial accept in copilot/stats")
  H.type("<Esc>")
end

-- <M-]> after an automatic suggestion asks for the alternatives and shows the second; cycling
-- shows each in turn (and wraps), <M-[> goes back, <Tab> accepts the one on screen.
function scenarios.cycle_alternatives()
  start()
  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  H.type("A")
  local expected = vim.json.decode(os.getenv("COPILOT_E2E_ALTERNATIVES"))
  H.wait_until(function()
    return answered() and suggestion_text() == expected[1]
  end, "the automatic suggestion")
  local backend = require(H.result.builtin and "copilot_lsp.builtin" or "copilot_lsp.suggestion")
  local seen, positions = { suggestion_text() }, { { backend.position() } }
  for _, key in ipairs({ "<M-]>", "<M-]>", "<M-]>", "<M-[>" }) do
    local before = suggestion_text()
    H.type(key)
    H.wait_until(function()
      local now = suggestion_text()
      return now ~= nil and now ~= before and now
    end, "the suggestion after " .. key)
    seen[#seen + 1] = suggestion_text()
    positions[#positions + 1] = { backend.position() }
  end
  H.result.seen, H.result.positions = seen, positions
  H.type("<Tab>")
  H.wait_until(function()
    return table.concat(H.lines(), "\n"):find(seen[#seen], 1, true)
  end, "the shown alternative in the buffer")
  H.result.lines = H.lines()
  H.type("<Esc>")
  H.result.stats = stats_where(function(s)
    return (s.outcomes.accepted or 0) >= 1
  end, "the accept in copilot/stats")
end

-- setup() rejects bad options with a message and starts nothing.
function scenarios.bad_options()
  local messages = {}
  vim.notify = function(message)
    messages[#messages + 1] = message
  end
  H.result.accepted = plugin.setup({ debounce_ms = "soon" })
  H.result.unknown_key = plugin.setup({ keymaps = { accept_all = "<C-a>" } })
  H.result.messages = messages
  H.result.setup_done = plugin.setup_done
end

H.run(function()
  local body = scenarios[scenario]
  H.assert(body ~= nil, "unknown scenario " .. tostring(scenario))
  body()
end)
