# cyclescope build.  make | make test | make asan | make tsan | make valgrind
#                    make lint | make fuzz | make bench | make bench-scale | make stress | make demo | make clean
# Knobs: SAN=address,undefined  O=-O0  BUILD=dir  CC=clang  WERROR=1  V=1
CC      ?= cc
O       ?= -O2
BUILD   ?= build
STD     := -std=c11 -D_POSIX_C_SOURCE=200809L
WARN    := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
           -Wmissing-prototypes -Wformat=2 -Wundef -Wnull-dereference \
           -Wdouble-promotion -Wno-unused-parameter
ifdef WERROR
WARN    += -Werror
endif
PKGS    := sqlite3 libzstd libmicrohttpd zlib libcurl libsystemd yajl
INC     := -Istore -Isim-bridge -Iweb -Idaemon -Icollector
CFLAGS  := $(STD) $(WARN) $(O) -g -fno-omit-frame-pointer -fPIC $(INC) \
           $(shell pkg-config --cflags $(PKGS)) $(EXTRA_CFLAGS)
# libcurl: its header only; daemon/ship.c loads it when shipping (dlopen),
# so the 25 libraries it brings do not slow every command's start.
LDLIBS  := $(shell pkg-config --libs $(filter-out libcurl,$(PKGS))) -lm -lpthread -ldl -l:libstdc++.a
# One C++ file: store/dtoa.cc wraps Dragonbox (Debian's libdragonbox-dev,
# header-only) for shortest double formatting. No exceptions, no RTTI: the
# object needs nothing from libstdc++.
ifeq ($(origin CXX),default)
CXX     := $(if $(findstring clang,$(CC)),clang++,c++)
endif
DRAGONBOX_INC := $(firstword $(wildcard /usr/include/dragonbox-*))
CXXFLAGS := -std=c++17 -Wall -Wextra $(if $(WERROR),-Werror) $(O) -g -fno-omit-frame-pointer \
            -fPIC -fno-exceptions -fno-rtti -Istore -isystem $(DRAGONBOX_INC) $(EXTRA_CFLAGS)
ifdef SAN
CFLAGS  += -fsanitize=$(SAN) -fno-sanitize-recover=all
CXXFLAGS += -fsanitize=$(SAN) -fno-sanitize-recover=all
LDFLAGS += -fsanitize=$(SAN)
endif
Q       := $(if $(V),,@)
MAKEFLAGS += --no-print-directory

STORE_SRC := $(filter-out store/series_ext.c,$(wildcard store/*.c))
STORE_CXX := $(wildcard store/*.cc)
# The collector's CUDA-free half (pipeline, patterns) is ordinary code;
# the CUPTI half (COLL_CUPTI_SRC) is built only into the injection library.
COLL_CUPTI_SRC := collector/catalog.c collector/cupti_source.c collector/hooks.c \
                  collector/inject.c
COLL_SRC  := $(filter-out $(COLL_CUPTI_SRC),$(wildcard collector/*.c))
LIB_SRC   := $(STORE_SRC) $(wildcard sim-bridge/*.c) $(wildcard web/*.c) \
             $(COLL_SRC) $(filter-out daemon/main.c,$(wildcard daemon/*.c))
# The UI's files (web/ui/) are compiled in as byte arrays.
UI_FILES  := web/ui/index.html $(sort $(wildcard web/ui/*.js)) web/ui/app.css web/ui/favicon.svg
UI_OBJ    := $(BUILD)/gen/ui_files.o
LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/%.o) $(STORE_CXX:%.cc=$(BUILD)/%.o) $(UI_OBJ)
EXT_SRC   := store/series.c store/series_ext.c store/chunk.c store/rans.c store/blobcache.c store/buf.c
EXT_OBJ   := $(EXT_SRC:%.c=$(BUILD)/ext/%.o)
TEST_SRC  := $(wildcard tests/unit/test_*.c)
TESTS     := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
BENCH     := $(BUILD)/tests/bench_store
FUZZ_SRC  := $(wildcard tests/fuzz/fuzz_*.c)

# CUDA: from $CUDA_HOME, else from nvcc on PATH. Without it everything but
# the injection library builds.
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(realpath $(shell command -v nvcc 2>/dev/null)))
CUPTI_H   := $(firstword $(wildcard $(CUDA_HOME)/include/cupti.h \
               $(CUDA_HOME)/extras/CUPTI/include/cupti.h))
CUPTI_LIB := $(firstword $(wildcard $(CUDA_HOME)/lib64/libcupti.so \
               $(CUDA_HOME)/lib/libcupti.so $(CUDA_HOME)/targets/x86_64-linux/lib/libcupti.so \
               $(CUDA_HOME)/extras/CUPTI/lib64/libcupti.so))
ifneq ($(and $(CUPTI_H),$(CUPTI_LIB)),)
COLLECTOR     := $(BUILD)/libcyclescope_collector.so
CUPTI_LIBDIR  := $(patsubst %/,%,$(dir $(CUPTI_LIB)))
# cupti_profiler_host.h includes <string>: collector/compat has an empty one.
# {X_STRUCT_SIZE} initialisers are CUPTI's convention (the rest zeroed).
CUPTI_CFLAGS  := -Wno-missing-field-initializers -isystem $(dir $(CUPTI_H)) -isystem $(CUDA_HOME)/include -isystem collector/compat
COLL_OBJ      := $(COLL_CUPTI_SRC:%.c=$(BUILD)/%.o)
endif

# Browser-side libraries (uPlot) from npm into the build tree, for the
# report and the UI; skipped, with the rest still built, where npm is not.
NPM        := $(shell command -v npm 2>/dev/null)
UPLOT      := $(BUILD)/web-assets/node_modules/uplot/dist/uPlot.iife.min.js
ifneq ($(NPM),)
WEB_ASSETS := $(UPLOT)
endif

# The browser tests' driver (playwright-core, for Debian's Chromium) from
# npm into the build tree; tests/ui.sh skips without it.
PW_CORE    := $(BUILD)/test-node/node_modules/playwright-core/package.json
ifneq ($(NPM),)
TEST_NODE  := $(PW_CORE)
endif

all: $(BUILD)/cyclescope $(BUILD)/cyclescope_series.so $(COLLECTOR) $(WEB_ASSETS)

web-assets: $(UPLOT)

$(UPLOT): web/assets/package.json web/assets/package-lock.json
	@mkdir -p $(BUILD)/web-assets
	@cp web/assets/package.json web/assets/package-lock.json $(BUILD)/web-assets/
	$(if $(Q),@echo "  NPM     uplot")
	$(Q)cd $(BUILD)/web-assets && npm ci --no-audit --no-fund --silent
	@touch $@

$(PW_CORE): tests/browser/package.json tests/browser/package-lock.json
	@mkdir -p $(BUILD)/test-node
	@cp tests/browser/package.json tests/browser/package-lock.json $(BUILD)/test-node/
	$(if $(Q),@echo "  NPM     playwright-core")
	$(Q)cd $(BUILD)/test-node && npm ci --no-audit --no-fund --silent
	@touch $@

$(COLL_OBJ): $(BUILD)/collector/%.o: collector/%.c
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC [cuda] $<")
	$(Q)$(CC) $(CFLAGS) $(CUPTI_CFLAGS) -MMD -MP -c $< -o $@

# The injection library: CUPTI glue, the pipeline, the store. Only
# InitializeInjection and the catalog are exported (exports.map).
$(COLLECTOR): $(COLL_OBJ) $(STORE_SRC:%.c=$(BUILD)/%.o) $(STORE_CXX:%.cc=$(BUILD)/%.o) $(COLL_SRC:%.c=$(BUILD)/%.o) collector/exports.map
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -shared -Wl,--version-script=collector/exports.map -Wl,-Bsymbolic \
		-Wl,-z,defs $(filter %.o,$^) -L$(CUPTI_LIBDIR) -Wl,-rpath,$(CUPTI_LIBDIR) \
		-lcupti -lnvperf_host $(shell pkg-config --libs sqlite3 libzstd) -lm -lpthread -ldl -o $@

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/%.o: %.cc
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CXX     $<")
	$(Q)$(CXX) $(CXXFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/gen/ui_files.c: $(UI_FILES) web/ui/embed.sh
	@mkdir -p $(@D)
	$(Q)sh web/ui/embed.sh $(UI_FILES) > $@.tmp && mv $@.tmp $@

$(UI_OBJ): $(BUILD)/gen/ui_files.c web/ui.h
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/ext/%.o: %.c
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC [ext] $<")
	$(Q)$(CC) $(CFLAGS) -DCS_SQLITE_EXT -MMD -MP -c $< -o $@

$(BUILD)/libcyclescope.a: $(LIB_OBJ)
	$(Q)rm -f $@
	$(Q)ar rcs $@ $^

$(BUILD)/cyclescope: $(BUILD)/daemon/main.o $(BUILD)/libcyclescope.a
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# The sqlite3 shell loads this; it links zstd but not SQLite itself.
$(BUILD)/cyclescope_series.so: $(EXT_OBJ)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -shared $^ $(shell pkg-config --libs libzstd) -lm -o $@

# Test seams (the replay PM source) live with the tests, not the product.
SEAM_OBJ  := $(BUILD)/tests/tools/replay_source.o

$(BUILD)/tests/%: tests/unit/%.c tests/unit/testutil.h $(BUILD)/libcyclescope.a $(SEAM_OBJ)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -Itests/unit -Itests/tools $(LDFLAGS) $< $(SEAM_OBJ) \
		$(BUILD)/libcyclescope.a $(LDLIBS) -lcmocka -o $@

$(BUILD)/tests/replay_run: tests/tools/replay_run.c $(SEAM_OBJ) $(BUILD)/libcyclescope.a
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Itests/tools $(LDFLAGS) $< $(SEAM_OBJ) $(BUILD)/libcyclescope.a $(LDLIBS) -o $@

$(BUILD)/tests/inject: tests/tools/inject.c
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< -ldl -o $@

# Evaluates a saved PM-sampling recording through CUPTI's host API alone
# (tests/collector.sh); built where the collector is.
$(BUILD)/tests/pm_eval: tests/tools/pm_eval.c
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(CUPTI_CFLAGS) $(LDFLAGS) $< -L$(CUPTI_LIBDIR) -Wl,-rpath,$(CUPTI_LIBDIR) \
		-lcupti -o $@

$(BUILD)/tests/produce: tests/tools/produce.c $(BUILD)/libcyclescope.a
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< $(BUILD)/libcyclescope.a $(LDLIBS) -o $@

$(BENCH): tests/bench/bench_store.c $(BUILD)/libcyclescope.a
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< $(BUILD)/libcyclescope.a $(LDLIBS) -o $@

$(BUILD)/tests/bench_armed: tests/bench/bench_armed.c $(BUILD)/libcyclescope.a
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Icollector $(LDFLAGS) $< $(BUILD)/libcyclescope.a $(LDLIBS) -o $@

$(BUILD)/tests/bench_scale: tests/bench/bench_scale.c $(BUILD)/libcyclescope.a
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< $(BUILD)/libcyclescope.a $(LDLIBS) -o $@

$(BUILD)/tests/http_load: tests/bench/http_load.c
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< -lcurl -lpthread -o $@

# Every test binary, then the CLI end-to-end script. Prints one
# "N passed, N failed" line at the end.
TOOLS     := $(BUILD)/tests/produce $(BUILD)/tests/replay_run $(BUILD)/tests/inject \
	     $(if $(COLLECTOR),$(BUILD)/tests/pm_eval)

test: all $(TESTS) $(TOOLS) $(TEST_NODE)
	@CS_BUILD=$(BUILD) CS_SAN=$(SAN) sh tests/run-tests.sh $(TESTS)

check: test

# libcupti's own start-up allocations are never freed: not ours to report.
asan:
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp $(MAKE) BUILD=build-asan SAN=address,undefined O=-O1 test

tsan:
	$(MAKE) BUILD=build-tsan SAN=thread O=-O1 test

valgrind:
	$(MAKE) BUILD=build-vg O=-O0 all $(TESTS:$(BUILD)/%=build-vg/%) $(TOOLS:$(BUILD)/%=build-vg/%)
	@CS_BUILD=build-vg CS_WRAP="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite" \
		sh tests/run-tests.sh $(TESTS:$(BUILD)/%=build-vg/%)

# Each part also writes its figures (name, best, median, unit, goal) to
# figures.txt; the run ends with them beside the previous run's, kept in
# $(BUILD)/bench-previous.txt, so a regression shows.
bench: $(BENCH) all $(BUILD)/tests/produce $(BUILD)/tests/http_load $(BUILD)/tests/bench_armed
	@rm -rf $(BUILD)/bench && mkdir -p $(BUILD)/bench
	BENCH_FIGURES=$(BUILD)/bench/figures.txt $(BENCH) --cli $(BUILD)/cyclescope --dir $(BUILD)/bench $(BENCH_ARGS)
	@BENCH_FIGURES=$(BUILD)/bench/figures.txt sh tests/bench/bench_daemon.sh $(BUILD) $(BUILD)/bench
	@BENCH_FIGURES=$(BUILD)/bench/figures.txt sh tests/bench/bench_clickhouse.sh $(BUILD) $(BUILD)/bench
	@BENCH_FIGURES=$(BUILD)/bench/figures.txt sh tests/bench/bench_shapes.sh $(BUILD) $(BUILD)/bench
	@BENCH_FIGURES=$(BUILD)/bench/figures.txt sh tests/bench/bench_import.sh $(BUILD) $(BUILD)/bench
	@BENCH_FIGURES=$(BUILD)/bench/figures.txt sh tests/bench/bench_jobs.sh $(BUILD) $(BUILD)/bench
	@BENCH_FIGURES=$(BUILD)/bench/figures.txt sh tests/bench/bench_suite.sh $(BUILD) $(BUILD)/bench
	@BENCH_FIGURES=$(BUILD)/bench/figures.txt sh tests/bench/bench_ship.sh $(BUILD) $(BUILD)/bench
	@$(BUILD)/tests/bench_armed | tee -a $(BUILD)/bench/figures.txt
	@python3 tests/bench/figures.py $(BUILD)/bench/figures.txt $(BUILD)/bench-previous.txt
	@cp $(BUILD)/bench/figures.txt $(BUILD)/bench-previous.txt
	@rm -rf $(BUILD)/bench

# How costs grow with metrics and run length, warm and cold (about 4
# minutes here); figures kept in $(BUILD)/bench-scale-previous.txt.
bench-scale: all $(BUILD)/tests/bench_scale
	@rm -rf $(BUILD)/bench-scale && mkdir -p $(BUILD)/bench-scale
	@sh tests/bench/bench_scale.sh $(BUILD) $(BUILD)/bench-scale $(BUILD)/bench-scale/figures.txt
	@python3 tests/bench/figures.py $(BUILD)/bench-scale/figures.txt $(BUILD)/bench-scale-previous.txt
	@cp $(BUILD)/bench-scale/figures.txt $(BUILD)/bench-scale-previous.txt
	@rm -rf $(BUILD)/bench-scale

# The standing reliability test at its long size (make test runs it small):
# 6 producers, 10 daemon SIGKILLs, slow clients and query bombs, disk full.
stress: all $(BUILD)/tests/produce
	STRESS=long sh tests/stress.sh $(BUILD)

# Quick start: install what is missing, build, import the example into
# ./cyclescope.db and show it.
setup:
	@sh .ci/install-deps

demo: setup
	@$(MAKE) -s --no-print-directory all
	@sh tests/demo.sh $(BUILD)

# The GPU check, built here into one folder that runs on a bare, offline
# GPU machine (tests/gpu/README.md): `make gpu-bundle`, carry
# $(BUILD)/gpu-bundle there, `sh gpu-bundle/run.sh OUT`.
gpu-bundle: all
	@sh tests/gpu/bundle.sh $(BUILD)

# An installed copy finds what it needs beside itself: the collector in
# PREFIX/lib/cyclescope, uPlot and the metric sets in PREFIX/share/cyclescope.
# `make install DESTDIR=/tmp/root PREFIX=/usr` for a package's tree.
PREFIX  ?= /usr/local
DESTDIR ?=
IDIR     = $(DESTDIR)$(PREFIX)
# systemd's unit directory: under PREFIX, or Debian 12's /lib/systemd/system
# (make deb), where dh_installsystemd finds it.
UNITDIR ?= $(PREFIX)/lib/systemd/system
install: all
	install -d $(IDIR)/bin $(IDIR)/lib/cyclescope $(IDIR)/share/cyclescope/metric-sets \
		$(IDIR)/share/cyclescope/metric-maps $(DESTDIR)$(UNITDIR) $(IDIR)/lib/sysusers.d \
		$(IDIR)/lib/tmpfiles.d $(IDIR)/share/bash-completion/completions
	install -m 755 $(BUILD)/cyclescope $(IDIR)/bin/cyclescope
	install -m 644 $(BUILD)/cyclescope_series.so $(IDIR)/lib/cyclescope/cyclescope_series.so
	$(if $(COLLECTOR),install -m 644 $(COLLECTOR) $(IDIR)/lib/cyclescope/libcyclescope_collector.so)
	install -m 644 configs/metric-sets/*.txt $(IDIR)/share/cyclescope/metric-sets/
	install -m 644 configs/metric-maps/*.map $(IDIR)/share/cyclescope/metric-maps/
	install -m 644 configs/cyclescope.conf $(IDIR)/share/cyclescope/cyclescope.conf
	sed 's|/usr/local|$(PREFIX)|g' configs/cyclescope.service >$(DESTDIR)$(UNITDIR)/cyclescope.service
	install -m 644 configs/cyclescope.sysusers $(IDIR)/lib/sysusers.d/cyclescope.conf
	install -m 644 configs/cyclescope.tmpfiles $(IDIR)/lib/tmpfiles.d/cyclescope.conf
	$(BUILD)/cyclescope completion bash >$(IDIR)/share/bash-completion/completions/cyclescope
	$(MAKE) -s man MANDIR=$(IDIR)/share/man/man1
	$(if $(WEB_ASSETS),install -d $(IDIR)/share/cyclescope/web-assets/node_modules/uplot/dist && \
		install -m 644 $(dir $(UPLOT))uPlot.iife.min.js $(dir $(UPLOT))uPlot.min.css \
		$(IDIR)/share/cyclescope/web-assets/node_modules/uplot/dist/)

# Man pages, cyclescope(1) and cyclescope-COMMAND(1), made from the --help
# texts themselves (cyclescope help --man), so they cannot drift from them.
MANDIR ?= $(BUILD)/man
man: $(BUILD)/cyclescope
	@mkdir -p $(MANDIR)
	@$(BUILD)/cyclescope help --man >$(MANDIR)/cyclescope.1
	@for c in $$($(BUILD)/cyclescope --help | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p'); do \
		$(BUILD)/cyclescope help --man $$c >$(MANDIR)/cyclescope-$$c.1; done

uninstall:
	rm -f $(IDIR)/share/man/man1/cyclescope.1 $(IDIR)/share/man/man1/cyclescope-*.1
	rm -f $(IDIR)/bin/cyclescope $(DESTDIR)$(UNITDIR)/cyclescope.service \
		$(IDIR)/lib/sysusers.d/cyclescope.conf $(IDIR)/lib/tmpfiles.d/cyclescope.conf \
		$(IDIR)/share/bash-completion/completions/cyclescope
	rm -rf $(IDIR)/lib/cyclescope $(IDIR)/share/cyclescope

# The Debian package, $(BUILD)/cyclescope_VERSION_ARCH.deb: debhelper
# (configs/debian) over `make install PREFIX=/usr` of this build, run from
# a copy of configs/debian in $(BUILD)/deb (dh writes into its debian/).
# The version is CS_VERSION (daemon/cli.h); configs/debian/changelog must
# have an entry for it. tests/deb-smoke.sh checks the installed package.
CS_VERSION = $(shell sed -n 's/^\#define CS_VERSION "\(.*\)"/\1/p' daemon/cli.h)
deb: all
	@v=$$(dpkg-parsechangelog -l configs/debian/changelog -S Version) && [ "$$v" = "$(CS_VERSION)" ] || \
		{ echo "configs/debian/changelog's version is $$v, CS_VERSION is $(CS_VERSION): add a changelog entry" >&2; exit 1; }
	@rm -rf $(BUILD)/deb $(BUILD)/cyclescope_*.deb && mkdir -p $(BUILD)/deb/src
	@cp -r configs/debian $(BUILD)/deb/src/debian
	$(if $(Q),@echo "  DEB     $(BUILD)/cyclescope_$(CS_VERSION)_$$(dpkg --print-architecture).deb")
	$(Q)cd $(BUILD)/deb/src && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL CS_TOP=$(CURDIR) \
		CS_BUILD=$(abspath $(BUILD)) dpkg-buildpackage -b -us -uc >../build.log 2>&1 || \
		{ tail -n 30 ../build.log >&2; echo "make deb: failed, whole log in $(BUILD)/deb/build.log" >&2; exit 1; }
	@mv $(BUILD)/deb/cyclescope_$(CS_VERSION)_*.deb $(BUILD)/

# Only where a GPU is. OUT: where the table, logs and databases go.
OUT ?= $(BUILD)/gpu-check
gpu-check: gpu-bundle
	@sh $(BUILD)/gpu-bundle/run.sh $(OUT)

lint:
	cppcheck --quiet --enable=warning,performance,portability --error-exitcode=1 \
		--inline-suppr --suppress=missingIncludeSystem $(INC) \
		store sim-bridge web daemon collector
	clang-tidy --quiet $(LIB_SRC) daemon/main.c -- $(STD) $(INC) \
		$(shell pkg-config --cflags $(PKGS))

# libFuzzer targets (clang). FUZZ_SECONDS per target; FUZZ=name runs one;
# FUZZ_SEED fixes the mutations' sequence (CI repeats a known exploration;
# FUZZ_SEED=0 draws one).
# The store, the bridge and the HTTP side (fuzz_http serves on loopback)
# are compiled once per run, instrumented, into build-fuzz/lib.a.
FUZZ_SECONDS ?= 30
FUZZ_SEED ?= 1
FUZZ_LIB_SRC := $(STORE_SRC) $(wildcard sim-bridge/*.c) $(wildcard web/*.c) $(BUILD)/gen/ui_files.c
fuzz: $(BUILD)/gen/ui_files.c
	@rm -rf build-fuzz/obj && mkdir -p build-fuzz/obj
	@set -e; for f in $(FUZZ_LIB_SRC); do \
		o=build-fuzz/obj/$$(echo $$f | tr / _).o; \
		clang $(STD) -g -O1 -fsanitize=fuzzer-no-link,address,undefined \
			-fno-sanitize-recover=all $(INC) -I$(BUILD)/gen $$(pkg-config --cflags $(PKGS)) -c $$f -o $$o; \
	done; for f in $(STORE_CXX); do \
		clang++ -std=c++17 -g -O1 -fno-exceptions -fno-rtti -fsanitize=fuzzer-no-link,address,undefined \
			-fno-sanitize-recover=all -Istore -isystem $(DRAGONBOX_INC) -c $$f \
			-o build-fuzz/obj/$$(echo $$f | tr / _).o; \
	done; rm -f build-fuzz/lib.a; ar rcs build-fuzz/lib.a build-fuzz/obj/*.o
	@set -e; for f in $(if $(FUZZ),tests/fuzz/$(FUZZ).c,$(FUZZ_SRC)); do \
		n=$$(basename $$f .c); \
		clang $(STD) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $(INC) \
			$$f build-fuzz/lib.a \
			$$(pkg-config --cflags --libs $(PKGS)) -lm -lpthread -l:libstdc++.a -o build-fuzz/$$n; \
		mkdir -p build-fuzz/corpus-$$n; \
		echo "== $$n ($(FUZZ_SECONDS)s)"; \
		build-fuzz/$$n -max_total_time=$(FUZZ_SECONDS) -seed=$(FUZZ_SEED) -max_len=65536 \
			build-fuzz/corpus-$$n tests/fuzz/corpus/$$n; \
	done

format:
	clang-format -i $(wildcard */*.[ch] tests/*/*.[ch])

clean:
	rm -rf build build-*

-include $(shell find $(BUILD) -name '*.d' -type f 2>/dev/null)
.PHONY: all test check asan tsan valgrind bench bench-scale stress man setup demo lint fuzz format clean gpu-check gpu-bundle web-assets install uninstall deb
.SECONDARY:
