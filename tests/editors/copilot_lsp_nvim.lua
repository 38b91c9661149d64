-- copilotlsp-nvim/copilot-lsp (vendored in third_party/copilot-lsp-nvim), unchanged, against
-- our server: its `copilot_ls` config with our command (vim.lsp.config/vim.lsp.enable, as its
-- README says), its debounced NES request while typing, then its README's <Tab> mapping
-- steps: walk to the edit's start, apply it, walk to its end. Driven by
-- tests/editors/test_neovim_nextedit.py. Environment: COPILOT_E2E_OUT, COPILOT_E2E_FILE,
-- COPILOT_E2E_SERVER, COPILOT_E2E_THIRD_PARTY (the vendored plugin's folder).
local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h")
local plugin_tests = vim.fs.joinpath(here, "..", "..", "editor-extensions", "neovim", "tests")
local H = dofile(vim.fs.joinpath(plugin_tests, "harness.lua"))

H.result.nvim = tostring(vim.version())

H.run(function()
  vim.opt.rtp:prepend(os.getenv("COPILOT_E2E_THIRD_PARTY"))
  vim.cmd.runtime("plugin/copilot-lsp.lua")
  vim.g.copilot_nes_debounce = 50
  vim.lsp.config("copilot_ls", { cmd = vim.json.decode(os.getenv("COPILOT_E2E_SERVER")) })
  vim.lsp.enable("copilot_ls")
  vim.cmd.edit(os.getenv("COPILOT_E2E_FILE"))
  local bufnr = vim.api.nvim_get_current_buf()
  local client = H.wait_until(function()
    return vim.lsp.get_clients({ bufnr = bufnr, name = "copilot_ls" })[1]
  end, "the copilot_ls client to attach")
  H.wait_until(function()
    return client.initialized
  end, "initialization")
  H.result.encoding = client.offset_encoding
  local ns = vim.api.nvim_create_namespace("copilotlsp.nes")
  -- Rename the parameter; the plugin asks for the next edit after its debounce.
  vim.api.nvim_win_set_cursor(0, { 1, 10 })
  H.type("cwcount")
  local state = H.wait_until(function()
    return vim.b[bufnr].nes_state
  end, "copilot-lsp.nvim's next edit (vim.b.nes_state)")
  H.result.state = { text = state.text, newText = state.newText, range = state.range }
  H.result.marks = vim.tbl_map(function(m)
    local d = m[4]
    return {
      row = m[2],
      col = m[3],
      end_row = d.end_row,
      end_col = d.end_col,
      hl_group = d.hl_group,
      virt_text = d.virt_text,
      virt_lines = d.virt_lines,
    }
  end, vim.api.nvim_buf_get_extmarks(bufnr, ns, 0, -1, { details = true }))
  H.type("<Esc>")
  -- Its README's <Tab>: walk to the start of the edit, then apply it and walk to its end.
  local nes = require("copilot-lsp.nes")
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  H.result.walked = nes.walk_cursor_start_edit()
  H.wait_until(function()
    return vim.api.nvim_win_get_cursor(0)[1] == 2
  end, "the cursor on the edit's line")
  H.result.cursor_at_start = vim.api.nvim_win_get_cursor(0)
  H.result.walked_again = nes.walk_cursor_start_edit()
  H.result.applied = nes.apply_pending_nes() and nes.walk_cursor_end_edit()
  H.wait_until(function()
    return H.lines()[2] ~= "    return x * factor"
  end, "the edit applied")
  H.sleep(50)
  H.result.lines = H.lines()
  H.result.state_after = vim.b[bufnr].nes_state ~= nil
  -- The accept reached the server: its copilot/stats (the change applied the offered edit).
  H.result.stats = H.wait_until(function()
    local response = client:request_sync("copilot/stats", {}, 2000, bufnr)
    local stats = response and response.result
    return stats and (stats.next_edits.outcomes.accepted or 0) >= 1 and stats
  end, "the accept in copilot/stats")
end)
