//! Rust calling Lua's C API and a C++ function, for tests/tests/rust.rs. Lua runs a script with
//! integer and string keys only (no table or function used as a key, whose hash is its address),
//! and the test builds Lua with a fixed string-hash seed, so Lua's internal calls are the same
//! in every run and every build: their counts can be compared with callgrind's on a plain build.
use std::ffi::{c_char, c_int, c_void, CStr};

extern "C" {
    fn luaL_newstate() -> *mut c_void;
    fn luaL_loadstring(state: *mut c_void, chunk: *const c_char) -> c_int;
    fn lua_pcallk(
        state: *mut c_void,
        nargs: c_int,
        nresults: c_int,
        msgh: c_int,
        ctx: isize,
        k: *const c_void,
    ) -> c_int;
    fn lua_tointegerx(state: *mut c_void, index: c_int, isnum: *mut c_int) -> i64;
    fn lua_close(state: *mut c_void);
    fn geo_sum(n: c_int) -> c_int;
}

const SCRIPT: &CStr = c"
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local t, names = {}, {}
for i = 1, 200 do t[i] = fib(i % 12) end
for i = 1, 50 do names['k' .. i] = i * 2 end
local s = 0
for i = 1, #t do s = s + t[i] end
for i = 1, 50 do s = s + names['k' .. i] + #('k' .. i) end
return s
";

fn run_lua() -> i64 {
    unsafe {
        let state = luaL_newstate();
        assert!(!state.is_null(), "luaL_newstate failed");
        assert_eq!(luaL_loadstring(state, SCRIPT.as_ptr()), 0, "the script does not load");
        assert_eq!(lua_pcallk(state, 0, 1, 0, 0, std::ptr::null()), 0, "the script failed");
        let result = lua_tointegerx(state, -1, std::ptr::null_mut());
        lua_close(state);
        result
    }
}

fn main() {
    println!("lua: {}", run_lua());
    println!("geo: {}", unsafe { geo_sum(5) });
}
