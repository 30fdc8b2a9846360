package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/openrnic/rnic/capture"
	"github.com/openrnic/rnic/driver/mirror"
	"github.com/openrnic/rnic/driver/simdev"
	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/verbs"
)

// The device bench: bench with an end on an RNIC (--device for the
// client's end, --peer-device for the server's, both in this process).
// The same operations as the software bench, every octet verified, the
// MPA options the same; what differs is the measure. The simulated
// device's clock is the limit, not the path, so a raw TCP baseline says
// nothing: the device bench reports each simulated end's clocks instead,
// the clocks a message took, the goodput in octets a clock and as a
// fraction of the datapath's clock-limited rate (DATA_W/8 octets a clock,
// DATA_W from the ID block), and the clocks the simulator ran a second.

const (
	benchDevSchema = "rnic-loader/bench-device/1"
	// Device queue sizes: the device's rings hold at most 2^10 entries
	// (rnic_dev's default build, `rnic-loader info`). A window is at most
	// devMaxWindow messages, and the SQ holds a window and a control Send.
	devMaxWindow = 512
	devSQ        = 1024
	devRQ        = 1024
	// A window's data is at most devWindowOctets (the buffers live in the
	// device's host memory, verbsMemSize).
	devWindowOctets = 16 << 20
	// devCtlSlots control messages of devCtlLen octets: the ends tell each other
	// that a window has been written, filled or posted for.
	devCtlSlots = 4
	devCtlLen   = 16
	// The amount a device run moves when neither --bytes nor --iters is
	// given: the simulated device runs about 110,000 clocks a second, a
	// 64 KiB Write takes about 8,500 of them at DATA_W 64 (about 13
	// Writes a second), so the software bench's 256 MiB would take more
	// than five minutes.
	devSimDefault   = 1 << 20
	devModelDefault = 64 << 20
	// devIRD is the inbound Read Requests a device end offers to have
	// outstanding: the simulated device (rnic_dev's default build) keeps
	// 2^POST_DEPTH_LOG2 = 16 Read Request buffers posted a QP (rnic_rresp,
	// in ddp_rx's ring of as many; driver/simdev TestSimSixteenOutstanding).
	// It was 8 while rnic_dev built ddp_rx's ring 8 deep (issue 30).
	devIRD = 16
	// devSimSends bounds the window of a Send bench whose server is the
	// simulated device: rnic_rq keeps at most 16 receive buffers of a QP
	// posted in ddp_rx (2^POST_DEPTH_LOG2), so a 17th Send arriving before
	// the device reposts finds no buffer (the model takes hundreds).
	devSimSends = 16
)

// deviceIgnores are the bench flags a device run cannot honour, and why.
var deviceIgnores = []struct{ flag, why string }{
	{"listen", "a device bench runs both ends in this process"},
	{"connect", "a device bench runs both ends in this process"},
	{"persistent", "a device bench runs both ends in this process"},
	{"all", "a device bench runs one message size"},
	{"qps", "a device bench runs one queue pair"},
	{"bidir", "a device bench runs one direction"},
	{"duration", "a device bench moves an amount: give --bytes or --iters"},
	{"rounds", "a device bench runs one measured round"},
	{"warmup", "a device bench has no warm-up (the simulated clock does not warm up)"},
	{"stats", "the stack's counters are the software stack's; run `rnic-loader stats` for a device's"},
}

// isDeviceRun says whether the bench has an end on an RNIC.
func (o *benchOpts) isDeviceRun() bool { return o.dev.device != "soft" || o.peerDevice != "soft" }

// checkDevice refuses the device flags that make no sense, and the bench
// flags a device run cannot honour.
func (o *benchOpts) checkDevice(changed func(string) bool) error {
	for _, d := range []struct{ flag, v string }{{"--device", o.dev.device}, {"--peer-device", o.peerDevice}} {
		switch d.v {
		case "soft", "model", "sim":
		default:
			return usagef("%s %s: not a device this build drives; use soft (the software stack), model (the driver's model of the RNIC) or sim (the simulated RNIC, `make sim`)", d.flag, d.v)
		}
	}
	if o.markersTo != "" {
		switch o.markersTo {
		case "client", "server", "both":
		default:
			return usagef("--markers-to %s: want client (markers on what the client receives), server or both", o.markersTo)
		}
		if changed("markers") {
			return usagef("--markers and --markers-to: give one (--markers is --markers-to both)")
		}
	}
	if o.dev.mirror && o.dev.device != "sim" && o.peerDevice != "sim" {
		return usagef("--mirror runs the model beside a simulated end: give --device sim or --peer-device sim")
	}
	if !o.isDeviceRun() {
		if o.dev.simBin != "" || o.dev.fst != "" {
			return usagef("--sim and --fst are for a simulated end: give --device sim or --peer-device sim")
		}
		if o.markersTo != "" {
			return usagef("--markers-to is for a device bench (--device or --peer-device); the software bench takes --markers (both directions)")
		}
		return nil
	}
	if o.dev.simBin != "" && o.dev.device != "sim" && o.peerDevice != "sim" {
		return usagef("--sim is for a simulated end: give --device sim or --peer-device sim")
	}
	if o.dev.fst != "" && o.dev.device != "sim" {
		return usagef("--fst writes the waveform of the client's simulated device: give it with --device sim")
	}
	var bad []string
	var why string
	for _, f := range deviceIgnores {
		if changed(f.flag) {
			bad = append(bad, f.flag)
			if why == "" {
				why = f.why
			}
		}
	}
	if len(bad) > 0 {
		return usagef("%s: not with --device %s --peer-device %s (%s); drop them, or run the software bench (both ends soft)", flagNames(bad...), o.dev.device, o.peerDevice, why)
	}
	return nil
}

// DevResult is what a device bench reports; --json prints it, schema
// rnic-loader/bench-device/1. Every field is always present, null where
// unknown or not applicable.
type DevResult struct {
	Schema     string `json:"schema"`
	Op         string `json:"op"`
	Device     string `json:"device"`      // the client's end
	PeerDevice string `json:"peer_device"` // the server's end
	Seed       uint64 `json:"seed"`
	// MessageOctets, Messages, TotalOctets: what the client's operations
	// move, Window the messages posted before the ends synchronize.
	MessageOctets int64 `json:"message_octets"`
	TotalOctets   int64 `json:"total_octets"`
	Messages      int64 `json:"messages"`
	Window        int   `json:"window_messages"`
	// What MPA negotiated (null until it has): markers on what each end
	// receives, CRC both ways or none.
	MPARev          *uint8 `json:"mpa_rev"`
	MarkersToClient *bool  `json:"markers_to_client"`
	MarkersToServer *bool  `json:"markers_to_server"`
	CRC             *bool  `json:"crc"`
	// The measured phase: every window posted, completed and verified.
	MeasuredOctets       int64    `json:"measured_octets"`
	MeasuredMessages     int64    `json:"measured_messages"`
	Seconds              *float64 `json:"seconds"`
	GoodputBitsPerSecond *float64 `json:"goodput_bits_per_second"`
	MessagesPerSecond    *float64 `json:"messages_per_second"`
	VerifiedOctets       int64    `json:"verified_octets"`
	Mismatches           int64    `json:"mismatches"`
	// Ends are the client's end and the server's, in that order.
	Ends        []*DevEnd `json:"ends"`
	Pcap        *string   `json:"pcap"`
	Interrupted bool      `json:"interrupted"`
	Error       *string   `json:"error"`
}

// DevEnd is one end of a device bench. The clock figures are the
// simulated device's (null for soft and model, which have no clock):
// Clocks over the measured phase, ClocksPerSecond the simulator's speed
// over it, ClocksPerMessage and OctetsPerClock the goodput in clocks, and
// ClockLimitedFraction OctetsPerClock over DATA_W/8, the most the
// datapath moves a clock.
type DevEnd struct {
	Role                 string   `json:"role"`
	Device               string   `json:"device"`
	DataWidthBits        *uint32  `json:"data_width_bits"`
	Clocks               *uint64  `json:"clocks"`
	ClocksPerSecond      *float64 `json:"clocks_per_second"`
	ClocksPerMessage     *float64 `json:"clocks_per_message"`
	OctetsPerClock       *float64 `json:"goodput_octets_per_clock"`
	ClockLimitedFraction *float64 `json:"clock_limited_fraction"`
	// Mirror is what --mirror compared (driver/mirror): every wire octet
	// and every DMA-written octet of the device against the model's.
	Mirror *mirror.Stats `json:"mirror,omitempty"`

	sim    *simdev.Device
	mirror *mirror.Backend
	clock0 uint64
}

// devSide is one end while the run is set up.
type devSide struct {
	end   benchEnd
	info  *DevEnd
	close func() error
}

func (o *benchOpts) openSide(ctx context.Context, role, device string) (*devSide, error) {
	s := &devSide{info: &DevEnd{Role: role, Device: device}, close: func() error { return nil }}
	if device == "soft" {
		s.end = softEnd{verbs.NewDevice().AllocPD()}
		return s, nil
	}
	f := o.dev
	f.device = device
	if role != "client" {
		f.fst = "" // --fst is the client's waveform
	}
	if device != "sim" {
		// --sim and --mirror are for the simulated ends (the model end
		// of a model-sim run has neither).
		f.simBin, f.fst, f.mirror = "", "", false
	}
	d, relay, closeDev, err := f.openVerbs(ctx)
	if err != nil {
		return nil, fmt.Errorf("bench: the %s's end (%s): %w", role, device, err)
	}
	s.end, s.close = &devEnd{d: d, relay: relay, vector: verbsVector}, closeDev
	s.info.DataWidthBits = ptr(d.Map.DataWidth)
	b := d.B
	if mb, ok := b.(*mirror.Backend); ok {
		s.info.mirror, b = mb, mb.Primary()
	}
	if sd, ok := b.(*simdev.Device); ok {
		s.info.sim = sd
	}
	return s, nil
}

// devPlan is what a device run does.
type devPlan struct {
	op           string
	size, window int
	total        int64
	messages     int64
	seed         uint64
}

func (o *benchOpts) devPlan() (*devPlan, error) {
	switch o.op {
	case "write", "read", "send":
	default:
		return nil, usagef("--op %q: want write, read or send", o.op)
	}
	if o.mpaRev != 1 && o.mpaRev != 2 {
		return nil, usagef("--mpa-rev %d: want 1 or 2", o.mpaRev)
	}
	changed := o.changed
	if changed == nil {
		changed = func(string) bool { return false }
	}
	if changed("bytes") && changed("iters") {
		return nil, usagef("--bytes, --iters: each says how much a run moves, so give one of them")
	}
	p := &devPlan{op: o.op, size: int(o.size.Int64()), seed: o.seed}
	switch {
	case changed("iters"):
		if o.iters < 1 || o.iters > maxTotal/int64(p.size) {
			return nil, usagef("--iters %d: want a positive number of messages, --iters × --size at most %s", o.iters, sayOctets(maxTotal))
		}
		p.total = o.iters * int64(p.size)
	case changed("bytes"):
		p.total = o.total.Int64()
	case o.dev.device == "sim" || o.peerDevice == "sim":
		p.total = devSimDefault
	default:
		p.total = devModelDefault
	}
	if p.total < int64(p.size) {
		return nil, usagef("--bytes %s is less than one message of --size %s: give --bytes at least --size", sayOctets(p.total), sayOctets(int64(p.size)))
	}
	if p.size > devWindowOctets {
		return nil, usagef("--size %s: a device bench's messages are at most %s (its buffers live in the device's host memory)", sayOctets(int64(p.size)), sayOctets(devWindowOctets))
	}
	p.messages = (p.total + int64(p.size) - 1) / int64(p.size)
	limit := min(devMaxWindow, devWindowOctets/p.size)
	if o.peerDevice == "sim" && p.op == "send" {
		limit = min(limit, devSimSends)
	}
	w := o.window
	switch {
	case w == 0:
		// About 1 MiB worth: a window is what the ends hand each other
		// at once, and the simulated device takes about a second for it.
		w = max(1, min(limit, (1<<20)/p.size))
	case w > limit:
		return nil, usagef("--window %d: this device bench takes at most %d messages of %s in flight (%d in the rings, %s of buffer, %d Sends into a simulated server)", w, limit, sayOctets(int64(p.size)), devMaxWindow, sayOctets(devWindowOctets), devSimSends)
	case w < 0:
		return nil, usagef("--window %d: want 0 (about 1 MiB worth) or 1 to %d", w, limit)
	}
	p.window = int(min(int64(w), p.messages))
	return p, nil
}

// mpaConfigFor is an end's MPA configuration: --markers-to says which
// ends ask for markers on what they receive (RFC 6581 makes them a
// choice of each direction; an MPA revision 1 peer gets them both ways).
func (o *benchOpts) mpaConfigFor(role string) mpa.Config {
	c := o.mpaConfig()
	c.Markers = o.markers || o.markersTo == "both" || o.markersTo == role
	if role == "server" && o.peerDevice != "soft" || role == "client" && o.dev.device != "soft" {
		// The device answers at most devIRD Read Requests outstanding;
		// its IRD says so, and the peer's ORD (RFC 6581 3: IRD and ORD
		// in the MPA frames) keeps a Read bench's window from posting
		// more at once.
		c.IRD = devIRD
	}
	return c
}

func runDevBench(ctx context.Context, stdout, stderr io.Writer, o *benchOpts) error {
	plan, err := o.devPlan()
	if err != nil {
		return err
	}
	ctx, cancel := withTimeout(ctx, o.timeout)
	defer cancel()
	res := &DevResult{Schema: benchDevSchema, Op: plan.op, Device: o.dev.device, PeerDevice: o.peerDevice, Seed: plan.seed,
		MessageOctets: int64(plan.size), TotalOctets: plan.total, Messages: plan.messages, Window: plan.window}
	err = o.devRun(ctx, plan, res, stderr)
	res.Interrupted, err = runEnd(ctx, err, res.Mismatches, "the device or the stack")
	if err != nil {
		res.Error = ptr(err.Error())
	}
	if o.json {
		if jerr := writeJSON(stdout, res); jerr != nil && err == nil {
			err = jerr
		}
	} else if err == nil {
		printDevResult(stdout, res)
	}
	return err
}

func (o *benchOpts) devRun(ctx context.Context, plan *devPlan, res *DevResult, stderr io.Writer) error {
	cli, err := o.openSide(ctx, "client", o.dev.device)
	if err != nil {
		return err
	}
	defer cli.close()
	srv, err := o.openSide(ctx, "server", o.peerDevice)
	if err != nil {
		return err
	}
	defer srv.close()
	res.Ends = []*DevEnd{cli.info, srv.info}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	cc, err := (&net.Dialer{}).DialContext(ctx, "tcp", ln.Addr().String())
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	sc, ok := <-accepted
	if !ok {
		cc.Close()
		return errors.New("loopback: the listener closed before the client's connection arrived")
	}
	// --pcap: each end records what it writes, the client's end as the
	// client's; the software end writes an FPDU a time (WritePerFPDU),
	// the device's relay writes each segment the device sent, an FPDU
	// each (FPDU Alignment, RFC 5044 appendix A), as Wireshark needs.
	var pw *capture.Writer
	if o.pcap != "" {
		pf, w, err := openPcap(o.pcap, cc, true)
		if err != nil {
			cc.Close()
			sc.Close()
			return err
		}
		defer pf.Close()
		pw = w
		cc, sc = pw.Tap(cc, true), pw.Tap(sc, false)
		res.Pcap = ptr(o.pcap)
	}
	type conn struct {
		qp  benchQP
		err error
	}
	srvQP := make(chan conn, 1)
	go func() {
		q, err := srv.end.connect(ctx, sc, mpa.Responder, o.mpaConfigFor("server"), devSQ, devRQ, pw != nil)
		srvQP <- conn{q, err}
	}()
	cq, cerr := cli.end.connect(ctx, cc, mpa.Initiator, o.mpaConfigFor("client"), devSQ, devRQ, pw != nil)
	s := <-srvQP
	if cerr != nil || s.err != nil {
		if cq != nil {
			cq.close()
		}
		if s.qp != nil {
			s.qp.close()
		}
		if cerr != nil {
			return fmt.Errorf("bench: the client's end (%s): %w", o.dev.device, cerr)
		}
		return fmt.Errorf("bench: the server's end (%s): %w", o.peerDevice, s.err)
	}
	sq := s.qp
	if p := cq.params(); p != nil {
		res.MPARev, res.CRC = ptr(p.Revision()), ptr(p.CRC)
		res.MarkersToClient, res.MarkersToServer = ptr(p.RxMarkers), ptr(p.TxMarkers)
	}
	err = o.devFlow(ctx, plan, res, cli, srv, cq, sq, stderr)
	err = errors.Join(err, closeQPs(err, cq, sq))
	// --mirror: the run counts only if the model, given the same inputs,
	// wrote and sent the same octets (the first difference fails it).
	for _, e := range res.Ends {
		if e.mirror == nil {
			continue
		}
		if merr := e.mirror.Check(); merr != nil {
			err = errors.Join(err, fmt.Errorf("bench: the %s's device and the model differ: %w", e.Role, merr))
		}
		e.Mirror = ptr(e.mirror.Stats())
	}
	if pw != nil {
		if cerr := pw.Close(time.Now()); cerr != nil && err == nil {
			err = fmt.Errorf("bench: writing the pcap: %w", cerr)
		}
	}
	return err
}

// closeQPs closes both queue pairs; after a failure their errors say no
// more than the failure did.
func closeQPs(failed error, qps ...benchQP) error {
	// At once: a software queue pair's Close waits for the peer's FIN,
	// which the other end sends when it closes.
	errs := make([]error, len(qps))
	var wg sync.WaitGroup
	for i, q := range qps {
		wg.Go(func() { errs[i] = q.close() })
	}
	wg.Wait()
	if failed != nil {
		return nil
	}
	return errors.Join(errs...)
}

// devFlow runs the measured phase: window after window of the client's
// operations, each window verified before the next one starts.
func (o *benchOpts) devFlow(ctx context.Context, plan *devPlan, res *DevResult, cli, srv *devSide, cq, sq benchQP, stderr io.Writer) error {
	pat := newPattern(plan.seed, plan.size)
	wOctets := plan.window * plan.size
	bufs := map[string]benchBuf{}
	for _, b := range []struct {
		name string
		end  benchEnd
		n    int
	}{{"client data", cli.end, wOctets}, {"server data", srv.end, wOctets},
		{"client control", cli.end, 2 * devCtlSlots * devCtlLen}, {"server control", srv.end, 2 * devCtlSlots * devCtlLen}} {
		buf, err := b.end.buffer(b.n)
		if err != nil {
			return fmt.Errorf("bench: the %s buffer (%s): %w", b.name, sayOctets(int64(b.n)), err)
		}
		bufs[b.name] = buf
	}
	cEnd := &flowEnd{qp: cq, ctl: bufs["client control"], data: bufs["client data"], role: "client"}
	sEnd := &flowEnd{qp: sq, ctl: bufs["server control"], data: bufs["server data"], role: "server"}
	// Control receives: the client's always (the server tells it when a
	// window is ready or verified); the server's for write and read, not
	// for send, whose data Sends take the server's receives in order.
	if err := cEnd.postCtl(); err != nil {
		return err
	}
	if plan.op != "send" {
		if err := sEnd.postCtl(); err != nil {
			return err
		}
	} else {
		// One for the client's hello, not posted again.
		sEnd.once = true
		if err := sEnd.qp.recv(idCtlRecv, sEnd.ctl, 0, devCtlLen); err != nil {
			return fmt.Errorf("bench: the server's control receive: %w", err)
		}
	}
	// The client speaks first: the server's end, the MPA Responder, sends
	// nothing before the client's first FPDU has arrived (RFC 5044 7.1.3
	// rule 4), and for a Read or a Send the client waits for the server.
	if err := cEnd.sendCtl(helloCtl); err != nil {
		return err
	}
	for _, e := range res.Ends {
		if e.sim != nil {
			c, err := e.sim.Run(0)
			if err != nil {
				return fmt.Errorf("bench: the %s's simulated clock: %w", e.Role, err)
			}
			e.clock0 = c
		}
	}
	start := time.Now()
	lastProgress := start
	srvErr := make(chan error, 1)
	sctx, scancel := context.WithCancel(ctx)
	defer scancel()
	var verified, mismatches int64
	go func() { srvErr <- sEnd.serve(sctx, plan, pat, cEnd.data.region(), &verified, &mismatches) }()
	var done int64
	err := func() error {
		for k := int64(0); k < plan.messages; k += int64(plan.window) {
			n := int(min(int64(plan.window), plan.messages-k))
			if err := cEnd.window(ctx, plan, pat, sEnd.data.region(), k, n, &verified, &mismatches); err != nil {
				return err
			}
			done = k + int64(n)
			if !o.quiet && time.Since(lastProgress) >= time.Second {
				lastProgress = time.Now()
				fmt.Fprintf(stderr, "bench %s: %d of %d messages\n", plan.op, done, plan.messages)
			}
		}
		return nil
	}()
	if err != nil {
		scancel()
		<-srvErr
		return err
	}
	if err := <-srvErr; err != nil {
		return err
	}
	secs := time.Since(start).Seconds()
	res.MeasuredMessages = done
	res.MeasuredOctets = min(done*int64(plan.size), plan.total)
	res.VerifiedOctets, res.Mismatches = verified, mismatches
	if secs > 0 {
		res.Seconds = ptr(secs)
		res.GoodputBitsPerSecond = ptr(float64(res.MeasuredOctets) * 8 / secs)
		res.MessagesPerSecond = ptr(float64(done) / secs)
	}
	for _, e := range res.Ends {
		if e.sim == nil {
			continue
		}
		c, err := e.sim.Run(0)
		if err != nil {
			return fmt.Errorf("bench: the %s's simulated clock: %w", e.Role, err)
		}
		clocks := c - e.clock0
		e.Clocks = ptr(clocks)
		if secs > 0 {
			e.ClocksPerSecond = ptr(float64(clocks) / secs)
		}
		if clocks > 0 && done > 0 {
			e.ClocksPerMessage = ptr(float64(clocks) / float64(done))
			opc := float64(res.MeasuredOctets) / float64(clocks)
			e.OctetsPerClock = ptr(opc)
			if e.DataWidthBits != nil && *e.DataWidthBits > 0 {
				e.ClockLimitedFraction = ptr(opc / (float64(*e.DataWidthBits) / 8))
			}
		}
	}
	if verified != res.MeasuredOctets {
		return fmt.Errorf("bench: %d of %d octets verified: the verdicts do not cover the run (a bug in the bench or the device; rerun with --pcap to capture it)", verified, res.MeasuredOctets)
	}
	return nil
}

// flowEnd is one end's queue pair and buffers in the measured phase. The
// control buffer's first devCtlSlots slots receive, the next ones send.
type flowEnd struct {
	qp        benchQP
	ctl, data benchBuf
	role      string
	sends     int
	// pending counts the completions of send work requests not yet taken.
	pending int
	ctlIn   []uint64 // control messages received and not yet consumed
	// once: the control receive is not posted again (the server of a
	// Send bench, whose later receives are the data's).
	once bool
}

// ctlTag starts every control message.
const ctlTag = "rnicbnch"

// helloCtl is the client's first control message.
const helloCtl = 1<<64 - 1

const (
	idCtlRecv = 1 << 40
	idCtlSend = 2 << 40
	idData    = 3 << 40
)

func (e *flowEnd) postCtl() error {
	for i := range devCtlSlots {
		if err := e.qp.recv(idCtlRecv|uint64(i), e.ctl, i*devCtlLen, devCtlLen); err != nil {
			return fmt.Errorf("bench: the %s's control receive: %w", e.role, err)
		}
	}
	return nil
}

// sendCtl sends v to the peer (a window's first message index).
func (e *flowEnd) sendCtl(v uint64) error {
	slot := devCtlSlots + e.sends%devCtlSlots
	e.sends++
	// A tag, then the value: Wireshark's RPC-over-RDMA heuristic took
	// the bare 8-octet value for a malformed RPC header.
	copy(e.ctl.bytes()[slot*devCtlLen:], ctlTag)
	binary.BigEndian.PutUint64(e.ctl.bytes()[slot*devCtlLen+8:], v)
	e.pending++
	return e.qp.send(idCtlSend|uint64(slot), e.ctl, slot*devCtlLen, devCtlLen)
}

// take waits for one completion and accounts for it: a control message
// received is queued (and its receive posted again), a send work request
// counted. It returns the completion for the caller's own bookkeeping.
func (e *flowEnd) take(ctx context.Context) (benchCQE, error) {
	c, err := e.qp.next(ctx)
	if err != nil {
		return c, fmt.Errorf("bench: the %s's queue pair: %w", e.role, err)
	}
	if c.err != nil {
		return c, fmt.Errorf("bench: the %s's %v completed with an error: %w", e.role, c.op, c.err)
	}
	switch c.id &^ (1<<40 - 1) {
	case idCtlRecv:
		slot := int(c.id & (1<<40 - 1))
		m := e.ctl.bytes()[slot*devCtlLen:]
		if c.n != devCtlLen || string(m[:8]) != ctlTag {
			return c, fmt.Errorf("bench: the %s received %d octets % x where a control message was due (a bug in the bench or the device)", e.role, c.n, m[:min(c.n, devCtlLen)])
		}
		e.ctlIn = append(e.ctlIn, binary.BigEndian.Uint64(m[8:]))
		if !e.once {
			if err := e.qp.recv(c.id, e.ctl, slot*devCtlLen, devCtlLen); err != nil {
				return c, err
			}
		}
	case idCtlSend:
		e.pending--
	}
	return c, nil
}

// waitCtl waits for the peer's next control message and returns it.
func (e *flowEnd) waitCtl(ctx context.Context) (uint64, error) {
	for len(e.ctlIn) == 0 {
		if _, err := e.take(ctx); err != nil {
			return 0, err
		}
	}
	v := e.ctlIn[0]
	e.ctlIn = e.ctlIn[1:]
	return v, nil
}

// msgLen is the length of message k: the last one may be shorter.
func msgLen(plan *devPlan, k int64) int {
	return int(min(int64(plan.size), plan.total-k*int64(plan.size)))
}

// verify checks message k in b at slot i and counts it.
func verify(pat *pattern, plan *devPlan, b []byte, i int, k int64, verified, mismatches *int64) {
	n := msgLen(plan, k)
	got := b[i*plan.size : i*plan.size+n]
	*mismatches += int64(pat.check(uint64(k), got))
	*verified += int64(n)
}

// window runs the client's side of one window of n messages from k.
func (e *flowEnd) window(ctx context.Context, plan *devPlan, pat *pattern, peer benchRegion, k int64, n int, verified, mismatches *int64) error {
	d := e.data.bytes()
	if plan.op != "read" {
		for i := range n {
			copy(d[i*plan.size:], pat.msg(uint64(k) + uint64(i))[:msgLen(plan, k+int64(i))])
		}
	}
	if plan.op != "write" {
		// The server has filled its buffer (read) or posted its receives
		// (send) for this window.
		if v, err := e.waitCtl(ctx); err != nil {
			return err
		} else if v != uint64(k) {
			return fmt.Errorf("bench: the server is ready for message %d, the client at %d (a bug in the bench)", v, k)
		}
	}
	for i := range n {
		id, off, l := idData|uint64(i), i*plan.size, msgLen(plan, k+int64(i))
		var err error
		switch plan.op {
		case "write":
			err = e.qp.write(id, peer, uint64(off), e.data, off, l)
		case "read":
			err = e.qp.read(id, peer, uint64(off), e.data, off, l)
		default:
			err = e.qp.send(id, e.data, off, l)
		}
		if err != nil {
			return fmt.Errorf("bench: posting the client's %s of message %d: %w", plan.op, k+int64(i), err)
		}
	}
	for got := 0; got < n; {
		c, err := e.take(ctx)
		if err != nil {
			return err
		}
		if c.id&^(1<<40-1) == idData {
			got++
		}
	}
	switch plan.op {
	case "write":
		// The Writes are placed before the Send that follows them
		// completes at the server (RFC 5040 5.5): the server verifies
		// when it has it, and answers.
		if err := e.sendCtl(uint64(k)); err != nil {
			return err
		}
		if v, err := e.waitCtl(ctx); err != nil {
			return err
		} else if v != uint64(k) {
			return fmt.Errorf("bench: the server verified window %d, the client sent %d (a bug in the bench)", v, k)
		}
	case "read":
		for i := range n {
			verify(pat, plan, d, i, k+int64(i), verified, mismatches)
		}
		if err := e.sendCtl(uint64(k)); err != nil {
			return err
		}
	}
	for e.pending > 0 {
		if _, err := e.take(ctx); err != nil {
			return err
		}
	}
	return nil
}

// serve runs the server's side of every window.
func (e *flowEnd) serve(ctx context.Context, plan *devPlan, pat *pattern, _ benchRegion, verified, mismatches *int64) error {
	d := e.data.bytes()
	if v, err := e.waitCtl(ctx); err != nil {
		return err
	} else if v != helloCtl {
		return fmt.Errorf("bench: the client's first control message is %d, not its hello (a bug in the bench)", v)
	}
	for k := int64(0); k < plan.messages; k += int64(plan.window) {
		n := int(min(int64(plan.window), plan.messages-k))
		switch plan.op {
		case "write":
			if v, err := e.waitCtl(ctx); err != nil {
				return err
			} else if v != uint64(k) {
				return fmt.Errorf("bench: the client wrote window %d, the server expected %d (a bug in the bench)", v, k)
			}
			for i := range n {
				verify(pat, plan, d, i, k+int64(i), verified, mismatches)
			}
			if err := e.sendCtl(uint64(k)); err != nil {
				return err
			}
		case "read":
			for i := range n {
				copy(d[i*plan.size:], pat.msg(uint64(k) + uint64(i))[:msgLen(plan, k+int64(i))])
			}
			if err := e.sendCtl(uint64(k)); err != nil {
				return err
			}
			// The client has read the window when it says so.
			if _, err := e.waitCtl(ctx); err != nil {
				return err
			}
		case "send":
			for i := range n {
				if err := e.qp.recv(idData|uint64(i), e.data, i*plan.size, plan.size); err != nil {
					return fmt.Errorf("bench: posting the server's receive: %w", err)
				}
			}
			if err := e.sendCtl(uint64(k)); err != nil {
				return err
			}
			for got := 0; got < n; {
				c, err := e.take(ctx)
				if err != nil {
					return err
				}
				if c.id&^(1<<40-1) != idData {
					continue
				}
				i := int(c.id & (1<<40 - 1))
				if want := msgLen(plan, k+int64(i)); c.n != want {
					return fmt.Errorf("bench: the server received %d octets for message %d, the client sent %d", c.n, k+int64(i), want)
				}
				verify(pat, plan, d, i, k+int64(i), verified, mismatches)
				got++
			}
		}
		for e.pending > 0 {
			if _, err := e.take(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

func printDevResult(w io.Writer, r *DevResult) {
	fmt.Fprintf(w, "%s: %d messages of %s, %s, client on %s, server on %s (window %d)\n", r.Op, r.Messages,
		sayOctets(r.MessageOctets), sayOctets(r.TotalOctets), r.Device, r.PeerDevice, r.Window)
	if r.MPARev != nil {
		fmt.Fprintf(w, "  MPA rev %d, CRC %s, markers to the client %s, to the server %s\n", *r.MPARev, onOff(r.CRC),
			onOff(r.MarkersToClient), onOff(r.MarkersToServer))
	}
	if r.Interrupted {
		fmt.Fprintf(w, "  interrupted: %d messages completed\n", r.MeasuredMessages)
	}
	if r.Seconds != nil {
		fmt.Fprintf(w, "  goodput        %10.3f Mbit/s  (%d messages, %.3f s of wall time)\n", *r.GoodputBitsPerSecond/1e6, r.MeasuredMessages, *r.Seconds)
	}
	for _, e := range r.Ends {
		if e.Clocks == nil {
			continue
		}
		fmt.Fprintf(w, "  %s's sim (DATA_W %d): %d clocks, %.0f clocks/s", e.Role, *e.DataWidthBits, *e.Clocks, ptrOr(e.ClocksPerSecond, 0))
		if e.ClocksPerMessage != nil {
			fmt.Fprintf(w, ", %.0f clocks/message, %.3f octets/clock = %.1f%% of the clock-limited %d",
				*e.ClocksPerMessage, *e.OctetsPerClock, 100*ptrOr(e.ClockLimitedFraction, 0), *e.DataWidthBits/8)
		}
		fmt.Fprintln(w)
		if m := e.Mirror; m != nil {
			fmt.Fprintf(w, "  %s's sim mirrored on the model: %d inputs, %d wire octets and %d DMA-written octets alike\n",
				e.Role, m.Inputs, m.WireOctets, m.MemOctets)
		}
	}
	fmt.Fprintf(w, "  verified %d octets, %d mismatches\n", r.VerifiedOctets, r.Mismatches)
	if r.Pcap != nil {
		fmt.Fprintf(w, "  pcap written to %s\n", *r.Pcap)
	}
}
