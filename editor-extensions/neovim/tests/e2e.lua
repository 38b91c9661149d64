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

-- Next edits: renaming a parameter gets its use renamed. The edit is drawn (delete highlight
-- and inline text), a stale one is never applied, <Esc> dismisses it; asked again, <Tab> jumps
-- to it and <Tab> applies it, and the server hears the accept. Then a drawn line insertion
-- (virtual lines).
function scenarios.next_edit()
  local nextedit = require("copilot_lsp.nextedit")
  local client = start({ auto_trigger = false, next_edits = { enabled = true, debounce_ms = 20 } })
  nextedit.listeners[#nextedit.listeners + 1] = function(_, event, item)
    H.log("nextedit", { event = event, text = item and item.text, version = item and item.textDocument.version })
  end
  local function marks()
    return vim.tbl_map(function(m)
      local d = m[4]
      return {
        row = m[2],
        col = m[3],
        end_row = d.end_row,
        end_col = d.end_col,
        hl_group = d.hl_group,
        virt_text = d.virt_text,
        virt_text_pos = d.virt_text_pos,
        virt_lines = d.virt_lines,
        virt_lines_above = d.virt_lines_above,
      }
    end, vim.api.nvim_buf_get_extmarks(0, nextedit.ns, 0, -1, { details = true }))
  end
  local original = H.lines()
  vim.api.nvim_win_set_cursor(0, { 1, 10 })
  H.type("cwcount")
  H.wait_until(function()
    return nextedit.get(0)
  end, "the next edit on screen")
  H.result.item = nextedit.get(0).item
  H.result.marks = marks()
  H.result.encoding = client.offset_encoding
  -- Stale: the buffer changed after the edit was computed; applying it does nothing.
  local shown_version = nextedit.get(0).version
  vim.api.nvim_buf_set_text(0, 4, 0, 4, 0, { "# " })
  H.result.stale_applied = nextedit.apply(0)
  H.result.after_stale = H.lines()
  H.result.stale_version = { shown_version, util.version(vim.api.nvim_get_current_buf()) }
  vim.api.nvim_buf_set_text(0, 4, 0, 4, 2, { "" })
  plugin.next_edit() -- API changes need not fire TextChangedI before a key is typed
  H.wait_until(function()
    local shown = nextedit.get(0)
    return shown and shown.version == util.version(vim.api.nvim_get_current_buf())
  end, "the edit again, for the current version")
  H.type("<Esc>")
  H.wait_until(function()
    return not nextedit.visible(0)
  end, "<Esc> to dismiss")
  H.sleep(300)
  H.result.after_escape = { visible = nextedit.visible(0), marks = marks(), lines = H.lines() }
  -- Asked again by hand: <Tab> in Normal mode jumps, <Tab> in Insert mode applies.
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  plugin.next_edit()
  H.wait_until(function()
    return nextedit.get(0)
  end, "the edit asked for by hand")
  H.type("<Tab>")
  H.result.after_jump = {
    cursor = vim.api.nvim_win_get_cursor(0),
    lines = H.lines(),
    visible = nextedit.visible(0),
    mode = vim.api.nvim_get_mode().mode,
  }
  H.type("i")
  H.type("<Tab>")
  H.wait_until(function()
    return H.lines()[2] ~= original[2]
  end, "the edit applied")
  H.result.lines = H.lines()
  H.result.cursor = vim.api.nvim_win_get_cursor(0)
  H.result.mode = vim.api.nvim_get_mode().mode
  H.type("<Esc>")
  H.result.stats = stats_where(function(s)
    return (s.next_edits.outcomes.accepted or 0) >= 1
  end, "the accept in copilot/stats")
  -- Added lines are drawn as virtual lines above the line they go before.
  nextedit.show(0, {
    text = "z = 1\ny = 2\n",
    textDocument = { uri = vim.uri_from_bufnr(0), version = util.version(vim.api.nvim_get_current_buf()) },
    range = { start = { line = 2, character = 0 }, ["end"] = { line = 2, character = 0 } },
  }, client)
  H.result.line_marks = marks()
  H.result.line_dismissed = nextedit.dismiss(0)
  -- New text of several lines inside a line: the lines as they will read, below it.
  nextedit.show(0, {
    text = "a\nb",
    textDocument = { uri = vim.uri_from_bufnr(0), version = util.version(vim.api.nvim_get_current_buf()) },
    range = { start = { line = 1, character = 11 }, ["end"] = { line = 1, character = 16 } },
  }, client)
  H.result.split_marks = marks()
  nextedit.dismiss(0)
end

-- Ghost text takes <Tab> first: with a next edit and an inline completion both drawn, <Tab>
-- accepts the completion (whose change then removes the next edit, unapplied).
function scenarios.next_edit_ghost_first()
  local nextedit = require("copilot_lsp.nextedit")
  start({ auto_trigger = false, next_edits = { enabled = true, debounce_ms = 5000 } })
  local backend = require(H.result.builtin and "copilot_lsp.builtin" or "copilot_lsp.suggestion")
  local before = H.lines()
  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  H.type("A") -- the end of the line the next edit is on: <Tab> would apply it
  plugin.next_edit()
  H.wait_until(function()
    return nextedit.get(0)
  end, "the next edit")
  plugin.suggest()
  H.wait_until(function()
    return answered() and backend.visible(vim.api.nvim_get_current_buf())
  end, "the ghost text")
  H.result.both = { nextedit = nextedit.visible(0), ghost = suggestion_text() }
  H.type("<Tab>")
  H.wait_until(function()
    return H.lines()[2] ~= before[2]
  end, "the completion accepted")
  H.sleep(50)
  H.result.lines = H.lines()
  H.result.nextedit_after = nextedit.visible(0)
  H.type("<Esc>")
end

-- With automatic requests off, typing asks nothing (0.12's built-in asks on every move in
-- Insert mode unless the plugin holds it back), `:CopilotLsp suggest` asks once, and typing
-- on takes that suggestion down without asking again.
function scenarios.manual_only()
  start({ auto_trigger = false })
  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  H.type("A")
  H.type("x")
  H.type("<BS>")
  H.sleep(800) -- well past the built-in's 200 ms debounce and the plugin's
  H.result.before_suggest = suggestion_text()
  plugin.suggest()
  local full = os.getenv("COPILOT_E2E_EXPECT")
  H.wait_until(function()
    return answered() and suggestion_text() == full
  end, "the suggestion asked for")
  H.type("z")
  H.sleep(800)
  H.result.after_typing = suggestion_text()
  H.result.stats = plugin.stats(2000)
  H.type("<Esc>")
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
