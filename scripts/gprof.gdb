# gdb macros to take hookcc's gprof data out of a running program, as eCos's gprof.gdb does
# (seeds/ecos-gprof.txt): for bare-metal targets, where the data cannot be written to a file.
# docs/gprof.md.
#
#   (gdb) source scripts/gprof.gdb
#   (gdb) gprof_dump        save the data to gprof.dump and reset the counts
#   (gdb) gprof_fetch       save the data to gprof.dump, counts kept
#   (gdb) gprof_reset       reset the counts only
#
# then, on the host: hookprof gprof gprof.dump --exe PROGRAM -o gmon.out; gprof PROGRAM gmon.out
# The data is hookcc_gprof_data_size bytes from hookcc_gprof_data (set by profile_on); the
# runtime has no debug information, so the macros cast them (size_t is unsigned long on the
# targets hookcc supports).

define gprof_fetch
  set $gprof_start = *(char **)&hookcc_gprof_data
  set $gprof_end = $gprof_start + *(unsigned long *)&hookcc_gprof_data_size
  if $gprof_start == 0
    echo gprof_fetch: no profiling data: profile_on() has not been called\n
  else
    dump binary memory gprof.dump $gprof_start $gprof_end
    echo gprof_fetch: saved gprof.dump; now: hookprof gprof gprof.dump --exe PROGRAM -o gmon.out\n
  end
end
document gprof_fetch
Save hookcc's gprof data (hookcc_gprof_data) to gprof.dump, without resetting the counts.
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
Save hookcc's gprof data to gprof.dump, then reset the counts.
end
