# Imago: `make demo` runs the demo, `make test` the tests. Each installs what is missing first.
SWIFT ?= swift
# Debian packages: the codec libraries the build links (TurboJPEG, libspng, libwebp, giflib), SQLite and
# the xxHash headers for the disk cache; tools the
# tests use to make or check images (exiftool, webp's dwebp/img2webp, gifsicle, libjpeg-turbo's cjpeg);
# curl (benchmark peer);
# ukui-wallpapers (large sample photos for the demo and benchmarks).
APT_PACKAGES := pkg-config libturbojpeg0-dev libspng-dev libwebp-dev libgif-dev libsqlite3-dev libxxhash-dev libimage-exiftool-perl webp gifsicle libjpeg-turbo-progs curl ukui-wallpapers
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps build demo test bench fuzz-jpeg-dc clean

deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		$(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q $$missing; \
	fi
	@command -v $(SWIFT) >/dev/null || { echo "Swift 6.1 or later is needed: https://swift.org/install"; exit 1; }

build: deps
	$(SWIFT) build

demo: deps
	$(SWIFT) build --product imago
	$$($(SWIFT) build --show-bin-path)/imago demo

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test

# Peers: curl, tjbench (libjpeg-turbo-progs), dwebp (webp), the sqlite3 shell, vipsthumbnail
# (libvips-tools), Pillow in a venv under Benchmarks/.
BENCH_PACKAGES := python3-venv sqlite3 libvips-tools
bench: deps
	@dpkg -s $(BENCH_PACKAGES) >/dev/null 2>&1 || { $(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q $(BENCH_PACKAGES); }
	@[ -x Benchmarks/.venv/bin/python ] || python3 -m venv Benchmarks/.venv
	@Benchmarks/.venv/bin/python -c "import PIL" 2>/dev/null || Benchmarks/.venv/bin/pip install -q pillow
	cd Benchmarks && $(SWIFT) build -c release
	cd Benchmarks && IMAGO_BENCH_PYTHON=$(CURDIR)/Benchmarks/.venv/bin/python $$($(SWIFT) build -c release --show-bin-path)/imago-bench

# Fuzzes Imago's own C code, the DC-only JPEG decoder, with libFuzzer under ASan and UBSan (the
# Swift toolchain's clang), seeded with the corpus JPEGs; FUZZ_SECONDS long. Findings land in
# .build/fuzz-jpeg-dc/.
FUZZ_SECONDS ?= 300
fuzz-jpeg-dc: deps
	mkdir -p .build/fuzz-jpeg-dc/corpus
	cp ../shared/corpus/jpeg/*.jpeg .build/fuzz-jpeg-dc/corpus/
	clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -fuse-ld=lld \
		-ISources/CJPEGDC/include Fuzz/jpeg_dc_fuzz.c Sources/CJPEGDC/jpeg_dc.c -lturbojpeg -o .build/fuzz-jpeg-dc/fuzz
	cd .build/fuzz-jpeg-dc && ./fuzz -max_total_time=$(FUZZ_SECONDS) -max_len=65536 corpus

clean:
	rm -rf .build Benchmarks/.build
