# tunedeck — one Makefile: build, deps, run, test, bench, clean.
# Sources are found by folder, so a new module is a new file, never a Makefile edit.

CC      ?= cc
BUILD   ?= build
CFLAGS  ?= -O2 -g
SAN     ?=
# Where the binary finds data/, themes/ and examples/ when run from the build tree;
# TUNEDECK_HOME overrides it at run time (mk/source_dir.mk).
include mk/source_dir.mk
CFLAGS  += $(SOURCE_DIR_FLAG)
# gcc's -Wformat-truncation flags every deliberate snprintf cut; clang has no such option.
WNO_TRUNC := $(shell $(CC) -Werror -Wno-format-truncation -E -x c /dev/null >/dev/null 2>&1 \
               && echo -Wno-format-truncation)
CFLAGS  += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $(WNO_TRUNC) -I. -I/usr/include/cjson $(SAN)
# Header dependencies (.d beside each object). An object is named build/x.o by a plain make
# and /abs/build/x.o by a script that passes an absolute BUILD (tests/integration/optbench.sh):
# to make those are two targets, so each .d names both, or a header change would leave the
# other spelling's objects stale.
DEPFLAGS = -MMD -MP -MT $(abspath $@) -MT $(patsubst $(CURDIR)/%,%,$(abspath $@))
LDFLAGS += $(SAN)

# Quiet by default in the style of Redis and htop: one 'CC file' / 'LINK name' line per
# step, so a warning stands out; 'make V=1' prints every full command line, 'make -s'
# prints nothing.
ifeq ($(V),1)
  say :=
else ifneq ($(findstring s,$(firstword -$(MAKEFLAGS))),)
  say = @
else
  say = @printf '  %-5s %s\n' $(1) $(2);
endif

LIBS_CORE   = -lgsl -lopenblas -lcjson -lm -lpthread
LIBS_REMOTE = -lssh
LIBS_TUI    = -lncursesw -ltinfo

obj = $(patsubst %.c,$(BUILD)/%.o,$(1))
# Each layer is a folder tree (docs/architecture.md): every .c under it belongs to it.
srcs = $(sort $(shell find $(1) -name '*.c' 2>/dev/null))
CORE_OBJ   := $(call obj,$(call srcs,core))
REMOTE_OBJ := $(call obj,$(call srcs,remote))
TUI_OBJ    := $(call obj,$(call srcs,tui))
CMD_OBJ    := $(call obj,$(call srcs,cmd))
# The reference workload's own code links only into tunedeck-worker and the tests.
WORKER_OBJ := $(call obj,$(call srcs,tools/worker))
TEST_OBJ   := $(call obj,$(sort $(shell find tests/core tests/remote tests/tui tests/tools tests/cmd -name 'test_*.c')))
# cmd/'s shared flag parser, table rows, session summary, live run's end, tune's words for
# an interrupted trial and hosts' note of GPUs in error (not main, nor a command), which
# tests/cmd tests.
TEST_OBJ   += $(BUILD)/cmd/flags.o $(BUILD)/cmd/table_row.o $(BUILD)/cmd/session_summary.o \
              $(BUILD)/cmd/live_end.o $(BUILD)/cmd/tune_interrupted.o $(BUILD)/cmd/gpu_errors.o
# The old, whole reading of a journal, bench/sessionlist's baseline, that the summary's test
# holds the one pass to (bench/args/journalwhole.h).
TEST_OBJ   += $(BUILD)/bench/args/journalwhole.o
# Helpers the unit tests share (fixtures, the low-memory child).
TEST_OBJ   += $(call obj,$(call srcs,tests/support))
TOOL_SRC   := $(wildcard tools/*.c)
TOOLS      := $(patsubst tools/%.c,$(BUILD)/%,$(TOOL_SRC))
BENCH_SRC  := $(wildcard bench/*.c)
BENCHES    := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))
LIB_OBJ    := $(TUI_OBJ) $(REMOTE_OBJ) $(CORE_OBJ)
# The tail of every benchmark's option parsing (bench/args/benchargs.h), linked into each.
BENCH_ARGS_OBJ := $(call obj,$(call srcs,bench/args))
LIBS_ALL   := $(LIBS_TUI) $(LIBS_REMOTE) $(LIBS_CORE)
# The objects whose sources name TUNEDECK_SOURCE_DIR hold this folder's path: rebuilt when the
# tree moves (mk/source_dir.mk). The fuzz tree has a stamp of its own (tests/fuzz/fuzz.mk).
SOURCE_DIR_STAMP := $(BUILD)/source-dir
SOURCE_DIR_OBJ   := $(call obj,$(filter-out tests/fuzz/%,$(call source_dir_users,cmd core \
                      remote tui tools tests bench)))

.PHONY: all deps run test unit bench clean fuzz test-san san-tree install install-node uninstall deb \
        FORCE
.SECONDARY:
all: $(BUILD)/tunedeck $(TOOLS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(SOURCE_DIR_OBJ): $(SOURCE_DIR_STAMP)
$(SOURCE_DIR_STAMP): FORCE
	@$(write_source_dir_stamp)

$(BUILD)/tunedeck: $(CMD_OBJ) $(LIB_OBJ)
	$(call say,LINK,$@)$(CC) $(LDFLAGS) $^ $(LIBS_ALL) -o $@

$(BUILD)/tunedeck-worker: $(BUILD)/tools/tunedeck-worker.o $(WORKER_OBJ) $(LIB_OBJ)
	$(call say,LINK,$@)$(CC) $(LDFLAGS) $^ $(LIBS_ALL) -o $@

$(BUILD)/%: $(BUILD)/tools/%.o $(LIB_OBJ)
	$(call say,LINK,$@)$(CC) $(LDFLAGS) $^ $(LIBS_ALL) -o $@

# bench/optimizer's parts, one idea per file (bench/optbench/optbench.h).
$(BUILD)/bench/optimizer: $(BUILD)/bench/optimizer.o $(call obj,$(call srcs,bench/optbench)) \
                          $(BENCH_ARGS_OBJ) $(LIB_OBJ)
	$(call say,LINK,$@)$(CC) $(LDFLAGS) $^ $(LIBS_ALL) -o $@

# bench/optimizer_allreduce shares bench/optimizer's Python bridge.
$(BUILD)/bench/optimizer_allreduce: $(BUILD)/bench/optimizer_allreduce.o \
                                    $(BUILD)/bench/optbench/pypeer.o $(BENCH_ARGS_OBJ) $(LIB_OBJ)
	$(call say,LINK,$@)$(CC) $(LDFLAGS) $^ $(LIBS_ALL) -o $@

# The frame benchmarks share an off-screen terminal and the bare refresh (bench/frame/).
FRAME_BENCHES := $(BUILD)/bench/console $(BUILD)/bench/slurm_frame
$(FRAME_BENCHES): $(BUILD)/bench/%: $(BUILD)/bench/%.o $(call obj,$(call srcs,bench/frame)) \
                                   $(BENCH_ARGS_OBJ) $(LIB_OBJ)
	$(call say,LINK,$@)$(CC) $(LDFLAGS) $^ $(LIBS_ALL) -o $@

# bench/sessionlist measures `tunedeck sessions`' summary of a journal (cmd/session_summary).
$(BUILD)/bench/sessionlist: $(BUILD)/bench/sessionlist.o $(BUILD)/cmd/session_summary.o \
                            $(BENCH_ARGS_OBJ) $(LIB_OBJ)
	$(call say,LINK,$@)$(CC) $(LDFLAGS) $^ $(LIBS_ALL) -o $@

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(BENCH_ARGS_OBJ) $(LIB_OBJ)
	$(call say,LINK,$@)$(CC) $(LDFLAGS) $^ $(LIBS_ALL) -o $@

# All unit tests link into one Criterion binary so the run ends with one summary line.
# --wrap: the calls between the project's objects to these functions go through a test's
# __wrap_ one, which fails them on demand where no real input can (an allocation failure that
# RLIMIT_AS does not make happen in the right place: orphans_stop_begin, orphans_add:
# tests/remote/session/test_tune_orphans.c), or looks at the child at its exec (execl,
# execvp: tests/support/execprobe.h), or counts the keeper's walks of /proc (proctree_walk:
# tests/remote/launch/test_lifeline.c).
UNIT_WRAP := -Wl,--wrap=orphans_stop_begin -Wl,--wrap=orphans_add -Wl,--wrap=execl \
             -Wl,--wrap=execvp -Wl,--wrap=proctree_walk
$(BUILD)/unit-tests: $(TEST_OBJ) $(WORKER_OBJ) $(LIB_OBJ)
	$(call say,LINK,$@)$(CC) $(LDFLAGS) $(UNIT_WRAP) $^ $(LIBS_ALL) -lcriterion -o $@

deps:
	@sh tools/deps.sh

run: deps all
	$(BUILD)/tunedeck

unit: all $(BUILD)/unit-tests
	TUNEDECK_BIN=$(abspath $(BUILD)/tunedeck) TUNEDECK_BUILD=$(abspath $(BUILD)) \
	  $(BUILD)/unit-tests --jobs 2

# Integration suites (real sshd, real tmux) run first; the unit binary runs last so
# its synthesis line closes the output.
# The sanitize suite's tree is built here, before the suites start, so that its compile
# (4 to 12 minutes on two loaded cores) does not count against that suite's time limit.
test: deps all $(BUILD)/unit-tests san-tree
	@sh tests/run-integration.sh $(abspath $(BUILD))
	TUNEDECK_BIN=$(abspath $(BUILD)/tunedeck) TUNEDECK_BUILD=$(abspath $(BUILD)) \
	  $(BUILD)/unit-tests --jobs 2

# libFuzzer targets over every parser, FUZZ_SECONDS each (tests/fuzz/run.sh).
FUZZ_SECONDS ?= 60
fuzz: deps
	@sh tests/fuzz/run.sh $(abspath $(BUILD)/fuzz) $(FUZZ_SECONDS)

# The unit tests and headless commands under ASan+UBSan and valgrind (a second build tree).
test-san: deps
	@sh tests/integration/sanitize.sh

# The AddressSanitizer + UBSan tree that tests/integration/sanitize.sh runs. BUILD relative to
# the root, as when typed by hand: the .d files then name the same targets, so a changed header
# rebuilds what includes it. -O1, ASan's usual level: the checks are the same at any level
# (fewer loads are optimized away before ASan's pass), and the tree compiles in about 60% of
# the CPU time of -O2 (68 s against 117 s, fresh); the tests run as fast, their time being
# mostly each test process's start. CFLAGS from the environment is the one that keeps this
# Makefile's own flags (given as an argument it would replace them).
SAN_TREE  := build-san
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
san-tree:
	@CFLAGS="-O1 -g" $(MAKE) -s -j2 BUILD=$(SAN_TREE) SAN="$(SAN_FLAGS)" all $(SAN_TREE)/unit-tests

bench: deps all $(BENCHES)
	@sh bench/run.sh $(abspath $(BUILD))

# Installed layout (docs/install.md): programs in bin, data/themes/examples in
# share/tunedeck (found beside the binary at run time, so DESTDIR trees run where they lie),
# the man page, bash and zsh completion. `make install DESTDIR=/tmp/x PREFIX=/usr`.
PREFIX      ?= /usr/local
DESTDIR     ?=
BINDIR      := $(DESTDIR)$(PREFIX)/bin
SHAREDIR    := $(DESTDIR)$(PREFIX)/share/tunedeck
MAN1DIR     := $(DESTDIR)$(PREFIX)/share/man/man1
BASHCOMPDIR := $(DESTDIR)$(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  := $(DESTDIR)$(PREFIX)/share/zsh/vendor-completions
HELPERS     := tunedeck-worker tunedeck-jobctl tunedeck-rexec
# What a compute node runs: the inventory's trial command and the live jobs (tunedeck-jobctl
# is a test driver that runs beside tunedeck, not on the nodes).
NODE_PROGS  := tunedeck-worker

# data/, themes/ and examples/ are data, not programs (examples/trial.py runs through
# python3): folders 755, files 644. The Python trial helper goes to share/tunedeck/tools/python,
# where examples/pytorch_ddp.py looks for it (../tools/python), as in the source tree. Each
# helper's man page leads to tunedeck(1).
install: all
	install -d $(BINDIR) $(SHAREDIR) $(MAN1DIR) $(BASHCOMPDIR) $(ZSHCOMPDIR)
	install -m 755 $(BUILD)/tunedeck $(addprefix $(BUILD)/,$(HELPERS)) $(BINDIR)
	cp -R data themes examples $(SHAREDIR)
	install -d $(SHAREDIR)/tools/python
	cp tools/python/tunedeck_trial.py $(SHAREDIR)/tools/python
	find $(SHAREDIR) -type d -exec chmod 755 {} + && find $(SHAREDIR) -type f -exec chmod 644 {} +
	install -m 644 docs/man/tunedeck.1 $(MAN1DIR)
	for h in $(HELPERS); do echo '.so man1/tunedeck.1' >$(MAN1DIR)/$$h.1 && chmod 644 $(MAN1DIR)/$$h.1; done
	install -m 644 tools/completion/tunedeck.bash $(BASHCOMPDIR)/tunedeck
	install -m 644 tools/completion/_tunedeck $(ZSHCOMPDIR)/_tunedeck

# Only what compute nodes run: `make install-node PREFIX=$$HOME/.local` on each node.
install-node: $(addprefix $(BUILD)/,$(NODE_PROGS))
	install -d $(BINDIR)
	install -m 755 $(addprefix $(BUILD)/,$(NODE_PROGS)) $(BINDIR)

uninstall:
	rm -f $(BINDIR)/tunedeck $(addprefix $(BINDIR)/,$(HELPERS))
	rm -f $(MAN1DIR)/tunedeck.1 $(addprefix $(MAN1DIR)/,$(addsuffix .1,$(HELPERS)))
	rm -f $(BASHCOMPDIR)/tunedeck $(ZSHCOMPDIR)/_tunedeck
	rm -rf $(SHAREDIR)

# A Debian package from this build (tools/mkdeb.sh: make install into a staging tree,
# dpkg-shlibdeps for Depends, dpkg-gencontrol, dpkg-deb). DEBDIR: where the .deb goes.
DEBDIR ?= $(BUILD)/deb
deb: all
	@sh tools/mkdeb.sh $(abspath $(BUILD)) $(abspath $(DEBDIR))

clean:
	rm -rf $(BUILD)

# Not the fuzz tree's (tests/fuzz/fuzz.mk reads those): fuzz.sh writes them while other
# suites run make beside it, and a half-written one would break their make.
-include $(shell find $(BUILD) -path $(BUILD)/fuzz -prune -o -name '*.d' -print 2>/dev/null)
