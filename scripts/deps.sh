#!/usr/bin/env bash
# Install everything the build and the tests need, on a developer machine or a
# fresh CI machine (Debian bookworm). Idempotent, and silent when nothing is
# missing, so `make` can call it before every target.
#
#   1. Debian packages (simulators, synthesis, tshark, and what Verilator
#      needs to compile its C++), with apt-get; `apt-get update` runs only
#      when something is missing.
#   2. A Python virtualenv in .venv/ built from requirements.txt. It is
#      rebuilt from scratch whenever requirements.txt (or the interpreter)
#      changes, so it never holds anything that is not pinned there.
#   3. Go modules (`go mod download`).
#
# Environment:
#   PYTHON  interpreter for the virtualenv (default: Debian's /usr/bin/python3)
#   GO      go command (default: go)
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

say() { printf 'deps: %s\n' "$*" >&2; }

as_root() {
	if [[ $(id -u) -eq 0 ]]; then
		"$@"
	else
		sudo "$@"
	fi
}

# The interpreter cocotb embeds into the simulators. Debian's python3 is
# preferred over whatever else is on PATH (pyenv, say) because its shared
# libpython comes from a Debian package that this script can install.
if [[ -z ${PYTHON:-} ]]; then
	if [[ -x /usr/bin/python3 ]]; then
		PYTHON=/usr/bin/python3
	else
		PYTHON=python3
	fi
fi
GO="${GO:-go}"

# --- 1. Debian packages -----------------------------------------------------

packages=(
	verilator iverilog ghdl yosys tshark
	# Verilator turns the design into C++ that cocotb's runner compiles;
	# ccache keeps the objects every model shares (Verilator's runtime),
	# compiled once per run (tests/hdlsim.py).
	g++ make perl ccache
	# For the virtualenv and for the libpython that cocotb loads into the
	# simulator process.
	python3-venv
	# The interop guest (scripts/guest/build.sh, internal/qemuguest): QEMU
	# boots it; cpio, kmod (depmod, modprobe) and xz-utils assemble it from
	# downloaded Debian packages; gcc-12 (the compiler Debian's kernel was
	# built with), binutils and libelf1 (for kbuild's objtool) build siw.ko;
	# libc6-dev's headers build the preload library the teardown-race
	# interop case puts under the guest's rping (interop/testdata).
	qemu-system-x86 cpio kmod xz-utils gcc-12 binutils libelf1 libc6-dev
)
if [[ $PYTHON == /usr/bin/python3* ]]; then
	py_ver="$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
	packages+=("libpython${py_ver}")
fi

missing=()
for pkg in "${packages[@]}"; do
	status="$(dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null || true)"
	if [[ $status != ii* ]]; then
		missing+=("$pkg")
	fi
done

if ((${#missing[@]} > 0)); then
	say "installing Debian packages: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends "${missing[@]}" >/dev/null
fi

# --- 2. Python virtualenv ---------------------------------------------------

venv=.venv
stamp="$venv/.requirements.sha256"
# The stamp covers the requirements and the interpreter the venv was made from.
want="$(
	{
		sha256sum requirements.txt
		"$PYTHON" -c 'import sys; print(sys.executable, sys.version)'
	} | sha256sum | cut -d' ' -f1
)"
have="$(cat "$stamp" 2>/dev/null || true)"

if [[ $want != "$have" || ! -x $venv/bin/python ]]; then
	say "building $venv from requirements.txt with $PYTHON"
	rm -rf "$venv"
	"$PYTHON" -m venv "$venv"
	PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/python" -m pip install \
		--quiet --no-input --require-virtualenv -r requirements.txt
	# pip's resolver already refused conflicts; this also catches a package
	# whose declared requirements do not hold.
	"$venv/bin/python" -m pip check >/dev/null
	printf '%s\n' "$want" >"$stamp"
fi

# --- 3. Go modules ----------------------------------------------------------

"$GO" mod download
