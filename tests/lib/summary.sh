#!/usr/bin/env bash
# Sum every suite's "passed failed skipped" record and print the closing line CI reads.
# Exit 1 when anything failed, or when no suite recorded anything at all.
set -u
dir=${1:?usage: summary.sh RESULTS_DIR}
p=0 f=0 s=0 n=0
for file in "$dir"/*; do
    [ -f "$file" ] || continue
    read -r a b c < "$file" || continue
    printf '  %-40s %s passed, %s failed, %s skipped\n' "$(basename "$file")" "$a" "$b" "${c:-0}"
    p=$((p + a)) f=$((f + b)) s=$((s + ${c:-0})) n=$((n + 1))
done
echo "$p passed, $f failed, $s skipped"
[ "$n" -gt 0 ] && [ "$f" -eq 0 ]
