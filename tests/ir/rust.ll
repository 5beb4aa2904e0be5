; Rust modules: a #[hookcc::no_hooks] mark (a call to hookcc::__private::hooks_off, deleted),
; rust_eh_personality for the cleanup of a module where no function has a personality (a rustc
; codegen unit without landing pads), and the options as the hookcc-options<…> pipeline element
; rustc gets, with an exclude glob matched on demangled names.
; RUN-OPT: -passes=hookcc-options<entry=E;entry-parm=none;exit=X;exit-parm=none;exclude=m::skip*>,hookcc

declare void @_RNvCs1234_1m9may_panic()

define internal void @_RNvNtCs4fqI2P2rA04_6hookcc9___private9hooks_off() {
  ret void
}

; CHECK-LABEL: define void @_RNvCs1234_1m5quiet()
; CHECK-NEXT: ret void
define void @_RNvCs1234_1m5quiet() {
  call void @_RNvNtCs4fqI2P2rA04_6hookcc9___private9hooks_off()
  ret void
}

; CHECK-LABEL: define void @_RNvCs1234_1m6skip_a()
; CHECK-NEXT: ret void
define void @_RNvCs1234_1m6skip_a() {
  ret void
}

; CHECK-LABEL: define void @_RNvCs1234_1m4loud() {{.*}}personality ptr @rust_eh_personality
; CHECK-NEXT: call void @E()
; CHECK-NEXT: invoke void @_RNvCs1234_1m9may_panic()
; CHECK: call void @X()
; CHECK-NEXT: ret void
; CHECK: hookcc.unwind:
; CHECK-NEXT: %hookcc.exception = landingpad { ptr, i32 }
; CHECK-NEXT: cleanup
; CHECK-NEXT: call void @X()
; CHECK-NEXT: resume { ptr, i32 } %hookcc.exception
define void @_RNvCs1234_1m4loud() {
  call void @_RNvCs1234_1m9may_panic()
  ret void
}
