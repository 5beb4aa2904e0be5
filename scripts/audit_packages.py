#!/usr/bin/env python3
"""Checks that a test run used only what a new machine has.

Reads an strace log (`strace -f -z -e trace=execve,execveat,open,openat,openat2,clone,clone3,
fork,vfork`), takes every
file the run opened or executed, and finds the Debian package that installed it (from dpkg's
file lists). Each such package must be one that scripts/setup.sh installs, something those
depend on (Depends and Pre-Depends, recursively: setup.sh installs without recommends), or part
of Debian's base (priority required or important, as debootstrap installs it, and what those
depend on). A file from any
other package, or a file under /usr/local or /opt that no package owns, means a test passed
only because this machine has more than a new one would: the audit names it, with the command
that used it, and fails.

Usage: audit_packages.py STRACE_LOG [--use] [--ignore DIR]...   (DIRs: the project, temp dirs,
the Rust toolchain: files there are not the system's; --use: against `setup.sh --list --use`,
what using hookcc needs, for a run of the quick start)
"""

import argparse
import glob
import os
import re
import subprocess
import sys

# A successful open or exec in strace's output: `PID  openat(AT_FDCWD, "PATH", …) = 3`.
CALL = re.compile(r'^(\d+)\s+(execve|execveat|open|openat|openat2)\((?:[^"]*?)"((?:[^"\\]|\\.)*)"')
# A new process or thread (`PID  clone(…) = CHILD`): it runs what its parent ran until it execs.
SPAWN = re.compile(r'^(\d+)\s+(?:clone3?|fork|vfork)\(.*\)\s+=\s+(\d+)')
# Roots whose files say nothing about what a test needs: message catalogues and locale aliases
# are read whenever LANG is set and change only the language of messages.
NOT_PACKAGED = ("/proc/", "/sys/", "/dev/", "/run/", "/etc/", "/var/", "/usr/share/locale/")
# binutils' ar, nm and ld load every plugin here, used or not, with the libraries each needs.
BFD_PLUGINS = "/usr/lib/bfd-plugins/"
SHARED_LIBRARY = re.compile(r"\.so(\.[0-9.]+)?$")
# A program or library there that no package owns is a hand install, which a new machine
# lacks. (Other files there are configuration or data of the machine's own.)
HAND_INSTALLED = ("/usr/local/", "/opt/")
USRMERGE = ("/bin/", "/sbin/", "/lib/", "/lib32/", "/lib64/", "/libx32/")


def setup_packages(root, use_only=False):
    out = subprocess.run([os.path.join(root, "scripts/setup.sh"), "--list"]
                         + (["--use"] if use_only else []),
                         check=True, capture_output=True, text=True).stdout
    return out.split()


def dependency_closure(packages):
    """The packages and everything they depend on, as apt resolves it on this machine."""
    out = subprocess.run(
        ["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests",
         "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances", *packages],
        check=True, capture_output=True, text=True).stdout
    closure = set()
    for line in out.splitlines():
        if line and not line[0].isspace():
            closure.add(line.strip().strip("<>").split(":")[0])
    return closure


def base_packages():
    out = subprocess.run(
        ["dpkg-query", "-W", "-f=${Package} ${Priority} ${Essential}\n"],
        check=True, capture_output=True, text=True).stdout
    base = set()
    for line in out.splitlines():
        name, priority, essential = (line.split() + ["", ""])[:3]
        if priority in ("required", "important") or essential == "yes":
            base.add(name)
    return base


def file_owners():
    owners = {}
    for listing in glob.glob("/var/lib/dpkg/info/*.list"):
        package = os.path.basename(listing)[:-len(".list")].split(":")[0]
        with open(listing, encoding="utf-8", errors="replace") as f:
            for path in f:
                owners[path.rstrip("\n")] = package
    return owners


def spellings(path):
    """The names dpkg may list a file under: as opened, resolved, and across /usr-merge."""
    names = [path]
    real = os.path.realpath(path)
    if real != path:
        names.append(real)
    for name in list(names):
        if name.startswith("/usr/") and name[4:].startswith(USRMERGE):
            names.append(name[4:])
        elif name.startswith(USRMERGE):
            names.append("/usr" + name)
    return names


def used_files(log, ignored):
    """path -> (the first command (the process's last exec) that opened it, executed?)."""
    exe_of = {}
    loading_plugins = set()  # processes that have loaded a bfd plugin
    used = {}
    with open(log, encoding="utf-8", errors="replace") as f:
        for line in f:
            spawn = SPAWN.match(line)
            if spawn:
                if spawn.group(1) in exe_of:
                    exe_of[spawn.group(2)] = exe_of[spawn.group(1)]
                continue
            m = CALL.match(line)
            if not m:
                continue
            pid, call, path = m.group(1), m.group(2), m.group(3)
            path = bytes(path, "utf-8").decode("unicode_escape", errors="replace")
            if call.startswith("exec"):
                exe_of[pid] = path
                loading_plugins.discard(pid)
            if not path.startswith("/"):
                continue  # relative: inside the test's own working directory
            path = os.path.normpath(path)
            if path.startswith(BFD_PLUGINS):
                loading_plugins.add(pid)
                continue
            if pid in loading_plugins and SHARED_LIBRARY.search(path):
                continue
            if path.startswith(NOT_PACKAGED) or any(
                    path == d or path.startswith(d.rstrip("/") + "/") for d in ignored):
                continue
            if path.endswith(".pth"):
                continue  # Python's site module reads every .pth it finds, used or not
            if path not in used and not os.path.isdir(path):
                used[path] = (exe_of.get(pid, "?"), False)
            if call.startswith("exec"):
                used[path] = (used[path][0], True)
    return used


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log")
    parser.add_argument("--ignore", action="append", default=[], metavar="DIR")
    parser.add_argument("--use", action="store_true",
                        help="against what using hookcc needs (setup.sh --list --use)")
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ignored = [os.path.realpath(d) for d in args.ignore] + args.ignore

    setup = setup_packages(root, args.use)
    which = "scripts/setup.sh --use" if args.use else "scripts/setup.sh"
    allowed = dependency_closure(setup + sorted(base_packages()))
    owners = file_owners()
    used = used_files(args.log, ignored)

    problems = []
    packages_used = set()
    for path, (command, executed) in sorted(used.items()):
        owner = next((owners[n] for n in spellings(path) if n in owners), None)
        if owner is None:
            program = executed or SHARED_LIBRARY.search(path)
            if path.startswith(HAND_INSTALLED) and program:
                problems.append(f"{path}: no package installed it (used by {command})")
            continue  # generated files (caches, .pyc), or packaged under another name
        packages_used.add(owner)
        if owner not in allowed:
            problems.append(f"{path}: from package {owner}, which {which} does not "
                            f"install (used by {command})")
    print(f"audit: {len(used)} system files from {len(packages_used)} packages; "
          f"{len(setup)} packages in {which}, {len(allowed)} with their dependencies "
          f"and the base system")
    if problems:
        print(f"audit: {len(problems)} files a new machine would not have:", file=sys.stderr)
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        print(f"audit: add the package to {which}, or stop the run from using it",
              file=sys.stderr)
        return 1
    print(f"audit: everything the run used comes from {which}'s packages or the base system")
    return 0


if __name__ == "__main__":
    sys.exit(main())
