# hookcc's make definitions for NITRO-SDK style projects.
#
# A NITRO-SDK Makefile may set the profiler in the Makefile itself (seeds/nitro-sdk-profiler.txt
# §1.2, §2.2, §4.6: "It is okay to write this in the Makefile"):
#
#     NITRO_PROFILE      = TRUE
#     NITRO_PROFILE_TYPE = CALLTRACE        # or FUNCTIONCOST
#
# The SDK made that work because every project Makefile included the SDK's common
# definitions. With hookcc, include this file instead:
#
#     include $(shell $(CC) --print-make-include)      # with CC=hookcc
#
# hookcc reads the two variables from its environment (as -profile and the runtime component
# to link); make puts a variable into the recipes' environment when it comes from make's own
# command line or environment, or when it is exported. This file exports both, wherever in the
# Makefile they are set, so the Makefile's own settings reach hookcc too.

export NITRO_PROFILE NITRO_PROFILE_TYPE
