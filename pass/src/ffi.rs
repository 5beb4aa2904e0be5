//! The LLVM-C helper layer: what the pass does to IR through `unsafe` LLVM-C calls and the C++
//! shim's IR helpers (`hookcc_call_to_invoke`, …), each behind a safe function used by
//! [`crate::instrument`] and [`crate::setjmp`]. The plugin's entry points (what LLVM and the shim
//! call) are in [`crate::plugin`].
//!
//! May import: inkwell / llvm-sys and std only, nothing of this crate, so that the modules
//! that build on it (instrument, setjmp, plugin) never import each other in a circle.

use std::ffi::{CStr, CString};

use inkwell::basic_block::BasicBlock;
use inkwell::llvm_sys;
use inkwell::module::Module;
use inkwell::values::{AsValueRef, FunctionValue, InstructionValue};

extern "C" {
    fn hookcc_invoke_to_call(
        invoke: llvm_sys::prelude::LLVMValueRef,
    ) -> llvm_sys::prelude::LLVMValueRef;
    fn hookcc_block_starting_at(
        inst: llvm_sys::prelude::LLVMValueRef,
    ) -> llvm_sys::prelude::LLVMBasicBlockRef;
    fn hookcc_call_to_invoke(
        call: llvm_sys::prelude::LLVMValueRef,
        unwind: llvm_sys::prelude::LLVMBasicBlockRef,
    );
    fn hookcc_append_ctor(
        module: llvm_sys::prelude::LLVMModuleRef,
        function: llvm_sys::prelude::LLVMValueRef,
        priority: std::os::raw::c_int,
    );
    fn hookcc_split_before(
        inst: llvm_sys::prelude::LLVMValueRef,
    ) -> llvm_sys::prelude::LLVMBasicBlockRef;
    fn hookcc_can_outline(function: llvm_sys::prelude::LLVMValueRef) -> std::os::raw::c_int;
    fn hookcc_outline_hooked(
        function: llvm_sys::prelude::LLVMValueRef,
        on: llvm_sys::prelude::LLVMValueRef,
    ) -> llvm_sys::prelude::LLVMValueRef;
}

/// Whether [`outline_hooked`] may split `function` (the shim's `hookcc_can_outline`: not
/// varargs, no block whose address is taken, no swifterror, inalloca or preallocated
/// argument, no `llvm.localescape`).
pub(crate) fn can_outline(function: FunctionValue<'_>) -> bool {
    // SAFETY: `function` is a live function value.
    unsafe { hookcc_can_outline(function.as_value_ref()) != 0 }
}

/// Clones `function` into an internal, never-inlined `NAME.hookcc` and gives `function` a new
/// start: when the byte at `on` is not 0, a tail call of the clone with its arguments (the
/// shim's `hookcc_outline_hooked`). Returns the clone, for the hooks.
pub(crate) fn outline_hooked<'ctx>(
    function: FunctionValue<'ctx>,
    on: inkwell::values::PointerValue<'ctx>,
) -> FunctionValue<'ctx> {
    // SAFETY: `function` is a definition ([`can_outline`] checked it) and `on` a constant
    // pointer of the same module; the shim returns a function of that module.
    unsafe {
        let clone = hookcc_outline_hooked(function.as_value_ref(), on.as_value_ref());
        FunctionValue::new(clone).expect("the shim returns a function")
    }
}

/// Runs `function` (of `module`) before `main`, as a constructor of the given priority.
pub(crate) fn append_ctor(module: &Module<'_>, function: FunctionValue<'_>, priority: i32) {
    // SAFETY: `function` is a definition in `module`, which outlives the call.
    unsafe { hookcc_append_ctor(module.as_mut_ptr(), function.as_value_ref(), priority) }
}

/// Splits the block of `inst` before it; returns the new block, which starts with `inst` (the
/// old one keeps what came before and ends in a branch to it).
pub(crate) fn split_before<'ctx>(inst: InstructionValue<'ctx>) -> BasicBlock<'ctx> {
    // SAFETY: `inst` is a live instruction in a block with a terminator (it may be the
    // terminator itself); the block returned belongs to the same function and context.
    unsafe {
        hookcc_split_before(inst.as_value_ref());
    }
    inst.get_parent().expect("a split instruction has a block")
}
/// Turns `call` into an invoke unwinding to `unwind` (which must begin with a landingpad),
/// splitting its block after it.
pub(crate) fn call_to_invoke(call: InstructionValue<'_>, unwind: BasicBlock<'_>) {
    // SAFETY: `call` is a live call instruction (the caller checked the opcode) and `unwind` a
    // block of the same function starting with a landingpad.
    unsafe { hookcc_call_to_invoke(call.as_value_ref(), unwind.as_mut_ptr()) }
}

/// True if a call instruction can unwind: neither the call site nor its callee is `nounwind`,
/// and it is not inline assembly or an intrinsic.
pub(crate) fn call_may_unwind(call: InstructionValue<'_>) -> bool {
    use llvm_sys::core::*;
    let nounwind = inkwell::attributes::Attribute::get_named_enum_kind_id("nounwind");
    // SAFETY: `call` is a live call instruction; every value read is checked before use.
    unsafe {
        let inst = call.as_value_ref();
        if LLVMIsACallInst(inst).is_null() {
            return false;
        }
        if !LLVMGetCallSiteEnumAttribute(inst, llvm_sys::LLVMAttributeFunctionIndex, nounwind)
            .is_null()
        {
            return false;
        }
        let callee = LLVMGetCalledValue(inst);
        if !LLVMIsAInlineAsm(callee).is_null() {
            return false;
        }
        if !LLVMIsAFunction(callee).is_null() {
            if LLVMGetIntrinsicID(callee) != 0 {
                return false;
            }
            if !LLVMGetEnumAttributeAtIndex(callee, llvm_sys::LLVMAttributeFunctionIndex, nounwind)
                .is_null()
            {
                return false;
            }
        }
        true
    }
}
/// Gives `call` the debug location `location_from` has, or line 0 in the function's
/// subprogram when it has none: LLVM's verifier rejects a call without a location in a function
/// with debug info when the callee could be inlined, and line 0 says "compiler-generated".
pub(crate) fn copy_debug_location(
    call: llvm_sys::prelude::LLVMValueRef,
    location_from: llvm_sys::prelude::LLVMValueRef,
    function: llvm_sys::prelude::LLVMValueRef,
) {
    use llvm_sys::core::*;
    use llvm_sys::debuginfo::*;
    // SAFETY: all three are live values of the module being instrumented.
    unsafe {
        let mut location = LLVMInstructionGetDebugLoc(location_from);
        if location.is_null() {
            let scope = LLVMGetSubprogram(function);
            if scope.is_null() {
                return;
            }
            let context = LLVMGetTypeContext(LLVMTypeOf(function));
            location = LLVMDIBuilderCreateDebugLocation(context, 0, 0, scope, std::ptr::null_mut());
        }
        LLVMInstructionSetDebugLoc(call, location);
    }
}

/// The metadata kind that marks NITRO's entry hook calls with the function they were put in.
const FRAME_KIND: &str = "hookcc.frame";

/// Marks `call` (an entry hook call with a call-site argument) as `function`'s own, so that
/// after inlining [`relocate_inlined_call_sites`] can tell the copies inlining made.
pub(crate) fn mark_frame(
    call: llvm_sys::prelude::LLVMValueRef,
    function: llvm_sys::prelude::LLVMValueRef,
) {
    use llvm_sys::core::*;
    // SAFETY: `call` and `function` are live values of one module; the metadata node is made
    // in their context.
    unsafe {
        let context = LLVMGetTypeContext(LLVMTypeOf(function));
        let kind =
            LLVMGetMDKindIDInContext(context, FRAME_KIND.as_ptr().cast(), FRAME_KIND.len() as u32);
        let mut operand = LLVMValueAsMetadata(function);
        let node = LLVMMDNodeInContext2(context, &mut operand, 1);
        LLVMSetMetadata(call, kind, LLVMMetadataAsValue(context, node));
    }
}

/// After inlining: an entry hook call marked with another function than the one it is in is the
/// copy of an inlined callee's hook, whose `lr` (`llvm.returnaddress(0)`) now reads the
/// caller's own return address, the same for every frame inlined into it. Each such call gets,
/// instead, the address of a block that starts at the call: where in the caller the inlined
/// body runs, the closest there is to the return address its call would have had. Removes the
/// marks. Returns whether anything changed.
pub(crate) fn relocate_inlined_call_sites(module: &Module<'_>, hook: &str) -> bool {
    use llvm_sys::core::*;
    let Ok(name) = CString::new(hook) else {
        return false;
    };
    let mut changed = false;
    // SAFETY: every value comes from walking the live module; instructions are collected
    // before any block is split, and each is changed once.
    unsafe {
        let m = module.as_mut_ptr();
        let hook = LLVMGetNamedFunction(m, name.as_ptr());
        if hook.is_null() {
            return false;
        }
        let context = LLVMGetModuleContext(m);
        let kind =
            LLVMGetMDKindIDInContext(context, FRAME_KIND.as_ptr().cast(), FRAME_KIND.len() as u32);
        let mut function = LLVMGetFirstFunction(m);
        while !function.is_null() {
            let mut inlined = Vec::new();
            let mut block = LLVMGetFirstBasicBlock(function);
            while !block.is_null() {
                let mut inst = LLVMGetFirstInstruction(block);
                while !inst.is_null() {
                    if !LLVMIsACallInst(inst).is_null() && LLVMGetCalledValue(inst) == hook {
                        let mark = LLVMGetMetadata(inst, kind);
                        if !mark.is_null() {
                            let mut frame = [std::ptr::null_mut(); 1];
                            if LLVMGetMDNodeNumOperands(mark) == 1 {
                                LLVMGetMDNodeOperands(mark, frame.as_mut_ptr());
                            }
                            LLVMSetMetadata(inst, kind, std::ptr::null_mut());
                            changed = true;
                            if frame[0] != function {
                                inlined.push(inst);
                            }
                        }
                    }
                    inst = LLVMGetNextInstruction(inst);
                }
                block = LLVMGetNextBasicBlock(block);
            }
            for call in inlined {
                let start = hookcc_block_starting_at(call);
                let old = LLVMGetOperand(call, 1);
                LLVMSetOperand(call, 1, LLVMBlockAddress(function, start));
                if !old.is_null()
                    && !LLVMIsACallInst(old).is_null()
                    && LLVMGetFirstUse(old).is_null()
                {
                    LLVMInstructionEraseFromParent(old); // the inlined llvm.returnaddress
                }
            }
            function = LLVMGetNextFunction(function);
        }
    }
    changed
}

/// True if `inst` is a `musttail` call, after which nothing may come but the return.
pub(crate) fn is_musttail_call(inst: llvm_sys::prelude::LLVMValueRef) -> bool {
    use llvm_sys::core::*;
    // SAFETY: `inst` is a live instruction.
    unsafe {
        !LLVMIsACallInst(inst).is_null()
            && LLVMGetTailCallKind(inst) == llvm_sys::LLVMTailCallKind::LLVMTailCallKindMustTail
    }
}

/// Takes hookcc's marks (`annotate("hookcc:…")`, put there by the frontend plugin) out of
/// `llvm.global.annotations` and returns them: each function with its mark (`off`, `on`,
/// `inline`: the text after `hookcc:`). The other annotations stay; an array left empty is
/// deleted. Removing them matters: an annotation keeps its function alive, so a static function
/// nobody calls would otherwise survive into the object file. The mark strings themselves stay
/// (the dead array constant still refers to them); they live in section `llvm.metadata`, which
/// code generation never emits.
pub(crate) fn take_marks<'ctx>(module: &Module<'ctx>) -> Vec<(FunctionValue<'ctx>, String)> {
    use llvm_sys::core::*;
    const PREFIX: &str = "hookcc:";
    let mut marks = Vec::new();
    // SAFETY: `module` is the live module; every value below is read from it and checked for
    // the kind the C API call expects before use.
    unsafe {
        let module = module.as_mut_ptr();
        let name = c"llvm.global.annotations";
        let global = LLVMGetNamedGlobal(module, name.as_ptr());
        if global.is_null() {
            return marks;
        }
        let init = LLVMGetInitializer(global);
        if init.is_null() || LLVMIsAConstantArray(init).is_null() {
            return marks;
        }
        let element_type = LLVMGetElementType(LLVMTypeOf(init));
        let mut kept = Vec::new();
        for i in 0..LLVMGetNumOperands(init) as u32 {
            let entry = LLVMGetOperand(init, i);
            let target = strip_casts(LLVMGetOperand(entry, 0));
            let text_global = strip_casts(LLVMGetOperand(entry, 1));
            let text = global_string(text_global);
            match text.as_deref().and_then(|t| t.strip_prefix(PREFIX)) {
                Some(mark) if !LLVMIsAFunction(target).is_null() => {
                    let function = FunctionValue::new(target).expect("checked: a function");
                    marks.push((function, mark.to_string()));
                }
                _ => kept.push(entry),
            }
        }
        if marks.is_empty() {
            return marks;
        }
        let section = LLVMGetSection(global);
        let section = (!section.is_null()).then(|| CStr::from_ptr(section).to_owned());
        LLVMDeleteGlobal(global);
        if !kept.is_empty() {
            let array = LLVMConstArray2(element_type, kept.as_mut_ptr(), kept.len() as u64);
            let replacement = LLVMAddGlobal(module, LLVMTypeOf(array), name.as_ptr());
            LLVMSetInitializer(replacement, array);
            LLVMSetLinkage(replacement, llvm_sys::LLVMLinkage::LLVMAppendingLinkage);
            if let Some(section) = section {
                LLVMSetSection(replacement, section.as_ptr());
            }
        }
    }
    marks
}

/// Looks through constant casts (typed-pointer IR had bitcasts around annotation operands).
unsafe fn strip_casts(
    mut value: llvm_sys::prelude::LLVMValueRef,
) -> llvm_sys::prelude::LLVMValueRef {
    use llvm_sys::core::*;
    while !value.is_null() && !LLVMIsAConstantExpr(value).is_null() && LLVMGetNumOperands(value) > 0
    {
        value = LLVMGetOperand(value, 0);
    }
    value
}

/// The text of a global holding a C string constant, without its NUL.
unsafe fn global_string(global: llvm_sys::prelude::LLVMValueRef) -> Option<String> {
    use llvm_sys::core::*;
    if global.is_null() || LLVMIsAGlobalVariable(global).is_null() {
        return None;
    }
    let init = LLVMGetInitializer(global);
    if init.is_null()
        || LLVMIsAConstantDataSequential(init).is_null()
        || LLVMIsConstantString(init) == 0
    {
        return None;
    }
    let mut len = 0usize;
    let ptr = LLVMGetAsString(init, &mut len);
    let bytes = std::slice::from_raw_parts(ptr as *const u8, len);
    let bytes = bytes.strip_suffix(&[0]).unwrap_or(bytes);
    Some(String::from_utf8_lossy(bytes).into_owned())
}

/// The size of a pointer in address space 0 of the module's target, in bits (from its data
/// layout; 64 when the module has none).
pub(crate) fn pointer_size_bits(module: &Module<'_>) -> u32 {
    use llvm_sys::target::*;
    // SAFETY: the data layout belongs to the live module and is only read here.
    unsafe {
        let layout = LLVMGetModuleDataLayout(module.as_mut_ptr());
        if layout.is_null() {
            return 64;
        }
        LLVMPointerSize(layout) * 8
    }
}

/// The function a call or invoke instruction calls directly, if any.
pub(crate) fn called_function(inst: InstructionValue<'_>) -> Option<FunctionValue<'_>> {
    use llvm_sys::core::*;
    // SAFETY: `inst` is a live instruction; the callee is read only from a call or invoke and
    // checked to be a function.
    unsafe {
        let value = inst.as_value_ref();
        if LLVMIsACallInst(value).is_null() && LLVMIsAInvokeInst(value).is_null() {
            return None;
        }
        let callee = LLVMGetCalledValue(value);
        if callee.is_null() || LLVMIsAFunction(callee).is_null() {
            return None;
        }
        FunctionValue::new(callee)
    }
}

/// Whether `inst` is a call of inline assembly.
pub(crate) fn is_inline_asm_call(inst: InstructionValue<'_>) -> bool {
    use llvm_sys::core::*;
    // SAFETY: `inst` is a live instruction; the callee is read only from a call.
    unsafe {
        let value = inst.as_value_ref();
        if LLVMIsACallInst(value).is_null() {
            return false;
        }
        let callee = LLVMGetCalledValue(value);
        !callee.is_null() && !LLVMIsAInlineAsm(callee).is_null()
    }
}

/// Whether `inst` is a call marked `tail` (or `musttail`) that the function's return follows
/// at once: one the backend can make a jump.
pub(crate) fn is_tail_call_before_return(inst: InstructionValue<'_>) -> bool {
    use llvm_sys::core::*;
    // SAFETY: `inst` is a live instruction; the tail-call flag is read only from a call.
    unsafe {
        let value = inst.as_value_ref();
        if LLVMIsACallInst(value).is_null() || LLVMIsTailCall(value) == 0 {
            return false;
        }
    }
    inst.get_next_instruction()
        .is_some_and(|next| next.get_opcode() == inkwell::values::InstructionOpcode::Return)
}

/// Deletes a call or invoke whose result is unused; an invoke first becomes a call and a
/// branch to its normal destination (LLVM's changeToCall keeps the unwind block's PHIs right).
pub(crate) fn delete_call(inst: InstructionValue<'_>) {
    use llvm_sys::core::*;
    // SAFETY: `inst` is a live call or invoke (called_function checked it) returning void,
    // so nothing uses it; after changeToCall the invoke is gone and only the call is erased.
    unsafe {
        let mut value = inst.as_value_ref();
        if !LLVMIsAInvokeInst(value).is_null() {
            value = hookcc_invoke_to_call(value);
        }
        LLVMInstructionEraseFromParent(value);
    }
}

/// Gives `global` the `!associated` metadata naming `function`: the global goes to a section
/// of its own linked to the function's (`SHF_LINK_ORDER`), which a linker that collects
/// garbage keeps only while it keeps the function, so the global's reference to the function
/// never keeps a function alive that nothing else uses.
pub(crate) fn associate(global: inkwell::values::GlobalValue<'_>, function: FunctionValue<'_>) {
    use llvm_sys::core::*;
    const KIND: &str = "associated";
    // SAFETY: both values are live in the same context; the metadata node is created in it.
    unsafe {
        let context = LLVMGetTypeContext(LLVMTypeOf(function.as_value_ref()));
        let kind = LLVMGetMDKindIDInContext(context, KIND.as_ptr().cast(), KIND.len() as u32);
        let mut operand = LLVMValueAsMetadata(function.as_value_ref());
        let node = LLVMMDNodeInContext2(context, &mut operand, 1);
        LLVMGlobalSetMetadata(global.as_value_ref(), kind, node);
    }
}

/// `function` as this module's own definition: the function itself where its linkage is local,
/// else a private alias of it (a local symbol, as `-fno-semantic-interposition` makes), so that
/// a reference to it is resolved by the static linker even where the function may be
/// preempted (a default-visibility function of a shared library): a PC-relative reference to
/// the function's own symbol there needs a dynamic relocation, which lld refuses.
pub(crate) fn local_definition<'ctx>(
    module: &Module<'ctx>,
    function: FunctionValue<'ctx>,
) -> inkwell::values::PointerValue<'ctx> {
    use inkwell::module::Linkage;
    let global = function.as_global_value();
    if matches!(global.get_linkage(), Linkage::Internal | Linkage::Private) {
        return global.as_pointer_value();
    }
    use llvm_sys::core::*;
    const NAME: &CStr = c"hookcc.local";
    // SAFETY: the function and the module are live and in one context; the alias has the
    // function's value type and address space (0, where every function lives on the targets
    // hookcc supports), and is given private linkage before anything reads it.
    unsafe {
        let value_type = LLVMGlobalGetValueType(function.as_value_ref());
        let alias = LLVMAddAlias2(
            module.as_mut_ptr(),
            value_type,
            0,
            function.as_value_ref(),
            NAME.as_ptr(),
        );
        LLVMSetLinkage(alias, llvm_sys::LLVMLinkage::LLVMPrivateLinkage);
        inkwell::values::PointerValue::new(alias)
    }
}

/// LLVM's `preserve_most` calling convention (`CallingConv::PreserveMost`).
const PRESERVE_MOST: u32 = 14;

/// The native trace's hooks (`__hookcc_enter`, `__hookcc_exit`, `__hookcc_resync`,
/// `__hookcc_count`) are called with `preserve_most` on x86-64 and AArch64, where the runtime
/// defines them so (runtime/src/trace.c, HKRT_HOOK_CC; `<hookcc/trace.h>`'s
/// HOOKCC_NATIVE_HOOK for a program's own): they keep every register but a scratch one, so the
/// instrumented function saves nothing around its hook calls and keeps its switch's value in a
/// register across them — a function switched off pays its tests alone. C's elsewhere.
pub(crate) fn native_hook_convention(module: &Module<'_>) -> Option<u32> {
    let triple = module.get_triple();
    let triple = triple.as_str().to_string_lossy();
    let arch = triple.split('-').next().unwrap_or("");
    matches!(arch, "x86_64" | "aarch64" | "arm64").then_some(PRESERVE_MOST)
}

/// Finds or declares the native trace's runtime entry `void name(void *)` (`__hookcc_resync`,
/// `__hookcc_count`): `nounwind`, as the hooks (the runtime never unwinds through them), and
/// called with the native hooks' convention ([`native_hook_convention`]).
pub(crate) fn native_runtime_entry<'ctx>(
    module: &Module<'ctx>,
    name: &str,
    linkage: inkwell::module::Linkage,
) -> FunctionValue<'ctx> {
    let convention = native_hook_convention(module);
    if let Some(f) = module.get_function(name) {
        if let Some(convention) = convention {
            f.set_call_conventions(convention);
        }
        return f;
    }
    let context = module.get_context();
    let ptr = context.ptr_type(inkwell::AddressSpace::default());
    let f = module.add_function(
        name,
        context.void_type().fn_type(&[ptr.into()], false),
        Some(linkage),
    );
    f.add_attribute(
        inkwell::attributes::AttributeLoc::Function,
        context.create_enum_attribute(
            inkwell::attributes::Attribute::get_named_enum_kind_id("nounwind"),
            0,
        ),
    );
    if let Some(convention) = convention {
        f.set_call_conventions(convention);
    }
    f
}

/// A call of `entry` ([`native_runtime_entry`]) with `argument`, in its calling convention.
pub(crate) fn call_native_runtime_entry<'ctx>(
    builder: &inkwell::builder::Builder<'ctx>,
    entry: FunctionValue<'ctx>,
    argument: inkwell::values::PointerValue<'ctx>,
) -> Result<inkwell::values::CallSiteValue<'ctx>, String> {
    let call = builder
        .build_call(entry, &[argument.into()], "")
        .map_err(|e| e.to_string())?;
    call.set_call_convention(entry.get_call_conventions());
    Ok(call)
}
