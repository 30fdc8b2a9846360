package qemuguest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Addresses on QEMU's user-mode network, as the guest sees them.
const (
	// GuestIP is the guest's eth0 address (10.0.2.0/24); siw0 is bound to
	// eth0.
	GuestIP = "10.0.2.15"
	// HostIP is the host's loopback as the guest sees it: a guest
	// connection to 10.0.2.2:PORT arrives at 127.0.0.1:PORT on the host,
	// from 127.0.0.1.
	HostIP = "10.0.2.2"
)

// Forward makes a guest TCP (or UDP) port reachable from the host.
//
// QEMU's user-mode network ends TCP on each side of it: a host connection to
// the forward is accepted at once, whether or not the guest listens, and is
// closed (EOF, not a reset) when the guest refuses it. So connect only once
// the guest's server listens (have the script print a line when it does and
// use WaitFor), and do not read a successful connect as proof that it does.
// For the same reason the TCP segments the host sees are QEMU's, not the
// guest's: look at the guest's own segmentation in the Pcap capture.
type Forward struct {
	// HostAddr is the IPv4 host address QEMU listens on. Empty, or with
	// port 0 ("127.0.0.1:0"), a free port is chosen; Guest.Forwards and
	// Guest.HostAddr tell which.
	HostAddr string
	// GuestPort is the TCP port on GuestIP that connections are forwarded
	// to.
	GuestPort int
	// UDP forwards UDP datagrams instead: QEMU relays them to GuestPort
	// and the guest's answers back to the sender (for SCTP over UDP,
	// RFC 6951).
	UDP bool
}

// Options describe one run of the guest.
type Options struct {
	// Script is run by /bin/sh (busybox ash) in the guest once siw0 is up,
	// in /root with standard input from /dev/null. Its output goes to the
	// console (Guest.ScriptOutput); its exit status is what Guest.Wait
	// returns. Empty, the guest powers off as soon as it is ready.
	Script string
	// Files are put into the guest before it boots, by absolute path
	// (replacing a file of the image of the same name), with mode 0755 when
	// the contents start with "#!", else 0644.
	Files map[string][]byte
	// Forwards are the host-to-guest TCP port forwards.
	Forwards []Forward
	// Pcap, when set, is a file QEMU writes every Ethernet frame of the
	// guest's NIC to (pcap, link type Ethernet), through filter-dump.
	// Traffic the guest sends itself (to 10.0.2.15) never reaches the NIC.
	Pcap string
	// Log, when set, receives the console output as it comes (with
	// carriage returns removed), e.g. for t.Log or os.Stderr.
	Log io.Writer
	// MemoryMiB is the guest's memory (default 768).
	MemoryMiB int
	// CPUs is the number of virtual CPUs (default 1: under TCG a second
	// one makes booting slower on a 2-core host).
	CPUs int
	// KernelArgs are appended to the kernel command line.
	KernelArgs string
	// BzImage boots the kernel as Debian ships it (vmlinuz) instead of the
	// uncompressed vmlinux: 3 to 4 s slower, for checking the PVH path.
	BzImage bool
	// QEMU is the emulator binary (default qemu-system-x86_64 from PATH).
	QEMU string
	// Machine is QEMU's machine type (default "pc", i440FX); "q35" for a
	// PCI Express machine, which an emulated IOMMU (intel-iommu) needs.
	Machine string
	// Devices are extra -device arguments, each one device in QEMU's
	// syntax ("intel-iommu", "edu,addr=04.0"), given to QEMU in this
	// order before the guest's NIC.
	Devices []string
}

// Guest is a running (or finished) QEMU guest.
type Guest struct {
	forwards []Forward
	cmd      *exec.Cmd
	tmp      string
	start    time.Time
	stderr   lockedBuffer
	done     chan struct{} // closed when QEMU has exited and all is collected

	mu        sync.Mutex
	console   []byte // all console output, carriage returns removed
	line      []byte // the unfinished last line, for the marker parser
	changed   chan struct{}
	ready     bool
	readyWall time.Duration
	readyUp   time.Duration
	failed    string // the QEMUGUEST-FAIL reason
	exited    bool   // a QEMUGUEST-EXIT line was seen
	status    int
	scriptLo  int // console offsets of the script's output
	scriptHi  int
	killed    bool
	waitErr   error // QEMU's exit
}

// waitDelay bounds how long Wait lingers on a killed process's output.
const waitDelay = 5 * time.Second

var markerRE = regexp.MustCompile(`QEMUGUEST-(INIT|READY|FAIL|EXIT)\b ?(.*)`)

// Start boots img under QEMU (TCG: no KVM is needed) with the given options
// and returns at once; use WaitReady, WaitFor and Wait. The guest is killed
// when ctx is done. Call Kill (or Wait) to release it.
func Start(ctx context.Context, img *Image, opts Options) (*Guest, error) {
	if img == nil {
		return nil, errors.New("qemuguest: nil image")
	}
	qemu := opts.QEMU
	if qemu == "" {
		qemu = "qemu-system-x86_64"
	}
	qemuPath, err := exec.LookPath(qemu)
	if err != nil {
		return nil, fmt.Errorf("qemuguest: %s not found: install QEMU with scripts/deps.sh (Debian package qemu-system-x86)", qemu)
	}
	kernel := img.Kernel
	if opts.BzImage {
		kernel = img.BzImage
	}
	for _, f := range []string{kernel, img.Initrd} {
		if !fileExists(f) {
			return nil, fmt.Errorf("qemuguest: %s is missing: rebuild the image with Ensure or scripts/guest/build.sh", f)
		}
	}
	mem := opts.MemoryMiB
	if mem == 0 {
		mem = 768
	}
	cpus := opts.CPUs
	if cpus == 0 {
		cpus = 1
	}
	machine := opts.Machine
	if machine == "" {
		machine = "pc"
	}

	g := &Guest{done: make(chan struct{}), changed: make(chan struct{})}
	ok := false
	g.tmp, err = os.MkdirTemp("", "qemuguest-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if !ok {
			os.RemoveAll(g.tmp)
		}
	}()

	initrd := img.Initrd
	if opts.Script != "" || len(opts.Files) > 0 {
		if initrd, err = runInitrd(g.tmp, img.Initrd, opts); err != nil {
			return nil, err
		}
	}

	netdev := "user,id=net0,ipv6=off"
	for _, f := range opts.Forwards {
		rf, err := resolveForward(f)
		if err != nil {
			return nil, err
		}
		g.forwards = append(g.forwards, rf)
		host, port, _ := net.SplitHostPort(rf.HostAddr)
		proto := "tcp"
		if rf.UDP {
			proto = "udp"
		}
		netdev += fmt.Sprintf(",hostfwd=%s:%s:%s-%s:%d", proto, host, port, GuestIP, rf.GuestPort)
	}

	args := []string{
		"-nodefaults", "-no-user-config",
		"-machine", machine, "-accel", "tcg", "-cpu", "max",
		"-smp", strconv.Itoa(cpus), "-m", strconv.Itoa(mem),
		"-display", "none", "-serial", "stdio", "-no-reboot",
		"-kernel", kernel, "-initrd", initrd,
		// no_timer_check: under TCG on a loaded host the kernel's check
		// that the timer interrupt arrives through the IO-APIC can miss
		// its window and panic ("IO-APIC + timer doesn't work"), seen
		// with the host at load 16; the timer itself works.
		"-append", strings.TrimSpace("console=ttyS0 quiet panic=-1 mitigations=off no_timer_check " + opts.KernelArgs),
		"-netdev", netdev,
	}
	// The extra devices come first: QEMU wants an IOMMU before the PCI
	// devices it translates for.
	for _, d := range opts.Devices {
		args = append(args, "-device", d)
	}
	// romfile= : no iPXE option ROM, which -kernel boots never use.
	args = append(args, "-device", "virtio-net-pci,netdev=net0,romfile=")
	if opts.Pcap != "" {
		pcap, err := filepath.Abs(opts.Pcap)
		if err != nil {
			return nil, err
		}
		if strings.Contains(pcap, ",") {
			return nil, fmt.Errorf("qemuguest: pcap path %q has a comma, which QEMU's option syntax cannot take", pcap)
		}
		args = append(args, "-object", "filter-dump,id=dump0,netdev=net0,file="+pcap)
	}

	g.cmd = exec.Command(qemuPath, args...)
	g.cmd.Stdin = nil // /dev/null: nothing is typed on the console
	g.cmd.Stdout = &consoleWriter{g: g, log: opts.Log}
	g.cmd.Stderr = &g.stderr
	g.cmd.WaitDelay = waitDelay
	// QEMU goes when the test process does, even when killed.
	g.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	g.start = time.Now()
	if err := g.cmd.Start(); err != nil {
		return nil, fmt.Errorf("qemuguest: starting %s: %w", qemuPath, err)
	}
	ok = true

	go func() {
		err := g.cmd.Wait()
		g.mu.Lock()
		g.waitErr = err
		g.flushLineLocked()
		g.broadcastLocked()
		g.mu.Unlock()
		os.RemoveAll(g.tmp)
		close(g.done)
	}()
	go func() {
		select {
		case <-ctx.Done():
			g.Kill()
		case <-g.done:
		}
	}()
	return g, nil
}

// runInitrd writes the base initrd followed by a second cpio archive holding
// the script and files.
func runInitrd(dir, base string, opts Options) (string, error) {
	var files []cpioFile
	if opts.Script != "" {
		files = append(files, cpioFile{name: "/qemuguest/script", mode: 0o755, data: []byte(opts.Script)})
	}
	names := make([]string, 0, len(opts.Files))
	for name := range opts.Files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		data := opts.Files[name]
		mode := uint32(0o644)
		if bytes.HasPrefix(data, []byte("#!")) {
			mode = 0o755
		}
		files = append(files, cpioFile{name: name, mode: mode, data: data})
	}
	var extra bytes.Buffer
	if err := writeCpio(&extra, files); err != nil {
		return "", err
	}
	baseData, err := os.ReadFile(base)
	if err != nil {
		return "", err
	}
	if len(baseData)%4 != 0 {
		return "", fmt.Errorf("qemuguest: %s is %d octets long, not a multiple of 4, so no archive can follow it", base, len(baseData))
	}
	path := filepath.Join(dir, "initrd.img")
	return path, os.WriteFile(path, append(baseData, extra.Bytes()...), 0o644)
}

// resolveForward fills in a free port when f asks for port 0. The port is
// found by listening on it and closing it again, so another process could
// take it before QEMU does; QEMU then fails to start ("could not set up host
// forwarding rule") and WaitReady reports it.
func resolveForward(f Forward) (Forward, error) {
	if f.GuestPort <= 0 || f.GuestPort > 65535 {
		return f, fmt.Errorf("qemuguest: forward to guest port %d: not a port", f.GuestPort)
	}
	addr := f.HostAddr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return f, fmt.Errorf("qemuguest: forward host address %q: %w", f.HostAddr, err)
	}
	if strings.Contains(host, ":") {
		return f, fmt.Errorf("qemuguest: forward host address %q: QEMU forwards only from IPv4 addresses", f.HostAddr)
	}
	if port == "0" && f.UDP {
		l, err := net.ListenPacket("udp4", addr)
		if err != nil {
			return f, fmt.Errorf("qemuguest: finding a free UDP port on %s: %w", host, err)
		}
		addr = l.LocalAddr().String()
		l.Close()
	} else if port == "0" {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return f, fmt.Errorf("qemuguest: finding a free port on %s: %w", host, err)
		}
		addr = l.Addr().String()
		l.Close()
	}
	return Forward{HostAddr: addr, GuestPort: f.GuestPort, UDP: f.UDP}, nil
}

// Forwards returns the forwards with their host addresses resolved.
func (g *Guest) Forwards() []Forward { return slices.Clone(g.forwards) }

// HostAddr returns the host address forwarded to guestPort, or "" if there is
// no such forward.
func (g *Guest) HostAddr(guestPort int) string {
	for _, f := range g.forwards {
		if f.GuestPort == guestPort {
			return f.HostAddr
		}
	}
	return ""
}

// WaitReady waits until the guest has siw0 up and is about to run the
// script. It fails if the guest stops first (with the reason and the end of
// the console output) or when ctx is done.
func (g *Guest) WaitReady(ctx context.Context) error {
	return g.waitUntil(ctx, "the guest to be ready", func() bool { return g.ready })
}

// WaitFor waits until the console output contains s, e.g. a line the script
// prints once its server listens.
func (g *Guest) WaitFor(ctx context.Context, s string) error {
	return g.waitUntil(ctx, fmt.Sprintf("%q on the guest console", s), func() bool {
		return bytes.Contains(g.console, []byte(s))
	})
}

func (g *Guest) waitUntil(ctx context.Context, what string, cond func() bool) error {
	for {
		g.mu.Lock()
		if cond() {
			g.mu.Unlock()
			return nil
		}
		changed := g.changed
		g.mu.Unlock()
		select {
		case <-changed:
		case <-g.done:
			g.mu.Lock()
			met := cond()
			g.mu.Unlock()
			if met {
				return nil
			}
			return fmt.Errorf("qemuguest: waiting for %s: %w", what, g.stoppedErr())
		case <-ctx.Done():
			return fmt.Errorf("qemuguest: waiting for %s: %w; console so far:\n%s", what, ctx.Err(), g.consoleTail(30))
		}
	}
}

// Wait waits for the guest to power off and returns the script's exit
// status. The error is set when the guest did not get to run the script to
// its end (setup failed, kernel panic, QEMU failed or was killed), or when
// ctx is done first; the guest keeps running then.
func (g *Guest) Wait(ctx context.Context) (int, error) {
	select {
	case <-g.done:
	case <-ctx.Done():
		return -1, fmt.Errorf("qemuguest: waiting for the guest to finish: %w; console so far:\n%s", ctx.Err(), g.consoleTail(30))
	}
	g.mu.Lock()
	exited, status := g.exited, g.status
	g.mu.Unlock()
	if !exited {
		return -1, fmt.Errorf("qemuguest: %w", g.stoppedErr())
	}
	return status, nil
}

// stoppedErr explains why a stopped guest did not finish its script.
func (g *Guest) stoppedErr() error {
	g.mu.Lock()
	failed, killed, werr, exited := g.failed, g.killed, g.waitErr, g.exited
	g.mu.Unlock()
	var why string
	switch {
	case killed:
		why = "the guest was killed"
	case failed != "":
		why = "guest setup failed: " + failed
	case exited:
		why = "the guest finished its script"
	case werr != nil:
		why = fmt.Sprintf("QEMU failed (%v)", werr)
	default:
		why = "the guest stopped without finishing (kernel panic?)"
	}
	if s := strings.TrimSpace(g.stderr.String()); s != "" {
		why += "; QEMU said: " + s
	}
	return fmt.Errorf("%s; console:\n%s", why, g.consoleTail(40))
}

// Kill stops QEMU at once (if it still runs) and waits for it to go. It is
// safe to call more than once, and after the guest has stopped.
func (g *Guest) Kill() {
	select {
	case <-g.done:
		return
	default:
	}
	g.mu.Lock()
	g.killed = true
	g.mu.Unlock()
	_ = g.cmd.Process.Kill()
	<-g.done
}

// Done is closed once QEMU has exited.
func (g *Guest) Done() <-chan struct{} { return g.done }

// Output returns the console output so far: kernel messages, the markers
// /init prints and the script's output, with carriage returns removed.
func (g *Guest) Output() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return string(g.console)
}

// ScriptOutput returns what the console showed between the READY marker and
// the script's exit (so far, while it runs). Kernel messages of warning level
// or worse can be mixed in.
func (g *Guest) ScriptOutput() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.ready {
		return ""
	}
	hi := len(g.console)
	if g.exited {
		hi = g.scriptHi
	}
	return string(g.console[g.scriptLo:hi])
}

// ReadyAfter reports how long the guest took to become ready: wall-clock
// time from QEMU's start, and the guest's own uptime at that point. Both are
// zero before it is ready.
func (g *Guest) ReadyAfter() (wall, uptime time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.readyWall, g.readyUp
}

func (g *Guest) consoleTail(n int) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.console) == 0 {
		return "(nothing)\n"
	}
	return tail(string(g.console), n)
}

// consoleWriter receives QEMU's standard output, the guest's serial console.
type consoleWriter struct {
	g   *Guest
	log io.Writer
}

func (w *consoleWriter) Write(p []byte) (int, error) {
	clean := bytes.ReplaceAll(p, []byte("\r"), nil)
	g := w.g
	g.mu.Lock()
	for _, c := range clean {
		g.console = append(g.console, c)
		if c == '\n' {
			g.parseLineLocked(g.line, len(g.console)-len(g.line)-1)
			g.line = g.line[:0]
		} else {
			g.line = append(g.line, c)
		}
	}
	g.broadcastLocked()
	g.mu.Unlock()
	if w.log != nil && len(clean) > 0 {
		_, _ = w.log.Write(clean)
	}
	return len(p), nil
}

func (g *Guest) flushLineLocked() {
	if len(g.line) > 0 {
		g.parseLineLocked(g.line, len(g.console)-len(g.line))
		g.line = g.line[:0]
	}
}

// parseLineLocked looks for /init's markers in one console line that starts
// at console offset at. A kernel message can be printed into the middle of a
// line, so the marker is looked for anywhere in it.
func (g *Guest) parseLineLocked(line []byte, at int) {
	m := markerRE.FindSubmatchIndex(line)
	if m == nil {
		return
	}
	kind := string(line[m[2]:m[3]])
	rest := string(line[m[4]:m[5]])
	switch kind {
	case "READY":
		if !g.ready {
			g.ready = true
			g.readyWall = time.Since(g.start)
			g.readyUp = parseUptime(rest)
			g.scriptLo = at + len(line) + 1
		}
	case "FAIL":
		if g.failed == "" {
			g.failed = strings.TrimSpace(rest)
		}
	case "EXIT":
		if n, err := strconv.Atoi(strings.Fields(rest + " x")[0]); err == nil && !g.exited {
			g.exited = true
			g.status = n
			g.scriptHi = max(at+m[0], g.scriptLo)
		}
	}
}

// parseUptime reads "uptime=3.51" out of a marker line.
func parseUptime(s string) time.Duration {
	for _, f := range strings.Fields(s) {
		if v, ok := strings.CutPrefix(f, "uptime="); ok {
			if sec, err := strconv.ParseFloat(v, 64); err == nil {
				return time.Duration(sec * float64(time.Second))
			}
		}
	}
	return 0
}

func (g *Guest) broadcastLocked() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// lockedBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
