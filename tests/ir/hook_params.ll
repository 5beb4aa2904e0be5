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
define i32 @work(i32 %x) {
  ret i32 %x
}
