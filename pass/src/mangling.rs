//! What a module's symbol names say about its source language (LLVM-free, unit-tested).

/// The personality function a landing pad added to a module needs, judged from the names of
/// its functions: Rust's for a rustc module (v0 `_R…` names, or legacy `_ZN…17h<hash>E`),
/// C++'s for a module with other Itanium (`_Z…`) names, none for C.
pub fn personality_for_names<'a>(
    names: impl IntoIterator<Item = &'a [u8]>,
) -> Option<&'static str> {
    let mut cxx = false;
    for name in names {
        if is_rust_symbol(name) {
            // rustc emits the same reference in every crate that unwinds; std defines it.
            return Some("rust_eh_personality");
        }
        cxx |= name.starts_with(b"_Z");
    }
    cxx.then_some("__gxx_personality_v0")
}

/// A symbol rustc mangled: v0 (`_R`) or legacy (`_ZN` … `17h` + 16 hex digits + `E`).
pub fn is_rust_symbol(name: &[u8]) -> bool {
    if name.starts_with(b"_R") {
        return true;
    }
    name.starts_with(b"_ZN")
        && name.len() > 20
        && name.ends_with(b"E")
        && name[name.len() - 20..name.len() - 17] == *b"17h"
        && name[name.len() - 17..name.len() - 1]
            .iter()
            .all(u8::is_ascii_hexdigit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_cxx_and_c_modules() {
        let rust_v0: &[&[u8]] = &[b"main", b"_RNvCs2jRRAoNlOou_5calls7descend"];
        assert_eq!(
            personality_for_names(rust_v0.iter().copied()),
            Some("rust_eh_personality")
        );
        let legacy: &[&[u8]] = &[b"_ZN5calls7descend17h0123456789abcdefE"];
        assert_eq!(
            personality_for_names(legacy.iter().copied()),
            Some("rust_eh_personality")
        );
        let cxx: &[&[u8]] = &[b"main", b"_ZN5Shape4areaEv"];
        assert_eq!(
            personality_for_names(cxx.iter().copied()),
            Some("__gxx_personality_v0")
        );
        let c: &[&[u8]] = &[b"main", b"fib"];
        assert_eq!(personality_for_names(c.iter().copied()), None);
    }
}
