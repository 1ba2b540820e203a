#!/usr/bin/env bash
# The project's test command (README, .ci/run): formatting, lints, then every test of the
# workspace, integration tests included (they run the real `host` binary with the real plugins
# and need ../shared beside the repository). Installs nothing system-wide; idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -d ../shared/nets/thesis ]; then
    echo "error: ../shared (thesis networks, parity vectors, data) must sit beside the repository" >&2
    exit 1
fi

rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt
rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy

# python-chess drives the engine in the UCI conformance test (host/tests/uci_client.rs): a
# project-local virtual environment (.venv/, git-ignored), created and filled only when needed.
PYTHON_CHESS_VERSION=1.11.2
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
if ! .venv/bin/python -c "import chess, sys; sys.exit(chess.__version__ != '$PYTHON_CHESS_VERSION')" 2>/dev/null; then
    .venv/bin/pip install -q "chess==$PYTHON_CHESS_VERSION"
fi

# Debian's Stockfish labels data and plays in the tests that need a strong UCI engine
# (trainer/tests/gensfen.rs), and Debian's Chromium opens the HTML reports headless to check
# that they render with their images (trainer/tests/insight.rs, experiment_run.rs): installed
# once, only when missing.
MISSING=""
[ -x /usr/games/stockfish ] || MISSING="$MISSING stockfish"
[ -x /usr/bin/chromium ] || MISSING="$MISSING chromium"
if [ -n "$MISSING" ]; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $MISSING
fi

# Debian's Slurm (slurmctld, slurmd, the client commands) and munge: the Slurm executor's tests
# (trainer/tests/slurm.rs) start a throwaway single-node cluster of their own with
# scripts/slurm-local.sh; installed once, without the recommended extras and without starting
# the system's services (a policy-rc.d that refuses, only while installing).
if [ ! -x /usr/sbin/slurmctld ] || [ ! -x /usr/sbin/slurmd ] || [ ! -x /usr/bin/sbatch ] || [ ! -x /usr/sbin/munged ]; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    GUARD=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
        $SUDO chmod +x /usr/sbin/policy-rc.d
        GUARD=1
    fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
        slurmctld slurmd slurm-client munge
    if [ -n "$GUARD" ]; then $SUDO rm -f /usr/sbin/policy-rc.d; fi
fi

# libtorch for the trainer (tch 0.24 = libtorch 2.11.0): the PyPI wheel torch==2.11.0 in the
# same .venv, installed only when missing or of another version, and linked as .venv/libtorch
# (scripts/setup-torch.sh; without a GPU only its CPU libraries, 1.3 GB instead of 4.6). Cargo
# needs no further environment: .cargo/config.toml points torch-sys at .venv/libtorch
# (LIBTORCH), exactly as for a plain `cargo build`.
bash scripts/setup-torch.sh
# libtorch's idle OpenMP threads would otherwise spin on the two CI cores while the tests' own
# threads work (the trainer binary sets this itself).
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}"
# No incremental compilation data (1.1 GB of a 2.6 GB target/ on a fresh clone, where it saves
# nothing; CI machines' disks are sometimes nearly full). CARGO_INCREMENTAL=1 keeps it.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
# The kernel versions the SIMD tests must compare (nnue::TEST_SIMD_ENV): a machine that lacks
# this one fails them instead of silently comparing fewer. AVX2 is the project's floor; set
# NNUE_TEST_SIMD=avx512vnni where the machine is known to have it.
export NNUE_TEST_SIMD="${NNUE_TEST_SIMD:-avx2}"

cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
# The docs' links checked too: a renamed or private item leaves no link dangling.
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --workspace --locked
# Every test of the workspace, two checks of the tree among them: tools/layering (no crate's
# modules import one another in a circle, and the plugin ABI reaches nothing of the host's side)
# and tools/provenance (no other project's code, binary, build recipe or data in any file,
# committed or not: ARCHITECTURE.md, "References").
cargo test --workspace --locked
