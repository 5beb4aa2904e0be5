# What every board's Makefile shares (examples/baremetal/<board>/Makefile sets the CPU, the
# linker and qemu, then includes this). docs/baremetal.md explains it all.
#
#   make run                                                  build, boot, exit with main's status
#   make run NITRO_PROFILE=TRUE NITRO_PROFILE_TYPE=CALLTRACE     function call trace (NITRO-SDK)
#   make run NITRO_PROFILE=TRUE NITRO_PROFILE_TYPE=FUNCTIONCOST  function cost (NITRO-SDK)
#   make run APP=path/to/program.c                            another program instead of app.c
#   make run APP=../ti_tasks.c HOOKS=ti                       TI hooks and runtime: three tasks
#   make ti-dump APP=../ti_tasks.c HOOKS=ti                   … buffer dumped by gdb: ti.bin
#   make gdb-dump BREAK=FUNCTION BUFFER=ARRAY                 any array dumped by gdb at FUNCTION
#   make run HOOKS=trace                                      native trace: firmware.hktrace
#   make gprof-dump HOOKS=gprof                               gprof: arcs + timer samples, gdb
#                                                             dumps them at exit: gprof.dump
#   make run APP=../pfp_points.c HOOKS=pfp                    TI profile points (PFP)
#   make run HOOKS=packed                                     packed RAM buffer: firmware.hkpacked
#   make stream HOOKS=stream                                  streamed while it runs: qemu's gdb
#                                                             stub read by hookprof record --gdb
#   make top HOOKS=stream                                     … watched live: hookprof top --gdb
#
# Compiling: CC is hookcc; make exports NITRO_PROFILE (hookcc's -profile) and
# NITRO_PROFILE_TYPE (which runtime component) to it, as NITRO-SDK's build did.
# Linking: the board's gcc with picolibc (clang's bare-metal driver wants compiler-rt builtins
# Debian does not ship); the profiler runtime, compiled by hookcc for these flags, comes from
# `hookcc --print-hook-runtime` (an empty line when nothing is profiled).

CC := hookcc
HERE := $(dir $(lastword $(MAKEFILE_LIST)))
APP ?= $(HERE)app.c
RUN_TIMEOUT ?= 60

CFLAGS ?= -O1 -g
CPPFLAGS += -isystem $(PICOLIBC)/include

# TI cgtools' hook options (seeds/ti-c6000-function-hooks.txt) and hookcc's TI runtime; the
# record buffer is taken out by a debugger (scripts/baremetal-dump.sh … @ti).
ifeq ($(HOOKS),ti)
HOOKCC_FLAGS := --entry_hook=entry_hook --entry_parm=address --exit_hook=exit_hook \
	--exit_parm=address --hook-runtime=ti
CPPFLAGS += -DHOOKS_TI
endif

# hookcc's native trace (the bare-metal runtime: a RAM buffer written to firmware.hktrace at
# exit by trace_out.c through semihosting).
ifeq ($(HOOKS),trace)
HOOKCC_FLAGS := --trace
EXTRA_OBJS := trace_out.o
# make run HOOKS=trace TRACE_RING=N: a flight recorder of the last N records (a power of two).
ifneq ($(TRACE_RING),)
CPPFLAGS += -DTRACE_RING=$(TRACE_RING)
endif
# make run HOOKS=trace TRACE_PROFILE=N: a call-path profile of at most N paths (a power of two).
ifneq ($(TRACE_PROFILE),)
CPPFLAGS += -DTRACE_PROFILE=$(TRACE_PROFILE)
endif
# TRACE_MIN_TICKS=N (with TRACE_PROFILE): records of calls of N ticks or more, every call in the
# tree. TRACE_START=FUNCTION: only the calls made inside FUNCTION.
ifneq ($(TRACE_MIN_TICKS),)
CPPFLAGS += -DTRACE_MIN_TICKS=$(TRACE_MIN_TICKS)
endif
ifneq ($(TRACE_START),)
CPPFLAGS += -DTRACE_START=$(TRACE_START)
endif
endif

# The native trace streamed while the firmware runs (stream_out.c: an RTT up-buffer that
# hookprof record --gdb drains through qemu's gdb stub; make stream does both).
ifeq ($(HOOKS),stream)
HOOKCC_FLAGS := --trace
EXTRA_OBJS := stream_out.o
ifneq ($(STREAM_BYTES),)
CPPFLAGS += -DSTREAM_BYTES=$(STREAM_BYTES)
endif
# STREAM_UART=ADDRESS: the firmware sends the ring to a CMSDK UART itself (stream_out.c);
# SERIAL=file:uart.bin (or tcp:…) is where qemu puts that UART.
ifneq ($(STREAM_UART),)
CPPFLAGS += -DSTREAM_UART=$(STREAM_UART)
endif
endif

# The packed RAM buffer (packed_out.c): the stream's records, 2 to 3 bytes each, in RAM; at
# exit written to firmware.hkpacked through semihosting. PACKED_BYTES=N sets its size.
ifeq ($(HOOKS),packed)
HOOKCC_FLAGS := --trace
EXTRA_OBJS := packed_out.o
ifneq ($(PACKED_BYTES),)
CPPFLAGS += -DPACKED_BYTES=$(PACKED_BYTES)
endif
ifneq ($(PACKED_COUNTS),)
CPPFLAGS += -DPACKED_COUNTS=1
endif
# PACKED_RING=1: a flight recorder that keeps the newest records instead of stopping when full.
ifneq ($(PACKED_RING),)
CPPFLAGS += -DPACKED_RING=1
endif
endif

# gprof (seeds/ecos-gprof.txt): the entry hooks record the arcs, the board's timer samples the
# interrupted PC (gprof_sampling.c starts both); gdb takes the data out at exit (gprof-dump).
ifeq ($(HOOKS),gprof)
HOOKCC_FLAGS := --hook-runtime=gprof
CPPFLAGS += -DHOOKS_GPROF
EXTRA_OBJS := gprof_sampling.o
endif

# TI's profile points (seeds/ti-pfp-profile-points.txt): the program calls pfpBegin/pfpEnd.
ifeq ($(HOOKS),pfp)
HOOKCC_FLAGS := --hook-runtime=pfp
CPPFLAGS += -DHOOKS_PFP
endif

ifneq ($(NITRO_PROFILE_TYPE),)
CPPFLAGS += -DPROFILE_TYPE_$(NITRO_PROFILE_TYPE)
# No inlining while profiling, so that every lr in a dump is a real return address, as the
# NITRO-SDK's were: an inlined frame keeps its hooks, but its lr is then the place in its caller
# where the inlined body begins (docs/nitro.md, "Inlined frames"), and a frame's function is no
# longer the symbol its lr falls in. Leave it out to profile the optimized build as it ships.
CFLAGS += -fno-inline
endif

# picolibc's start-up (crt0-semihost: data, bss, constructors, and exit through semihosting, so
# main's return value becomes qemu's exit status) and its linker script, placed in the board's
# memory by the board's FLASH/RAM definitions; unused sections dropped.
LDFLAGS += --specs=picolibc.specs --oslib=semihost --crt0=semihost \
	-Wl,--defsym=__flash=$(FLASH) -Wl,--defsym=__flash_size=$(FLASH_SIZE) \
	-Wl,--defsym=__ram=$(RAM) -Wl,--defsym=__ram_size=$(RAM_SIZE) \
	-Wl,--gc-sections

# RTOS_OBJS, EXTRA_HOOKCC_FLAGS: an RTOS's objects and hookcc options (freertos/Makefile).
OBJS := board.o $(notdir $(APP:.c=.o)) $(EXTRA_OBJS) $(RTOS_OBJS)
vpath %.c $(dir $(APP)) $(HERE)

firmware.elf: $(OBJS)
	$(LD) $(LDFLAGS) -o $@ $(OBJS) $$($(CC) $(HOOKCC_FLAGS) $(ARCH) $(CPPFLAGS) --print-hook-runtime)

%.o: %.c
	$(CC) $(HOOKCC_FLAGS) $(EXTRA_HOOKCC_FLAGS) $(ARCH) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# Semihosting (the firmware's printf and exit) is served by qemu itself (target=native) and
# its console is qemu's stdout (chardev=con; by default it would be stderr); the board's UART
# is not used. -icount shift=0: virtual time advances 1 ns per instruction, so the timers
# (counters and interrupts) and every measured time are the same from run to run; ICOUNT= runs
# at the host's speed instead.
ICOUNT ?= -icount shift=0
SERIAL ?= null
QEMU_FLAGS += -display none -monitor none -serial $(SERIAL) -chardev stdio,id=con \
	-semihosting-config enable=on,target=native,chardev=con $(ICOUNT)

run: firmware.elf
	timeout $(RUN_TIMEOUT) $(QEMU) $(QEMU_FLAGS) -kernel firmware.elf

# The stream read while the firmware runs: qemu waits for a debugger (-S) on GDB_PORT, and
# hookprof record drains the RTT ring through it until the firmware exits. ICOUNT's sleep=off
# lets idle time (wfi) pass at once, so target time runs ahead of wall time.
GDB_PORT ?= 3333
HOOKPROF ?= hookprof
RECORD_FLAGS ?=
stream: firmware.elf
	timeout $(RUN_TIMEOUT) $(QEMU) $(QEMU_FLAGS) -kernel firmware.elf -S -gdb tcp:127.0.0.1:$(GDB_PORT) & \
	qemu=$$!; \
	$(HOOKPROF) record --gdb 127.0.0.1:$(GDB_PORT) --exe firmware.elf -o firmware.hktrace $(RECORD_FLAGS); \
	status=$$?; if [ $$status -ne 0 ]; then kill $$qemu; fi; \
	wait $$qemu; qemu_status=$$?; if [ $$status -ne 0 ]; then exit $$status; fi; exit $$qemu_status

# The same stream watched live: hookprof top --gdb shows the functions by self time, calls a
# second and each task's open functions while the firmware runs, until q (then qemu is
# stopped). The firmware's console goes to console.txt (the terminal is the view's).
# ICOUNT=-icount shift=0 (the default, without sleep=off) keeps target time near wall time.
TOP_FLAGS ?=
TOP_TIMEOUT ?= 3600
top: firmware.elf
	timeout $(TOP_TIMEOUT) $(QEMU) $(QEMU_FLAGS) -kernel firmware.elf -S -gdb tcp:127.0.0.1:$(GDB_PORT) \
		</dev/null >console.txt 2>&1 & \
	qemu=$$!; \
	$(HOOKPROF) top --gdb 127.0.0.1:$(GDB_PORT) --exe firmware.elf $(TOP_FLAGS); \
	status=$$?; kill $$qemu 2>/dev/null; wait $$qemu; exit $$status

# The TI record buffer taken out by a debugger: gdb-multiarch stops the firmware at
# hookcc_ti_done(), dumps ProfileData into ti.bin, and lets it finish (docs/baremetal.md).
# Decode: hookprof ti ti.bin --exe firmware.elf
HOOKCC_SCRIPTS ?= $(abspath $(HERE)../../scripts)
ti-dump: firmware.elf
	$(HOOKCC_SCRIPTS)/baremetal-dump.sh firmware.elf hookcc_ti_done @ti ti.bin -- \
		$(QEMU) $(QEMU_FLAGS) -kernel firmware.elf

# Any buffer taken out by a debugger at a function, e.g. a NITRO call trace buffer when the
# program dumps it itself: make gdb-dump BREAK=OS_DumpCallTrace BUFFER=buffer
# Decode: hookprof nitro buffer.bin --exe firmware.elf
BREAK ?= OS_DumpCallTrace
BUFFER ?= buffer
gdb-dump: firmware.elf
	$(HOOKCC_SCRIPTS)/baremetal-dump.sh firmware.elf $(BREAK) $(BUFFER) $(BUFFER).bin -- \
		$(QEMU) $(QEMU_FLAGS) -kernel firmware.elf

# gprof's data taken out by a debugger when the program exits (as scripts/gprof.gdb's
# gprof_fetch does). Decode: hookprof gprof gprof.dump --exe firmware.elf -o gmon.out, then
# the target's gprof (arm-none-eabi-gprof firmware.elf gmon.out).
gprof-dump: firmware.elf
	$(HOOKCC_SCRIPTS)/baremetal-dump.sh firmware.elf exit @gprof gprof.dump -- \
		$(QEMU) $(QEMU_FLAGS) -kernel firmware.elf

clean:
	rm -f firmware.elf *.o ti.bin $(BUFFER).bin firmware.hktrace firmware.hkpacked gprof.dump uart.bin

.PHONY: run stream ti-dump gdb-dump gprof-dump clean
