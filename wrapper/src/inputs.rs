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
/// left to the linker (false). Every plain link through hookcc asks this of its inputs, so
/// only what answers it is read: headers and symbol tables (a shared library's dynamic ones),
/// not code. LLVM bitcode (`-flto` objects) is not ELF: its string table holds the names as
/// they are, so it is read whole and searched for them.
pub fn calls_trace_hooks(path: &Path) -> bool {
    let Ok(file) = File::open(path) else {
        return false;
    };
    let Ok(meta) = file.metadata() else {
        return false;
    };
    if !meta.is_file() {
        return false;
    }
    let cache = ReadCache::new(file);
    if let Ok(archive) = ArchiveFile::parse(&cache) {
        return archive.members().flatten().any(|member| {
            let (offset, size) = member.file_range();
            !member.is_thin() && range_calls_trace_hooks(cache.range(offset, size))
        });
    }
    range_calls_trace_hooks(cache.range(0, meta.len()))
}

fn range_calls_trace_hooks<'a, R: object::ReadRef<'a>>(data: R) -> bool {
    let is_hook = |s: &object::Symbol<'a, '_, R>| {
        s.is_undefined() && s.name().is_ok_and(|n| TRACE_HOOKS.contains(&n))
    };
    match object::File::parse(data) {
        Ok(object) if object.kind() == object::ObjectKind::Dynamic => {
            object.dynamic_symbols().any(|s| is_hook(&s))
        }
        Ok(object) => object.symbols().any(|s| is_hook(&s)),
        Err(_) => data
            .len()
            .and_then(|len| data.read_bytes_at(0, len))
            .is_ok_and(bitcode_names_trace_hooks),
    }
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
