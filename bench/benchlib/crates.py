"""Sources from crates.io, through cargo: the one way the benchmark scripts fetch C sources
(Lua from lua-src, SQLite from libsqlite3-sys, zstd from zstd-sys), pinned so that every
machine measures the same sources.

May import: benchlib.common.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from benchlib.common import first_lines

# Pinned so that every machine measures the same sources. lua-src 551.1.0 ships Lua 5.4.9.
LUA_SRC_VERSION = "551.1.0"
SQLITE_SYS_VERSION = "0.39.1"


def cargo_fetch(proj: Path, name: str, dependencies: list) -> dict:
    """Fetches crates through cargo: a throwaway project `name` in `proj` whose
    [dependencies] are the lines `dependencies`, `cargo fetch`, then `cargo metadata` says where
    cargo unpacked them. Returns {package name: its directory}. Raises RuntimeError saying which
    cargo command failed."""
    (proj / "src").mkdir(parents=True, exist_ok=True)
    (proj / "src" / "lib.rs").write_text("")
    (proj / "Cargo.toml").write_text(
        f"[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2021\"\n"
        "publish = false\n\n[dependencies]\n"
        + "".join(f"{line}\n" for line in dependencies)
        + "\n[workspace]\n")
    r = subprocess.run(["cargo", "fetch", "--quiet"], cwd=proj, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("cargo fetch failed: " + first_lines(r.stderr))
    r = subprocess.run(["cargo", "metadata", "--format-version", "1"], cwd=proj,
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("cargo metadata failed: " + first_lines(r.stderr))
    return {pkg["name"]: Path(pkg["manifest_path"]).parent for pkg in json.loads(r.stdout)["packages"]}


def fetch_crate_sources(work: Path) -> dict:
    """The Lua and SQLite sources (bench.py, compensation.py), from crates.io through cargo
    (cargo_fetch)."""
    out = {"lua": None, "sqlite": None, "note": ""}
    if not shutil.which("cargo"):
        out["note"] = "cargo not found"
        return out
    try:
        found = cargo_fetch(work / "fetch", "hookcc-bench-sources", [
            f"lua-src = \"={LUA_SRC_VERSION}\"",
            f"libsqlite3-sys = {{ version = \"={SQLITE_SYS_VERSION}\", default-features = false }}",
        ])
    except RuntimeError as e:
        out["note"] = str(e)
        return out
    if "lua-src" in found:
        dirs = sorted(found["lua-src"].glob("lua-5.4.*"))
        if dirs:
            out["lua"] = str(dirs[-1])
    if "libsqlite3-sys" in found:
        s = found["libsqlite3-sys"] / "sqlite3" / "sqlite3.c"
        if s.exists():
            out["sqlite"] = str(s)
    if not out["lua"]:
        out["note"] += " lua-src has no lua-5.4.* directory"
    if not out["sqlite"]:
        out["note"] += " libsqlite3-sys has no sqlite3/sqlite3.c"
    return out
