//! `--pfp-functions=GLOB`: a TI profile point around each named function (docs/pfp.md, "The
//! compiler bridge"). The hooks `__hookcc_pfp_begin(point)` / `__hookcc_pfp_end(point)` get
//! the function's point: a variable `{ i32 id = -1; i32 name }` in section `hookcc_pfp`,
//! where `name` is the offset from the point to the function's name (no pointer, so nothing
//! to relocate, and hookprof reads it from the ELF file as it is). The runtime gives the points
//! ids at start-up, in the section's (link) order. A function the linker may keep one copy of
//! (inline, template) gets its point in a COMDAT of the same name: one point per function.
//!
//! May import: mangling only (instrument calls [`point`]).

use inkwell::module::{Linkage, Module};
use inkwell::values::{FunctionValue, PointerValue};
use inkwell::GlobalVisibility;

use crate::mangling;

/// The section the points go in; the runtime walks it with `__start_`/`__stop_`.
const SECTION: &str = "hookcc_pfp";

/// The point of `function`, created the first time.
pub fn point<'ctx>(module: &Module<'ctx>, function: FunctionValue<'ctx>) -> PointerValue<'ctx> {
    let symbol = function.get_name().to_string_lossy().into_owned();
    let global_name = format!("__hookcc_pfp.{symbol}");
    if let Some(existing) = module.get_global(&global_name) {
        return existing.as_pointer_value();
    }
    let context = module.get_context();
    let i32_type = context.i32_type();
    let i64_type = context.i64_type();
    let point_type = context.struct_type(&[i32_type.into(), i32_type.into()], false);
    let point = module.add_global(point_type, None, &global_name);
    let text = mangling::demangled(&symbol).unwrap_or(symbol.clone());
    let bytes = context.const_string(text.as_bytes(), true);
    let name = module.add_global(
        bytes.get_type(),
        None,
        &format!("__hookcc_pfp_name.{symbol}"),
    );
    name.set_initializer(&bytes);
    name.set_constant(true);
    name.set_linkage(Linkage::Private);
    name.set_unnamed_addr(true);
    // name - point, a link-time constant within the module's image.
    let offset = name
        .as_pointer_value()
        .const_to_int(i64_type)
        .const_sub(point.as_pointer_value().const_to_int(i64_type))
        .const_truncate(i32_type);
    point.set_initializer(
        &point_type.const_named_struct(&[i32_type.const_int(u64::MAX, true).into(), offset.into()]),
    );
    point.set_section(Some(SECTION));
    point.set_alignment(4);
    let local = matches!(function.get_linkage(), Linkage::Internal | Linkage::Private);
    if local {
        point.set_linkage(Linkage::Internal);
    } else {
        point.set_linkage(Linkage::LinkOnceODR);
        point.set_visibility(GlobalVisibility::Hidden);
        let comdat = module.get_or_insert_comdat(&global_name);
        point.set_comdat(comdat);
    }
    // Referenced from code only through the hooks: kept by the references, and by the
    // runtime's __start_/__stop_ bounds at link time.
    point.as_pointer_value()
}
