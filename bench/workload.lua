-- The Lua workload of bench/bench.py: a mix of what Lua programs spend their time on (calls and
-- recursion, table building and sorting with a Lua comparator, string formatting and pattern
-- matching, method calls through metatables, closures), so that the interpreter's own C
-- functions are called at the rate a real script calls them. Prints one checksum: every
-- variant must print the same.
--   lua workload.lua ROUNDS
local rounds = tonumber(arg and arg[1]) or 1

local function fib(n)
  if n < 2 then return n end
  return fib(n - 1) + fib(n - 2)
end

local Point = {}
Point.__index = Point
function Point.new(x, y) return setmetatable({ x = x, y = y }, Point) end
function Point:add(o) return Point.new(self.x + o.x, self.y + o.y) end

local function counter()
  local n = 0
  return function(k) n = n + k; return n end
end

local sum = 0
for round = 1, rounds do
  sum = sum + fib(18)

  local t = {}
  for i = 1, 1500 do t[i] = (i * 7919 + round) % 1009 end
  table.sort(t, function(a, b) return a > b end)
  sum = sum + t[1] + t[#t]

  local parts = {}
  for i = 1, 400 do parts[#parts + 1] = string.format("%d:%s", i, tostring(i * i)) end
  local s = table.concat(parts, ",")
  local words = 0
  for _ in s:gmatch("%d+") do words = words + 1 end
  local replaced, count = s:gsub("1", "one")
  sum = sum + words + count + #replaced

  local p = Point.new(0, 0)
  for i = 1, 1500 do p = p:add(Point.new(i, -i)) end
  sum = sum + p.x

  local c = counter()
  for i = 1, 2000 do c(i % 7) end
  sum = sum + c(0)

  local map = {}
  for i = 1, 1000 do map["k" .. (i % 257)] = (map["k" .. (i % 257)] or 0) + i end
  for k, v in pairs(map) do sum = sum + #k + v end
end
print(sum)
