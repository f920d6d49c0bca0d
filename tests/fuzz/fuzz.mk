# libFuzzer builds of the parsers: `make -f tests/fuzz/fuzz.mk FUZZ_BUILD=DIR` (run from the
# project root; `make fuzz` and tests/integration/fuzz.sh call it). Needs clang's libFuzzer.
FUZZ_BUILD ?= build/fuzz
include mk/source_dir.mk
FUZZ_CC    ?= clang
# -gline-tables-only: a report's stack still names file and line (and inlined frames), and the
# tree compiles in about 10% less CPU time than with full -g (no variable or type info).
FUZZ_FLAGS ?= -gline-tables-only -O1 -fsanitize=fuzzer-no-link,address,undefined \
              -fno-sanitize-recover=undefined
FUZZ_CFLAGS = -std=c11 -D_GNU_SOURCE -Wall -Wextra -I. -I/usr/include/cjson -MMD -MP \
              $(SOURCE_DIR_FLAG) $(FUZZ_FLAGS)
FUZZ_LIBS   = -lncursesw -ltinfo -lgsl -lopenblas -lcjson -lm -lpthread

FUZZ_CORE_SRC := $(shell find core tools/worker -name '*.c')
# Parsers outside core/ that need neither a network nor a terminal to run.
FUZZ_CORE_SRC += $(wildcard remote/gpu/nvsmi.c tui/theme.c \
                 remote/slurm/slurm_nodes.c remote/slurm/slurm_nodestate.c remote/slurm/slurm_queue.c remote/slurm/slurm_jobinfo.c remote/slurm/slurm_jobfields.c \
                 remote/ssh/revokedkeys.c remote/launch/srunlabel.c)
FUZZ_CORE   := $(patsubst %.c,$(FUZZ_BUILD)/%.o,$(FUZZ_CORE_SRC))
FUZZ_SRC    := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS   := $(patsubst tests/fuzz/%.c,$(FUZZ_BUILD)/%,$(FUZZ_SRC))
# The objects that hold the source folder's path, rebuilt when the tree moves (its stamp,
# mk/source_dir.mk, is this tree's own: the fuzz build is a tree apart from build/).
FUZZ_SOURCE_DIR_STAMP := $(FUZZ_BUILD)/source-dir
FUZZ_SOURCE_DIR_OBJ   := $(patsubst %.c,$(FUZZ_BUILD)/%.o,$(patsubst tests/fuzz/%.c,$(FUZZ_BUILD)/%.o,\
                           $(call source_dir_users,$(FUZZ_CORE_SRC) $(FUZZ_SRC))))

all: $(FUZZ_BINS)

.PHONY: all FORCE
$(FUZZ_SOURCE_DIR_OBJ): $(FUZZ_SOURCE_DIR_STAMP)
$(FUZZ_SOURCE_DIR_STAMP): FORCE
	@$(write_source_dir_stamp)

$(FUZZ_BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_BUILD)/%.o: tests/fuzz/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_BUILD)/fuzz_%: $(FUZZ_BUILD)/fuzz_%.o $(FUZZ_CORE)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer $^ $(FUZZ_LIBS) -o $@

.SECONDARY:
-include $(shell find $(FUZZ_BUILD) -name '*.d' 2>/dev/null)
