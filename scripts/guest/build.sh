#!/usr/bin/env bash
# Build the interop guest: a Debian bookworm kernel and a small initramfs in
# which Linux soft-iWARP (siw) is loaded, a siw device (siw0) is attached to
# eth0, and rdma-core's rping and friends are ready to run. QEMU boots it
# (internal/qemuguest drives that); the guest runs a per-run script and powers
# off.
#
#   scripts/guest/build.sh OUTDIR        (default OUTDIR: build/interop/guest)
#
# Outputs in OUTDIR:
#   vmlinux       the Debian kernel, uncompressed ELF, booted through its PVH
#                 entry point (twice as fast to READY under TCG as vmlinuz)
#   vmlinuz       the Debian kernel, as shipped (bzImage)
#   initrd.img    uncompressed newc cpio: busybox, rdma-core, iproute2's rdma,
#                 the kernel modules (siw.ko built here), /init
#   manifest.txt  kernel release, every package and version used, the module
#                 load order, the optional modules (in the image, loaded by
#                 a run's script), and the SHA-256 of both images
#   stamp         hash of this script's inputs; a rerun with the same inputs
#                 does nothing (well under a second, and no network)
#
# Caches, also under OUTDIR: debs/ (downloaded .deb files, verified by apt
# against the signed archive indexes), siw-<version>/ (siw sources and the
# built module). Nothing is written outside OUTDIR; rm -rf OUTDIR starts over.
#
# Debian's kernels are built without siw (CONFIG_RDMA_SIW is not set), so
# siw.ko is compiled here out of tree from linux-source-6.1 against the
# linux-headers of exactly the same Debian version: the module's vermagic and
# symbol versions must match the guest kernel.
#
# Versions are pinned below. If the mirror no longer has a pinned version, the
# newest available one is used instead, with a warning, and recorded in the
# manifest. Environment: GUEST_KERNEL_VERSION overrides the kernel's Debian
# version (e.g. 6.1.192-2).
#
# Host tools needed (scripts/deps.sh installs them): apt-get, dpkg-deb, xz,
# gcc-12, make, kmod (depmod, modprobe, modinfo), cpio, binutils (readelf),
# flock. Guest contents come only from the downloaded packages, never from the
# host's files.
set -euo pipefail

# depmod and modprobe live in /usr/sbin, which a user's PATH may lack.
PATH="$PATH:/usr/sbin:/sbin"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(cd "$here/../.." && pwd)"

say() { printf 'guest: %s\n' "$*" >&2; }
die() {
	printf 'guest: error: %s\n' "$*" >&2
	exit 1
}

out="${1:-$repo_root/build/interop/guest}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

# --- pinned versions ----------------------------------------------------------

# Debian version of linux-image/-headers/-kbuild/-source (all four must match),
# and the kernel ABI name it comes with.
pinned_kernel_version=6.1.176-1
pinned_kernel_abi=6.1.0-50 # the ABI name that version comes with
kernel_version="${GUEST_KERNEL_VERSION:-$pinned_kernel_version}"

# Userspace, from bookworm. busybox-static supplies the shell and the small
# tools; rdmacm-utils rping (and rdma_server, ucmatose, ...); ibverbs-utils
# ibv_devinfo; ibverbs-providers the siw provider (libsiw-rdmav34.so and
# /etc/libibverbs.d/siw.driver); iproute2 the `rdma` tool. The rest are the
# libraries those need (checked below by reading ELF NEEDED entries).
user_pins=(
	busybox-static=1:1.35.0-4+deb12u1+b1
	rdmacm-utils=44.0-2
	ibverbs-utils=44.0-2
	librdmacm1=44.0-2
	libibverbs1=44.0-2
	ibverbs-providers=44.0-2
	libnl-3-200=3.7.0-0.2+b1
	libnl-route-3-200=3.7.0-0.2+b1
	iproute2=6.1.0-3
	libmnl0=1.0.4-3
	libbsd0=0.11.7-2
	libmd0=1.0.4-2
	libcap2=1:2.66-4+deb12u3+b1
	libc6=2.36-9+deb12u14
	libgcc-s1=12.2.0-14+deb12u1
)

# Kernel modules to load, in any order: their dependencies are added and the
# load order computed with modprobe against the staged tree.
modules=(
	virtio_pci virtio_net
	crc32c_generic crc32c_intel libcrc32c
	ib_core iw_cm ib_cm rdma_cm ib_uverbs rdma_ucm siw
)
# Kernel modules put in the image (with their dependencies) but not loaded at
# boot: a run's script loads them with modprobe. VFIO's container/group API
# and its PCI driver, and uio_pci_generic as a host driver that claims a
# device's DMA, for the vfio backend's test (interop/vfio_test.go: QEMU's edu
# device behind intel-iommu); sctp (with its UDP tunnel and CRC32c
# dependencies) for the DDP/SCTP interop (interop/ddpsctp_test.go).
optional_modules=(vfio vfio_iommu_type1 vfio_pci uio_pci_generic sctp)

# Binaries copied into the guest (paths in the staged tree). Their shared
# libraries are found from their NEEDED entries. Plus what is loaded with
# dlopen(): the siw verbs provider, and libgcc_s (glibc's pthread_exit and
# pthread_cancel load it, and rping's threads call pthread_exit).
guest_bins=(
	usr/bin/rping usr/bin/rdma_server usr/bin/rdma_client usr/bin/rcopy
	usr/bin/ucmatose usr/bin/udaddy usr/bin/mckey usr/bin/rstream
	usr/bin/riostream usr/bin/cmtime usr/bin/udpong
	usr/bin/ibv_devinfo usr/bin/ibv_devices
	usr/bin/rdma
)
guest_dlopen=(
	usr/lib/x86_64-linux-gnu/libibverbs/libsiw-rdmav34.so
	lib/x86_64-linux-gnu/libgcc_s.so.1
)

# --- stamp: nothing to do when the inputs are unchanged ------------------------

want_stamp="$(
	{
		sha256sum "$here/build.sh" "$here/init"
		printf 'kernel %s\n' "$kernel_version"
	} | sha256sum | cut -d' ' -f1
)"
outputs_ok() {
	[[ -f $out/stamp && -s $out/vmlinux && -s $out/vmlinuz && -s $out/initrd.img && -s $out/manifest.txt &&
		$(cat "$out/stamp") == "$want_stamp" ]]
}
if outputs_ok; then
	exit 0
fi

# One build at a time per OUTDIR (two test binaries may ask at once); the
# second waits and then finds the stamp in place.
exec 9>"$out/.lock"
flock 9
if outputs_ok; then
	exit 0
fi

started=$SECONDS

# --- host tools ------------------------------------------------------------------

need=(apt-get apt-cache dpkg-deb xz tar gcc-12 make depmod modprobe modinfo cpio readelf strip flock sha256sum)
missing=()
for tool in "${need[@]}"; do
	command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if ((${#missing[@]} > 0)); then
	die "missing host tools: ${missing[*]}; run scripts/deps.sh (or: apt-get install cpio kmod gcc-12 make xz-utils binutils libelf1 util-linux)"
fi

as_root() {
	if [[ $(id -u) -eq 0 ]]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		die "need root (or sudo) for: $*"
	fi
}

# --- resolve versions -------------------------------------------------------------

apt_updated=0
apt_update() {
	if ((apt_updated == 0)); then
		say "running apt-get update"
		as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq ||
			die "apt-get update failed: is a Debian mirror reachable?"
		apt_updated=1
	fi
}

# Every apt-cache call costs about half a second here (no binary package
# cache), so apt is asked about all the packages at once.
declare -A avail=() # "name=version" for every version apt knows
known() {
	local n v
	while IFS='|' read -r n v _; do
		n="${n// /}" v="${v// /}"
		[[ -n $n && -n $v ]] && avail["$n=$v"]=1
	done < <(apt-cache madison "$@" 2>/dev/null || true)
}
has() { [[ -n ${avail["$1=$2"]:-} ]]; }
candidate() {
	apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ && $2 != "(none)" {print $2}'
}

kernel_pkgs() { # VERSION ABI: the kernel packages, as name=version, in kpkgs
	kpkgs=("linux-image-$2-amd64=$1" "linux-headers-$2-amd64=$1"
		"linux-headers-$2-common=$1" "linux-kbuild-6.1=$1" "linux-source-6.1=$1")
}
all_known() { # name=version...
	local pin
	for pin; do
		has "${pin%%=*}" "${pin#*=}" || return 1
	done
}
ask_apt() {
	avail=()
	known linux-source-6.1 linux-kbuild-6.1 "linux-image-$pinned_kernel_abi-amd64" \
		"linux-headers-$pinned_kernel_abi-amd64" "linux-headers-$pinned_kernel_abi-common" \
		"${user_pins[@]%%=*}"
}

warnings=()
ask_apt
# Empty or stale package lists (a fresh machine, a container): update once.
kernel_pkgs "$kernel_version" "$pinned_kernel_abi"
if ! all_known "${user_pins[@]}" "${kpkgs[@]}"; then
	apt_update
	ask_apt
fi

kernel_abi=""
if [[ $kernel_version == "$pinned_kernel_version" ]] && all_known "${kpkgs[@]}"; then
	kernel_abi="$pinned_kernel_abi"
else
	# Another version (asked for, or the pinned one is gone): find which ABI
	# name each linux-image-6.1.0-N-amd64 has, then take the asked version if
	# complete, else the newest complete one.
	mapfile -t images < <(apt-cache pkgnames linux-image-6.1.0- | grep -E '^linux-image-6\.1\.0-[0-9]+-amd64$' | sort -r -V)
	abis=() names=()
	for name in "${images[@]}"; do
		name="${name#linux-image-}"
		abi="${name%-amd64}"
		abis+=("$abi")
		names+=("linux-image-$abi-amd64" "linux-headers-$abi-amd64" "linux-headers-$abi-common")
	done
	((${#names[@]} > 0)) && known "${names[@]}"
	mapfile -t sources < <(printf '%s\n' "${!avail[@]}" | sed -n 's/^linux-source-6\.1=//p' | sort -r -V)
	for v in "$kernel_version" "${sources[@]}"; do
		for abi in "${abis[@]}"; do
			kernel_pkgs "$v" "$abi"
			if all_known "${kpkgs[@]}"; then
				kernel_abi="$abi"
				break 2
			fi
		done
	done
	[[ -n $kernel_abi ]] ||
		die "no Debian version has all of linux-source-6.1, linux-kbuild-6.1, linux-image-6.1.0-N-amd64 and linux-headers-6.1.0-N-{amd64,common}: check the apt sources (bookworm and bookworm-security)"
	if [[ $v != "$kernel_version" ]]; then
		warnings+=("kernel $kernel_version is not on the mirror; using $v")
	fi
	kernel_version="$v"
fi
krel="${kernel_abi}-amd64"

kernel_pkgs "$kernel_version" "$kernel_abi"
pins=("${kpkgs[@]}")
for pin in "${user_pins[@]}"; do
	name="${pin%%=*}" ver="${pin#*=}"
	if ! has "$name" "$ver"; then
		cand="$(candidate "$name")"
		[[ -n $cand ]] || die "package $name is not available from the apt sources"
		warnings+=("$name $ver is not on the mirror; using $cand")
		ver="$cand"
	fi
	pins+=("$name=$ver")
done
for w in "${warnings[@]}"; do
	say "warning: $w"
done

# --- download ---------------------------------------------------------------------

debs="$out/debs"
mkdir -p "$debs"
# deb_file NAME VERSION: the cached .deb, or nothing.
deb_file() {
	local f
	for f in "$debs/${1}_${2//:/%3a}_"*.deb; do
		[[ -f $f ]] && echo "$f" && return 0
	done
	return 0
}
fetch=()
for pin in "${pins[@]}"; do
	[[ -n $(deb_file "${pin%%=*}" "${pin#*=}") ]] || fetch+=("$pin")
done
if ((${#fetch[@]} > 0)); then
	say "downloading ${#fetch[@]} packages"
	rm -rf "$debs/partial" && mkdir -p "$debs/partial"
	# apt-get download checks each file against the signed archive index.
	# As root it warns that the _apt user cannot write here; that is harmless.
	if ! (cd "$debs/partial" && apt-get download -q "${fetch[@]}") >"$debs/download.log" 2>&1; then
		grep -v 'unsandboxed as root' "$debs/download.log" >&2 || true
		die "apt-get download failed for: ${fetch[*]}; is the Debian mirror reachable? (try apt-get update)"
	fi
	for pin in "${fetch[@]}"; do
		f=("$debs/partial/${pin%%=*}_"*.deb)
		[[ -f ${f[0]} ]] || die "download of $pin failed (apt-get download); is the Debian mirror reachable? try: apt-get update"
	done
	mv "$debs/partial/"*.deb "$debs/"
	rm -rf "$debs/partial"
fi

# --- stage: unpack the packages ------------------------------------------------

# Scratch space, removed on exit. tmpfs when there is one: unpacking the kernel
# headers' 10,000 small files takes 8 s on this kind of machine's disk and
# under 1 s on tmpfs. Only the caches and the outputs stay, under OUTDIR.
scratch_base="$out"
if [[ -d /dev/shm && -w /dev/shm ]] &&
	(($(df -Pk /dev/shm | awk 'NR == 2 {print $4}') > 2 * 1024 * 1024)); then
	scratch_base=/dev/shm
fi
work="$(mktemp -d "$scratch_base/qemuguest-build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
stage="$work/stage" # the packages unpacked, as on a Debian system
mkdir -p "$stage"

siw="$out/siw-$kernel_version" # cache: siw.ko for this kernel
build_siw=0
[[ -s $siw/siw.ko ]] || build_siw=1

if ((build_siw)); then
	say "building siw.ko for $krel"
	# Only drivers/infiniband/sw/siw from the ~140 MB source tarball; most of
	# the time is xz, so it runs while the other packages are unpacked.
	mkdir -p "$work/src"
	(
		dpkg-deb --fsys-tarfile "$(deb_file linux-source-6.1 "$kernel_version")" |
			tar -xO ./usr/src/linux-source-6.1.tar.xz |
			xz -dc |
			tar -x -C "$work/src" --strip-components=1 --wildcards 'linux-source-6.1/drivers/infiniband/sw/siw/*'
	) &
	src_pid=$!
fi

for pin in "${pins[@]}"; do
	case "${pin%%=*}" in
	linux-source-*) continue ;;
	linux-headers-* | linux-kbuild-*) ((build_siw)) || continue ;;
	esac
	dpkg-deb -x "$(deb_file "${pin%%=*}" "${pin#*=}")" "$stage"
done

# --- siw.ko ---------------------------------------------------------------------

if ((build_siw)); then
	wait "$src_pid" || die "extracting the siw sources from linux-source-6.1 $kernel_version failed"
	mod="$work/src/drivers/infiniband/sw/siw"
	[[ -f $mod/siw_main.c ]] || die "drivers/infiniband/sw/siw not found in linux-source-6.1 $kernel_version"
	hdr="$stage/usr/src/linux-headers-$krel"
	common="$stage/usr/src/linux-headers-${kernel_abi}-common"
	# The headers' Makefile includes the -common one by absolute path
	# (/usr/src/...); -f names the staged one instead, which makes it the
	# source tree, and -C makes the arch-specific directory the object tree.
	# The compiler is gcc-12, as for Debian's build (.kernelvariables).
	# No trace of the (random) scratch path, so that the module, its build
	# ID and the initrd are the same from build to build: __FILE__ in
	# WARN_ON() and friends reads drivers/infiniband/sw/siw/..., as in an
	# in-tree build, and the debug info that the build ID is computed over
	# names neither the directories nor the flags.
	make -s -C "$hdr" -f "$common/Makefile" M="$mod" CONFIG_RDMA_SIW=m \
		KCFLAGS="-ffile-prefix-map=$work/src/= -ffile-prefix-map=$work/stage/=/ -gno-record-gcc-switches" \
		-j"$(nproc)" modules 2>&1 |
		grep -v 'Skipping BTF generation' >&2 || true
	[[ -s $mod/siw.ko ]] || die "building siw.ko failed (see the compiler output above)"
	magic="$(modinfo -F vermagic "$mod/siw.ko")"
	[[ $magic == "$krel "* ]] || die "siw.ko vermagic '$magic' does not match $krel"
	rm -rf "$siw" "$siw.tmp"
	mkdir -p "$siw.tmp"
	# Without debug info (5 MB of it, and it names the build directory), like
	# Debian's own modules.
	strip --strip-debug -o "$siw.tmp/siw.ko" "$mod/siw.ko"
	mv "$siw.tmp" "$siw"
fi
mkdir -p "$stage/lib/modules/$krel/updates"
cp "$siw/siw.ko" "$stage/lib/modules/$krel/updates/siw.ko"
depmod -b "$stage" "$krel"

# --- assemble the initramfs root ---------------------------------------------------

root="$work/root"
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,lib,lib64,etc,proc,sys,dev,tmp,run,root,mnt,var/tmp}
chmod 1777 "$root/tmp" "$root/var/tmp"

# copy_staged PATH: copy one file (keeping its path) and, for a symlink, its
# target too.
copy_staged() {
	local rel="$1" dst target
	dst="$root/$rel"
	[[ -e $dst || -L $dst ]] && return 0
	[[ -e $stage/$rel || -L $stage/$rel ]] || die "$rel is not in the staged packages"
	mkdir -p "$(dirname "$dst")"
	cp -a "$stage/$rel" "$dst"
	if [[ -L $stage/$rel ]]; then
		target="$(readlink "$stage/$rel")"
		if [[ $target == /* ]]; then
			copy_staged "${target#/}"
		else
			copy_staged "$(dirname "$rel")/$target"
		fi
	fi
}

# Shared libraries: follow NEEDED entries through the staged tree's library
# directories, never the host's.
libdirs=(lib/x86_64-linux-gnu usr/lib/x86_64-linux-gnu lib64 lib usr/lib)
declare -A seen_elf=()
copy_with_libs() {
	local rel="$1" need dir found
	[[ -n ${seen_elf[$rel]:-} ]] && return 0
	seen_elf[$rel]=1
	copy_staged "$rel"
	while read -r need; do
		found=""
		for dir in "${libdirs[@]}"; do
			if [[ -e $stage/$dir/$need ]]; then
				found="$dir/$need"
				break
			fi
		done
		[[ -n $found ]] || die "$rel needs $need, which no staged package provides: add its package to user_pins in $0"
		copy_with_libs "$found"
	done < <(readelf -d "$stage/$rel" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
	# The program interpreter, for executables.
	local interp
	interp="$(readelf -l "$stage/$rel" 2>/dev/null | sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p')"
	if [[ -n $interp ]]; then
		copy_staged "${interp#/}"
	fi
}

for rel in "${guest_bins[@]}" "${guest_dlopen[@]}"; do
	copy_with_libs "$rel"
done
copy_staged etc/libibverbs.d/siw.driver

# busybox: one static binary, and a symlink for each applet not provided above.
cp "$stage/bin/busybox" "$root/bin/busybox"
while read -r applet; do
	[[ $applet == bin/busybox ]] && continue
	[[ -e $root/$applet || -L $root/$applet ]] && continue
	mkdir -p "$root/$(dirname "$applet")"
	ln -s /bin/busybox "$root/$applet"
done < <("$root/bin/busybox" --list-full)

# Kernel modules: the load order, then the files and a depmod'ed tree so that
# busybox modprobe (and the kernel's request_module) work too.
mapfile -t load < <(
	modprobe -d "$stage" -S "$krel" -a --show-depends "${modules[@]}" |
		awk '$1 == "insmod" {print $2}' | awk '!seen[$0]++'
)
((${#load[@]} > 0)) || die "modprobe found none of the modules: ${modules[*]}"
mkdir -p "$root/etc/qemuguest"
: >"$root/etc/qemuguest/modules"
for path in "${load[@]}"; do
	rel="${path#"$stage/lib/modules/$krel/"}"
	mkdir -p "$root/lib/modules/$krel/$(dirname "$rel")"
	cp "$path" "$root/lib/modules/$krel/$rel"
	printf '%s\n' "$rel" >>"$root/etc/qemuguest/modules"
done
mapfile -t optional < <(
	modprobe -d "$stage" -S "$krel" -a --show-depends "${optional_modules[@]}" |
		awk '$1 == "insmod" {print $2}' | awk '!seen[$0]++'
)
((${#optional[@]} > 0)) || die "modprobe found none of the optional modules: ${optional_modules[*]}"
for path in "${optional[@]}"; do
	rel="${path#"$stage/lib/modules/$krel/"}"
	mkdir -p "$root/lib/modules/$krel/$(dirname "$rel")"
	cp "$path" "$root/lib/modules/$krel/$rel"
done
cp "$stage/lib/modules/$krel/"modules.{order,builtin,builtin.modinfo} "$root/lib/modules/$krel/"
depmod -b "$root" "$krel"

# Small /etc.
printf 'root:x:0:0:root:/root:/bin/sh\n' >"$root/etc/passwd"
printf 'root:x:0:\n' >"$root/etc/group"
printf '127.0.0.1\tlocalhost\n10.0.2.15\tguest\n10.0.2.2\thost\n' >"$root/etc/hosts"
printf 'guest\n' >"$root/etc/hostname"
printf '%s\n' "$krel" >"$root/etc/qemuguest/kernel-release"
install -m 0755 "$here/init" "$root/init"

# --- outputs ------------------------------------------------------------------------

# Fixed timestamps and --reproducible: the same inputs give the same image.
find "$root" -exec touch -h -d @0 {} +
(cd "$root" && find . -mindepth 1 | LC_ALL=C sort |
	cpio --quiet -o -H newc -R 0:0 --reproducible) >"$work/initrd.img"
cp "$stage/boot/vmlinuz-$krel" "$work/vmlinuz"
# The uncompressed kernel too: QEMU boots an ELF vmlinux through its PVH entry
# point (CONFIG_PVH=y), which skips the bzImage's xz decompression, about
# 3.5 s of the 7.5 s it takes under TCG to reach READY. The payload is the
# first xz stream in the bzImage (CONFIG_KERNEL_XZ=y).
xz_at="$(
	set +o pipefail
	LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$work/vmlinuz" | head -n1 | cut -d: -f1
)"
[[ -n $xz_at ]] || die "no xz stream in vmlinuz-$krel (is CONFIG_KERNEL_XZ still set?)"
tail -c +$((xz_at + 1)) "$work/vmlinuz" >"$work/vmlinux.xz"
xz -dc --single-stream "$work/vmlinux.xz" >"$work/vmlinux" ||
	die "decompressing vmlinuz-$krel failed"
# XEN_ELFNOTE_PHYS32_ENTRY (type 0x12) is the PVH entry point QEMU needs.
readelf -n "$work/vmlinux" | grep 'Unknown note type: (0x00000012)' >/dev/null ||
	die "vmlinux from vmlinuz-$krel has no PVH entry note"

{
	printf '# interop guest built by scripts/guest/build.sh; see internal/qemuguest\n'
	printf 'kernel-release %s\n' "$krel"
	printf 'kernel-version %s\n' "$kernel_version"
	for pin in "${pins[@]}"; do
		printf 'package %s %s\n' "${pin%%=*}" "${pin#*=}"
	done
	while read -r m; do
		printf 'module %s\n' "$m"
	done <"$root/etc/qemuguest/modules"
	for m in "${optional_modules[@]}"; do
		printf 'optional-module %s\n' "$m"
	done
	for w in "${warnings[@]}"; do
		printf 'warning %s\n' "$w"
	done
	(cd "$work" && sha256sum vmlinux vmlinuz initrd.img) | awk '{print "sha256", $2, $1}'
} >"$work/manifest.txt"

rm -f "$out/stamp"
for f in vmlinux vmlinuz initrd.img manifest.txt; do
	cp "$work/$f" "$out/.$f.tmp"
	mv -f "$out/.$f.tmp" "$out/$f"
done
printf '%s\n' "$want_stamp" >"$out/stamp"
say "built $out (kernel $krel, Debian $kernel_version, initrd $(($(stat -c %s "$out/initrd.img") / 1024)) KiB) in $((SECONDS - started)) s"
