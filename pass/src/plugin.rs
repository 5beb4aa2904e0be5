//! The plugin's `extern "C"` entry points: `llvmGetPassPluginInfo` (what LLVM looks up when it
//! loads the plugin), and `hookcc_instrument_module` / `hookcc_free_error` (what the C++ shim,
//! shim/shim.cpp, calls for each module). Here a `RawConfig` from the shim becomes a
//! [`Config`], the module is handed to [`instrument_module`], and a panic becomes an error
//! message the shim reports as a clang diagnostic.
//!
//! May import: config and instrument (the top of the crate's imports: nothing imports this
//! module). The LLVM-C helpers the pass uses on IR are in [`crate::ffi`].

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use inkwell::llvm_sys;
use inkwell::module::Module;
use llvm_sys::prelude::LLVMModuleRef;

use crate::config::{Config, NameFilter, Outline};
use crate::instrument::{instrument_module, Phase};

/// Mirrors `llvm::PassPluginLibraryInfo` (llvm/Passes/PassPlugin.h; llvm/Plugins/PassPlugin.h
/// from LLVM 22, which added the pre-codegen callback). It is returned by value, so its size
/// must be the selected LLVM's.
#[repr(C)]
pub struct PassPluginLibraryInfo {
    api_version: u32,
    plugin_name: *const c_char,
    plugin_version: *const c_char,
    register_pass_builder_callbacks: *const c_void,
    #[cfg(feature = "llvm22")]
    pre_codegen_callback: *const c_void,
}

/// Mirrors `RawConfig` in shim/shim.cpp.
#[repr(C)]
pub struct RawConfig {
    entry_hook: *const c_char,
    exit_hook: *const c_char,
    entry_parm: *const c_char,
    exit_parm: *const c_char,
    after_inlining: c_uint,
    default_off: c_uint,
    skip_inline: c_uint,
    /// Newline-separated globs (`-hookcc-include` / `-hookcc-exclude`).
    include: *const c_char,
    exclude: *const c_char,
    /// `-hookcc-min-size`: 0 for none.
    min_size: c_uint,
    /// Newline-separated crate names (`-hookcc-exclude-crate`).
    exclude_crates: *const c_char,
    /// `-hookcc-outline`: auto, leaf, all, none or a number.
    outline: *const c_char,
}

extern "C" {
    /// shim/shim.cpp: the `llvm::PassPluginLibraryInfo` registering the pass.
    fn hookcc_plugin_info() -> PassPluginLibraryInfo;
}

/// The entry point LLVM looks up in a pass plugin. It must be defined here, in the cdylib: a
/// symbol that exists only in the static C++ shim is not exported from a Rust cdylib.
#[no_mangle]
pub extern "C" fn llvmGetPassPluginInfo() -> PassPluginLibraryInfo {
    // SAFETY: hookcc_plugin_info only builds a struct of constants.
    unsafe { hookcc_plugin_info() }
}

fn c_str(ptr: *const c_char) -> String {
    if ptr.is_null() {
        return String::new();
    }
    // SAFETY: the shim passes NUL-terminated strings owned by cl::opt, alive for this call.
    unsafe { CStr::from_ptr(ptr) }
        .to_string_lossy()
        .into_owned()
}

/// Called by the shim for each module. Returns 1 if the module changed, 0 if not, -1 on error
/// with `*error` set (free it with `hookcc_free_error`). Panics are caught here and become
/// errors, which the shim reports as a clang diagnostic instead of aborting the compiler.
#[no_mangle]
pub extern "C" fn hookcc_instrument_module(
    module: LLVMModuleRef,
    phase: c_uint,
    config: *const RawConfig,
    error: *mut *mut c_char,
) -> c_int {
    let result = catch_unwind(AssertUnwindSafe(|| -> Result<bool, String> {
        // SAFETY: the shim passes a valid pointer to a RawConfig on its stack.
        let raw = unsafe { &*config };
        let config = Config::from_options(
            &c_str(raw.entry_hook),
            &c_str(raw.exit_hook),
            &c_str(raw.entry_parm),
            &c_str(raw.exit_parm),
            raw.after_inlining != 0,
            raw.default_off == 0,
            raw.skip_inline != 0,
        )?;
        let config = Config {
            names: NameFilter::from_lists(&c_str(raw.include), &c_str(raw.exclude)),
            min_size: raw.min_size,
            exclude_crates: c_str(raw.exclude_crates)
                .lines()
                .filter(|l| !l.is_empty())
                .map(String::from)
                .collect(),
            outline: Outline::parse(&c_str(raw.outline))
                .map_err(|e| format!("-hookcc-outline: {e}"))?,
            ..config
        };
        let phase = match phase {
            0 => Phase::PipelineStart,
            1 => Phase::OptimizerLast,
            _ => Phase::Explicit,
        };
        // SAFETY: `module` is the live llvm::Module the pass manager is running on. The
        // ManuallyDrop keeps inkwell from disposing a module it does not own.
        let module = std::mem::ManuallyDrop::new(unsafe { Module::new(module) });
        instrument_module(&module, &config, phase)
    }));
    let message = match result {
        Ok(Ok(changed)) => return changed as c_int,
        Ok(Err(message)) => message,
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            format!("internal error in the pass plugin (please report): {what}")
        }
    };
    if !error.is_null() {
        let message = CString::new(message.replace('\0', " ")).unwrap_or_default();
        // SAFETY: `error` is a valid out-pointer supplied by the shim.
        unsafe { *error = message.into_raw() };
    }
    -1
}

/// Frees a message returned through `hookcc_instrument_module`'s `error`.
#[no_mangle]
pub extern "C" fn hookcc_free_error(error: *mut c_char) {
    if !error.is_null() {
        // SAFETY: `error` came from CString::into_raw in hookcc_instrument_module.
        drop(unsafe { CString::from_raw(error) });
    }
}
