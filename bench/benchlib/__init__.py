"""What the benchmark scripts (bench.py and its phases, compensation.py, placement.py,
rust_bench.py) share: common (paths, helpers, measured runs, setup), crates (sources from
crates.io through cargo), variants and builder (bench.py's variants and their builds), report
(bench.py's goals and table).

May import: the standard library and each other (common first: it imports none of them);
never bench.py, phases/ or the other scripts."""
