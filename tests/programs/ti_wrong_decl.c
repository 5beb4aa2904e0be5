/* Declares the hook with a signature that disagrees with --entry_parm=name. */
void __entry_hook(int level);

int main(void) { return 0; }
