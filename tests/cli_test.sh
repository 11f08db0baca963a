#!/bin/sh
# The spx tool through its exit statuses and outputs:
# 0 ok, 1 bad input or failed operation (message names file and line), 2 usage error.
#   sh tests/cli_test.sh PATH/TO/spx SOURCE_DIR
spx=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

# expect STATUS DESCRIPTION COMMAND...: run, compare the exit status
expect() {
    want=$1; what=$2; shift 2
    "$@" > "$tmp/out" 2> "$tmp/err"
    got=$?
    if [ "$got" != "$want" ]; then
        echo "FAIL: $what: exit $got, expected $want"; sed 's/^/  | /' "$tmp/err" | head -5
        fails=$((fails + 1))
    fi
}
# contains FILE TEXT DESCRIPTION
contains() {
    if ! grep -q -- "$2" "$1"; then
        echo "FAIL: $3: '$2' not in output"; sed 's/^/  | /' "$1" | head -5
        fails=$((fails + 1))
    fi
}

# usage errors
expect 2 "no command" "$spx"
expect 2 "unknown command" "$spx" frobnicate
expect 2 "unknown option" "$spx" info "$src/data/cora.mtx" --nope
expect 2 "missing argument" "$spx" convert "$src/data/cora.mtx"
expect 2 "bad number" "$spx" spmm "$src/data/cora.mtx" --n abc
expect 2 "both --n and --b" "$spx" spmm "$src/data/cora.mtx"
expect 2 "unknown family" "$spx" gen blobs --out "$tmp/x.mtx"
# up to 512 options (a benchmark names each matrix with one): 100 parse
many=""; i=0
while [ $i -lt 100 ]; do many="$many --seed 7"; i=$((i + 1)); done
expect 0 "100 options" "$spx" spmm "$src/data/cora.mtx" --n 8 --backend cpu $many
many="$many$many$many$many$many$many"
expect 2 "600 options" "$spx" spmm "$src/data/cora.mtx" --n 8 --backend cpu $many
contains "$tmp/err" "at most 512" "the options' limit named"
# the SpGEMM benchmark names at most 64 matrices: more is a usage error (in
# builds with CUDA; without, the benchmark says so)
many=""; i=0
while [ $i -lt 65 ]; do many="$many --matrix none.mtx"; i=$((i + 1)); done
"$spx" bench spgemm $many > "$tmp/out" 2> "$tmp/err"
got=$?
if ! grep -q "no CUDA support" "$tmp/err"; then
    [ "$got" = 2 ] || { echo "FAIL: 65 spgemm bench matrices: exit $got, expected 2"; fails=$((fails + 1)); }
    contains "$tmp/err" "more than 64" "the spgemm bench's limit named"
fi
expect 0 "help" "$spx" help
contains "$tmp/out" "spmm" "help lists spmm"

# bad input: status 1 and a message naming the file and line
expect 1 "missing file" "$spx" info "$tmp/none.mtx"
contains "$tmp/err" "none.mtx" "missing file named"
expect 1 "malformed file" "$spx" info "$src/tests/data/bad/mangled8.mtx"
contains "$tmp/err" "line" "malformed file: line named"

# info, text and JSON
expect 0 "info" "$spx" info "$src/data/1138_bus.mtx"
contains "$tmp/out" "1138 x 1138" "info shape"
contains "$tmp/out" "nnz 4054" "info nnz (symmetric expansion)"
expect 0 "info --json" "$spx" info "$src/data/1138_bus.mtx" --json
contains "$tmp/out" '"nnz": 4054' "json nnz"
if command -v python3 > /dev/null 2>&1; then
    python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/out" || {
        echo "FAIL: info --json is not valid JSON"; fails=$((fails + 1)); }
fi

# convert round trips through every format and the binary container
for f in coo csr csc bsr sell; do
    expect 0 "convert to $f .spx" "$spx" convert "$src/data/1138_bus.mtx" "$tmp/a_$f.spx" --format $f --block 3x2
    expect 0 "convert $f .spx back to .mtx" "$spx" convert "$tmp/a_$f.spx" "$tmp/a_$f.mtx"
    expect 0 "info of $f result" "$spx" info "$tmp/a_$f.mtx"
    contains "$tmp/out" "1138 x 1138" "$f round trip keeps the shape"
done
expect 0 "info of a bsr .spx" "$spx" info "$tmp/a_bsr.spx"
contains "$tmp/out" "blocks:        3 x 2" "bsr block shape kept"
expect 1 "write to a missing folder" "$spx" convert "$src/data/1138_bus.mtx" "$tmp/no/such/dir/x.mtx"

# gen, then spmm checked against the reference backend, with output written
expect 0 "gen rmat" "$spx" gen rmat --scale 10 --edge-factor 8 --seed 3 --out "$tmp/g.spx"
expect 0 "gen laplacian" "$spx" gen laplacian --dims 2 --grid 20 --out "$tmp/l.mtx"
expect 0 "spmm cpu --check" "$spx" spmm "$tmp/g.spx" --n 9 --backend cpu --check --out "$tmp/c.mtx"
contains "$tmp/out" "check: relative error" "spmm check printed"
contains "$tmp/out" ": ok" "spmm check passed"
head -n 1 "$tmp/c.mtx" | grep -q "array real general" || {
    echo "FAIL: spmm --out is not a Matrix Market array file"; fails=$((fails + 1)); }
expect 0 "spmm transpose with beta" "$spx" spmm "$tmp/l.mtx" --n 4 --op t --beta 0.5 --backend cpu --check
# a 400 x 3 result of the 400 x 400 Laplacian serves as B for the next product
expect 0 "spmm to make a B" "$spx" spmm "$tmp/l.mtx" --n 3 --backend ref --out "$tmp/b.mtx"
expect 0 "spmm --b" "$spx" spmm "$tmp/l.mtx" --b "$tmp/b.mtx" --backend cpu --check
expect 1 "spmm B of the wrong shape" "$spx" spmm "$tmp/g.spx" --b "$tmp/b.mtx" --backend cpu

# spgemm over semirings, checked against ref, with a triangle mask and a mask file
expect 0 "spgemm plus_times --check" "$spx" spgemm "$tmp/l.mtx" "$tmp/l.mtx" --backend cpu --check --out "$tmp/p.mtx"
contains "$tmp/out" "same as the ref backend" "spgemm check"
expect 0 "spgemm min_plus upper mask" "$spx" spgemm "$tmp/l.mtx" "$tmp/l.mtx" --semiring min_plus --mask upper --backend cpu --check
expect 0 "spgemm plus_pair with a mask file" "$spx" spgemm "$tmp/l.mtx" "$tmp/l.mtx" --semiring plus_pair --mask "$tmp/l.mtx" --complement-mask --backend cpu --check
expect 2 "spgemm unknown semiring" "$spx" spgemm "$tmp/l.mtx" "$tmp/l.mtx" --semiring tropical
expect 1 "spgemm shapes" "$spx" spgemm "$tmp/l.mtx" "$tmp/g.spx" --backend cpu
contains "$tmp/err" "SPX_ERR_SHAPE" "spgemm shape error named"
# avos: 1 is the child of 2 (father) and 3 (mother); 2's father is 4; diagonals mark sex
printf '%s\n' '%%MatrixMarket matrix coordinate integer general' '4 4 7' '1 1 1' '1 2 2' '1 3 3' \
    '2 2 1' '2 4 2' '3 3 -1' '4 4 1' > "$tmp/ped.mtx"
expect 0 "avos closure" "$spx" closure "$tmp/ped.mtx" --semiring avos --backend cpu --out "$tmp/pc.mtx"
contains "$tmp/out" "nnz 8" "closure adds the grandfather"
grep -q "^1 4 4$" "$tmp/pc.mtx" || { echo "FAIL: closure: (1, 4) should be 4 (paternal grandfather)"; fails=$((fails + 1)); }
expect 2 "closure needs avos" "$spx" closure "$tmp/ped.mtx" --semiring plus_times

if [ $fails -ne 0 ]; then
    echo "cli_test: $fails failure(s)"
    exit 1
fi
echo "cli_test: ok"
