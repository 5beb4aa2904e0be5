; Native trace hooks: entry after the allocas with the address of the function's record, exit
; before every return with the address + 2 (bit 1 marks an exit record; records are 8-byte
; aligned, and the function is still aligned to 4 bytes); nothing for declarations, available_externally bodies, naked functions,
; the runtime's own functions or functions marked "hookcc-off".
; RUN-OPT: -passes=hookcc -hookcc-entry=__hookcc_enter -hookcc-exit=__hookcc_exit -hookcc-entry-parm=address -hookcc-exit-parm=exit-address

declare i32 @external(i32)

; Every hook call is guarded by the function's switch (its record's `on` byte, read once at
; entry by a volatile load): `if (on) { if (on == 1) enter(...); else count++; }` at entry (a
; plain add off Linux: bare metal), `if (on == 1) exit(...)` at each exit, with the value read
; at entry.
; CHECK: @[[NAME:hookcc.fn.name[.0-9]*]] = private unnamed_addr constant [12 x i8] c"two_returns\00"
; CHECK: @[[REC:hookcc.fn[.0-9]*]] = private global { ptr, ptr, i8, i8, i16, i32, i64 } { ptr @[[NAME]], ptr @two_returns, i8 1, i8 0, i16 0, i32 trunc (i64 sub (i64 ptrtoint (ptr @{{hookcc.local[.0-9]*}} to i64), i64 ptrtoint (ptr getelementptr ({{.*}}, ptr @[[REC]], i32 0, i32 5) to i64)) to i32), i64 0 }, section ".data.hookcc_fns", align 8, !associated
; CHECK: @[[TAIL_REC:hookcc.fn[.0-9]*]] = private global {{.*}} ptr @tail,
; CHECK: @[[NEVER_REC:hookcc.fn[.0-9]*]] = private global {{.*}} ptr @never_returns,
; CHECK-LABEL: define i32 @two_returns(i32 %x)
; CHECK-SAME: align 4
; CHECK-NEXT: entry:
; CHECK-NEXT: %slot = alloca i32
; CHECK-NEXT: %hookcc.on = load volatile i8, ptr getelementptr ({ ptr, ptr, i8, i8, i16, i32, i64 }, ptr @[[REC]], i32 0, i32 2)
; CHECK-NEXT: %hookcc.is_on = icmp ne i8 %hookcc.on, 0
; CHECK-NEXT: br i1 %hookcc.is_on, label %[[SWITCH:hookcc.switch[0-9]*]], label %[[AFTER:hookcc.after[0-9]*]]
; CHECK: [[SWITCH]]:
; CHECK-NEXT: %hookcc.records = icmp eq i8 %hookcc.on, 1
; CHECK-NEXT: br i1 %hookcc.records, label %[[HOOK:hookcc.hook[0-9]*]], label %[[COUNT:hookcc.count[0-9]*]]
; CHECK: [[COUNT]]:
; CHECK-NEXT: load i64, ptr getelementptr ({ ptr, ptr, i8, i8, i16, i32, i64 }, ptr @[[REC]], i32 0, i32 6)
; CHECK-NEXT: add i64
; CHECK-NEXT: store i64
; CHECK-NEXT: br label %[[AFTER]]
; CHECK: [[HOOK]]:
; CHECK-NEXT: call void @__hookcc_enter(ptr @[[REC]])
; CHECK-NEXT: br label %[[AFTER]]
; CHECK: neg:
; CHECK-NEXT: icmp eq i8 %hookcc.on, 1
; CHECK: call void @__hookcc_exit(ptr getelementptr (i8, ptr @[[REC]], i64 2))
; CHECK-NEXT: br label %[[NEG_RET:hookcc.after[0-9]*]]
; CHECK: [[NEG_RET]]:
; CHECK-NEXT: ret i32 0
; CHECK: pos:
; CHECK-NEXT: %v = call i32 @external(i32 %x)
; CHECK-NEXT: icmp eq i8 %hookcc.on, 1
; CHECK: call void @__hookcc_exit(ptr getelementptr (i8, ptr @[[REC]], i64 2))
; CHECK-NEXT: br label %[[POS_RET:hookcc.after[0-9]*]]
; CHECK: [[POS_RET]]:
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
; CHECK: call void @__hookcc_exit(ptr getelementptr (i8, ptr @[[TAIL_REC]], i64 2))
; CHECK-NEXT: br label %[[TAIL:hookcc.after[0-9]*]]
; CHECK: [[TAIL]]:
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
; CHECK: call void @__hookcc_enter(ptr @[[NEVER_REC]]
; CHECK-NOT: call void @__hookcc_exit
; CHECK: unreachable
define void @never_returns() {
  call void @abort()
  unreachable
}
declare void @abort()

; CHECK: declare void @__hookcc_enter(ptr) #[[NU:[0-9]+]]
; CHECK: declare void @__hookcc_exit(ptr) #[[NU]]
; CHECK: attributes #[[NU]] = { nounwind }
