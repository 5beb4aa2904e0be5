; The frontend plugin's marks: annotate("hookcc:off|on|inline") entries in
; llvm.global.annotations become function attributes and leave the array; other annotations
; stay. Default on: "off" functions get no hooks. Default off: only "on" functions get hooks.
; RUN-OPT: -passes=hookcc -hookcc-entry=E --check-prefix=DEFON
; RUN-OPT: -passes=hookcc -hookcc-entry=E -hookcc-default-off --check-prefix=DEFOFF
; RUN-OPT: -passes=hookcc -hookcc-entry=E -hookcc-skip-inline --check-prefix=TI

@.off = private unnamed_addr constant [11 x i8] c"hookcc:off\00", section "llvm.metadata"
@.on = private unnamed_addr constant [10 x i8] c"hookcc:on\00", section "llvm.metadata"
@.inline = private unnamed_addr constant [14 x i8] c"hookcc:inline\00", section "llvm.metadata"
@.user = private unnamed_addr constant [5 x i8] c"mine\00", section "llvm.metadata"
@.file = private unnamed_addr constant [4 x i8] c"a.c\00", section "llvm.metadata"
@llvm.global.annotations = appending global [4 x { ptr, ptr, ptr, i32, ptr }] [
  { ptr, ptr, ptr, i32, ptr } { ptr @quiet, ptr @.off, ptr @.file, i32 1, ptr null },
  { ptr, ptr, ptr, i32, ptr } { ptr @loud, ptr @.on, ptr @.file, i32 2, ptr null },
  { ptr, ptr, ptr, i32, ptr } { ptr @small, ptr @.inline, ptr @.file, i32 3, ptr null },
  { ptr, ptr, ptr, i32, ptr } { ptr @plain, ptr @.user, ptr @.file, i32 4, ptr null }
], section "llvm.metadata"

; Only the user's own annotation is left.
; DEFON: @llvm.global.annotations = appending global [1 x { ptr, ptr, ptr, i32, ptr }] [{ ptr, ptr, ptr, i32, ptr } { ptr @plain, ptr @.user, ptr @.file, i32 4, ptr null }], section "llvm.metadata"

; DEFON-LABEL: define void @quiet()
; DEFON-NEXT: ret void
; DEFON-LABEL: define void @loud()
; DEFON-NEXT: call void @E()
; DEFON-LABEL: define void @small()
; DEFON-NEXT: call void @E()
; DEFON-LABEL: define void @plain()
; DEFON-NEXT: call void @E()

; DEFOFF-LABEL: define void @quiet()
; DEFOFF-NEXT: ret void
; DEFOFF-LABEL: define void @loud()
; DEFOFF-NEXT: call void @E()
; DEFOFF-LABEL: define void @small()
; DEFOFF-NEXT: ret void
; DEFOFF-LABEL: define void @plain()
; DEFOFF-NEXT: ret void

; TI-LABEL: define void @small()
; TI-NEXT: ret void
; TI-LABEL: define void @plain()
; TI-NEXT: call void @E()

define void @quiet() {
  ret void
}
define void @loud() {
  ret void
}
define void @small() {
  ret void
}
define void @plain() {
  ret void
}
