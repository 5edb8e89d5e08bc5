#!/usr/bin/env bash
# hot-code-exercise.sh BINARY PRELOAD PAGES: the profile run of scripts/hot-code.
# Starts BINARY (with PRELOAD, scripts/lib/touched-code.c) on a fresh state
# with a folder upstream, sends requests of every kind a client sends
# (curl, over TLS with Basic auth), stops it, starts it again on the same
# state and reads; writes to PAGES the file offsets (hex) of BINARY's pages
# that either run had resident. Anything it never asks for (a WebDAV or S3
# upstream, a shared index) stays among the cold code.
set -euo pipefail
binary=$1 preload=$2 pages=$3
dir=$(mktemp -d /dev/shm/davgate-hot-code.XXXXXX)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
mkdir -p "$dir/conf" "$dir/var/upstream"
{
    printf '%s\n' '[server]' 'listen = "127.0.0.1:0"' 'tls = true' 'state = "../var"' \
        'certificate = "../certs/davgate.pem"' 'private_key = "../certs/davgate-key.pem"' 'log_level = "info"' ''
    printf '%s\n' '[[domain]]' 'name = "files"' 'upstream = "file:../var/upstream"'
} > "$dir/conf/davgate.toml"
: > "$pages"

start() {
    : > "$dir/stdout.log"
    LD_PRELOAD=$preload "$binary" serve --config "$dir/conf/davgate.toml" > "$dir/stdout.log" 2> "$dir/stderr.log" &
    pid=$!
    for _ in $(seq 600); do
        grep -q 'davgate listening on' "$dir/stdout.log" && break
        kill -0 "$pid" 2>/dev/null || { cat "$dir/stderr.log" >&2; echo "hot-code-exercise: davgate exited" >&2; exit 1; }
        sleep 0.1
    done
    port=$(sed -n 's|.*davgate listening on https://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$dir/stdout.log")
    password=${password:-$(sed -n "s|.*Created user 'admin' with password: ||p" "$dir/stdout.log")}
    url=https://127.0.0.1:$port/files
    # A profile of refusals would order the wrong code.
    [ -n "$port" ] && [ -n "$password" ] &&
        curl -s -f -o /dev/null --cacert "$dir/certs/davgate.pem" -u "admin:$password" -X PROPFIND -H 'Depth: 0' "$url/" ||
        { cat "$dir/stdout.log" "$dir/stderr.log" >&2; echo "hot-code-exercise: davgate does not answer as admin" >&2; exit 1; }
}

# The pages of BINARY resident in the running process, appended to PAGES.
record_pages() {
    python3 - "$pid" "$(readlink -f "$binary")" >> "$pages" <<'PY'
import struct, sys
pid, binary = sys.argv[1], sys.argv[2]
with open(f"/proc/{pid}/pagemap", "rb") as pagemap:
    for line in open(f"/proc/{pid}/maps"):
        fields = line.split()
        if len(fields) < 6 or fields[5] != binary:
            continue
        low, high = (int(x, 16) for x in fields[0].split("-"))
        if "x" in fields[1] and high - low > 4096:
            sys.exit("hot-code-exercise: the code is not split into pages (was touched-code.so loaded?)")
        pagemap.seek(low // 4096 * 8)
        entries = pagemap.read((high - low) // 4096 * 8)
        for i in range((high - low) // 4096):
            if struct.unpack_from("<Q", entries, i * 8)[0] >> 63:
                print(f"{int(fields[2], 16) + i * 4096:x}")
PY
}

stop() {
    record_pages
    kill -TERM "$pid"
    wait "$pid" 2>/dev/null || true
    pid=""
}

client() { curl -s -o /dev/null --cacert "$dir/certs/davgate.pem" -u "admin:$password" "$@"; }
lockinfo='<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>hot-code</D:owner></D:lockinfo>'
proppatch='<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set><D:prop><Z:a>1</Z:a></D:prop></D:set></D:propertyupdate>'
named='<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:getetag/><D:getcontentlength/><D:resourcetype/></D:prop></D:propfind>'

head -c 4096 /dev/urandom > "$dir/small"
head -c $((64 << 20)) /dev/urandom > "$dir/large"

start
client -X OPTIONS "$url/"
client -X MKCOL "$url/folder/"
for i in $(seq 200); do printf 'url = "%s/folder/f%d"\nupload-file = "%s"\noutput = "/dev/null"\n' "$url" "$i" "$dir/small"; done > "$dir/puts"
client -K "$dir/puts"
for i in $(seq 200); do printf 'url = "%s/folder/f%d"\noutput = "/dev/null"\n' "$url" "$i"; done > "$dir/gets"
client -K "$dir/gets"
client -I "$url/folder/f1"
client -r 0-99 "$url/folder/f2"
client -H 'If-None-Match: *' -T "$dir/small" "$url/folder/f3"      # 412
client -T "$dir/small" "$url/missing/f"                              # 409
client "$url/folder/none"                                            # 404
client -X PROPFIND -H 'Depth: 1' "$url/folder/"
client -X PROPFIND -H 'Depth: 0' "$url/folder/f1"
client -X PROPFIND -H 'Depth: 1' --data "$named" "$url/folder/"
client -X PROPPATCH --data "$proppatch" "$url/folder/f4"
client -X LOCK -H 'Timeout: Second-60' --data "$lockinfo" -D "$dir/lock" "$url/folder/f5"
token=$(sed -n 's/^[Ll]ock-[Tt]oken: *//p' "$dir/lock" | tr -d '\r')
client -T "$dir/small" "$url/folder/f5"                              # 423
client -H "If: ($token)" -T "$dir/small" "$url/folder/f5"
client -X UNLOCK -H "Lock-Token: $token" "$url/folder/f5"
client -X COPY -H "Destination: $url/folder/c6" "$url/folder/f6"
client -X MOVE -H "Destination: $url/folder/m6" "$url/folder/c6"
client -X DELETE "$url/folder/m6"
client -H 'Accept: text/html' "$url/folder/"
client -T "$dir/large" "$url/large"
client "$url/large"
echo "made upstream" > "$dir/var/upstream/lazy.txt"
client -X PROPFIND -H 'Depth: 1' "$url/"
client "$url/lazy.txt"
client "https://127.0.0.1:$port/metrics"
sleep 5                                                              # uploads and quiet memory release
client -X DELETE "$url/folder/"
sleep 2
stop

start
client -X PROPFIND -H 'Depth: 1' "$url/"
client "$url/large"
client -T "$dir/small" "$url/again"
client "$url/again"
sleep 3
stop
sort -u -o "$pages" "$pages"
echo "hot-code-exercise: $(wc -l < "$pages") pages of $(basename "$binary") touched" >&2
