#!/usr/bin/env bash
# man-include.sh KNEEBENCH -- help2man's --include file for kneebench.1: every command's own
# --help verbatim under COMMANDS (help2man itself reads only `kneebench --help`), then the
# files a run writes and where the documents are. Written to stdout.
set -euo pipefail
kb=$1

# roff: a backslash is \e, and a line starting with . or ' would be a request
roff() { sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"; }

echo "[>COMMANDS]"
"$kb" --help | awk '/^Commands:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }' |
while read -r cmd; do
    echo ".SS \"kneebench $cmd\""
    echo ".nf"
    "$kb" "$cmd" --help | roff
    echo ".fi"
done

cat <<'ROFF'
[FILES]
.TP
.I RUN/plan.json, RUN/run.json
the plan (parameters, criteria, every point id) and the run's identity
.TP
.I RUN/points/<runtime>-<route>-<rate>/
command.json, load.json, corrected.hgrm, uncorrected.hgrm, series.hlog, series.csv,
samples.csv, verdict.json and the DONE marker, written last
.TP
.I RUN/report.md, report.csv, report.json, charts/
kneebench report's output (report.csv and report.json: docs/report-format.md)
[SEE ALSO]
README.md, docs/usage.md, docs/results.md, docs/evidence.md, docs/protocol.md, docs/load.md,
docs/knee.md, docs/db.md, docs/docker.md, docs/report-format.md, docs/security.md and
runner/README-load.md: \fBmake install\fR puts them, at those paths, under
share/doc/kneebench/ beside the installed bin/ (/usr/local/share/doc/kneebench/ by
default), and they are in the kneebench source tree;
.BR wrk2 (1),
.BR help2man (1).
ROFF
