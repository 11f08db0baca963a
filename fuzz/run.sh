#!/bin/sh
# Run the reader fuzzer: fuzz/run.sh BUILD_DIR SECONDS
# BUILD_DIR was configured with CC=clang -DSPX_BUILD_FUZZERS=ON. The corpus
# is seeded from tests/data and ../shared/data (files under 1 MB) plus a few
# .spx files; crashes are written to BUILD_DIR/fuzz-artifacts/.
set -eu
build=${1:?usage: fuzz/run.sh BUILD_DIR SECONDS}
secs=${2:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
fuzzer="$build/fuzz/fuzz_read"
[ -x "$fuzzer" ] || cmake --build "$build" --target fuzz_read -j 2
corpus="$build/fuzz-corpus"
artifacts="$build/fuzz-artifacts"
mkdir -p "$corpus" "$artifacts"
n=0
for d in "$root/tests/data" "$root/../shared/data"; do
  [ -d "$d" ] || continue
  for f in $(find "$d" -type f -size -1024k \( -name '*.mtx' -o -name '*.smtx' -o -name '*.spx' \)); do
    n=$((n + 1))
    cp "$f" "$corpus/seed$n-$(basename "$f")"
  done
done
cp "$root"/fuzz/seeds/* "$corpus/" 2>/dev/null || true
exec "$fuzzer" "$corpus" -max_total_time="$secs" -rss_limit_mb=2048 -max_len=65536 \
  -timeout=20 -print_final_stats=1 -artifact_prefix="$artifacts/"
