/* The Lua driver: a minimal `lua SCRIPT [ARGS...]` on the Lua 5.4 C API, since the lua-src crate
 * ships the interpreter's library sources but not lua.c. It starts the variant's runtime if it
 * needs the program's help (variant_init.h), runs the script with the standard libraries and
 * `arg` set as lua.c sets it, and reports a script error on stderr with exit status 1. */
#include <stdio.h>

#include "lauxlib.h"
#include "lua.h"
#include "lualib.h"

#include "variant_init.h"
#include "main_cpu.h"

int main(int argc, char **argv)
{
    main_cpu_start();
    if (argc < 2) {
        fprintf(stderr, "usage: %s SCRIPT [ARGS...]\n", argv[0]);
        return 2;
    }
    /* The Lua driver cannot know its calls in advance: bench.py passes BENCH_CALLS. */
    bench_variant_init(bench_calls(1ull << 24));
    lua_State *L = luaL_newstate();
    if (!L) {
        fprintf(stderr, "%s: cannot create a Lua state\n", argv[0]);
        return 1;
    }
    luaL_openlibs(L);
    lua_createtable(L, argc, 1);
    for (int i = 0; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i - 1);
    }
    lua_setglobal(L, "arg");
    int status = luaL_loadfile(L, argv[1]);
    if (status == LUA_OK) {
        for (int i = 2; i < argc; i++)
            lua_pushstring(L, argv[i]);
        status = lua_pcall(L, argc - 2, 0, 0);
    }
    if (status != LUA_OK) {
        fprintf(stderr, "%s: %s\n", argv[0], lua_tostring(L, -1));
        lua_close(L);
        return 1;
    }
    lua_close(L);
    bench_variant_finish();
    main_cpu_end();
    return 0;
}
