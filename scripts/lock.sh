#!/usr/bin/env bash
# Regenerate the lock from pyproject.toml's ranges with uv (docs/development.md, "The lock"):
# requirements.txt (everything: the README's install, CI's), then locks/student.txt and
# locks/grader.txt (the student bundle's and the Gradescope zip's), at requirements.txt's versions.
# uv keeps every version already in an output file that still satisfies the ranges: pass
# --upgrade (or --upgrade-package NAME) to move on.
set -euo pipefail
cd "$(dirname "$0")/.."

# One resolution for every Python the project supports (3.11 and newer) and every platform, with a
# marker on each package that only some need.  torch's CUDA build brings these packages on Linux;
# the CPU build, which the README tells how to install, needs none of them.
common=(--universal --python-version 3.11 --custom-compile-command scripts/lock.sh)
for cuda in cuda-bindings cuda-pathfinder cuda-toolkit nvidia-cublas nvidia-cuda-cupti \
    nvidia-cuda-nvrtc nvidia-cuda-runtime nvidia-cudnn-cu13 nvidia-cufft nvidia-cufile \
    nvidia-curand nvidia-cusolver nvidia-cusparse nvidia-cusparselt-cu13 nvidia-nccl-cu13 \
    nvidia-nvjitlink nvidia-nvshmem-cu13 nvidia-nvtx triton; do
    common+=(--no-emit-package "$cuda")
done

uv pip compile requirements.in "${common[@]}" -o requirements.txt "$@"
pins=$(mktemp)
trap 'rm -f "$pins"' EXIT
grep -v '^-e ' requirements.txt > "$pins"  # the project itself is no constraint
for extra in student grader; do
    uv pip compile pyproject.toml --extra "$extra" "${common[@]}" -c "$pins" --no-annotate \
        -o "locks/$extra.txt"
done
