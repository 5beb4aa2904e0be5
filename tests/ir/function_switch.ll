; Per-function switches on a hosted target: the records go to the section `hookcc_fns`, which
; the runtime walks between __start_hookcc_fns and __stop_hookcc_fns; each names its function
; as people write it (a C++ function demangled); the record holds no function address (so it
; never keeps a function alive). TI's and NITRO's hooks get no switch (the seeds' hooks stay
; exactly as they were).
; RUN-OPT: -passes=hookcc -hookcc-entry=__hookcc_enter -hookcc-exit=__hookcc_exit -hookcc-entry-parm=address -hookcc-exit-parm=exit-address
; RUN-OPT: --check-prefix=TI -passes=hookcc -hookcc-entry=entry_hook -hookcc-exit=exit_hook -hookcc-entry-parm=address -hookcc-exit-parm=address

target triple = "x86_64-unknown-linux-gnu"

; CHECK: c"ns::parse(int)\00"
; CHECK: { ptr, i8, i8, i16, i32 } { ptr @{{.*}}, i8 1, i8 0, i16 0, i32 0 }, section "hookcc_fns", align 8
; CHECK-LABEL: define i32 @_ZN2ns5parseEi(
; CHECK: load volatile i8
; CHECK: call void @__hookcc_enter(ptr @_ZN2ns5parseEi)
; CHECK: call void @__hookcc_exit(
; TI-NOT: hookcc_fns
; TI-LABEL: define i32 @_ZN2ns5parseEi(
; TI-NOT: load volatile
; TI: call void @entry_hook(ptr @_ZN2ns5parseEi)
define i32 @_ZN2ns5parseEi(i32 %x) {
  ret i32 %x
}
