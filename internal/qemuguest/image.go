// Package qemuguest boots a small Linux guest under QEMU in which Linux
// soft-iWARP (siw) and rdma-core's rping run, for interoperability tests
// against the project's own iWARP stack.
//
// The guest is a Debian bookworm kernel with siw.ko built for it out of tree
// (Debian's kernels leave CONFIG_RDMA_SIW unset) and an initramfs holding
// busybox, rdma-core (rping, rdma_server, ucmatose, ibv_devinfo, ...) and
// iproute2's rdma tool. scripts/guest/build.sh builds it from Debian packages
// into build/interop/guest; [Ensure] runs that script (a rerun costs nothing).
//
// A booted guest has eth0 at [GuestIP] (10.0.2.15/24) on QEMU's user-mode
// network and siw0 attached to it. It reaches the host's loopback at [HostIP]
// (10.0.2.2): a guest `rping -c -a 10.0.2.2 -p PORT` talks to a host listener
// on 127.0.0.1:PORT. The host reaches a guest port through a [Forward]. The
// guest has no default route, so it reaches nothing else.
//
// Each guest runs one shell script (busybox ash) and powers off; [Guest.Wait]
// returns the script's exit status. A sketch:
//
//	img, err := qemuguest.Ensure(ctx, "") // build/interop/guest
//	g, err := qemuguest.Start(ctx, img, qemuguest.Options{
//		Script:   "rping -s -a 10.0.2.15 -p 7174 -v -C 10",
//		Forwards: []qemuguest.Forward{{GuestPort: 7174}}, // host port chosen
//		Pcap:     "guest.pcap",
//	})
//	defer g.Kill()
//	err = g.WaitReady(ctx)       // siw0 is up: about 4 s on a 2-core machine
//	addr := g.HostAddr(7174)     // 127.0.0.1:NNNNN, forwarded to the guest
//	// ... run the project's rping client against addr, or wait for a line
//	// the script prints with g.WaitFor(ctx, "...") ...
//	status, err := g.Wait(ctx)   // the script's exit status
//	fmt.Print(g.ScriptOutput())
//
// Guests are independent: each has its own user-mode network, so several can
// run at once (all of them at 10.0.2.15); they reach each other only through
// host forwards.
package qemuguest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Image is a built guest: the files scripts/guest/build.sh made and what its
// manifest says about them.
type Image struct {
	// Dir is the directory holding the image (and the build's caches).
	Dir string
	// Kernel is the uncompressed kernel (vmlinux), which QEMU boots through
	// its PVH entry point; BzImage is the same kernel as Debian ships it
	// (vmlinuz), slower to boot under emulation (Options.BzImage).
	Kernel, BzImage string
	// Initrd is the base initramfs (an uncompressed newc cpio archive).
	Initrd string
	// KernelRelease is the kernel's release (uname -r), like 6.1.0-50-amd64;
	// KernelVersion the Debian package version, like 6.1.176-1.
	KernelRelease, KernelVersion string
	// Packages maps every Debian package the image was made from to its
	// version.
	Packages map[string]string
	// Modules lists the kernel modules the guest loads, in order, relative
	// to /lib/modules/<release>.
	Modules []string
	// Warnings holds the build's warnings, such as a pinned package version
	// that the mirror no longer had and was replaced.
	Warnings []string
}

// DefaultDir returns the image directory tests share: build/interop/guest in
// the repository (so `make clean` removes it).
func DefaultDir() (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "build", "interop", "guest"), nil
}

// BuildScript returns the path of scripts/guest/build.sh.
func BuildScript() (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "scripts", "guest", "build.sh"), nil
}

// repoRoot finds the repository: the first directory, from the working
// directory up, holding scripts/guest/build.sh; failing that, the one this
// source file was compiled from.
func repoRoot() (string, error) {
	const rel = "scripts/guest/build.sh"
	if wd, err := os.Getwd(); err == nil {
		for dir := wd; ; dir = filepath.Dir(dir) {
			if fileExists(filepath.Join(dir, rel)) {
				return dir, nil
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		dir := filepath.Join(filepath.Dir(file), "..", "..")
		if fileExists(filepath.Join(dir, rel)) {
			return filepath.Clean(dir), nil
		}
	}
	return "", errors.New("qemuguest: cannot find " + rel + ": run from inside the openrnic repository")
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// Ensure builds the guest image in dir (DefaultDir when dir is empty) unless
// it is already up to date, and returns it. The first build downloads about
// 220 MB of Debian packages and takes half a minute; later calls return at
// once. Two processes may call it at the same time: the build script takes a
// lock.
func Ensure(ctx context.Context, dir string) (*Image, error) {
	return EnsureLog(ctx, dir, nil)
}

// EnsureLog is Ensure, also copying the build script's progress messages to
// log (when not nil) as they come.
func EnsureLog(ctx context.Context, dir string, log io.Writer) (*Image, error) {
	script, err := BuildScript()
	if err != nil {
		return nil, err
	}
	if dir == "" {
		if dir, err = DefaultDir(); err != nil {
			return nil, err
		}
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		return nil, errors.New("qemuguest: bash not found in PATH")
	}
	var out lockedBuffer
	var w io.Writer = &out
	if log != nil {
		w = io.MultiWriter(&out, log)
	}
	cmd := exec.CommandContext(ctx, bash, script, dir)
	cmd.Stdout = w
	cmd.Stderr = w
	cmd.WaitDelay = waitDelay
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("qemuguest: building the guest image in %s: %w", dir, ctx.Err())
		}
		return nil, fmt.Errorf("qemuguest: %s %s failed (%v):\n%s\n"+
			"It needs the host packages scripts/deps.sh installs (qemu-system-x86, cpio, kmod, gcc-12, ...) "+
			"and a reachable Debian mirror for apt-get download; rm -rf %s starts over",
			script, dir, err, strings.TrimRight(tail(out.String(), 40), "\n"), dir)
	}
	return Open(dir)
}

// Open returns the image already built in dir, reading its manifest. It
// builds nothing (see Ensure).
func Open(dir string) (*Image, error) {
	img := &Image{
		Dir:      dir,
		Kernel:   filepath.Join(dir, "vmlinux"),
		BzImage:  filepath.Join(dir, "vmlinuz"),
		Initrd:   filepath.Join(dir, "initrd.img"),
		Packages: map[string]string{},
	}
	manifest := filepath.Join(dir, "manifest.txt")
	data, err := os.ReadFile(manifest)
	if err != nil {
		return nil, fmt.Errorf("qemuguest: no guest image in %s (%w): build it with Ensure or scripts/guest/build.sh", dir, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		key, rest, _ := strings.Cut(sc.Text(), " ")
		switch key {
		case "kernel-release":
			img.KernelRelease = rest
		case "kernel-version":
			img.KernelVersion = rest
		case "package":
			name, ver, _ := strings.Cut(rest, " ")
			img.Packages[name] = ver
		case "module":
			img.Modules = append(img.Modules, rest)
		case "warning":
			img.Warnings = append(img.Warnings, rest)
		}
	}
	if img.KernelRelease == "" {
		return nil, fmt.Errorf("qemuguest: %s names no kernel-release", manifest)
	}
	for _, f := range []string{img.Kernel, img.BzImage, img.Initrd} {
		if !fileExists(f) {
			return nil, fmt.Errorf("qemuguest: %s is missing: rebuild with scripts/guest/build.sh %s", f, dir)
		}
	}
	return img, nil
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' {
			n--
			if n == 0 {
				return s[i+1:] + "\n"
			}
		}
	}
	return s + "\n"
}
