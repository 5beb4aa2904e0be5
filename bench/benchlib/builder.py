"""Building the programs (micro, Lua) of each variant, cached under ~/.cache/hookcc-bench by
what they depend on (compilers, hookcc's plugins, the runtime sources).

May import: benchlib.common, benchlib.variants."""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Optional

from benchlib.common import BENCH, ROOT, first_lines
from benchlib.variants import Variant


# ------------------------------------------------------------------------------------------
# Building

class BuildError(Exception):
    pass


class Builder:
    def __init__(self, ctx, cache_dir: Optional[Path], jobs: int):
        self.ctx = ctx
        self.cache_dir = cache_dir
        self.jobs = jobs
        self._identity = None

    def prune_cache(self, days: int = 14) -> None:
        """Every rebuild of hookcc or edit of the runtime makes new entries: drop those not
        used for two weeks."""
        if not self.cache_dir or not self.cache_dir.is_dir():
            return
        limit = time.time() - days * 86400
        for d in self.cache_dir.iterdir():
            try:
                if d.is_dir() and d.stat().st_mtime < limit:
                    shutil.rmtree(d, ignore_errors=True)
            except OSError:
                pass

    def compiler(self, v: Variant) -> list:
        if v.cc == "clang":
            return ["clang-19"]
        if v.cc == "gcc":
            return ["gcc"]
        return [self.ctx.hookcc]

    def plain_compiler(self, v: Variant) -> list:
        return ["gcc"] if v.cc == "gcc" else ["clang-19"]

    def identity(self) -> str:
        """What a built program depends on besides its command lines and sources: the
        compilers, hookcc's plugins and the runtime sources."""
        if self._identity is None:
            h = hashlib.sha256()
            for exe in ("clang-19", "gcc"):
                p = shutil.which(exe)
                if p:
                    st = os.stat(os.path.realpath(p))
                    h.update(f"{p}:{st.st_size}:{st.st_mtime_ns}".encode())
            if self.ctx.hookcc:
                d = Path(self.ctx.hookcc).parent
                for f in ["hookcc", "libhookcc_pass.so", "libhookcc_clang.so"]:
                    p = d / f
                    if p.exists():
                        st = p.stat()
                        h.update(f"{p}:{st.st_size}:{st.st_mtime_ns}".encode())
                for f in sorted((ROOT / "runtime").rglob("*")):
                    if f.is_file() and f.suffix in (".c", ".h"):
                        h.update(str(f).encode())
                        h.update(f.read_bytes())
            self._identity = h.hexdigest()
        return self._identity

    def program_sources(self, prog: str) -> tuple:
        """(sources, include dirs, extra flags, libraries)."""
        if prog == "micro":
            return [BENCH / "micro.c"], [BENCH], [], []
        lua = Path(self.ctx.lua_dir)
        srcs = sorted(p for p in lua.glob("*.c") if p.name not in ("lua.c", "luac.c", "onelua.c"))
        return srcs + [BENCH / "lua_main.c"], [lua, BENCH], ["-DLUA_USE_LINUX", "-w"], ["-lm", "-ldl"]

    def build(self, v: Variant, prog: str, out_dir: Path, extra_defines: list) -> Path:
        srcs, incs, pflags, libs = self.program_sources(prog)
        cc = self.compiler(v)
        defs = [f"-D{d}" for d in v.defines + extra_defines]
        inc = [f"-I{i}" for i in incs]
        compile_cmds = []
        out_dir.mkdir(parents=True, exist_ok=True)
        for s in srcs:
            obj = out_dir / (s.stem + ".o")
            compile_cmds.append(cc + v.flags + pflags + defs + inc + ["-c", str(s), "-o", str(obj)])
        extra_cmd = None
        objs = [out_dir / (s.stem + ".o") for s in srcs]
        if v.extra:
            eobj = out_dir / (v.extra + ".o")
            extra_cmd = self.plain_compiler(v) + ["-O2", "-I", str(BENCH.parent / "runtime" / "include"),
                                                 "-c", str(BENCH / (v.extra + ".c")), "-o", str(eobj)]
            objs.append(eobj)
        exe = out_dir / prog
        link_cmd = cc + v.flags + [str(o) for o in objs] + libs + ["-o", str(exe)]

        key = None
        if self.cache_dir:
            h = hashlib.sha256(self.identity().encode())
            for c in compile_cmds + [extra_cmd or [], link_cmd]:
                h.update(json.dumps([a.replace(str(out_dir), "@") for a in c]).encode())
            for f in srcs + sorted(BENCH.glob("*.h")) + ([BENCH / (v.extra + ".c")] if v.extra else []):
                h.update(f.read_bytes())
            if prog == "lua":
                for f in sorted(Path(self.ctx.lua_dir).glob("*.h")):
                    h.update(f.read_bytes())
            key = h.hexdigest()[:32]
            cached = self.cache_dir / key / prog
            if cached.exists():
                shutil.copy2(cached, exe)
                os.utime(cached.parent)  # last use, for prune_cache
                return exe

        def run(cmd):
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                raise BuildError(f"{Path(cmd[0]).name} failed: {first_lines(r.stderr)}")

        cmds = compile_cmds + ([extra_cmd] if extra_cmd else [])
        with concurrent.futures.ThreadPoolExecutor(max_workers=self.jobs) as pool:
            for f in [pool.submit(run, c) for c in cmds]:
                f.result()
        run(link_cmd)
        for o in objs:
            o.unlink(missing_ok=True)
        if key:
            dst = self.cache_dir / key
            dst.mkdir(parents=True, exist_ok=True)
            tmp = dst / (prog + ".tmp")
            shutil.copy2(exe, tmp)
            os.replace(tmp, dst / prog)
        return exe
