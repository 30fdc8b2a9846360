// Package simdev is the driver's way to the simulated device: it starts
// rnic-sim (hw/sim, the device top verilated into a process), and speaks
// its protocol (docs/device.md, "The simulated device"): MMIO reads and
// writes of the BAR, clocks to run, interrupts, and host memory in a memfd
// that both sides map, so the device's DMA is a copy into the same pages
// the driver reads.
//
// The process is the driver's child: it gets one end of a socketpair and
// the memfd as inherited descriptors, and it stops when the driver closes
// the socket (Close), or when the driver's process dies and the socket
// closes with it. A device process that dies under the driver turns every
// later call into an error naming its exit status and the last lines it
// wrote to stderr.
package simdev

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openrnic/rnic/driver"
)

var _ driver.Backend = (*Device)(nil)

// Message types of the protocol (hw/sim/rnic_sim.cpp has the device side).
const (
	msgHello     = 0
	msgMMIOWrite = 1
	msgMMIORead  = 2
	msgMMIOData  = 3
	msgIRQ       = 4
	msgSegIn     = 5
	msgSegOut    = 6
	msgRun       = 7
	msgStatus    = 8
	msgBye       = 9
	msgMMIOErr   = 10
	msgStamps    = 11
	msgStamp     = 12
	msgWrites    = 13
	msgWrote     = 14
	msgFlashCut  = 15
	msgFlashStat = 16
	msgFlashInfo = 17
)

// ProtocolVersion is the version of the protocol this package speaks; a
// device process that says another in its hello is refused.
const ProtocolVersion = 4

// maxVectors is how many interrupt vectors the protocol carries: the
// register map's room (the vectors block has registers for 16).
const maxVectors = 16

// page is the granule of host memory buffers.
const page = 4096

// helloTimeout bounds the wait for the device's first message.
const helloTimeout = 60 * time.Second

// maxPayload bounds a message from the device, as the device bounds the
// driver's: anything longer is a broken stream, not a message.
const maxPayload = 1 << 20

// The AXI4-Lite responses, and the simulator's own for an access the
// device never answered.
var respNames = map[uint32]string{1: "EXOKAY", 2: "SLVERR", 3: "DECERR", 4: "no response within 1000 clocks"}

// Config says how to start the device.
type Config struct {
	// Binary is rnic-sim's path; empty: Binary().
	Binary string
	// MemSize is the size of host memory in octets (0: none).
	MemSize int
	// FST, if set, is the path of a waveform of every clock the device runs.
	FST string
	// Stderr receives the process's stderr as well (it is also kept: the
	// last lines go into the error when the process dies).
	Stderr io.Writer
	// Lockstep runs the device's clock only while it serves a request (an
	// MMIO access, RUN), never on its own: a sequence of requests then
	// meets the device in the same state on every run, whatever the
	// machine's load (the admin cross-check needs that). By default the
	// clock runs whenever the device has work (docs/device.md).
	Lockstep bool
	// Flash is the configuration flash's contents: a 16 MiB file, created
	// erased if missing, that outlives the process (a power cut's result
	// included). Empty: an erased flash in the process's memory.
	Flash string
	// FlashTPP and FlashTSE are the flash's busy times in clocks, a page
	// program's and a sector erase's; 0 is the part's datasheet value
	// (docs/firmware-update.md).
	FlashTPP, FlashTSE uint64
}

// ErrPowerCut is what a device whose power a FlashCut cut ends with: every
// call after the cut fails with an error that wraps it. Start the device
// again on the same Config.Flash for the power-on.
var ErrPowerCut = errors.New("power cut")

// Binary is where rnic-sim is looked for when Config.Binary is empty: the
// environment's RNIC_SIM, else build/sim/rnic-sim (what `make sim` builds)
// in the current directory or the nearest one above it that has it.
func Binary() string {
	if p := os.Getenv("RNIC_SIM"); p != "" {
		return p
	}
	dir, err := os.Getwd()
	if err != nil {
		return filepath.Join("build", "sim", "rnic-sim")
	}
	for {
		p := filepath.Join(dir, "build", "sim", "rnic-sim")
		if _, err := os.Stat(p); err == nil {
			return p
		}
		up := filepath.Dir(dir)
		if up == dir {
			return filepath.Join("build", "sim", "rnic-sim")
		}
		dir = up
	}
}

// Device is a running simulated device.
type Device struct {
	cmd     *exec.Cmd
	conn    net.Conn
	memFile *os.File
	mem     []byte
	barSize uint32
	stderr  *tail

	mu    sync.Mutex // one request at a time
	wmu   sync.Mutex // whole messages on the socket
	resp  chan message
	vecs  []chan struct{} // vector v fires: a send that coalesces (driver.Backend)
	segs  chan driver.Segment
	sent  atomic.Uint64 // SEG_OUT messages read, counted before they go to segs
	alloc allocator
	done  chan struct{} // closed when the device is gone
	exit  chan struct{} // closed when the process has been waited for
	gone  error         // why, once done is closed
	werr  error         // the first write the device refused, not yet reported
	wmuE  sync.Mutex
	close sync.Once

	smu    sync.Mutex
	stamps []Stamp           // STAMP messages not yet taken
	wrote  []driver.DMAWrite // WROTE messages not yet taken
}

type message struct {
	typ     uint32
	payload []byte
}

// Start starts rnic-sim and waits for its hello.
func Start(ctx context.Context, cfg Config) (*Device, error) {
	bin := cfg.Binary
	if bin == "" {
		bin = Binary()
	}
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("simdev: no simulated device at %s (build it with `make sim`, or set RNIC_SIM): %w", bin, err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("simdev: socketpair: %w", err)
	}
	ours := os.NewFile(uintptr(fds[0]), "rnic-sim socket")
	// The device's end is closed here once the child has it (below), so
	// that the child's end is the only one: its death is our EOF.
	theirs := os.NewFile(uintptr(fds[1]), "rnic-sim socket (device end)")
	defer theirs.Close()
	conn, err := net.FileConn(ours)
	ours.Close()
	if err != nil {
		return nil, fmt.Errorf("simdev: socket: %w", err)
	}
	d := &Device{conn: conn, stderr: &tail{max: 4096}, resp: make(chan message, 1),
		segs: make(chan driver.Segment, 256), done: make(chan struct{}), exit: make(chan struct{})}
	for i := 0; i < maxVectors; i++ {
		d.vecs = append(d.vecs, make(chan struct{}, 1))
	}
	args := []string{"--fd", "3"}
	extra := []*os.File{theirs}
	if cfg.MemSize > 0 {
		mfd, err := unix.MemfdCreate("rnic-host-memory", unix.MFD_CLOEXEC)
		if err != nil {
			conn.Close()
			return nil, fmt.Errorf("simdev: host memory: memfd_create: %w", err)
		}
		d.memFile = os.NewFile(uintptr(mfd), "rnic host memory")
		if err := d.memFile.Truncate(int64(cfg.MemSize)); err != nil {
			conn.Close()
			d.release()
			return nil, fmt.Errorf("simdev: host memory of %d octets: %w", cfg.MemSize, err)
		}
		d.mem, err = unix.Mmap(mfd, 0, cfg.MemSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		if err != nil {
			conn.Close()
			d.release()
			return nil, fmt.Errorf("simdev: mapping host memory: %w", err)
		}
		extra = append(extra, d.memFile)
		args = append(args, "--mem-fd", "4", "--mem-size", fmt.Sprint(cfg.MemSize))
	}
	if cfg.FST != "" {
		args = append(args, "--fst", cfg.FST)
	}
	if cfg.Lockstep {
		args = append(args, "--lockstep")
	}
	if cfg.Flash != "" {
		args = append(args, "--flash", cfg.Flash)
	}
	if cfg.FlashTPP != 0 {
		args = append(args, "--flash-tpp", fmt.Sprint(cfg.FlashTPP))
	}
	if cfg.FlashTSE != 0 {
		args = append(args, "--flash-tse", fmt.Sprint(cfg.FlashTSE))
	}
	d.cmd = exec.Command(bin, args...)
	d.cmd.ExtraFiles = extra
	var errw io.Writer = d.stderr
	if cfg.Stderr != nil {
		errw = io.MultiWriter(d.stderr, cfg.Stderr)
	}
	d.cmd.Stderr = errw
	if err := d.cmd.Start(); err != nil {
		conn.Close()
		d.release()
		return nil, fmt.Errorf("simdev: starting %s: %w", bin, err)
	}
	theirs.Close()
	go func() {
		d.cmd.Wait()
		close(d.exit)
	}()
	hello, err := d.hello(ctx)
	if err != nil {
		d.kill()
		return nil, err
	}
	d.barSize = binary.LittleEndian.Uint32(hello[4:])
	d.alloc = allocator{size: uint64(cfg.MemSize)}
	if got := binary.LittleEndian.Uint64(hello[8:]); got != uint64(cfg.MemSize) {
		d.kill()
		return nil, fmt.Errorf("simdev: the device mapped %d octets of host memory, the driver gave %d", got, cfg.MemSize)
	}
	go d.reader()
	return d, nil
}

// hello reads the device's first message, within ctx.
func (d *Device) hello(ctx context.Context) ([]byte, error) {
	type result struct {
		m   message
		err error
	}
	ch := make(chan result, 1)
	// A device that neither says hello nor exits is not one.
	ctx, cancel := context.WithTimeout(ctx, helloTimeout)
	defer cancel()
	go func() {
		m, err := d.readMsg()
		ch <- result{m, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			<-d.exitOrTimeout()
			return nil, fmt.Errorf("simdev: the device did not start: %w%s", r.err, d.why())
		}
		if r.m.typ != msgHello || len(r.m.payload) != 16 {
			return nil, fmt.Errorf("simdev: the device's first message is type %d with %d octets, not a hello: is %s rnic-sim?",
				r.m.typ, len(r.m.payload), d.cmd.Path)
		}
		if v := binary.LittleEndian.Uint32(r.m.payload); v != ProtocolVersion {
			return nil, fmt.Errorf("simdev: the device speaks protocol version %d, this driver %d: rebuild one from the other's commit (make sim)",
				v, ProtocolVersion)
		}
		return r.m.payload, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("simdev: waiting for the device's hello: %w", ctx.Err())
	}
}

func (d *Device) exitOrTimeout() <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		select {
		case <-d.exit:
		case <-time.After(2 * time.Second):
		}
		close(ch)
	}()
	return ch
}

// why is the process's end, for an error: its exit status and stderr.
func (d *Device) why() string {
	var b strings.Builder
	select {
	case <-d.exit:
		fmt.Fprintf(&b, " (rnic-sim %s", d.cmd.ProcessState)
	default:
		b.WriteString(" (rnic-sim still running")
	}
	if s := strings.TrimSpace(d.stderr.String()); s != "" {
		fmt.Fprintf(&b, "; its stderr: %s", s)
	}
	b.WriteString(")")
	return b.String()
}

func (d *Device) readMsg() (message, error) {
	var hdr [8]byte
	if _, err := io.ReadFull(d.conn, hdr[:]); err != nil {
		return message{}, err
	}
	typ, n := binary.LittleEndian.Uint32(hdr[:]), binary.LittleEndian.Uint32(hdr[4:])
	if n > maxPayload {
		return message{}, fmt.Errorf("a message of %d octets (type %d): the stream is broken", n, typ)
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(d.conn, p); err != nil {
		return message{}, err
	}
	return message{typ, p}, nil
}

// reader takes every message from the device: answers to the request in
// flight, interrupts, segments, refused writes, goodbyes.
func (d *Device) reader() {
	var err error
	for {
		var m message
		m, err = d.readMsg()
		if err != nil {
			break
		}
		switch m.typ {
		case msgMMIOData, msgStatus, msgFlashInfo:
			d.resp <- m
			continue
		case msgIRQ:
			if v := binary.LittleEndian.Uint32(m.payload); len(m.payload) == 4 && v < maxVectors {
				select {
				case d.vecs[v] <- struct{}{}:
				default: // already pending: fires coalesce, as an eventfd's do
				}
				continue
			}
		case msgSegOut:
			if len(m.payload) >= 6 {
				d.sent.Add(1)
				d.segs <- driver.Segment{QPN: binary.LittleEndian.Uint16(m.payload), Seq: binary.LittleEndian.Uint32(m.payload[2:]),
					Octets: m.payload[6:]}
				continue
			}
		case msgStamp:
			if len(m.payload) == 24 {
				d.smu.Lock()
				d.stamps = append(d.stamps, Stamp{Kind: StampKind(binary.LittleEndian.Uint32(m.payload)),
					A: binary.LittleEndian.Uint32(m.payload[4:]), B: binary.LittleEndian.Uint64(m.payload[8:]),
					Clock: binary.LittleEndian.Uint64(m.payload[16:])})
				d.smu.Unlock()
				continue
			}
		case msgWrote:
			if len(m.payload) > 8 {
				d.smu.Lock()
				d.wrote = append(d.wrote, driver.DMAWrite{Addr: binary.LittleEndian.Uint64(m.payload), Octets: m.payload[8:]})
				d.smu.Unlock()
				continue
			}
		case msgMMIOErr:
			if len(m.payload) == 12 {
				op, off, resp := binary.LittleEndian.Uint32(m.payload), binary.LittleEndian.Uint32(m.payload[4:]),
					binary.LittleEndian.Uint32(m.payload[8:])
				what := "write"
				if op == 2 {
					what = "read"
				}
				d.wmuE.Lock()
				if d.werr == nil {
					d.werr = fmt.Errorf("simdev: MMIO %s at %#x refused by the device: %s", what, off, respName(resp))
				}
				d.wmuE.Unlock()
				continue
			}
		case msgBye:
			if bytes.HasPrefix(m.payload, []byte("power cut")) {
				err = fmt.Errorf("%w: %s", ErrPowerCut, bytes.TrimPrefix(m.payload, []byte("power cut ")))
			} else {
				err = fmt.Errorf("the device said goodbye: %s", m.payload)
			}
		}
		if err == nil {
			err = fmt.Errorf("a message of type %d with %d octets, which the protocol does not have", m.typ, len(m.payload))
		}
		break
	}
	if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		err = errors.New("the device closed its end")
	}
	<-d.exitOrTimeout()
	d.gone = fmt.Errorf("simdev: the device is gone: %w%s", err, d.why())
	close(d.done)
}

func respName(r uint32) string {
	if s, ok := respNames[r]; ok {
		return s
	}
	return fmt.Sprintf("response %d", r)
}

func (d *Device) send(typ uint32, payload []byte) error {
	select {
	case <-d.done:
		return d.gone
	default:
	}
	buf := make([]byte, 8, 8+len(payload))
	binary.LittleEndian.PutUint32(buf, typ)
	binary.LittleEndian.PutUint32(buf[4:], uint32(len(payload)))
	buf = append(buf, payload...)
	d.wmu.Lock()
	defer d.wmu.Unlock()
	if _, err := d.conn.Write(buf); err != nil {
		// The reader ends with the device's last word (a goodbye, a power
		// cut) once the process is gone: wait for it, not just the exit.
		select {
		case <-d.done:
			return d.gone
		case <-time.After(5 * time.Second):
			return fmt.Errorf("simdev: writing to the device: %w%s", err, d.why())
		}
	}
	return nil
}

// request sends a message and waits for its answer of type want.
func (d *Device) request(typ uint32, payload []byte, want uint32) ([]byte, error) {
	if err := d.send(typ, payload); err != nil {
		return nil, err
	}
	select {
	case m := <-d.resp:
		if m.typ != want {
			return nil, fmt.Errorf("simdev: the device answered type %d, want %d: protocol out of step", m.typ, want)
		}
		return m.payload, nil
	case <-d.done:
		return nil, d.gone
	}
}

// BARSize is the size of the device's BAR in octets.
func (d *Device) BARSize() uint32 { return d.barSize }

func (d *Device) checkOff(off uint32) error {
	if off%4 != 0 || off >= d.barSize {
		return fmt.Errorf("simdev: MMIO offset %#x is not a 32-bit register of the %#x-octet BAR", off, d.barSize)
	}
	return nil
}

// pending returns, once, the refusal of an earlier posted write.
func (d *Device) pending() error {
	d.wmuE.Lock()
	defer d.wmuE.Unlock()
	err := d.werr
	d.werr = nil
	return err
}

// Read32 reads the 32-bit register at BAR offset off.
func (d *Device) Read32(off uint32) (uint32, error) {
	if err := d.checkOff(off); err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var p [4]byte
	binary.LittleEndian.PutUint32(p[:], off)
	r, err := d.request(msgMMIORead, p[:], msgMMIOData)
	if err != nil {
		return 0, err
	}
	if len(r) != 8 {
		return 0, fmt.Errorf("simdev: MMIO data of %d octets, want 8", len(r))
	}
	if resp := binary.LittleEndian.Uint32(r[4:]); resp != 0 {
		return 0, fmt.Errorf("simdev: MMIO read at %#x refused by the device: %s", off, respName(resp))
	}
	return binary.LittleEndian.Uint32(r), d.pending()
}

// Write32 writes the 32-bit register at BAR offset off. Like a PCIe
// write it is posted: a refusal by the device comes back as the error of
// a later call.
func (d *Device) Write32(off, v uint32) error {
	if err := d.checkOff(off); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var p [8]byte
	binary.LittleEndian.PutUint32(p[:], off)
	binary.LittleEndian.PutUint32(p[4:], v)
	if err := d.send(msgMMIOWrite, p[:]); err != nil {
		return err
	}
	return d.pending()
}

// Run runs the device's clock n more clocks and returns the clocks run
// since reset.
func (d *Device) Run(n uint64) (uint64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var p [8]byte
	binary.LittleEndian.PutUint64(p[:], n)
	r, err := d.request(msgRun, p[:], msgStatus)
	if err != nil {
		return 0, err
	}
	if len(r) != 8 {
		return 0, fmt.Errorf("simdev: status of %d octets, want 8", len(r))
	}
	return binary.LittleEndian.Uint64(r), d.pending()
}

// StampKind is what a Stamp marks.
type StampKind uint32

// The stamps (docs/device.md, "The simulated device").
const (
	StampMMIOWrite   StampKind = 1 // an MMIO write's data taken: A offset, B value
	StampNetOutFirst StampKind = 2 // the first beat of a frame the device sends (m_net): A qpn, B seq
	StampNetOutLast  StampKind = 3 // its last beat: A qpn, B seq | octets << 32
	StampNetInFirst  StampKind = 4 // the first beat of a SEG_IN frame taken (s_net): A qpn, B seq
	StampNetInLast   StampKind = 5 // its last beat taken: A qpn, B seq | octets << 32
	StampDMAWrite    StampKind = 6 // a DMA write burst's last beat taken: A octets it spans, B address
)

// Stamp is an event on one of the device's interfaces and the clock it
// happened at: the clock count (as Run returns it) just after the edge
// that took the beat.
type Stamp struct {
	Kind  StampKind
	A     uint32
	B     uint64
	Clock uint64
}

// Stamps asks the device for a Stamp at every MMIO write, network frame
// and DMA write burst from now on (on), or no more (off); TakeStamps
// returns them. They cost a message each: for measurements, not for
// running.
func (d *Device) Stamps(on bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var p [4]byte
	if on {
		p[0] = 1
	}
	// The device takes messages in order: stamps are on (or off) for
	// every later message.
	if err := d.send(msgStamps, p[:]); err != nil {
		return err
	}
	return d.pending()
}

// TakeStamps returns the stamps read from the device since the last call,
// in the order the device sent them (its clock order).
func (d *Device) TakeStamps() []Stamp {
	d.smu.Lock()
	defer d.smu.Unlock()
	s := d.stamps
	d.stamps = nil
	return s
}

// RecordWrites asks the device for every octet its DMA writes put into
// host memory from now on (on), or no more (off); TakeWrites returns them.
// A message per run of octets: for the mirror (driver/mirror), which
// compares them with the model's.
func (d *Device) RecordWrites(on bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var p [4]byte
	if on {
		p[0] = 1
	}
	if err := d.send(msgWrites, p[:]); err != nil {
		return err
	}
	return d.pending()
}

// TakeWrites returns the writes read from the device since the last call,
// in the order the device made them. After Run returns, every write the
// device made before it answered is among them (the socket keeps the
// device's order).
func (d *Device) TakeWrites() []driver.DMAWrite {
	d.smu.Lock()
	defer d.smu.Unlock()
	w := d.wrote
	d.wrote = nil
	return w
}

// Mem is host memory, the whole memfd: device address a is Mem()[a].
func (d *Device) Mem() []byte { return d.mem }

// Alloc implements driver.Backend: size octets (rounded up to 4 KiB) of
// the memfd both sides map, at a 4 KiB-aligned device address (its offset
// in the memfd), with a free page after it so that a DMA that runs off a
// buffer finds no other buffer.
func (d *Device) Alloc(size int) (*driver.Buffer, error) {
	if size <= 0 {
		return nil, fmt.Errorf("simdev: Alloc(%d): a buffer needs at least one octet", size)
	}
	n := uint64(size+page-1) &^ (page - 1)
	d.alloc.mu.Lock()
	defer d.alloc.mu.Unlock()
	addr, ok := d.alloc.take(n)
	if !ok {
		return nil, fmt.Errorf("simdev: no %d octets of host memory left of %d (start the device with a larger Config.MemSize)",
			n, d.alloc.size)
	}
	return &driver.Buffer{Addr: addr, Mem: d.mem[addr : addr+n : addr+n]}, nil
}

// Free implements driver.Backend.
func (d *Device) Free(b *driver.Buffer) error {
	d.alloc.mu.Lock()
	defer d.alloc.mu.Unlock()
	if !d.alloc.give(b.Addr, uint64(len(b.Mem))) {
		return fmt.Errorf("simdev: Free of a buffer at %#x that Alloc did not return or that was freed already", b.Addr)
	}
	return nil
}

// Vector implements driver.Backend: the channel of interrupt vector v.
func (d *Device) Vector(v int) (<-chan struct{}, error) {
	if v < 0 || v >= len(d.vecs) {
		return nil, fmt.Errorf("simdev: vector %d: the protocol carries vectors 0 to %d", v, len(d.vecs)-1)
	}
	return d.vecs[v], nil
}

// Network implements driver.Backend: the simulated device's segments.
func (d *Device) Network() driver.Network { return network{d} }

type network struct{ d *Device }

// SegIn sends a segment into the device (SEG_IN). The device takes it
// when it runs; a segment longer than its 16-bit length cannot be one.
func (n network) SegIn(s driver.Segment) error {
	if len(s.Octets) > 0xffff {
		return fmt.Errorf("simdev: a segment of %d octets: the device takes at most 65535", len(s.Octets))
	}
	p := make([]byte, 6, 6+len(s.Octets))
	binary.LittleEndian.PutUint16(p, s.QPN)
	binary.LittleEndian.PutUint32(p[2:], s.Seq)
	return n.d.send(msgSegIn, append(p, s.Octets...))
}

// SegOut delivers the segments the device sends (SEG_OUT). Drain it: the
// reader waits while it is full.
func (n network) SegOut() <-chan driver.Segment { return n.d.segs }

// Sent implements driver.Network: the SEG_OUT messages read from the
// device. The device sends a drained QP's last segment before it answers
// the STATUS read that ends QP_DRAIN, so Sent then counts it.
func (n network) Sent() uint64 { return n.d.sent.Load() }

// Done is closed when the device is gone; Err then says why.
func (d *Device) Done() <-chan struct{} { return d.done }

// Err is why the device is gone, or nil while it runs.
func (d *Device) Err() error {
	select {
	case <-d.done:
		return d.gone
	default:
		return nil
	}
}

// Close says goodbye, waits for the process to end (killing it after 5
// seconds) and releases host memory. It returns the process's failure, if
// it did not stop cleanly.
func (d *Device) Close() error {
	var err error
	d.close.Do(func() {
		d.send(msgBye, []byte("the driver closed the device"))
		d.conn.Close()
		select {
		case <-d.exit:
		case <-time.After(5 * time.Second):
			d.cmd.Process.Kill()
			<-d.exit
			err = fmt.Errorf("simdev: the device did not stop within 5 s of goodbye; killed%s", d.why())
		}
		if err == nil && !d.cmd.ProcessState.Success() {
			err = fmt.Errorf("simdev: the device ended badly%s", d.why())
		}
		d.release()
	})
	return err
}

func (d *Device) kill() {
	if d.cmd != nil && d.cmd.Process != nil {
		d.cmd.Process.Kill()
		<-d.exit
	}
	d.conn.Close()
	d.release()
}

func (d *Device) release() {
	if d.mem != nil {
		unix.Munmap(d.mem)
		d.mem = nil
	}
	if d.memFile != nil {
		d.memFile.Close()
		d.memFile = nil
	}
}

// allocator hands out ranges of the memfd, first fit, each followed by a
// free guard page.
type allocator struct {
	mu    sync.Mutex
	size  uint64
	spans []span // taken, sorted by addr
}

type span struct{ addr, n uint64 }

func (a *allocator) take(n uint64) (uint64, bool) {
	at := uint64(page) // page 0 is never a buffer: a zeroed address finds no memory
	for i, s := range a.spans {
		if at+n+page <= s.addr {
			a.spans = append(a.spans[:i], append([]span{{at, n}}, a.spans[i:]...)...)
			return at, true
		}
		at = s.addr + s.n + page
	}
	if at+n > a.size {
		return 0, false
	}
	a.spans = append(a.spans, span{at, n})
	return at, true
}

func (a *allocator) give(addr, n uint64) bool {
	for i, s := range a.spans {
		if s.addr == addr && s.n == n {
			a.spans = append(a.spans[:i], a.spans[i+1:]...)
			return true
		}
	}
	return false
}

// tail keeps the last max octets written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if over := t.buf.Len() - t.max; over > 0 {
		t.buf.Next(over)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String()
}

// FlashCut arms a power cut: permille/1000 of the way through the n-th
// flash page program or sector erase the device starts from now on (n 0
// disarms), with the partial result seed picks (docs/firmware-update.md,
// "The simulated flash"). The device then ends, its flash file holding
// what the cut left; every later call fails with an error wrapping
// ErrPowerCut.
func (d *Device) FlashCut(n, permille, seed uint32) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var p [12]byte
	binary.LittleEndian.PutUint32(p[:], n)
	binary.LittleEndian.PutUint32(p[4:], permille)
	binary.LittleEndian.PutUint32(p[8:], seed)
	if err := d.send(msgFlashCut, p[:]); err != nil {
		return err
	}
	return d.pending()
}

// FlashStats counts what the simulated flash did since the process started.
type FlashStats struct {
	Ops           uint64 // page programs and sector erases started
	Programs      uint64
	Erases        uint64
	BusyClocks    uint64 // clocks the part was busy (WIP set)
	ProgramOctets uint64 // octets the page programs carried
}

// FlashStats asks the device what its flash did so far.
func (d *Device) FlashStats() (FlashStats, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	r, err := d.request(msgFlashStat, nil, msgFlashInfo)
	if err != nil {
		return FlashStats{}, err
	}
	if len(r) != 40 {
		return FlashStats{}, fmt.Errorf("simdev: flash info of %d octets, want 40", len(r))
	}
	u := func(i int) uint64 { return binary.LittleEndian.Uint64(r[8*i:]) }
	return FlashStats{Ops: u(0), Programs: u(1), Erases: u(2), BusyClocks: u(3), ProgramOctets: u(4)}, d.pending()
}
