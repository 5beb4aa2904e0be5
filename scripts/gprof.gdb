# gdb macros to take hookcc's gprof data out of a running program, as eCos's gprof.gdb does
# (seeds/ecos-gprof.txt): for bare-metal targets, where the data cannot be written to a file.
# docs/gprof.md. Installed as PREFIX/share/hookcc/gprof.gdb (scripts/install.sh, the .deb).
#
#   (gdb) source PREFIX/share/hookcc/gprof.gdb
#   (gdb) gprof_dump        save the data to gprof.dump, write gmon.out from it, reset the counts
#   (gdb) gprof_fetch       the same, counts kept
#   (gdb) gprof_reset       reset the counts only
#
# gmon.out is written as the seed's script writes it, by `hookprof gprof gprof.dump --exe
# PROGRAM -o gmon.out` (PROGRAM: gdb's program file); gprof.dump is kept. hookprof is $HOOKPROF,
# else the one installed with this script, else the one on PATH; without one (or without a
# program file, or gdb's Python), the macros say what to run. Then: gprof PROGRAM gmon.out.
# The data is hookcc_gprof_data_size bytes from hookcc_gprof_data (set by profile_on); the
# runtime has no debug information, so the macros cast them (size_t is unsigned long on the
# targets hookcc supports).

python
import os
import shutil
import subprocess

# scripts/install.sh writes the installed hookprof's path here.
hookcc_installed_hookprof = None


def hookcc_gprof_to_gmon(dump, gmon):
    """Writes gmon from dump with hookprof gprof, the program being gdb's program file."""
    exe = gdb.current_progspace().filename
    hookprof = (os.environ.get("HOOKPROF") or hookcc_installed_hookprof
                or shutil.which("hookprof"))
    if hookprof and not os.access(hookprof, os.X_OK):
        hookprof = shutil.which("hookprof")
    if not exe or not hookprof:
        print("gprof: %s; now: hookprof gprof %s --exe PROGRAM -o %s"
              % ("no program file in gdb (file PROGRAM)" if not exe
                 else "hookprof not found ($HOOKPROF, PATH)", dump, gmon))
        return
    result = subprocess.run([hookprof, "gprof", dump, "--exe", exe, "-o", gmon],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            universal_newlines=True)
    for line in (result.stdout + result.stderr).splitlines():
        print(line)
    if result.returncode == 0:
        print("gprof: wrote %s from %s (kept); now: gprof %s %s" % (gmon, dump, exe, gmon))
    else:
        print("gprof: %s gprof failed (exit status %d); %s is kept"
              % (hookprof, result.returncode, dump))
end

define gprof_fetch
  set $gprof_start = *(char **)&hookcc_gprof_data
  set $gprof_end = $gprof_start + *(unsigned long *)&hookcc_gprof_data_size
  if $gprof_start == 0
    echo gprof_fetch: no profiling data: profile_on() has not been called\n
  else
    dump binary memory gprof.dump $gprof_start $gprof_end
    echo gprof_fetch: saved gprof.dump\n
    python hookcc_gprof_to_gmon("gprof.dump", "gmon.out")
  end
end
document gprof_fetch
Save hookcc's gprof data (hookcc_gprof_data) to gprof.dump and write gmon.out from it (with
hookprof gprof), without resetting the counts.
end

define gprof_reset
  call ((void (*)(void))gprof_reset)()
end
document gprof_reset
Reset hookcc's gprof counts (histogram and arcs) in the target.
end

define gprof_dump
  gprof_fetch
  gprof_reset
end
document gprof_dump
Save hookcc's gprof data to gprof.dump, write gmon.out from it (with hookprof gprof), then
reset the counts.
end
