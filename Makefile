# Top-level build and test entry points. Every target first runs
# scripts/deps.sh (through `deps`), which installs whatever is missing: Debian
# packages, the Python virtualenv in .venv/, Go modules. A stamp keeps that
# cheap when nothing changed.
#
#   make test         test-go, test-interop and test-hw, two at a time
#   make test-go      go vet, then go test -race (all but the interop package)
#   make test-interop Linux siw in QEMU against rnic-loader's rping (interop/),
#                     verbose so that the log shows both sides' rping output;
#                     and the vfio backend (driver/vfio, through cmd/vfio-edu)
#                     inside a q35 guest against QEMU's edu device behind
#                     intel-iommu (interop/vfio_test.go, docs/vfio.md)
#   make test-hw      lint-hw, then the cocotb testbenches under tests/ (pytest,
#                     HW_JOBS workers, default 2; longest cases first), with
#                     the protocol checkers of tests/protocol.py on every
#                     AXI4, AXI4-Stream and write-request port (their rules
#                     proven without a simulator by tests/test_protocol.py);
#                     then the bench check: the figures the testbenches
#                     wrote (build/bench/) against hw/bench-baseline.json,
#                     failing on any figure worse than recorded
#   make test-hw-full test-hw with every width on every simulator
#                     (HW_ALL_WIDTHS=1; by default every simulator runs
#                     the two ends of the width range, 64 and 512,
#                     tests/widths.py; the bench check counts the baseline
#                     figures of the other widths as not run)
#   make soak         the ddp_rx security soaks (AXI4 and write-request
#                     port) at SOAK_ULPDUS (default 1,000,000) short ULPDUs
#                     each; make test runs them at 50,000 (about 12 minutes
#                     each at the default on this 2-core machine)
#   make equiv-mutation  the Verilog/VHDL comparison catches a changed twin:
#                     rx_join's W64 pair with one constant of a copy of
#                     rx_join.vhd changed must fail with a differing
#                     transaction (hw/ itself is never touched)
#   make lint-hw      Verilator -Wall lint and Yosys synthesis of hw/rtl/*.v,
#                     GHDL analysis and elaboration of hw/rtl/vhdl/*.vhd
#   make synth        Yosys figures for each datapath block and for the device
#                     top (rnic_dev) at W=64 and W=512
#                     (6-input LUTs): LUT count, LUT levels between registers,
#                     deepest feedback loop, and an FPGA period estimate
#                     (synth_xilinx, UltraScale+ -2 delays, hw/timing.md);
#                     a table and build/synth/report.json
#                     (scripts/hw_figures.py; fails if a block's W=512
#                     estimate is below 322 MHz). Slow: minutes per block.
#   make bench-hw     test-hw, then every figure the testbenches measured
#                     (beats per clock, latency in clocks, per-case figures;
#                     build/bench/<block>-W<w>.json) beside its baseline, as
#                     a table and build/bench/hw.json. After an intended
#                     change of a figure, record it (and commit the file):
#                     python3 scripts/hw_figures.py bench --update
#   make coverage-hw  the Verilator cases with line and toggle coverage
#                     (HW_COVERAGE=1), then the per-block table of lines,
#                     branches and toggles reached (scripts/hw_coverage.py;
#                     build/coverage/report.json, annotated sources; fails if
#                     a block's lines are under 90% covered)
#   make xcheck-admin the admin cross-check's long run: the simulated device
#                     (rnic-sim) against the Go model, XCHECK_SEEDS (default
#                     20) random sequences of XCHECK_LEN (default 5000)
#                     commands from seed XCHECK_SEED (default: drawn from
#                     the clock and printed); `go test` runs seeds 1..3 of
#                     400 (driver/simdev/admin_xcheck_test.go)
#   make xcheck-admin-mutation  the cross-check catches a changed check:
#                     rnic-sim built from a copy of rnic_admin.v whose
#                     CREATE_CQ log2 bound is one lower must fail it, naming
#                     the command (hw/ itself is never touched)
#   make sim-512      the simulated device at DATA_W=512, build/sim512/rnic-sim
#                     (make sim builds W=64's, build/sim/rnic-sim); not in
#                     make test (minutes to build). Its driver tests and
#                     benchmarks: RNIC_SIM=$PWD/build/sim512/rnic-sim go test ...
#                     (docs/device.md, "The simulated device")
#   make regs         regenerate what comes from the register map,
#                     hw/regs/rnic.rdl (scripts/regs.py): hw/rtl/rnic_regs.v
#                     (peakrdl-etana), driver/regs/regs.go, docs/registers.md;
#                     tests/test_regs_generated.py (in test-hw) fails when a
#                     checked-in copy is stale
#   make fuzz         every Go fuzz target for FUZZTIME (default 3m) each
#   make bench        every Go benchmark
#   make demo         verified loader benchmarks, and pcaps read back by tshark
#   make clean        remove build/ (make distclean also removes .venv/)
#
# Hardware tests read SIMS (e.g. SIMS=icarus,ghdl), WAVES=1 and RANDOM_SEED;
# see tests/hdlsim.py.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := test
.DELETE_ON_ERROR:
MAKEFLAGS += --no-builtin-rules

GO ?= go
FUZZTIME ?= 3m
# --durations: the CI log names the slowest cases, for the time budget.
PYTEST_FLAGS ?= -q --durations=15
# pytest-xdist workers for the testbenches (each case runs one simulator).
HW_JOBS ?= 2
# The ddp_rx security soaks' size under make coverage-hw and make soak.
COVERAGE_SOAK_ULPDUS ?= 20000
SOAK_ULPDUS ?= 1000000

VENV := .venv
PYTEST := $(VENV)/bin/pytest
DEPS_STAMP := $(VENV)/.deps.stamp
BUILD := build
LINT := $(BUILD)/lint

RTL_V := $(sort $(wildcard hw/rtl/*.v hw/rtl/*.sv))
# Headers `include'd by the modules (found through -y / -I hw/rtl).
RTL_VH := $(sort $(wildcard hw/rtl/*.vh))
RTL_VHDL := $(sort $(wildcard hw/rtl/vhdl/*.vhd))
# Verilator lint waivers for generated Verilog (hw/regs/rnic_regs.vlt says
# which file and which rule); read before the sources.
RTL_VLT := $(sort $(wildcard hw/regs/*.vlt))
# One module (or entity) per file, named after the file.
RTL_V_TOPS := $(basename $(notdir $(RTL_V)))
# VHDL packages (*_pkg.vhd) are analysed with the rest but have no entity.
RTL_VHDL_TOPS := $(filter-out %_pkg,$(basename $(notdir $(RTL_VHDL))))

.PHONY: xcheck-admin xcheck-admin-mutation
.PHONY: soak deps regs sim sim-512 test test-go test-interop test-hw test-hw-full equiv-mutation lint-hw coverage-hw synth bench-hw fuzz bench demo clean distclean

# --- dependencies ------------------------------------------------------------

deps: $(DEPS_STAMP)

$(DEPS_STAMP): scripts/deps.sh requirements.txt go.mod $(wildcard go.sum)
	GO='$(GO)' bash scripts/deps.sh
	touch $@

# --- generated files ---------------------------------------------------------

regs: deps
	$(VENV)/bin/python scripts/regs.py

# --- tests -------------------------------------------------------------------

# The suites run two at a time on the two cores; -O keeps their logs apart.
test: deps
	$(MAKE) --no-print-directory -j2 -O test-go test-interop test-hw

# rnic-sim first: the simdev and rnic-loader test binaries each run `make
# sim`, and two builds of it at once (a new commit's first run) leave one
# exec'ing a binary the other is still writing ("permission denied").
test-go: deps sim
	$(GO) vet ./...
	$(GO) test -race -count=1 $$($(GO) list ./... | grep -v '/interop$$')

# The guest image is built on first use into build/interop/guest (Debian
# packages, about 220 MB); the run leaves build/interop/siw-rping.pcap. Its
# sim- sessions run rnic-sim (built first, as for test-go).
test-interop: deps sim
	$(GO) test -race -count=1 -v ./interop

# The bench check costs under a second: the benches ran above.
test-hw: lint-hw deps
	$(PYTEST) $(PYTEST_FLAGS) -n $(HW_JOBS) --dist load tests/
	python3 scripts/hw_figures.py bench

test-hw-full:
	HW_ALL_WIDTHS=1 $(MAKE) --no-print-directory test-hw

soak: deps
	DDP_RX_SOAK_ULPDUS=$(SOAK_ULPDUS) $(PYTEST) $(PYTEST_FLAGS) -n $(HW_JOBS) --dist load \
		tests/ddp_rx/test_ddp_rx.py -k security_soak

# Every pair of a Verilator case and the GHDL case of the same test and tag
# is compared clock for clock in test-hw (tests/transactions.py). This shows
# the comparison failing on a twin with one constant changed: a copy of
# hw/rtl/vhdl with rx_join.vhd's untagged header length (HDR18_c) 18 -> 19,
# run through HDLSIM_VHDL_DIR. The bench's own checks accept the mutant (a
# first piece of 19 octets is still whole enough); the comparison must not.
MUTANT := $(BUILD)/mutant
equiv-mutation: deps
	@rm -rf $(MUTANT) && mkdir -p $(MUTANT) && cp -r hw/rtl/vhdl $(MUTANT)/
	sed -i 's/HDR18_c : u7_t := to_unsigned(18, 7)/HDR18_c : u7_t := to_unsigned(19, 7)/' $(MUTANT)/vhdl/rx_join.vhd
	! diff hw/rtl/vhdl/rx_join.vhd $(MUTANT)/vhdl/rx_join.vhd > /dev/null
	if HDLSIM_VHDL_DIR=$(abspath $(MUTANT))/vhdl $(PYTEST) -q -p no:cacheprovider tests/rx_join \
		-k 'W64 and (verilator or ghdl)' > $(MUTANT)/pytest.log 2>&1; then \
		echo "equiv-mutation: the mutant passed ($(MUTANT)/pytest.log)"; exit 1; fi
	grep -A3 'Verilog and VHDL twin differ' $(MUTANT)/pytest.log | head -8
	@echo "equiv-mutation: the comparison failed the mutant, as it must"

# ddp_rx's stage modules (ddp_rx.v instantiates each once, ddp_rx_place
# ddp_rx_retire): Verilator lints
# each on its own; Yosys synthesises them within ddp_rx, with ddp_rx's
# parameters, not again on their own.
DDP_RX_STAGES := ddp_rx_intake ddp_rx_check ddp_rx_decide ddp_rx_setup ddp_rx_retire ddp_rx_place ddp_rx_wport ddp_rx_tables ddp_rx_deliver

# Lint results are stamped per file, so an unchanged file is not linted again.
# Each stamp depends on every source file: a module's lint covers the
# submodules it instantiates.
# rnic_admin likewise: Yosys synthesises it within rnic_dev (the same
# parameters as its defaults), which saves make test about 45 s.
YOSYS_WITHIN := $(DDP_RX_STAGES) rnic_admin
# rnic_dev and rnic_rx hold blocks each synthesised on its own already:
# Yosys elaborates them (the hierarchy checked, every process read) without
# synthesising it all again (rnic_rx's synthesis took 5.6 minutes of make
# test's lint); `make synth` gives their figures.
YOSYS_ELAB_ONLY := rnic_dev rnic_rx
lint-hw: $(RTL_V_TOPS:%=$(LINT)/verilator/%.ok) $(filter-out $(YOSYS_WITHIN:%=$(LINT)/yosys/%.ok),$(RTL_V_TOPS:%=$(LINT)/yosys/%.ok))
lint-hw: $(if $(RTL_VHDL),$(LINT)/ghdl/all.ok)
# The variants the defaults do not reach: ddp_rx and rnic_rx with the
# write port twice the data width, and with the write-request stream.
LINT_VARIANTS := ddp_rx-2x ddp_rx-req rnic_rx-2x rnic_rx-req
LINT_PARAMS_2x := -GAXI_W=128
LINT_PARAMS_req := -GAXI_W=128 -GWR_REQ=1
lint-hw: $(LINT_VARIANTS:%=$(LINT)/verilator/%.ok)

$(LINT)/verilator/ddp_rx-%.ok: $(RTL_V) $(RTL_VH) | deps
	@mkdir -p $(@D)
	verilator --lint-only -Wall -y hw/rtl $(LINT_PARAMS_$*) --top-module ddp_rx hw/rtl/ddp_rx.v
	@touch $@

$(LINT)/verilator/rnic_rx-%.ok: $(RTL_V) $(RTL_VH) | deps
	@mkdir -p $(@D)
	verilator --lint-only -Wall -y hw/rtl $(LINT_PARAMS_$*) --top-module rnic_rx hw/rtl/rnic_rx.v
	@touch $@

$(LINT)/verilator/%.ok: $(RTL_V) $(RTL_VH) $(RTL_VLT) | deps
	@mkdir -p $(@D)
	verilator --lint-only -Wall -y hw/rtl $(RTL_VLT) --top-module $* $(filter %/$*.v %/$*.sv,$(RTL_V))
	@touch $@

# Each run reads its own file and lets `hierarchy -libdir` read the files of
# the modules it instantiates (one module a file, named after it), with the
# same defaults and defines: reading every file in each of the 36 runs cost
# about 4 s of CPU a run in make test's lint.
# Blocks are synthesised with sdp_ram's block-RAM stand-in
# (RNIC_SYNTH_ESTIMATE): Yosys' generic flow would turn every per-connection
# and STag table into flip-flops (megabits: minutes and gigabytes). sdp_ram
# itself is synthesised as written.
$(LINT)/yosys/%.ok: $(RTL_V) $(RTL_VH) | deps
	@mkdir -p $(@D)
	yosys -q -l $(@:.ok=.log) -p 'verilog_defaults -add -sv -I hw/rtl; $(if $(filter sdp_ram,$*),,verilog_defines -DRNIC_SYNTH_ESTIMATE;) read_verilog $(filter %/$*.v %/$*.sv,$(RTL_V)); hierarchy -libdir hw/rtl -top $*; $(if $(filter $(YOSYS_ELAB_ONLY),$*),hierarchy -check -top $*; proc,synth -top $*)'
	@touch $@

$(LINT)/ghdl/all.ok: $(RTL_VHDL) | deps
	@rm -rf $(@D) && mkdir -p $(@D)
	cd $(@D) && ghdl -i --std=08 $(abspath $(RTL_VHDL))
	cd $(@D) && for top in $(RTL_VHDL_TOPS); do ghdl -m --std=08 $$top; done
	@touch $@

# --- the simulated device (hw/sim) ---------------------------------------------

# rnic-sim: hw/rtl/rnic_dev.v verilated with the harness hw/sim/rnic_sim.cpp;
# the driver's sim backend (driver/simdev) starts it. BUILD_HASH is the
# commit's first 32 bits, published in the ID block. The model's C++ is
# compiled with SIM_OPT (-O2: Verilator's default, -Os, runs about 0.83
# times the clocks a CPU second); ccache, when there is one, keeps the objects
# (build/ccache, as tests/hdlsim.py's), so a new commit's rebuild (only
# BUILD_HASH changed) compiles little. FST tracing: SIM_TRACE.
SIM := $(BUILD)/sim
SIM_BIN := $(SIM)/rnic-sim
# The top; Verilator finds the blocks it instantiates in hw/rtl (-y).
SIM_SRC := hw/rtl/rnic_dev.v
# The device's datapath width, given to Verilator and to the harness.
SIM_DATA_W ?= 64
SIM_OPT ?= -O2
SIM_TRACE ?= --trace-fst
SIM_CCACHE := $(if $(shell command -v ccache 2>/dev/null),OBJCACHE=ccache)
SIM_FLAGS = -y hw/rtl -GDATA_W=$(SIM_DATA_W) -CFLAGS '-O2 -std=c++17 -DRNIC_DATA_W=$(SIM_DATA_W)' -LDFLAGS '-lz' \
	-MAKEFLAGS 'OPT_FAST=$(SIM_OPT) OPT_GLOBAL=$(SIM_OPT) $(SIM_CCACHE)'
SIM_HASH = $(or $(shell git rev-parse HEAD 2>/dev/null | cut -c1-8),00000000)
SIM_ENV = CCACHE_DIR=$${CCACHE_DIR:-$(abspath $(BUILD))/ccache}

sim: $(SIM_BIN)

# The W=512 device (build/sim512/rnic-sim; not in make test: its build
# takes minutes). The driver's tests and benchmarks run it with RNIC_SIM:
#   RNIC_SIM=$PWD/build/sim512/rnic-sim go test -run '^$' -bench SimWrite64K -benchtime 64x ./driver/simdev
sim-512:
	$(MAKE) --no-print-directory sim SIM=$(BUILD)/sim512 SIM_DATA_W=512

# The hash file changes only when the commit does, so a new commit rebuilds
# the device (its ID block says which commit it is); the flags file when
# the build's flags do (make sim SIM_DATA_W=512 after a W=64 build).
$(SIM)/hash: FORCE
	@mkdir -p $(@D)
	@echo $(SIM_HASH) | cmp -s - $@ || echo $(SIM_HASH) > $@
$(SIM)/flags: FORCE
	@mkdir -p $(@D)
	@echo '$(subst ',,$(SIM_TRACE) $(SIM_FLAGS))' | cmp -s - $@ || echo '$(subst ',,$(SIM_TRACE) $(SIM_FLAGS))' > $@

$(SIM_BIN): $(RTL_V) $(RTL_VH) $(RTL_VLT) hw/sim/rnic_sim.cpp hw/sim/flash_model.h $(SIM)/hash $(SIM)/flags | deps
	@mkdir -p $(SIM)
	@start=$$(date +%s); \
	$(SIM_ENV) verilator --cc --exe --build -j 2 -O2 $(SIM_TRACE) -Wall -Wno-fatal $(RTL_VLT) $(SIM_FLAGS) \
		-GBUILD_HASH=32\'h$$(cat $(SIM)/hash) --top-module rnic_dev -Mdir $(SIM)/obj \
		-o $(abspath $(SIM_BIN)) $(SIM_SRC) $(abspath hw/sim/rnic_sim.cpp) > $(SIM)/build.log 2>&1 \
		|| { tail -30 $(SIM)/build.log; exit 1; }; \
	echo "$(SIM_BIN): built in $$(( $$(date +%s) - start )) s (W=$(SIM_DATA_W))"

# The admin cross-check (driver/simdev/admin_xcheck_test.go), long.
XCHECK_SEEDS ?= 20
XCHECK_LEN ?= 5000
XCHECK_SEED ?=
xcheck-admin: $(SIM_BIN)
	RNIC_XCHECK_SEEDS=$(XCHECK_SEEDS) RNIC_XCHECK_LEN=$(XCHECK_LEN) RNIC_XCHECK_SEED=$(XCHECK_SEED) \
		$(GO) test -count=1 -timeout 60m -run 'TestAdminCrossCheck' -v ./driver/simdev | grep -E '^(admin cross-check|---|ok|FAIL|PASS)|agree|differ|device:|model:'

# The same device with one check changed (a copy of rnic_admin.v: CREATE_CQ
# accepts log2 sizes up to CQ_LOG2 - 1 only); the cross-check must fail.
XMUTANT := $(BUILD)/xcheck-mutant
xcheck-admin-mutation: $(SIM_BIN)
	@rm -rf $(XMUTANT) && mkdir -p $(XMUTANT)
	sed 's/a3 <= CQ_MAX/a3 < CQ_MAX/' hw/rtl/rnic_admin.v > $(XMUTANT)/rnic_admin.v
	! cmp -s hw/rtl/rnic_admin.v $(XMUTANT)/rnic_admin.v
	$(SIM_ENV) verilator --cc --exe --build -j 2 -O2 $(SIM_TRACE) -Wall -Wno-fatal $(RTL_VLT) $(SIM_FLAGS) \
		--top-module rnic_dev -Mdir $(XMUTANT)/obj \
		-o $(abspath $(XMUTANT))/rnic-sim $(filter-out hw/rtl/rnic_admin.v,$(SIM_SRC)) $(XMUTANT)/rnic_admin.v \
		$(abspath hw/sim/rnic_sim.cpp) > $(XMUTANT)/build.log 2>&1 || { tail -30 $(XMUTANT)/build.log; exit 1; }
	if RNIC_XCHECK_SIM=$(abspath $(XMUTANT))/rnic-sim $(GO) test -count=1 -run 'TestAdminCrossCheck' ./driver/simdev \
		> $(XMUTANT)/test.log 2>&1; then echo "xcheck-admin-mutation: the mutant passed ($(XMUTANT)/test.log)"; exit 1; fi
	grep -A2 'differ at' $(XMUTANT)/test.log | head -6
	@echo "xcheck-admin-mutation: the cross-check failed the mutant, as it must"

# --- fuzzing and benchmarks --------------------------------------------------

# Every Fuzz* function of every package that has tests, one after another.
fuzz: deps
	@n=0; \
	for pkg in $$($(GO) list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./...); do \
		list=$$($(GO) test -list 'Fuzz.*' "$$pkg"); \
		for fn in $$(grep '^Fuzz' <<<"$$list" || true); do \
			n=$$((n + 1)); \
			echo "fuzz: $$pkg $$fn for $(FUZZTIME)"; \
			$(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime '$(FUZZTIME)' "$$pkg"; \
		done; \
	done; \
	echo "fuzz: ran $$n fuzz targets"

bench: deps
	$(GO) test -run '^$$' -bench . -benchmem ./...

# --- hardware figures --------------------------------------------------------

synth: deps
	python3 scripts/hw_figures.py synth

bench-hw: test-hw
	python3 scripts/hw_figures.py bench --all

# The Verilator cases with line and toggle coverage (HW_COVERAGE=1, builds in
# build/coverage/), then the per-block table. The soaks run a tenth of their
# ULPDUs: coverage slows every clock, and the soak's corners come early.
coverage-hw: deps
	rm -rf $(BUILD)/coverage
	HW_COVERAGE=1 SIMS=verilator DDP_RX_SOAK_ULPDUS=$(COVERAGE_SOAK_ULPDUS) \
		$(PYTEST) $(PYTEST_FLAGS) -n $(HW_JOBS) --dist load tests/
	$(VENV)/bin/python scripts/hw_coverage.py

# --- demo --------------------------------------------------------------------

demo: deps
	GO='$(GO)' bash scripts/demo.sh

# --- cleaning ----------------------------------------------------------------

clean:
	rm -rf $(BUILD)
	find tests -name __pycache__ -type d -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)

FORCE:
