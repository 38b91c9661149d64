-- vim.lsp.Config for `vim.lsp.enable("copilot_lsp")` (Neovim 0.11+). setup() extends it
-- with your options; without setup() this starts `copilot-lsp --stdio` from $PATH.
---@type vim.lsp.Config
return require("copilot_lsp").lsp_config()
