//! The clang-19 frontend plugin of hookcc (`libhookcc_clang.so`, loaded with `-fplugin=`).
//!
//! All of it is C++ (`plugin.cpp`): clang's plugin API has no C interface. It registers
//! `#pragma NO_HOOKS(func)` (TI) and `#pragma profile on|off|reset` (Metrowerks), and marks each
//! function definition with an `annotate("hookcc:…")` attribute that the pass plugin reads from
//! `llvm.global.annotations` and removes:
//!
//! - `hookcc:off` — `#pragma NO_HOOKS(f)` before the definition, `#pragma profile off` in force
//!   at the function's closing brace, or `__attribute__((no_instrument_function))`;
//! - `hookcc:on` — `#pragma profile on` in force at the closing brace;
//! - `hookcc:inline` — the function is declared inline (TI: no hooks in inline functions).
//!
//! This crate only links that C++ into a shared library; its static registration objects run
//! when clang loads it.
