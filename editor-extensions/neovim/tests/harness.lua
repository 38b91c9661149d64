-- A tiny async test harness for headless Neovim: steps run in a coroutine that yields to
-- the event loop (so typed keys, LSP messages and timers are processed), results go to a
-- JSON file, and every exit path ends Neovim with :cq (a Lua error must not leave it hanging).
local H = { result = { events = {} } }

local out = assert(os.getenv("COPILOT_E2E_OUT"), "COPILOT_E2E_OUT is not set")
local finished = false

-- COPILOT_E2E_EVENTS (optional): each event is also appended there at once, one JSON line,
-- so that the test driving Neovim can wait for what it has drawn (instead of sleeping).
local events_path = os.getenv("COPILOT_E2E_EVENTS")

function H.log(kind, data)
  local event = { kind = kind, data = data, t = vim.uv.hrtime() / 1e6 }
  table.insert(H.result.events, event)
  if events_path then
    local file = io.open(events_path, "a")
    if file then
      file:write(vim.json.encode(event) .. "\n")
      file:close()
    end
  end
end

function H.finish(err)
  if finished then
    return
  end
  finished = true
  H.result.error = err
  local ok, encoded = pcall(vim.json.encode, H.result)
  local file = io.open(out, "w")
  if file then
    file:write(ok and encoded or vim.json.encode({ error = "cannot encode result: " .. tostring(encoded) }))
    file:close()
  end
  vim.cmd(err and "cq 1" or "cq 0")
end

local co

local function resume(...)
  local ok, err = coroutine.resume(co, ...)
  if not ok then
    H.finish(debug.traceback(co, err))
  end
end

--- Run `fn` as the test body; a watchdog ends Neovim if it never finishes.
function H.run(fn, watchdog_ms)
  co = coroutine.create(function()
    local ok, err = xpcall(fn, debug.traceback)
    H.finish(not ok and tostring(err) or nil)
  end)
  vim.defer_fn(function()
    H.finish("watchdog: the test did not finish within " .. (watchdog_ms or 40000) .. " ms")
  end, watchdog_ms or 40000)
  vim.schedule(resume)
end

--- Yield until `condition()` is truthy; fails after `timeout_ms` (a liveness bound, not a
--- timing assertion). Returns the condition's value.
function H.wait_until(condition, what, timeout_ms)
  local deadline = vim.uv.now() + (timeout_ms or 15000)
  local timer = assert(vim.uv.new_timer())
  timer:start(
    0,
    5,
    vim.schedule_wrap(function()
      if timer:is_closing() then
        return
      end
      local ok, value = pcall(condition)
      if (ok and value) or vim.uv.now() > deadline then
        timer:stop()
        timer:close()
        resume(ok and value or nil, ok and "" or value)
      end
    end)
  )
  local value, problem = coroutine.yield()
  if not value then
    error(("timed out waiting for %s %s"):format(what, problem or ""), 0)
  end
  return value
end

--- Let the event loop run for `ms`.
function H.sleep(ms)
  vim.defer_fn(function()
    resume()
  end, ms)
  coroutine.yield()
end

--- Type `keys` as a user would (through the input queue), then let them be processed.
function H.type(keys)
  vim.api.nvim_input(keys)
  H.sleep(1)
end

function H.lines(bufnr)
  return vim.api.nvim_buf_get_lines(bufnr or 0, 0, -1, false)
end

function H.assert(condition, message)
  if not condition then
    error(message, 2)
  end
end

return H
