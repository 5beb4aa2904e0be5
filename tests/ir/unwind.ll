; Exceptions: a call that may throw becomes an invoke to a cleanup that calls the exit hook and
; resumes; an existing resume gets the exit hook before it; nounwind calls and functions are
; left alone.
; RUN-OPT: -passes=hookcc -hookcc-exit=X

declare void @may_throw()
declare void @safe() nounwind
declare i32 @__gxx_personality_v0(...)

; CHECK-LABEL: define void @_Z6callerv() {{.*}}personality ptr @__gxx_personality_v0
; CHECK: call void @safe()
; CHECK-NEXT: invoke void @may_throw()
; CHECK-NEXT: to label %[[CONT:.*]] unwind label %hookcc.unwind
; CHECK: [[CONT]]:
; CHECK-NEXT: call void @X()
; CHECK-NEXT: ret void
; CHECK: hookcc.unwind:
; CHECK-NEXT: %hookcc.exception = landingpad { ptr, i32 }
; CHECK-NEXT: cleanup
; CHECK-NEXT: call void @X()
; CHECK-NEXT: resume { ptr, i32 } %hookcc.exception
define void @_Z6callerv() {
  call void @safe()
  call void @may_throw()
  ret void
}

; CHECK-LABEL: define void @with_cleanup()
; CHECK: lpad:
; CHECK-NEXT: %lp = landingpad { ptr, i32 }
; CHECK-NEXT: cleanup
; CHECK-NEXT: call void @X()
; CHECK-NEXT: resume { ptr, i32 } %lp
define void @with_cleanup() personality ptr @__gxx_personality_v0 {
  invoke void @may_throw() to label %ok unwind label %lpad
ok:
  ret void
lpad:
  %lp = landingpad { ptr, i32 } cleanup
  resume { ptr, i32 } %lp
}

; CHECK-LABEL: define void @c_function()
; CHECK-NEXT: call void @may_throw()
; CHECK-NEXT: call void @X()
; CHECK-NEXT: ret void
define void @c_function() nounwind {
  call void @may_throw()
  ret void
}
