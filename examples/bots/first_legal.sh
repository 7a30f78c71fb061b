#!/bin/sh
# A minimal exec: seat in sh + awk (docs/protocol.md):
#     caishen match --policies "exec:sh examples/bots/first_legal.sh,greedy" --walls 100 --out runs/awk
# It answers hello with ready, and each request with: win if legal, else pass (it never claims), else the
# first legal action (the lowest discard).  It relies on the host's compact JSON (one object per line, no
# spaces); a real bot parses JSON.  mawk reads a pipe in blocks unless told -W interactive.
prog='
/"type":"hello"/ { print "{\"type\":\"ready\"}"; fflush(); next }
/"type":"request"/ {
    legal = $0
    sub(/.*"legal":\[/, "", legal)
    sub(/\].*/, "", legal)
    n = split(legal, names, ",")
    pick = names[1]
    for (i = 1; i <= n; i++) {
        if (names[i] == "\"win\"") { pick = names[i]; break }
        if (names[i] == "\"pass\"") pick = names[i]
    }
    print "{\"action\":" pick "}"
    fflush()
    next
}
/"type":"bye"/ { exit }
'
if awk -W version 2>/dev/null | grep -q mawk; then
    exec awk -W interactive "$prog"
fi
exec awk "$prog"
