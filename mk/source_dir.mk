# The source folder's path, for the objects of sources that name TUNEDECK_SOURCE_DIR (where the
# binary finds data/, themes/ and examples/, the unit tests their fixtures, a fuzz target its
# sample workload): one definition, included by the Makefile and tests/fuzz/fuzz.mk.
# A build tree copied to another checkout, or a moved tree, kept the old path in those objects,
# since no source changed: each tree's depend on a stamp that records the path, rewritten only
# when it differs, so a move rebuilds them and nothing else. A temporary file of its own per
# make: suites run make in one tree at once.
SOURCE_DIR_FLAG := -DTUNEDECK_SOURCE_DIR=\"$(CURDIR)\"

# The .c files under the folders (or among the files) $(1) that name it.
source_dir_users = $(shell grep -rl --include='*.c' TUNEDECK_SOURCE_DIR $(1) 2>/dev/null)

# The recipe of a tree's stamp (its target, $@): `STAMP: FORCE` then `@$(write_source_dir_stamp)`.
write_source_dir_stamp = mkdir -p $(dir $@) && tmp=$@.$$$$ && printf '%s\n' '$(CURDIR)' >$$tmp && \
                         if cmp -s $$tmp $@; then rm -f $$tmp; else mv -f $$tmp $@; fi
