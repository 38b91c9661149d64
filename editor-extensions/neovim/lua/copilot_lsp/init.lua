-- copilot_lsp: ghost-text completions from a self-hosted copilot-lsp server.
local config = require("copilot_lsp.config")
local util = require("copilot_lsp.util")

local M = {}

M.setup_done = false

local function on_attach(client, bufnr)
  if client.name ~= util.name then
    return
  end
  if config.use_builtin() then
    require("copilot_lsp.builtin").attach(bufnr, client)
  else
    require("copilot_lsp.suggestion").attach(bufnr)
  end
  require("copilot_lsp.keymaps").attach(bufnr)
  require("copilot_lsp.nextedit").attach(bufnr, client)
end

local function on_detach(client, bufnr)
  if client.name ~= util.name then
    return
  end
  require("copilot_lsp.keymaps").detach(bufnr)
  require("copilot_lsp.nextedit").detach(bufnr)
  if config.use_builtin() then
    require("copilot_lsp.builtin").detach(bufnr)
  else
    require("copilot_lsp.suggestion").detach(bufnr)
  end
end

--- The client configuration (also what lsp/copilot_lsp.lua returns, without setup()).
function M.lsp_config()
  return {
    name = util.name,
    cmd = config.command(),
    filetypes = config.options.filetypes,
    init_options = config.init_options(),
    handlers = {
      ["copilot/partialCompletion"] = function(_, params, ctx)
        local client = vim.lsp.get_client_by_id(ctx.client_id)
        if client and params then
          require("copilot_lsp.suggestion").on_partial(params, client)
        end
      end,
    },
  }
end

--- Configure and start. Options are validated; a bad one is reported and nothing starts.
---@param opts copilot_lsp.Config|nil
function M.setup(opts)
  if vim.fn.has("nvim-0.10") == 0 then
    vim.notify("copilot_lsp needs Neovim 0.10 or newer", vim.log.levels.ERROR)
    return false
  end
  local ok, err = pcall(config.set, opts)
  if ok then
    ok, err = pcall(config.use_builtin)
  end
  if not ok then
    vim.notify("copilot_lsp: invalid option: " .. tostring(err), vim.log.levels.ERROR)
    return false
  end
  if M.setup_done then
    vim.notify("copilot_lsp: setup() called again; the new options apply to new buffers", vim.log.levels.WARN)
  end
  M.setup_done = true
  require("copilot_lsp.ghost").setup_highlight()
  require("copilot_lsp.nextedit").setup_highlight()
  local group = vim.api.nvim_create_augroup("copilot_lsp", { clear = true })
  vim.api.nvim_create_autocmd("LspAttach", {
    group = group,
    callback = function(args)
      local client = vim.lsp.get_client_by_id(args.data.client_id)
      if client then
        on_attach(client, args.buf)
      end
    end,
  })
  vim.api.nvim_create_autocmd("LspDetach", {
    group = group,
    callback = function(args)
      local client = vim.lsp.get_client_by_id(args.data.client_id)
      if client then
        on_detach(client, args.buf)
      end
    end,
  })
  vim.api.nvim_create_autocmd("ColorScheme", {
    group = group,
    callback = function()
      require("copilot_lsp.ghost").setup_highlight()
      require("copilot_lsp.nextedit").setup_highlight()
    end,
  })
  local lsp_config = M.lsp_config()
  if vim.lsp.config and vim.lsp.enable then
    vim.lsp.config(util.name, lsp_config)
    vim.lsp.enable(util.name)
  else -- 0.10: start the client per buffer
    vim.api.nvim_create_autocmd("FileType", {
      group = group,
      callback = function(args)
        local filetypes = config.options.filetypes
        if vim.bo[args.buf].buftype ~= "" or (filetypes and not vim.tbl_contains(filetypes, args.match)) then
          return
        end
        vim.lsp.start(vim.tbl_extend("force", lsp_config, { root_dir = vim.fn.getcwd() }), { bufnr = args.buf })
      end,
    })
  end
  return true
end

--- Ask for a suggestion at the cursor now (manual trigger).
function M.suggest()
  if config.use_builtin() then
    return require("copilot_lsp.builtin").request_now(vim.api.nvim_get_current_buf(), 0)
  end
  require("copilot_lsp.suggestion").request(nil, 1)
end

--- Ask for a next edit at the cursor now (manual trigger; also after a dismissal).
function M.next_edit()
  return require("copilot_lsp.nextedit").request(vim.api.nvim_get_current_buf(), true)
end

--- The server's `copilot/stats` (synchronous; nil without a running client).
function M.stats(timeout_ms)
  local client = util.client()
  if not client then
    return nil
  end
  local response
  if vim.fn.has("nvim-0.11") == 1 then
    response = client:request_sync("copilot/stats", {}, timeout_ms or 2000)
  else
    response = client.request_sync("copilot/stats", {}, timeout_ms or 2000)
  end
  return response and response.result or nil
end

return M
