//! What a link's inputs need from hookcc: whether they call the trace runtime's hooks.

use std::fs::File;
use std::path::Path;

use object::read::archive::ArchiveFile;
use object::read::ReadCache;
use object::{Object, ObjectSymbol};

/// The hooks `--trace` puts in every function: a link input that references them needs the
/// trace runtime.
const TRACE_HOOKS: [&str; 2] = ["__hookcc_enter", "__hookcc_exit"];

/// True if the object, archive or shared library at `path` has an undefined reference to the
/// trace hooks (in an archive: any member). A file that cannot be read or is none of those is
/// left to the linker (false). LLVM bitcode (`-flto` objects) is not ELF: its string table
/// holds the names as they are, so it is searched for them.
pub fn calls_trace_hooks(path: &Path) -> bool {
    let Ok(file) = File::open(path) else {
        return false;
    };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return false;
    }
    let cache = ReadCache::new(file);
    if let Ok(archive) = ArchiveFile::parse(&cache) {
        return archive.members().flatten().any(|member| {
            member
                .data(&cache)
                .is_ok_and(|data| object_calls_trace_hooks(data))
        });
    }
    match object::File::parse(&cache) {
        Ok(object) => elf_calls_trace_hooks(&object),
        Err(_) => std::fs::read(path).is_ok_and(|data| bitcode_names_trace_hooks(&data)),
    }
}

fn object_calls_trace_hooks(data: &[u8]) -> bool {
    match object::File::parse(data) {
        Ok(object) => elf_calls_trace_hooks(&object),
        Err(_) => bitcode_names_trace_hooks(data),
    }
}

fn elf_calls_trace_hooks<'data, R: object::ReadRef<'data>>(
    object: &object::File<'data, R>,
) -> bool {
    object
        .symbols()
        .chain(object.dynamic_symbols())
        .any(|s| s.is_undefined() && s.name().is_ok_and(|n| TRACE_HOOKS.contains(&n)))
}

/// LLVM bitcode (`BC\xC0\xDE`, or the wrapper header `0x0B17C0DE`) naming a trace hook.
fn bitcode_names_trace_hooks(data: &[u8]) -> bool {
    let bitcode = data.starts_with(b"BC\xC0\xDE") || data.starts_with(&[0xDE, 0xC0, 0x17, 0x0B]);
    bitcode
        && TRACE_HOOKS
            .iter()
            .any(|hook| memchr::memmem::find(data, hook.as_bytes()).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreadable_and_foreign_inputs_call_nothing() {
        assert!(!calls_trace_hooks(Path::new("/nonexistent/lib.a")));
        assert!(!calls_trace_hooks(Path::new("/dev/null")));
        assert!(!calls_trace_hooks(Path::new(env!("CARGO_MANIFEST_DIR"))));
    }

    #[test]
    fn bitcode_is_searched_for_the_hook_names() {
        let mut module = b"BC\xC0\xDE....".to_vec();
        assert!(!bitcode_names_trace_hooks(&module));
        module.extend_from_slice(b"main__hookcc_enterfoo");
        assert!(bitcode_names_trace_hooks(&module));
        assert!(!bitcode_names_trace_hooks(b"text __hookcc_enter"));
    }
}
