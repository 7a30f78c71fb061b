#!/usr/bin/env bash
# One bounded GPU job (under 10 minutes on 16 cores + 1 GPU; issue 46 item 5):
#   1. `caishen learn --workers 16 --device cuda` on a label budget (--labels, capped by --minutes), with its
#      evaluation match;
#   2. the env trainer (python -m caishen.agents.train_env) with batched inference and updates on the GPU.
# Everything it writes lies under $OUT: both run directories (checkpoints, curves, learned.npz), the numba
# cache ($OUT/numba_cache: a later job on the same sources starts warm), gpu_job.log with the timings.
#
#   OUT=/path/to/out scripts/gpu_learn.sh              # the GPU job
#   OUT=/tmp/x DEVICE=cpu TINY=1 scripts/gpu_learn.sh  # its CPU path in about a minute (a check, not a result)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-runs/gpu_job}
DEVICE=${DEVICE:-cuda}
WORKERS=${WORKERS:-16}
TINY=${TINY:-0}
PY=${PY:-python}
[ -x .venv/bin/python ] && [ "$PY" = python ] && PY=.venv/bin/python
mkdir -p "$OUT"
LOG="$OUT/gpu_job.log"
if [ "$TINY" = 1 ]; then  # the check of the CPU path: this machine's own (warm) numba cache, generous limits
  LABELS=300; LEARN_MIN=0.3; LEARN_EVAL=40; TE_MIN=0.2; TE_ENVS=32; TE_BATCH=256; TE_EVAL=20; WORKERS=1; LIMIT=900
else  # two steps of at most 270 s each: under 10 minutes (a cold numba cache spends the first minutes compiling)
  export NUMBA_CACHE_DIR=${NUMBA_CACHE_DIR:-$OUT/numba_cache}
  LABELS=150000; LEARN_MIN=3.5; LEARN_EVAL=4000; TE_MIN=3; TE_ENVS=2048; TE_BATCH=8192; TE_EVAL=2000; LIMIT=270
fi
{
  echo "gpu_learn.sh $(date -u +%FT%TZ) device=$DEVICE workers=$WORKERS tiny=$TINY out=$OUT"
  nproc; (nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || echo "no nvidia-smi")
  "$PY" -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())"
} | tee "$LOG"

BUDGET=(--labels "$LABELS" --minutes "$LEARN_MIN")  # the first spent ends it (a slow machine stops on time)
t0=$(date +%s)
timeout --signal=INT "$LIMIT" "$PY" -m caishen learn --rules kaihua --out "$OUT/learn" --workers "$WORKERS" \
  --device "$DEVICE" "${BUDGET[@]}" --eval-walls "$LEARN_EVAL" 2>&1 | tail -n 40 | tee -a "$LOG" || true
t1=$(date +%s)
echo "caishen learn: $((t1 - t0)) s wall" | tee -a "$LOG"
timeout --signal=INT "$LIMIT" "$PY" -m caishen.agents.train_env --rules kaihua --out "$OUT/train_env" \
  --device "$DEVICE" --envs "$TE_ENVS" --batch "$TE_BATCH" --threads 4 --wall-minutes "$TE_MIN" \
  --cpu-minutes 60 --eval-every 50 --eval-walls "$TE_EVAL" 2>&1 | tail -n 40 | tee -a "$LOG" || true
t2=$(date +%s)
echo "train_env: $((t2 - t1)) s wall; total $((t2 - t0)) s" | tee -a "$LOG"
ls -la "$OUT"/learn "$OUT"/train_env 2>/dev/null | tee -a "$LOG" || true
