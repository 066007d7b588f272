#!/usr/bin/env bash
# Builds haul as it is meant to be installed, and prints the path of the binary.
#
# On Linux the Swift runtime and Foundation are linked into the binary (`--static-swift-stdlib`,
# linked by lld): it then runs on machines without a Swift toolchain (OpenSSL 3 is still needed),
# and it starts without resolving thousands of symbols in shared libraries and calls the runtime
# directly. haul-urlsession, the program
# `haul --engine=urlsession` runs, is built beside it and linked to the shared libraries, because
# FoundationNetworking needs libcurl, which has no static library here: `--engine=urlsession`
# still needs the Swift runtime libraries. `haul` gets no run path ($ORIGIN: it loads no
# library from beside itself) and binds its symbols at start (`-z now`, so its relocations can
# be read-only), as Debian's hardening asks. Elsewhere (macOS) this is a plain release build.
#
# `haul --version` names the commit built: HAUL_COMMIT when set, else git's short hash of HEAD
# (with "-dirty" when tracked files differ from it); outside a git checkout, no commit.
#
#   Scripts/build-release.sh              # builds, then prints .../haul
#   "$(Scripts/build-release.sh)" --help
#   HAUL_COMMIT=1a2b3c4 Scripts/build-release.sh   # from a source tree without .git
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Package.swift hands HAUL_COMMIT to the C target that `haul --version` reads it from (and
# ignores a value of other characters than these).
if [[ -z "${HAUL_COMMIT:-}" && "$(git rev-parse --show-toplevel 2>/dev/null)" == "$PWD" ]]; then
    HAUL_COMMIT=$(git rev-parse --short HEAD)
    git diff --quiet HEAD -- || HAUL_COMMIT+=-dirty
fi
if [[ -n "${HAUL_COMMIT:-}" && ! "$HAUL_COMMIT" =~ ^[0-9A-Za-z.+-]{1,64}$ ]]; then
    echo "build-release.sh: HAUL_COMMIT must be 1 to 64 letters, digits, '.', '+' or '-'" >&2
    exit 2
fi
export HAUL_COMMIT

swift build -c release --product haul-urlsession </dev/null >&2
plain=$(swift build -c release --show-bin-path </dev/null)

if [[ "$(uname -s)" != Linux ]]; then
    swift build -c release --product haul </dev/null >&2
    echo "$plain/haul"
    exit 0
fi

static=(-c release --static-swift-stdlib -Xswiftc -use-ld=lld -Xlinker -z -Xlinker now --disable-local-rpath --scratch-path .build/static)
swift build "${static[@]}" --product haul </dev/null >&2
bin=$(swift build "${static[@]}" --show-bin-path </dev/null)
cp "$plain/haul-urlsession" "$bin/haul-urlsession"
echo "$bin/haul"
