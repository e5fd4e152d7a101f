#!/usr/bin/env bash
# Runs imago-fuzz harnesses one after another, FUZZ_SECONDS each (default 300): seeds each corpus,
# keeps it in .build-fuzz/corpus/NAME, and puts any crash, leak, time-out or out-of-memory input in
# .build-fuzz/findings/NAME/. Exits 1 if any harness left a finding. Usage: Fuzz/run.sh BIN NAME...
set -euo pipefail
bin=$1; shift
seconds=${FUZZ_SECONDS:-300}
status=0
# The default CMYK profile is a global read once; LeakSanitizer cannot follow the tagged pointer that
# holds it (see ColorCaches in Sources/Imago/Color/ColorTransforms.swift).
export LSAN_OPTIONS=suppressions=$PWD/Fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}
for target in "$@"; do
    corpus=.build-fuzz/corpus/$target findings=.build-fuzz/findings/$target
    mkdir -p "$corpus" "$findings"
    case $target in
        decode) seeds=(../shared/corpus/*/*.jpeg ../shared/corpus/*/*.png ../shared/corpus/*/*.gif ../shared/corpus/*/*.webp
                       Tests/Hostile/*.jpeg Tests/Hostile/*.png Tests/Hostile/*.gif Tests/Hostile/*.webp) ;;
        preview) seeds=(../shared/corpus/jpeg/*.jpeg ../shared/corpus/png/*.png ../shared/corpus/webp/*.webp) ;;
        # Debian's profiles (colord-data, icc-profiles-free, libgs-common), read where they are installed.
        color-profile) seeds=(/usr/share/color/icc/*.icc /usr/share/color/icc/*.ICM /usr/share/color/icc/colord/*.icc /usr/share/color/icc/ghostscript/*.icc) ;;
        http-freshness|http-response|data-url|pnm|bmp|tga|ico|tiff|avif|heif|jxl|svg|imgproxy-options|thumbor-url|thumbor-conf|dotenv|placeholder|gain-map|cascade|result-store|video|raw|pdfinfo|ranged-source) seeds=(Fuzz/seeds/"$target"/*) ;;
        *) seeds=() ;;
    esac
    # Folder and name, so files of one name in two folders both become seeds.
    for seed in "${seeds[@]}"; do cp "$seed" "$corpus/$(basename "$(dirname "$seed")")-$(basename "$seed")"; done
    echo "== $target: $seconds s ($(date -u +%H:%M:%SZ))"
    # ranged-source's range reads finish on Swift's pool, which frees their buffers a moment after
    # the read has returned: LeakSanitizer's check after each input would call that a leak. A real
    # one would grow past -rss_limit_mb.
    extra=()
    if [[ $target == ranged-source ]]; then extra=(-detect_leaks=0); fi
    IMAGO_FUZZ_TARGET=$target "$bin" "${extra[@]}" -max_total_time="$seconds" -max_len=262144 -rss_limit_mb=4096 -timeout=30 \
        -print_final_stats=1 -artifact_prefix="$findings"/ "$corpus" 2>&1 \
        | grep -E "^stat::(number_of_executed_units|peak_rss_mb|new_units_added)|#[0-9]+ +DONE|ERROR|SUMMARY|Test unit written" || true
    if compgen -G "$findings/*" >/dev/null; then echo "findings in $findings:"; ls "$findings"; status=1; fi
done
exit $status
