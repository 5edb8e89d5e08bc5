# scripts/lib/bench-cluster.sh: the cluster mode of scripts/bench (issue 19),
# sourced by it after the build with the helpers of scripts/lib/bench.sh
# loaded; see the description at the top of scripts/bench.
#
# The question: what the index in PostgreSQL costs against the embedded
# SQLite on one instance, and what 1 and 3 instances on one PostgreSQL index
# behind HAProxy do with PROPFIND Depth 0, GET and small PUTs. Four
# configurations run side by side, each with its own upstream folder (and
# its own database), measured one at a time; a fifth, SQLite with
# write_mode = "through", only for the PUT, so that the PUT's PG/SQLite
# ratio can also be read without write-back in it.
# shellcheck shell=bash disable=SC2034  # the table's settings are read by bench.sh

PG_BIN=/usr/lib/postgresql/15/bin
INSTANCES=3
# Shorter wrk runs than the default mode's 20 s, and in a full run one round
# of PUTs: 10,000 write-through PUTs take minutes per PostgreSQL
# configuration on 2 cores (about 45 files/s at 9d28ac6).
(( QUICK )) || WRK_SECONDS=10
PUT_ROUNDS=$(( QUICK ? ROUNDS : 1 ))
WRK_ARGS=(-t2 -c32 -d"${WRK_SECONDS}s" --timeout 10s)
SERVERS=(sqlite pg ha1 ha3)             # measured with every metric
PUT_ONLY=(sqlite-wt)                    # measured with the PUT only
declare -A TITLES=([sqlite]="SQLite" [sqlite-wt]="SQLite through" [pg]="PostgreSQL" [ha1]="HAProxy+1 PG" [ha3]="HAProxy+3 PG")
title() { echo "${TITLES[$1]:-$1}"; }
declare -A INSTANCE_PIDS=() INSTANCE_DIRS=() PROXY_PID=() PROXY_SOCKET=() DATABASE=()
ALL_INSTANCES=()
PROXIES=()
PG_DIR="$WORK/postgres"
PG_STARTED=0
FAILURES=()                             # what went wrong, printed under the table; the run then fails

# As root, PostgreSQL's programs run as its account: initdb and pg_ctl refuse root.
as_postgres() { if (( EUID == 0 )); then runuser -u postgres -- "$@"; else "$@"; fi; }
pg_sql() {   # DATABASE SQL: psql over the Unix socket as davgate, unaligned, no headers
    "$PG_BIN/psql" --no-psqlrc -qAt -v ON_ERROR_STOP=1 \
        "host=$PG_DIR port=$PG_PORT user=davgate dbname=$1 connect_timeout=60" -c "$2"
}

before_cleanup() {
    local pid
    for pid in "${ALL_INSTANCES[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${ALL_INSTANCES[@]}" "${PROXIES[@]}"; do stop_pid "$pid"; done
    if (( PG_STARTED )); then
        as_postgres "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -w -t 60 stop > /dev/null 2>&1 || true
    fi
}

# ------------------------------------------------------------- PostgreSQL
# start_postgres: a cluster of its own in WORK (initdb, superuser davgate,
# trust), on 127.0.0.1 at a free port, its socket in its folder; fsync,
# full_page_writes and synchronous_commit on. Sets PG_PORT, PG_PID.
start_postgres() {
    mkdir -p "$PG_DIR"
    (( EUID == 0 )) && chown postgres:postgres "$PG_DIR"
    as_postgres "$PG_BIN/initdb" -D "$PG_DIR/data" -U davgate -A trust -E UTF8 --locale=C --no-instructions \
        > "$PG_DIR/initdb.log" 2>&1 || { cat "$PG_DIR/initdb.log" >&2; die "initdb failed"; }
    echo "include 'davgate-bench.conf'" >> "$PG_DIR/data/postgresql.conf"
    for _ in 1 2 3 4 5; do
        PG_PORT=$(free_port)
        printf '%s\n' "listen_addresses = '127.0.0.1'" "port = $PG_PORT" "unix_socket_directories = '$PG_DIR'" \
            'max_connections = 300' 'fsync = on' 'full_page_writes = on' 'synchronous_commit = on' \
            > "$PG_DIR/data/davgate-bench.conf"
        (( EUID == 0 )) && chown postgres:postgres "$PG_DIR/data/davgate-bench.conf"
        if as_postgres "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 120 start > /dev/null 2>&1; then
            PG_STARTED=1
            PG_PID=$(head -n 1 "$PG_DIR/data/postmaster.pid")
            return 0
        fi
        # Someone took the port between free_port and the server's bind: try another.
        grep -qE 'could not bind|Address already in use' "$PG_DIR/server.log" || break
    done
    tail -n 20 "$PG_DIR/server.log" >&2
    die "PostgreSQL did not start"
}

# ------------------------------------------------------------- davgate
# instance_config DIR TLS INDEX-URL UPSTREAM [DOMAIN-LINE...]: DIR/conf/davgate.toml,
# log_level warning; with TLS 1 as every mode's davgate (davgate_config),
# with 0 plain HTTP on 127.0.0.1 behind HAProxy (allow_basic_over_http);
# with an INDEX-URL the [index]; one domain "files" on the folder UPSTREAM.
instance_config() {
    local dir=$1 tls=$2 index=$3 upstream=$4; shift 4
    if (( tls )); then
        davgate_config "$dir" 'log_level = "warning"'
    else
        mkdir -p "$dir/conf"
        printf '%s\n' '[server]' 'listen = "127.0.0.1:0"' 'tls = false' 'allow_basic_over_http = true' 'state = "../var"' \
            'log_level = "warning"' '' > "$dir/conf/davgate.toml"
    fi
    if [[ -n $index ]]; then printf '[index]\nurl = "%s"\n\n' "$index" >> "$dir/conf/davgate.toml"; fi
    printf '%s\n' '[[domain]]' 'name = "files"' "upstream = \"file:$upstream\"" "$@" >> "$dir/conf/davgate.toml"
}

# start_instance DIR: runs davgate on DIR/conf/davgate.toml, with the
# users file of the first (the sqlite configuration's: one admin password
# everywhere) unless it is that one; waits until it listens. Sets
# INSTANCE_PID and INSTANCE_PORT.
start_instance() {
    local dir=$1
    mkdir -p "$dir/var"
    [[ -n ${USERS_FILE:-} ]] && cp "$USERS_FILE" "$dir/var/users.json"
    "$DAVGATE_BIN" serve --config "$dir/conf/davgate.toml" > "$dir/stdout.log" 2> "$dir/stderr.log" &
    INSTANCE_PID=$!
    ALL_INSTANCES+=("$INSTANCE_PID")
    wait_listening "$dir" "$INSTANCE_PID" 600
    INSTANCE_PORT=$LISTEN_PORT
    [[ -n $INSTANCE_PORT ]] || die "davgate in $dir did not start: $(cat "$dir/stdout.log" "$dir/stderr.log")"
}

# ----------------------------------------------------------------- HAProxy
# start_haproxy NAME PORT...: HAProxy as the tests run it
# (conf/haproxy-cluster.cfg: HTTP mode, round robin, http-reuse safe, OPTIONS
# health checks every 500 ms, retry-on conn-failure with redispatch), TLS
# on a free port with the bench's certificate ($WORK/haproxy/front.pem), a
# stats socket in $WORK/NAME-haproxy. Sets PROXY_PORT.
start_haproxy() {
    local name=$1; shift
    local dir="$WORK/$name-haproxy" servers="" i=0 port
    mkdir -p "$dir"
    for port in "$@"; do servers+="    server b$i 127.0.0.1:$port"$'\n'; i=$(( i + 1 )); done
    for _ in 1 2 3 4 5; do
        PROXY_PORT=$(free_port)
        # The configuration the tests run and the README shows.
        python3 - "$REPO/conf/haproxy-cluster.cfg" "$dir/haproxy.cfg" "    stats socket $dir/stats.sock mode 600 level admin" \
                "127.0.0.1:$PROXY_PORT ssl crt $WORK/haproxy/front.pem" "${servers%$'\n'}" <<'PY'
import sys
template, target, global_, bind, servers = sys.argv[1:]
text = open(template).read().replace("{{GLOBAL}}", global_).replace("{{BIND}}", bind).replace("{{SERVERS}}", servers)
open(target, "w").write(text)
PY
        haproxy -f "$dir/haproxy.cfg" -db > "$dir/haproxy.log" 2>&1 &
        PROXY_PID[$name]=$!
        PROXIES+=("$!")
        PROXY_SOCKET[$name]="$dir/stats.sock"
        wait_for_port "$PROXY_PORT" && return 0
        stop_pid "${PROXY_PID[$name]}"
        grep -q 'cannot bind socket' "$dir/haproxy.log" || break
    done
    cat "$dir/haproxy.log" >&2
    die "HAProxy ($name) did not start"
}

# backend_counts NAME: "SERVER RESPONSES 5XX ECON ERESP" per instance, from the stats socket.
backend_counts() { python3 "$BENCH_PY" haproxy-stat "${PROXY_SOCKET[$1]}" instances; }

# ----------------------------------------------------- CPU, per request
ticks_of() { python3 "$BENCH_PY" cpu-ticks "$1"; }
seconds_of() { awk -v t="$1" -v hz="$CLK_TCK" 'BEGIN { printf "%.1f", t / hz }'; }
# snapshot WHO: CPU ticks so far of each instance (SNAP_INSTANCE, in
# INSTANCE_PIDS order), of its HAProxy and of the PostgreSQL server (its
# postmaster with every backend), and its HAProxy's counts (SNAP_COUNTS).
snapshot() {
    local who=$1 pid
    SNAP_INSTANCE=()
    for pid in ${INSTANCE_PIDS[$who]}; do SNAP_INSTANCE+=("$(ticks_of "$pid")"); done
    SNAP_PROXY=0; SNAP_PG=0; SNAP_COUNTS=""
    [[ -n ${PROXY_PID[$who]:-} ]] && { SNAP_PROXY=$(ticks_of "${PROXY_PID[$who]}"); SNAP_COUNTS=$(backend_counts "$who"); }
    [[ -n ${DATABASE[$who]:-} ]] && SNAP_PG=$(ticks_of "$PG_PID")
    return 0
}
# account WHO METRIC ROUND REQUESTS: against the snapshot before, records
# METRICcpu (us of davgate CPU, all instances, per request), METRICpx
# (HAProxy's), METRICpg (PostgreSQL's) and METRICall (their sum); for
# several instances keeps how requests and CPU spread (SPREAD, noted by the
# caller) and each instance's 5xx. Returns 1 when an instance answered 5xx or failed a
# connection or response (FAILURES says which).
account() {
    local who=$1 metric=$2 round=$3 requests=$4 pid i=0 total=0 proxy=0 pg=0 cpus=() counts shares="" secs="" bad=0
    for pid in ${INSTANCE_PIDS[$who]}; do
        cpus+=($(( $(ticks_of "$pid") - SNAP_INSTANCE[i] ))); total=$(( total + cpus[i] )); i=$(( i + 1 ))
    done
    [[ -n ${PROXY_PID[$who]:-} ]] && proxy=$(( $(ticks_of "${PROXY_PID[$who]}") - SNAP_PROXY ))
    [[ -n ${DATABASE[$who]:-} ]] && pg=$(( $(ticks_of "$PG_PID") - SNAP_PG ))
    record "${metric}cpu" "$who" "$round" "$(us_each "$total" "$requests")"
    [[ -n ${PROXY_PID[$who]:-} ]] && record "${metric}px" "$who" "$round" "$(us_each "$proxy" "$requests")"
    [[ -n ${DATABASE[$who]:-} ]] && record "${metric}pg" "$who" "$round" "$(us_each "$pg" "$requests")"
    record "${metric}all" "$who" "$round" "$(us_each $(( total + proxy + pg )) "$requests")"
    if [[ -n ${PROXY_PID[$who]:-} ]]; then
        # Responses per instance in this step: after minus before.
        counts=$(join <(sort <<<"$SNAP_COUNTS") <(backend_counts "$who" | sort) \
            | awk '{ printf "%s %d %d %d %d\n", $1, $6 - $2, $7 - $3, $8 - $4, $9 - $5 }' | sort)
        while read -r server answered fivexx econ eresp; do
            if (( fivexx + econ + eresp > 0 )); then
                bad=1
                FAILURES+=("$(title "$who"), $metric round $round: instance $server answered $fivexx 5xx, $econ connection errors, $eresp response errors (HAProxy's counts)")
            fi
        done <<<"$counts"
        if (( INSTANCES > 1 )) && [[ $who == ha3 ]]; then
            shares=$(awk '{ n[NR] = $2; t += $2 } END { for (i = 1; i <= NR; i++) printf "%s%d (%.0f%%)", (i > 1 ? " / " : ""), n[i], t ? 100 * n[i] / t : 0 }' <<<"$counts")
            secs=$(printf '%s\n' "${cpus[@]}" | awk -v hz="$CLK_TCK" '{ printf "%s%.1f", (NR > 1 ? " / " : ""), $1 / hz }')
            SPREAD[$metric,$round]="requests $shares; davgate CPU s $secs; HAProxy $(seconds_of "$proxy") s, PostgreSQL $(seconds_of "$pg") s"
        fi
    fi
    return "$bad"
}
declare -A SPREAD=()

# log_lines WHO: the first warnings and errors of WHO's instances (log_level
# warning: anything they log is one), prefixed with the instance's folder.
log_lines() {
    local dir
    for dir in ${INSTANCE_DIRS[$1]}; do
        { grep -hiE '(warning|error|critical)' "$dir/stdout.log" "$dir/stderr.log" || true; } | head -n 3 \
            | sed "s|^|$(basename "$dir"): |" | cut -c1-300
    done
}

# ---------------------------------------- PostgreSQL lock waits, sampled
# start_waits DATABASE: every 0.2 s (one psql session, \watch, its output
# line-buffered), the sessions of DATABASE waiting for an advisory lock
# (another instance's domain turn) and those running a statement otherwise.
start_waits() {
    printf '%s\n' "SELECT count(*) FILTER (WHERE wait_event = 'advisory'), count(*) FILTER (WHERE state = 'active' AND wait_event IS DISTINCT FROM 'advisory') FROM pg_stat_activity WHERE datname = '$1' AND pid <> pg_backend_pid()" \
        '\watch 0.2' | stdbuf -oL "$PG_BIN/psql" --no-psqlrc -qAt "host=$PG_DIR port=$PG_PORT user=davgate dbname=postgres" \
        > "$WORK/waits.txt" 2>&1 &
    WAITS_PID=$!
    BACKGROUND+=("$WAITS_PID")
}
# stop_waits: sets WAITS to "MEAN-WAITING MAX-WAITING MEAN-ACTIVE SAMPLES".
stop_waits() {
    kill "$WAITS_PID" 2>/dev/null || true
    wait "$WAITS_PID" 2>/dev/null || true
    WAITS=$(awk -F'|' '/^[0-9]+\|[0-9]+$/ { n++; w += $1; a += $2; if ($1 > m) m = $1 }
        END { if (n) printf "%.2f %d %.2f %d\n", w / n, m, a / n, n; else print "- - - 0" }' "$WORK/waits.txt")
}

# ------------------------------------------------------------ test data
say "The disk's fsync floor; a 4 KiB test file"
head -c 4096 /dev/urandom > "$WORK/small.bin"
declare -A FSYNC_FLOOR=()
for writers in 1 "$PUT_CONNECTIONS"; do
    # Kept until the work folder goes: ext4 without a journal makes files
    # slowly for a minute after many were deleted (scripts/bench, section 6).
    FSYNC_FLOOR[$writers]=$(python3 "$BENCH_PY" fsync-floor "$WORK/fsync-probe-$writers" 2 "$writers")
done
note "new 4 KiB files, each and its folder fsynced: ${FSYNC_FLOOR[1]} files/s (one writer)," \
     "${FSYNC_FLOOR[$PUT_CONNECTIONS]} files/s ($PUT_CONNECTIONS writers)"

# ------------------------------------------------------------ the servers
say "Starting PostgreSQL 15 (fsync, synchronous_commit on), davgate on SQLite and on PostgreSQL, HAProxy in front of 1 and $INSTANCES instances"
start_postgres
PG_VERSION=$(pg_sql postgres 'SHOW server_version' | cut -d' ' -f1)
note "PostgreSQL $PG_VERSION: pid $PG_PID, 127.0.0.1:$PG_PORT, fsync $(pg_sql postgres 'SHOW fsync')," \
     "synchronous_commit $(pg_sql postgres 'SHOW synchronous_commit'), shared_buffers $(pg_sql postgres 'SHOW shared_buffers')"
for who in pg ha1 ha3; do
    DATABASE[$who]=${who}
    pg_sql postgres "CREATE DATABASE $who" || die "CREATE DATABASE $who failed"
done
index_url() { echo "postgres://davgate@127.0.0.1:$PG_PORT/${DATABASE[$1]}"; }

# sqlite: the embedded default, write-back; its users file is everyone's.
USERS_FILE=""
instance_config "$WORK/sqlite" 1 "" "$WORK/sqlite/upstream"
mkdir -p "$WORK/sqlite/upstream"
start_davgate "$WORK/sqlite"
ALL_INSTANCES+=("$DAVGATE_PID")
INSTANCE_PIDS[sqlite]=$DAVGATE_PID; INSTANCE_DIRS[sqlite]="$WORK/sqlite"
PASSWORD=$DAVGATE_PASSWORD
USERS_FILE="$WORK/sqlite/var/users.json"
register_server sqlite "https://127.0.0.1:$DAVGATE_PORT/files" "admin:$PASSWORD" "$DAVGATE_CA" "$WORK/sqlite/upstream" "$DAVGATE_PID"

direct() {   # WHO INDEX-URL [DOMAIN-LINE...]: one instance, its own TLS
    local who=$1 index=$2; shift 2
    mkdir -p "$WORK/$who/upstream"
    instance_config "$WORK/$who" 1 "$index" "$WORK/$who/upstream" "$@"
    start_instance "$WORK/$who"
    INSTANCE_PIDS[$who]=$INSTANCE_PID; INSTANCE_DIRS[$who]="$WORK/$who"
    register_server "$who" "https://127.0.0.1:$INSTANCE_PORT/files" "admin:$PASSWORD" "$WORK/$who/certs/davgate.pem" \
        "$WORK/$who/upstream" "$INSTANCE_PID"
}
direct sqlite-wt "" 'write_mode = "through"'
direct pg "$(index_url pg)"

# ha1, ha3: plain-HTTP instances on one database and one upstream folder each, behind their HAProxy.
mkdir -p "$WORK/haproxy"
make_certificate "$WORK/haproxy"
cat "$WORK/haproxy/cert.pem" "$WORK/haproxy/key.pem" > "$WORK/haproxy/front.pem"
chmod 600 "$WORK/haproxy/front.pem"
for who in ha1 ha3; do
    count=$([[ $who == ha1 ]] && echo 1 || echo "$INSTANCES")
    mkdir -p "$WORK/$who/upstream"
    ports=()
    for i in $(seq "$count"); do
        instance_config "$WORK/$who/i$i" 0 "$(index_url "$who")" "$WORK/$who/upstream"
        start_instance "$WORK/$who/i$i"
        INSTANCE_PIDS[$who]+="${INSTANCE_PIDS[$who]:+ }$INSTANCE_PID"
        INSTANCE_DIRS[$who]+="${INSTANCE_DIRS[$who]:+ }$WORK/$who/i$i"
        ports+=("$INSTANCE_PORT")
    done
    start_haproxy "$who" "${ports[@]}"
    register_server "$who" "https://127.0.0.1:$PROXY_PORT/files" "admin:$PASSWORD" "$WORK/haproxy/cert.pem" \
        "$WORK/$who/upstream" "${PROXY_PID[$who]}"
done
for who in "${SERVERS[@]}" "${PUT_ONLY[@]}"; do
    note "$(title "$who"): $(url "$who")/, davgate pids ${INSTANCE_PIDS[$who]}${PROXY_PID[$who]:+, HAProxy pid ${PROXY_PID[$who]}}"
done
# Every instance on a shared index must see the others (the instance table).
sleep 3
alive=$(pg_sql ha3 "SELECT count(*) FROM instance" 2>/dev/null || echo "?")
note "instances in ha3's instance table: $alive (expected $INSTANCES)"

# The 4 KiB file through each, then read back once per instance (each
# instance behind HAProxy fetches it from the upstream into its own cache).
for who in "${SERVERS[@]}"; do
    code=$(dav_curl "$who" -o /dev/null -w '%{http_code}' -T "$WORK/small.bin" "$(url "$who")/small.bin")
    [[ $code == 201 || $code == 204 ]] || die "$who: PUT small.bin answered $code"
    for _ in $(seq $(( INSTANCES * 2 ))); do
        code=$(dav_curl "$who" -o "$WORK/back.bin" -w '%{http_code}' "$(url "$who")/small.bin")
        if [[ $code != 200 ]] || ! cmp -s "$WORK/back.bin" "$WORK/small.bin"; then die "$who: GET small.bin answered $code or other bytes"; fi
    done
done

# --------------------------------------------- wrk: GET 4 KiB, PROPFIND 0
cluster_wrk_script() {
    local who=$1 method=$2 file="$WORK/wrk-$1-$2.lua"
    local auth; auth=$(printf '%s' "$(creds "$who")" | base64 -w0)
    {
        echo "wrk.headers[\"Authorization\"] = \"Basic $auth\""
        if [[ $method == PROPFIND ]]; then
            echo 'wrk.method = "PROPFIND"'
            echo 'wrk.headers["Depth"] = "0"'
            echo 'wrk.headers["Content-Type"] = "application/xml; charset=utf-8"'
            echo "wrk.body = '$PROPFIND_BODY'"
        fi
    } > "$file"
    echo "$file"
}
# cluster_wrk WHO METHOD ROUND METRIC: records METRIC (req/s) and, through
# account, the CPU per request. Non-2xx answers are not recorded: they go
# to FAILURES with one such request's answer and the instances' log lines.
cluster_wrk() {
    local who=$1 method=$2 round=$3 metric=$4 out requests rate errors failed=0 flag=""
    sync
    snapshot "$who"
    if ! out=$(timeout $(( WRK_SECONDS + 30 )) wrk "${WRK_ARGS[@]}" -s "$(cluster_wrk_script "$who" "$method")" "$(url "$who")/small.bin" 2>&1); then
        failed=1
        FAILURES+=("$(title "$who"), $method round $round: wrk failed: $(tr '\n' ' ' <<<"$out" | cut -c1-300)")
    fi
    requests=$(awk '/ requests in / { print $1 }' <<<"$out")
    rate=$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' <<<"$out")
    errors=$(grep -E 'Socket errors|Non-2xx' <<<"$out" | sed 's/^ *//' | paste -sd ';' || true)
    account "$who" "$metric" "$round" "$requests" || failed=1
    if grep -q 'Non-2xx' <<<"$out"; then
        failed=1
        FAILURES+=("$(title "$who"), $method round $round: wrk: $errors; one more: $(dav_curl "$who" -X "$method" -H 'Depth: 0' \
            -w ' -> %{http_code}' "$(url "$who")/small.bin" 2>&1 | tr '\n' ' ' | cut -c1-300)")
        while read -r line; do [[ -n $line ]] && FAILURES+=("  log: $line"); done < <(log_lines "$who")
    fi
    if grep -q 'Socket errors' <<<"$out"; then FAILURES+=("$(title "$who"), $method round $round: wrk: $errors"); fi
    if (( failed )); then flag=" (FAILED)"; else record "$metric" "$who" "$round" "$rate"; fi
    note "round $round, $(title "$who"): $requests requests, $rate req/s$flag, ${errors:-no socket errors}"
    if [[ -n ${SPREAD[$metric,$round]:-} && $who == ha3 ]]; then note "  over the $INSTANCES instances: ${SPREAD[$metric,$round]}"; fi
}
say "GET of a 4 KiB file with wrk ${WRK_ARGS[*]}, CPU per request (davgate, HAProxy, PostgreSQL)"
for round in $(seq "$ROUNDS"); do
    for who in $(round_order "$round" "${SERVERS[@]}"); do cluster_wrk "$who" GET "$round" get4k; done
done
say "PROPFIND Depth 0 (allprop) of the 4 KiB file with wrk ${WRK_ARGS[*]}, CPU per request"
for round in $(seq "$ROUNDS"); do
    for who in $(round_order "$round" "${SERVERS[@]}"); do cluster_wrk "$who" PROPFIND "$round" pf0; done
done

# ------------------------------------------------ PUT of FILES small files
# pending_uploads WHO: write-back uploads pending and in flight (a direct
# instance's /.davgate/metrics).
pending_uploads() {
    dav_curl "$1" "$(url "$1" | sed 's|/files$||')/.davgate/metrics" \
        | awk '/^davgate_uploads_(pending|in_flight)[{ ]/ { n += $NF } END { print n + 0 }'
}
# cluster_put WHO ROUND: MKCOL and FILES PUTs from PUT_CONNECTIONS connections
# (bench.py put-files), files/s; with PostgreSQL the sessions waiting for a
# domain turn sampled meanwhile; then, untimed, a PROPFIND Depth 1 through
# WHO must list them all and, once a write-back instance drained its
# journal, the upstream folder must hold exactly them, 4,096 bytes each.
cluster_put() {
    local who=$1 round=$2 collection="put-$2" out rate seconds reconnects waits="" code responses held entries mean max active samples
    sync
    [[ -n ${DATABASE[$who]:-} ]] && start_waits "${DATABASE[$who]}"
    snapshot "$who"
    if out=$(python3 "$BENCH_PY" put-files "$(url "$who")" "$(creds "$who")" "$(ca "$who")" \
            "$collection" "$FILES" "$PUT_CONNECTIONS" 2> "$WORK/put.err"); then
        read -r rate seconds reconnects <<<"$out"
        account "$who" put "$round" "$FILES" && record putn "$who" "$round" "$rate"
    else
        rate="-"; seconds="-"; reconnects="-"
        account "$who" put "$round" "$FILES" || true
        FAILURES+=("$(title "$who"), PUT round $round: $(head -c 600 "$WORK/put.err")")
        while read -r line; do [[ -n $line ]] && FAILURES+=("  log: $line"); done < <(log_lines "$who")
    fi
    if [[ -n ${DATABASE[$who]:-} ]]; then
        stop_waits
        read -r mean max active samples <<<"$WAITS"
        [[ $mean != - ]] && record putwait "$who" "$round" "$mean"
        waits="; sessions waiting on an advisory lock: mean $mean, max $max; other active statements: mean $active ($samples samples)"
    fi
    note "round $round, $(title "$who"): PUT ${seconds}s, $rate files/s, $reconnects reconnections$waits"
    if [[ -n ${SPREAD[put,$round]:-} && $who == ha3 ]]; then note "  over the $INSTANCES instances: ${SPREAD[put,$round]}"; fi
    read -r code _ < <(propfind_depth1 "$who" "/$collection/" "$WORK/multistatus.xml")
    responses=$(count_responses "$WORK/multistatus.xml")
    [[ $code == 207 && $responses == $(( FILES + 1 )) ]] \
        || FAILURES+=("$(title "$who"), PUT round $round: PROPFIND Depth 1 of $collection answered $code with $responses responses, expected $(( FILES + 1 ))")
    local start; start=$(date +%s.%N)
    if [[ -z ${PROXY_PID[$who]:-} ]]; then
        for _ in $(seq 1500); do (( $(pending_uploads "$who") == 0 )) && break; sleep 0.2; done
    fi
    held=$(find "$(store "$who")/$collection" -maxdepth 1 -type f -size 4096c | wc -l)
    entries=$(find "$(store "$who")/$collection" -mindepth 1 -maxdepth 1 | wc -l)
    if (( held != FILES || entries != FILES )); then
        FAILURES+=("$(title "$who"), PUT round $round: the upstream folder holds $held files of 4,096 bytes, $entries entries, not $FILES:" \
            "  $(find "$(store "$who")/$collection" -mindepth 1 -maxdepth 1 ! -size 4096c -printf '%f (%s bytes) ' | head -c 300)")
    fi
    note "  listed: $responses responses; upstream: $held files of 4,096 bytes, $entries entries" \
         "(after $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s of draining)"
    rm -f "$WORK/multistatus.xml"
    sync
}
say "PUT of $FILES files of 4 KiB, $PUT_CONNECTIONS connections in parallel, into a new collection; upstream checked"
drain_recent_deletions
for round in $(seq "$PUT_ROUNDS"); do
    for who in $(round_order "$round" "${SERVERS[@]}" "${PUT_ONLY[@]}"); do cluster_put "$who" "$round"; done
done

for who in "${SERVERS[@]}" "${PUT_ONLY[@]}"; do
    while read -r line; do [[ -n $line ]] && note "$(title "$who") log: $line"; done < <(log_lines "$who")
done
{ grep -hE 'Server .* is (DOWN|UP)' "$WORK"/ha*-haproxy/haproxy.log || true; } | head -n 5 | while read -r line; do note "HAProxy: $line"; done

# ------------------------------------------------------------------ table
# cluster_row LABEL METRIC FORMAT [noratio]: a cell per configuration (the
# mean of the rounds, then each round), then (unless noratio: counts whose
# quotients mean nothing) the plain quotients of the means: PG/SQLite
# (one instance each, direct), HA1/PG (HAProxy and plain HTTP in front of
# one instance against the instance's own TLS) and 3/1 (3 instances against
# 1, both behind HAProxy).
COLUMNS=(sqlite pg ha1 ha3 sqlite-wt)
CELL=20
cluster_row() {
    local label=$1 metric=$2 format=$3 ratios=${4:-} who values=()
    for who in "${COLUMNS[@]}"; do values+=("$(round_values "$metric" "$who")"); done
    awk -v label="$label" -v fmt="$format" -v noratio="$ratios" -v cw="$CELL" -v vals="$(IFS='|'; echo "${values[*]}")" '
    function mean(s,   n, a, i, t) { n = split(s, a, " "); for (i = 1; i <= n; i++) t += a[i]; return n ? t / n : "" }
    function cell(s,   n, a, i, out) {
        n = split(s, a, " ")
        if (n == 0) return "-"
        out = sprintf(fmt, mean(s))
        if (n > 1) { out = out " ("; for (i = 1; i <= n; i++) out = out (i > 1 ? "/" : "") sprintf(fmt, a[i]); out = out ")" }
        return out
    }
    function ratio(a, b) { return (noratio != "" || a == "" || b == "" || b == 0) ? "-" : sprintf("%.2f", a / b) }
    BEGIN {
        split(vals, v, "|")
        line = sprintf("%-40s", label)
        for (i = 1; i <= 5; i++) { line = line sprintf(" %*s", cw, cell(v[i])); m[i] = mean(v[i]) }
        # 1 sqlite, 2 pg, 3 ha1, 4 ha3, 5 sqlite-wt
        line = line sprintf(" %9s %6s %5s", ratio(m[2], m[1]), ratio(m[3], m[2]), ratio(m[4], m[3]))
        print line
    }'
}
printf '\ndavgate %s cluster mode: SQLite against PostgreSQL %s, 1 and %s instances behind HAProxy %s, %s\n' \
    "$COMMIT" "$PG_VERSION" "$INSTANCES" "$(haproxy -v | awk 'NR == 1 { print $3 }')" "$(date -u +%Y-%m-%d)"
printf 'TLS + Basic auth on 127.0.0.1 (direct: davgate'"'"'s own TLS; behind HAProxy: HAProxy'"'"'s, instances on plain HTTP); wrk %s, python3;\n' \
    "$(wrk -v 2>&1 | awk 'NR == 1 { print $2 }')"
printf 'everything on the same %s cores, load before %s%s\n' "$(nproc)" "$LOAD_BEFORE" "$QUICK_NOTE"
printf 'davgate: release, log_level warning, a file: upstream each. SQLite: write-back (the default); "SQLite through": write_mode = "through";\n'
printf 'PostgreSQL: write-through (the default with [index]). PostgreSQL: one local server, a database per configuration,\n'
printf 'fsync = on, synchronous_commit = on, full_page_writes = on (fair: davgate fsyncs its SQLite commits too), else defaults.\n'
printf 'wrk: %s rounds, PUT: %s, configurations in the order of the columns, then reversed; each cell: mean (round 1/round 2).\n' \
    "$ROUNDS" "$( (( PUT_ROUNDS == 1 )) && echo "one round" || echo "$PUT_ROUNDS rounds")"
printf 'Ratios: plain quotients of the means. PG/SQLite: one instance each, direct. HA1/PG: HAProxy + plain HTTP in front of one\n'
printf 'instance against its own TLS. 3/1: 3 instances against 1, both behind HAProxy. CPU: user + system from /proc/PID/stat.\n\n'
printf '%-40s' "metric"
for who in "${COLUMNS[@]}"; do printf ' %*s' "$CELL" "$(title "$who")"; done
printf ' %9s %6s %5s\n' "PG/SQLite" "HA1/PG" "3/1"
cluster_row "GET 4 KiB, wrk -t2 -c32 (req/s)"          get4k    %.0f
cluster_row "  davgate CPU per GET (us)"               get4kcpu %.1f
cluster_row "  HAProxy CPU per GET (us)"               get4kpx  %.1f
cluster_row "  PostgreSQL CPU per GET (us)"            get4kpg  %.1f
cluster_row "  all three per GET (us)"                 get4kall %.1f
cluster_row "PROPFIND D0 allprop, wrk (req/s)"         pf0      %.0f
cluster_row "  davgate CPU per PROPFIND (us)"          pf0cpu   %.1f
cluster_row "  HAProxy CPU per PROPFIND (us)"          pf0px    %.1f
cluster_row "  PostgreSQL CPU per PROPFIND (us)"       pf0pg    %.1f
cluster_row "  all three per PROPFIND (us)"            pf0all   %.1f
cluster_row "PUT $FILES x 4 KiB, $PUT_CONNECTIONS parallel (files/s)" putn %.0f
cluster_row "  davgate CPU per PUT (us)"               putcpu   %.1f
cluster_row "  HAProxy CPU per PUT (us)"               putpx    %.1f
cluster_row "  PostgreSQL CPU per PUT (us)"            putpg    %.1f
cluster_row "  all three per PUT (us)"                 putall   %.1f
cluster_row "  sessions waiting on an advisory lock"   putwait  %.2f noratio
printf '  PUT, PostgreSQL against SQLite with write_mode = "through" too: %s; fsync floor of this disk: %s files/s (one writer; %s with %s)\n' \
    "$(awk -v a="$(mean_of putn pg)" -v b="$(mean_of putn sqlite-wt)" 'BEGIN { if (a != "" && b > 0) printf "%.2f", a / b; else print "-" }')" \
    "${FSYNC_FLOOR[1]}" "${FSYNC_FLOOR[$PUT_CONNECTIONS]}" "$PUT_CONNECTIONS"

printf '\nHow the work spread over the %s instances behind HAProxy (per instance: responses counted by HAProxy, share;\n' "$INSTANCES"
printf 'davgate CPU seconds from /proc/PID/stat; then HAProxy'"'"'s and the PostgreSQL server'"'"'s CPU seconds in the same span):\n'
for metric in get4k pf0 put; do
    for round in $(seq "$( [[ $metric == put ]] && echo "$PUT_ROUNDS" || echo "$ROUNDS")"); do
        label=$(case $metric in get4k) echo "GET 4 KiB" ;; pf0) echo "PROPFIND D0" ;; put) echo "PUT" ;; esac)
        printf '  %-12s round %s: %s\n' "$label" "$round" "${SPREAD[$metric,$round]:--}"
    done
done
printf '\nTwo cores: the 3 instances share them with HAProxy, PostgreSQL, wrk and the PUT client, so 3 instances cannot\n'
printf 'serve more than 1 here; what the 3-instance column shows is that requests and CPU spread evenly over the\n'
printf 'instances (no one instance does the others'"'"' work or waits for it), and what coordination costs. PUTs are\n'
printf 'write-through with a shared index and run under the domain'"'"'s coordination, which with PostgreSQL takes the\n'
printf 'domain'"'"'s turn among instances (a session advisory lock, docs/scale-out.md): PUTs of one domain serialize across\n'
printf 'instances, so PUT throughput is not expected to scale with instances ("sessions waiting on an advisory lock":\n'
printf 'sessions queued for a domain or listing turn, sampled every 0.2 s from pg_stat_activity, mean; one instance\n'
printf 'queues its own writers in memory first, so it shows about 0).\n'

if (( ${#FAILURES[@]} )); then
    printf '\nFAILURES (figures of a failed step are left out of the table):\n'
    printf '  %s\n' "${FAILURES[@]}"
    exit 1
fi
