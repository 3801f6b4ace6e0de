-- Drives Neovim's built-in LSP client against `bpc lsp` (run headless by tests/lsp.rs):
-- opens a facet, seeds a misspelling in the unsaved buffer, waits for the diagnostic,
-- asks for hover and definition, and writes what it got to $BPC_OUT as JSON.
local root = os.getenv("BPC_ROOT")
local bin = os.getenv("BPC_BIN")
local out = os.getenv("BPC_OUT")
local result = {}

local function finish()
  local f = io.open(out, "w")
  f:write(vim.fn.json_encode(result))
  f:close()
  vim.cmd("qa!")
end

local ok, err = pcall(function()
  vim.cmd("edit " .. root .. "/contexts/_template/facets/platform-docker.yaml")
  local buf = vim.api.nvim_get_current_buf()
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  -- Seed the misspelling in the buffer only (the file on disk stays right).
  for i, line in ipairs(lines) do
    local from = line:find("${cluster.endpoint ??", 1, true)
    if from then
      local fixed = line:sub(1, from - 1) .. "${cluster.endpiont ??" .. line:sub(from + 21)
      vim.api.nvim_buf_set_lines(buf, i - 1, i, false, { fixed })
      result.seeded_line = i - 1
      result.seeded_col = from + 1
      break
    end
  end
  local client = vim.lsp.start_client({
    name = "bpc",
    cmd = { bin, "lsp" },
    root_dir = root,
    init_options = { bpc = { debounceMs = 10 } },
  })
  vim.lsp.buf_attach_client(buf, client)
  local seen = vim.wait(120000, function()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.message:find("endpiont", 1, true) then
        return true
      end
    end
    return false
  end, 50)
  result.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.message:find("endpiont", 1, true) then
      table.insert(result.diagnostics, {
        lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
        message = d.message, severity = d.severity,
      })
    end
  end
  result.waited = seen
  local function at(needle, shift)
    for i, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
      local from = line:find(needle, 1, true)
      if from then
        return { textDocument = { uri = vim.uri_from_bufnr(buf) },
                 position = { line = i - 1, character = from - 1 + shift } }
      end
    end
  end
  local hover = vim.lsp.buf_request_sync(buf, "textDocument/hover", at("network.cidr_block, 10", 9), 60000)
  for _, r in pairs(hover or {}) do
    if r.result then result.hover = r.result.contents.value end
  end
  local def = vim.lsp.buf_request_sync(buf, "textDocument/definition", at("talos.talos_version", 8), 60000)
  for _, r in pairs(def or {}) do
    if r.result and r.result[1] then
      result.definition = { uri = r.result[1].uri, line = r.result[1].range.start.line }
    end
  end
end)
if not ok then
  result.error = tostring(err)
end
finish()
