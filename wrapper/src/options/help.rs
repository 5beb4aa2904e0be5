//! `hookcc --help` (and the manual page made from it, crate::man).

pub const HELP: &str = "\
hookcc — a drop-in C/C++ compiler (clang-19) that inserts function entry/exit hooks

Usage: hookcc [hookcc options] [clang options] files…
       hookcc++ …            (the same, as a C++ compiler)

Every argument that is not one of hookcc's passes to clang unchanged; without a hook option
hookcc adds nothing and produces exactly what clang-19 produces. An argument clang does not
know either, near one of hookcc's options (--trce), gets a note naming that option after
clang's error.

hookcc options:
  --trace               insert hookcc's native entry/exit hooks into every function defined in
                        the sources (at -O1 and above: every function left after inlining; see
                        --hook-placement), and link the trace runtime: the program writes
                        <program>.<pid>.hktrace (or $HOOKCC_OUTPUT); read it with
                        `hookprof report`
  --trace-clock=fast|serialized
                        serialized: the trace runtime's hooks let the instructions before them
                        finish before reading the clock, so a hook pair costs the same beside
                        any code and compensation subtracts what it cost (about twice the
                        default's cost per call; docs/performance.md); HOOKCC_TRACE_CLOCK too
  --trace-start=F,…     record only from an entry of one of these functions (symbol names as
                        nm prints them: mangled for C++ and Rust) to its return, each time;
  --trace-stop=F,…      or, with this, to the return of the first of these called after it.
                        Per thread; built into the program, HOOKCC_TRACE_START and
                        HOOKCC_TRACE_STOP override them at run time (docs/recording.md)
  --hook-exclude=GLOB   no hooks in functions whose name (symbol, or demangled Rust name
                        such as mycrate::parse::*) matches GLOB (`*`, `?`); repeatable
  --hook-exclude-crate=NAME,…
                        no hooks in Rust functions defined in these crates (std,core,alloc:
                        also their code instantiated or inlined into yours), judged from the
                        symbol's crate path, not the printed name; `*`, `?` allowed
  --hook-include=GLOB   only functions whose name matches one such GLOB get hooks
                        (either option also as =@FILE: one glob per line, # comments)
  --pfp-functions=GLOB  a TI profile point (<hookcc/pfp.h>) around each function whose name
                        matches GLOB (repeatable, or =@FILE): ids from 31 down, statistics
                        printed at exit with the function's name (links the pfp runtime)
  --hook-intrinsics     hooks in always_inline functions and in the functions of the
                        compiler's own headers (intrinsics such as _mm256_add_epi32) too,
                        which get none by default
  --hook-min-size=N     no hooks in functions of fewer than N LLVM IR instructions that
                        have no loop (as XRay's -fxray-instruction-threshold), unless
                        --hook-include names them
  --hook-outline=auto|leaf|all|none|N
                        with --trace and the placement after inlining, which functions
                        have their hooks in a clone NAME.hookcc, so that switched off they
                        run their own body (no frame of the hooks'): `leaf` the functions
                        that call nothing but tail calls; N those and the functions of at
                        most N LLVM IR instructions; `all` every one (code about twice the
                        plain build's); `auto` (the default) 200 on a hosted target, leaf
                        on bare metal. Tracing off then costs about 4 % of instructions
                        on SQLite (leaf: 8 %)
  --hook-placement=source|after-inlining|auto
                        when the hooks go in: `source` gives every function of the source
                        hooks, inlined bodies keeping theirs (exact source-level counts);
                        `after-inlining` only the functions the optimizer leaves (a body it
                        inlines records nothing, and costs nothing); `auto` source at -O0,
                        after inlining at -O1 and above. Default: auto with --trace; source
                        with the TI, NITRO, GCC and pfp hooks; after-inlining with gprof.
                        Every runtime honours it (docs/driver.md, docs/performance.md)
  --hook-runtime=NAME   runtime component linked into executables: trace, ti,
                        calltrace, functioncost, pfp (TI profile points, <hookcc/pfp.h>:
                        needs no hook option), gprof (a PC histogram and call-graph arcs
                        from its own entry hooks: writes gmon.out for GNU gprof), none (default: trace with --trace, the
                        NITRO_PROFILE_TYPE component if set, else none)

TI cgtools dialect (docs/dialects.md):
  --entry_hook[=NAME]   call NAME (default __entry_hook) at every function entry
  --exit_hook[=NAME]    call NAME (default __exit_hook) at every function exit
  --entry_parm={name|address|none}, --exit_parm=…
                        what the hook receives: void hook(const char *name),
                        void hook(void (*addr)()) or void hook(void) (the default)
  --remove_hooks_when_inlining
                        no hooks for the bodies the optimizer inlines: the same as
                        --hook-placement=after-inlining, with any hook option
  #pragma NO_HOOKS(func) and __attribute__((no_instrument_function)) exclude a function;
  functions declared inline get no hooks.

GCC / Clang:
  -finstrument-functions, -finstrument-functions-after-inlining
                        __cyg_profile_func_enter/exit(this_fn, call_site) in every function,
                        by hookcc's pass (exits on C++ unwinding too); the program brings them
  -finstrument-functions-exclude-function-list=S,…, -finstrument-functions-exclude-file-list=S,…
                        no hooks in functions whose name, or whose file's path, contains an S
                        (GCC's; any dialect)

Metrowerks / NITRO-SDK dialect:
  -profile              call __PROFILE_ENTRY(name, …) and __PROFILE_EXIT() in every function
  --dialect=nitro       honour #pragma profile on|off|reset without -profile
  #pragma profile on|off|reset: the state at a function's closing brace decides.
  --nitro-clock=tick|thread-cpu
                        what function cost (NITRO_PROFILE_TYPE=FUNCTIONCOST) measures: the OS
                        tick (default: cycles, so time a thread is pre-empted or blocked counts)
                        or each thread's CPU time in ns, as the seed leaves switched-out time
                        out (a system call per hook; docs/nitro.md); HOOKCC_NITRO_CLOCK too
  --print-make-include  print the path of hookcc's make definitions for NITRO-SDK style
                        Makefiles: `include $(shell $(CC) --print-make-include)` makes
                        NITRO_PROFILE = TRUE and NITRO_PROFILE_TYPE = … written in the
                        Makefile reach hookcc, as the SDK's commondefs did
  --print-cache-key     print a key of everything hookcc's output depends on besides its
                        command line (environment, plugins, clang): with CC=\"ccache hookcc\",
                        set CCACHE_COMPILERCHECK='%compiler% --print-cache-key'
                        (docs/build-systems.md)
  --print-hook-runtime  print the path of the runtime object for the target flags on the
                        line (compiled into the cache if needed; an empty line when no
                        component is selected), for builds that link with another tool:
                        bare-metal firmware linked by arm-none-eabi-gcc (docs/baremetal.md)

Rust (docs/rust.md):
  --rustflags           print the RUSTFLAGS that instrument a Cargo build the way the other
                        options say: RUSTC_BOOTSTRAP=1 RUSTFLAGS=\"$(hookcc --rustflags --trace)\"
                        cargo build --target=<host triple>; or `cargo hookcc build|run|test`
  --hookcc-verbose      print the clang command hookcc runs
  --help, --hookcc-help this text (clang's own options: clang-19 --help)
  --version             clang's --version text, then hookcc's version and the clang it runs
  --print-man-page      this text as the manual page hookcc(1), in roff (alone on the line)
  --clear-cache         remove the runtimes compiled for each target (alone on the line)

Environment:
  HOOKCC_TRACE=1        as --trace, for build systems that cannot add flags
  HOOKCC_VERBOSE=1      as --hookcc-verbose
  NITRO_PROFILE=TRUE    as -profile (make NITRO_PROFILE=TRUE exports it to the compiler)
  NITRO_PROFILE_TYPE=CALLTRACE|FUNCTIONCOST
                        link that NITRO runtime component
  HOOKCC_CLANG          the clang to run (default: clang-19, else clang, on PATH)
  HOOKCC_LAUNCHER       run clang through this compiler cache (ccache, sccache): hookcc puts
                        a key of its plugins and settings on the command line, so the cache
                        can never hand back an object built with other hooks
  HOOKCC_CACHE_DIR      where runtimes compiled for each target are kept
                        (default: $XDG_CACHE_HOME/hookcc or ~/.cache/hookcc)
  HOOKCC_PLUGIN         the pass plugin library (default: found beside hookcc)
  HOOKCC_RUNTIME_DIR    the runtime sources (default: found beside hookcc)
  RUSTC                 the rustc whose LLVM --rustflags matches (default: rustc on PATH)

In the traced program: HOOKCC_OUTPUT, HOOKCC_MAX_BYTES, HOOKCC_BUFFER_RECORDS, HOOKCC_DISABLE
(see docs/trace-format.md). The runtime's API is <hookcc/trace.h>.
";
