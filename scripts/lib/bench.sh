# scripts/lib/bench.sh: helpers shared by both modes of scripts/bench
# (sourced, not run). Expects REPO (the repository) and REV (empty or a git
# revision) to be set; sets WORK (the scratch folder) when sourced, and the
# EXIT trap that stops everything started and removes WORK. Also used by
# scripts/soak (PROG names the script in messages; a function named
# before_cleanup, when defined, runs first in the trap, e.g. to keep logs).

PROG=${PROG:-bench}
say() { printf '\n== %s\n' "$*" >&2; }
note() { printf '   %s\n' "$*" >&2; }
die() { echo "$PROG: $*" >&2; exit 1; }

APACHE_MODULES=/usr/lib/apache2/modules

# ------------------------------------------------- scratch folder, cleanup
WORK=$(mktemp -d "/tmp/davgate-$PROG.XXXXXX")
chmod 755 "$WORK"            # Apache's workers (www-data) must reach their DAV root
DAVGATE_PID=""
RCLONE_PID=""
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

cleanup() {
    local status=$?
    trap - EXIT INT TERM
    if declare -F before_cleanup >/dev/null; then before_cleanup || true; fi
    for pid in "${BACKGROUND[@]}"; do kill "$pid" 2>/dev/null || true; done
    stop_pid "$DAVGATE_PID"
    stop_pid "$RCLONE_PID"
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
# Builds davgate in release mode into .build-bench, from the working tree or,
# with REV, from a clean export of that commit in .build-bench-src (kept for
# incremental builds). Sets DAVGATE_BIN.
build_davgate() {
    local source="$REPO" commit
    if [[ -n "$REV" ]]; then
        # Package.resolved is not in git, so the working tree's pins come along.
        source="$REPO/.build-bench-src"
        commit=$(git -C "$REPO" rev-parse --verify "$REV^{commit}") || die "no revision $REV"
        if [[ "$(cat "$source/.bench-commit" 2>/dev/null)" != "$commit" ]]; then
            rm -rf "$source"; mkdir -p "$source"
            git -C "$REPO" archive "$commit" | tar -x -C "$source"
            if [[ -f "$REPO/Package.resolved" ]]; then cp "$REPO/Package.resolved" "$source/"; fi
            echo "$commit" > "$source/.bench-commit"
        fi
    fi
    say "Building davgate (release, .build-bench) from ${REV:+revision $(git -C "$REPO" rev-parse --short "$REV") of }$source"
    local log="$REPO/.build-bench/bench-build.log"
    mkdir -p "$REPO/.build-bench"
    if ! swift build -c release --package-path "$source" --scratch-path "$REPO/.build-bench" \
            --product davgate > "$log" 2>&1; then
        grep -E 'error:' "$log" | sort -u | head -n 20 >&2
        die "build failed (log: $log); with others editing Sources/, try --rev HEAD"
    fi
    tail -n 1 "$log" >&2
    DAVGATE_BIN="$REPO/.build-bench/release/davgate"
    [[ -x "$DAVGATE_BIN" ]] || die "no binary at $DAVGATE_BIN"
}

# ---------------------------------------------------------------- davgate
# start_davgate DIR [SERVE-ARGUMENTS...]: runs davgate with DIR/conf/davgate.toml
# (written by the caller; listen port 0, state, certificates under DIR) and
# waits until it listens. Sets DAVGATE_PID, DAVGATE_PORT, DAVGATE_PASSWORD
# (of the admin user made on first start) and DAVGATE_CA.
start_davgate() {
    local dir=$1; shift
    "$DAVGATE_BIN" serve --config "$dir/conf/davgate.toml" "$@" \
        > "$dir/stdout.log" 2> "$dir/stderr.log" &
    DAVGATE_PID=$!
    for _ in $(seq 300); do
        grep -q 'davgate listening on' "$dir/stdout.log" 2>/dev/null && break
        kill -0 "$DAVGATE_PID" 2>/dev/null || { cat "$dir/stderr.log" "$dir/stdout.log" >&2; die "davgate exited at start"; }
        sleep 0.1
    done
    DAVGATE_PORT=$(sed -n 's|.*davgate listening on https://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$dir/stdout.log")
    DAVGATE_PASSWORD=$(sed -n "s|.*Created user 'admin' with password: ||p" "$dir/stdout.log")
    [[ -n "$DAVGATE_PORT" && -n "$DAVGATE_PASSWORD" ]] || die "davgate did not start: $(cat "$dir/stdout.log")"
    DAVGATE_CA="$dir/certs/davgate.pem"
}

# ----------------------------------------------------------------- Apache
# make_certificate DIR: a self-signed EC P-256 certificate for 127.0.0.1 and
# localhost, DIR/cert.pem and DIR/key.pem.
make_certificate() {
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
        -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1,DNS:localhost \
        -keyout "$1/key.pem" -out "$1/cert.pem" 2>/dev/null
}

# start_apache URL-PATH [PLAIN-PORT]: Apache 2.4 (mpm_event, mod_ssl,
# mod_dav_fs, Basic auth for admin from an htpasswd file) in $WORK/apache,
# serving $WORK/apache/dav at URL-PATH (e.g. /files) over TLS on a free port,
# and with PLAIN-PORT also over plain HTTP on that port, with an access log
# (port, method, path, status, bytes) in $WORK/apache/access.log. Sets
# APACHE_PORT, APACHE_PASSWORD, APACHE_CA and APACHE_STORE.
start_apache() {
    local url_path=$1 plain_port=${2:-}
    local A="$WORK/apache"
    mkdir -p "$A/dav" "$A/lock"
    APACHE_PORT=$(free_port)
    APACHE_PASSWORD=$(head -c 12 /dev/urandom | base64 | tr -d '/+=')
    make_certificate "$A"
    htpasswd -bc "$A/htpasswd" admin "$APACHE_PASSWORD" 2>/dev/null   # default hash: apr1 MD5
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

# davgate_vault_for_apache DIR GROUP: a davgate vault in DIR/vault (its key
# file beside it) holding Apache's password as service "apache", account
# "admin", in GROUP. Sets VAULT_ARGS (--vault, --key-file).
davgate_vault_for_apache() {
    local dir=$1 group=$2
    mkdir -p "$dir/vault"
    (umask 077; head -c 32 /dev/urandom > "$dir/vault/vault.key")
    VAULT_ARGS=(--vault "$dir/vault/vault.dgv" --key-file "$dir/vault/vault.key")
    "$DAVGATE_BIN" vault init "${VAULT_ARGS[@]}" >/dev/null || die "davgate vault init failed"
    printf '%s' "$APACHE_PASSWORD" | "$DAVGATE_BIN" vault set apache admin --group "$group" "${VAULT_ARGS[@]}" >/dev/null \
        || die "davgate vault set failed"
}

# --------------------------------------------------------------- test data
# make_collection FOLDER COUNT: COUNT small files, as if another program had
# put them there.
make_collection() {
    python3 - "$1" "$2" <<'PY'
import os, sys
folder, count = sys.argv[1], int(sys.argv[2])
os.makedirs(folder, exist_ok=True)
for i in range(count):
    with open(os.path.join(folder, f"file-{i:05d}.txt"), "w") as f:
        f.write(f"file {i}\n")
PY
}

# ----------------------------------------------------------- peak RSS
# start_rss_sampler PID OUT: samples every 100 ms; keeps the largest total
# VmRSS (KiB) of the process and its children in OUT until killed.
start_rss_sampler() {
    python3 - "$1" "$2" <<'PY' &
import os, sys, time
root, out = int(sys.argv[1]), sys.argv[2]
def rss(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0
def children(pid):
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(name))
            except (OSError, ValueError, IndexError):
                pass
    return found
peak, kids, tick = 0, [], 0
while True:
    if tick % 5 == 0:            # Apache starts and stops children as load changes
        kids = children(root)
    tick += 1
    total = rss(root) + sum(rss(c) for c in kids)
    if total > peak:
        peak = total
        with open(out + ".tmp", "w") as f:
            f.write(str(peak))
        os.replace(out + ".tmp", out)
    time.sleep(0.1)
PY
    BACKGROUND+=($!)
}
vm_hwm() { sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$1/status"; }

# peak_rss_mib PID SAMPLED-FILE: the larger of the sampled peak and the
# kernel's high-water mark (VmHWM, exact for one process, catches spikes
# between samples), in MiB.
peak_rss_mib() {
    local hwm; hwm=$(vm_hwm "$1")
    awk -v a="$(cat "$2" 2>/dev/null || echo 0)" -v b="${hwm:-0}" 'BEGIN { printf "%.1f", (a > b ? a : b) / 1024 }'
}

# Header line of a table: "Apache 2.4.x".
apache_version() { apache2 -v | sed -n 's|^Server version: Apache/\([^ ]*\).*|\1|p'; }

# An allprop PROPFIND body, as clients send.
PROPFIND_BODY='<?xml version="1.0" encoding="utf-8"?><D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>'
