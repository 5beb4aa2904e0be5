#!/usr/bin/env bash
# Writes the man pages (hookprof's, and hookcc(1) from the hookcc beside HOOKPROF) and
# hookprof's shell completions under SHARE, in the directories a prefix's share/ has:
# man/man1/, bash-completion/completions/, zsh/vendor-completions/, fish/vendor_completions.d/.
# Used by scripts/install.sh and scripts/package-deb.sh.
# Usage: scripts/hookprof-docs.sh HOOKPROF SHARE
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: scripts/hookprof-docs.sh HOOKPROF SHARE" >&2; exit 2; }
hookprof="$1"
share="$2"
mkdir -p "$share/bash-completion/completions" "$share/zsh/vendor-completions" \
    "$share/fish/vendor_completions.d"
"$hookprof" man -o "$share/man/man1"
hookcc="$(dirname "$hookprof")/hookcc"
[ -x "$hookcc" ] || { echo "hookprof-docs: $hookcc is missing: hookcc(1) is made by it" >&2; exit 1; }
"$hookcc" --print-man-page >"$share/man/man1/hookcc.1"
"$hookprof" completions bash >"$share/bash-completion/completions/hookprof"
"$hookprof" completions zsh >"$share/zsh/vendor-completions/_hookprof"
"$hookprof" completions fish >"$share/fish/vendor_completions.d/hookprof.fish"
