#!/usr/bin/env bash
# Sets up libtorch for the trainer (`tch` 0.24 links against libtorch 2.11.0): a project-local
# virtual environment `.venv/` holding the PyPI wheel torch==2.11.0. Idempotent: creates `.venv`
# only when missing, installs torch only when `import torch` fails or reports another version, and
# (re)points the link `.venv/libtorch` at the wheel's `torch/` folder.
#
# torch-sys 0.24's build script finds libtorch in one of two ways, both prepared here:
# - LIBTORCH_USE_PYTORCH=1: it runs `python` (when VIRTUAL_ENV is set, else `python3`) from PATH
#   and asks torch for its include and lib folders; the exported environment below does this;
# - LIBTORCH=DIR: `DIR/include` and `DIR/lib`; the workspace's `.cargo/config.toml` sets
#   LIBTORCH=.venv/libtorch (unless already set), so a plain `cargo build` works too.
#
# Usage:
#   scripts/setup-torch.sh                    # set up (then `cargo build` just works)
#   eval "$(scripts/setup-torch.sh --env)"    # set up, and export LIBTORCH_USE_PYTORCH=1 with
#                                             # the venv's python first on PATH instead
#
# The trainer's build script embeds an rpath to the wheel's `torch/lib`, so the built binaries run
# without LD_LIBRARY_PATH.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="$ROOT/.venv"
TORCH_VERSION="2.11.0"
PYTHON_BIN="${PYTHON:-}"

log() { if [ "${MODE:-}" = env ]; then echo "$*" >&2; else echo "$*"; fi; }
MODE=""; [ "${1:-}" = --env ] && MODE=env

if [ -z "$PYTHON_BIN" ]; then
    for candidate in python3.11 python3.12 python3.13 python3.10 python3; do
        if command -v "$candidate" >/dev/null 2>&1; then PYTHON_BIN="$candidate"; break; fi
    done
fi

if [ ! -x "$VENV/bin/python" ]; then
    [ -n "$PYTHON_BIN" ] || { echo "error: no python3 found to create $VENV" >&2; exit 1; }
    log "setup-torch: creating $VENV with $PYTHON_BIN"
    "$PYTHON_BIN" -m venv "$VENV"
fi

# One import (a few seconds): the version and the folder of the installed torch, if any.
torch_info() {
    "$VENV/bin/python" -c 'import os, torch; print(torch.__version__.split("+")[0]); print(os.path.dirname(torch.__file__))' 2>/dev/null || true
}
info="$(torch_info)"
installed="$(printf '%s\n' "$info" | sed -n 1p)"
if [ "$installed" != "$TORCH_VERSION" ]; then
    log "setup-torch: installing torch==$TORCH_VERSION into $VENV (found: ${installed:-none}; ~4.6 GB)"
    if [ "${MODE:-}" = env ]; then
        "$VENV/bin/python" -m pip install --disable-pip-version-check -q "torch==$TORCH_VERSION" >&2
    else
        "$VENV/bin/python" -m pip install --disable-pip-version-check -q "torch==$TORCH_VERSION"
    fi
    info="$(torch_info)"
else
    log "setup-torch: torch $TORCH_VERSION already in $VENV"
fi

torch_dir="$(printf '%s\n' "$info" | sed -n 2p)"
if [ -z "$torch_dir" ]; then
    echo "error: torch is not importable from $VENV after installing it" >&2
    exit 1
fi
if [ "$(readlink "$VENV/libtorch" 2>/dev/null || true)" != "$torch_dir" ]; then
    ln -sfn "$torch_dir" "$VENV/libtorch"
fi

# What torch-sys reads with LIBTORCH_USE_PYTORCH=1: VIRTUAL_ENV set makes it run `python` from
# PATH, which is the venv's.
if [ "${MODE:-}" = env ]; then
    echo "export LIBTORCH_USE_PYTORCH=1"
    echo "export VIRTUAL_ENV=\"$VENV\""
    echo "export PATH=\"$VENV/bin:\$PATH\""
else
    echo "setup-torch: done: libtorch in $torch_dir, linked as $VENV/libtorch."
    echo "setup-torch: cargo needs no environment (.cargo/config.toml sets LIBTORCH=.venv/libtorch);"
    echo "setup-torch: the alternative is: eval \"\$(scripts/setup-torch.sh --env)\""
fi
