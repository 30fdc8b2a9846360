# Top-level build and test entry points. Every target first runs
# scripts/deps.sh (through `deps`), which installs whatever is missing: Debian
# packages, the Python virtualenv in .venv/, Go modules. A stamp keeps that
# cheap when nothing changed.
#
#   make test         test-go, test-interop and test-hw, two at a time
#   make test-go      go vet, then go test -race (all but the interop package)
#   make test-interop Linux siw in QEMU against rnic-loader's rping (interop/),
#                     verbose so that the log shows both sides' rping output
#   make test-hw      lint-hw, then the cocotb testbenches under tests/ (pytest,
#                     HW_JOBS workers, default 2; longest cases first), with
#                     the protocol checkers of tests/protocol.py on every
#                     AXI4, AXI4-Stream and write-request port (their rules
#                     proven without a simulator by tests/test_protocol.py);
#                     then the bench check: the figures the testbenches
#                     wrote (build/bench/) against hw/bench-baseline.json,
#                     failing on any figure worse than recorded
#   make test-hw-full test-hw with every width on every simulator
#                     (HW_ALL_WIDTHS=1; by default Icarus and GHDL run the
#                     two ends of the width range, tests/hdlsim.py)
#   make lint-hw      Verilator -Wall lint and Yosys synthesis of hw/rtl/*.v,
#                     GHDL analysis and elaboration of hw/rtl/vhdl/*.vhd
#   make synth        Yosys figures for each datapath block at W=64 and W=512
#                     (6-input LUTs): LUT count, LUT levels between registers,
#                     deepest feedback loop; a table and build/synth/report.json
#                     (scripts/hw_figures.py; fails if a block misses its
#                     level target, <= 5 at W=512)
#   make bench-hw     test-hw, then every figure the testbenches measured
#                     (beats per clock, latency in clocks, per-case figures;
#                     build/bench/<block>-W<w>.json) beside its baseline, as
#                     a table and build/bench/hw.json. After an intended
#                     change of a figure, record it (and commit the file):
#                     python3 scripts/hw_figures.py bench --update
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

VENV := .venv
PYTEST := $(VENV)/bin/pytest
DEPS_STAMP := $(VENV)/.deps.stamp
BUILD := build
LINT := $(BUILD)/lint

RTL_V := $(sort $(wildcard hw/rtl/*.v hw/rtl/*.sv))
# Headers `include'd by the modules (found through -y / -I hw/rtl).
RTL_VH := $(sort $(wildcard hw/rtl/*.vh))
RTL_VHDL := $(sort $(wildcard hw/rtl/vhdl/*.vhd))
# One module (or entity) per file, named after the file.
RTL_V_TOPS := $(basename $(notdir $(RTL_V)))
# VHDL packages (*_pkg.vhd) are analysed with the rest but have no entity.
RTL_VHDL_TOPS := $(filter-out %_pkg,$(basename $(notdir $(RTL_VHDL))))

.PHONY: deps test test-go test-interop test-hw test-hw-full lint-hw fuzz bench demo clean distclean

# --- dependencies ------------------------------------------------------------

deps: $(DEPS_STAMP)

$(DEPS_STAMP): scripts/deps.sh requirements.txt go.mod $(wildcard go.sum)
	GO='$(GO)' bash scripts/deps.sh
	touch $@

# --- tests -------------------------------------------------------------------

# The suites run two at a time on the two cores; -O keeps their logs apart.
test: deps
	$(MAKE) --no-print-directory -j2 -O test-go test-interop test-hw

test-go: deps
	$(GO) vet ./...
	$(GO) test -race -count=1 $$($(GO) list ./... | grep -v '/interop$$')

# The guest image is built on first use into build/interop/guest (Debian
# packages, about 220 MB); the run leaves build/interop/siw-rping.pcap.
test-interop: deps
	$(GO) test -race -count=1 -v ./interop

# The bench check costs under a second: the benches ran above.
test-hw: lint-hw deps
	$(PYTEST) $(PYTEST_FLAGS) -n $(HW_JOBS) --dist load tests/
	python3 scripts/hw_figures.py bench

test-hw-full:
	HW_ALL_WIDTHS=1 $(MAKE) --no-print-directory test-hw

# Lint results are stamped per file, so an unchanged file is not linted again.
# Each stamp depends on every source file: a module's lint covers the
# submodules it instantiates.
lint-hw: $(RTL_V_TOPS:%=$(LINT)/verilator/%.ok) $(RTL_V_TOPS:%=$(LINT)/yosys/%.ok)
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

$(LINT)/verilator/%.ok: $(RTL_V) $(RTL_VH) | deps
	@mkdir -p $(@D)
	verilator --lint-only -Wall -y hw/rtl --top-module $* $(filter %/$*.v %/$*.sv,$(RTL_V))
	@touch $@

# Blocks are synthesised with sdp_ram's block-RAM stand-in
# (RNIC_SYNTH_ESTIMATE): Yosys' generic flow would turn every per-connection
# and STag table into flip-flops (megabits: minutes and gigabytes). sdp_ram
# itself is synthesised as written.
$(LINT)/yosys/%.ok: $(RTL_V) $(RTL_VH) | deps
	@mkdir -p $(@D)
	yosys -q -l $(@:.ok=.log) -p 'read_verilog -sv -I hw/rtl $(if $(filter sdp_ram,$*),,-DRNIC_SYNTH_ESTIMATE) $(RTL_V); synth -top $*'
	@touch $@

$(LINT)/ghdl/all.ok: $(RTL_VHDL) | deps
	@rm -rf $(@D) && mkdir -p $(@D)
	cd $(@D) && ghdl -i --std=08 $(abspath $(RTL_VHDL))
	cd $(@D) && for top in $(RTL_VHDL_TOPS); do ghdl -m --std=08 $$top; done
	@touch $@

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

# --- demo --------------------------------------------------------------------

demo: deps
	GO='$(GO)' bash scripts/demo.sh

# --- cleaning ----------------------------------------------------------------

clean:
	rm -rf $(BUILD)
	find tests -name __pycache__ -type d -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
