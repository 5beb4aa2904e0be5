; Native trace hooks: entry after the allocas, exit before every return, call site from
; llvm.returnaddress, nothing for declarations, available_externally bodies, naked functions,
; the runtime's own functions or functions marked "hookcc-off".
; RUN-OPT: -passes=hookcc -hookcc-entry=__hookcc_enter -hookcc-exit=__hookcc_exit -hookcc-entry-parm=address-callsite -hookcc-exit-parm=address-callsite

declare i32 @external(i32)

; CHECK-LABEL: define i32 @two_returns(i32 %x)
; CHECK-NEXT: entry:
; CHECK-NEXT: %slot = alloca i32
; CHECK-NEXT: %[[CS:.*]] = call ptr @llvm.returnaddress(i32 0)
; CHECK-NEXT: call void @__hookcc_enter(ptr @two_returns, ptr %[[CS]])
; CHECK: neg:
; CHECK-NEXT: call void @__hookcc_exit(ptr @two_returns, ptr %[[CS]])
; CHECK-NEXT: ret i32 0
; CHECK: pos:
; CHECK-NEXT: %v = call i32 @external(i32 %x)
; CHECK-NEXT: call void @__hookcc_exit(ptr @two_returns, ptr %[[CS]])
; CHECK-NEXT: ret i32 %v
define i32 @two_returns(i32 %x) {
entry:
  %slot = alloca i32
  store i32 %x, ptr %slot
  %c = icmp slt i32 %x, 0
  br i1 %c, label %neg, label %pos
neg:
  ret i32 0
pos:
  %v = call i32 @external(i32 %x)
  ret i32 %v
}

; Nothing may come between a musttail call and its return.
; CHECK-LABEL: define i32 @tail(i32 %x)
; CHECK: call void @__hookcc_exit(ptr @tail
; CHECK-NEXT: %r = musttail call i32 @two_returns(i32 %x)
; CHECK-NEXT: ret i32 %r
define i32 @tail(i32 %x) {
  %r = musttail call i32 @two_returns(i32 %x)
  ret i32 %r
}

; CHECK-LABEL: define available_externally i32 @avail(
; CHECK-NOT: call void @__hookcc
; CHECK: ret i32
define available_externally i32 @avail(i32 %x) {
  ret i32 %x
}

; CHECK-LABEL: define void @bare(
; CHECK-NOT: call void @__hookcc
; CHECK: ret void
define void @bare() naked {
  ret void
}

; CHECK-LABEL: define void @__hookcc_internal(
; CHECK-NOT: call void @__hookcc
; CHECK: ret void
define void @__hookcc_internal() {
  ret void
}

; CHECK-LABEL: define void @marked_off(
; CHECK-NOT: call void @__hookcc
; CHECK: ret void
define void @marked_off() "hookcc-off" {
  ret void
}

; A function that never returns gets an entry hook and no exit hook.
; CHECK-LABEL: define void @never_returns(
; CHECK: call void @__hookcc_enter(ptr @never_returns
; CHECK-NOT: call void @__hookcc_exit
; CHECK: unreachable
define void @never_returns() {
  call void @abort()
  unreachable
}
declare void @abort()

; CHECK: declare void @__hookcc_enter(ptr, ptr) #[[NU:[0-9]+]]
; CHECK: declare void @__hookcc_exit(ptr, ptr) #[[NU]]
; CHECK: attributes #[[NU]] = { nounwind }
