# Building davgate's Debian package, for scripts/package: the release build,
# its checks, and the .deb assembled with dpkg-deb alone from contrib/.
# Functions print progress on standard error and fail with what to do.

# Where the release build lives: apart from the debug .build/ of scripts/test,
# so neither rebuilds the other's products (scripts/bench --rev sets another).
PACKAGE_SCRATCH=${PACKAGE_SCRATCH:-.build-release}
PACKAGE_BINARY=$PACKAGE_SCRATCH/release/davgate
PACKAGE_MAINTAINER=${DAVGATE_MAINTAINER:-"davgate maintainers <maintainers@users.noreply.a-seed-63e62a18.example>"}

package_say() { echo "scripts/package: $*" >&2; }
package_fail() { echo "scripts/package: $*" >&2; exit 1; }

# package_version: the Debian version of this checkout. A VERSION file wins;
# else the nearest tag vX.Y.Z (X.Y.Z, or X.Y.Z+N.gSHA N commits later); else
# 0~gitDATE.SHA from the commit time, so that later commits sort higher.
# A tree with uncommitted changes gets +dirty. Native: no Debian revision.
package_version() {
    local version described
    if [ -f VERSION ]; then
        version=$(tr -d ' \n' < VERSION)
    elif described=$(git describe --tags --match 'v[0-9]*' 2>/dev/null); then
        # v1.2.0-5-gabc1234 -> 1.2.0+5.gabc1234
        version=$(sed -E 's/^v//; s/-([0-9]+)-g([0-9a-f]+)$/+\1.g\2/' <<<"$described")
    else
        version="0~git$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y%m%d.%H%M%S).$(git rev-parse --short=7 HEAD)"
    fi
    if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
        version="$version+dirty"
    fi
    dpkg --validate-version "$version" >/dev/null 2>&1 ||
        package_fail "\"$version\" is not a valid Debian version; fix VERSION or the tag (digits first, then letters, digits, . + ~)"
    case "$version" in
        *-*) package_fail "\"$version\" has a hyphen, which Debian reads as a revision of a non-native package; use + or ~ instead" ;;
    esac
    echo "$version"
}

# Gold's order of the binary's functions, written by scripts/hot-code from
# a profile: what a serving davgate runs, together at one end of the code.
HOT_CODE_ORDER=scripts/lib/hot-code.order

# The release build with the Swift runtime and Foundation linked into the
# binary, so the package needs no Swift toolchain. No $ORIGIN run path
# (SwiftPM's default; nothing is loaded from /usr/bin), and bound at start
# (-z now) so that relro makes the whole GOT read-only. Every function in a
# section of its own (Swift's and C's), so that the linker drops the unused
# ones and lays out the rest in HOT_CODE_ORDER's order: the kernel maps code
# 64 KiB at a time around each page touched, and in the default order the
# code a server runs was spread over most of the binary.
PACKAGE_BUILD_ARGUMENTS=(
    -c release --static-swift-stdlib --disable-local-rpath -Xlinker -z -Xlinker now
    -Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections
    -Xlinker "--section-ordering-file=$PWD/$HOT_CODE_ORDER"
    --product davgate --scratch-path "$PACKAGE_SCRATCH"
)

# package_build_verbose: the same build, every command shown (scripts/hot-code
# reads the linker's command line from it).
package_build_verbose() { swift build -v "${PACKAGE_BUILD_ARGUMENTS[@]}"; }

# package_build: the release build, with progress.
package_build() {
    package_say "building the release binary (swift build -c release --static-swift-stdlib; the first build takes 15-35 minutes on 2 cores)..."
    local started=$SECONDS
    # SwiftPM relinks when the flags change, not when the order file does.
    if [ "$HOT_CODE_ORDER" -nt "$PACKAGE_BINARY" ]; then rm -f "$PACKAGE_BINARY"; fi
    # Every hundredth step of the build's progress, and all else it says.
    swift build "${PACKAGE_BUILD_ARGUMENTS[@]}" 2>&1 |
        awk '!/^\[[0-9]+\/[0-9]+\]/ || /^\[[0-9]*00\// { print; fflush() }' ||
        package_fail "the release build failed (see above)"
    package_say "built $PACKAGE_BINARY in $((SECONDS - started)) s"
}

# package_verify_hot_code BINARY: refuses a binary whose code is not in
# HOT_CODE_ORDER's order (scripts/lib/hot_code.py check says why).
package_verify_hot_code() {
    python3 scripts/lib/hot_code.py check "$1" "$HOT_CODE_ORDER" ||
        package_fail "$1 is not laid out hot code first (see above)"
}

# package_verify_static BINARY: refuses a binary that still loads the Swift
# toolchain's libraries (libswiftCore.so, libFoundation.so...), which do not
# exist where the package is installed.
package_verify_static() {
    local binary=$1 libraries swift_ones runpath
    libraries=$(ldd "$binary") || package_fail "ldd cannot read $binary"
    swift_ones=$(grep -E 'libswift|libFoundation|lib_Foundation|libdispatch|libBlocksRuntime|/opt/swift|not found' <<<"$libraries" || true)
    if [ -n "$swift_ones" ]; then
        package_fail "$binary is not self-contained; it still needs:
$swift_ones
Build it with --static-swift-stdlib (rm -rf $PACKAGE_SCRATCH and run scripts/package again)."
    fi
    # A run path into the toolchain would be searched on every start, and is
    # an error for lintian (custom-library-search-path).
    runpath=$(readelf -d "$binary" | grep -E 'RPATH|RUNPATH' || true)
    [ -z "$runpath" ] || package_fail "$binary has a library search path: $runpath"
    package_say "self-contained: links only $(awk '/=>/ {print $1}' <<<"$libraries" | sort | tr '\n' ' ')"
}

# package_depends BINARY: the Depends of the binary's shared libraries, as
# dpkg-shlibdeps computes them for any Debian package: each library's owner
# (ldd, then dpkg -S) with the lowest version providing the symbols used
# (from its symbols or shlibs file). It wants a debian/control to read.
package_depends() {
    local binary work depends
    binary=$(realpath "$1")
    work=$(mktemp -d)
    mkdir "$work/debian"
    printf 'Source: davgate\n\nPackage: davgate\nArchitecture: amd64\n' > "$work/debian/control"
    depends=$(cd "$work" && dpkg-shlibdeps -O -e"$binary" 2>"$work/errors") || {
        cat "$work/errors" >&2
        rm -rf "$work"
        package_fail "dpkg-shlibdeps could not name the packages of $binary's libraries (see above)"
    }
    rm -rf "$work"
    sed -n 's/^shlibs:Depends=//p' <<<"$depends"
}

# package_changelog VERSION: a one-entry changelog in Debian's format, for
# /usr/share/doc/davgate/changelog.gz (what lintian and apt changelog read).
package_changelog() {
    local version=$1
    printf 'davgate (%s) unstable; urgency=medium\n\n' "$version"
    printf '  * Built from git commit %s.\n\n' "$(git rev-parse --short=12 HEAD)"
    printf ' -- %s  %s\n' "$PACKAGE_MAINTAINER" "$(git log -1 --format=%cD)"
}

# package_control VERSION DEPENDS INSTALLED_KIB: DEBIAN/control. Besides
# the libraries: adduser for the postinst, procps for the unit's
# ExecReload=/bin/kill (minimal systems such as containers lack it).
package_control() {
    cat <<EOF
Package: davgate
Version: $1
Architecture: amd64
Maintainer: $PACKAGE_MAINTAINER
Installed-Size: $3
Depends: adduser, procps, $2
Section: httpd
Priority: optional
Description: TLS WebDAV gateway with a File Provider view of an upstream store
 davgate serves any WebDAV client (GNOME Files, Dolphin, Finder, Explorer,
 davfs2, rclone, curl) a view of an upstream store: a local folder, another
 WebDAV server or an S3 bucket. Every upstream file appears at once as a
 placeholder with its metadata; content is fetched on first read into a
 local cache, writes land durably in a journal and are uploaded after,
 conditional on the version they were based on, and WebDAV locks coordinate
 the writers.
 .
 This package runs it as the systemd service davgate, as the user davgate,
 configured in /etc/davgate/davgate.toml, with its state in /var/lib/davgate.
EOF
}

# package_assemble BINARY VERSION OUT: lays out the package root and builds
# OUT/davgate_VERSION_amd64.deb; prints its path.
package_assemble() {
    local binary=$1 version=$2 out=$3 root depends deb
    root=$(mktemp -d)
    # Directories 0755 and files 0644 whatever the caller's umask (mktemp
    # makes the root itself 0700).
    umask 022
    chmod 0755 "$root"
    install -d "$root/DEBIAN" "$root/usr/bin" "$root/lib/systemd/system" "$root/etc/davgate" "$root/usr/share/doc/davgate"
    # Symbols and debug sections go: 40% smaller; Swift's reflection
    # metadata lives in loaded sections, which strip keeps.
    install -m 0755 "$binary" "$root/usr/bin/davgate"
    strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/davgate"
    install -m 0644 contrib/systemd/davgate.service "$root/lib/systemd/system/davgate.service"
    install -m 0644 contrib/debian/davgate.toml "$root/etc/davgate/davgate.toml"
    install -m 0644 contrib/debian/copyright "$root/usr/share/doc/davgate/copyright"
    install -m 0644 README.md "$root/usr/share/doc/davgate/README.md"
    package_changelog "$version" | gzip -9n > "$root/usr/share/doc/davgate/changelog.gz"
    chmod 0644 "$root/usr/share/doc/davgate/changelog.gz"
    if [ -f contrib/debian/lintian-overrides ]; then
        install -d "$root/usr/share/lintian/overrides"
        install -m 0644 contrib/debian/lintian-overrides "$root/usr/share/lintian/overrides/davgate"
    fi

    install -m 0755 contrib/debian/postinst contrib/debian/prerm contrib/debian/postrm "$root/DEBIAN/"
    # Edits to the configuration survive upgrades; dpkg asks before replacing
    # an edited one, and purge removes it.
    echo /etc/davgate/davgate.toml > "$root/DEBIAN/conffiles"
    (cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
    depends=$(package_depends "$root/usr/bin/davgate")
    package_control "$version" "$depends" "$(du -sk --exclude=DEBIAN "$root" | cut -f1)" > "$root/DEBIAN/control"
    chmod 0644 "$root/DEBIAN/conffiles" "$root/DEBIAN/md5sums" "$root/DEBIAN/control"

    mkdir -p "$out"
    deb="$out/davgate_${version}_amd64.deb"
    # Files owned by root:root in the archive whoever runs this (no fakeroot).
    dpkg-deb --build --root-owner-group -Zxz "$root" "$deb" >/dev/null
    rm -rf "$root"
    echo "$deb"
}
