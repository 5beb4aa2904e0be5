#!/usr/bin/env python3
"""Runs one SQL query with DuckDB's Python package and prints its rows as JSON, one array per
line (tests/tests/export.rs asks docs/export.md's questions of `hookprof export`'s dataset).

Usage: query.py SQL

The package is the one scripts/setup.sh unpacks into tests/duckdb/python (or
$HOOKCC_DUCKDB_PYTHON), pinned by checksum; nothing is installed into the system's Python.
"""

import json
import os
import sys
from pathlib import Path

site = Path(os.environ.get("HOOKCC_DUCKDB_PYTHON", Path(__file__).resolve().parent / "python"))
sys.path.insert(0, str(site))

import duckdb  # noqa: E402


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[1])
    for row in duckdb.sql(sys.argv[1]).fetchall():
        print(json.dumps(row, default=str))


if __name__ == "__main__":
    main()
