-- Only the :CopilotLsp command; nothing starts until require("copilot_lsp").setup().
if vim.g.loaded_copilot_lsp then
  return
end
vim.g.loaded_copilot_lsp = true

local subcommands = {
  suggest = function()
    require("copilot_lsp").suggest()
  end,
  nextedit = function()
    require("copilot_lsp").next_edit()
  end,
  stats = function()
    print(vim.inspect(require("copilot_lsp").stats()))
  end,
  health = function()
    vim.cmd("checkhealth copilot_lsp")
  end,
}

vim.api.nvim_create_user_command("CopilotLsp", function(args)
  local run = subcommands[args.fargs[1] or "health"]
  if not run then
    vim.notify("CopilotLsp: unknown subcommand " .. args.fargs[1], vim.log.levels.ERROR)
    return
  end
  run()
end, {
  nargs = "?",
  complete = function()
    return vim.tbl_keys(subcommands)
  end,
})
