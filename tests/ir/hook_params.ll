; Hook signatures for each parameter kind, and a module that already declares a hook.
; RUN-OPT: -passes=hookcc -hookcc-entry=on_entry -hookcc-entry-parm=name --check-prefix=NAME
; RUN-OPT: -passes=hookcc -hookcc-exit=on_exit -hookcc-exit-parm=address --check-prefix=ADDR
; RUN-OPT: -passes=hookcc -hookcc-entry=both -hookcc-exit=both --check-prefix=NONE

; NAME: @hookcc.name = private unnamed_addr constant [5 x i8] c"work\00"
; NAME-LABEL: define i32 @work(
; NAME-NEXT: call void @on_entry(ptr @hookcc.name)
; NAME-NOT: call void @on_exit
; NAME: ret i32

; ADDR-LABEL: define i32 @work(
; ADDR-NOT: call void @on_entry
; ADDR: call void @on_exit(ptr @work)
; ADDR-NEXT: ret i32

; NONE-LABEL: define i32 @work(
; NONE-NEXT: call void @both()
; NONE-NEXT: call void @both()
; NONE-NEXT: ret i32 %x
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
define i32 @work(i32 %x) {
  ret i32 %x
}

; NITRO's __PROFILE_ENTRY: name, call site and the first four integer/pointer arguments as
; uintptr_t (floats skipped, signext honoured, missing ones 0).
; RUN-OPT: -passes=hookcc -hookcc-entry=__PROFILE_ENTRY -hookcc-entry-parm=name-callsite-args -hookcc-exit=__PROFILE_EXIT --check-prefix=NITRO
; NITRO-LABEL: define i32 @mixed(double %d, i32 signext %a, ptr %p, i8 %b)
; NITRO: %[[LR:.*]] = call ptr @llvm.returnaddress(i32 0)
; NITRO-NEXT: %[[A:.*]] = sext i32 %a to i64
; NITRO-NEXT: %[[P:.*]] = ptrtoint ptr %p to i64
; NITRO-NEXT: %[[B:.*]] = zext i8 %b to i64
; NITRO-NEXT: call void @__PROFILE_ENTRY(ptr @hookcc.name{{.*}}, ptr %[[LR]], i64 %[[A]], i64 %[[P]], i64 %[[B]], i64 0)
; NITRO: call void @__PROFILE_EXIT()
; NITRO-NEXT: ret i32 %a
; NITRO: declare void @__PROFILE_ENTRY(ptr, ptr, i64, i64, i64, i64)
define i32 @mixed(double %d, i32 signext %a, ptr %p, i8 %b) {
  ret i32 %a
}

; Address hooks (TI): functions are at least 4-byte aligned, so the record type fits in the
; address's low 2 bits.
; RUN-OPT: -passes=hookcc -hookcc-entry=on_entry -hookcc-entry-parm=address --check-prefix=ALIGN
; ALIGN: define i32 @work(i32 %x) {{.*}}align 4
; ALIGN: define i32 @mixed({{.*}}align 4

; gprof's arcs: __profile_mcount(caller_pc, callee_pc), the call site and the function.
; RUN-OPT: -passes=hookcc -hookcc-entry=__profile_mcount -hookcc-entry-parm=callsite-address --check-prefix=ARC
; ARC-LABEL: define i32 @arc(
; ARC: %[[CS:.*]] = call ptr @llvm.returnaddress(i32 0)
; ARC-NEXT: call void @__profile_mcount(ptr %[[CS]], ptr @arc)
; ARC-NEXT: ret i32
; ARC: declare void @__profile_mcount(ptr, ptr)
define i32 @arc(i32 %x) {
  ret i32 %x
}
