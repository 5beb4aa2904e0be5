; Issue 27 item 8: <hookcc/gprof.h> declares the seed's __profile_mcount(uintptr_t, uintptr_t),
; and a firmware's own mcount calls it in a translation unit the gprof build instruments: the
; pass calls the declared type, the pointers turned into pointer-sized integers. A 32-bit
; integer on a 64-bit target is still the wrong type (tests/ir/wrong_hook_type.ll).
; RUN-OPT: -passes=hookcc -hookcc-entry=__profile_mcount -hookcc-entry-parm=callsite-address
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

declare void @__profile_mcount(i64, i64)

; CHECK-LABEL: define void @own_mcount(i64 %from, i64 %to)
; CHECK-NEXT: [[RA:%.*]] = call ptr @llvm.returnaddress(i32 0)
; CHECK-NEXT: [[CALLER:%.*]] = ptrtoint ptr [[RA]] to i64
; CHECK-NEXT: call void @__profile_mcount(i64 [[CALLER]], i64 ptrtoint (ptr @own_mcount to i64))
; CHECK-NEXT: call void @__profile_mcount(i64 %from, i64 %to)
define void @own_mcount(i64 %from, i64 %to) {
  call void @__profile_mcount(i64 %from, i64 %to)
  ret void
}
