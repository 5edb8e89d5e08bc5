# The package check, for scripts/package --check (and so scripts/test): proves
# that a built davgate_*.deb is what it says and works on a fresh Debian 12.
#
#   1. its contents: paths, owners and modes, conffiles, maintainer scripts;
#   2. the unit: systemd-analyze verify prints nothing (and does complain
#      about three broken copies, so this gate can fail), and its exposure
#      (systemd-analyze security --offline) stays at CHECK_MAX_EXPOSURE;
#   3. lintian: its output printed, any E: fails;
#   4. in a throwaway Debian 12 root (debootstrap minbase, cached): apt
#      installs it with its Depends from the mirror; the user, the state
#      folder and the conffile are checked; a local edit of the conffile
#      survives a reinstall; davgate serves as the user davgate (no systemd
#      there: setpriv applies NoNewPrivileges, no capabilities, the umask and
#      the file limit of the unit; its namespaces, seccomp filter and
#      MemoryDenyWriteExecute are not applied); curl from outside PUTs, GETs
#      and PROPFINDs over TLS trusting the certificate it made; the file
#      reaches the folder upstream; SIGTERM stops it with status 0; remove
#      keeps the state and the conffile, purge deletes both;
#   5. then the same root booted with systemd as PID 1 (systemd-nspawn,
#      its own network): apt installs the package again and its postinst
#      starts the unit as shipped, with every hardening line in force; it
#      must become active (READY=1), run as davgate with seccomp, no new
#      privileges and no capabilities, print the admin password to the
#      journal, serve PUT/GET/PROPFIND, survive systemctl reload (same
#      process), keep feeding a 2-second watchdog, stop with status 0, and
#      purge.
#
# Needs root (chroot, mount, systemd-nspawn). The Debian root is cached as a
# tarball in .build-release/package-check/ for CHECK_ROOT_MAX_AGE days.

# dpkg-query's ${Field} formats below are meant literally.
# shellcheck disable=SC2016

CHECK_CACHE=$PACKAGE_SCRATCH/package-check
CHECK_ROOT_TARBALL=$CHECK_CACHE/bookworm-minbase.tar
CHECK_ROOT_MAX_AGE=30
CHECK_MAX_EXPOSURE=2.0
CHECK_ROOT=""
CHECK_SERVER_PID=""
CHECK_CONTAINER_PID=""
CHECK_CONTAINER_INIT=""

check_say() { echo "package check: $*" >&2; }
check_fail() { echo "package check FAILED: $*" >&2; exit 1; }

# package_check DEB: every part above, each with its time.
package_check() {
    local deb=$1 started
    [ "$(id -u)" -eq 0 ] || check_fail "needs root (chroot and mount); run it as root or with sudo"
    ensure_packages debootstrap lintian curl systemd-container
    started=$SECONDS; check_contents "$deb"; check_say "contents ok ($((SECONDS - started)) s)"
    started=$SECONDS; check_unit; check_say "unit ok ($((SECONDS - started)) s)"
    started=$SECONDS; check_lintian "$deb"; check_say "lintian ok ($((SECONDS - started)) s)"
    started=$SECONDS; check_in_debian_root "$deb"; check_say "install, serve and purge in Debian 12, chroot and systemd, ok ($((SECONDS - started)) s)"
}

# --- 1. contents -----------------------------------------------------------

check_contents() {
    local deb=$1 listing line mode owner path
    dpkg-deb --info "$deb" >&2
    [ "$(dpkg-deb --field "$deb" Package)" = davgate ] || check_fail "Package is not davgate"
    [ "$(dpkg-deb --field "$deb" Architecture)" = amd64 ] || check_fail "Architecture is not amd64"
    dpkg-deb --field "$deb" Depends | grep -qE '(^|, )libc6 ' || check_fail "Depends lacks libc6: $(dpkg-deb --field "$deb" Depends)"
    dpkg-deb --field "$deb" Depends | grep -qE '(^|, )libxml2 ' || check_fail "Depends lacks libxml2"
    [ "$(dpkg-deb --info "$deb" conffiles)" = /etc/davgate/davgate.toml ] ||
        check_fail "DEBIAN/conffiles must list exactly /etc/davgate/davgate.toml"
    for script in postinst prerm postrm; do
        dpkg-deb --ctrl-tarfile "$deb" | tar -tvf - "./$script" | grep -q '^-rwxr-xr-x root/root' ||
            check_fail "maintainer script $script missing or not 0755 root/root"
    done

    listing=$(dpkg-deb --contents "$deb")
    echo "$listing" >&2
    while read -r mode owner path; do
        line=$(awk -v p="$path" '$6 == p' <<<"$listing")
        [ -n "$line" ] || check_fail "$path is not in the package"
        [ "$(awk '{print $1 " " $2}' <<<"$line")" = "$mode $owner" ] ||
            check_fail "$path is $(awk '{print $1 " " $2}' <<<"$line"), expected $mode $owner"
    done <<'EXPECTED'
-rwxr-xr-x root/root ./usr/bin/davgate
-rw-r--r-- root/root ./lib/systemd/system/davgate.service
-rw-r--r-- root/root ./etc/davgate/davgate.toml
-rw-r--r-- root/root ./usr/share/doc/davgate/copyright
-rw-r--r-- root/root ./usr/share/doc/davgate/changelog.gz
EXPECTED
    # Nothing owned by anyone but root, nothing writable by group or others,
    # every folder 0755.
    awk '$2 != "root/root" || substr($1, 6, 1) == "w" || substr($1, 9, 1) == "w" || ($1 ~ /^d/ && $1 != "drwxr-xr-x")' <<<"$listing" | grep . &&
        check_fail "the entries above are not root/root, are writable by others or are folders not 0755"
    return 0
}

# --- 2. the unit -----------------------------------------------------------

# check_unit_verify UNIT: systemd-analyze verify's complaints about UNIT
# (empty when it is clean). Its exit status is 0 even for unknown keys and
# unparsable values, which it only reports: every line it prints counts.
check_unit_verify() {
    systemd-analyze verify --man=no "$1" 2>&1 || true
}

check_unit() {
    local work complaints broken exposure
    work=$(mktemp -d)
    # verify wants ExecStart's program to exist: the one just built.
    sed "s|^ExecStart=/usr/bin/davgate |ExecStart=$(realpath "$PACKAGE_BINARY") |" contrib/systemd/davgate.service > "$work/davgate.service"
    grep -q "^ExecStart=$(realpath "$PACKAGE_BINARY") serve" "$work/davgate.service" ||
        check_fail "contrib/systemd/davgate.service has no ExecStart=/usr/bin/davgate serve ..."
    complaints=$(check_unit_verify "$work/davgate.service")
    [ -z "$complaints" ] || { rm -rf "$work"; check_fail "systemd-analyze verify contrib/systemd/davgate.service:
$complaints"; }
    # The gate above must be able to fail: three broken copies, each of
    # which it has to reject.
    for broken in 's|^Type=notify$|Type=notify-reload|' 's|^NoNewPrivileges=|NoNewPrivilege=|' 's|^ExecStart=[^ ]*|ExecStart=/nonexistent/davgate|'; do
        sed "$broken" "$work/davgate.service" > "$work/broken.service"
        cmp -s "$work/davgate.service" "$work/broken.service" && check_fail "the unit no longer has the line '$broken' breaks; update check_unit"
        [ -n "$(check_unit_verify "$work/broken.service")" ] ||
            check_fail "systemd-analyze verify accepted a unit broken with '$broken'; the verify gate proves nothing"
    done
    exposure=$(systemd-analyze security --offline=yes --no-pager "$work/davgate.service" 2>&1 | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
    [ -n "$exposure" ] || check_fail "systemd-analyze security --offline=yes printed no exposure level"
    check_say "systemd-analyze security: exposure $exposure (0 best, 10 worst; at most $CHECK_MAX_EXPOSURE allowed); still open:"
    systemd-analyze security --offline=yes --no-pager "$work/davgate.service" 2>&1 | grep '✗' | cut -c1-150 >&2 || true
    rm -rf "$work"
    awk -v e="$exposure" -v max="$CHECK_MAX_EXPOSURE" 'BEGIN { exit !(e <= max) }' ||
        check_fail "the unit's exposure $exposure is over $CHECK_MAX_EXPOSURE: a hardening line went missing (systemd-analyze security --offline=yes contrib/systemd/davgate.service)"
}

# --- 3. lintian ------------------------------------------------------------

check_lintian() {
    local deb=$1 report
    # As root (the check needs root anyway); lintian only warns about it.
    report=$(lintian --allow-root "$deb" 2>&1) || true
    check_say "lintian $(lintian --version | awk '{print $2}') (errors and warnings; lintian --display-info for the rest):"
    echo "${report:-(nothing to report)}" >&2
    grep -q '^E: ' <<<"$report" && check_fail "lintian reports errors (E: above); fix them or override with a reason in contrib/debian/lintian-overrides"
    return 0
}

# --- 4. a fresh Debian 12 --------------------------------------------------

# check_mirror: the Debian mirror this machine's apt uses (for debootstrap
# and the root's sources), or $DAVGATE_DEBIAN_MIRROR.
check_mirror() {
    if [ -n "${DAVGATE_DEBIAN_MIRROR:-}" ]; then echo "$DAVGATE_DEBIAN_MIRROR"; return; fi
    local mirror
    mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ && $2 !~ /security/ && $2 ~ /debian/ {print $2; exit}')
    [ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $3 == "bookworm" {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
    echo "${mirror:-http://deb.debian.org/debian}"
}

# check_root_tarball: a pristine Debian 12 minbase root as a tarball, made
# with debootstrap once and reused while younger than CHECK_ROOT_MAX_AGE days.
check_root_tarball() {
    local mirror fresh started
    if [ -f "$CHECK_ROOT_TARBALL" ] && [ -n "$(find "$CHECK_ROOT_TARBALL" -mtime -"$CHECK_ROOT_MAX_AGE")" ]; then
        check_say "reusing the Debian 12 root $CHECK_ROOT_TARBALL"
        return 0
    fi
    mirror=$(check_mirror)
    check_say "making a Debian 12 root with debootstrap --variant=minbase from $mirror (about 2 minutes)..."
    mkdir -p "$CHECK_CACHE"
    fresh=$(mktemp -d "$CHECK_CACHE/debootstrap.XXXXXX")
    # mktemp's 0700 would become the root's /, which only root could cross.
    chmod 0755 "$fresh"
    started=$SECONDS
    debootstrap --variant=minbase bookworm "$fresh" "$mirror" > "$CHECK_CACHE/debootstrap.log" 2>&1 || {
        tail -20 "$CHECK_CACHE/debootstrap.log" >&2
        rm -rf --one-file-system "$fresh"
        check_fail "debootstrap failed (log: $CHECK_CACHE/debootstrap.log); is $mirror reachable? Set DAVGATE_DEBIAN_MIRROR to another mirror"
    }
    tar -C "$fresh" --numeric-owner -cf "$CHECK_ROOT_TARBALL.new" .
    mv "$CHECK_ROOT_TARBALL.new" "$CHECK_ROOT_TARBALL"
    rm -rf --one-file-system "$fresh"
    check_say "debootstrap took $((SECONDS - started)) s; cached in $CHECK_ROOT_TARBALL"
}

# check_cleanup: stops the server, unmounts /proc and removes the root; on
# every exit. A root that is still mounted is left in place, never deleted
# through its mounts.
check_cleanup() {
    if [ -n "$CHECK_SERVER_PID" ] && kill -0 "$CHECK_SERVER_PID" 2>/dev/null; then
        kill -KILL "$CHECK_SERVER_PID" 2>/dev/null || true
        wait "$CHECK_SERVER_PID" 2>/dev/null || true
    fi
    check_stop_container
    [ -n "$CHECK_ROOT" ] && [ -d "$CHECK_ROOT" ] || return 0
    if mountpoint -q "$CHECK_ROOT/proc"; then umount "$CHECK_ROOT/proc" || umount -l "$CHECK_ROOT/proc" || true; fi
    if findmnt -rn -o TARGET | grep -q "^$CHECK_ROOT/"; then
        echo "package check: $CHECK_ROOT still has mounts; left in place, remove it by hand after umount" >&2
        return 0
    fi
    rm -rf --one-file-system "$CHECK_ROOT"
}

# in_root CMD...: runs CMD in the Debian root, with a clean environment.
in_root() {
    env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive chroot "$CHECK_ROOT" "$@"
}

# root_apt ARG...: apt-get in the root; dpkg without a pseudo-terminal
# (the root has no /dev/pts mounted).
root_apt() {
    in_root apt-get -q -o Dpkg::Use-Pty=0 "$@"
}

# check_prepare_root: unpacks the cached root, mounts its /proc, and gives
# it this machine's resolver and the bookworm, -updates and -security suites.
check_prepare_root() {
    local mirror security
    check_root_tarball
    CHECK_ROOT=$(realpath "$(mktemp -d "$CHECK_CACHE/root.XXXXXX")")
    trap check_cleanup EXIT
    tar -C "$CHECK_ROOT" --numeric-owner -xf "$CHECK_ROOT_TARBALL"
    chmod 0755 "$CHECK_ROOT"
    mount -t proc proc "$CHECK_ROOT/proc"
    cp -L /etc/resolv.conf "$CHECK_ROOT/etc/resolv.conf"
    mirror=$(check_mirror)
    security=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ && $2 ~ /debian-security/ {print $2; exit}')
    {
        echo "deb $mirror bookworm main"
        echo "deb $mirror bookworm-updates main"
        echo "deb ${security:-http://deb.debian.org/debian-security} bookworm-security main"
    } > "$CHECK_ROOT/etc/apt/sources.list"
}

# check_installed: what the package and its postinst left, as a fresh
# install should be.
check_installed() {
    local user dependency
    user=$(in_root getent passwd davgate) || check_fail "postinst made no user davgate"
    [ "$(cut -d: -f6 <<<"$user")" = /var/lib/davgate ] || check_fail "davgate's home is not /var/lib/davgate: $user"
    [ "$(cut -d: -f7 <<<"$user")" = /usr/sbin/nologin ] || check_fail "davgate can log in: $user"
    [ "$(cut -d: -f3 <<<"$user")" -lt 1000 ] || check_fail "davgate is not a system user: $user"
    in_root getent group davgate >/dev/null || check_fail "postinst made no group davgate"
    [ "$(in_root stat -c '%U:%G %a' /var/lib/davgate)" = "davgate:davgate 750" ] ||
        check_fail "/var/lib/davgate is $(in_root stat -c '%U:%G %a' /var/lib/davgate), expected davgate:davgate 750"
    [ -f "$CHECK_ROOT/etc/davgate/davgate.toml" ] || check_fail "/etc/davgate/davgate.toml is missing"
    in_root dpkg-query -W -f='${Conffiles}\n' davgate | grep -q '^ /etc/davgate/davgate.toml [0-9a-f]\{32\}$' ||
        check_fail "dpkg does not know /etc/davgate/davgate.toml as a conffile"
    # The Depends came from the mirror: minbase has none of these.
    for dependency in libxml2 libsqlite3-0; do
        in_root dpkg-query -W -f='${Status}' "$dependency" | grep -q 'install ok installed' ||
            check_fail "$dependency, a dependency, was not installed"
    done
    # Enabled for the next boot by deb-systemd-helper (minbase has it), not
    # started: no systemd runs in the root.
    [ "$(readlink "$CHECK_ROOT/etc/systemd/system/multi-user.target.wants/davgate.service")" = /lib/systemd/system/davgate.service ] ||
        check_fail "postinst did not enable davgate.service (no multi-user.target.wants link)"
    in_root /usr/bin/davgate --help >/dev/null || check_fail "/usr/bin/davgate --help fails in the root"
}

# check_conffile_kept: a local edit of the configuration (here: a marker,
# and a free port when 8443 is taken on this machine) survives a reinstall,
# and dpkg --verify reports it as a changed conffile.
check_conffile_kept() {
    local deb_name=$1 config=$CHECK_ROOT/etc/davgate/davgate.toml
    echo "# edited by the package check" >> "$config"
    if (exec 3<>/dev/tcp/127.0.0.1/8443) 2>/dev/null; then
        check_say "127.0.0.1:8443 is taken here; the root's configuration asks for a free port"
        sed -i 's|^listen = "127.0.0.1:8443"|listen = "127.0.0.1:0"|' "$config"
        grep -q '^listen = "127.0.0.1:0"' "$config" || check_fail "no listen line to change in the packaged configuration"
    fi
    root_apt install -y --reinstall "/var/tmp/$deb_name" > "$CHECK_CACHE/apt-reinstall.log" 2>&1 ||
        { cat "$CHECK_CACHE/apt-reinstall.log" >&2; check_fail "apt-get install --reinstall failed"; }
    grep -q '^# edited by the package check$' "$config" || check_fail "reinstalling replaced the edited /etc/davgate/davgate.toml"
    in_root dpkg --verify davgate | grep -q ' c /etc/davgate/davgate.toml$' ||
        check_fail "dpkg --verify does not report the edited conffile as changed"
}

# loop_and_process_cpu PID: the CPU ticks (utime + stime) of PID's threads
# named NIO-SGLTN-* (SwiftNIO's event loops, which live as long as the
# process), and of the whole process, whose count keeps the time of threads
# that have exited (Dispatch ends an idle worker after a few seconds).
loop_and_process_cpu() {
    local task loops=0 ticks
    for task in /proc/"$1"/task/*; do
        [[ $(cat "$task/comm" 2>/dev/null) == NIO-SGLTN* ]] || continue
        # The 14th and 15th fields, counted after the name's closing
        # parenthesis (a name may hold spaces).
        ticks=$(sed 's/^.*) //' "$task/stat" 2>/dev/null | awk '{ print $12 + $13 }')
        loops=$((loops + ${ticks:-0}))
    done
    echo "$loops $(sed 's/^.*) //' /proc/"$1"/stat | awk '{ print $12 + $13 }')"
}

# check_requests_on_event_loops PID CURL... URL: 5,000 GETs on one
# connection, with nothing else for the server to do (the write-back
# upload done); SwiftNIO's event loops must have done at least 90% of the
# server's work, as ConcurrencyOnEventLoops makes them. The binary links
# the static standard library, in which SwiftNIO's own take-over finds no
# hook (dlsym): the requests' tasks then ran on Dispatch's threads and the
# loops did 51-61% of the CPU (100% with it), while the debug builds the
# tests start took the loops over.
check_requests_on_event_loops() {
    local pid=$1 url=${*: -1} before after loops total
    local curl=("${@:2:$#-2}")
    read -r -a before < <(loop_and_process_cpu "$pid")
    "${curl[@]}" "$url?n=[1-5000]" > /dev/null || check_fail "5,000 GETs on one connection failed"
    read -r -a after < <(loop_and_process_cpu "$pid")
    loops=$((after[0] - before[0])) total=$((after[1] - before[1]))
    (( total > 0 && loops * 100 >= total * 90 )) ||
        check_fail "the event loops did $loops of the server's $total ticks during 5,000 GETs (at least 90% expected): Swift concurrency is not on the loops"
    check_say "5,000 GETs: the event loops did $loops of the server's $total CPU ticks"
}

# check_serve: davgate serves in the root as the user davgate; curl talks
# to it from outside over TLS; SIGTERM stops it with status 0.
check_serve() {
    local out=$CHECK_CACHE/serve.out err=$CHECK_CACHE/serve.err port password uid url body status
    uid=$(in_root id -u davgate)
    # The unit's UMask, LimitNOFILE, NoNewPrivileges and empty capability
    # sets; a systemd-like environment (no variables from this shell).
    (
        umask 0077
        # LimitNOFILE=65536, or as near as this machine's hard limit allows.
        ulimit -n "$(( $(ulimit -Hn) < 65536 ? $(ulimit -Hn) : 65536 ))"
        exec env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/var/lib/davgate USER=davgate LOGNAME=davgate \
            chroot "$CHECK_ROOT" setpriv --reuid=davgate --regid=davgate --init-groups --no-new-privs \
            --inh-caps=-all --bounding-set=-all \
            /usr/bin/davgate serve --config /etc/davgate/davgate.toml
    ) > "$out" 2> "$err" &
    CHECK_SERVER_PID=$!
    port=""
    for _ in $(seq 1 600); do
        port=$(sed -n 's|^davgate listening on https://127.0.0.1:\([0-9]*\)/.*|\1|p' "$out")
        [ -n "$port" ] && break
        kill -0 "$CHECK_SERVER_PID" 2>/dev/null || { cat "$out" "$err" >&2; check_fail "davgate exited before it listened (its output above)"; }
        sleep 0.1
    done
    [ -n "$port" ] || { cat "$out" "$err" >&2; check_fail "davgate did not say it listens within 60 s"; }
    check_say "davgate listens on 127.0.0.1:$port"
    [ "$(awk '/^Uid:/ {print $2}' "/proc/$CHECK_SERVER_PID/status")" = "$uid" ] || check_fail "davgate does not run as the user davgate"
    [ "$(readlink "/proc/$CHECK_SERVER_PID/root")" = "$CHECK_ROOT" ] || check_fail "davgate's pid is not the server in the root"
    password=$(sed -n "s/^Created user 'admin' with password: //p" "$out")
    [ -n "$password" ] || { cat "$out" >&2; check_fail "davgate printed no admin password on its first start"; }

    # The certificate the first start made where the packaged configuration
    # says, private to davgate; curl trusts exactly it.
    [ "$(in_root stat -c '%U %a' /var/lib/davgate/certs/davgate-key.pem)" = "davgate 600" ] ||
        check_fail "the private key is not davgate's with mode 0600"
    url=https://127.0.0.1:$port/files
    local curl=(curl -sS --max-time 30 --cacert "$CHECK_ROOT/var/lib/davgate/certs/davgate.pem" -u "admin:$password")
    body="davgate package check $(date +%s)"
    status=$(printf '%s' "$body" | "${curl[@]}" -o /dev/null -w '%{http_code}' -T - "$url/package-check.txt") || check_fail "PUT failed"
    [ "$status" = 201 ] || check_fail "PUT answered $status, expected 201"
    [ "$("${curl[@]}" "$url/package-check.txt")" = "$body" ] || check_fail "GET did not return what was PUT"
    status=$("${curl[@]}" -o "$CHECK_CACHE/propfind.xml" -w '%{http_code}' -X PROPFIND -H 'Depth: 1' "$url/") || check_fail "PROPFIND failed"
    [ "$status" = 207 ] || check_fail "PROPFIND answered $status, expected 207"
    grep -q 'package-check.txt' "$CHECK_CACHE/propfind.xml" || check_fail "PROPFIND Depth 1 does not list package-check.txt"
    check_say "PUT 201, GET same bytes, PROPFIND 207 listing the file"
    # Write-back: the file reaches the folder upstream after upload_delay.
    for _ in $(seq 1 300); do
        [ "$(cat "$CHECK_ROOT/var/lib/davgate/upstream/package-check.txt" 2>/dev/null)" = "$body" ] && break
        sleep 0.1
    done
    [ "$(cat "$CHECK_ROOT/var/lib/davgate/upstream/package-check.txt" 2>/dev/null)" = "$body" ] ||
        check_fail "the file did not reach /var/lib/davgate/upstream within 30 s"
    check_requests_on_event_loops "$CHECK_SERVER_PID" "${curl[@]}" "$url/package-check.txt"
    [ -z "$(find "$CHECK_ROOT/var/lib/davgate" ! -uid "$uid" -print -quit)" ] ||
        check_fail "files in /var/lib/davgate not owned by davgate: $(find "$CHECK_ROOT/var/lib/davgate" ! -uid "$uid")"

    kill -TERM "$CHECK_SERVER_PID"
    for _ in $(seq 1 300); do
        kill -0 "$CHECK_SERVER_PID" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$CHECK_SERVER_PID" 2>/dev/null && { cat "$err" >&2; check_fail "davgate still runs 30 s after SIGTERM (the unit's TimeoutStopSec)"; }
    status=0
    wait "$CHECK_SERVER_PID" || status=$?
    CHECK_SERVER_PID=""
    [ "$status" -eq 0 ] || { tail -20 "$err" >&2; check_fail "davgate exited with status $status after SIGTERM, expected 0"; }
    check_say "SIGTERM: davgate stopped with status 0"
}

# check_remove_purge: remove keeps the conffile and state; purge deletes
# them, keeps the user (see contrib/debian/postrm), and leaves no trace in
# dpkg.
check_remove_purge() {
    local status
    root_apt remove -y davgate > "$CHECK_CACHE/apt-remove.log" 2>&1 ||
        { cat "$CHECK_CACHE/apt-remove.log" >&2; check_fail "apt-get remove davgate failed"; }
    [ ! -e "$CHECK_ROOT/usr/bin/davgate" ] || check_fail "remove left /usr/bin/davgate"
    [ -f "$CHECK_ROOT/etc/davgate/davgate.toml" ] || check_fail "remove deleted the conffile (only purge may)"
    [ -f "$CHECK_ROOT/var/lib/davgate/users.json" ] || check_fail "remove deleted the state (only purge may)"
    root_apt purge -y davgate > "$CHECK_CACHE/apt-purge.log" 2>&1 ||
        { cat "$CHECK_CACHE/apt-purge.log" >&2; check_fail "apt-get purge davgate failed"; }
    status=$(in_root dpkg-query -W -f='${Status}' davgate 2>/dev/null || true)
    case "$status" in
        ""|*not-installed) ;;
        *) check_fail "dpkg still has davgate after purge: $status" ;;
    esac
    [ ! -e "$CHECK_ROOT/etc/davgate" ] || check_fail "purge left /etc/davgate"
    [ ! -e "$CHECK_ROOT/var/lib/davgate" ] || check_fail "purge left /var/lib/davgate"
    [ ! -e "$CHECK_ROOT/etc/systemd/system/multi-user.target.wants/davgate.service" ] || check_fail "purge left the unit enabled"
    in_root getent passwd davgate >/dev/null || check_fail "purge removed the user davgate, which postrm says it keeps"
    check_say "remove kept the configuration and state; purge removed both (the user stays)"
}

check_in_debian_root() {
    local deb=$1 started
    check_prepare_root
    # /var/tmp: the booted root mounts a tmpfs over /tmp.
    cp "$deb" "$CHECK_ROOT/var/tmp/"
    started=$SECONDS
    root_apt update > "$CHECK_CACHE/apt-update.log" 2>&1 ||
        { cat "$CHECK_CACHE/apt-update.log" >&2; check_fail "apt-get update in the Debian root failed; is the mirror reachable?"; }
    root_apt install -y "/var/tmp/$(basename "$deb")" > "$CHECK_CACHE/apt-install.log" 2>&1 ||
        { cat "$CHECK_CACHE/apt-install.log" >&2; check_fail "apt-get install ./$(basename "$deb") failed in a fresh Debian 12"; }
    check_say "apt-get installed $(basename "$deb") with its Depends in $((SECONDS - started)) s"
    check_installed
    check_conffile_kept "$(basename "$deb")"
    check_serve
    check_remove_purge
    check_under_systemd "$(basename "$deb")"
    check_cleanup
    CHECK_ROOT=""
    trap - EXIT
}

# --- 5. under systemd ------------------------------------------------------

# in_container CMD...: runs CMD inside the booted root, in all of its
# namespaces, with a clean environment.
in_container() {
    nsenter --target "$CHECK_CONTAINER_INIT" --all -- \
        /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}

# container_show PROPERTY: one property of davgate.service.
container_show() {
    in_container systemctl show --property "$1" --value davgate.service
}

# check_container_fail MESSAGE: fails, showing the unit's status and journal.
check_container_fail() {
    in_container systemctl --no-pager --full status davgate.service >&2 || true
    in_container journalctl --no-pager -u davgate.service -n 40 >&2 || true
    check_fail "$1"
}

# check_container_init NSPAWN_PID: the pid of the container's systemd
# among NSPAWN_PID's children and grandchildren; empty while there is none.
# Explicit "return 0": a bare return in the EXIT trap (check_cleanup) would
# return the status the script exits with and abort the cleanup.
check_container_init() {
    local child grandchild
    for child in $(ps -o pid= --ppid "$1" || true); do
        for grandchild in "$child" $(ps -o pid= --ppid "$child" || true); do
            if [ "$(cat "/proc/$grandchild/comm" 2>/dev/null)" = systemd ]; then
                echo "$grandchild"
                return 0
            fi
        done
    done
    return 0
}

# check_boot_container: the root, with systemd added, booted by
# systemd-nspawn; waits until its boot is done.
check_boot_container() {
    local state
    root_apt install -y --no-install-recommends systemd systemd-sysv curl > "$CHECK_CACHE/apt-systemd.log" 2>&1 ||
        { cat "$CHECK_CACHE/apt-systemd.log" >&2; check_fail "could not install systemd in the Debian root"; }
    # The container mounts its own /proc.
    umount "$CHECK_ROOT/proc"
    # Not registered with a machined this machine may lack; inside this
    # process's cgroup; a network of its own (loopback only), so port 8443
    # is free there whatever runs here. Its console is passive and reads
    # nothing: /dev/null, not this script's input.
    systemd-nspawn --quiet --directory="$CHECK_ROOT" --register=no --keep-unit --private-network \
        --boot --console=passive < /dev/null > "$CHECK_CACHE/container.log" 2>&1 &
    CHECK_CONTAINER_PID=$!
    # Its init is systemd-nspawn's child or, while it sets up, grandchild.
    for _ in $(seq 1 300); do
        kill -0 "$CHECK_CONTAINER_PID" 2>/dev/null ||
            { cat "$CHECK_CACHE/container.log" >&2; check_fail "systemd-nspawn could not boot the Debian root (its log above)"; }
        CHECK_CONTAINER_INIT=$(check_container_init "$CHECK_CONTAINER_PID")
        [ -n "$CHECK_CONTAINER_INIT" ] && break
        sleep 0.1
    done
    [ -n "$CHECK_CONTAINER_INIT" ] || check_fail "no systemd started in the container within 30 s (log: $CHECK_CACHE/container.log)"
    # systemctl answers once systemd opened its socket; then it waits for
    # the boot to finish.
    state=""
    for _ in $(seq 1 90); do
        state=$(in_container timeout 90 systemctl is-system-running --wait 2>/dev/null) || true
        [ -z "$state" ] || break
        sleep 1
    done
    case "$state" in
        running) ;;
        degraded) in_container systemctl --no-pager --failed >&2; check_say "the container booted degraded (units above failed); going on" ;;
        *) check_fail "the container did not finish booting: $state (log: $CHECK_CACHE/container.log)" ;;
    esac
}

# check_stop_container: powers the container off (systemd-nspawn turns
# SIGTERM into a clean shutdown), killing it after 30 s.
check_stop_container() {
    [ -n "$CHECK_CONTAINER_PID" ] || return 0
    [ -n "$CHECK_CONTAINER_INIT" ] || CHECK_CONTAINER_INIT=$(check_container_init "$CHECK_CONTAINER_PID")
    kill -TERM "$CHECK_CONTAINER_PID" 2>/dev/null || true
    for _ in $(seq 1 300); do
        kill -0 "$CHECK_CONTAINER_PID" 2>/dev/null || break
        sleep 0.1
    done
    # A container that did not halt: killing its init (while systemd-nspawn
    # still runs, so the pid is still its) ends every process in it;
    # systemd-nspawn's death alone would leave them running.
    if kill -0 "$CHECK_CONTAINER_PID" 2>/dev/null; then
        [ -z "$CHECK_CONTAINER_INIT" ] || kill -KILL "$CHECK_CONTAINER_INIT" 2>/dev/null || true
        kill -KILL "$CHECK_CONTAINER_PID" 2>/dev/null || true
    fi
    wait "$CHECK_CONTAINER_PID" 2>/dev/null || true
    CHECK_CONTAINER_PID=""
    CHECK_CONTAINER_INIT=""
}

# check_hardened_process PID: the unit's hardening as the kernel sees it in
# the running server: its user, no new privileges, a seccomp filter, no
# capabilities at all.
check_hardened_process() {
    local pid=$1 status uid
    status=$(in_container cat "/proc/$pid/status")
    uid=$(in_container id -u davgate)
    grep -qE "^Uid:\s+$uid\s" <<<"$status" || check_container_fail "the service does not run as davgate"
    grep -qE '^NoNewPrivs:\s+1$' <<<"$status" || check_container_fail "NoNewPrivileges is not in force"
    grep -qE '^Seccomp:\s+2$' <<<"$status" || check_container_fail "no seccomp filter (SystemCallFilter, MemoryDenyWriteExecute...) is in force"
    grep -qE '^CapBnd:\s+0+$' <<<"$status" || check_container_fail "the capability bounding set is not empty"
}

# check_under_systemd DEB_NAME: the unit as shipped, under systemd.
check_under_systemd() {
    local deb_name=$1 pid password body status url curl
    check_boot_container
    check_say "the Debian root booted with systemd $(in_container systemctl --version | awk 'NR == 1 {print $2}')"
    # The postinst enables and starts the unit; a Type=notify start waits
    # for READY=1 (up to TimeoutStartSec, 90 s).
    in_container apt-get -q -o Dpkg::Use-Pty=0 install -y "/var/tmp/$deb_name" > "$CHECK_CACHE/apt-systemd-install.log" 2>&1 ||
        { cat "$CHECK_CACHE/apt-systemd-install.log" >&2; check_fail "apt-get install under systemd failed"; }
    [ "$(in_container systemctl is-enabled davgate.service)" = enabled ] || check_container_fail "the postinst did not enable davgate.service"
    [ "$(in_container systemctl is-active davgate.service)" = active ] ||
        check_container_fail "davgate.service is not active after the postinst started it: a Type=notify unit needs davgate to send READY=1 once it listens"
    pid=$(container_show MainPID)
    check_hardened_process "$pid"
    check_say "davgate.service active under systemd, pid $pid: user davgate, NoNewPrivs, seccomp, no capabilities"

    # READY=1 comes once it listens; its output reaches the journal a
    # moment later.
    for _ in $(seq 1 100); do
        in_container journalctl -u davgate.service -o cat | grep -q '^davgate listening on ' && break
        sleep 0.1
    done
    password=$(in_container journalctl -u davgate.service -o cat | sed -n "s/^Created user 'admin' with password: //p")
    [ -n "$password" ] || check_container_fail "no admin password in journalctl -u davgate"
    url=https://127.0.0.1:8443/files
    curl=(curl -sS --max-time 30 --cacert /var/lib/davgate/certs/davgate.pem -u "admin:$password")
    body="davgate under systemd $(date +%s)"
    status=$(in_container "${curl[@]}" -o /dev/null -w '%{http_code}' --data-binary "$body" -X PUT "$url/under-systemd.txt") ||
        check_container_fail "PUT under systemd failed"
    [ "$status" = 201 ] || check_container_fail "PUT under systemd answered $status, expected 201"
    [ "$(in_container "${curl[@]}" "$url/under-systemd.txt")" = "$body" ] || check_container_fail "GET under systemd did not return what was PUT"
    status=$(in_container "${curl[@]}" -o /dev/null -w '%{http_code}' -X PROPFIND -H 'Depth: 1' "$url/") || check_container_fail "PROPFIND under systemd failed"
    [ "$status" = 207 ] || check_container_fail "PROPFIND under systemd answered $status, expected 207"
    check_say "under systemd: PUT 201, GET same bytes, PROPFIND 207"

    # A reload is SIGHUP to the same process, which must not end it.
    in_container systemctl reload davgate.service || check_container_fail "systemctl reload davgate failed"
    sleep 1
    if [ "$(in_container systemctl is-active davgate.service)" != active ] || [ "$(container_show MainPID)" != "$pid" ]; then
        check_container_fail "after systemctl reload davgate is not the same active process (SIGHUP ended it?)"
    fi
    check_say "systemctl reload: same process, still active"

    # The watchdog, shortened to 2 s: without WATCHDOG=1 every second
    # systemd would kill and restart it within 7 s.
    in_container mkdir -p /run/systemd/system/davgate.service.d
    printf '[Service]\nWatchdogSec=2s\n' | in_container tee /run/systemd/system/davgate.service.d/check-watchdog.conf >/dev/null
    in_container systemctl daemon-reload
    in_container systemctl restart davgate.service || check_container_fail "systemctl restart davgate failed"
    pid=$(container_show MainPID)
    sleep 7
    if [ "$(container_show NRestarts)" != 0 ] || [ "$(container_show MainPID)" != "$pid" ] ||
        [ "$(in_container systemctl is-active davgate.service)" != active ]; then
        check_container_fail "with WatchdogSec=2s davgate was restarted: it does not send WATCHDOG=1 every WATCHDOG_USEC/2"
    fi
    in_container rm -r /run/systemd/system/davgate.service.d
    in_container systemctl daemon-reload
    check_say "watchdog: fed for 7 s at WatchdogSec=2s, no restart"

    in_container systemctl stop davgate.service
    if [ "$(container_show Result)" != success ] || [ "$(container_show ExecMainStatus)" != 0 ]; then
        check_container_fail "systemctl stop davgate: result $(container_show Result), status $(container_show ExecMainStatus); expected success, 0"
    fi
    check_say "systemctl stop: result success, status 0"

    in_container apt-get -q -o Dpkg::Use-Pty=0 purge -y davgate > "$CHECK_CACHE/apt-systemd-purge.log" 2>&1 ||
        { cat "$CHECK_CACHE/apt-systemd-purge.log" >&2; check_fail "apt-get purge under systemd failed"; }
    [ "$(in_container systemctl is-enabled davgate.service 2>/dev/null || true)" != enabled ] || check_fail "the unit is still enabled after purge"
    in_container test ! -e /var/lib/davgate || check_fail "purge under systemd left /var/lib/davgate"
    check_stop_container
}
