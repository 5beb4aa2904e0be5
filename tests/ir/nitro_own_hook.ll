; A program's own `void __PROFILE_ENTRY(const char *)` (the seed's "other profilers"): the
; entry hook is called with the full NITRO argument list through the existing function.
; RUN-OPT: -passes=hookcc -hookcc-entry=__PROFILE_ENTRY -hookcc-entry-parm=name-callsite-args -hookcc-exit=__PROFILE_EXIT
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"

; CHECK-LABEL: define void @work(i32 %x)
; CHECK: call void @__PROFILE_ENTRY(ptr @hookcc.name, ptr %{{.*}}, i64 %{{.*}}, i64 0, i64 0, i64 0)
; CHECK: call void @__PROFILE_EXIT()
define void @work(i32 %x) {
  ret void
}

; CHECK-LABEL: define void @__PROFILE_ENTRY(ptr %name)
; CHECK-NEXT: ret void
define void @__PROFILE_ENTRY(ptr %name) {
  ret void
}
