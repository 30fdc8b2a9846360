package simdev

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openrnic/rnic/driver"
	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/driver/regmap"
	"github.com/openrnic/rnic/driver/regs"
	"github.com/openrnic/rnic/internal/simbuild"
)

func start(t testing.TB, cfg Config) *Device {
	t.Helper()
	if cfg.Binary == "" {
		cfg.Binary = simbuild.Binary(t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// The driver's walk of the register chain, over the verilated device: the
// ID block carries the build's parameters (rnic_dev's defaults) and the
// commit it was built from.
func TestWalkSimulatedDevice(t *testing.T) {
	d := start(t, Config{MemSize: 1 << 16})
	if d.BARSize() < regs.MapSize {
		t.Fatalf("BAR of %#x octets is smaller than the register map (%#x)", d.BARSize(), regs.MapSize)
	}
	dev, err := regmap.Walk(d, d.BARSize())
	if err != nil {
		t.Fatal(err)
	}
	if dev.DeviceID != regs.IDDeviceIDValue {
		t.Errorf("device ID %#x, want %#x", dev.DeviceID, regs.IDDeviceIDValue)
	}
	want := map[string][2]uint32{
		"data width": {dev.DataWidth, 64},
		"conns":      {dev.Conns, 1 << 6},
		"stags":      {dev.STags, 1 << 10},
		"sq log2":    {dev.SQLog2, 10},
		"rq log2":    {dev.RQLog2, 10},
		"cq log2":    {dev.CQLog2, 12},
	}
	for name, v := range want {
		if v[0] != v[1] {
			t.Errorf("%s %d, want %d", name, v[0], v[1])
		}
	}
	hash, err := os.ReadFile(filepath.Join(simbuild.Root(), "build", "sim", "hash"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := strconv.ParseUint(strings.TrimSpace(string(hash)), 16, 32)
	if err != nil {
		t.Fatal(err)
	}
	if dev.BuildHash != uint32(h) {
		t.Errorf("build hash %08x, want %08x (build/sim/hash)", dev.BuildHash, h)
	}
	names := []string{}
	for _, b := range dev.Blocks {
		names = append(names, b.Name)
	}
	if len(dev.Blocks) < 2 || dev.Blocks[0].Type != regs.IDType {
		t.Errorf("chain %v: want the ID block first, then the counters", names)
	}
	if _, ok := dev.Block(regs.CountersType); !ok {
		t.Errorf("chain %v has no counters block", names)
	}
	if _, err := dev.Counters(d); err != nil {
		t.Fatal(err)
	}
}

// The clock runs only when asked: RUN adds exactly its clocks, and the
// MMIO accesses in between add theirs.
func TestRunCountsClocks(t *testing.T) {
	// Lockstep: otherwise the device's clock also runs while it has work.
	d := start(t, Config{Lockstep: true})
	c0, err := d.Run(0)
	if err != nil {
		t.Fatal(err)
	}
	c1, err := d.Run(1000)
	if err != nil {
		t.Fatal(err)
	}
	if c1-c0 != 1000 {
		t.Fatalf("RUN 1000 ran %d clocks", c1-c0)
	}
	if _, err := d.Read32(0); err != nil {
		t.Fatal(err)
	}
	c2, _ := d.Run(0)
	if c2 <= c1 || c2-c1 > 10 {
		t.Fatalf("a register read took %d clocks", c2-c1)
	}
}

// Offsets that are not a register of the BAR are refused by the driver,
// with the offset and the BAR's size, and never reach the device.
func TestBadOffsets(t *testing.T) {
	d := start(t, Config{Lockstep: true})
	c0, _ := d.Run(0)
	for _, off := range []uint32{2, d.BARSize(), d.BARSize() + 4, 0xffff_fffc} {
		if _, err := d.Read32(off); err == nil || !strings.Contains(err.Error(), "not a 32-bit register") {
			t.Errorf("Read32(%#x): %v", off, err)
		}
		if err := d.Write32(off, 1); err == nil || !strings.Contains(err.Error(), "not a 32-bit register") {
			t.Errorf("Write32(%#x): %v", off, err)
		}
	}
	if c, _ := d.Run(0); c != c0 {
		t.Errorf("refused accesses ran %d clocks on the device", c-c0)
	}
	// The device answers a register write (read-only here: the ID
	// block's type) with OKAY and keeps the value.
	if err := d.Write32(regs.IDBlkType, 0); err != nil {
		t.Fatal(err)
	}
	if v, err := d.Read32(regs.IDBlkType); err != nil || v != regs.IDType {
		t.Fatalf("ID block type after a write: %#x, %v", v, err)
	}
}

// A device process that dies under the driver: the next call fails and
// says so, with the process's end.
func TestDeviceDies(t *testing.T) {
	d := start(t, Config{})
	if err := d.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done not closed 10 s after the device was killed")
	}
	_, err := d.Read32(0)
	if err == nil || !strings.Contains(err.Error(), "the device is gone") || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("Read32 after the device died: %v", err)
	}
	if d.Err() == nil {
		t.Fatal("Err is nil after the device died")
	}
}

// SIGTERM stops the device cleanly: exit status 0, its reason on stderr.
func TestSignalStopsCleanly(t *testing.T) {
	var stderr bytes.Buffer
	var mu sync.Mutex
	d := start(t, Config{Stderr: lockedWriter{&mu, &stderr}})
	d.Run(50)
	d.cmd.Process.Signal(syscall.SIGTERM)
	<-d.Done()
	<-d.exit
	if !d.cmd.ProcessState.Success() {
		t.Fatalf("rnic-sim after SIGTERM: %v", d.cmd.ProcessState)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(stderr.String(), "stopped by a signal") {
		t.Fatalf("stderr: %q", stderr.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Close ends the process with exit status 0 and the FST waveform holds
// the clocks run.
func TestCloseAndWaveform(t *testing.T) {
	fst := filepath.Join(t.TempDir(), "dev.fst")
	d := start(t, Config{FST: fst})
	if _, err := d.Run(200); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if !d.cmd.ProcessState.Success() {
		t.Fatalf("exit: %v", d.cmd.ProcessState)
	}
	st, err := os.Stat(fst)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() < 100 {
		t.Fatalf("waveform of %d octets", st.Size())
	}
	if _, err := d.Read32(0); err == nil {
		t.Fatal("Read32 after Close succeeded")
	}
}

// What Start says when there is no device to start, or the program is
// not rnic-sim.
func TestStartErrors(t *testing.T) {
	ctx := context.Background()
	_, err := Start(ctx, Config{Binary: "/nonexistent/rnic-sim"})
	if err == nil || !strings.Contains(err.Error(), "make sim") {
		t.Errorf("missing binary: %v", err)
	}
	_, err = Start(ctx, Config{Binary: "/bin/true"})
	if err == nil || !strings.Contains(err.Error(), "did not start") || !strings.Contains(err.Error(), "exit status 0") {
		t.Errorf("/bin/true: %v", err)
	}
	script := filepath.Join(t.TempDir(), "talker")
	// A program that writes something else on the socket first.
	os.WriteFile(script, []byte("#!/bin/sh\nprintf 'HELLO WORLD, NOT A DEVICE' >&3\nsleep 1\n"), 0o755)
	_, err = Start(ctx, Config{Binary: script})
	if err == nil || !strings.Contains(err.Error(), "not a hello") && !strings.Contains(err.Error(), "broken") {
		t.Errorf("a talker: %v", err)
	}
}

// Host memory: a buffer from Alloc is the device's memory at its address
// (the memfd both map), buffers never share a page, page 0 is never one,
// and what runs out or is freed twice is named.
func TestHostMemory(t *testing.T) {
	d := start(t, Config{MemSize: 64 << 10})
	a, err := d.Alloc(100)
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.Alloc(5000)
	if err != nil {
		t.Fatal(err)
	}
	if a.Addr == 0 || a.Addr%page != 0 || b.Addr%page != 0 || len(a.Mem) != page || len(b.Mem) != 2*page {
		t.Fatalf("buffers at %#x (%d octets), %#x (%d octets)", a.Addr, len(a.Mem), b.Addr, len(b.Mem))
	}
	if a.Addr+uint64(len(a.Mem)) >= b.Addr && b.Addr+uint64(len(b.Mem)) >= a.Addr {
		t.Fatalf("no free page between buffers at %#x and %#x", a.Addr, b.Addr)
	}
	copy(b.Mem[4090:], "device")
	if got := string(d.Mem()[b.Addr+4090 : b.Addr+4096]); got != "device" {
		t.Fatalf("memfd at the buffer's address holds %q", got)
	}
	if _, err := d.Alloc(64 << 10); err == nil || !strings.Contains(err.Error(), "larger Config.MemSize") {
		t.Fatalf("Alloc beyond host memory: %v", err)
	}
	if err := d.Free(a); err != nil {
		t.Fatal(err)
	}
	if err := d.Free(a); err == nil || !strings.Contains(err.Error(), "freed already") {
		t.Fatalf("second Free: %v", err)
	}
	c, err := d.Alloc(page)
	if err != nil || c.Addr != a.Addr {
		t.Fatalf("Alloc after Free: %#x, %v; want the freed %#x", c.Addr, err, a.Addr)
	}
	if _, err := d.Vector(16); err == nil {
		t.Fatal("Vector(16) accepted")
	}
	if err := d.Network().SegIn(driver.Segment{Octets: make([]byte, 70000)}); err == nil {
		t.Fatal("a 70000-octet segment accepted")
	}
}

// The driver's side of the contract over the verilated device: the walk
// through driver.Open, and commands through the admin mailbox (arguments,
// CMD, STATUS polled) executed by rnic_admin: a refusal the driver reports
// naming the command, then the same command accepted once a DMA window
// covers its ring (admin_xcheck_test.go checks every command against the
// model).
func TestDriverOverSimulatedDevice(t *testing.T) {
	d := start(t, Config{MemSize: 1 << 20})
	dev, err := driver.Open(d)
	if err != nil {
		t.Fatal(err)
	}
	_, err = dev.Exec(hostif.CreateCQ{CQN: 1, Ring: 0x10000, Log2: 6, Vector: 0})
	var ae *driver.AdminError
	if !errors.As(err, &ae) || ae.Status != hostif.AdminOutOfWindow || !strings.Contains(err.Error(), "CREATE_CQ") {
		t.Fatalf("CREATE_CQ with no DMA window: %v", err)
	}
	if _, err := dev.Exec(hostif.DMAWindow{Slot: 0, Addr: 0, Length: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	if _, err := dev.Exec(hostif.CreateCQ{CQN: 1, Ring: 0x10000, Log2: 6, Vector: 0}); err != nil {
		t.Fatal(err)
	}
	// CMD reads back the opcode written.
	if v, err := d.Read32(dev.Map.AdminBase() + regs.AdminCmd - regs.AdminBase); err != nil || v != uint32(hostif.OpCreateCQ) {
		t.Fatalf("CMD reads %#x, %v", v, err)
	}
	// Doorbells are taken (and read 0).
	if err := dev.RingSQ(3, 7); err != nil {
		t.Fatal(err)
	}
	if v, err := d.Read32(dev.Map.DoorbellsBase() + regs.DoorbellsBase + 0x10000 + 8*3 - regs.DoorbellsBase); err != nil || v != 0 {
		t.Fatalf("SQ_PI[3] reads %#x, %v", v, err)
	}
}
