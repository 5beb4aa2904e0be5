//! `longjmp` in the native trace (docs/trace-format.md, "Resync records").
//!
//! A `longjmp` leaves every frame between it and its `setjmp` without their exits. The trace
//! cannot see it happen, but it can see where it lands: the second return of `setjmp`. After
//! every call in an instrumented function to a function that returns twice (`setjmp`,
//! `_setjmp`, `sigsetjmp`, … carry LLVM's `returns_twice`), the pass calls
//! `__hookcc_resync(function)`, which records "this function's frame is the top again"; the
//! reader closes the frames above it there. On the first return it finds nothing to close.
//!
//! May import: ffi only (instrument calls [`resync_after_setjmp`]).

use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::builder::Builder;
use inkwell::module::{Linkage, Module};
use inkwell::values::{
    AsValueRef, CallSiteValue, FunctionValue, InstructionOpcode, InstructionValue, PointerValue,
};

use crate::ffi;

/// The native trace runtime's resync hook (runtime/src/trace.c, trace_baremetal.c).
pub const RESYNC_HOOK: &str = "__hookcc_resync";

/// The calls in `function` to functions that return twice.
fn returns_twice_calls(function: FunctionValue<'_>) -> Vec<InstructionValue<'_>> {
    let kind = Attribute::get_named_enum_kind_id("returns_twice");
    let mut calls = Vec::new();
    for block in function.get_basic_block_iter() {
        let mut next = block.get_first_instruction();
        while let Some(inst) = next {
            next = inst.get_next_instruction();
            if inst.get_opcode() != InstructionOpcode::Call {
                continue;
            }
            let Ok(call) = CallSiteValue::try_from(inst) else {
                continue;
            };
            let on_call = call
                .get_enum_attribute(AttributeLoc::Function, kind)
                .is_some();
            let on_callee = call.get_called_fn_value().is_some_and(|callee| {
                callee
                    .get_enum_attribute(AttributeLoc::Function, kind)
                    .is_some()
            });
            if on_call || on_callee {
                calls.push(inst);
            }
        }
    }
    calls
}

/// Puts `__hookcc_resync(word)` after each call in `function` that returns twice: `word` is
/// what its hooks are passed (its record).
/// `position` puts the builder where the call goes before the given instruction (behind the
/// function's switch, as its exits). Returns whether there was one.
pub fn resync_after_setjmp<'ctx>(
    module: &Module<'ctx>,
    builder: &Builder<'ctx>,
    function: FunctionValue<'ctx>,
    word: PointerValue<'ctx>,
    position: &dyn Fn(&Builder<'ctx>, InstructionValue<'ctx>) -> Result<(), String>,
) -> Result<bool, String> {
    let calls = returns_twice_calls(function);
    if calls.is_empty() {
        return Ok(false);
    }
    let hook = ffi::native_runtime_entry(module, RESYNC_HOOK, Linkage::External);
    for call in calls {
        let after = call
            .get_next_instruction()
            .ok_or("a call returning twice without an instruction after it")?;
        position(builder, after)?;
        let resync = ffi::call_native_runtime_entry(builder, hook, word)?;
        ffi::copy_debug_location(
            resync.as_value_ref(),
            call.as_value_ref(),
            function.as_value_ref(),
        );
    }
    Ok(true)
}
