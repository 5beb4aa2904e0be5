// Compiles csrc/crc.c with $CC (hookcc under `cargo hookcc`, which also puts the hook options
// in CFLAGS) into a static library linked into the program.
fn main() {
    println!("cargo:rerun-if-changed=csrc/crc.c");
    cc::Build::new().file("csrc/crc.c").compile("crc");
}
