#!/usr/bin/env bash
# Builds the OCI image of `imago serve` from Debian's archive alone and imports it into podman:
# a bookworm root made by mmdebstrap (the essential packages and only the libraries imago loads,
# the lazily loaded codecs included), the release binary stripped, the Swift runtime it links
# copied from the toolchain (it is not in Debian's archive), a non-root user, port 8080 and a
# health check that runs `imago health`.
#   deploy/image/build.sh BINARY [TAG]      (TAG defaults to localhost/imago:latest)
set -euo pipefail
binary=$(realpath "$1")
tag=${2:-localhost/imago:latest}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# What the binary links (ldd) and what it opens when a URL first needs the codec
# (Sources/CLazyLibraries): Debian's package for each, found by dpkg on this machine.
linked=$(ldd "$binary" | awk '$3 ~ /^\// {print $3}' | grep -v '^/opt/swift/' || true)
lazy=$(grep -ohE '"lib[a-z0-9_+-]+\.so[.0-9]*"' "$here/../../Sources/CLazyLibraries/lazy_symbols.h" | tr -d '"' | sort -u)
# poppler-utils: the PDF renderer, run as a child process (`--pdf`).
packages=ca-certificates,poppler-utils
for library in $linked $(for name in $lazy; do ldconfig -p | awk -v n="$name" '$1 == n {print $NF; exit}'; done); do
    package=$(dpkg -S "$(realpath "$library")" 2>/dev/null | head -1 | cut -d: -f1) || package=$(dpkg -S "$library" | head -1 | cut -d: -f1)
    packages="$packages,$package"
done
packages=$(echo "$packages" | tr ',' '\n' | sort -u | paste -sd, -)
echo "packages: $packages"

# The Swift runtime the binary links, from the toolchain that built it.
mkdir -p "$work/swift"
ldd "$binary" | awk '$3 ~ /^\/opt\/swift\// {print $3}' | xargs -r cp -L -t "$work/swift"
strip --strip-unneeded -o "$work/imago" "$binary"

mmdebstrap --variant=essential --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr --include="$packages" --aptopt='APT::Install-Recommends "false"' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/lintian/*' \
    --customize-hook="mkdir -p \"\$1/usr/lib/swift\" && cp -a $work/swift/. \"\$1/usr/lib/swift/\" && echo /usr/lib/swift > \"\$1/etc/ld.so.conf.d/swift.conf\" && chroot \"\$1\" ldconfig" \
    --customize-hook="install -m 755 $work/imago \"\$1/usr/local/bin/imago\"" \
    --customize-hook='echo "imago:x:10001:10001:imago serve:/nonexistent:/usr/sbin/nologin" >> "$1/etc/passwd"; echo "imago:x:10001:" >> "$1/etc/group"' \
    --customize-hook='rm -rf "$1/var/cache/apt"/* "$1/var/lib/apt/lists"/* "$1/var/log"/*' \
    bookworm "$work/root.tar" \
    "deb http://deb.debian.org/debian bookworm main" "deb http://deb.debian.org/debian-security bookworm-security main"

cp "$here/Containerfile" "$work/Containerfile"
podman build --format docker --network none -t "$tag" -f "$work/Containerfile" "$work"
podman image inspect "$tag" --format 'built {{.Id}} {{.Size}} bytes'
