//! Inserting the hooks into a module: which functions get them, the hook declarations, and the
//! calls at entry and before every return (with a cleanup path for unwinding).
//!
//! May import: config, mangling, pfp_points, setjmp, size, switches (the native trace's
//! per-function records), and ffi for LLVM-C calls; never plugin (which calls [`instrument_module`]).

use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::basic_block::BasicBlock;
use inkwell::builder::Builder;
use inkwell::intrinsics::Intrinsic;
use inkwell::module::{Linkage, Module};
use inkwell::types::BasicMetadataTypeEnum;
use inkwell::types::{FunctionType, IntType};
use inkwell::values::{
    AsValueRef, BasicMetadataValueEnum, BasicValue, BasicValueEnum, CallSiteValue, FunctionValue,
    InstructionOpcode, InstructionValue, PointerValue, ValueKind,
};
use inkwell::{AddressSpace, IntPredicate};

use crate::config::{Config, Hook, HookParams, Placement};
use crate::ffi;
use crate::mangling;
use crate::switches::{
    function_switch, functions_section, outlines, register_functions, Switch, COUNT_HOOK,
    FN_FIELD_COUNT, FN_FIELD_ON, FN_ON_RECORD, FUNCTIONS_SECTION,
};

/// Where in the pipeline the pass is running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    PipelineStart,
    OptimizerLast,
    /// `opt -passes=hookcc`: run once, whatever the placement.
    Explicit,
}

/// String attribute put on each instrumented function, so that no function gets hooks twice
/// (the pass is registered at two extension points, and a module can meet the plugin twice).
const DONE_ATTRIBUTE: &str = "hookcc-instrumented";
/// String attributes from the frontend plugin's marks (see frontend/plugin.cpp): `off` for
/// `#pragma NO_HOOKS`, `no_instrument_function` and `#pragma profile off`; `on` for
/// `#pragma profile on`; `inline` for functions declared inline.
const OFF_ATTRIBUTE: &str = "hookcc-off";
const ON_ATTRIBUTE: &str = "hookcc-on";
const INLINE_ATTRIBUTE: &str = "hookcc-inline";
/// The Rust side's marks: `#[hookcc::no_hooks]` / `#[hookcc::profile(off|on)]` (the hookcc
/// crate, rust/hookcc-macros) put a call to one of these first in the function and in each of
/// its closures, the one mark that reaches LLVM IR with every generic instance and with a
/// closure rustc puts in another codegen unit than its function.
const RUST_MARKERS: &[(&str, &str)] = &[
    ("hookcc::__private::hooks_off", OFF_ATTRIBUTE),
    ("hookcc::__private::hooks_on", ON_ATTRIBUTE),
];

/// Turns the Rust marks into attributes (see [`RUST_MARKERS`]) and deletes the marker calls.
/// Returns whether anything changed.
fn take_rust_marks(module: &Module<'_>) -> bool {
    let markers: Vec<(FunctionValue, &str)> = module
        .get_functions()
        .filter_map(|f| {
            let name = mangling::rust_demangled(&f.get_name().to_string_lossy())?;
            RUST_MARKERS
                .iter()
                .find(|(marker, _)| *marker == name)
                .map(|(_, attribute)| (f, *attribute))
        })
        .collect();
    if markers.is_empty() {
        return false;
    }
    let context = module.get_context();
    let mut marked = Vec::new();
    for function in module.get_functions() {
        for block in function.get_basic_blocks() {
            let mut inst = block.get_first_instruction();
            while let Some(i) = inst {
                inst = i.get_next_instruction();
                let Some(callee) = ffi::called_function(i) else {
                    continue;
                };
                if let Some((_, attribute)) = markers.iter().find(|(m, _)| *m == callee) {
                    marked.push((function, *attribute, i));
                }
            }
        }
    }
    for (function, attribute, call) in &marked {
        function.add_attribute(
            AttributeLoc::Function,
            context.create_string_attribute(attribute, ""),
        );
        ffi::delete_call(*call);
    }
    // A closure the attribute could not put a marker in (one written inside a macro's
    // arguments, whose tokens the attribute does not parse) still has its function's path in
    // its name: `marks::quiet::{closure#0}`. It takes its function's mark when both are in
    // this codegen unit.
    let marked_paths: Vec<(String, &str)> = marked
        .iter()
        .filter_map(|(function, attribute, _)| {
            let name = mangling::rust_demangled(&function.get_name().to_string_lossy())?;
            Some((
                mangling::without_generic_args(&name).to_string(),
                *attribute,
            ))
        })
        .collect();
    for function in module.get_functions() {
        let Some(name) = mangling::rust_demangled(&function.get_name().to_string_lossy()) else {
            continue;
        };
        let has_mark = [OFF_ATTRIBUTE, ON_ATTRIBUTE].iter().any(|a| {
            function
                .get_string_attribute(AttributeLoc::Function, a)
                .is_some()
        });
        if has_mark {
            continue;
        }
        if let Some((_, attribute)) = marked_paths
            .iter()
            .find(|(path, _)| mangling::is_closure_of(&name, path))
        {
            function.add_attribute(
                AttributeLoc::Function,
                context.create_string_attribute(attribute, ""),
            );
        }
    }
    !marked.is_empty()
}

/// Instruments every eligible function of `module`. Returns whether anything changed.
pub fn instrument_module(
    module: &Module<'_>,
    config: &Config,
    phase: Phase,
) -> Result<bool, String> {
    // The frontend plugin's marks become function attributes first, whatever the placement:
    // they must leave llvm.global.annotations before optimization (see ffi::take_marks).
    let mut changed = false;
    if phase != Phase::OptimizerLast {
        let context = module.get_context();
        for (function, mark) in ffi::take_marks(module) {
            let attribute = format!("hookcc-{mark}");
            function.add_attribute(
                AttributeLoc::Function,
                context.create_string_attribute(&attribute, ""),
            );
            changed = true;
        }
        changed |= take_rust_marks(module);
    }
    // NITRO's lr of frames inlined since the hooks went in (before inlining).
    if phase == Phase::OptimizerLast && config.placement == Placement::BeforeInlining {
        if let Some(hook) = config
            .entry
            .as_ref()
            .filter(|h| h.params == HookParams::NameCallSiteArgs)
        {
            changed |= ffi::relocate_inlined_call_sites(module, &hook.symbol);
        }
    }
    let wanted = match phase {
        Phase::Explicit => true,
        Phase::PipelineStart => config.placement == Placement::BeforeInlining,
        Phase::OptimizerLast => config.placement == Placement::AfterInlining,
    };
    if !wanted || config.is_empty() {
        return Ok(changed);
    }
    let entry = config
        .entry
        .as_ref()
        .map(|h| declare_hook(module, h))
        .transpose()?;
    let exit = config
        .exit
        .as_ref()
        .map(|h| declare_hook(module, h))
        .transpose()?;
    let builder = module.get_context().create_builder();
    // The native trace's hooks are called only while the function's switch is on.
    let switched = config
        .exit
        .as_ref()
        .is_some_and(|h| h.params == HookParams::ExitAddress);
    let (mut entry, mut exit) = (entry, exit);
    if switched {
        if let Some(convention) = ffi::native_hook_convention(module) {
            for hook in [entry.as_mut(), exit.as_mut()].into_iter().flatten() {
                hook.convention = Some(convention);
                if let Some(f) = module.get_function(&hook.pointer.get_name().to_string_lossy()) {
                    f.set_call_conventions(convention);
                }
            }
        }
    }
    let functions: Vec<FunctionValue> = module.get_functions().collect();
    let context = module.get_context();
    let mut switches = 0usize;
    let hosted = functions_section(module) == FUNCTIONS_SECTION;
    for function in functions {
        if !should_instrument(function, config) {
            continue;
        }
        let mut switch = switched.then(|| function_switch(module, function));
        switches += usize::from(switch.is_some());
        let hooked = match switch.as_mut() {
            Some(switch) if outlines(config, function, hosted) => {
                let clone = ffi::outline_hooked(function, switch.on_field());
                switch.entered_on = true;
                function.add_attribute(
                    AttributeLoc::Function,
                    context.create_string_attribute(DONE_ATTRIBUTE, ""),
                );
                clone
            }
            _ => function,
        };
        instrument_function(
            module,
            &builder,
            hooked,
            function,
            entry.as_ref().zip(config.entry.as_ref()),
            exit.as_ref().zip(config.exit.as_ref()),
            switch,
        )?;
        changed = true;
    }
    if switches > 0 && functions_section(module) == FUNCTIONS_SECTION {
        register_functions(module, DONE_ATTRIBUTE)?;
    }
    Ok(changed)
}

/// Splits the block of `before` there and returns its head, whose branch to the rest is gone
/// (the caller ends it with the test), and the rest.
fn split_for_test<'ctx>(
    before: InstructionValue<'ctx>,
) -> Result<(BasicBlock<'ctx>, BasicBlock<'ctx>), String> {
    let head = before
        .get_parent()
        .ok_or("an instruction without a block")?;
    let rest = ffi::split_before(before);
    head.get_terminator()
        .ok_or("split block without its branch")?
        .erase_from_basic_block();
    Ok((head, rest))
}

/// Positions `builder` where the entry hook's call that goes before `before` is built: with a
/// switch, `on` is read once (a volatile load, never folded) and kept in `switch.on` for the
/// exits; the call is made when it is 1 (recorded), the record's count incremented when it is
/// 2 (throttled: counted, not recorded), nothing done when it is 0 (off) —
/// `if (on) { if (on == 1) hook(…); else count++; }` — else right before `before`.
fn position_entry_hook<'ctx>(
    module: &Module<'ctx>,
    builder: &Builder<'ctx>,
    switch: Option<&mut Switch<'ctx>>,
    before: InstructionValue<'ctx>,
) -> Result<(), String> {
    let Some(switch) = switch else {
        builder.position_before(&before);
        return Ok(());
    };
    let context = module.get_context();
    let e = |e: inkwell::builder::BuilderError| e.to_string();
    let (i8t, i32t, i64t) = (context.i8_type(), context.i32_type(), context.i64_type());
    let (head, rest) = split_for_test(before)?;
    let decide = context.insert_basic_block_after(head, "hookcc.switch");
    let count = context.insert_basic_block_after(decide, "hookcc.count");
    let hook = context.insert_basic_block_after(count, "hookcc.hook");
    builder.position_at_end(head);
    let zero = i32t.const_zero();
    // SAFETY: constant GEPs to fields of the record's own struct type.
    let (on_field, count_field) = unsafe {
        (
            switch.record.const_gep(
                switch.record_type,
                &[zero, i32t.const_int(FN_FIELD_ON.into(), false)],
            ),
            switch.record.const_gep(
                switch.record_type,
                &[zero, i32t.const_int(FN_FIELD_COUNT.into(), false)],
            ),
        )
    };
    let on = builder
        .build_load(i8t, on_field, "hookcc.on")
        .map_err(e)?
        .into_int_value();
    on.as_instruction_value()
        .ok_or("a load that is no instruction")?
        .set_volatile(true)
        .map_err(|e| e.to_string())?;
    switch.on = Some(on);
    if switch.entered_on {
        builder.build_unconditional_branch(decide).map_err(e)?;
    } else {
        let is_on = builder
            .build_int_compare(IntPredicate::NE, on, i8t.const_zero(), "hookcc.is_on")
            .map_err(e)?;
        builder
            .build_conditional_branch(is_on, decide, rest)
            .map_err(e)?;
    }
    builder.position_at_end(decide);
    let records = builder
        .build_int_compare(
            IntPredicate::EQ,
            on,
            on.get_type().const_int(FN_ON_RECORD, false),
            "hookcc.records",
        )
        .map_err(e)?;
    builder
        .build_conditional_branch(records, hook, count)
        .map_err(e)?;
    builder.position_at_end(count);
    if switch.atomic {
        // The count is the runtime's: threads count into caches of their own there (an
        // atomic add here would cost a throttled call some 6 ns, and AArch64 Linux lowers one
        // to a libgcc call, outline atomics, that a program linked without libgcc lacks).
        // Weak: only a runtime that throttles (and so defines it) sets the switch that calls
        // it; a program with hooks of its own links without it.
        let counter = ffi::native_runtime_entry(module, COUNT_HOOK, Linkage::ExternalWeak);
        ffi::call_native_runtime_entry(builder, counter, switch.record)?;
    } else {
        let one = i64t.const_int(1, false);
        let old = builder
            .build_load(i64t, count_field, "hookcc.count")
            .map_err(e)?
            .into_int_value();
        let new = builder.build_int_add(old, one, "hookcc.count").map_err(e)?;
        builder.build_store(count_field, new).map_err(e)?;
    }
    builder.build_unconditional_branch(rest).map_err(e)?;
    builder.position_at_end(hook);
    let branch = builder.build_unconditional_branch(rest).map_err(e)?;
    builder.position_before(&branch);
    Ok(())
}

/// Positions `builder` where a hook call after the entry (an exit, a resync) that goes before
/// `before` is built: with a switch, in a block of its own entered only when the entry was
/// recorded (`if (on == 1) hook(…);`, `on` as read at entry), else right before `before`.
fn position_hook<'ctx>(
    module: &Module<'ctx>,
    builder: &Builder<'ctx>,
    switch: Option<&Switch<'ctx>>,
    before: InstructionValue<'ctx>,
) -> Result<(), String> {
    let Some(on) = switch.and_then(|s| s.on) else {
        builder.position_before(&before);
        return Ok(());
    };
    let context = module.get_context();
    let e = |e: inkwell::builder::BuilderError| e.to_string();
    let (head, rest) = split_for_test(before)?;
    let hook = context.insert_basic_block_after(head, "hookcc.hook");
    builder.position_at_end(head);
    let records = builder
        .build_int_compare(
            IntPredicate::EQ,
            on,
            on.get_type().const_int(FN_ON_RECORD, false),
            "hookcc.records",
        )
        .map_err(e)?;
    builder
        .build_conditional_branch(records, hook, rest)
        .map_err(e)?;
    builder.position_at_end(hook);
    let branch = builder.build_unconditional_branch(rest).map_err(e)?;
    builder.position_before(&branch);
    Ok(())
}

fn should_instrument(function: FunctionValue<'_>, config: &Config) -> bool {
    if function.count_basic_blocks() == 0 {
        return false; // a declaration
    }
    // No code is emitted for available_externally bodies; the real copy gets the hooks.
    if function.get_linkage() == Linkage::AvailableExternally {
        return false;
    }
    let name = function.get_name().to_string_lossy();
    // Hooks never get hooks, nor does anything of the runtime's.
    if config.is_hook(&name) || name.starts_with("__hookcc_") {
        return false;
    }
    let has_string = |key| {
        function
            .get_string_attribute(AttributeLoc::Function, key)
            .is_some()
    };
    if has_string(DONE_ATTRIBUTE) || has_string(OFF_ATTRIBUTE) {
        return false;
    }
    if config.skip_inline && has_string(INLINE_ATTRIBUTE) {
        return false;
    }
    if !config.default_on && !has_string(ON_ATTRIBUTE) {
        return false;
    }
    if config.excludes_crate_of(&name) {
        return false;
    }
    if !config.names.is_empty() || config.min_size > 0 {
        let demangled = mangling::demangled(&name);
        let mut names = vec![name.as_ref()];
        names.extend(demangled.as_deref());
        if !config.names.allows(&names) {
            return false;
        }
        if config.min_size > 0
            && !config.names.includes(&names)
            && crate::size::too_small(function, config.min_size)
        {
            return false;
        }
    }
    // A naked function has no prologue to put a call in.
    let naked = Attribute::get_named_enum_kind_id("naked");
    function
        .get_enum_attribute(AttributeLoc::Function, naked)
        .is_none()
}

/// Declares (or finds) a hook with the signature its parameters call for.
/// What the inserted calls call: the hook's address and the function type of the call.
#[derive(Clone, Copy)]
struct HookCallee<'ctx> {
    fn_type: FunctionType<'ctx>,
    pointer: PointerValue<'ctx>,
    /// The calls' calling convention, where it is not C's ([`ffi::native_hook_convention`]).
    convention: Option<u32>,
}

impl<'ctx> HookCallee<'ctx> {
    fn call(
        &self,
        builder: &Builder<'ctx>,
        args: &[BasicMetadataValueEnum<'ctx>],
    ) -> Result<CallSiteValue<'ctx>, String> {
        // A hook declared with `uintptr_t` where the options pass a pointer
        // ([`compatible_declaration`]) gets the pointer's address as that integer.
        let params = self.fn_type.get_param_types();
        let mut converted = Vec::with_capacity(args.len());
        for (i, &arg) in args.iter().enumerate() {
            match (arg, params.get(i)) {
                (
                    BasicMetadataValueEnum::PointerValue(p),
                    Some(BasicMetadataTypeEnum::IntType(t)),
                ) => {
                    let int = builder
                        .build_ptr_to_int(p, *t, "")
                        .map_err(|e| e.to_string())?;
                    converted.push(int.into());
                }
                _ => converted.push(arg),
            }
        }
        let call = builder
            .build_indirect_call(self.fn_type, self.pointer, &converted, "")
            .map_err(|e| e.to_string())?;
        if let Some(convention) = self.convention {
            call.set_call_convention(convention);
        }
        Ok(call)
    }
}

/// Declares (or finds) a hook with the signature its parameters call for. A hook the
/// translation unit declares differently is an error, except NITRO's `__PROFILE_ENTRY`, which
/// programs may define as `void __PROFILE_ENTRY(const char *)` (the seed's "other
/// profilers"): it is called with the full argument list, which the C calling convention of
/// every target lets the callee ignore.
fn declare_hook<'ctx>(module: &Module<'ctx>, hook: &Hook) -> Result<HookCallee<'ctx>, String> {
    let context = module.get_context();
    let ptr = context.ptr_type(AddressSpace::default());
    let word = intptr_type(module);
    let params: Vec<BasicMetadataTypeEnum> = match hook.params {
        HookParams::None => vec![],
        HookParams::Name | HookParams::Address | HookParams::ExitAddress | HookParams::PfpPoint => {
            vec![ptr.into()]
        }
        HookParams::CallSiteAddress | HookParams::AddressCallSite => vec![ptr.into(), ptr.into()],
        HookParams::NameCallSiteArgs => {
            vec![
                ptr.into(),
                ptr.into(),
                word.into(),
                word.into(),
                word.into(),
                word.into(),
            ]
        }
    };
    let fn_type = context.void_type().fn_type(&params, false);
    if let Some(existing) = module.get_function(&hook.symbol) {
        let pointer = existing.as_global_value().as_pointer_value();
        if existing.get_type() != fn_type
            && hook.params != HookParams::NameCallSiteArgs
            && !compatible_declaration(existing.get_type(), fn_type, word)
        {
            return Err(format!(
                "hook `{}` is declared in this translation unit with type `{}`, but the options \
                 call for `{}`",
                hook.symbol,
                existing.get_type().print_to_string().to_string_lossy(),
                hook.params.c_signature(&hook.symbol)
            ));
        }
        // Called with the declared type: pointer arguments become integers where it has
        // `uintptr_t` (HookCallee::call).
        // (NITRO's __PROFILE_ENTRY is called with the full list whatever it declares.)
        let declared = existing.get_type();
        let fn_type = if compatible_declaration(declared, fn_type, word) {
            declared
        } else {
            fn_type
        };
        return Ok(HookCallee {
            fn_type,
            pointer,
            convention: None,
        });
    }
    let function = module.add_function(&hook.symbol, fn_type, Some(Linkage::External));
    let nounwind = Attribute::get_named_enum_kind_id("nounwind");
    function.add_attribute(
        AttributeLoc::Function,
        context.create_enum_attribute(nounwind, 0),
    );
    Ok(HookCallee {
        fn_type,
        pointer: function.as_global_value().as_pointer_value(),
        convention: None,
    })
}

/// Whether a hook the translation unit declares as `declared` can be called where the options
/// call for `wanted`: the same return type and number of parameters, and each parameter the
/// wanted one or, for a pointer, a pointer-sized integer. `<hookcc/gprof.h>` declares the
/// seed's `__profile_mcount(uintptr_t caller_pc, uintptr_t callee_pc)`, as its HAL calls it,
/// where `--hook-runtime=gprof` calls for `(void *, void *)`: a firmware's own mcount that
/// calls it is in a translation unit the pass instruments.
fn compatible_declaration<'ctx>(
    declared: FunctionType<'ctx>,
    wanted: FunctionType<'ctx>,
    word: IntType<'ctx>,
) -> bool {
    let (declared_params, wanted_params) = (declared.get_param_types(), wanted.get_param_types());
    declared.get_return_type() == wanted.get_return_type()
        && declared.is_var_arg() == wanted.is_var_arg()
        && declared_params.len() == wanted_params.len()
        && declared_params
            .iter()
            .zip(&wanted_params)
            .all(|(d, w)| match (d, w) {
                (BasicMetadataTypeEnum::IntType(d), BasicMetadataTypeEnum::PointerType(_)) => {
                    *d == word
                }
                _ => d == w,
            })
}

/// False for `nounwind` functions (all of C without -fexceptions): nothing unwinds out of them.
fn function_may_unwind(function: FunctionValue<'_>) -> bool {
    let nounwind = Attribute::get_named_enum_kind_id("nounwind");
    function
        .get_enum_attribute(AttributeLoc::Function, nounwind)
        .is_none()
}

/// The plain calls of `function` that can throw, outside cleanup code (blocks that start with
/// a landing pad are already on the unwinding path) and not `musttail` (which cannot become an
/// invoke).
fn calls_that_may_unwind(function: FunctionValue<'_>) -> Vec<InstructionValue<'_>> {
    let mut calls = Vec::new();
    for block in function.get_basic_block_iter() {
        let first = block.get_first_instruction();
        if first.is_some_and(|i| i.get_opcode() == InstructionOpcode::LandingPad) {
            continue;
        }
        let mut inst = first;
        while let Some(i) = inst {
            inst = i.get_next_instruction();
            if i.get_opcode() == InstructionOpcode::Call
                && !ffi::is_musttail_call(i.as_value_ref())
                && ffi::call_may_unwind(i)
            {
                calls.push(i);
            }
        }
    }
    calls
}

/// The personality for the cleanup of `function`: its own, else the one the module's other
/// functions use, else the language's, judged from the module's symbol names
/// ([`crate::mangling`]): Rust's `rust_eh_personality` (a rustc codegen unit whose functions
/// have no landing pads of their own has no personality anywhere), C++'s
/// `__gxx_personality_v0`. Otherwise none, and the function is left as it is (a C module
/// compiled with -fexceptions and no landing pads at all).
fn personality_for<'ctx>(
    module: &Module<'ctx>,
    function: FunctionValue<'ctx>,
) -> Option<FunctionValue<'ctx>> {
    if let Some(p) = function.get_personality_function().or_else(|| {
        module
            .get_functions()
            .find_map(|f| f.get_personality_function())
    }) {
        return Some(p);
    }
    let names: Vec<Vec<u8>> = module
        .get_functions()
        .map(|f| f.get_name().to_bytes().to_vec())
        .collect();
    let personality = mangling::personality_for_names(names.iter().map(Vec::as_slice))?;
    Some(module.get_function(personality).unwrap_or_else(|| {
        let context = module.get_context();
        module.add_function(
            personality,
            context.i32_type().fn_type(&[], true),
            Some(Linkage::External),
        )
    }))
}

/// The pointer-sized integer of the module's target (`uintptr_t`).
fn intptr_type<'ctx>(module: &Module<'ctx>) -> IntType<'ctx> {
    let context = module.get_context();
    match ffi::pointer_size_bits(module) {
        16 => context.i16_type(),
        32 => context.i32_type(),
        _ => context.i64_type(),
    }
}

/// The function's first four integer or pointer arguments as `uintptr_t` (0 where it has
/// fewer): what the ARM original found in r0–r3 at entry.
fn first_four_integer_arguments<'ctx>(
    module: &Module<'ctx>,
    builder: &Builder<'ctx>,
    function: FunctionValue<'ctx>,
) -> Result<Vec<BasicMetadataValueEnum<'ctx>>, String> {
    let word = intptr_type(module);
    let signext = Attribute::get_named_enum_kind_id("signext");
    let mut values = Vec::with_capacity(4);
    for (index, param) in function.get_param_iter().enumerate() {
        if values.len() == 4 {
            break;
        }
        let value = match param {
            BasicValueEnum::PointerValue(p) => builder.build_ptr_to_int(p, word, "hookcc.arg"),
            BasicValueEnum::IntValue(i) => {
                let width = i.get_type().get_bit_width();
                if width > word.get_bit_width() {
                    builder.build_int_truncate(i, word, "hookcc.arg")
                } else if width == word.get_bit_width() {
                    Ok(i)
                } else if function
                    .get_enum_attribute(AttributeLoc::Param(index as u32), signext)
                    .is_some()
                {
                    builder.build_int_s_extend(i, word, "hookcc.arg")
                } else {
                    builder.build_int_z_extend(i, word, "hookcc.arg")
                }
            }
            _ => continue,
        };
        values.push(value.map_err(|e| e.to_string())?.into());
    }
    while values.len() < 4 {
        values.push(word.const_zero().into());
    }
    Ok(values)
}

/// Puts the hooks into `function`: `identity`'s, whose address and name they pass (`function`
/// itself, or the function whose outlined clone it is, [`outlines`]).
fn instrument_function<'ctx>(
    module: &Module<'ctx>,
    builder: &Builder<'ctx>,
    function: FunctionValue<'ctx>,
    identity: FunctionValue<'ctx>,
    entry: Option<(&HookCallee<'ctx>, &Hook)>,
    exit: Option<(&HookCallee<'ctx>, &Hook)>,
    mut switch: Option<Switch<'ctx>>,
) -> Result<(), String> {
    let context = module.get_context();
    let first_block = function
        .get_first_basic_block()
        .expect("a definition has a block");
    // After the leading allocas, so they stay together at the top of the entry block.
    let mut insert_before = first_block.get_first_instruction();
    while let Some(inst) = insert_before {
        if inst.get_opcode() != InstructionOpcode::Alloca {
            break;
        }
        insert_before = inst.get_next_instruction();
    }
    let insert_before = insert_before.ok_or("entry block without terminator")?;
    builder.position_before(&insert_before);

    let needs_call_site = [entry, exit].iter().flatten().any(|(_, h)| {
        matches!(
            h.params,
            HookParams::NameCallSiteArgs
                | HookParams::CallSiteAddress
                | HookParams::AddressCallSite
        )
    });
    let call_site = if needs_call_site {
        let intrinsic =
            Intrinsic::find("llvm.returnaddress").ok_or("llvm.returnaddress not found")?;
        let decl = intrinsic
            .get_declaration(module, &[])
            .ok_or("llvm.returnaddress declaration")?;
        let zero = context.i32_type().const_zero();
        let call = builder
            .build_call(decl, &[zero.into()], "hookcc.callsite")
            .map_err(|e| e.to_string())?;
        ffi::copy_debug_location(
            call.as_value_ref(),
            insert_before.as_value_ref(),
            function.as_value_ref(),
        );
        match call.try_as_basic_value() {
            ValueKind::Basic(value) => Some(value.into_pointer_value()),
            ValueKind::Instruction(_) => return Err("llvm.returnaddress returned void".into()),
        }
    } else {
        None
    };
    let mut name: Option<PointerValue> = None;
    // What the native trace's hooks are passed: the function's record (switches.rs), which
    // names it in the trace (hookprof finds the function from the record in the ELF file);
    // the function's own address for every other runtime.
    let identity_word = match switch.as_ref() {
        Some(switch) => switch.record,
        None => identity.as_global_value().as_pointer_value(),
    };
    let mut arguments = |builder: &Builder<'ctx>,
                         params: HookParams|
     -> Result<Vec<BasicMetadataValueEnum<'ctx>>, String> {
        let address = identity.as_global_value().as_pointer_value();
        Ok(match params {
            HookParams::None => vec![],
            HookParams::Address => vec![identity_word.into()],
            HookParams::CallSiteAddress => {
                vec![call_site.expect("computed above").into(), address.into()]
            }
            HookParams::AddressCallSite => {
                vec![address.into(), call_site.expect("computed above").into()]
            }
            HookParams::PfpPoint => vec![crate::pfp_points::point(module, function).into()],
            HookParams::ExitAddress => {
                // `word + 2` as a constant expression: the relocation's addend, no instruction
                // at the call.
                let byte = context.i8_type();
                let two = context.i64_type().const_int(2, false);
                // SAFETY: a constant GEP of a record's or function's address with an i64
                // index, not `inbounds`: `word + 2` is defined whatever the object's size, and
                // inkwell's only requirement (indices valid for the pointee type) holds for an
                // i8 offset.
                let tagged = unsafe { identity_word.const_gep(byte, &[two]) };
                vec![tagged.into()]
            }
            HookParams::Name | HookParams::NameCallSiteArgs => {
                if name.is_none() {
                    // Rust functions by their path (`mycrate::parse::number`), as TI users
                    // expect names they wrote; C and C++ names as the symbol.
                    let symbol = identity.get_name().to_string_lossy().into_owned();
                    let text = mangling::rust_demangled(&symbol).unwrap_or(symbol);
                    let global = builder
                        .build_global_string_ptr(&text, "hookcc.name")
                        .map_err(|e| e.to_string())?;
                    name = Some(global.as_pointer_value());
                }
                let mut args: Vec<BasicMetadataValueEnum> = vec![name.unwrap().into()];
                if params == HookParams::NameCallSiteArgs {
                    args.push(call_site.expect("computed above").into());
                    args.extend(first_four_integer_arguments(module, builder, function)?);
                }
                args
            }
        })
    };

    if let Some((hook_fn, hook)) = entry {
        position_entry_hook(module, builder, switch.as_mut(), insert_before)?;
        let args = arguments(builder, hook.params)?;
        let call = hook_fn.call(builder, &args)?;
        ffi::copy_debug_location(
            call.as_value_ref(),
            insert_before.as_value_ref(),
            function.as_value_ref(),
        );
        if hook.params == HookParams::NameCallSiteArgs {
            ffi::mark_frame(call.as_value_ref(), function.as_value_ref());
        }
    }
    if let Some((hook_fn, hook)) = exit {
        // Calls that can unwind, found before any block is added or split.
        let unwinding_calls = if function_may_unwind(function) {
            calls_that_may_unwind(function)
        } else {
            vec![]
        };
        let mut block = function.get_first_basic_block();
        while let Some(bb) = block {
            block = bb.get_next_basic_block();
            let Some(terminator) = bb.get_terminator() else {
                continue;
            };
            let position = match terminator.get_opcode() {
                // Nothing may stand between a musttail call and its return: hook before the call.
                InstructionOpcode::Return => match terminator.get_previous_instruction() {
                    Some(previous) if ffi::is_musttail_call(previous.as_value_ref()) => previous,
                    _ => terminator,
                },
                // An exception leaving through the function's own landing pads.
                InstructionOpcode::Resume => terminator,
                _ => continue,
            };
            position_hook(module, builder, switch.as_ref(), position)?;
            let args = arguments(builder, hook.params)?;
            let call = hook_fn.call(builder, &args)?;
            ffi::copy_debug_location(
                call.as_value_ref(),
                terminator.as_value_ref(),
                function.as_value_ref(),
            );
        }
        // An exception thrown by a call and not caught here leaves the function without a
        // return: give those calls a cleanup that calls the exit hook and resumes unwinding,
        // as GCC's -finstrument-functions does (clang-19's own does not).
        if !unwinding_calls.is_empty() {
            if let Some(personality) = personality_for(module, function) {
                function.set_personality_function(personality);
                let cleanup = context.append_basic_block(function, "hookcc.unwind");
                builder.position_at_end(cleanup);
                let ptr = context.ptr_type(AddressSpace::default());
                let exception_type =
                    context.struct_type(&[ptr.into(), context.i32_type().into()], false);
                let landing = builder
                    .build_landing_pad(exception_type, personality, &[], true, "hookcc.exception")
                    .map_err(|e| e.to_string())?;
                let resume = builder.build_resume(landing).map_err(|e| e.to_string())?;
                position_hook(module, builder, switch.as_ref(), resume)?;
                let args = arguments(builder, hook.params)?;
                let call = hook_fn.call(builder, &args)?;
                ffi::copy_debug_location(
                    call.as_value_ref(),
                    unwinding_calls[0].as_value_ref(),
                    function.as_value_ref(),
                );
                ffi::copy_debug_location(
                    resume.as_value_ref(),
                    unwinding_calls[0].as_value_ref(),
                    function.as_value_ref(),
                );
                for call in unwinding_calls {
                    ffi::call_to_invoke(call, cleanup);
                }
            }
        }
    }
    // The native trace: where a longjmp lands, the frames it skipped are closed (setjmp.rs).
    if exit.is_some_and(|(_, h)| h.params == HookParams::ExitAddress) {
        crate::setjmp::resync_after_setjmp(
            module,
            builder,
            function,
            identity_word,
            &|builder, after| position_hook(module, builder, switch.as_ref(), after),
        )?;
    }
    // TI's records keep their type in the low 2 bits of the function address
    // (seeds/ti-c6000-function-hooks.txt), and the native trace marks exits in bit 1: a
    // function whose address a hook receives must be 4-byte aligned, which -Os/-Oz on x86 and
    // Thumb/RISC-V compressed code do not guarantee.
    let passes_address = [entry, exit]
        .iter()
        .flatten()
        .any(|(_, h)| matches!(h.params, HookParams::Address | HookParams::ExitAddress));
    if passes_address && identity.as_global_value().get_alignment() < 4 {
        identity.as_global_value().set_alignment(4);
    }
    function.add_attribute(
        AttributeLoc::Function,
        context.create_string_attribute(DONE_ATTRIBUTE, ""),
    );
    Ok(())
}
