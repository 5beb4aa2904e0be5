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

/// The demangled name of a Rust symbol without its hash (`calls::fib`,
/// `calls::largest::<i32>`, `calls::quiet::{closure#0}`); None for other symbols.
pub fn rust_demangled(symbol: &str) -> Option<String> {
    if !is_rust_symbol(symbol.as_bytes()) {
        return None;
    }
    rustc_demangle::try_demangle(symbol)
        .ok()
        .map(|d| format!("{d:#}"))
}

/// The demangled name a `--hook-include`/`--hook-exclude` glob is matched against besides the
/// symbol: Rust's without hash (as [`rust_demangled`]), C++'s as hookprof prints it, without
/// return type (`geo::square(int)`, `geo::Grid::cell(int, int) const`); None for C.
pub fn demangled(symbol: &str) -> Option<String> {
    if let Some(rust) = rust_demangled(symbol) {
        return Some(rust);
    }
    if !symbol.starts_with("_Z") {
        return None;
    }
    let options = cpp_demangle::DemangleOptions::new().no_return_type();
    cpp_demangle::Symbol::new(symbol)
        .ok()?
        .demangle_with_options(&options)
        .ok()
}

/// `path` without trailing generic arguments: `calls::largest::<i32>` → `calls::largest`.
pub fn without_generic_args(path: &str) -> &str {
    if !path.ends_with('>') {
        return path;
    }
    let mut depth = 0usize;
    for (i, c) in path.char_indices().rev() {
        match c {
            '>' => depth += 1,
            '<' => {
                depth -= 1;
                if depth == 0 {
                    return path[..i].strip_suffix("::").unwrap_or(path);
                }
            }
            _ => {}
        }
    }
    path
}

/// True if `name` (demangled) is a closure defined in the function whose path is `parent`
/// (generic arguments removed), at any depth: `calls::quiet::{closure#0}`,
/// `calls::quiet::{closure#0}::{closure#1}`, `calls::quiet::{closure#0}::<i32>`.
pub fn is_closure_of(name: &str, parent: &str) -> bool {
    name.strip_prefix(parent)
        .is_some_and(|rest| rest.starts_with("::{closure"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demangled_names_for_filters() {
        assert_eq!(
            demangled("_ZN3geo6squareEi").as_deref(),
            Some("geo::square(int)")
        );
        assert_eq!(
            demangled("_ZNK3geo4Grid4cellEii").as_deref(),
            Some("geo::Grid::cell(int, int) const")
        );
        assert_eq!(
            demangled("_RNvCs2jRRAoNlOou_5calls7descend").as_deref(),
            Some("calls::descend")
        );
        assert_eq!(demangled("crc_byte"), None);
        assert_eq!(demangled("_Znot_valid"), None);
    }

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

    #[test]
    fn closures_and_generic_instances_of_a_path() {
        assert_eq!(
            without_generic_args("calls::largest::<i32>"),
            "calls::largest"
        );
        assert_eq!(
            without_generic_args("calls::f::<alloc::vec::Vec<u8>>"),
            "calls::f"
        );
        assert_eq!(without_generic_args("calls::fib"), "calls::fib");
        assert!(is_closure_of("calls::quiet::{closure#0}", "calls::quiet"));
        assert!(is_closure_of(
            "calls::quiet::{closure#0}::<i32>",
            "calls::quiet"
        ));
        assert!(!is_closure_of("calls::quieter", "calls::quiet"));
        assert_eq!(
            rust_demangled("_RNvCs2jRRAoNlOou_5calls7descend").as_deref(),
            Some("calls::descend")
        );
        assert_eq!(rust_demangled("crc32"), None);
    }
}
