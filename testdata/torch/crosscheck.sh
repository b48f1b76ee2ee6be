#!/usr/bin/env bash
# The project against PyTorch's own layers (testdata/torch/lm.py), from the project's root:
#
#   testdata/torch/crosscheck.sh [--run DIR] [--config FILE] [--lens LIST]
#                                [--steps N] [--rounds R] [--bf16] [--eval-only | --throughput-only]
#
# 1. Installs PyTorch from Debian when it is missing (setup.sh).
# 2. Trains --config (default configs/tiny.yaml) into --run (default runs/tiny), unless a finished
#    run is there (a partial one is resumed).
# 3. Forward check: scores the run's newest checkpoint with cmd/eval and with lm.py eval, in float32
#    and in float64, at --lens (default 1x, 2x and 4x its training length), and prints per length
#    both perplexities and their relative difference; fails if one is over lm.py's tolerance (1e-6).
# 4. Throughput: R rounds (default 5) of N training steps (default 150), each round the project
#    (cmd/train on configs/tiny.yaml) then PyTorch (lm.py throughput), so that a drift in the
#    machine's speed hits both; prints each round's tokens/s and the median ratio project/PyTorch.
#    --bf16 adds the bf16 pair: configs/tiny-bf16.yaml against PyTorch's bf16 autocast.
#
# PYTORCH_CORETYPE=Cooperlake (or SkylakeX, Haswell, ...) forces the kernels of PyTorch's OpenBLAS
# (OPENBLAS_CORETYPE); by default OpenBLAS picks them for the processor. Throughput figures are only
# meaningful on a machine with nothing else running.
set -euo pipefail
run=runs/tiny config=configs/tiny.yaml lens="" steps=150 rounds=5 bf16=0 do_eval=1 do_tp=1
usage() { sed -n '2,22s/^# \{0,1\}//p' "$0"; }
bad() { echo "crosscheck.sh: $1 (see --help)" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --run|--config|--lens|--steps|--rounds) [ $# -ge 2 ] || bad "$1 needs a value" ;;&
    --run) run=$2; shift 2 ;;
    --config) config=$2; shift 2 ;;
    --lens) lens=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --bf16) bf16=1; shift ;;
    --eval-only) do_tp=0; shift ;;
    --throughput-only) do_eval=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) bad "unknown argument $1" ;;
  esac
done
[[ $steps =~ ^[0-9]+$ && $steps -gt 5 ]] || bad "--steps must be a number over the 5 warm-up steps, got $steps"
[[ $rounds =~ ^[1-9][0-9]*$ ]] || bad "--rounds must be a positive number, got $rounds"
if [ ! -f go.mod ] || [ ! -d cmd/train ]; then
  echo "crosscheck.sh: run it from the project's root" >&2
  exit 2
fi
here=$(dirname "$0")
py=/usr/bin/python3
bash "$here/setup.sh"
# PyTorch multiplies with OpenBLAS's OpenMP build, on the kernels it picks unless PYTORCH_CORETYPE says.
omp=$(dirname "$(dpkg -L libopenblas0-openmp | grep '/libblas\.so\.3$' | head -n 1)")
export LD_LIBRARY_PATH=$omp${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
if [ -n "${PYTORCH_CORETYPE:-}" ]; then export OPENBLAS_CORETYPE=$PYTORCH_CORETYPE; else unset OPENBLAS_CORETYPE; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/train" ./cmd/train
go build -o "$tmp/eval" ./cmd/eval

if [ "$do_eval" = 1 ]; then
  if [ -f "$run/summary.json" ]; then
    echo "== reusing the trained run $run"
  elif compgen -G "$run/checkpoints/step-*.safetensors" >/dev/null; then
    echo "== resuming the run in $run ($config)"
    "$tmp/train" --config "$config" --out "$run" --resume
  else
    echo "== training $config into $run"
    "$tmp/train" --config "$config" --out "$run"
  fi
  echo "== forward perplexity: the project (cmd/eval) against PyTorch's layers (lm.py eval)"
  "$tmp/eval" --run "$run" ${lens:+--lens "$lens"} --json "$tmp/project.json" >/dev/null 2>"$tmp/eval.log" ||
    { cat "$tmp/eval.log" >&2; exit 1; }
  for dtype in float32 float64; do
    "$py" "$here/lm.py" eval --run "$run" ${lens:+--lens "$lens"} --dtype "$dtype" --project-json "$tmp/project.json"
  done
fi

if [ "$do_tp" = 1 ]; then
  read -r load _ </proc/loadavg
  if awk -v l="$load" -v n="$(nproc)" 'BEGIN { exit !(l > 1.5 * n) }'; then
    echo "warning: load average $load on $(nproc) cores before the rounds; PyTorch's OpenMP threads slow down far more than the project on a busy machine, so the ratios below overstate the project's" >&2
  fi
  pairs="fp32:configs/tiny.yaml"
  [ "$bf16" = 1 ] && pairs="$pairs bf16:configs/tiny-bf16.yaml"
  for pair in $pairs; do
    prec=${pair%%:*} cfg=${pair#*:}
    echo "== training throughput, $prec: the project on $cfg against PyTorch, $rounds rounds of $steps steps"
    for r in $(seq 1 "$rounds"); do
      "$tmp/train" --config "$cfg" --steps "$steps" --out "$tmp/project-$prec-$r" >"$tmp/project-$prec-$r.log" 2>&1 ||
        { cat "$tmp/project-$prec-$r.log" >&2; exit 1; }
      "$py" "$here/lm.py" throughput --config "$cfg" --steps "$steps" --precision "$prec" \
        --json "$tmp/torch-$prec-$r.json" >/dev/null
      "$py" - "$tmp" "$prec" "$r" <<'PY'
import json, sys
tmp, prec, r = sys.argv[1], sys.argv[2], sys.argv[3]
g = json.load(open(f"{tmp}/project-{prec}-{r}/summary.json"))["tokens_per_second"]
t = json.load(open(f"{tmp}/torch-{prec}-{r}.json"))
print(f"round {r}: project {g:9,.0f} tokens/s   PyTorch {t['tokens_per_second']:9,.0f} tokens/s"
      f" ({t['threads']} threads, OpenBLAS {t['blas_core']})   ratio {g / t['tokens_per_second']:.2f}")
PY
    done
    "$py" - "$tmp" "$prec" "$rounds" <<'PY'
import json, statistics, sys
tmp, prec, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
ratios = [json.load(open(f"{tmp}/project-{prec}-{r}/summary.json"))["tokens_per_second"]
          / json.load(open(f"{tmp}/torch-{prec}-{r}.json"))["tokens_per_second"] for r in range(1, rounds + 1)]
print(f"median ratio project/PyTorch, {prec}: {statistics.median(ratios):.2f}")
PY
  done
fi
