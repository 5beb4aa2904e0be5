//! The native trace's per-function switches: each instrumented function's record (its name,
//! address, `on` byte and count) in the section the runtime reads, the constructor that hands a
//! linked file's records to the runtime, and which functions get their hooks in an outlined
//! clone.
//!
//! May import: config, mangling, size, ffi; imported by instrument (which builds the tests of a
//! switch into the hook calls).

use inkwell::attributes::AttributeLoc;
use inkwell::module::{Linkage, Module};
use inkwell::targets::TargetData;
use inkwell::types::StructType;
use inkwell::values::{FunctionValue, InstructionOpcode, IntValue, PointerValue};
use inkwell::AddressSpace;

use crate::config::{Config, Outline, Placement, OUTLINE_AUTO_HOSTED};
use crate::ffi;
use crate::mangling;

/// The runtime's entry that takes a linked file's records ([`register_functions`]).
pub(crate) const REGISTER_HOOK: &str = "__hookcc_register_functions";
/// The constructor that calls it, one a module (the runtime ignores a range it has).
pub(crate) const REGISTER_CTOR: &str = "__hookcc_register_module";

/// Hands the records of the file this module is linked into — an executable or a shared
/// library: the linker's `__start_hookcc_fns` and `__stop_hookcc_fns` of that file — to the
/// runtime before `main` (or at `dlopen`), by a constructor that calls
/// `__hookcc_register_functions(start, stop)` when a traced executable's runtime is there (a weak
/// reference: a library loaded by an untraced program calls nothing), so that the switches of
/// shared libraries' functions are switched with the executable's. The constructor carries
/// `done` (instrument's mark of a function never to instrument).
pub(crate) fn register_functions(module: &Module<'_>, done: &str) -> Result<(), String> {
    if module.get_function(REGISTER_CTOR).is_some() {
        return Ok(());
    }
    let context = module.get_context();
    let ptr = context.ptr_type(AddressSpace::default());
    let bound = |name: &str| {
        module.get_global(name).unwrap_or_else(|| {
            let g = module.add_global(context.i8_type().array_type(0), None, name);
            g.set_linkage(Linkage::ExternalWeak);
            g.set_visibility(inkwell::GlobalVisibility::Hidden);
            g
        })
    };
    let (start, stop) = (bound("__start_hookcc_fns"), bound("__stop_hookcc_fns"));
    let hook_type = context
        .void_type()
        .fn_type(&[ptr.into(), ptr.into()], false);
    let hook = module.get_function(REGISTER_HOOK).unwrap_or_else(|| {
        module.add_function(REGISTER_HOOK, hook_type, Some(Linkage::ExternalWeak))
    });
    let ctor = module.add_function(
        REGISTER_CTOR,
        context.void_type().fn_type(&[], false),
        Some(Linkage::Internal),
    );
    ctor.add_attribute(
        AttributeLoc::Function,
        context.create_string_attribute(done, ""),
    );
    let builder = context.create_builder();
    let entry = context.append_basic_block(ctor, "entry");
    let call = context.append_basic_block(ctor, "call");
    let done = context.append_basic_block(ctor, "done");
    let e = |e: inkwell::builder::BuilderError| e.to_string();
    builder.position_at_end(entry);
    let there = builder
        .build_is_not_null(hook.as_global_value().as_pointer_value(), "hookcc.runtime")
        .map_err(e)?;
    builder
        .build_conditional_branch(there, call, done)
        .map_err(e)?;
    builder.position_at_end(call);
    builder
        .build_call(
            hook,
            &[
                start.as_pointer_value().into(),
                stop.as_pointer_value().into(),
            ],
            "",
        )
        .map_err(e)?;
    builder.build_unconditional_branch(done).map_err(e)?;
    builder.position_at_end(done);
    builder.build_return(None).map_err(e)?;
    ffi::append_ctor(module, ctor, 65535);
    Ok(())
}

/// The section of the functions' records (`struct hkrt_fn` in runtime/src/trace/functions.h)
/// on a hosted target: the runtime finds them between `__start_hookcc_fns` and
/// `__stop_hookcc_fns`.
pub(crate) const FUNCTIONS_SECTION: &str = "hookcc_fns";
/// On bare metal, where a linker script copies only the sections it names from flash to RAM
/// (`.data` and `.data.*`: an orphan section's `on` bytes would start as whatever RAM held),
/// the records are data like any other.
pub(crate) const FUNCTIONS_SECTION_BARE: &str = ".data.hookcc_fns";

/// The records' section for the module's target ([`FUNCTIONS_SECTION`] on Linux).
pub(crate) fn functions_section(module: &Module<'_>) -> &'static str {
    let triple = module.get_triple();
    if triple.as_str().to_string_lossy().contains("linux") {
        FUNCTIONS_SECTION
    } else {
        FUNCTIONS_SECTION_BARE
    }
}

/// A native-trace function's switch: its record in [`FUNCTIONS_SECTION`] and, once the entry's
/// test is built, the value its `on` byte had at entry, which every exit of the call tests, so
/// that a call's exit is recorded exactly when its entry was, whatever the runtime switches
/// meanwhile.
#[derive(Clone, Copy)]
pub(crate) struct Switch<'ctx> {
    pub(crate) record: PointerValue<'ctx>,
    pub(crate) record_type: StructType<'ctx>,
    /// `on` as read at entry (set by [`position_entry_hook`]).
    pub(crate) on: Option<IntValue<'ctx>>,
    /// In an outlined clone ([`outlines`]), entered because its function read `on` as not 0:
    /// the clone reads it again and records the call when it is 1, else counts it — a call
    /// whose switch went to 0 between the two reads (a disable racing it) is counted, which
    /// is what happened, and never half recorded.
    pub(crate) entered_on: bool,
    /// Counts by calling the runtime's `__hookcc_count` (hosted targets: threads); bare metal
    /// adds to the record plainly (one core; some of its CPUs have no atomic read-modify-write).
    pub(crate) atomic: bool,
}

impl<'ctx> Switch<'ctx> {
    /// The address of the record's `on` byte (a constant).
    pub(crate) fn on_field(&self) -> PointerValue<'ctx> {
        let i32t = self.record_type.get_context().i32_type();
        // SAFETY: a constant GEP to a field of the record's own struct type.
        unsafe {
            self.record.const_gep(
                self.record_type,
                &[i32t.const_zero(), i32t.const_int(FN_FIELD_ON.into(), false)],
            )
        }
    }
}

/// Outlined hooks: whether `function`'s hooks go into a clone of it
/// ([`ffi::outline_hooked`]). `function` then starts with its switch's test and, when the
/// switch is on, tail-calls `NAME.hookcc`, a copy of its body with the hooks; switched off (or
/// tracing off), it runs its own body, with the prologue it has without hookcc. Hook calls kept
/// in a function that has no frame of its own give it one on every path (the stack's alignment
/// for the calls, a register to keep an argument in across them): on x86-64, a leaf switched
/// off paid 8 instructions a call where the test alone is 2; in a function with a frame, the
/// switch's value kept across the body costs a register, and a spill or a move, 7–10. The
/// price is the body twice in the binary, so only after inlining (before it, the inliner
/// would copy the test into callers and weigh a body twice its size), and by default
/// (`--hook-outline=auto`) only in functions that call nothing but tail calls
/// ([`calls_nothing`]) and, on a hosted target, functions of at most
/// [`OUTLINE_AUTO_HOSTED`] IR instructions. sqlite3.c -O2 against the plain build
/// (docs/performance.md, "Outlined hooks"): inline switches code +14 %; `leaf` (274 of 1 593
/// functions) code +17 %, compile time 1.03×, tracing off +8.6 % instructions; `200`
/// (functions of at most 200 IR instructions too) +46 %, 1.17×, +4.1 %; `all` +111 %, 1.47×,
/// +3.4 %.
/// `hosted`: the module is for a hosted target (what `auto` decides by).
pub(crate) fn outlines(config: &Config, function: FunctionValue<'_>, hosted: bool) -> bool {
    if config.placement != Placement::AfterInlining {
        return false;
    }
    let up_to =
        |most: u32| calls_nothing(function) || crate::size::instructions(function) <= most as usize;
    let chosen = match config.outline {
        Outline::None => false,
        Outline::All => true,
        Outline::Leaf => calls_nothing(function),
        Outline::UpTo(most) => up_to(most),
        Outline::Auto if hosted => up_to(OUTLINE_AUTO_HOSTED),
        Outline::Auto => calls_nothing(function),
    };
    chosen && ffi::can_outline(function)
}

/// Whether `function` makes no call but tail calls: none but intrinsics that are no call (the
/// memory intrinsics can become `memcpy` and friends), inline assembly, and calls the return
/// follows at once (a jump, once compiled).
pub(crate) fn calls_nothing(function: FunctionValue<'_>) -> bool {
    function.get_basic_block_iter().all(|block| {
        block.get_instructions().all(|i| match i.get_opcode() {
            InstructionOpcode::Invoke | InstructionOpcode::CallBr => false,
            InstructionOpcode::Call => {
                if ffi::is_tail_call_before_return(i) {
                    return true;
                }
                match ffi::called_function(i) {
                    Some(callee) => {
                        let name = callee.get_name().to_bytes();
                        callee.get_intrinsic_id() != 0
                            && !name.starts_with(b"llvm.mem")
                            && !name.starts_with(b"llvm.experimental")
                    }
                    None => ffi::is_inline_asm_call(i),
                }
            }
            _ => true,
        })
    })
}

/// The record's fields (`struct hkrt_fn` in runtime/src/trace/functions.h).
pub(crate) const FN_FIELD_ON: u32 = 2;
pub(crate) const FN_FIELD_FUNCTION_OFFSET: u32 = 5;
pub(crate) const FN_FIELD_COUNT: u32 = 6;
/// `on`: 1 records the call, 2 only counts it (the function is throttled), 0 does neither.
pub(crate) const FN_ON_RECORD: u64 = 1;
/// The runtime's count of a throttled function's call (into the calling thread's cache of
/// counts, added to the record's `count` later): `void __hookcc_count(struct hkrt_fn *)`.
pub(crate) const COUNT_HOOK: &str = "__hookcc_count";

/// Per-function switches (the native trace): gives `function` its record in
/// [`FUNCTIONS_SECTION`] — `{ const char *name; void *function; uint8_t on; uint8_t flags;
/// uint16_t reserved; int32_t function_offset; uint64_t count; }`, its name as people write it
/// (a Rust path, a demangled C++ name, a C symbol), its address (and again as an offset from
/// the field), `on` = 1 — which every hook call of the function tests first
/// ([`position_entry_hook`], [`position_hook`]): a function switched off costs a load and a
/// branch not taken at entry and a test at exit, on any target, without patching code. The
/// record is also what the hooks are passed: the function's identity in the trace. It is
/// `!associated` with its function: it never keeps a function alive that a linker collecting
/// garbage would drop (lld; GNU ld keeps such functions, as every `__start_` section's, unless
/// linked with `-z start-stop-gc`).
pub(crate) fn function_switch<'ctx>(
    module: &Module<'ctx>,
    function: FunctionValue<'ctx>,
) -> Switch<'ctx> {
    let context = module.get_context();
    let ptr = context.ptr_type(AddressSpace::default());
    let (i8t, i16t, i32t, i64t) = (
        context.i8_type(),
        context.i16_type(),
        context.i32_type(),
        context.i64_type(),
    );
    let record_type = context.struct_type(
        &[
            ptr.into(),
            ptr.into(),
            i8t.into(),
            i8t.into(),
            i16t.into(),
            i32t.into(),
            i64t.into(),
        ],
        false,
    );
    let symbol = function.get_name().to_string_lossy().into_owned();
    let text = mangling::demangled(&symbol).unwrap_or(symbol);
    let name_value = context.const_string(text.as_bytes(), true);
    let name = module.add_global(name_value.get_type(), None, "hookcc.fn.name");
    name.set_initializer(&name_value);
    name.set_constant(true);
    name.set_linkage(Linkage::Private);
    name.set_unnamed_addr(true);
    let record = module.add_global(record_type, None, "hookcc.fn");
    // `function_offset`: the function's address less the field's own, a link-time constant (a
    // PC-relative data relocation to the module's own definition), so that hookprof finds a
    // record's function in the ELF file's bytes alone, in a PIE or a shared library too, with
    // no dynamic relocation to apply.
    let address = TargetData::create(&module.get_data_layout().as_str().to_string_lossy());
    let word = context.ptr_sized_int_type(&address, None);
    // SAFETY: a constant GEP to a field of the record's own struct type.
    let field = unsafe {
        record.as_pointer_value().const_gep(
            record_type,
            &[
                i32t.const_zero(),
                i32t.const_int(FN_FIELD_FUNCTION_OFFSET.into(), false),
            ],
        )
    };
    let offset = ffi::local_definition(module, function)
        .const_to_int(word)
        .const_sub(field.const_to_int(word))
        .const_truncate_or_bit_cast(i32t);
    record.set_initializer(&record_type.const_named_struct(&[
        name.as_pointer_value().into(),
        function.as_global_value().as_pointer_value().into(),
        i8t.const_int(FN_ON_RECORD, false).into(),
        i8t.const_zero().into(),
        i16t.const_zero().into(),
        offset.into(),
        i64t.const_zero().into(),
    ]));
    record.set_linkage(Linkage::Private);
    // With its function's group, if it has one (a C++ inline function, a template): where the
    // linker keeps another object's copy, this record goes with this copy, whose local alias
    // `function_offset` refers to.
    if let Some(comdat) = function.as_global_value().get_comdat() {
        record.set_comdat(comdat);
    }
    let section = functions_section(module);
    record.set_section(Some(section));
    record.set_alignment(8);
    ffi::associate(record, function);
    Switch {
        record: record.as_pointer_value(),
        record_type,
        on: None,
        entered_on: false,
        atomic: section == FUNCTIONS_SECTION,
    }
}
