//! Classifying a clang command line.
//!
//! Every argument is looked up in one sorted table, [`CLANG_FLAGS`], whose entries say what a
//! flag *does* to hookcc's decisions (stops before linking, names the target, takes the next
//! argument, …), not how it is spelt. Arguments hookcc does not care about are `PassThrough`:
//! they reach clang unchanged, in order. hookcc's own options are recognised first and removed.

use std::path::Path;

/// What a clang flag means to hookcc.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlagKind {
    /// Reaches clang unchanged, means nothing to hookcc.
    PassThrough,
    /// Like PassThrough, and the following argument is its value (`-I dir`, `-Xlinker x`).
    PassThroughWithValue,
    /// Stops after compiling or assembling: `-c`, `-S`.
    StopBeforeLink,
    /// Preprocessing or checking only: no code generated, nothing linked (`-E`, `-M`,
    /// `-fsyntax-only`).
    NoCodegen,
    /// `-x LANG` / `-xLANG`: the language of the inputs that follow.
    Language,
    /// Selects the target or its ABI; the runtime must be compiled with it too.
    Target,
    /// Like Target, and the next argument is its value (`-target x`, `--sysroot dir`).
    TargetWithValue,
    /// `-shared`: links a shared library (the runtime belongs to the executable).
    Shared,
    /// `-r`: a relocatable link; no runtime either.
    Relocatable,
    /// `-ffreestanding`: no hosted C library; the runtime is built freestanding too.
    Freestanding,
    /// `-isystem DIR`: a system include directory (a bare-metal C library's headers), which a
    /// freestanding runtime is compiled with too.
    SystemInclude,
    /// `-nodefaultlibs`, `-nostdlib`: the link names its libraries itself (rustc's links do),
    /// so clang ignores `-pthread` there and warns that it is unused.
    NoDefaultLibs,
}

/// How a table entry matches an argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Match {
    /// The whole argument.
    Exact,
    /// A prefix; the rest of the argument is the flag's value (`-DX`, `-march=…`).
    Prefix,
}

use FlagKind::*;
use Match::*;

/// The table, sorted by spelling (a test checks it). When several prefix entries match, the
/// longest wins, so `-mllvm` beats `-m`.
pub const CLANG_FLAGS: &[(&str, Match, FlagKind)] = &[
    ("--gcc-toolchain", Prefix, Target),
    ("--sysroot", Exact, TargetWithValue),
    ("--sysroot=", Prefix, Target),
    ("--target=", Prefix, Target),
    ("-B", Prefix, Target),
    ("-D", Exact, PassThroughWithValue),
    ("-E", Exact, NoCodegen),
    ("-I", Exact, PassThroughWithValue),
    ("-L", Exact, PassThroughWithValue),
    ("-M", Exact, NoCodegen),
    ("-MF", Exact, PassThroughWithValue),
    ("-MM", Exact, NoCodegen),
    ("-MQ", Exact, PassThroughWithValue),
    ("-MT", Exact, PassThroughWithValue),
    ("-S", Exact, StopBeforeLink),
    ("-T", Exact, PassThroughWithValue),
    ("-U", Exact, PassThroughWithValue),
    ("-Xassembler", Exact, PassThroughWithValue),
    ("-Xclang", Exact, PassThroughWithValue),
    ("-Xlinker", Exact, PassThroughWithValue),
    ("-Xpreprocessor", Exact, PassThroughWithValue),
    ("-arch", Exact, TargetWithValue),
    ("-c", Exact, StopBeforeLink),
    ("-e", Exact, PassThroughWithValue),
    ("-ffreestanding", Exact, Freestanding),
    ("-fsyntax-only", Exact, NoCodegen),
    ("-idirafter", Exact, PassThroughWithValue),
    ("-imacros", Exact, PassThroughWithValue),
    ("-include", Exact, PassThroughWithValue),
    ("-iprefix", Exact, PassThroughWithValue),
    ("-iquote", Exact, PassThroughWithValue),
    ("-isysroot", Exact, TargetWithValue),
    ("-isystem", Exact, SystemInclude),
    ("-iwithprefix", Exact, PassThroughWithValue),
    ("-m", Prefix, Target),
    ("-mllvm", Exact, PassThroughWithValue),
    ("-nodefaultlibs", Exact, NoDefaultLibs),
    ("-nostdlib", Exact, NoDefaultLibs),
    ("-o", Exact, PassThroughWithValue),
    ("-r", Exact, Relocatable),
    ("-shared", Exact, Shared),
    ("-target", Exact, TargetWithValue),
    ("-u", Exact, PassThroughWithValue),
    ("-x", Exact, Language),
    ("-x", Prefix, Language),
    ("-z", Exact, PassThroughWithValue),
];

/// Looks `arg` up in the table: exact matches first, then the longest matching prefix.
pub fn classify(arg: &str) -> FlagKind {
    if let Some((_, _, kind)) = CLANG_FLAGS
        .iter()
        .find(|(s, m, _)| *m == Exact && *s == arg)
    {
        return *kind;
    }
    CLANG_FLAGS
        .iter()
        .filter(|(s, m, _)| *m == Prefix && arg.starts_with(s) && arg.len() > s.len())
        .max_by_key(|(s, _, _)| s.len())
        .map_or(PassThrough, |(_, _, kind)| *kind)
}

/// What kind of file an input is, by its name (or the `-x` in force).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKind {
    /// Compiled by clang: C, C++, Objective-C, preprocessed sources, LLVM IR.
    Source,
    /// Assembler: assembled, not instrumented.
    Assembly,
    /// Given to the linker: objects, archives, shared libraries, linker scripts.
    Linker,
}

pub fn input_kind(path: &str, language: Option<&str>) -> InputKind {
    if let Some(lang) = language.filter(|l| *l != "none") {
        return if lang.starts_with("assembler") {
            InputKind::Assembly
        } else {
            InputKind::Source
        };
    }
    let ext = Path::new(path)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("");
    match ext {
        "c" | "i" | "cc" | "cp" | "cxx" | "cpp" | "CPP" | "c++" | "C" | "ii" | "m" | "mi"
        | "mm" | "M" | "mii" | "ll" | "bc" => InputKind::Source,
        "s" | "S" | "sx" | "asm" => InputKind::Assembly,
        _ => InputKind::Linker,
    }
}

/// A source input that clang does not preprocess: preprocessed C, C++ or Objective-C
/// (`.i`, `.ii`, `.mi`, `.mii`, `-x cpp-output`, …) or LLVM IR.
fn preprocessed(path: &str, language: Option<&str>) -> bool {
    if let Some(lang) = language.filter(|l| *l != "none") {
        return lang.ends_with("cpp-output") || lang == "ir";
    }
    matches!(
        Path::new(path).extension().and_then(|e| e.to_str()),
        Some("i" | "ii" | "mi" | "mii" | "ll" | "bc")
    )
}

/// What a command line asks clang to do, as far as hookcc cares.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct CommandLine {
    /// Stops before linking (`-c`, `-S`).
    pub stop_before_link: bool,
    /// Generates no code (`-E`, `-M`, `-MM`, `-fsyntax-only`).
    pub no_codegen: bool,
    pub shared: bool,
    pub relocatable: bool,
    /// Inputs clang compiles (and hookcc instruments).
    pub sources: Vec<String>,
    /// Some source is preprocessed first (not a `.i`/`.ii`, IR, or `-x cpp-output` input):
    /// include options then mean something (a distcc server compiles `.i` files only).
    pub preprocesses: bool,
    /// Inputs clang hands to the linker as they are (objects, archives, shared libraries).
    pub link_inputs: Vec<String>,
    /// Everything that selects the target, in order, to compile the runtime the same way.
    pub target_flags: Vec<String>,
    /// Whether any input at all was given (`--version` alone has none).
    pub has_inputs: bool,
    /// Whether a `-x` appears: inputs hookcc appends must then follow `-x none`.
    pub sets_language: bool,
    /// `-ffreestanding` was given.
    pub freestanding: bool,
    /// `-isystem DIR` pairs, in order.
    pub system_includes: Vec<String>,
    /// `-nodefaultlibs` or `-nostdlib`: clang adds no libraries to the link.
    pub no_default_libs: bool,
}

impl CommandLine {
    /// Classifies an argument list (response files already expanded).
    pub fn parse(args: &[String]) -> CommandLine {
        let mut cl = CommandLine::default();
        let mut language: Option<String> = None;
        let mut i = 0;
        while i < args.len() {
            let arg = &args[i];
            i += 1;
            if !arg.starts_with('-') || arg == "-" {
                cl.has_inputs = true;
                match input_kind(arg, language.as_deref()) {
                    InputKind::Source => {
                        cl.preprocesses |= !preprocessed(arg, language.as_deref());
                        cl.sources.push(arg.clone());
                    }
                    InputKind::Linker => cl.link_inputs.push(arg.clone()),
                    InputKind::Assembly => {}
                }
                continue;
            }
            let value = |i: &mut usize| -> Option<String> {
                let v = args.get(*i).cloned();
                *i += 1;
                v
            };
            match classify(arg) {
                PassThrough => {}
                PassThroughWithValue => {
                    value(&mut i);
                }
                StopBeforeLink => cl.stop_before_link = true,
                NoCodegen => cl.no_codegen = true,
                Shared => cl.shared = true,
                Relocatable => cl.relocatable = true,
                Language => {
                    cl.sets_language = true;
                    language = if arg == "-x" {
                        value(&mut i)
                    } else {
                        Some(arg[2..].to_string())
                    };
                }
                Freestanding => cl.freestanding = true,
                NoDefaultLibs => cl.no_default_libs = true,
                SystemInclude => {
                    cl.system_includes.push(arg.clone());
                    if let Some(v) = value(&mut i) {
                        cl.system_includes.push(v);
                    }
                }
                Target => cl.target_flags.push(arg.clone()),
                TargetWithValue => {
                    cl.target_flags.push(arg.clone());
                    if let Some(v) = value(&mut i) {
                        cl.target_flags.push(v);
                    }
                }
            }
        }
        cl
    }

    /// True if clang will run the linker.
    pub fn links(&self) -> bool {
        self.has_inputs && !self.stop_before_link && !self.no_codegen
    }

    /// The target triple given with `--target=T` or `-target T` (the last one wins), if any.
    pub fn target_triple(&self) -> Option<&str> {
        let mut triple = None;
        let mut flags = self.target_flags.iter();
        while let Some(flag) = flags.next() {
            if let Some(t) = flag.strip_prefix("--target=") {
                triple = Some(t);
            } else if flag == "-target" {
                triple = flags.next().map(String::as_str).or(triple);
            }
        }
        triple
    }

    /// True for a bare-metal build: `-ffreestanding`, or a target whose OS is `none`
    /// (`armv5te-none-eabi`, `thumbv7m-none-eabi`, `riscv32-none-elf`) or that names only an
    /// object format (`riscv32-unknown-elf`, `arm-eabi`). Such a program has no OS to give
    /// the runtime threads, files or clocks: hookcc compiles the runtime freestanding.
    pub fn bare_metal(&self) -> bool {
        self.freestanding
            || self.target_triple().is_some_and(|t| {
                let parts: Vec<&str> = t.split('-').collect();
                parts.len() >= 2
                    && (parts[1..].contains(&"none")
                        || (matches!(parts.last(), Some(&("elf" | "eabi" | "eabihf")))
                            && !parts.contains(&"linux")))
            })
    }

    /// True if clang will generate code from sources (where the pass plugin runs).
    pub fn compiles(&self) -> bool {
        !self.sources.is_empty() && !self.no_codegen
    }
}

/// Expands `@file` arguments the way clang does (GNU quoting: whitespace separates, quotes and
/// backslashes escape), recursively. A `@file` that cannot be read stays as it is; clang will
/// say what is wrong with it.
pub fn expand_response_files(args: &[String]) -> Vec<String> {
    fn expand(args: &[String], depth: usize, out: &mut Vec<String>) {
        for arg in args {
            match arg.strip_prefix('@').filter(|_| depth < 16) {
                Some(path) => match std::fs::read_to_string(path) {
                    Ok(text) => expand(&split_gnu(&text), depth + 1, out),
                    Err(_) => out.push(arg.clone()),
                },
                None => out.push(arg.clone()),
            }
        }
    }
    let mut out = Vec::new();
    expand(args, 0, &mut out);
    out
}

/// The text of a response file that clang reads back as `args` (GNU quoting: every
/// character that [`split_gnu`] would take as a separator, a quote or an escape is escaped).
pub fn quote_gnu(args: &[String]) -> String {
    let mut text = String::new();
    for arg in args {
        if arg.is_empty() {
            text.push_str("''");
        }
        for c in arg.chars() {
            if c.is_whitespace() || matches!(c, '\\' | '\'' | '"') {
                text.push('\\');
            }
            text.push(c);
        }
        text.push('\n');
    }
    text
}

fn split_gnu(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (_, '\\') => {
                if let Some(next) = chars.next() {
                    word.push(next);
                }
                in_word = true;
            }
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn table_is_sorted_and_unique() {
        for pair in CLANG_FLAGS.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            assert!(
                (a.0, a.1 as u8) < (b.0, b.1 as u8),
                "CLANG_FLAGS not sorted at {:?} / {:?}",
                a.0,
                b.0
            );
        }
    }

    #[test]
    fn longest_prefix_wins() {
        assert_eq!(classify("-mllvm"), PassThroughWithValue);
        assert_eq!(classify("-march=armv8-a"), Target);
        assert_eq!(classify("-m32"), Target);
        assert_eq!(classify("-xc++"), Language);
        assert_eq!(classify("-DFOO"), PassThrough);
        assert_eq!(classify("-Wall"), PassThrough);
        assert_eq!(classify("--target=aarch64-linux-gnu"), Target);
    }

    #[test]
    fn compile_only() {
        let cl = CommandLine::parse(&strings(&["-O2", "-c", "a.c", "-o", "a.o", "-I", "inc"]));
        assert!(cl.compiles() && !cl.links());
        assert_eq!(cl.sources, ["a.c"]);
    }

    #[test]
    fn compile_and_link_several_sources_with_target() {
        let cl = CommandLine::parse(&strings(&[
            "--target=aarch64-linux-gnu",
            "a.c",
            "b.cpp",
            "lib.a",
            "-o",
            "prog",
            "-target",
            "x",
        ]));
        assert!(cl.compiles() && cl.links());
        assert_eq!(cl.sources, ["a.c", "b.cpp"]);
        assert_eq!(
            cl.target_flags,
            ["--target=aarch64-linux-gnu", "-target", "x"]
        );
    }

    #[test]
    fn link_only_and_preprocess_only() {
        let link = CommandLine::parse(&strings(&["a.o", "b.o", "-o", "p", "-lm"]));
        assert!(link.links() && !link.compiles());
        let pre = CommandLine::parse(&strings(&["-E", "a.c"]));
        assert!(!pre.links() && !pre.compiles());
        let version = CommandLine::parse(&strings(&["--version"]));
        assert!(!version.links());
    }

    #[test]
    fn value_of_a_flag_is_not_an_input() {
        let cl = CommandLine::parse(&strings(&["-c", "-o", "x.c", "-MF", "d.c", "real.c"]));
        assert_eq!(cl.sources, ["real.c"]);
    }

    #[test]
    fn language_flag_changes_input_kind() {
        let cl = CommandLine::parse(&strings(&["-x", "c", "prog.txt", "-x", "none", "y.o"]));
        assert_eq!(cl.sources, ["prog.txt"]);
    }

    #[test]
    fn bare_metal_targets() {
        let bare = |args: &[&str]| CommandLine::parse(&strings(args)).bare_metal();
        assert!(bare(&[
            "--target=armv5te-none-eabi",
            "-mcpu=arm926ej-s",
            "a.c"
        ]));
        assert!(bare(&["-target", "thumbv7m-none-eabi", "a.c"]));
        assert!(bare(&["--target=riscv32-unknown-elf", "a.c"]));
        assert!(bare(&["-ffreestanding", "a.c"]));
        assert!(!bare(&["--target=aarch64-linux-gnu", "a.c"]));
        assert!(!bare(&["--target=arm-linux-gnueabihf", "a.c"]));
        assert!(!bare(&["a.c"]));
        let cl = CommandLine::parse(&strings(&[
            "-isystem",
            "/usr/lib/picolibc/arm-none-eabi/include",
            "-c",
            "a.c",
        ]));
        assert_eq!(
            cl.system_includes,
            ["-isystem", "/usr/lib/picolibc/arm-none-eabi/include"]
        );
        assert_eq!(cl.sources, ["a.c"]);
    }

    #[test]
    fn quoted_arguments_split_back_as_they_were() {
        let args: Vec<String> = [
            "-DX=\"a b\"",
            "",
            "it's",
            "back\\slash",
            "tab\there",
            "plain",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(split_gnu(&quote_gnu(&args)), args);
    }

    #[test]
    fn response_file_quoting() {
        assert_eq!(
            split_gnu("-DA=\"x y\" 'b c'  d\\ e\n"),
            ["-DA=x y", "b c", "d e"]
        );
    }
}
