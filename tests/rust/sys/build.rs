// Lua 5.4 from lua-src's bundled sources and csrc/geo.cpp, both compiled by the cc crate with
// $CC / $CXX: hookcc and hookcc++ under `cargo hookcc`, with the hook options in CFLAGS.
fn main() {
    println!("cargo:rerun-if-changed=csrc/geo.cpp");
    lua_src::Build::new()
        .build(lua_src::Version::Lua54)
        .print_cargo_metadata();
    cc::Build::new().cpp(true).file("csrc/geo.cpp").compile("geo");
}
