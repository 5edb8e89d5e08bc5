# scripts/lib/bench-lazy.sh: the lazy mode of scripts/bench (issue 4), sourced
# by it after the build with the helpers of scripts/lib/bench.sh loaded; see
# the description at the top of scripts/bench.
#
# Apache is the upstream: one DAV folder at /dav/, over TLS for the direct
# reads and over plain HTTP (like the integration tests' upstream) for
# davgate and rclone. Clients always speak TLS + Basic auth, to each of the
# three servers alike.

SMALL_COUNT=200          # distinct 4 KiB files, one cold read each
MANY_COUNT=1000          # placeholders in the listed folder
HAVE_RCLONE=0
command -v rclone >/dev/null && HAVE_RCLONE=1
SERVERS=(apache davgate)
(( HAVE_RCLONE )) && SERVERS+=(rclone)

# ----------------------------------------------------- Apache, the upstream
say "Starting Apache httpd (mpm_event, mod_dav_fs): TLS for direct reads, plain HTTP as the upstream"
UPSTREAM_PORT=$(free_port)
start_apache /dav "$UPSTREAM_PORT"
APACHE_URL="https://127.0.0.1:$APACHE_PORT/dav"
UPSTREAM_URL="http://127.0.0.1:$UPSTREAM_PORT/dav/"
ACCESS_LOG="$WORK/apache/access.log"
note "pid $(cat "$APACHE_PIDFILE"), direct $APACHE_URL/, upstream $UPSTREAM_URL"

say "Making fresh files directly in Apache's DAV folder ($BIG_MIB MiB, $SMALL_COUNT x 4 KiB, $MANY_COUNT-file folder)"
head -c "$BIG_BYTES" /dev/urandom > "$APACHE_STORE/big.bin"
BIG_SHA=$(sha256sum "$APACHE_STORE/big.bin" | cut -d' ' -f1)
python3 - "$APACHE_STORE/small" "$SMALL_COUNT" <<'PY'
import os, sys
folder, count = sys.argv[1], int(sys.argv[2])
os.makedirs(folder)
for i in range(count):
    with open(os.path.join(folder, f"small-{i:04d}.bin"), "wb") as f:
        f.write(os.urandom(4096))
PY
make_collection "$APACHE_STORE/many" "$MANY_COUNT"
chown -R www-data:www-data "$APACHE_STORE"

# ------------------------------------ davgate, the password in its vault
say "Starting davgate: domain lazy, upstream $UPSTREAM_URL, Apache's password in a davgate vault"
D="$WORK/davgate"
mkdir -p "$D/conf"
davgate_vault_for_apache "$D" lazy
# log_level info: davgate logs each fetch over 1 MiB with its rate.
cat > "$D/conf/davgate.toml" <<EOF
[server]
listen = "127.0.0.1:0"
tls = true
state = "../var"
certificate = "../certs/davgate.pem"
private_key = "../certs/davgate-key.pem"
log_level = "info"
vault = "../vault/vault.dgv"

[[domain]]
name = "lazy"
upstream = "$UPSTREAM_URL"
credentials = { service = "apache", account = "admin" }
EOF
start_davgate "$D" --key-file "$D/vault/vault.key"
DAVGATE_URL="https://127.0.0.1:$DAVGATE_PORT/lazy"
start_rss_sampler "$DAVGATE_PID" "$WORK/rss.davgate"
note "pid $DAVGATE_PID, $DAVGATE_URL/"

# ------------------------------------------- rclone over the same upstream
if (( HAVE_RCLONE )); then
    say "Starting $(rclone version | head -n 1): serve webdav --vfs-cache-mode full over $UPSTREAM_URL"
    R="$WORK/rclone"
    mkdir -p "$R/cache"
    : > "$R/rclone.conf"
    RCLONE_PORT=$(free_port)
    RCLONE_PASSWORD=$(head -c 12 /dev/urandom | base64 | tr -d '/+=')
    # The remote "upstream:" and the served user come from the environment,
    # the upstream password obscured as in a config file; nothing in argv.
    RCLONE_CONFIG="$R/rclone.conf" \
    RCLONE_CONFIG_UPSTREAM_TYPE=webdav \
    RCLONE_CONFIG_UPSTREAM_URL="$UPSTREAM_URL" \
    RCLONE_CONFIG_UPSTREAM_VENDOR=other \
    RCLONE_CONFIG_UPSTREAM_USER=admin \
    RCLONE_CONFIG_UPSTREAM_PASS=$(printf '%s\n' "$APACHE_PASSWORD" | rclone obscure -) \
    RCLONE_USER=admin RCLONE_PASS="$RCLONE_PASSWORD" \
        rclone serve webdav upstream: --addr "127.0.0.1:$RCLONE_PORT" \
            --cert "$APACHE_CA" --key "$WORK/apache/key.pem" \
            --vfs-cache-mode full --cache-dir "$R/cache" \
            --log-file "$R/rclone.log" --log-level INFO &
    RCLONE_PID=$!
    wait_for_port "$RCLONE_PORT" || { cat "$R/rclone.log" >&2; die "rclone does not answer on $RCLONE_PORT"; }
    RCLONE_URL="https://127.0.0.1:$RCLONE_PORT"
    start_rss_sampler "$RCLONE_PID" "$WORK/rss.rclone"
    note "pid $RCLONE_PID, $RCLONE_URL/"
else
    note "rclone is not installed: no rclone column"
fi

# Per server (apache = direct reads): URL, credentials, CA file.
url() { case $1 in davgate) echo "$DAVGATE_URL" ;; rclone) echo "$RCLONE_URL" ;; *) echo "$APACHE_URL" ;; esac; }
creds() { case $1 in davgate) echo "admin:$DAVGATE_PASSWORD" ;; rclone) echo "admin:$RCLONE_PASSWORD" ;; *) echo "admin:$APACHE_PASSWORD" ;; esac; }
ca() { case $1 in davgate) echo "$DAVGATE_CA" ;; *) echo "$APACHE_CA" ;; esac; }
dav_curl() { local who=$1; shift; curl -sS --cacert "$(ca "$who")" -u "$(creds "$who")" --max-time 600 "$@"; }

# What davgate or rclone asked of the upstream since a mark (a line count of
# Apache's access log): upstream_count MARK METHOD [PATH-PREFIX]. Direct reads
# go to the TLS port and are not counted.
log_mark() { wc -l < "$ACCESS_LOG"; }
upstream_count() {
    tail -n +"$(( $1 + 1 ))" "$ACCESS_LOG" \
        | awk -v port="$UPSTREAM_PORT" -v m="$2" -v p="/dav${3:-/}" '$1 == port && $2 == m && index($3, p) == 1' | wc -l
}

declare -A R         # R[metric,who] = number; who is apache, davgate or rclone

# ------------------------------------------- PROPFIND Depth 1, 1,000 files
# Each server's root is listed first (a client's first step; for davgate and
# rclone it learns the folder itself), then the folder: the first listing is
# "cold" (davgate and rclone ask the upstream), the best of the next 3 "warm".
say "PROPFIND Depth 1 (allprop) of the $MANY_COUNT-file folder: first, then best of 3"
propfind_depth1() {
    dav_curl "$1" -X PROPFIND -H 'Depth: 1' -H 'Content-Type: application/xml; charset=utf-8' \
        --data-binary "$PROPFIND_BODY" -o "$3" -w '%{http_code} %{time_total}\n' "$(url "$1")$2"
}
for who in "${SERVERS[@]}"; do
    read -r code _ < <(propfind_depth1 "$who" / /dev/null)
    [[ $code == 207 ]] || die "$who: PROPFIND Depth 1 of / answered $code"
    mark=$(log_mark)
    read -r code seconds < <(propfind_depth1 "$who" /many/ "$WORK/multistatus.xml")
    responses=$(grep -oE '<([A-Za-z0-9]+:)?response[ >]' "$WORK/multistatus.xml" | wc -l)
    [[ $code == 207 && $responses == $(( MANY_COUNT + 1 )) ]] \
        || die "$who: PROPFIND Depth 1 answered $code with $responses responses, expected $(( MANY_COUNT + 1 ))"
    R[pf1cold,$who]=$(awk -v s="$seconds" 'BEGIN { printf "%.3f", s }')
    best=""
    for _ in 1 2 3; do
        read -r code seconds < <(propfind_depth1 "$who" /many/ /dev/null)
        [[ $code == 207 ]] || die "$who: PROPFIND Depth 1 answered $code"
        best=$(awk -v a="$seconds" -v b="${best:-$seconds}" 'BEGIN { print (a < b ? a : b) }')
    done
    R[pf1warm,$who]=$(awk -v s="$best" 'BEGIN { printf "%.3f", s }')
    upstream=""
    [[ $who != apache ]] && upstream=", upstream asked: $(upstream_count "$mark" PROPFIND) PROPFIND, $(upstream_count "$mark" GET) GET"
    note "$who: first ${R[pf1cold,$who]}s, best of 3 ${R[pf1warm,$who]}s, $responses responses$upstream"
done
rm -f "$WORK/multistatus.xml"

# ------------------------------------------------- GET 4 KiB, cold and warm
# One kept-alive TLS connection per pass; the folder is listed first (not
# timed), then each file read once, checked against the file in Apache's
# folder. Prints median, p90 and max in ms, and the connections opened.
cat > "$WORK/latency.py" <<'PY'
import base64, http.client, math, os, ssl, statistics, sys, time
from urllib.parse import urlsplit
base, user_pass, ca, local, body = sys.argv[1:6]
url = urlsplit(base)
folder = url.path.rstrip("/") + "/" + os.path.basename(local) + "/"
connections = 0
if url.scheme == "https":
    class Counted(http.client.HTTPSConnection):
        def connect(self):
            global connections
            connections += 1
            super().connect()
    conn = Counted(url.hostname, url.port, context=ssl.create_default_context(cafile=ca), timeout=120)
else:
    class Counted(http.client.HTTPConnection):
        def connect(self):
            global connections
            connections += 1
            super().connect()
    conn = Counted(url.hostname, url.port, timeout=120)
auth = {"Authorization": "Basic " + base64.b64encode(user_pass.encode()).decode()}
conn.request("PROPFIND", folder, body=body,
             headers={**auth, "Depth": "1", "Content-Type": "application/xml; charset=utf-8"})
answer = conn.getresponse()
answer.read()
if answer.status != 207:
    sys.exit(f"PROPFIND {folder} answered {answer.status}")
times = []
for name in sorted(os.listdir(local)):
    with open(os.path.join(local, name), "rb") as f:
        expected = f.read()
    start = time.perf_counter()
    conn.request("GET", folder + name, headers=auth)
    answer = conn.getresponse()
    got = answer.read()
    times.append((time.perf_counter() - start) * 1000)
    if answer.status != 200 or got != expected:
        sys.exit(f"GET {folder}{name} answered {answer.status} with {len(got)} bytes, not the file's {len(expected)}")
times.sort()
p90 = times[math.ceil(0.9 * len(times)) - 1]
print(f"{statistics.median(times):.2f} {p90:.2f} {times[-1]:.2f} {connections}")
PY
say "GET of $SMALL_COUNT distinct 4 KiB files, one kept-alive TLS connection each pass: cold pass, then warm pass"
for who in "${SERVERS[@]}"; do
    for pass in cold warm; do
        mark=$(log_mark)
        out=$(python3 "$WORK/latency.py" "$(url "$who")" "$(creds "$who")" "$(ca "$who")" \
            "$APACHE_STORE/small" "$PROPFIND_BODY") || die "$who: 4 KiB $pass pass failed"
        read -r median p90 max connections <<<"$out"
        R[get4k${pass}med,$who]=$median
        R[get4k${pass}p90,$who]=$p90
        upstream=""
        [[ $who != apache ]] && upstream=", upstream asked: $(upstream_count "$mark" GET /small/) GET, $(upstream_count "$mark" PROPFIND) PROPFIND"
        note "$who $pass: median ${median} ms, p90 ${p90} ms, max ${max} ms, $connections connection(s)$upstream"
    done
done
# Not in the table: the same reads from the upstream port (plain HTTP, what
# davgate's cold reads wait for), to tell the upstream's share from davgate's.
out=$(python3 "$WORK/latency.py" "${UPSTREAM_URL%/}" "$(creds apache)" "" "$APACHE_STORE/small" "$PROPFIND_BODY") \
    || die "upstream: 4 KiB pass failed"
read -r median p90 max connections <<<"$out"
note "for reference, Apache's plain-HTTP upstream port: median ${median} ms, p90 ${p90} ms, max ${max} ms"

# ---------------------------------------------------- GET 1 GiB, cold, warm
# Downloads go to /dev/shm (tmpfs): the client's writes must not compete
# with the cache writes on the disk. sha256 checked after each.
DOWNLOAD=$(mktemp /dev/shm/davgate-bench.XXXXXX)
CLEANUP_FILES+=("$DOWNLOAD")
get_big() {   # get_big WHO KEY: R[KEY,WHO] = MB/s
    local who=$1 key=$2 code seconds back_sha mark
    sync; sleep 1
    mark=$(log_mark)
    read -r code seconds < <(dav_curl "$who" -o "$DOWNLOAD" -w '%{http_code} %{time_total}\n' "$(url "$who")/big.bin")
    [[ $code == 200 ]] || die "$who: GET big.bin answered $code"
    R[$key,$who]=$(mbps "$BIG_BYTES" "$seconds")
    back_sha=$(sha256sum "$DOWNLOAD" | cut -d' ' -f1)
    : > "$DOWNLOAD"
    [[ $back_sha == "$BIG_SHA" ]] || die "$who: GET big.bin returned different content (sha256 $back_sha)"
    local upstream=""
    [[ $who != apache ]] && upstream=", upstream asked: $(upstream_count "$mark" GET /big.bin) GET"
    note "$who $key: ${seconds}s, ${R[$key,$who]} MB/s, sha256 ok$upstream"
}
# Waits (up to 60 s) until davgate logged the fetch of big.bin as finished:
# the warm read must find it in the cache.
wait_for_fetch() {
    for _ in $(seq 600); do
        grep -h 'fetched /big.bin' "$D/stdout.log" "$D/stderr.log" 2>/dev/null && return 0
        sleep 0.1
    done
    note "davgate did not log the fetch of big.bin within 60 s"
}
# A cold read must write every byte into the cache, a direct read writes
# nothing: the rate at which this machine takes a new file of that size into
# the page cache (in the cache's own folder) bounds the cold read. In a VM
# whose memory the host hands out on first touch this is far below memcpy.
say "Writing a new $BIG_MIB MiB file into the page cache of davgate's state folder (the floor of a cold read)"
PAGECACHE_SECONDS=$( TIMEFORMAT=%R; { time dd if=/dev/zero of="$D/var/pagecache-probe" bs=1M count="$BIG_MIB" status=none; } 2>&1 )
rm -f "$D/var/pagecache-probe"
R[pagecache,davgate]=$(awk -v s="$PAGECACHE_SECONDS" -v b="$BIG_BYTES" 'BEGIN { printf "%.1f", b / s / 1e6 }')
note "dd of a new $BIG_MIB MiB file: $PAGECACHE_SECONDS s, ${R[pagecache,davgate]} MB/s"

say "GET of $BIG_MIB MiB: direct, davgate cold, direct, davgate warm, direct${RCLONE_PID:+, rclone cold and warm}"
get_big apache bigdirect1
get_big davgate bigcold
while read -r line; do note "davgate log: ${line:0:200}"; done < <(wait_for_fetch)
get_big apache bigdirect2
get_big davgate bigwarm
get_big apache bigdirect3
if (( HAVE_RCLONE )); then
    get_big rclone bigcold
    sleep 2          # rclone may still be closing its cache file
    get_big rclone bigwarm
fi
# Direct reads swing from one to the next on this machine: each davgate row
# compares with the mean of the direct reads just before and after it (the
# rclone rows with the same figures).
R[bigcold,apache]=$(awk -v a="${R[bigdirect1,apache]}" -v b="${R[bigdirect2,apache]}" 'BEGIN { printf "%.1f", (a + b) / 2 }')
R[bigwarm,apache]=$(awk -v a="${R[bigdirect2,apache]}" -v b="${R[bigdirect3,apache]}" 'BEGIN { printf "%.1f", (a + b) / 2 }')
rm -f "$DOWNLOAD"

# ---------------------------------------------------------------- peak RSS
sleep 0.3
R[rss,davgate]=$(peak_rss_mib "$DAVGATE_PID" "$WORK/rss.davgate")
(( HAVE_RCLONE )) && R[rss,rclone]=$(peak_rss_mib "$RCLONE_PID" "$WORK/rss.rclone")
note "peak RSS over the lazy run (VmRSS sampled every 100 ms, or VmHWM when higher): davgate ${R[rss,davgate]} MiB${RCLONE_PID:+, rclone ${R[rss,rclone]} MiB}"
{ grep -hiE ' (warning|error|critical) ' "$D/stdout.log" "$D/stderr.log" || true; } | head -n 5 \
    | while read -r line; do note "davgate log: ${line:0:200}"; done

# ------------------------------------------------------------------ table
printf '\ndavgate lazy mode vs Apache %s direct (mod_dav_fs, mpm_event), fresh files, 127.0.0.1, %s cores, load before %s%s\n' \
    "$(apache_version)" "$(nproc)" "$LOAD_BEFORE" "$( (( QUICK )) && echo ', --quick sizes' || true)"
printf 'upstream: that Apache over plain HTTP (password in the davgate vault); clients: TLS + Basic auth to every server\n'
(( HAVE_RCLONE )) && printf 'rclone: %s serve webdav --vfs-cache-mode full over the same upstream\n' "$(rclone version | head -n 1)"
printf '%-30s %9s %9s %6s %9s %6s  %s\n' "metric" "davgate" "Apache" "ratio" "rclone" "ratio" "target (davgate)"
# lazy_row LABEL KEY higher|lower TARGET: ratios against direct Apache,
# oriented so >= 1 favours the gateway; TARGET is ratio:MIN, within:MS
# (davgate at most MS above direct), below:MIB (no direct figure) or none.
lazy_row() {
    local label=$1 key=$2 better=$3 target=$4
    awk -v label="$label" -v d="${R[$key,davgate]:-}" -v a="${R[$key,apache]:-}" -v r="${R[$key,rclone]:-}" \
        -v better="$better" -v target="$target" '
    function ratio(x) { return (x == "" || a == "") ? "-" : sprintf("%.2f", better == "higher" ? x / a : a / x) }
    BEGIN {
        split(target, t, ":")
        if (t[1] == "ratio") { met = ratio(d) + 0 >= t[2] + 0; why = sprintf("ratio >= %.2f", t[2]) }
        else if (t[1] == "within") { met = d - a <= t[2]; why = sprintf("at most %s ms above direct: %+.2f ms", t[2], d - a) }
        else if (t[1] == "below") { met = d < t[2]; why = "davgate < " t[2] " MiB, issue 2" }
        verdict = (t[1] == "none") ? "no target" : (met ? "target met" : "target missed") " (" why ")"
        printf "%-30s %9s %9s %6s %9s %6s  %s\n", label, d, (a == "" ? "-" : a), ratio(d), (r == "" ? "-" : r), ratio(r), verdict
    }'
}
SIZE_LABEL=$( (( BIG_MIB >= 1024 )) && echo "$(( BIG_MIB / 1024 )) GiB" || echo "$BIG_MIB MiB")
lazy_row "GET $SIZE_LABEL cold (MB/s)"           bigcold     higher ratio:0.95
lazy_row "new $SIZE_LABEL file, dd (MB/s)"       pagecache   higher none
lazy_row "GET $SIZE_LABEL warm (MB/s)"           bigwarm     higher none
lazy_row "GET 4 KiB cold, median (ms)"           get4kcoldmed lower within:2
lazy_row "GET 4 KiB cold, p90 (ms)"              get4kcoldp90 lower within:2
lazy_row "GET 4 KiB warm, median (ms)"           get4kwarmmed lower none
lazy_row "GET 4 KiB warm, p90 (ms)"              get4kwarmp90 lower none
lazy_row "PROPFIND D1 $MANY_COUNT cold (s)"      pf1cold     lower none
lazy_row "PROPFIND D1 $MANY_COUNT warm (s)"      pf1warm     lower none
lazy_row "peak RSS, lazy run (MiB)"              rss         lower below:"$RSS_TARGET_MIB"
