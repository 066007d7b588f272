#!/usr/bin/env bash
# Builds the Debian package haul_VERSION_ARCH.deb in the current folder, and prints its path.
#
#   Scripts/package-deb.sh               # builds (Scripts/build-release.sh), then packages
#   Scripts/package-deb.sh --no-build    # packages the release build made before
#   DEBFULLNAME="A Name" DEBEMAIL=a@example.org Scripts/package-deb.sh
#
# The package holds /usr/bin/haul (the release build, Swift runtime linked in, stripped), its man
# page, the bash, zsh and fish completions, the systemd user unit, and /usr/share/doc/haul/
# (copyright: Packaging/deb/copyright; changelog.Debian.gz). Not haul-urlsession: it needs the
# Swift runtime's shared libraries, which no Debian package provides, so `--engine=urlsession`
# is not available from the package. Depends comes from dpkg-shlibdeps over the binary (through
# a throwaway debian/control), so the minimum versions are those of the libraries' symbols files.
#
# Version: haul's own (`haul --version`) with the Debian revision DEB_REVISION (default 1).
# Maintainer: DEBFULLNAME <DEBEMAIL>, else the author of the commit built. Dates (the changelog,
# the files' times) come from SOURCE_DATE_EPOCH, else that commit's time, so that packaging
# the same build twice gives the same bytes.
set -euo pipefail
umask 022

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

BUILD=1
for argument in "$@"; do
    case $argument in
        --no-build) BUILD=0 ;;
        -h | --help) sed -n '2,18p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) log "unrecognized option '$argument'"; exit 2 ;;
    esac
done

# Prints `git log -1 --format=FORMAT` of the repository (FORMAT the argument), empty
# outside a git checkout.
commit_field() {
    git -C "$HAUL_REPO_ROOT" log -1 --format="$1" 2>/dev/null || true
}

# Prints the years of the commits ("2025-2026"; one year when they share it), or the year of
# SOURCE_DATE_EPOCH outside a git checkout.
copyright_years() {
    local first last
    first=$(git -C "$HAUL_REPO_ROOT" log --max-parents=0 --format=%cd --date=format:%Y 2>/dev/null | sort | head -1) || true
    last=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y)
    if [[ -z "$first" || "$first" == "$last" ]]; then echo "$last"; else echo "$first-$last"; fi
}

# Sets VERSION, ARCH, MAINTAINER, SOURCE_DATE_EPOCH and COMMIT from the build and the repository.
describe_package() {
    local line
    line=$("$BUILT/haul" --version)
    [[ "$line" =~ ^haul\ ([0-9A-Za-z.+~]+)\ \(commit\ ([^,]+), ]] || die "unexpected 'haul --version': $line"
    VERSION=${BASH_REMATCH[1]}-${DEB_REVISION:-1}
    COMMIT=${BASH_REMATCH[2]}
    ARCH=$(dpkg --print-architecture)
    if [[ -n "${DEBEMAIL:-}" ]]; then
        MAINTAINER="${DEBFULLNAME:-haul packager} <$DEBEMAIL>"
    else
        MAINTAINER=$(commit_field '%an <%ae>')
        [[ -n "$MAINTAINER" ]] || die "set DEBEMAIL (and DEBFULLNAME): there is no commit to take a maintainer from"
    fi
    SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(commit_field %ct)}
    SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(date +%s)}
    export SOURCE_DATE_EPOCH
}

# Copies the files of the package into STAGE (debian/haul in the work folder).
stage_files() {
    local packaging=$HAUL_REPO_ROOT/Packaging
    install -D -m 0755 "$BUILT/haul" "$STAGE/usr/bin/haul"
    strip --remove-section=.comment --remove-section=.note --strip-unneeded "$STAGE/usr/bin/haul"
    install -d -m 0755 "$STAGE/usr/share/man/man1" "$STAGE/usr/share/doc/haul"
    gzip -9n <"$packaging/haul.1" >"$STAGE/usr/share/man/man1/haul.1.gz"
    install -D -m 0644 "$packaging/completions/haul.bash" "$STAGE/usr/share/bash-completion/completions/haul"
    install -D -m 0644 "$packaging/completions/_haul" "$STAGE/usr/share/zsh/vendor-completions/_haul"
    install -D -m 0644 "$packaging/completions/haul.fish" "$STAGE/usr/share/fish/vendor_completions.d/haul.fish"
    install -D -m 0644 "$packaging/haul.service" "$STAGE/usr/lib/systemd/user/haul.service"
    sed "s/@YEARS@/$(copyright_years)/" "$packaging/deb/copyright" >"$STAGE/usr/share/doc/haul/copyright"
    chmod 0644 "$STAGE/usr/share/doc/haul/copyright"
    {
        echo "haul ($VERSION) unstable; urgency=medium"
        echo
        echo "  * haul ${VERSION%-*} built from commit $COMMIT."
        echo
        echo " -- $MAINTAINER  $(LC_ALL=C date -u -R -d "@$SOURCE_DATE_EPOCH")"
    } | gzip -9n >"$STAGE/usr/share/doc/haul/changelog.Debian.gz"
    chmod 0644 "$STAGE/usr/share/man/man1/haul.1.gz" "$STAGE/usr/share/doc/haul/changelog.Debian.gz"
}

# Prints the Depends value dpkg-shlibdeps finds for the staged binary.
shared_library_depends() {
    local output
    printf 'Source: haul\nMaintainer: %s\n\nPackage: haul\nArchitecture: any\n' "$MAINTAINER" >"$WORK/debian/control"
    output=$(cd "$WORK" && dpkg-shlibdeps -O -e"debian/haul/usr/bin/haul")
    [[ "$output" == shlibs:Depends=* ]] || die "dpkg-shlibdeps said: $output"
    echo "${output#shlibs:Depends=}"
}

# Prints the Installed-Size as dpkg-gencontrol counts it: KiB per file, rounded up, and 1 per
# folder or link.
installed_size() {
    find "$STAGE" -mindepth 1 -path "$STAGE/DEBIAN" -prune -o -printf '%y %s\n' \
        | awk '$1 == "f" { total += int(($2 + 1023) / 1024); next } { total += 1 } END { print total }'
}

# Writes DEBIAN/control and DEBIAN/md5sums.
write_control() {
    local depends size
    install -d -m 0755 "$STAGE/DEBIAN"   # where dpkg-shlibdeps finds the package's root
    depends=$(shared_library_depends)
    size=$(installed_size)
    cat >"$STAGE/DEBIAN/control" <<EOF
Package: haul
Version: $VERSION
Architecture: $ARCH
Maintainer: $MAINTAINER
Installed-Size: $size
Depends: $depends
Suggests: libpq5
Section: net
Priority: optional
Description: fast, resumable and verified downloads over HTTP(S)
 haul downloads large files over HTTP and HTTPS with several connections,
 resumes after an interruption without downloading again the bytes already
 on disk, checks checksums and Metalink hashes, and gives a file its final
 name only once it is complete.
 .
 haul daemon keeps a download queue that outlives the process and serves it
 over aria2's JSON-RPC and a web dashboard; the systemd user unit haul.service
 runs it. With libpq5 installed, the queue may live in PostgreSQL.
EOF
    (cd "$STAGE" && find usr -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum) >"$STAGE/DEBIAN/md5sums"
    chmod 0644 "$STAGE/DEBIAN/control" "$STAGE/DEBIAN/md5sums"
}

require_command dpkg-deb dpkg
require_command dpkg-shlibdeps dpkg-dev
require_command strip binutils
for file in haul.1 haul.service deb/copyright completions/haul.bash completions/_haul completions/haul.fish; do
    [[ -f "$HAUL_REPO_ROOT/Packaging/$file" ]] || die "missing from the source tree: Packaging/$file"
done
if ((BUILD)); then BUILT=$(release_build_folder); else BUILT=$(release_build_folder reuse); fi
describe_package
WORK=$(mktemp -d)
on_exit "rm -rf '$WORK'"
STAGE=$WORK/debian/haul
stage_files
write_control
find "$STAGE" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
OUTPUT=$PWD/haul_${VERSION}_$ARCH.deb
dpkg-deb --root-owner-group --build "$STAGE" "$OUTPUT" >&2
log "$(basename "$OUTPUT"): $(stat -c %s "$OUTPUT") bytes, Installed-Size $(installed_size) KiB"
echo "$OUTPUT"
