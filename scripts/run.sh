#!/usr/bin/env bash
# The project's main job (README): set up, build, and run the default experiment of
# experiments.toml end to end — self-play data, training, export, a tournament, puzzles and a
# report (runs/reports/default/report.md, with plots). Idempotent: a rerun reuses every finished
# stage, and an interrupted run resumes where it stopped.
#
#   bash scripts/run.sh                 # the default experiment
#   bash scripts/run.sh --only axes     # any other arguments go to `trainer run experiments.toml`
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -d ../shared/nets/thesis ]; then
    echo "error: ../shared (thesis networks, parity vectors, data) must sit beside the repository" >&2
    exit 1
fi

# libtorch for the trainer: torch==2.11.0 in the project-local .venv/ (once), linked as
# .venv/libtorch, where .cargo/config.toml points tch (see scripts/setup-torch.sh).
bash scripts/setup-torch.sh
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}"

# Release build of the whole workspace: the plugins (cdylibs), host (the engine the
# tournament and puzzles run), arena and trainer, all in target/release.
cargo build --release --workspace --locked

if [ "$#" -eq 0 ]; then
    set -- --only default
fi
exec target/release/trainer run experiments.toml "$@"
