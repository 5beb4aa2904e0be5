//! TI's `--entry_hook=on_entry --entry_parm=name --exit_hook=on_exit --exit_parm=name` on Rust:
//! the hooks print `> name` and `< name` on stderr, with names as Rust paths. By construction:
//! `ti::parse::number` ×3, `ti::parse::digit` ×5 (1 + 2 + 2 digits), `ti::main` ×1.
//!
//! The hooks call only libc (not instrumented): any Rust function they called, even core's
//! inline helpers compiled into this crate, would get hooks and call them again.

use std::ffi::{c_char, c_int, c_void};

extern "C" {
    fn write(fd: c_int, buf: *const c_void, count: usize) -> isize;
    fn strlen(s: *const c_char) -> usize;
}

static ENTER: [u8; 2] = *b"> ";
static LEAVE: [u8; 2] = *b"< ";
static NEWLINE: [u8; 1] = *b"\n";

// The hooks repeat their three writes rather than share a helper: a helper would be a Rust
// function with hooks of its own.
#[no_mangle]
pub extern "C" fn on_entry(name: *const c_char) {
    // SAFETY: the pass passes the function's name, a NUL-terminated constant; the buffers are
    // statics of the lengths given.
    unsafe {
        write(2, &ENTER as *const [u8; 2] as *const c_void, 2);
        write(2, name as *const c_void, strlen(name));
        write(2, &NEWLINE as *const [u8; 1] as *const c_void, 1);
    }
}

#[no_mangle]
pub extern "C" fn on_exit(name: *const c_char) {
    // SAFETY: as for on_entry.
    unsafe {
        write(2, &LEAVE as *const [u8; 2] as *const c_void, 2);
        write(2, name as *const c_void, strlen(name));
        write(2, &NEWLINE as *const [u8; 1] as *const c_void, 1);
    }
}

mod parse {
    /// The value of an ASCII digit.
    pub fn digit(b: u8) -> u32 {
        (b - b'0') as u32
    }

    /// The value of a decimal number.
    pub fn number(text: &str) -> u32 {
        let mut value = 0;
        for &b in text.as_bytes() {
            value = value * 10 + digit(b);
        }
        value
    }
}

fn main() {
    let total: u32 = ["7", "42", "19"].iter().map(|t| parse::number(t)).sum();
    println!("total={total}");
}
