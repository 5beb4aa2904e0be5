//! Function names for traced addresses, from the ELF symbol tables of the traced
//! executable and its shared libraries (the MODULE chunks say which file holds which
//! address range and at what load bias).

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use object::{Architecture, Object, ObjectSymbol, SymbolKind};

use crate::input::format::{Header, Module};
use crate::input::records::FunctionRecords;

/// Names addresses. Implemented by [`Symbolizer`] (ELF files) and by a plain
/// `HashMap<u64, String>` (tests, or names from elsewhere).
pub trait Resolve {
    /// The function whose entry point (or body) is `address`, or `None` if unknown.
    fn resolve(&mut self, address: u64) -> Option<String>;

    /// Where the symbol naming `address` comes from, to tell apart functions that share a
    /// name ([`function_labels`]); `None` where not known.
    fn origin(&mut self, _address: u64) -> Option<SymbolOrigin> {
        None
    }

    /// Warnings gathered so far (drained).
    fn take_warnings(&mut self) -> Vec<String> {
        Vec::new()
    }

    /// The run-time address of the function `address` names, for the outputs that show one:
    /// its record's function where the native trace's hooks passed a record
    /// ([`FunctionRecords`]), else `address`.
    fn entry_point(&mut self, address: u64) -> u64 {
        address
    }
}

/// Where a function symbol comes from: what tells apart two functions of one name (`static`
/// functions of different source files).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SymbolOrigin {
    /// The ELF file the symbol is in.
    pub module: PathBuf,
    /// The source file a local symbol belongs to: the `STT_FILE` symbol before it in
    /// `.symtab` (the compiler writes one per translation unit, before that unit's locals).
    pub file: Option<String>,
    /// The symbol's address in its ELF file, as `nm` shows it.
    pub symbol_address: u64,
}

/// Names every address of `addresses` with `names` (hex where it names none) and tells apart
/// different functions that share a name, as `static` functions of different files do (zstd
/// has `MEM_readLE64` four times): `name (file.c)` where the files differ (the file's last path
/// component unless another file has that too), `name@0xADDR` (the symbol's address in its ELF
/// file, as `nm` shows it) where they do not or are unknown. Names that do not collide are
/// unchanged. Returns the labels and how many addresses no symbol names.
pub fn function_labels(
    addresses: impl IntoIterator<Item = u64>,
    names: &mut dyn Resolve,
) -> (HashMap<u64, String>, u64) {
    let mut unknown = 0;
    let mut labels = HashMap::new();
    let mut by_name: HashMap<String, Vec<u64>> = HashMap::new();
    for address in addresses {
        if labels.contains_key(&address) {
            continue;
        }
        match names.resolve(address) {
            Some(name) => {
                by_name.entry(name.clone()).or_default().push(address);
                labels.insert(address, name);
            }
            None => {
                unknown += 1;
                labels.insert(address, hex_name(address));
            }
        }
    }
    for (name, addresses) in by_name {
        if addresses.len() < 2 {
            continue;
        }
        let origins: Vec<Option<SymbolOrigin>> =
            addresses.iter().map(|&a| names.origin(a)).collect();
        let distinct: HashSet<&SymbolOrigin> = origins.iter().flatten().collect();
        if distinct.len() < 2 && origins.iter().all(Option::is_some) {
            continue; // several addresses in one function: one name is right
        }
        // A file names a function if no other function of this name is in a file so named.
        let mut files: HashMap<&str, HashSet<&SymbolOrigin>> = HashMap::new();
        for origin in origins.iter().flatten() {
            if let Some(file) = &origin.file {
                files.entry(file.as_str()).or_default().insert(origin);
            }
        }
        // Shown by its last component (`helper (util.c)`) unless another file has that too.
        let base = |file: &str| file.rsplit('/').next().unwrap_or(file).to_string();
        let mut bases: HashMap<String, usize> = HashMap::new();
        for file in files.keys() {
            *bases.entry(base(file)).or_default() += 1;
        }
        let shown = |file: &str| {
            if bases[&base(file)] == 1 {
                base(file)
            } else {
                file.to_string()
            }
        };
        for (&address, origin) in addresses.iter().zip(&origins) {
            let label = match origin {
                Some(SymbolOrigin {
                    file: Some(file), ..
                }) if files[file.as_str()].len() == 1 => format!("{name} ({})", shown(file)),
                Some(origin) => format!("{name}@{}", hex_name(origin.symbol_address)),
                None => format!("{name}@{}", hex_name(address)),
            };
            labels.insert(address, label);
        }
    }
    (labels, unknown)
}

impl Resolve for HashMap<u64, String> {
    fn resolve(&mut self, address: u64) -> Option<String> {
        self.get(&address).cloned()
    }
}

/// Names nothing: every address is shown as hex.
pub struct NoSymbols;

impl Resolve for NoSymbols {
    fn resolve(&mut self, _address: u64) -> Option<String> {
        None
    }
}

/// Why symbolization cannot start.
#[derive(Debug, thiserror::Error)]
pub enum SymbolError {
    // The underlying errors are part of the message, not `source()`, so that printing the
    // chain does not repeat them.
    #[error("{}: cannot read: {error}", path.display())]
    ReadFile { path: PathBuf, error: io::Error },
    #[error("{}: not an ELF file: {error}", path.display())]
    NotElf { path: PathBuf, error: object::Error },
    #[error("the trace does not name its executable (no EXE chunk); give it with --exe")]
    NoExecutable,
    /// The executable could not be read (the error names its path).
    #[error("{error} ({})", if *.from_option { "the executable given with --exe" } else { "the traced executable, as recorded in the trace; give its current path with --exe" })]
    Executable {
        error: Box<SymbolError>,
        from_option: bool,
    },
}

/// Opens a file named by a trace (its EXE and MODULE chunks) for reading, if and only if it
/// is a regular file. A trace is untrusted input: opening a FIFO it names would block
/// hookprof for ever (it did: `hookprof report` hung on a trace whose EXE chunk named one),
/// and opening a device can have effects of its own (a tape rewinds, a watchdog arms). So
/// the path is checked with `stat` first and nothing else is opened; the open itself is
/// non-blocking and without a controlling terminal, and `fstat` checks again what was
/// opened, in case the path changed in between.
pub fn open_regular_file(path: &Path) -> io::Result<File> {
    let not_regular = |meta: &std::fs::Metadata| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("is {}, not a regular file: not opened", file_kind(meta)),
        )
    };
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    Ok(file)
}

/// What a file that is not a regular file is, for [`open_regular_file`]'s error.
fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if meta.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// Renders an unknown address.
/// The name of a function address no symbol names, in the TI dialect's reports (the call
/// list and profile CSVs, the Dynamic Call Graph), as the seeds' tools print it.
pub const UNKNOWN: &str = "UNKNOWN";

pub fn hex_name(address: u64) -> String {
    format!("0x{address:x}")
}

/// Demangles a C++ (Itanium) or Rust symbol name; other names are returned unchanged.
///
/// C++ names keep their parameters so that overloads stay distinct but drop the return type
/// of template instances (`add<int>(int, int)`, `Shape::area() const`). Rust names drop the
/// hash (`hookprof::analysis::model::merge`).
pub fn demangle(name: &str) -> String {
    if name.starts_with("_R") || (name.starts_with("_ZN") && has_rust_hash(name)) {
        if let Ok(d) = rustc_demangle::try_demangle(name) {
            return format!("{d:#}");
        }
    }
    if name.starts_with("_Z") {
        if let Ok(symbol) = cpp_demangle::Symbol::new(name) {
            let options = cpp_demangle::DemangleOptions::new().no_return_type();
            if let Ok(s) = symbol.demangle_with_options(&options) {
                return s;
            }
        }
        if let Some(s) = demangle_with_llvm_cxxfilt(name) {
            return s;
        }
    }
    if let Ok(d) = rustc_demangle::try_demangle(name) {
        return format!("{d:#}");
    }
    name.to_string()
}

/// cpp_demangle does not know every mangling clang-19 emits (C++20's `Tn` template parameter
/// declarations in libstdc++'s `std::pair` and `std::tuple`, for one). LLVM's own demangler
/// does: ask the `llvm-cxxfilt` that comes with clang, and remember. One `llvm-cxxfilt` runs
/// for the whole hookprof process and is asked a name a line: such names are not rare in
/// C++ (libstdc++'s containers have dozens), and a process for each of them made symbol
/// names the larger part of a report's time (issue 26: 1.3 s instead of 0.04 s).
fn demangle_with_llvm_cxxfilt(name: &str) -> Option<String> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    struct State {
        cache: HashMap<String, Option<String>>,
        /// `None` once it cannot be started or stopped answering.
        filter: Option<CxxFilt>,
        started: bool,
    }
    static STATE: OnceLock<Mutex<State>> = OnceLock::new();
    let mut state = STATE
        .get_or_init(|| {
            Mutex::new(State {
                cache: HashMap::new(),
                filter: None,
                started: false,
            })
        })
        .lock()
        .ok()?;
    if let Some(hit) = state.cache.get(name) {
        return hit.clone();
    }
    if !state.started {
        state.started = true;
        state.filter = CxxFilt::start();
    }
    let text = state.filter.as_mut()?.ask(name);
    if text.is_none() {
        // It failed or is too slow: names stay mangled from here on.
        state.filter = None;
    }
    let result = text.filter(|t| !t.is_empty() && t != name);
    state.cache.insert(name.to_string(), result.clone());
    result
}

/// An `llvm-cxxfilt` reading names from its standard input, one a line, and answering each
/// with a line.
struct CxxFilt {
    child: std::process::Child,
    input: std::process::ChildStdin,
    output: io::BufReader<std::process::ChildStdout>,
}

impl CxxFilt {
    /// The first llvm-cxxfilt that starts decides (clang-19's where it is installed): a name
    /// it cannot demangle is not handed to whatever other LLVM the machine happens to have.
    fn start() -> Option<CxxFilt> {
        use std::process::{Command, Stdio};
        let mut child = ["llvm-cxxfilt-19", "llvm-cxxfilt"]
            .iter()
            .find_map(|tool| {
                Command::new(tool)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::null())
                    .spawn()
                    .ok()
            })?;
        let input = child.stdin.take()?;
        let output = io::BufReader::new(child.stdout.take()?);
        Some(CxxFilt {
            child,
            input,
            output,
        })
    }

    /// The line it answers for `name`; `None` if it fails or takes over two seconds (an
    /// llvm-cxxfilt that buffered its answers would otherwise block hookprof for ever).
    fn ask(&mut self, name: &str) -> Option<String> {
        use std::io::{BufRead, Write};
        if name.contains(['\n', '\r', ' ', '\t']) {
            // It demangles each word of a line: such a name is not one.
            return None;
        }
        writeln!(self.input, "{name}").ok()?;
        self.input.flush().ok()?;
        if self.output.buffer().is_empty() && !readable_within(self.output.get_ref(), 2000) {
            let _ = self.child.kill();
            return None;
        }
        let mut line = String::new();
        match self.output.read_line(&mut line) {
            Ok(n) if n > 0 => Some(line.trim_end().to_string()),
            _ => None,
        }
    }
}

/// True if `source` has something to read (or its end) within `millis` milliseconds.
#[cfg(unix)]
fn readable_within(source: &impl std::os::unix::io::AsRawFd, millis: i32) -> bool {
    let mut poll = libc::pollfd {
        fd: source.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    loop {
        // SAFETY: one pollfd, valid for the call, for a descriptor `source` keeps open.
        let r = unsafe { libc::poll(&mut poll, 1, millis) };
        if r >= 0 {
            return r > 0;
        }
        if io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return false;
        }
    }
}

#[cfg(not(unix))]
fn readable_within<T>(_source: &T, _millis: i32) -> bool {
    true
}

/// Legacy Rust mangling ends in `17h<16 hex digits>E` (before any `.llvm.` suffix).
fn has_rust_hash(name: &str) -> bool {
    // The hash ends the mangled name, possibly followed by a suffix LLVM adds (`.llvm.1234`).
    // Legacy paths contain `..` themselves (`_ZN46_$LT$calls..Square$u20$as$u20$…`), so the
    // hash is looked for before every `.` and at the end, not only before the first `.`.
    let bytes = name.as_bytes();
    (0..bytes.len())
        .filter(|&i| bytes[i] == b'E' && (i + 1 == bytes.len() || bytes[i + 1] == b'.'))
        .any(|i| {
            i >= 19
                && &bytes[i - 19..i - 16] == b"17h"
                && bytes[i - 16..i].iter().all(u8::is_ascii_hexdigit)
        })
}

#[derive(Clone, Debug)]
struct Sym {
    address: u64,
    size: u64,
    name: String,
    /// A local symbol's source file (the `STT_FILE` symbol before it).
    file: Option<std::sync::Arc<str>>,
    /// Lower is preferred when several symbols share an address.
    rank: u8,
    /// The function this symbol is a part of: its own address, or for an outlined hooked
    /// clone (`NAME.hookcc`, docs/recording.md, "Outlined hooks") the address of `NAME`,
    /// whose hooks it holds and whose name it is given.
    function: u64,
}

/// The suffix of the outlined hooked clone the pass makes of a function (its body with the
/// hooks, tail-called while the function's switch is on).
const OUTLINED_SUFFIX: &str = ".hookcc";

/// The function symbols of one ELF file, sorted by address.
#[derive(Clone, Debug, Default)]
pub struct ElfSymbols {
    symtab: Vec<Sym>,
    dynsym: Vec<Sym>,
    /// Clears the Thumb bit on 32-bit Arm, where function addresses have bit 0 set.
    code_mask: u64,
    /// The native trace's records, which its hooks pass instead of the functions' addresses.
    records: FunctionRecords,
}

/// A symbol found for an address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymbolHit<'a> {
    /// The raw (mangled) name.
    pub name: &'a str,
    /// The address is the symbol's start (as an entry point traced by the hooks should be).
    pub at_start: bool,
    /// The symbol's address.
    pub address: u64,
    /// A local symbol's source file, from the symbol table's `STT_FILE` symbols.
    pub file: Option<&'a str>,
}

impl ElfSymbols {
    /// Reads the function symbols of the ELF file at `path`.
    pub fn load(path: &Path) -> Result<ElfSymbols, SymbolError> {
        let map = map_file(path)?;
        ElfSymbols::parse(&map).map_err(|error| SymbolError::NotElf {
            path: path.to_path_buf(),
            error,
        })
    }

    /// Only the functions' records of the ELF file at `path` ([`FunctionRecords`]), for the
    /// readers that need no symbol (source lines, gmon.out); `None` where it cannot be read or
    /// is not ELF.
    pub fn load_records(path: &Path) -> Option<FunctionRecords> {
        let map = map_file(path).ok()?;
        let file = object::File::parse(&*map).ok()?;
        Some(FunctionRecords::read(&file, false))
    }

    /// Reads the function symbols of an ELF image in memory.
    pub fn parse(data: &[u8]) -> Result<ElfSymbols, object::Error> {
        // Only the `elf` reader of `object` is compiled in, so anything else is rejected
        // here ("Unknown file magic").
        let file = object::File::parse(data)?;
        let code_mask = if file.architecture() == Architecture::Arm {
            !1
        } else {
            !0
        };
        let collect = |symbols: &mut dyn Iterator<Item = object::Symbol<'_, '_>>| {
            // Symbol table order: each translation unit's STT_FILE symbol, then its locals;
            // globals come after all locals and belong to no file.
            let mut file: Option<std::sync::Arc<str>> = None;
            let mut out: Vec<Sym> = symbols
                .filter_map(|s| {
                    if s.kind() == SymbolKind::File {
                        file = s
                            .name_bytes()
                            .ok()
                            .filter(|n| !n.is_empty())
                            .map(|n| String::from_utf8_lossy(n).into());
                        return None;
                    }
                    if !(s.kind() == SymbolKind::Text && s.is_definition()) {
                        return None;
                    }
                    let name = String::from_utf8_lossy(s.name_bytes().ok()?).into_owned();
                    if name.is_empty() {
                        return None;
                    }
                    let rank = if s.is_weak() {
                        1
                    } else if s.is_global() {
                        0
                    } else {
                        2
                    };
                    Some(Sym {
                        address: s.address() & code_mask,
                        size: s.size(),
                        name,
                        file: if s.is_local() { file.clone() } else { None },
                        rank,
                        function: s.address() & code_mask,
                    })
                })
                .collect();
            // One symbol per address: the global one, then weak, then local; then by name
            // so the choice does not depend on symbol table order.
            out.sort_by(|a, b| {
                (a.address, a.rank, &a.name, std::cmp::Reverse(a.size)).cmp(&(
                    b.address,
                    b.rank,
                    &b.name,
                    std::cmp::Reverse(b.size),
                ))
            });
            out.dedup_by_key(|s| s.address);
            // An outlined clone is its function: a sample in it is the function's.
            let clones: Vec<usize> = (0..out.len())
                .filter(|&i| out[i].name.ends_with(OUTLINED_SUFFIX))
                .collect();
            if !clones.is_empty() {
                let by_name: HashMap<&str, u64> =
                    out.iter().map(|s| (s.name.as_str(), s.address)).collect();
                let origins: Vec<(usize, Option<u64>)> = clones
                    .into_iter()
                    .map(|i| {
                        let base = &out[i].name[..out[i].name.len() - OUTLINED_SUFFIX.len()];
                        (i, by_name.get(base).copied())
                    })
                    .collect();
                for (i, origin) in origins {
                    if let Some(origin) = origin {
                        let base = out[i].name.len() - OUTLINED_SUFFIX.len();
                        out[i].name.truncate(base);
                        out[i].function = origin;
                    }
                }
            }
            out
        };
        let symtab = collect(&mut file.symbols());
        // Stripped: the names the records hold are then the only ones of most functions.
        let records = FunctionRecords::read(&file, symtab.is_empty());
        Ok(ElfSymbols {
            symtab,
            dynsym: collect(&mut file.dynamic_symbols()),
            code_mask,
            records,
        })
    }

    /// Whether a function named `name` is defined (in .symtab or .dynsym).
    pub fn defines(&self, name: &str) -> bool {
        self.symtab
            .iter()
            .chain(&self.dynsym)
            .any(|s| s.name == name)
    }

    /// No function in the symbol table (`strip`, `-s`): only the dynamic symbols name
    /// functions, which in an executable are few (the ones it exports).
    pub fn is_stripped(&self) -> bool {
        self.symtab.is_empty()
    }

    /// Number of function symbols (.symtab + .dynsym).
    pub fn len(&self) -> usize {
        self.symtab.len() + self.dynsym.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The function containing `address` (an ELF virtual address), or whose record is at
    /// `address` (what the native trace's hooks pass, [`FunctionRecords`]): .symtab first
    /// (static functions included), then .dynsym (stripped libraries), then in a stripped
    /// file the name the record holds.
    pub fn lookup(&self, address: u64) -> Option<SymbolHit<'_>> {
        let function = self.function(address) & self.code_mask;
        Self::find(&self.symtab, function)
            .or_else(|| Self::find(&self.dynsym, function))
            .or_else(|| {
                // A stripped file: the record's own name.
                self.records.name(address).map(|name| SymbolHit {
                    name,
                    at_start: true,
                    address: function,
                    file: None,
                })
            })
    }

    /// The address of the function that `address` names: its record's function where it is a
    /// record, else itself.
    pub fn function(&self, address: u64) -> u64 {
        self.records.function_of(address).unwrap_or(address)
    }

    /// The file's functions' records.
    pub fn records(&self) -> &FunctionRecords {
        &self.records
    }

    fn find(symbols: &[Sym], address: u64) -> Option<SymbolHit<'_>> {
        let index = symbols
            .partition_point(|s| s.address <= address)
            .checked_sub(1)?;
        let sym = &symbols[index];
        let offset = address - sym.address;
        // A symbol of unknown size (0) only names its own address.
        if offset == 0 || offset < sym.size {
            Some(SymbolHit {
                name: &sym.name,
                at_start: offset == 0,
                address: sym.function,
                file: sym.file.as_deref(),
            })
        } else {
            None
        }
    }
}

/// The file at `path` mapped read-only, for a parser that copies out what it keeps before the
/// map is dropped. If another process truncates the file meanwhile we may fault, as any reader
/// of a file being rewritten can; the parsers treat the bytes as untrusted.
fn map_file(path: &Path) -> Result<memmap2::Mmap, SymbolError> {
    let read_error = |error| SymbolError::ReadFile {
        path: path.to_path_buf(),
        error,
    };
    let file = open_regular_file(path).map_err(read_error)?;
    // SAFETY: read-only and private; see above.
    unsafe { memmap2::Mmap::map(&file) }.map_err(read_error)
}

enum ElfState {
    NotLoaded,
    Loaded(ElfSymbols),
    Failed,
}

struct ModuleEntry {
    module: Module,
    path: PathBuf,
    is_exe: bool,
    elf: ElfState,
    /// Distinct addresses looked up in this module; named; named at a symbol start.
    seen: u64,
    named: u64,
    at_start: u64,
}

/// What naming a trace's addresses needs of it: its header, the executable its EXE chunk
/// names and its MODULE chunks. The replay's `TraceSummary` tells them
/// ([`crate::analysis::replay`], above this module: it implements this trait).
pub trait TraceModules {
    fn header(&self) -> &Header;
    fn exe(&self) -> &Option<PathBuf>;
    fn modules(&self) -> &[Module];
}

/// Names addresses with the ELF files of a trace's modules. Shared libraries are read
/// when first needed; the executable is read up front so a missing one is an error.
pub struct Symbolizer {
    mask: u64,
    modules: Vec<ModuleEntry>,
    cache: HashMap<u64, Option<String>>,
    warnings: Vec<String>,
    exe_from_option: bool,
    outside_modules: u64,
}

impl Symbolizer {
    /// Prepares symbolization of `summary`'s modules; `exe` overrides the executable path
    /// from the EXE chunk (`--exe`).
    pub fn new(summary: &dyn TraceModules, exe: Option<&Path>) -> Result<Symbolizer, SymbolError> {
        let exe_path = exe.map(Path::to_path_buf).or_else(|| summary.exe().clone());
        let mut warnings = Vec::new();
        if summary.modules().is_empty() {
            warnings.push(
                "the trace has no MODULE chunks, so no address can be mapped to a file; \
                 functions are shown as addresses"
                    .to_string(),
            );
        }
        let mut modules = Vec::new();
        for module in summary.modules() {
            let is_exe = module.path.is_none()
                || (summary.exe().is_some() && module.path.as_ref() == summary.exe().as_ref());
            let path = if is_exe {
                exe_path.clone().ok_or(SymbolError::NoExecutable)?
            } else {
                module.path.clone().unwrap_or_default()
            };
            let elf = if is_exe {
                ElfState::Loaded(ElfSymbols::load(&path).map_err(|error| {
                    SymbolError::Executable {
                        error: Box::new(error),
                        from_option: exe.is_some(),
                    }
                })?)
            } else {
                ElfState::NotLoaded
            };
            modules.push(ModuleEntry {
                module: module.clone(),
                path,
                is_exe,
                elf,
                seen: 0,
                named: 0,
                at_start: 0,
            });
        }
        if let Some(exe) = exe {
            if !summary.modules().is_empty() && !modules.iter().any(|m| m.is_exe) {
                warnings.push(format!(
                    "--exe {}: the trace has no MODULE chunk for its executable, so --exe is not used",
                    exe.display()
                ));
            }
        }
        Ok(Symbolizer {
            mask: summary.header().address_mask(),
            modules,
            cache: HashMap::new(),
            warnings,
            exe_from_option: exe.is_some(),
            outside_modules: 0,
        })
    }

    fn lookup(&mut self, address: u64) -> Option<String> {
        let address = address & self.mask;
        let Some(entry) = self.modules.iter_mut().find(|m| m.module.contains(address)) else {
            self.outside_modules += 1;
            return None;
        };
        entry.seen += 1;
        if let ElfState::NotLoaded = entry.elf {
            entry.elf = match ElfSymbols::load(&entry.path) {
                Ok(symbols) => ElfState::Loaded(symbols),
                Err(err) => {
                    self.warnings.push(format!(
                        "{err}; functions in this library are shown as addresses"
                    ));
                    ElfState::Failed
                }
            };
        }
        let ElfState::Loaded(symbols) = &entry.elf else {
            return None;
        };
        let hit = symbols.lookup(address.wrapping_sub(entry.module.bias) & self.mask)?;
        entry.named += 1;
        if hit.at_start {
            entry.at_start += 1;
        }
        Some(demangle(hit.name))
    }

    /// Warnings about the executable not matching the trace, computed from the lookups so
    /// far: hooks pass entry points, so every traced address should be a symbol's start.
    fn build_check(&mut self) {
        for entry in self.modules.iter_mut().filter(|m| m.is_exe && m.seen > 0) {
            let source = if self.exe_from_option {
                format!("--exe {}", entry.path.display())
            } else {
                entry.path.display().to_string()
            };
            let advice = if self.exe_from_option {
                "it is probably not the build that produced this trace"
            } else {
                "was it rebuilt after the trace was taken? Give the traced build with --exe"
            };
            let stripped = matches!(&entry.elf, ElfState::Loaded(s) if s.is_stripped());
            if stripped && entry.at_start < entry.seen {
                // Not a mismatch: a stripped executable names only the few functions it
                // exports, so the rest cannot be named whatever the build.
                self.warnings.push(format!(
                    "{source} is stripped (no symbol table): {} of the {} traced functions in it \
                     have no name and are shown as addresses. Build it without `-s` or `strip` \
                     and run it again, or give an unstripped copy of this same build with \
                     --exe (the file before `strip`)",
                    entry.seen - entry.at_start,
                    entry.seen
                ));
            } else if entry.at_start == 0 {
                self.warnings.push(format!(
                    "{source}: none of the {} traced addresses in the executable is the start of a function symbol; {advice}",
                    entry.seen
                ));
            } else if entry.at_start < entry.seen {
                self.warnings.push(format!(
                    "{source}: {} of the {} traced addresses in the executable are not the start of a function symbol; {advice}",
                    entry.seen - entry.at_start,
                    entry.seen
                ));
            }
            // Report once.
            entry.seen = 0;
        }
        if self.outside_modules > 0 {
            self.warnings.push(format!(
                "{} traced addresses lie in no module of the trace and are shown as hex",
                self.outside_modules
            ));
            self.outside_modules = 0;
        }
    }
}

impl Resolve for Symbolizer {
    fn resolve(&mut self, address: u64) -> Option<String> {
        if let Some(name) = self.cache.get(&address) {
            return name.clone();
        }
        let name = self.lookup(address);
        self.cache.insert(address, name.clone());
        name
    }

    fn origin(&mut self, address: u64) -> Option<SymbolOrigin> {
        let address = address & self.mask;
        let entry = self.modules.iter().find(|m| m.module.contains(address))?;
        let ElfState::Loaded(symbols) = &entry.elf else {
            return None;
        };
        let hit = symbols.lookup(address.wrapping_sub(entry.module.bias) & self.mask)?;
        Some(SymbolOrigin {
            module: entry.path.clone(),
            file: hit.file.map(str::to_string),
            symbol_address: hit.address,
        })
    }

    fn take_warnings(&mut self) -> Vec<String> {
        self.build_check();
        std::mem::take(&mut self.warnings)
    }

    fn entry_point(&mut self, address: u64) -> u64 {
        let masked = address & self.mask;
        let Some(entry) = self.modules.iter().find(|m| m.module.contains(masked)) else {
            return address;
        };
        let ElfState::Loaded(symbols) = &entry.elf else {
            return address;
        };
        symbols
            .records()
            .entry_point(address, entry.module.bias, self.mask)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demangles_cpp_with_parameters_and_without_return_type() {
        assert_eq!(demangle("_ZNK5Shape4areaEv"), "Shape::area() const");
        assert_eq!(demangle("_Z3addIiET_S0_S0_"), "add<int>(int, int)");
        assert_eq!(demangle("_Z3addii"), "add(int, int)");
        assert_eq!(demangle("_Z3adddd"), "add(double, double)");
        assert_eq!(demangle("_ZN2ns3fooEv"), "ns::foo()");
    }

    #[test]
    fn demangles_rust_without_hash() {
        assert_eq!(
            demangle("_ZN8hookprof5model5merge17h0123456789abcdefE"),
            "hookprof::model::merge"
        );
        assert_eq!(demangle("_RNvCs1234_7mycrate3foo"), "mycrate::foo");
        // Legacy: escaped paths contain `..`; LLVM may append `.llvm.N`.
        assert_eq!(
            demangle(
                "_ZN46_$LT$calls..Square$u20$as$u20$calls..Shape$GT$4area17h760787aec6e8f8c0E"
            ),
            "<calls::Square as calls::Shape>::area"
        );
        assert_eq!(
            demangle("_ZN5calls3fib17hcc949d5921e43e97E.llvm.1234"),
            "calls::fib"
        );
    }

    #[test]
    fn plain_names_are_unchanged() {
        assert_eq!(demangle("main"), "main");
        assert_eq!(demangle("_Zgarbage"), "_Zgarbage");
        assert_eq!(demangle(""), "");
    }

    /// Names and origins by address, for [`function_labels`].
    struct Fake(HashMap<u64, (&'static str, Option<SymbolOrigin>)>);

    impl Resolve for Fake {
        fn resolve(&mut self, address: u64) -> Option<String> {
            self.0.get(&address).map(|(n, _)| n.to_string())
        }
        fn origin(&mut self, address: u64) -> Option<SymbolOrigin> {
            self.0.get(&address).and_then(|(_, o)| o.clone())
        }
    }

    fn origin(file: Option<&str>, symbol_address: u64) -> Option<SymbolOrigin> {
        Some(SymbolOrigin {
            module: PathBuf::from("/bin/prog"),
            file: file.map(str::to_string),
            symbol_address,
        })
    }

    #[test]
    fn colliding_names_get_their_file_else_their_address() {
        let mut names = Fake(HashMap::from([
            (0x1000, ("helper", origin(Some("src/a/util.c"), 0x100))),
            (0x2000, ("helper", origin(Some("src/b/util.c"), 0x200))),
            (0x3000, ("helper", origin(Some("one.c"), 0x300))),
            (0x4000, ("main", origin(None, 0x400))),
            (0x5000, ("twin", origin(Some("t.c"), 0x500))),
            (0x6000, ("twin", origin(Some("t.c"), 0x600))),
            (0x7000, ("twin", None)),
            // Two addresses in one function: one name.
            (0x8000, ("loop", origin(Some("l.c"), 0x800))),
            (0x8010, ("loop", origin(Some("l.c"), 0x800))),
        ]));
        let (labels, unknown) = function_labels(
            [
                0x1000, 0x2000, 0x3000, 0x4000, 0x5000, 0x6000, 0x7000, 0x8000, 0x8010, 0x9000,
            ],
            &mut names,
        );
        assert_eq!(unknown, 1);
        let label = |a: u64| labels[&a].as_str();
        // The same last component: the whole file name.
        assert_eq!(label(0x1000), "helper (src/a/util.c)");
        assert_eq!(label(0x2000), "helper (src/b/util.c)");
        assert_eq!(label(0x3000), "helper (one.c)");
        assert_eq!(label(0x4000), "main");
        // One file for two functions, or none known: the symbol's address, else the traced one.
        assert_eq!(label(0x5000), "twin@0x500");
        assert_eq!(label(0x6000), "twin@0x600");
        assert_eq!(label(0x7000), "twin@0x7000");
        assert_eq!((label(0x8000), label(0x8010)), ("loop", "loop"));
        assert_eq!(label(0x9000), "0x9000");
    }

    #[test]
    fn hex_names() {
        assert_eq!(hex_name(0x401000), "0x401000");
    }
}
