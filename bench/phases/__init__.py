"""bench.py's phases, one module each (callgrind; micro and lua in wall; compile; size;
post; views), each a mixin class of bench.Bench holding that phase's methods.

May import: benchlib (the shared helpers) only; never bench.py, nor one phase another."""
