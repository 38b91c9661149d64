-- Small helpers that hide differences between Neovim 0.10, 0.11 and 0.12.
local M = {}

M.name = "copilot_lsp"

--- The running copilot-lsp client attached to `bufnr` (or any, with bufnr nil).
---@return vim.lsp.Client|nil
function M.client(bufnr)
  local clients = vim.lsp.get_clients({ name = M.name, bufnr = bufnr })
  return clients[1]
end

--- client:request on 0.11+, client.request on 0.10.
function M.request(client, method, params, handler, bufnr)
  if vim.fn.has("nvim-0.11") == 1 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

function M.notify(client, method, params)
  if vim.fn.has("nvim-0.11") == 1 then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

function M.cancel(client, id)
  if vim.fn.has("nvim-0.11") == 1 then
    return client:cancel_request(id)
  end
  return client.cancel_request(id)
end

--- The LSP version Neovim last sent for the buffer.
function M.version(bufnr)
  return vim.lsp.util.buf_versions[bufnr]
end

--- Byte column of an LSP `character` on `line`, in the client's position encoding.
function M.byte_col(line, character, encoding)
  if encoding == "utf-8" then
    return math.min(character, #line)
  end
  local ok, index = pcall(vim.str_byteindex, line, encoding, character, false)
  if ok then
    return index
  end
  ok, index = pcall(vim.str_byteindex, line, character, encoding == "utf-16")
  return ok and index or #line
end

--- The completion id of an item (its accept command's first argument).
function M.item_id(item)
  local command = item and item.command
  return command and command.arguments and command.arguments[1] or nil
end

--- Insert `text` at the cursor (replacing up to byte column `replace_to` on its row) and
--- put the cursor after it.
function M.insert_at_cursor(bufnr, text, replace_to)
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  local lines = vim.split(text, "\n", { plain = true })
  vim.api.nvim_buf_set_text(bufnr, row - 1, col, row - 1, replace_to or col, lines)
  vim.api.nvim_win_set_cursor(0, { row + #lines - 1, (#lines == 1 and col or 0) + #lines[#lines] })
end

--- Characters (not bytes) of a string, as the server counts `acceptedLength`.
function M.chars(text)
  return vim.fn.strchars(text)
end

--- The part of `text` that "accept word" takes: blanks, then a word or a run of symbols.
function M.next_word(text)
  return text:match("^%s*[%w_]+") or text:match("^%s*[^%w_%s]+") or text:match("^%s+") or text
end

--- The part of `text` that "accept line" takes: up to the end of the (first non-empty) line.
function M.next_line(text)
  local first = text:match("^[^\n]*")
  if first ~= "" then
    return first
  end
  return text:match("^\n[^\n]*") or text
end

return M
