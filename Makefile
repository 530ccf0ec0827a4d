# provision: build, test and lab targets. `make help` lists them.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
CC ?= cc
PKGS := ldap lber krb5 krb5-gssapi smbclient libssh yaml-0.1 jansson nettle libpcap
VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# libsmbclient is not linked: smb/lib.c loads it when first needed (it costs ~40 ms at start)
PKG_LIBS = $(shell pkg-config --libs $(filter-out smbclient,$(PKGS)) 2>/dev/null)
CHECK_CFLAGS = $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null)
UNIT_LIBS = $(CHECK_LIBS)

WARN := -std=c11 -Wall -Wextra -Werror -Wshadow -Wno-missing-field-initializers
CPPFLAGS += -I. -D_GNU_SOURCE -DPV_VERSION='"$(VERSION)"'
CFLAGS ?= -O2 -g
# CPUs for the parallel parts of check: the builds (make -j) and the unit binaries' runs
JOBS ?= $(shell nproc 2>/dev/null || echo 1)
# float-cast-overflow: a double out of an integer's range converted is undefined behaviour, and
# gcc leaves it out of "undefined" (clang, the fuzzers' compiler, has it there)
SAN := -fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer \
	-fno-sanitize-recover=all

MODULES := util json playbooks hosts fileset krb ldap remote smb capture learn samba env load results report phases run sweep
LIB_SRC := $(foreach m,$(MODULES),$(wildcard $(m)/*.c))
CLI_SRC := $(wildcard provision/*.c)
LIB_OBJ := $(patsubst %.c,build/obj/%.o,$(LIB_SRC))
CLI_OBJ := $(patsubst %.c,build/obj/%.o,$(CLI_SRC))
ASAN_LIB_OBJ := $(patsubst %.c,build/asan/%.o,$(LIB_SRC))
ASAN_CLI_OBJ := $(patsubst %.c,build/asan/%.o,$(filter-out provision/main.c,$(CLI_SRC)))
UNIT_SRC := $(wildcard tests/unit/check_*.c)
UNIT_BIN := $(patsubst tests/unit/%.c,build/unit/%,$(UNIT_SRC))

.PHONY: all deps install uninstall unit integration check check-scale check-long demo lab-up lab-down \
	lab-status format clean help bench lint layers size fuzz fuzz-replay fuzz-build docs-check docs

all: bin/provision

help:
	@echo "make            build bin/provision"
	@echo "make deps       install the Debian packages the build, tests and lab need"
	@echo "make check      deps, build, lint, layers, size, unit tests (ASan+UBSan), fuzz replay, docs check, lab up, integration tests, lab down"
	@echo "make check-scale  the scale tests on a lab of its own: 32 clients and two DCs (docs/scale.md)"
	@echo "make check-long  a run of an hour (LONG_MINUTES), the controller's and clients' memory and files flat"
	@echo "make demo       deps, build, lab up, run the main job on the lab and show what happened"
	@echo "make unit       unit tests only"
	@echo "make fuzz       run every fuzz target (libFuzzer, and the Perl keytab reader's) for FUZZ_SECONDS (default 60) each"
	@echo "make fuzz-replay  run every fuzz target once over its corpus and crash reproducers"
	@echo "make layers     check every include against the layers table of docs/architecture.md"
	@echo "make size       check that no C file of the modules is over $(SIZE_MAX) lines (known exceptions apart)"
	@echo "make lint       shellcheck the scripts run on hosts (and the tests, lab), perl -c the Perl"
	@echo "make integration  integration tests against a running lab"
	@echo "make lab-up | lab-down | lab-status   the embedded lab (tests/lab)"
	@echo "make docs-check  the man page against --help, the help prose in docs/ up to date, make install into a staging folder, the bash completion"
	@echo "make docs       write each command's help prose (provision/cli.c) into docs/*.md and docs/provision.1"
	@echo "make install [PREFIX=/usr/local] [DESTDIR=]   bin/provision, the man page, the bash completion"
	@echo "make uninstall [PREFIX=...] [DESTDIR=]        remove what install put there"
	@echo "make format     clang-format every C file"

deps:
	@tests/lab/deps.sh

bin/provision: $(LIB_OBJ) $(CLI_OBJ)
	@mkdir -p $(@D)
	@echo "  LD      $@"
	@$(CC) $(CFLAGS) -o $@ $^ $(PKG_LIBS) -lpthread -lm

build/obj/%.o: %.c
	@mkdir -p $(@D)
	@echo "  CC      $<"
	@$(CC) $(CPPFLAGS) $(PKG_CFLAGS) $(WARN) $(CFLAGS) -MMD -MP -c -o $@ $<

build/asan/%.o: %.c
	@mkdir -p $(@D)
	@echo "  CC san  $<"
	@$(CC) $(CPPFLAGS) $(PKG_CFLAGS) $(CHECK_CFLAGS) $(WARN) -O1 -g $(SAN) -MMD -MP -c -o $@ $<

# Every unit binary may make realloc() fail on demand (tests/unit/alloc.h).
build/unit/%: build/asan/tests/unit/%.o build/asan/tests/unit/alloc.o $(ASAN_LIB_OBJ) $(ASAN_CLI_OBJ)
	@mkdir -p $(@D)
	@echo "  LD san  $@"
	@$(CC) $(SAN) -Wl,--wrap=realloc -o $@ $^ $(PKG_LIBS) $(UNIT_LIBS) -lpthread -lm

# The suites of the two SMB2 clients, and the load engine's, share a fake server.
build/unit/check_sync build/unit/check_async build/unit/check_engine: build/asan/tests/unit/fake_smb2.o

# The binaries run JOBS at a time (tests/unit/run.sh), each one's output printed whole.
unit: $(UNIT_BIN)
	@tests/unit/run.sh $(JOBS) $(UNIT_BIN)

# Fuzzing (tests/fuzz): every tests/fuzz/fuzz_<name>.c is a libFuzzer target, found by the
# wildcard so a new file needs no edit here. clang builds the modules again into build/fuzz/
# with coverage feedback (fuzzer-no-link) and the sanitizers; they go into an archive so each
# target links only the objects it reaches. No realloc wrapper here: that is for the unit tests.
FUZZ_CC ?= $(firstword $(shell command -v clang-14 clang 2>/dev/null) clang)
FUZZ_SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
FUZZ_SECONDS ?= 60
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN := $(patsubst tests/fuzz/%.c,build/fuzz/bin/%,$(FUZZ_SRC))
# targets in Perl (the keytab reader runs in Perl on the server): no build, run.sh runs them
FUZZ_PL := $(wildcard tests/fuzz/fuzz_*.pl)
# the modules (report/ draws the pages fuzz_report checks); the face is not fuzzed
FUZZ_LIB_OBJ := $(patsubst %.c,build/fuzz/%.o,$(LIB_SRC))

build/fuzz/%.o: %.c
	@mkdir -p $(@D)
	@echo "  CC fuzz $<"
	@$(FUZZ_CC) $(CPPFLAGS) $(PKG_CFLAGS) $(WARN) -O1 -g $(FUZZ_SAN) -fsanitize=fuzzer-no-link \
		-MMD -MP -c -o $@ $<

build/fuzz/libpv.a: $(FUZZ_LIB_OBJ)
	@rm -f $@
	@ar rcs $@ $^

build/fuzz/bin/%: build/fuzz/tests/fuzz/%.o build/fuzz/libpv.a
	@mkdir -p $(@D)
	@echo "  LD fuzz $@"
	@$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(PKG_LIBS) -lpthread -lm

fuzz-build: $(FUZZ_BIN)

fuzz: fuzz-build
	@tests/fuzz/run.sh fuzz $(FUZZ_SECONDS) $(FUZZ_BIN) $(FUZZ_PL)

fuzz-replay: fuzz-build
	@tests/fuzz/run.sh replay $(FUZZ_BIN) $(FUZZ_PL)

# The scripts provision sends to hosts are files (util/embed.h): POSIX sh, checked as such; the
# tests and the lab are bash (SC2034: their variables are used by the files that source them).
SCRIPTS_SH := $(wildcard $(foreach m,$(MODULES),$(m)/scripts/*.sh))
SCRIPTS_PL := $(wildcard $(foreach m,$(MODULES),$(m)/scripts/*.pl))
lint:
	@shellcheck -s sh $(SCRIPTS_SH)
	@for f in $(SCRIPTS_PL); do perl -c "$$f" 2>&1 | grep -v 'syntax OK$$' || true; \
		perl -c "$$f" >/dev/null 2>&1 || exit 1; done
	@shellcheck -s bash -S warning -e SC2034 tests/*.sh tests/lab/*.sh tests/integration/*.sh \
		tests/integration/scale/*.sh tests/integration/long/*.sh tests/unit/*.sh tests/fuzz/*.sh tests/docs/*.sh bench/*.sh \
		docs/provision.bash-completion docs/help-prose.sh
	@echo "lint: $(words $(SCRIPTS_SH)) shell and $(words $(SCRIPTS_PL)) Perl scripts, the tests and the lab: clean"

layers:
	@tests/layers.sh

# No C file of the modules (tests/ and bench/ apart) over SIZE_MAX lines: a file that grows past
# it holds two jobs (docs/design.md). SIZE_EXCEPTIONS would list a file over it that is still
# to be split (issue 30 emptied it: playbooks/playbook.c was the last). Take a file off the list
# in the commit that splits it; `make size` says when one listed is no longer over.
SIZE_MAX := 1000
SIZE_EXCEPTIONS :=
SIZE_SRC := $(sort $(wildcard $(foreach m,$(MODULES) provision,$(m)/*.c $(m)/*.h)))
size:
	@bad=0; for f in $(SIZE_SRC); do \
		n=$$(wc -l <"$$f"); \
		case " $(SIZE_EXCEPTIONS) " in \
		*" $$f "*) [ "$$n" -gt $(SIZE_MAX) ] || \
			echo "size: $$f is $$n lines now: take it off SIZE_EXCEPTIONS in the Makefile" ;; \
		*) if [ "$$n" -gt $(SIZE_MAX) ]; then \
			echo "$$f: $$n lines, more than $(SIZE_MAX): a file that long holds two jobs; split it (docs/design.md)" >&2; \
			bad=$$((bad + 1)); fi ;; \
		esac; \
	done; \
	if [ $$bad -gt 0 ]; then echo "size: $$bad file(s) over $(SIZE_MAX) lines" >&2; exit 1; fi; \
	echo "size: $(words $(SIZE_SRC)) C files, none over $(SIZE_MAX) lines$(if $(SIZE_EXCEPTIONS), but the $(words $(SIZE_EXCEPTIONS)) to be split ($(SIZE_EXCEPTIONS)))"

integration: bin/provision
	@tests/integration/run.sh

lab-up:
	@tests/lab/lab.sh up

lab-down:
	@tests/lab/lab.sh down

lab-status:
	@tests/lab/lab.sh status

check: deps
	@$(MAKE) --no-print-directory -j$(JOBS) all
	@$(MAKE) --no-print-directory lint
	@$(MAKE) --no-print-directory layers
	@$(MAKE) --no-print-directory size
	@$(MAKE) --no-print-directory -j$(JOBS) unit
	@$(MAKE) --no-print-directory -j$(JOBS) fuzz-replay
	@$(MAKE) --no-print-directory docs-check
	@tests/integration/run.sh --with-lab

# A run of an hour (LONG_MINUTES) with the controller's and the clients' memory and open files
# sampled: they must stay flat (docs/testing.md); not part of check.
check-long: all
	@tests/integration/run.sh --with-lab tests/integration/long/t_*.sh

# The scale tests (docs/scale.md): a lab of 32 clients and a second DC, brought up and down by
# run.sh (lab.sh reads CLIENTS and DCS at up); not part of check (about 90 s more).
check-scale: all
	@CLIENTS=32 DCS=2 tests/integration/run.sh --with-lab tests/integration/scale/t_*.sh

demo: deps
	@$(MAKE) --no-print-directory all
	@tests/lab/demo.sh

bench: bin/provision
	@for b in bench/*.sh; do $$b || exit 1; done

# The man page and the completion are checked against the binary's help (tests/docs), and the
# install into a staging folder (DESTDIR) is tested there too. No lab.
# Each command's help prose has one source, provision/cli.c: this writes it into the marked
# blocks of docs/*.md and docs/provision.1 (tests/docs/t_prose.sh fails when they are stale).
docs: bin/provision
	@bash docs/help-prose.sh bin/provision docs

docs-check: bin/provision
	@fail=0; for t in tests/docs/t_*.sh; do \
		if bash $$t; then echo "PASS $$(basename $$t .sh)"; else echo "FAIL $$(basename $$t .sh)"; fail=1; fi; \
	done; exit $$fail

install: bin/provision
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR)
	install -m 0755 bin/provision $(DESTDIR)$(BINDIR)/provision
	install -m 0644 docs/provision.1 $(DESTDIR)$(MANDIR)/man1/provision.1
	install -m 0644 docs/provision.bash-completion $(DESTDIR)$(BASHCOMPDIR)/provision

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/provision $(DESTDIR)$(MANDIR)/man1/provision.1 \
		$(DESTDIR)$(BASHCOMPDIR)/provision

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build bin

# Scripts built into the binary (util/embed.h): <module>/scripts.o holds <module>/scripts/*.
$(foreach m,$(MODULES),$(eval build/obj/$(m)/scripts.o build/asan/$(m)/scripts.o \
	build/fuzz/$(m)/scripts.o: $(wildcard $(m)/scripts/*)))

.SECONDARY:

-include $(shell find build -name '*.d' 2>/dev/null)
