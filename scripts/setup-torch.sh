#!/usr/bin/env bash
# Sets up libtorch for the trainer (`tch` 0.24 links against libtorch 2.11.0): a project-local
# virtual environment `.venv/` holding the PyPI wheel torch==2.11.0, and the link `.venv/libtorch`
# that `.cargo/config.toml` points torch-sys at (LIBTORCH), so a plain `cargo build` just works.
# Idempotent: creates `.venv` only when missing, installs only what is missing or of another
# version, and (re)points `.venv/libtorch`.
#
# PyPI's only Linux torch wheel is built for CUDA, and with its NVIDIA dependencies it takes about
# 4.6 GB (PyTorch's CPU-only wheels live on download.pytorch.org, which these machines cannot
# reach). Two variants, chosen by TORCH_VARIANT or, when unset, by whether an NVIDIA GPU is visible:
#
# - cuda: the wheel with all its dependencies (about 4.6 GB); `.venv/libtorch` is the wheel's
#   `torch/` folder, and `trainer --device cuda` trains on the GPU.
# - cpu (about 1.3 GB): the same wheel without its dependencies, plus the two small NVIDIA
#   libraries that libtorch_cpu.so itself needs (the CUDA runtime and CUPTI, which load fine
#   without a GPU). `.venv/libtorch` is then `.venv/libtorch-cpu/`: `include/` is the wheel's, and
#   `lib/` holds links to libtorch_cpu, libc10, libgomp and those two libraries, beside an empty
#   `libtorch.so` built here. The wheel's own libtorch.so would pull in libtorch_cuda.so and with
#   it cuBLAS, cuDNN, NCCL... (3.3 GB); tch needs none of its symbols. Python's `import torch`
#   does not work in this variant; nothing here uses it. A trainer built this way still trains on
#   a GPU when run with another machine's full libtorch first on LD_LIBRARY_PATH (the binary
#   needs libtorch.so, which there brings libtorch_cuda.so: see trainer/build.rs).
#
# pip runs with --no-cache-dir: a cached copy of the downloads would take another 1-3 GB.
#
# Usage: scripts/setup-torch.sh            (TORCH_VARIANT=cpu|cuda to choose)
#
# The trainer's build script embeds an rpath to `.venv/libtorch/lib`, so the built binaries run
# without LD_LIBRARY_PATH.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="$ROOT/.venv"
TORCH_VERSION="2.11.0"
# What torch==2.11.0's `cuda-toolkit[cudart,cupti]==13.0.2` requirement resolves to on PyPI.
CUDA_RUNTIME="nvidia-cuda-runtime==13.0.96"
CUPTI="nvidia-cuda-cupti==13.0.85"
PYTHON_BIN="${PYTHON:-}"

die() { echo "setup-torch: error: $*" >&2; exit 1; }

VARIANT="${TORCH_VARIANT:-}"
if [ -z "$VARIANT" ]; then
    if [ -e /dev/nvidia0 ] || nvidia-smi -L >/dev/null 2>&1; then VARIANT=cuda; else VARIANT=cpu; fi
fi
case "$VARIANT" in cpu|cuda) ;; *) die "TORCH_VARIANT must be cpu or cuda, not '$VARIANT'" ;; esac

if [ -z "$PYTHON_BIN" ]; then
    for candidate in python3.11 python3.12 python3.13 python3.10 python3; do
        if command -v "$candidate" >/dev/null 2>&1; then PYTHON_BIN="$candidate"; break; fi
    done
fi
if [ ! -x "$VENV/bin/python" ]; then
    [ -n "$PYTHON_BIN" ] || die "no python3 found to create $VENV"
    echo "setup-torch: creating $VENV with $PYTHON_BIN"
    "$PYTHON_BIN" -m venv "$VENV"
fi

# The installed torch's version and folder, read from its metadata (no import: in the cpu
# variant `import torch` fails, and it takes seconds where it works).
torch_info() {
    "$VENV/bin/python" - <<'EOF' 2>/dev/null || true
import importlib.metadata, importlib.util, os
spec = importlib.util.find_spec("torch")
if spec is not None and spec.submodule_search_locations:
    print(importlib.metadata.version("torch").split("+")[0])
    print(os.path.realpath(list(spec.submodule_search_locations)[0]))
EOF
}
pip_install() {
    "$VENV/bin/python" -m pip install --disable-pip-version-check --no-cache-dir -q "$@"
}

info="$(torch_info)"
installed="$(printf '%s\n' "$info" | sed -n 1p)"
torch_dir="$(printf '%s\n' "$info" | sed -n 2p)"
site="${torch_dir%/torch}"
cu13="$site/nvidia/cu13/lib"

if [ "$VARIANT" = cuda ]; then
    # The full import proves every dependency is there.
    if [ "$installed" != "$TORCH_VERSION" ] || ! "$VENV/bin/python" -c 'import torch' 2>/dev/null; then
        echo "setup-torch: installing torch==$TORCH_VERSION with CUDA into $VENV (found: ${installed:-none}; ~4.6 GB)"
        pip_install "torch==$TORCH_VERSION"
    else
        echo "setup-torch: torch $TORCH_VERSION (CUDA) already in $VENV"
    fi
else
    if [ "$installed" != "$TORCH_VERSION" ] || [ ! -e "$torch_dir/lib/libtorch_cpu.so" ] \
        || [ ! -e "$cu13/libcudart.so.13" ] || [ ! -e "$cu13/libcupti.so.13" ]; then
        echo "setup-torch: installing torch==$TORCH_VERSION for CPU into $VENV (found: ${installed:-none}; ~1.3 GB)"
        # --force-reinstall: an install cut short (a full disk) leaves the metadata, and pip would
        # take the version as installed.
        pip_install --no-deps --force-reinstall "torch==$TORCH_VERSION" "$CUDA_RUNTIME" "$CUPTI"
    else
        echo "setup-torch: torch $TORCH_VERSION (CPU libraries) already in $VENV"
    fi
fi

info="$(torch_info)"
torch_dir="$(printf '%s\n' "$info" | sed -n 2p)"
[ -n "$torch_dir" ] && [ -e "$torch_dir/lib/libtorch_cpu.so" ] \
    || die "no torch $TORCH_VERSION with lib/libtorch_cpu.so in $VENV after installing it"
site="${torch_dir%/torch}"
cu13="$site/nvidia/cu13/lib"

target="$torch_dir"
if [ "$VARIANT" = cpu ]; then
    target="$VENV/libtorch-cpu"
    mkdir -p "$target/lib"
    ln -sfn "$torch_dir/include" "$target/include"
    for lib in "$torch_dir/lib/libtorch_cpu.so" "$torch_dir/lib/libc10.so" "$torch_dir/lib/libgomp.so.1" \
        "$cu13/libcudart.so.13" "$cu13/libcupti.so.13"; do
        [ -e "$lib" ] || die "$lib is missing from the installed wheels"
        ln -sfn "$lib" "$target/lib/$(basename "$lib")"
    done
    if [ ! -e "$target/lib/libtorch.so" ]; then
        # Empty: the wheel's libtorch.so exports nothing tch uses (its own libstdc++ template
        # copies, and the link to libtorch_cuda.so).
        command -v cc >/dev/null 2>&1 || die "no C compiler (cc) to build $target/lib/libtorch.so"
        echo "" | cc -shared -fPIC -x c -o "$target/lib/libtorch.so" -Wl,-soname,libtorch.so -
    fi
fi
previous="$(readlink "$VENV/libtorch" 2>/dev/null || true)"
if [ "$previous" != "$target" ]; then
    ln -sfn "$target" "$VENV/libtorch"
    # torch-sys decides at build time whether to link libtorch_cuda; its build reruns only
    # when LIBTORCH's value changes, and that stays `.venv/libtorch`.
    if [ -n "$previous" ]; then
        echo "setup-torch: .venv/libtorch now points elsewhere: run 'cargo clean -p torch-sys && cargo clean --release -p torch-sys' before the next build"
    fi
fi
echo "setup-torch: done ($VARIANT): libtorch in $target, linked as $VENV/libtorch (.cargo/config.toml sets LIBTORCH to it)."
