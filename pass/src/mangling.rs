//! What a module's symbol names say about its source language (LLVM-free, unit-tested).
//!
//! May import: nothing of this crate.

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

/// The crate a Rust function is defined in, read from its symbol (not from the printed name,
/// where an instance of std's code reads `<alloc::vec::Vec<u8>>::push`, `<u64 as
/// core::fmt::Display>::fmt` or `<[u8]>::len`): for `--hook-exclude-crate`.
///
/// - v0 (`_R…`): the crate root the function's path leads to, through generic arguments
///   (`I`), nested names (`N`) and impl blocks (`M`/`X`: the crate of the impl's own path, where
///   the impl is written, whatever the type or trait), or for a trait's default method (`Y`)
///   the trait's crate. The instantiating crate at the end is the one that *used* the code,
///   and is ignored.
/// - legacy (`_ZN…17h<hash>E`): the first segment of the path; for `<Type as Trait>::f` the
///   impl's crate is the type's or the trait's (the orphan rule): the one that is not std,
///   alloc or core, else the more downstream of those (std, then alloc, then core), else the
///   type's.
///
/// None for other symbols (C, C++) and for names it cannot read.
pub fn rust_defining_crate(symbol: &str) -> Option<String> {
    // A suffix LLVM adds (`.llvm.1234`, `.cold`) is not part of the mangled name.
    let symbol = symbol.split('.').next().unwrap_or(symbol);
    // rustc's unmangled body of the `core::intrinsics::catch_unwind` intrinsic, emitted into
    // each codegen unit that calls it (std's panic::catch_unwind does).
    if symbol == "__rust_try" {
        return Some("core".to_string());
    }
    if let Some(rest) = symbol.strip_prefix("_R") {
        let mut parser = V0 {
            text: rest.as_bytes(),
            at: 0,
            depth: 0,
        };
        // An optional encoding version (decimal) comes first.
        while parser.peek().is_some_and(|b| b.is_ascii_digit()) {
            parser.at += 1;
        }
        return parser.crate_of_path();
    }
    if !is_rust_symbol(symbol.as_bytes()) {
        return None;
    }
    let demangled = rust_demangled(symbol)?;
    legacy_crate(&demangled)
}

/// The sysroot crates, most downstream first.
const SYSROOT_ORDER: &[&str] = &["std", "alloc", "core"];

fn legacy_crate(path: &str) -> Option<String> {
    let Some(inner) = path.strip_prefix('<') else {
        return path.split("::").next().map(String::from);
    };
    // `<Type as Trait>::f`: split at the top-level ` as `.
    let mut depth = 0usize;
    let bytes = inner.as_bytes();
    let mut split = None;
    let mut end = inner.len();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'<' | b'[' | b'(' => depth += 1,
            b'>' | b']' | b')' if depth == 0 => {
                end = i;
                break;
            }
            b'>' | b']' | b')' => depth -= 1,
            b' ' if depth == 0 && inner[i..].starts_with(" as ") && split.is_none() => {
                split = Some(i)
            }
            _ => {}
        }
    }
    let crate_of = |text: &str| -> Option<String> {
        let text = text
            .trim_start_matches(['&', '*'])
            .trim_start_matches("mut ")
            .trim_start_matches("const ")
            .trim_start_matches("dyn ");
        let first = text.split("::").next()?;
        (text.contains("::") && first.chars().all(|c| c == '_' || c.is_alphanumeric()))
            .then(|| first.to_string())
    };
    let Some(split) = split else {
        return crate_of(&inner[..end]);
    };
    let type_crate = crate_of(&inner[..split]);
    let trait_crate = crate_of(&inner[split + 4..end]);
    match (type_crate, trait_crate) {
        (Some(t), Some(r)) => {
            let rank = |c: &str| SYSROOT_ORDER.iter().position(|s| *s == c);
            Some(match (rank(&t), rank(&r)) {
                (None, Some(_)) => t,
                (Some(_), None) => r,
                (Some(a), Some(b)) => {
                    if a <= b {
                        t
                    } else {
                        r
                    }
                }
                (None, None) => t,
            })
        }
        (t, r) => r.or(t),
    }
}

/// A reader of just enough of the v0 grammar (the Rust Symbol Mangling RFC 2603) to follow a
/// path to its crate root and to skip the types it passes on the way.
struct V0<'a> {
    text: &'a [u8],
    at: usize,
    depth: u32,
}

impl V0<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.at += 1;
        Some(b)
    }

    fn eat(&mut self, b: u8) -> bool {
        let found = self.peek() == Some(b);
        if found {
            self.at += 1;
        }
        found
    }

    /// `{0-9a-zA-Z} "_"`: `_` is 0, otherwise the digits' value + 1.
    fn base62(&mut self) -> Option<u64> {
        if self.eat(b'_') {
            return Some(0);
        }
        let mut value: u64 = 0;
        loop {
            let b = self.next()?;
            let digit = match b {
                b'0'..=b'9' => b - b'0',
                b'a'..=b'z' => 10 + b - b'a',
                b'A'..=b'Z' => 36 + b - b'A',
                b'_' => return value.checked_add(1),
                _ => return None,
            };
            value = value.checked_mul(62)?.checked_add(u64::from(digit))?;
        }
    }

    fn disambiguator(&mut self) -> Option<()> {
        if self.eat(b's') {
            self.base62()?;
        }
        Some(())
    }

    /// `[disambiguator] ["u"] decimal ["_"] bytes`: the identifier's text.
    fn identifier(&mut self) -> Option<&[u8]> {
        self.disambiguator()?;
        self.eat(b'u');
        let start = self.at;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
        let len: usize = std::str::from_utf8(&self.text[start..self.at])
            .ok()?
            .parse()
            .ok()?;
        self.eat(b'_');
        let bytes = self.text.get(self.at..self.at.checked_add(len)?)?;
        self.at += len;
        Some(bytes)
    }

    /// Runs `f` at the position a backref (`B<base62>`) points to, then comes back.
    fn at_backref<T>(&mut self, f: impl FnOnce(&mut Self) -> Option<T>) -> Option<T> {
        let target = usize::try_from(self.base62()?).ok()?;
        if target >= self.at || self.depth > 64 {
            return None;
        }
        let saved = self.at;
        self.at = target;
        self.depth += 1;
        let result = f(self);
        self.depth -= 1;
        self.at = saved;
        result
    }

    /// Reads a path and returns the crate its definition belongs to.
    fn crate_of_path(&mut self) -> Option<String> {
        match self.next()? {
            b'C' => {
                let name = self.identifier()?;
                String::from_utf8(name.to_vec()).ok()
            }
            b'N' => {
                self.next()?; // namespace
                let krate = self.crate_of_path()?;
                self.identifier()?;
                Some(krate)
            }
            b'I' => {
                let krate = self.crate_of_path()?;
                while !self.eat(b'E') {
                    self.generic_arg()?;
                }
                Some(krate)
            }
            // `<T>` (M) and `<T as Trait>` (X): where the impl block is.
            b'M' | b'X' => {
                let with_trait = self.text[self.at - 1] == b'X';
                self.disambiguator()?;
                let krate = self.crate_of_path()?;
                self.skip_type()?;
                if with_trait {
                    self.skip_path()?;
                }
                Some(krate)
            }
            // `<T as Trait>` with no impl: a trait's own (default) method.
            b'Y' => {
                self.skip_type()?;
                self.crate_of_path()
            }
            b'B' => self.at_backref(|p| p.crate_of_path()),
            _ => None,
        }
    }

    fn skip_path(&mut self) -> Option<()> {
        self.crate_of_path().map(|_| ())
    }

    fn generic_arg(&mut self) -> Option<()> {
        match self.peek()? {
            b'L' => {
                self.at += 1;
                self.base62().map(|_| ())
            }
            b'K' => {
                self.at += 1;
                self.skip_const()
            }
            _ => self.skip_type(),
        }
    }

    fn skip_const(&mut self) -> Option<()> {
        match self.peek()? {
            b'p' => {
                self.at += 1;
                Some(())
            }
            b'B' => {
                self.at += 1;
                self.at_backref(|p| p.skip_const())
            }
            _ => {
                // <type> <const-data>: ["n"] {hex} "_" for integers, bools and chars.
                self.skip_type()?;
                self.eat(b'n');
                while self.peek()?.is_ascii_hexdigit() {
                    self.at += 1;
                }
                self.eat(b'_').then_some(())
            }
        }
    }

    fn skip_type(&mut self) -> Option<()> {
        let b = self.peek()?;
        match b {
            // Basic types.
            b'a'..=b'z' => {
                self.at += 1;
                Some(())
            }
            b'C' | b'M' | b'X' | b'Y' | b'N' | b'I' => self.skip_path(),
            b'B' => {
                self.at += 1;
                self.at_backref(|p| p.skip_type())
            }
            b'A' => {
                self.at += 1;
                self.skip_type()?;
                self.skip_const()
            }
            b'S' | b'P' | b'O' => {
                self.at += 1;
                self.skip_type()
            }
            b'R' | b'Q' => {
                self.at += 1;
                if self.eat(b'L') {
                    self.base62()?;
                }
                self.skip_type()
            }
            b'T' => {
                self.at += 1;
                while !self.eat(b'E') {
                    self.skip_type()?;
                }
                Some(())
            }
            b'F' => {
                self.at += 1;
                if self.eat(b'G') {
                    self.base62()?;
                }
                self.eat(b'U');
                if self.eat(b'K') && !self.eat(b'C') {
                    self.identifier()?;
                }
                while !self.eat(b'E') {
                    self.skip_type()?;
                }
                self.skip_type()
            }
            b'D' => {
                self.at += 1;
                if self.eat(b'G') {
                    self.base62()?;
                }
                while !self.eat(b'E') {
                    self.skip_path()?;
                    while self.eat(b'p') {
                        self.identifier()?;
                        self.skip_type()?;
                    }
                }
                // The object lifetime.
                self.eat(b'L').then_some(())?;
                self.base62().map(|_| ())
            }
            _ => None,
        }
    }
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

    #[test]
    fn defining_crate_of_v0_symbols() {
        // From a crate `m` compiled by rustc 1.95 with v0 mangling: the instantiating crate at
        // the end (`m`) is not where the code comes from.
        for (symbol, krate) in [
            // <m::Mine as core::fmt::Display>::fmt: the impl is in m.
            (
                "_RNvXCskK7mfDs1mzF_1mNtB2_4MineNtNtCsgEmfK2I1SDS_4core3fmt7Display3fmt",
                "m",
            ),
            // <u8 as m::Greet>::hi, the trait's default method.
            ("_RNvYhNtCskK7mfDs1mzF_1m5Greet2hiB5_", "m"),
            // core::ptr::drop_in_place::<alloc::vec::Vec<u8>>, instantiated in m.
            (
                "_RINvNtCsgEmfK2I1SDS_4core3ptr13drop_in_placeINtNtCslNYArtu3iFV_5alloc3vec3VechEE\
                 CskK7mfDs1mzF_1m",
                "core",
            ),
            // <*const _>::offset::precondition_check (an inherent impl on a pointer).
            (
                "_RNvNvMNtNtCsgEmfK2I1SDS_4core3ptr9const_ptrPp6offset18precondition_check\
                 CskK7mfDs1mzF_1m.llvm.123",
                "core",
            ),
            // <std::thread::local::LocalKey<…>>::with::<…>, with backrefs.
            (
                "_RINvMs2_NtNtCsjrHSEGnQ3l9_3std6thread5localINtB6_8LocalKeyINtNtCsgEmfK2I1SDS_4co\
                 re4cell4CellTyyEEE4withNCNvMNtNtBa_4hash6randomNtB1I_11RandomState3new0B21_ECskK7\
                 mfDs1mzF_1m",
                "std",
            ),
            // A closure of hashbrown's, generic over m's type.
            (
                "_RNCINvMs6_NtCsgvbsrvnw3yD_9hashbrown3rawINtB8_8RawTableTyNtCskK7mfDs1mzF_1m4Mine\
                 EE14reserve_rehashNCINvNtBa_3map11make_hasheryBT_NtNtNtCsjrHSEGnQ3l9_3std4hash6ra\
                 ndom11RandomStateE0E0BV_",
                "hashbrown",
            ),
            ("_RNvCs2jRRAoNlOou_5calls7descend", "calls"),
        ] {
            assert_eq!(
                rust_defining_crate(symbol).as_deref(),
                Some(krate),
                "{symbol}"
            );
        }
        assert_eq!(rust_defining_crate("main"), None);
        assert_eq!(rust_defining_crate("__rust_try").as_deref(), Some("core"));
        assert_eq!(rust_defining_crate("_ZN3geo6squareEi"), None);
        assert_eq!(rust_defining_crate("_RNvX"), None, "truncated");
    }

    #[test]
    fn defining_crate_of_legacy_paths() {
        for (path, krate) in [
            ("calls::fib", "calls"),
            ("core::slice::<impl [T]>::len", "core"),
            (
                "<alloc::vec::Vec<T,A> as core::ops::drop::Drop>::drop",
                "alloc",
            ),
            ("<u64 as core::fmt::Display>::fmt", "core"),
            ("<&T as core::fmt::Debug>::fmt", "core"),
            ("<mycrate::Foo as core::fmt::Debug>::fmt", "mycrate"),
            (
                "<serde_json::read::StrRead as serde_json::read::Read>::peek",
                "serde_json",
            ),
            ("<std::io::Stdout as core::fmt::Write>::write_str", "std"),
        ] {
            assert_eq!(legacy_crate(path).as_deref(), Some(krate), "{path}");
        }
        assert_eq!(
            rust_defining_crate("_ZN5calls7descend17h0123456789abcdefE").as_deref(),
            Some("calls")
        );
    }
}
