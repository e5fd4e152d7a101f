# Imago: `make demo` runs the demo, `make test` the tests. Each installs what is missing first.
SWIFT ?= swift
# Debian packages: the codec libraries the build links (TurboJPEG, libspng, libwebp, giflib), SQLite and
# the xxHash headers for the disk cache; tools the
# tests use to make or check images (exiftool, webp's dwebp/img2webp, gifsicle, libjpeg-turbo's
# cjpeg/djpeg, giflib's gif2rgb, ImageMagick and netpbm for the Netpbm files); bc for `make consumer`;
# curl (benchmark peer); nginx (deploy/nginx.conf in front of imago serve nodes: make cluster-demo and its test;
# an origin with ranges and HTTP/2 for the client tests); tinyproxy and dante-server (the HTTP and SOCKS5 proxies
# the client tests go through); OpenStack Swift's servers and memcached (the swift:// source tests' store);
# ukui-wallpapers (large sample photos for the demo and benchmarks); librsvg (SVG sources) and its
# rsvg-convert, and libvips' vips (the references SVG rendering and smart crop are tested against);
# chromium (the headless browser the /gallery page is tested in); openssl (certificates for the TLS tests);
# FFmpeg's libraries (video sources, opened on first use) and its ffmpeg tool (makes the test videos, the reference frames);
# LibRaw (camera RAW sources, opened on first use) and libraw-bin's dcraw_emu (the reference developments);
# poppler-utils (PDF pages: pdfinfo, pdftoppm and pdftocairo, run as child processes), qpdf (turns test
# pages) and Ghostscript (the second reference rendering).
APT_PACKAGES := poppler-utils qpdf ghostscript pkg-config bc openssl libavformat-dev libavcodec-dev libswscale-dev libavutil-dev ffmpeg libraw-dev libraw-bin librsvg2-dev librsvg2-bin libvips-tools liblcms2-dev liblcms2-utils libgs-common colord-data icc-profiles-free imagemagick netpbm libturbojpeg0-dev libjpeg62-turbo-dev libspng-dev zlib1g-dev libdeflate-dev libwebp-dev libgif-dev libtiff-dev libtiff-tools libavif-dev libavif-bin libheif-dev libheif-examples libjxl-dev libjxl-tools tinyproxy dante-server swift-proxy swift-account swift-container swift-object memcached libsqlite3-dev libxxhash-dev libimage-exiftool-perl webp gifsicle libjpeg-turbo-progs giflib-tools curl nginx ukui-wallpapers chromium opencv-data jq
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps peers build demo test test-thumbor cluster-demo cluster-demo-hashed soak image test-image lint format docs bench bench-server bench-store bench-placeholder consumer fuzz fuzz-build fuzz-jpeg-dc sanitize clean

deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		$(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q $$missing; \
	fi
	@command -v $(SWIFT) >/dev/null || { echo "Swift 6.1 or later is needed: https://swift.org/install"; exit 1; }

build: deps
	$(SWIFT) build

# The pipeline demo, then the gallery: `imago serve` showing the wallpapers with srcset and
# ThumbHash placeholders until Ctrl-C (DEMO_GALLERY=0 skips it; GALLERY_LISTEN moves it).
DEMO_GALLERY ?= 1
GALLERY_LISTEN ?= 127.0.0.1:8080
demo: deps
	$(SWIFT) build --product imago
	$$($(SWIFT) build --show-bin-path)/imago demo
	@if [ "$(DEMO_GALLERY)" = 1 ]; then \
		echo "gallery: open http://$(GALLERY_LISTEN)/gallery (Ctrl-C stops the server)"; \
		$$($(SWIFT) build --show-bin-path)/imago serve --local-root /usr/share/backgrounds --gallery --listen $(GALLERY_LISTEN); \
	fi

# Tests build every trait, URLSessionLoader (not a default) included.
TEST_TRAITS := --traits default,URLSessionLoader
test: deps peers
	$(SWIFT) build --build-tests $(TEST_TRAITS)
	@# --skip-build: `swift test` alone plans the build anew and compiled for three more minutes.
	@# At most 12 tests at once: all of them at once on 2 cores (each with its servers and peers)
	@# left some waiting their turn for over 20 s, past the deadlines of the servers they drove.
	SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=12 $(SWIFT) test --skip-build $(TEST_TRAITS)
	@# Imago alone without its traits (no disk cache, no AsyncHTTPClient or URLSession loader).
	$(SWIFT) build --target Imago --disable-default-traits --scratch-path .build-minimal
	@# docs/LIBRARY.md's install lines are a manifest that must parse.
	$(SWIFT) package --package-path Examples/Install dump-package >/dev/null

# The real servers the loader tests talk to, in a git-ignored venv: moto (an S3 API server that
# checks signatures, Tests/Peers/s3_peer.py) and boto3 to fill it; gcp-storage-emulator (GCS's API);
# libvips 8.18 with libultrahdr (pyvips-binary), the HDR gain-map reference (Tests/Peers/uhdr_reference.py); OpenCV (the
# detectors' reference); opentelemetry-proto, whose OTLP messages Tests/Peers/otlp_receiver.py decodes;
# PiDNG, which writes the DNG files the RAW tests read (Tests/Peers/make_dng.py).
PEER_PACKAGES := moto[server]==5.2.5 boto3==1.44.8 gcp-storage-emulator==2026.7.19 pyvips-binary==8.18.7 pyvips==3.2.0 opencv-python-headless==4.14.0.94 opentelemetry-proto==1.45.2 pidng==4.0.9
peers:
	@dpkg -s python3-venv >/dev/null 2>&1 || { $(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q python3-venv; }
	@[ -x .venv-peers/bin/python ] || python3 -m venv .venv-peers
	@.venv-peers/bin/python -c "import moto.server, boto3, gcp_storage_emulator, pyvips, cv2, opentelemetry.proto, pidng" 2>/dev/null || .venv-peers/bin/pip install -q $(PEER_PACKAGES)
	@# scikit-image's wheel for its sample pictures only (faces for the detectors): no dependencies.
	@[ -f .venv-peers/lib/python3*/site-packages/skimage/data/astronaut.png ] 2>/dev/null || .venv-peers/bin/pip install -q --no-deps scikit-image==0.25.2

# The thumbor parity suite: the same URLs sent to thumbor 7.8 (installed in the bench venv) and to
# imago serve --dialect thumbor; status, type, size and pixels compared. Per-URL differences go to
# .build-thumbor-parity.tsv. Then the detectors against OpenCV's own (the peers' venv). Run by
# .ci/run after `make test`.
test-thumbor: deps peers
	@dpkg -s python3-venv >/dev/null 2>&1 || { $(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q python3-venv; }
	@[ -x Benchmarks/.venv/bin/python ] || python3 -m venv Benchmarks/.venv
	@[ -x Benchmarks/.venv/bin/thumbor ] || Benchmarks/.venv/bin/pip install -q thumbor==7.8.0
	@# thumbor's detectors import OpenCV (4.x: 5.0 has no CascadeClassifier in its main module).
	@Benchmarks/.venv/bin/python -c "import cv2; cv2.CascadeClassifier" 2>/dev/null || Benchmarks/.venv/bin/pip install -q opencv-python-headless==4.14.0.94
	$(SWIFT) build --build-tests $(TEST_TRAITS)
	rm -f $(CURDIR)/.build-thumbor-parity.tsv
	IMAGO_THUMBOR=$(CURDIR)/Benchmarks/.venv/bin/thumbor IMAGO_PARITY_REPORT=$(CURDIR)/.build-thumbor-parity.tsv \
		$(SWIFT) test --skip-build $(TEST_TRAITS) --filter ThumborParity
	IMAGO_DETECTION_REFERENCE=1 $(SWIFT) test --skip-build $(TEST_TRAITS) --filter "CascadeDetectionTests|FaceDetectorTests|ImgproxyFacesTests|CLIFacesTests"

# A fleet of three `imago serve` nodes behind nginx's plain round robin (deploy/nginx-fleet.conf),
# sharing one result store: 300 requests over 100 variants, what was made and fetched where, then
# every node killed and replaced by one with an empty disk, and the same requests again.
cluster-demo: deps
	$(SWIFT) build --product imago
	IMAGO=$$($(SWIFT) build --show-bin-path)/imago deploy/fleet-demo

# The other way: two nodes behind deploy/nginx.conf (URLs hashed to nodes, nginx's cache), no shared store.
cluster-demo-hashed: deps
	$(SWIFT) build --product imago
	IMAGO=$$($(SWIFT) build --show-bin-path)/imago deploy/cluster-demo

# Documentation: the DocC catalog (Sources/Imago/Imago.docc) over Imago's symbol graph, warnings as
# errors, and every public symbol documented (scripts/doc-coverage.py). The archive lands in
# .build-docs/Imago.doccarchive.
DOCC ?= $(shell dirname $$(command -v $(SWIFT) 2>/dev/null || echo /usr/bin/swift))/docc
docs: deps
	# The graphs are written as a module compiles and rewritten whole when it compiles again, so
	# they are kept: a run with nothing to compile finds the last ones.
	rm -rf .build-docs/imago-graphs
	$(SWIFT) build --target ImagoServer --scratch-path .build-docs -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc $(CURDIR)/.build-docs/symbol-graphs
	python3 scripts/doc-coverage.py .build-docs/symbol-graphs Imago
	python3 scripts/doc-coverage.py .build-docs/symbol-graphs ImagoServer
	mkdir -p .build-docs/imago-graphs && cp .build-docs/symbol-graphs/Imago.symbols.json .build-docs/symbol-graphs/Imago@*.symbols.json .build-docs/imago-graphs/
	$(DOCC) convert Sources/Imago/Imago.docc --additional-symbol-graph-dir .build-docs/imago-graphs --output-path .build-docs/Imago.doccarchive \
		--fallback-display-name Imago --fallback-bundle-identifier org.imago.Imago --warnings-as-errors

# A package outside the project's targets that depends on Imago as an app would
# (Examples/Consumer), built from clean with each trait set (CONSUMER_TRAITS: "default", "none",
# or a comma-separated list), then run on corpus files, and over http from a local server when
# the set has a network loader. Prints each clean debug build's time and the binary's size;
# BENCHMARKS.md records them.
CONSUMER_FILES := $(CURDIR)/../shared/corpus/jpeg/video-001.jpeg $(CURDIR)/../shared/corpus/png/basn6a08.png $(CURDIR)/../shared/corpus/webp/blue-purple-pink-large.lossless.webp
CONSUMER_TRAITS ?= default none DiskCache URLSessionLoader HTTPClientLoader
consumer: deps
	@for traits in $(CONSUMER_TRAITS); do \
		dir=$$(mktemp -d); out=$$(mktemp -d); server=""; \
		case $$traits in default) unset IMAGO_TRAITS;; none) export IMAGO_TRAITS="";; *) export IMAGO_TRAITS=$$traits;; esac; \
		start=$$(date +%s.%N); \
		(cd Examples/Consumer && $(SWIFT) build --scratch-path $$dir > $$dir.log 2>&1) || { tail -30 $$dir.log; exit 1; }; \
		end=$$(date +%s.%N); \
		bin=$$dir/debug/Consumer; \
		echo "traits $$traits: clean debug build $$(echo "$$end - $$start" | bc) s, binary $$(stat -c %s $$bin) bytes"; \
		files="$(CONSUMER_FILES)"; \
		case $$traits in default|*Loader*) \
			python3 -m http.server 8765 --bind 127.0.0.1 --directory ../shared/corpus >/dev/null 2>&1 & server=$$!; sleep 1; \
			files="$$files http://127.0.0.1:8765/jpeg/video-001.progressive.jpeg";; \
		esac; \
		$$bin $$out $$files; status=$$?; \
		[ -n "$$server" ] && kill $$server; \
		rm -rf $$dir $$out; \
		[ $$status = 0 ] || exit $$status; \
	done

# Style: swift-format (in the Swift toolchain) with the project's .swift-format; any finding fails.
# `make format` rewrites the files in place.
LINT_PATHS := Package.swift Sources Tests Benchmarks/Package.swift Benchmarks/Sources/imago-bench Fuzz/imago-fuzz Examples
lint:
	$(SWIFT) format lint --strict --recursive $(LINT_PATHS)

format:
	$(SWIFT) format format --in-place --recursive $(LINT_PATHS)

# Peers: curl, tjbench (libjpeg-turbo-progs), dwebp (webp), the sqlite3 shell, vipsthumbnail
# (libvips-tools), Pillow and thumbor 7.8 in a venv under Benchmarks/, nginx (installed by deps) as
# origin and static-file peer with wrk as its client; GNU time measures the hostile-file children.
BENCH_PACKAGES := python3-venv sqlite3 libvips-tools time wrk
# `make bench BENCH_GROUPS="batch processing"` runs only those groups.
BENCH_GROUPS ?=
bench: deps
	@dpkg -s $(BENCH_PACKAGES) >/dev/null 2>&1 || { $(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q $(BENCH_PACKAGES); }
	@[ -x Benchmarks/.venv/bin/python ] || python3 -m venv Benchmarks/.venv
	@Benchmarks/.venv/bin/python -c "import PIL" 2>/dev/null || Benchmarks/.venv/bin/pip install -q pillow
	@[ -x Benchmarks/.venv/bin/thumbor ] || Benchmarks/.venv/bin/pip install -q thumbor==7.8.0
	@Benchmarks/.venv/bin/python -c "import pyvips" 2>/dev/null || Benchmarks/.venv/bin/pip install -q pyvips-binary==8.18.7 pyvips==3.2.0
	@# The faces group: OpenCV (thumbor's detectors and the detection peer) and scikit-image's pictures (its data only).
	@Benchmarks/.venv/bin/python -c "import cv2; cv2.CascadeClassifier" 2>/dev/null || Benchmarks/.venv/bin/pip install -q opencv-python-headless==4.14.0.94
	@# The raw group: PiDNG writes its DNG files (Tests/Peers/make_dng.py).
	@Benchmarks/.venv/bin/python -c "import pidng" 2>/dev/null || Benchmarks/.venv/bin/pip install -q pidng==4.0.9
	@[ -d "$$(Benchmarks/.venv/bin/python -c 'import importlib.util, os; print(os.path.dirname(importlib.util.find_spec("skimage").origin))' 2>/dev/null)/data" ] || Benchmarks/.venv/bin/pip install -q --no-deps scikit-image==0.25.2
	cd Benchmarks && $(SWIFT) build -c release --disable-build-manifest-caching && $(SWIFT) build -c release --product imago
	cd Benchmarks && IMAGO_BENCH_PYTHON=$(CURDIR)/Benchmarks/.venv/bin/python IMAGO_CLI=$$($(SWIFT) build -c release --show-bin-path)/imago \
		$$($(SWIFT) build -c release --show-bin-path)/imago-bench $(BENCH_GROUPS)

# The server's figures (Benchmarks/server_bench.py, about five minutes after the release build): hot
# at 2 and 32 connections against nginx, cold JPEG/PNG/WebP/AVIF against thumbor 7.8 with bytes and
# SSIMULACRA2, local:// against `imago thumbnail`; printed beside the previous entry, regressions
# flagged, and appended to BENCHMARKS.md. Run it before resolving anything that touches the server
# or the pipeline's decode, encode or memory paths.
bench-server: deps
	@dpkg -s $(BENCH_PACKAGES) >/dev/null 2>&1 || { $(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q $(BENCH_PACKAGES); }
	@[ -x Benchmarks/.venv/bin/python ] || python3 -m venv Benchmarks/.venv
	@Benchmarks/.venv/bin/python -c "import PIL" 2>/dev/null || Benchmarks/.venv/bin/pip install -q pillow
	@[ -x Benchmarks/.venv/bin/thumbor ] || Benchmarks/.venv/bin/pip install -q thumbor==7.8.0
	@Benchmarks/.venv/bin/python -c "import ssimulacra2, scipy" 2>/dev/null || Benchmarks/.venv/bin/pip install -q ssimulacra2==0.3.0 scipy==1.17.1
	cd Benchmarks && $(SWIFT) build -c release --product imago
	cd Benchmarks && .venv/bin/python server_bench.py $$($(SWIFT) build -c release --show-bin-path)/imago $(CURDIR)/BENCHMARKS.md --append

# Result storage (issue 61): a shared-store hit against a local-disk hit and a cold make, beside
# thumbor 7.8's file result storage hit (Benchmarks/store_bench.py, release build).
bench-store: deps
	@dpkg -s $(BENCH_PACKAGES) >/dev/null 2>&1 || { $(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q $(BENCH_PACKAGES); }
	@[ -x Benchmarks/.venv/bin/python ] || python3 -m venv Benchmarks/.venv
	@Benchmarks/.venv/bin/python -c "import PIL" 2>/dev/null || Benchmarks/.venv/bin/pip install -q pillow
	@[ -x Benchmarks/.venv/bin/thumbor ] || Benchmarks/.venv/bin/pip install -q thumbor==7.8.0
	cd Benchmarks && $(SWIFT) build -c release --product imago
	cd Benchmarks && .venv/bin/python store_bench.py $$($(SWIFT) build -c release --show-bin-path)/imago

# A day's traffic in about ten minutes (deploy/soak.py): two release `imago serve` nodes behind
# deploy/nginx.conf, a mix of hits, misses, every imgproxy option, bad signatures, slow, stalled,
# reset, missing and hostile sources, clients hanging up, one node killed and restarted on its disk
# cache. Prints statuses, p50/p99, RSS, descriptors and the cache check; JSON in .build-soak.json.
# SOAK_CGROUP_MB=256 runs each node in a 256 MB memory cgroup and fails on any OOM kill.
SOAK_SECONDS ?= 600
SOAK_CGROUP_MB ?=
soak: deps
	@dpkg -s python3-venv >/dev/null 2>&1 || { $(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q python3-venv; }
	@[ -x Benchmarks/.venv/bin/python ] || python3 -m venv Benchmarks/.venv
	@Benchmarks/.venv/bin/python -c "import PIL" 2>/dev/null || Benchmarks/.venv/bin/pip install -q pillow
	cd Benchmarks && $(SWIFT) build -c release --product imago
	SOAK_SECONDS=$(SOAK_SECONDS) SOAK_CGROUP_MB=$(SOAK_CGROUP_MB) Benchmarks/.venv/bin/python deploy/soak.py $$(cd Benchmarks && $(SWIFT) build -c release --show-bin-path)/imago .build-soak.json

# The OCI image (deploy/image/build.sh, about 2 minutes after the release build): a bookworm root made
# by mmdebstrap from Debian's archive, the release binary and the Swift runtime it links, imported into
# podman as $(IMAGE_TAG). test-image runs it under a 256 MB limit (deploy/image/test_image.py, 20 s).
IMAGE_PACKAGES := podman runc mmdebstrap
IMAGE_TAG ?= localhost/imago:latest
image: deps
	@dpkg -s $(IMAGE_PACKAGES) >/dev/null 2>&1 || { $(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q $(IMAGE_PACKAGES); }
	cd Benchmarks && $(SWIFT) build -c release --product imago
	$(SUDO) deploy/image/build.sh $$(cd Benchmarks && $(SWIFT) build -c release --show-bin-path)/imago $(IMAGE_TAG)

test-image: image
	$(SUDO) python3 deploy/image/test_image.py $(IMAGE_TAG)

# Fuzzing: libFuzzer under AddressSanitizer, FUZZ_SECONDS per harness. `imago-fuzz` holds the
# harnesses over Imago's Swift API (Fuzz/imago-fuzz/Harness.swift): decode (every decoder, limits
# and reduced scales picked by the first byte), preview (every prefix), pnm (Netpbm), bmp, tga, ico, tiff, avif, heif, jxl, gif-animation and
# webp-animation (structure-aware generators), http-freshness, http-response (bytes from a server
# through the HTTP/1.1 client's decoder, connection handler and a DataSink), data-url, process (processor chains on
# small images: the resampler's C and Swift passes), memory-cache (operation sequences checked against a
# model), color-profile (profile bytes through Little CMS under its memory limit, applied to a small image),
# object-store (the stores' error documents, AWS credentials files, GCS keys and their JWT, s3:// and gs:// URLs,
# proxy variables with no_proxy, a proxy's answer to CONNECT), result-store (a shared store's objects as they
# come back: whole, the key asked for, the checksum). fuzz-jpeg-dc fuzzes the
# DC-only JPEG decoder's C directly (ASan and UBSan). Corpora grow in .build-fuzz/corpus/NAME;
# a crash lands in .build-fuzz/findings/NAME/ and belongs in Tests/Hostile (see its README).
FUZZ_SECONDS ?= 300
FUZZ_TARGETS := decode preview pnm bmp tga ico writers tiff avif heif jxl video raw pdfinfo ranged-source gif-animation webp-animation http-freshness http-response data-url process memory-cache color-profile svg imgproxy-options thumbor-url thumbor-conf dotenv placeholder object-store result-store gain-map cascade
FUZZ_FLAGS := --scratch-path .build-fuzz --product imago-fuzz -Xswiftc -sanitize=fuzzer,address \
	-Xswiftc -parse-as-library -Xswiftc -DIMAGO_FUZZ -Xcc -fsanitize=fuzzer-no-link,address
fuzz-build: deps
	$(SWIFT) build $(FUZZ_FLAGS)

fuzz: fuzz-build fuzz-jpeg-dc
	Fuzz/run.sh $$($(SWIFT) build $(FUZZ_FLAGS) --show-bin-path)/imago-fuzz $(FUZZ_TARGETS)

# The DC-only JPEG decoder's C, with libFuzzer, ASan and UBSan, seeded with the corpus JPEGs.
fuzz-jpeg-dc: deps
	mkdir -p .build-fuzz/jpeg-dc/corpus
	cp ../shared/corpus/jpeg/*.jpeg .build-fuzz/jpeg-dc/corpus/
	clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -fuse-ld=lld \
		-ISources/CJPEGDC/include Fuzz/jpeg_dc_fuzz.c Sources/CJPEGDC/jpeg_dc.c -lturbojpeg -o .build-fuzz/jpeg-dc/fuzz
	cd .build-fuzz/jpeg-dc && ./fuzz -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -print_final_stats=1 corpus 2>&1 | grep -E "^stat::|ERROR|SUMMARY|DONE" || true
	@if ls .build-fuzz/jpeg-dc/crash-* >/dev/null 2>&1; then echo "findings in .build-fuzz/jpeg-dc"; exit 1; fi

# The whole test suite under AddressSanitizer (with UBSan for the C targets), then under
# ThreadSanitizer; each in its own scratch path. Leak detection is off: Swift keeps enum tags in a
# pointer's spare bits, which hides live references from LeakSanitizer, and what it reports at
# exit is test fixtures, NIO and XCTest singletons (see BENCHMARKS.md, "Robustness"). Both run the
# tests one at a time (TSan 3.3 min on two cores): all at once, a server request taking 12 ms alone
# waited 46–65 s for a thread and network tests beside it timed out (ASan too: 50 such time-limit
# failures on 2026-11-26, none alone); each test's own threads still race under it.
# With -sanitize=thread, Swift 6.3's region checking refuses swift-otel 1.6
# (OTelBatchLogRecordProcessor.swift: "sending 'logger' risks causing data races"), which the plain
# build accepts. The TSan build compiles in Swift 5 mode, where that is a warning, with every
# feature Swift 6 turns on (`swiftc -print-supported-features`): the same program, Swift 6's
# semantics. Without them it is another program: Swift 5's backward scan gives an unlabeled
# trailing closure of `imageTask(with:)` to `preview:`, not `completion:`. The plain build, which
# `make test` and CI run, keeps every module's own Swift 6 checking.
SWIFT6_FEATURES := ConciseMagicFile ForwardTrailingClosures StrictConcurrency BareSlashRegexLiterals DeprecateApplicationMain ImportObjcForwardDeclarations DisableOutwardActorInference IsolatedDefaultValues GlobalConcurrency InferSendableFromCaptures ImplicitOpenExistentials RegionBasedIsolation DynamicActorIsolation NonfrozenEnumExhaustivity GlobalActorIsolatedTypesUsability
TSAN_SWIFTC := -Xswiftc -DIMAGO_THREAD_SANITIZER -Xswiftc -swift-version -Xswiftc 5 $(foreach feature,$(SWIFT6_FEATURES),-Xswiftc -enable-upcoming-feature -Xswiftc $(feature))

sanitize: deps
	$(SWIFT) build --build-tests $(TEST_TRAITS) --scratch-path .build-asan --sanitize=address -Xcc -fsanitize=undefined
	ASAN_OPTIONS=detect_leaks=0 $(SWIFT) test --skip-build $(TEST_TRAITS) --no-parallel --scratch-path .build-asan --sanitize=address -Xcc -fsanitize=undefined
	$(SWIFT) build --build-tests $(TEST_TRAITS) --scratch-path .build-tsan --sanitize=thread $(TSAN_SWIFTC)
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" $(SWIFT) test --skip-build $(TEST_TRAITS) --no-parallel --scratch-path .build-tsan --sanitize=thread $(TSAN_SWIFTC)

# `imago placeholder` against thumbhash-rs and blurhash-python (fed by Pillow) on the wallpapers.
bench-placeholder: deps
	@[ -x Benchmarks/.venv/bin/python ] || python3 -m venv Benchmarks/.venv
	@Benchmarks/.venv/bin/python -c "import PIL, thumbhash, blurhash" 2>/dev/null || Benchmarks/.venv/bin/pip install -q pillow thumbhash-rs==0.1.0 blurhash-python==1.2.2
	cd Benchmarks && $(SWIFT) build -c release --disable-build-manifest-caching --product imago
	Benchmarks/.venv/bin/python Benchmarks/placeholder_bench.py $$(cd Benchmarks && $(SWIFT) build -c release --show-bin-path)/imago

clean:
	rm -rf .build .build-fuzz .build-asan .build-tsan Benchmarks/.build

