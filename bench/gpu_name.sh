#!/usr/bin/env bash
# The short name of this machine's first GPU (h100, h200, a100, ...), which names its results
# directory bench/results/<name>_cuda; nothing without a GPU.
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 |
  grep -oiE 'h100|h200|a100|l40s|[a-z]+[0-9]+' | head -1 | tr 'A-Z' 'a-z'
