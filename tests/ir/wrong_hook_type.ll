; A hook already declared with another type is a diagnostic naming the hook, not a crash.
; RUN-OPT: -passes=hookcc -hookcc-entry=on_entry -hookcc-entry-parm=address
declare void @on_entry(i32)
define void @f() {
  ret void
}
; ERROR: hookcc: hook `on_entry` is declared in this translation unit with type `void (i32)`
; ERROR: void on_entry(void (*addr)())
