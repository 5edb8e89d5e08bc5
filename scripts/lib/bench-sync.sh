# scripts/lib/bench-sync.sh: the sync mode of scripts/bench (issue 16),
# sourced by it after the build with the helpers of scripts/lib/bench.sh
# loaded; see the description at the top of scripts/bench.
#
# The question: a client that synced a tree of FOLDERS x FILES before, and
# one file in it changed since, what does it cost to learn which? With
# davgate's change feed, one sync-collection REPORT from its last token;
# without one (Apache, and any client that does not use the feed), a
# PROPFIND Depth 1 of every folder. And for a davgate whose upstream is
# another davgate: the upstream requests and bytes its refresh costs.
# shellcheck shell=bash disable=SC2034  # the table's settings are read by bench.sh

FOLDERS=50
FILES_PER_FOLDER=200
(( QUICK )) && { FOLDERS=10; FILES_PER_FOLDER=50; }
FRONT_TTL=1
FRONT_PID=""
before_cleanup() { stop_pid "$FRONT_PID"; }

# ------------------------------------------------------------- the servers
say "Starting Apache (mpm_event, mod_dav_fs) and davgate (file: upstream), the same tree of $FOLDERS x $FILES_PER_FOLDER files in each"
start_apache /dav
register_server apache "https://127.0.0.1:$APACHE_PORT/dav" "admin:$APACHE_PASSWORD" "$APACHE_CA" "$APACHE_STORE" "$(cat "$APACHE_PIDFILE")"
D="$WORK/davgate"
mkdir -p "$D/var/upstream"
# access_log: the front davgate's requests to it are counted and sized from it.
davgate_config "$D" 'access_log = true'
cat >> "$D/conf/davgate.toml" <<EOF
[[domain]]
name = "files"
upstream = "file:../var/upstream"
EOF
for store in "$APACHE_STORE" "$D/var/upstream"; do
    for f in $(seq -w 1 "$FOLDERS"); do make_collection "$store/d$f" "$FILES_PER_FOLDER"; done
done
chown -R www-data:www-data "$APACHE_STORE"
start_davgate "$D"
register_server davgate "https://127.0.0.1:$DAVGATE_PORT/files" "admin:$DAVGATE_PASSWORD" "$DAVGATE_CA" "" "$DAVGATE_PID"
note "Apache pid $(server_pid apache), $(url apache)/; davgate pid $DAVGATE_PID, $(url davgate)/"

say "Starting a second davgate in front of the first (its password in a vault, listing_ttl $FRONT_TTL)"
F="$WORK/front"
davgate_vault "$F" davgate admin chained "$DAVGATE_PASSWORD"
davgate_config "$F" 'vault = "../vault/vault.dgv"'
cat >> "$F/conf/davgate.toml" <<EOF
[[domain]]
name = "chained"
upstream = "$(url davgate)/"
upstream_ca = "$DAVGATE_CA"
credentials = { service = "davgate", account = "admin" }
listing_ttl = $FRONT_TTL
EOF
UPSTREAM_PASSWORD=$DAVGATE_PASSWORD UPSTREAM_PID=$DAVGATE_PID UPSTREAM_PORT=$DAVGATE_PORT UPSTREAM_CA=$DAVGATE_CA
start_davgate "$F" --key-file "$F/vault/vault.key"
register_server front "https://127.0.0.1:$DAVGATE_PORT/chained" "admin:$DAVGATE_PASSWORD" "$DAVGATE_CA" "" "$DAVGATE_PID"
FRONT_PID=$DAVGATE_PID
# The first davgate stays the one `settle` and the table call davgate.
DAVGATE_PASSWORD=$UPSTREAM_PASSWORD DAVGATE_PID=$UPSTREAM_PID DAVGATE_PORT=$UPSTREAM_PORT DAVGATE_CA=$UPSTREAM_CA
note "front pid $FRONT_PID, $(url front)/"

FOLDER_PATHS=(/)
for f in $(seq -w 1 "$FOLDERS"); do FOLDER_PATHS+=("/d$f/"); done

# walk WHO: a PROPFIND Depth 1 (allprop) of every folder on one kept-alive
# connection, as a client without a feed re-lists a tree; prints requests,
# seconds (wall) and bytes received. Any status but 207 fails the run.
walk() {
    local who=$1 args=() path start out
    for path in "${FOLDER_PATHS[@]}"; do args+=(-o /dev/null "$(url "$who")$path"); done
    start=$(date +%s.%N)
    out=$(dav_curl "$who" -X PROPFIND -H 'Depth: 1' -H 'Content-Type: application/xml; charset=utf-8' \
        --data-binary "$PROPFIND_BODY" -w '%{http_code} %{size_download}\n' "${args[@]}")
    awk -v start="$start" -v end="$(date +%s.%N)" -v who="$who" '
        $1 != 207 { bad = $1 } { n++; bytes += $2 }
        END { if (bad) { print who ": a PROPFIND answered " bad > "/dev/stderr"; exit 1 }
              printf "%d %.3f %d\n", n, end - start, bytes }' <<<"$out" || die "$who: walk failed"
}

SYNC_BODY_START='<?xml version="1.0" encoding="utf-8"?><D:sync-collection xmlns:D="DAV:"><D:sync-token>'
SYNC_BODY_END='</D:sync-token><D:sync-level>infinite</D:sync-level><D:prop><D:getetag/><D:getcontentlength/><D:getlastmodified/></D:prop></D:sync-collection>'
# sync_report TOKEN OUT: a sync-collection REPORT of davgate's root from TOKEN
# ("" for everything), the answer into OUT; prints seconds and bytes.
sync_report() {
    local out
    out=$(dav_curl davgate -X REPORT -H 'Depth: 0' -H 'Content-Type: application/xml; charset=utf-8' \
        --data-binary "$SYNC_BODY_START$1$SYNC_BODY_END" -o "$2" -w '%{http_code} %{time_total} %{size_download}' "$(url davgate)/")
    read -r code seconds bytes <<<"$out"
    [[ $code == 207 ]] || die "davgate: REPORT answered $code: $(head -c 300 "$2")"
    echo "$seconds $bytes"
}
token_of() { sed -n 's|.*<D:sync-token>\([^<]*\)</D:sync-token>.*|\1|p' "$1"; }

# What the front asked of the first davgate since a mark (a line count of
# its access log): "REQUESTS BYTES" of PROPFIND and REPORT answers.
log_mark() { wc -l < "$D/stderr.log"; }
upstream_since() {
    tail -n +"$(( $1 + 1 ))" "$D/stderr.log" \
        | grep -E '\] (PROPFIND|REPORT) /files' \
        | sed -n 's/.*bytes=\([0-9]*\).*/\1/p' | awk '{ n++; b += $1 } END { printf "%d %d\n", n, b }'
}

say "Warm-up: every folder listed through each server, the first full sync, the front's first walk"
for who in davgate apache; do walk "$who" > /dev/null || die "$who: the first walk failed"; done
sync_report "" "$WORK/sync.xml" > /dev/null || die "davgate: the first sync failed"
TOKEN=$(token_of "$WORK/sync.xml")
[[ -n $TOKEN ]] || die "no sync-token in davgate's first sync answer"
FIRST_SYNC_RESPONSES=$(count_responses "$WORK/sync.xml")
(( FIRST_SYNC_RESPONSES == FOLDERS * (FILES_PER_FOLDER + 1) )) \
    || die "the first sync named $FIRST_SYNC_RESPONSES members, not $(( FOLDERS * (FILES_PER_FOLDER + 1) ))"
walk front > /dev/null || die "front: the first walk failed"

for round in $(seq "$ROUNDS"); do
    changed="/d$(printf "%0${#FOLDERS}d" $(( round * 7 % FOLDERS + 1 )))/file-$(printf %05d $(( round * 13 )))".txt
    say "Round $round: $changed changed through each server, then what it costs to learn that"
    for who in davgate apache; do
        code=$(dav_curl "$who" -X PUT --data-binary "changed in round $round" -o /dev/null -w '%{http_code}' "$(url "$who")$changed")
        [[ $code == 20[14] ]] || die "$who: PUT $changed answered $code"
    done
    settle davgate
    for who in $(round_order "$round" davgate apache); do
        if [[ $who == davgate ]]; then
            read -r seconds bytes < <(sync_report "$TOKEN" "$WORK/sync.xml")
            [[ -n ${bytes:-} ]] || die "davgate: the sync-collection REPORT failed"
            responses=$(count_responses "$WORK/sync.xml")
            grep -q "$changed" "$WORK/sync.xml" || die "the sync answer does not name $changed"
            (( responses == 1 )) || note "the sync answer named $responses members"
            TOKEN=$(token_of "$WORK/sync.xml")
            record requests davgate "$round" 1; record seconds davgate "$round" "$seconds"; record bytes davgate "$round" "$bytes"
            note "davgate sync-collection from the last token: 1 request, $seconds s, $bytes bytes, $responses member"
        fi
        read -r requests seconds bytes < <(walk "$who")
        [[ -n ${bytes:-} ]] || die "$who: the walk failed"
        label=$([[ $who == davgate ]] && echo davgate-propfind || echo apache)
        record requests "$label" "$round" "$requests"; record seconds "$label" "$round" "$seconds"; record bytes "$label" "$round" "$bytes"
        note "$(title "$who") PROPFIND Depth 1 of every folder: $requests requests, $seconds s, $bytes bytes"
    done

    # The front learns the same change from its upstream davgate.
    sleep "$FRONT_TTL.2"
    mark=$(log_mark)
    read -r requests seconds bytes < <(walk front)
    [[ -n ${bytes:-} ]] || die "front: the walk failed"
    read -r asked asked_bytes < <(sleep 0.3; upstream_since "$mark")
    record front_requests davgate "$round" "$asked"; record front_bytes davgate "$round" "$asked_bytes"
    record front_walk davgate "$round" "$seconds"
    note "front: its client's walk took $seconds s; the front asked its upstream $asked requests, $asked_bytes bytes"
done

# ------------------------------------------------------------------ table
register_server davgate-propfind "" "" "" "" ""
title() { case $1 in apache) echo "Apache PROPFIND" ;; davgate) echo "davgate sync" ;; davgate-propfind) echo "davgate PROPFIND" ;; *) echo "$1" ;; esac; }
TABLE_COLUMNS=(davgate davgate-propfind apache)
TABLE_PEERS=(apache)
RATIO_TITLE="sync/Apache"
printf '\ndavgate %s sync mode vs Apache %s, one change in a tree of %s folders x %s files, %s\n' \
    "$COMMIT" "$(apache_version)" "$FOLDERS" "$FILES_PER_FOLDER" "$(date -u +%Y-%m-%d)"
printf 'clients: curl over TLS + Basic auth on 127.0.0.1, one kept-alive connection per measurement, on the same %s cores; load before %s%s\n' \
    "$(nproc)" "$LOAD_BEFORE" "$QUICK_NOTE"
printf 'davgate sync: one sync-collection REPORT (infinite, getetag getcontentlength getlastmodified) from the last token;\n'
printf 'PROPFIND: Depth 1 allprop of the root and every folder (%s requests), as a client without a feed re-lists\n' "${#FOLDER_PATHS[@]}"
printf 'davgate: release, file: upstream, defaults (access_log on for the front rows); Apache: mpm_event, mod_dav_fs, {SHA} password\n'
printf '%s rounds, a different file changed each; each cell: mean (round 1/round 2)\n\n' "$ROUNDS"
table_header
table_row "learn one change: requests"               requests %.0f lower
table_row "learn one change: time (s)"               seconds  %.4f lower
table_row "learn one change: bytes received"         bytes    %.0f lower
TABLE_COLUMNS=(davgate)
title() { echo "front davgate"; }
TABLE_PEERS=()
RATIO_TITLE="-"
printf '\na davgate in front of that davgate (listing_ttl %s s), its client walking every folder after the change:\n' "$FRONT_TTL"
table_header
table_row "front: upstream requests per refresh"     front_requests %.0f lower
table_row "front: upstream bytes per refresh"        front_bytes    %.0f lower
table_row "front: its client's walk (s)"             front_walk     %.3f lower
printf '  (without a feed the front would send %s PROPFIND Depth 1, as many bytes as the davgate PROPFIND row)\n' "${#FOLDER_PATHS[@]}"
