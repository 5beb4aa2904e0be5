; Per-function switches on a hosted target: the records go to the section `hookcc_fns`, which
; the runtime walks between __start_hookcc_fns and __stop_hookcc_fns; each names its function
; as people write it (a C++ function demangled) and holds its address, and again as an offset
; from the field to a local alias of it (which hookprof reads in the ELF file), `!associated`
; with it (so the record never keeps a function alive that the linker would drop). The hooks
; are passed the record. `on` is read once at
; entry: 1 calls the entry hook, 2 counts the call (throttled), 0 does neither; every exit
; tests the value its entry read. TI's and NITRO's hooks get no switch (the seeds' hooks stay
; exactly as they were). On x86-64 the native hooks are called with preserve_most (the
; runtime defines them so): the caller keeps `on` in a register across them at no cost.
; RUN-OPT: -passes=hookcc -hookcc-entry=__hookcc_enter -hookcc-exit=__hookcc_exit -hookcc-entry-parm=address -hookcc-exit-parm=exit-address
; RUN-OPT: --check-prefix=TI -passes=hookcc -hookcc-entry=entry_hook -hookcc-exit=exit_hook -hookcc-entry-parm=address -hookcc-exit-parm=address

target triple = "x86_64-unknown-linux-gnu"

; Each module hands its file's records to the runtime, when there is one (weak references).
; CHECK-DAG: @__start_hookcc_fns = extern_weak hidden global [0 x i8]
; CHECK-DAG: @__stop_hookcc_fns = extern_weak hidden global [0 x i8]
; CHECK-DAG: @llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 65535, ptr @__hookcc_register_module, ptr null }]
; CHECK-DAG: c"ns::parse(int)\00"
; CHECK-DAG: @[[REC:hookcc.fn[.0-9]*]] = private global { ptr, ptr, i8, i8, i16, i32, i64 } { ptr @{{.*}}, ptr @_ZN2ns5parseEi, i8 1, i8 0, i16 0, i32 trunc (i64 sub (i64 ptrtoint (ptr @[[LOCAL:hookcc.local[.0-9]*]] to i64), i64 ptrtoint (ptr getelementptr ({{.*}}, ptr @[[REC]], i32 0, i32 5) to i64)) to i32), i64 0 }, section "hookcc_fns", align 8, !associated ![[FN:[0-9]+]]
; CHECK-DAG: @[[LOCAL]] = private alias i32 (i32), ptr @_ZN2ns5parseEi
; CHECK-LABEL: define i32 @_ZN2ns5parseEi(
; CHECK: %[[ON:.*]] = load volatile i8, ptr getelementptr ({{.*}}, i32 0, i32 2)
; CHECK: icmp ne i8 %[[ON]], 0
; CHECK: icmp eq i8 %[[ON]], 1
; CHECK: call preserve_mostcc void @__hookcc_count(ptr @hookcc.fn)
; CHECK: call preserve_mostcc void @__hookcc_enter(ptr @[[REC]])
; CHECK-NOT: load volatile
; CHECK: icmp eq i8 %[[ON]], 1
; CHECK: call preserve_mostcc void @__hookcc_exit(
; CHECK: declare extern_weak void @__hookcc_register_functions(ptr, ptr)
; CHECK-LABEL: define internal void @__hookcc_register_module()
; CHECK: icmp ne ptr @__hookcc_register_functions, null
; CHECK: call void @__hookcc_register_functions(ptr @__start_hookcc_fns, ptr @__stop_hookcc_fns)
; CHECK: ![[FN]] = !{ptr @_ZN2ns5parseEi}
; TI-NOT: hookcc_fns
; TI-LABEL: define i32 @_ZN2ns5parseEi(
; TI-NOT: load volatile
; TI: call void @entry_hook(ptr @_ZN2ns5parseEi)
define i32 @_ZN2ns5parseEi(i32 %x) {
  ret i32 %x
}
