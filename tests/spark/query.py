#!/usr/bin/env python3
"""Runs SQL with PySpark on local[2] and prints each query's rows as JSON (tests/tests/export.rs
asks docs/export.md's Spark SQL blocks of `hookprof export`'s dataset, and compares the answers
with DuckDB's and with `hookprof report`'s).

Usage: query.py < QUERIES.json

QUERIES.json is a list of [name, sql] pairs; each sql may hold several statements separated by
`;` (the tables' CREATE TEMPORARY VIEW, then a question). One Spark session runs them all, in
order: a JVM starts once. For each pair one line is printed: [name, rows], each row a list.

PySpark is the one scripts/setup.sh installs into tests/spark/python (or $HOOKCC_SPARK_PYTHON),
pinned by checksum; nothing is installed into the system's Python. Java is Debian's
openjdk-17-jre-headless (`java` on PATH, or JAVA_HOME).
"""

import json
import os
import sys
from pathlib import Path

site = Path(os.environ.get("HOOKCC_SPARK_PYTHON", Path(__file__).resolve().parent / "python"))
sys.path.insert(0, str(site))
# Spark binds to the machine's address unless told; the test needs nothing beyond this host.
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

from pyspark.sql import SparkSession  # noqa: E402


def statements(sql):
    return [s.strip() for s in sql.split(";") if s.strip() and not all(
        line.strip().startswith("--") or not line.strip() for line in s.strip().splitlines())]


def main():
    if len(sys.argv) != 1:
        sys.exit(__doc__.split("\n\n")[1])
    queries = json.load(sys.stdin)
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("hookcc-export-test")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        # A run named by digits (`--run 1234`) stays a string, as DuckDB reads it.
        .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
        .config("spark.driver.memory", "512m")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        for name, sql in queries:
            rows = []
            for statement in statements(sql):
                rows = spark.sql(statement).collect()
            print(json.dumps([name, [list(r) for r in rows]], default=str), flush=True)
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
