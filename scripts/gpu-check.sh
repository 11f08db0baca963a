#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: build with CUDA, run every test (GPU tests
# included), the GPU tests under compute-sanitizer (memcheck, racecheck), and
# the SpMM/SpGEMM benchmarks. Full logs go to $OUT (default ./out); a short
# table is printed last.
#
#   scripts/gpu-check.sh [quick|full] [--no-sanitizer] [--no-bench] [--bench-args "..."]
#
# Real matrices are read from $SPX_DATA_DIR (default: .shared-data if present,
# else ../shared/data).
set -uo pipefail
cd "$(dirname "$0")/.."
suite=quick; sanitize=1; bench=1; bench_args=""
while [ $# -gt 0 ]; do
  case "$1" in
    quick|full) suite=$1 ;;
    --no-sanitizer) sanitize=0 ;;
    --no-bench) bench=0 ;;
    --bench-args) shift; bench_args=$1 ;;
    *) echo "usage: $0 [quick|full] [--no-sanitizer] [--no-bench] [--bench-args ARGS]" >&2; exit 2 ;;
  esac
  shift
done
OUT=${OUT:-out}
mkdir -p "$OUT"
data=${SPX_DATA_DIR:-}
[ -z "$data" ] && [ -d .shared-data ] && data=$PWD/.shared-data
[ -z "$data" ] && [ -d ../shared/data ] && data=$(cd ../shared/data && pwd)
export SPX_DATA_DIR=$data
summary=$OUT/summary.txt
: > "$summary"
note() { echo "$*" | tee -a "$summary"; }

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv > "$OUT/gpu.txt" 2>&1
note "gpu: $(tail -n 1 "$OUT/gpu.txt")"
note "data: ${data:-none}"

gen=""; command -v ninja >/dev/null 2>&1 && gen="-G Ninja"
t0=$(date +%s)
if cmake -S . -B build-gpu $gen -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DSPX_WERROR=ON \
     > "$OUT/build.log" 2>&1 && cmake --build build-gpu -j "$(nproc)" >> "$OUT/build.log" 2>&1; then
  note "build: ok ($(( $(date +%s) - t0 )) s)"
else
  note "build: FAILED (see build.log)"; tail -n 40 "$OUT/build.log"; exit 1
fi

# every test, GPU ones included
# (CTEST_REGEX limits the tests, e.g. "gpu" on a run that only changed GPU code)
if (cd build-gpu && ctest --output-on-failure -j 4 --timeout 900 ${CTEST_REGEX:+-R "$CTEST_REGEX"}) \
     > "$OUT/tests.log" 2>&1; then
  note "tests: $(grep -E 'tests passed|tests failed' "$OUT/tests.log" | tail -n 1)"
else
  note "tests: FAILED: $(grep -E 'tests passed|tests failed' "$OUT/tests.log" | tail -n 1)"
  grep -E '\(Failed\)|\(SEGFAULT\)|\(Timeout\)|Exception' "$OUT/tests.log" | tee -a "$summary"
fi
grep -hE '^(gpu |spmm |spgemm |summary)' "$OUT/tests.log" | tail -n 30 >> "$summary"

# every algorithm through the CLI on a few real matrices, checked against ref
: > "$OUT/smoke.log"
smoke_fail=0; smoke_skip=0; smoke_n=0
for m in data/cora.mtx data/1138_bus.mtx ${data:+$data/suitesparse/bcsstk13.mtx $data/dnn/graphchallenge/n1024-l1.mtx}; do
  [ -f "$m" ] || continue
  for alg in auto row_split warp_row block_row merge_path sell bsr outer gather_tc tiled dense band row_batches; do
    for n in 1 33 128; do
      prec=exact; case $alg in gather_tc) prec=tf32 ;; esac
      smoke_n=$((smoke_n + 1))
      log=$(build-gpu/spx spmm "$m" --n $n --backend cuda --dtype f32 --alg $alg --precision $prec \
              --beta 0.5 --check --repeat 2 2>&1); rc=$?
      echo "$log" >> "$OUT/smoke.log"
      if [ $rc != 0 ] && echo "$log" | grep -q SPX_ERR_UNSUPPORTED; then
        smoke_skip=$((smoke_skip + 1))   # the algorithm does not apply to this matrix
      elif [ $rc != 0 ]; then
        smoke_fail=$((smoke_fail + 1)); echo "FAILED: $m alg=$alg n=$n" >> "$OUT/smoke.log"
      fi
    done
  done
done
note "smoke (spx spmm --check per algorithm): $((smoke_n - smoke_fail - smoke_skip))/$smoke_n ok, $smoke_skip not applicable, $smoke_fail FAILED"

if [ $sanitize = 1 ]; then
  : > "$OUT/sanitizer.log"
  for t in build-gpu/tests/test_gpu_*; do
    [ -x "$t" ] || continue
    for tool in memcheck racecheck; do
      # the sanitizers slow kernels 10-100x: a quick sweep of the sections that
      # reach every kernel, bounded in time
      if SPX_TEST_QUICK=1 SPX_GPU_TEST_ONLY=${SANITIZE_SECTIONS:-shapes,types} timeout ${SANITIZE_SECONDS:-240} \
           compute-sanitizer --tool $tool --error-exitcode 99 "$t" >> "$OUT/sanitizer.log" 2>&1; then
        note "sanitizer $tool $(basename "$t"): clean"
      else
        note "sanitizer $tool $(basename "$t"): ERRORS (see sanitizer.log)"
      fi
    done
  done
  # the row runs take short rows only in numbers that fill the GPU four times,
  # beyond the sections above: a 3D Laplacian 48^3 at N = 130 (two or three
  # column tiles, B off 16 bytes) through the CLI, checked against ref
  lap=$(mktemp -d)
  build-gpu/spx gen laplacian --dims 3 --grid 48 --out "$lap/l48.mtx" > /dev/null
  for dt in f32 f64; do
    if compute-sanitizer --tool memcheck --error-exitcode 99 build-gpu/spx spmm "$lap/l48.mtx" --n 130 \
         --dtype $dt --backend cuda --explain --check --beta 0.5 >> "$OUT/sanitizer.log" 2>&1; then
      note "sanitizer memcheck spx spmm (row runs, $dt): clean"
    else
      note "sanitizer memcheck spx spmm (row runs, $dt): ERRORS (see sanitizer.log)"
    fi
  done
  # the row runs on B rounded to bf16 (AUTO at bf16 precision where B's rows
  # lie too far apart for the L2 cache), through the CLI, checked
  build-gpu/spx gen uniform --rows 1000000 --cols 131072 --per-row 8 --out "$lap/u8.mtx" > /dev/null
  if compute-sanitizer --tool memcheck --error-exitcode 99 build-gpu/spx spmm "$lap/u8.mtx" --n 130 \
       --precision bf16 --backend cuda --explain --check --beta 0.5 > "$lap/u8.log" 2>&1; then
    note "sanitizer memcheck spx spmm (row runs on rounded B): clean$(grep -q 'B rounded to' "$lap/u8.log" ||
      echo ', but B was not rounded: this GPU'"'"'s L2 holds B')"
  else
    note "sanitizer memcheck spx spmm (row runs on rounded B): ERRORS (see sanitizer.log)"
  fi
  cat "$lap/u8.log" >> "$OUT/sanitizer.log"
  # sanitize_plan LABEL MTX N WANT ARGS...: spx spmm on $lap/MTX.mtx at N
  # columns with ARGS, checked, under memcheck and racecheck; notes whether
  # each run was clean and whether the plan said WANT
  sanitize_plan() {
    local label=$1 mtx=$2 n=$3 want=$4 tool
    shift 4
    for tool in memcheck racecheck; do
      if compute-sanitizer --tool $tool --error-exitcode 99 build-gpu/spx spmm "$lap/$mtx.mtx" --n "$n" "$@" \
           --backend cuda --explain --check --beta 0.5 < /dev/null > "$lap/plan.log" 2>&1; then
        note "sanitizer $tool spx spmm ($label, $mtx.mtx, N = $n): clean$(grep -qF "$want" "$lap/plan.log" ||
          echo ", but the plan does not say \"$want\" on this GPU")"
      else
        note "sanitizer $tool spx spmm ($label, $mtx.mtx, N = $n): ERRORS (see sanitizer.log)"
      fi
      cat "$lap/plan.log" >> "$OUT/sanitizer.log"
    done
  }
  # The rows in batches (f32 data, here at the exact precision; compute
  # capability 9.0 on), through the CLI, checked: AUTO on a pruned 512 x
  # 4608 layer at N = 1031 (blocks of
  # 512 threads, 16 entries a batch; lanes spread over B's rows off 16 bytes,
  # a partial last tile) and on a 192 x 1152 one at 90 % at N = 1031 (of 256,
  # 16 a batch, two an SM, on 114-203 SMs); forced on the first at N = 255
  # (of 256, 32 a batch, one an SM, on 128 SMs or more; AUTO takes them from
  # N = 256); and AUTO on a pruned 512 x 512 layer at 98 % at N = 2051 (short
  # rows: of 256, 8 a batch, three an SM; a partial last tile)
  build-gpu/spx gen pruned --rows 512 --cols 4608 --sparsity 0.95 --out "$lap/p.mtx" > /dev/null
  build-gpu/spx gen pruned --rows 192 --cols 1152 --sparsity 0.9 --out "$lap/q.mtx" > /dev/null
  build-gpu/spx gen pruned --rows 512 --cols 512 --sparsity 0.98 --out "$lap/s.mtx" > /dev/null
  while read -r mtx n alg want; do
    sanitize_plan "rows in batches, $alg" "$mtx" "$n" "$want" --alg "$alg"
  done <<'EOF_BATCHES'
p 1031 auto staged 16 at a time in shared memory and 16 B row segments in flight a lane, 32 rows a block of 512 threads
q 1031 auto staged 16 at a time in shared memory and 16 B row segments in flight a lane, 16 rows a block of 256 threads (204 blocks, 2 an SM)
s 2051 auto staged 8 at a time in shared memory and 8 B row segments in flight a lane, 16 rows a block of 256 threads (1056 blocks, 3 an SM)
p 255 row_batches staged 32 at a time in shared memory and 32 B row segments in flight a lane, 16 rows a block of 256 threads
EOF_BATCHES
  # The dense path's own GEMM on wgmma (compute capability 9.0) for f32 data,
  # its blocks rounding B in shared memory, forced, through the CLI, checked:
  # 128 x 128 tiles (1900 x 70 at N = 1000), 64 x 128 (512 x 512 at N =
  # 2048), and 64 x 64 with k in parts (192 x 1152 at N = 260, on 132 SMs; a
  # partial last tile)
  build-gpu/spx gen pruned --rows 1900 --cols 70 --sparsity 0.9 --out "$lap/w1.mtx" > /dev/null
  build-gpu/spx gen pruned --rows 512 --cols 512 --sparsity 0.9 --out "$lap/w2.mtx" > /dev/null
  build-gpu/spx gen pruned --rows 192 --cols 1152 --sparsity 0.9 --out "$lap/w3.mtx" > /dev/null
  while read -r mtx n prec want; do
    sanitize_plan "own GEMM on f32 data, $prec" "$mtx" "$n" "$want" --alg dense --precision "$prec"
  done <<'EOF_WGMMA'
w1 1000 bf16 wgmma), 128 x 128 tiles
w2 2048 bf16 wgmma), 64 x 128 tiles
w3 260 f16 wgmma), k in 4 parts
EOF_WGMMA
  # BSR: AUTO on whole 16 x 16 blocks (clipped at the edges) on CUDA cores and
  # on tensor cores, and a BSR input of 16 x 32 blocks whose last block
  # column's second half starts past k = 997, through the CLI, checked
  build-gpu/spx gen block-sparse --rows 1203 --cols 997 --block 16x16 --density 0.1 --out "$lap/bs.mtx" > /dev/null
  build-gpu/spx convert "$lap/bs.mtx" "$lap/bs1632.spx" --format bsr --block 16x32 > /dev/null
  while read -r file alg prec; do
    if compute-sanitizer --tool memcheck --error-exitcode 99 build-gpu/spx spmm "$lap/$file" --n 70 --alg $alg \
         --precision $prec --backend cuda --explain --check --beta 0.5 < /dev/null >> "$OUT/sanitizer.log" 2>&1; then
      note "sanitizer memcheck spx spmm (bsr, $file $alg $prec): clean"
    else
      note "sanitizer memcheck spx spmm (bsr, $file $alg $prec): ERRORS (see sanitizer.log)"
    fi
  done <<'CASES'
bs.mtx auto exact
bs.mtx auto bf16
bs1632.spx bsr bf16
bs1632.spx bsr tf32
CASES
  rm -rf "$lap"
fi

if [ $bench = 1 ]; then
  build-gpu/spx bench spmm --suite "$suite" ${data:+--data "$data"} --csv "$OUT/bench_spmm.csv" $bench_args \
    > "$OUT/bench.log" 2>&1 || note "bench spmm: exited with $?"
  if build-gpu/spx help 2>/dev/null | grep -q "bench spgemm"; then
    build-gpu/spx bench spgemm --suite "$suite" ${data:+--data "$data"} --csv "$OUT/bench_spgemm.csv" \
      >> "$OUT/bench.log" 2>&1 || note "bench spgemm: exited with $?"
  fi
  echo; echo "== benchmark summary =="
  sed -n '/^== summary/,$p' "$OUT/bench.log" | tee -a "$summary"
fi
echo; echo "== check summary =="; cat "$summary"
