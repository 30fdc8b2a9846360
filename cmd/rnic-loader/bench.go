package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"syscall"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/openrnic/rnic/capture"
	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/verbs"
)

const maxMessageSize = 1 << 30

type benchOpts struct {
	listen, connect string
	op              string
	size            string
	total           string
	markers         bool
	noCRC           bool
	mpaRev          int
	json            bool
	pcap            string
	quiet           bool
	noRaw           bool
	seed            uint64
	window          int
	rounds          int
	warmup          string
	timeout         time.Duration
	cpuProfile      string

	// capture, in loopback mode with --pcap: the client puts the session's
	// pcap writer here, and the server's end of the connection records
	// its own writes into it (serverTap).
	capture *captureSlot
}

// captureSlot hands the pcap writer of the session being captured from the
// client to the server in loopback mode. Each end records what it writes,
// FPDU by FPDU (WritePerFPDU), so that every captured TCP segment that
// starts an FPDU starts with it (FPDU Alignment, RFC 5044 appendix A), as
// Wireshark needs; recording the client's reads instead would cut the
// server's FPDUs wherever a read happened to end.
type captureSlot struct {
	mu sync.Mutex
	w  *capture.Writer
}

func (s *captureSlot) set(w *capture.Writer) {
	s.mu.Lock()
	s.w = w
	s.mu.Unlock()
}

func (s *captureSlot) get() *capture.Writer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w
}

// serverTap is the server's end of a connection in a captured loopback
// bench: at its first Write it takes the writer the client put in the slot
// (the client sets it before sending its MPA Request, which the server
// reads before it writes anything) and from then on records its Writes as
// the server's; with no writer there, it records nothing.
type serverTap struct {
	*peekConn
	slot   *captureSlot
	once   sync.Once
	tapped net.Conn
}

func (c *serverTap) Write(p []byte) (int, error) {
	c.once.Do(func() {
		if w := c.slot.get(); w != nil {
			c.tapped = w.Tap(c.peekConn, false)
		}
	})
	if c.tapped != nil {
		return c.tapped.Write(p)
	}
	return c.peekConn.Write(p)
}

// benchParams travel from the client to the server in the MPA Request's
// private data, so that a server started with --listen alone learns what
// to expect and verify.
type benchParams struct {
	Op     string `json:"op"`
	Size   int    `json:"size"`
	Total  int64  `json:"bytes"`
	Seed   uint64 `json:"seed"`
	Window int    `json:"window"`
	Raw    bool   `json:"raw"` // a raw TCP baseline connection follows
	// Rounds is how many iWARP sessions (and as many raw TCP baselines)
	// the client runs, the warm-up included; Total is this session's share.
	Rounds int   `json:"rounds,omitempty"`
	Warmup int64 `json:"-"`
}

// benchRegion travels back in the Reply's private data: the server's
// buffer for Writes and Reads.
type benchRegion struct {
	STag uint32 `json:"stag"`
	Addr uint64 `json:"addr"`
	Len  uint64 `json:"len"`
}

// Result is what bench reports (--json prints it as is).
type Result struct {
	Op            string  `json:"op"`
	Size          int     `json:"size"`
	Bytes         int64   `json:"bytes"`
	Messages      int64   `json:"messages"`
	Markers       bool    `json:"markers"`
	CRC           bool    `json:"crc"`
	MPARev        uint8   `json:"mpa_rev"`
	EMSS          int     `json:"emss"`
	MULPDU        int     `json:"mulpdu"`
	Seconds       float64 `json:"seconds"`
	GoodputBps    float64 `json:"goodput_bps"`
	RawTCPSeconds float64 `json:"raw_tcp_seconds,omitempty"`
	RawTCPBps     float64 `json:"raw_tcp_bps,omitempty"`
	Ratio         float64 `json:"ratio,omitempty"`
	VerifiedBytes int64   `json:"verified_bytes"`
	Mismatches    int64   `json:"mismatches"`
	WireBytes     int64   `json:"wire_bytes"`
	Pcap          string  `json:"pcap,omitempty"`
	// Rounds holds each interleaved round's figures; the totals above
	// are over all of them.
	Rounds []Round `json:"rounds"`
}

// Round is one iWARP phase and one raw TCP phase of a bench run.
type Round struct {
	Bytes      int64   `json:"bytes"`
	GoodputBps float64 `json:"goodput_bps"`
	RawTCPBps  float64 `json:"raw_tcp_bps,omitempty"`
	Ratio      float64 `json:"ratio,omitempty"`
	RawFirst   bool    `json:"raw_first,omitempty"`
}

func newBenchCmd() *cobra.Command {
	var o benchOpts
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure and verify RDMA Write, Read or Send over the Go iWARP stack",
		Long: `bench moves data over the Go reference iWARP stack (RDMAP/DDP/MPA on real TCP),
verifies every octet that arrives, and measures raw TCP over the same path with
the same message sizes, reporting both goodputs and their ratio.

With neither --listen nor --connect both ends run in this process over
loopback. Otherwise run a server with --listen and a client with --connect:
the client chooses the operation and sizes and tells the server in the MPA
Request's private data.

The run is split into --rounds rounds, each an iWARP session and a raw TCP
phase moving an equal share of --bytes, in alternating order (iWARP first,
then raw first, ...), so that a machine whose speed drifts during the run
weighs on both sides alike. The goodputs are total octets over total time of
each side; --json also lists every round.`,
		Example: `  # 64 KiB RDMA Writes with markers and CRC, both ends in this process
  rnic-loader bench --op write --size 64KiB --bytes 1GiB --markers

  # Two processes; JSON for scripts
  rnic-loader bench --listen 127.0.0.1:7175
  rnic-loader bench --connect 127.0.0.1:7175 --op read --size 4096 --json

  # A short session captured to a pcap Wireshark decodes
  rnic-loader bench --op send --bytes 1MiB --size 8KiB --pcap build/bench.pcap`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBench(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), &o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", "", "serve one bench client on `ADDR` (host:port)")
	f.StringVar(&o.connect, "connect", "", "run the client against a server at `ADDR`")
	f.StringVar(&o.op, "op", "write", "operation: write, read or send")
	f.StringVar(&o.size, "size", "64KiB", "message size (`BYTES`, e.g. 4096, 64KiB)")
	f.StringVar(&o.total, "bytes", "256MiB", "total octets to move (`BYTES`)")
	f.BoolVar(&o.markers, "markers", false, "ask for MPA markers in both directions")
	f.BoolVar(&o.noCRC, "no-crc", false, "declare a preference not to use CRC32c (used only if the peer agrees)")
	f.IntVar(&o.mpaRev, "mpa-rev", 2, "MPA revision to offer: 1 or 2")
	f.BoolVar(&o.json, "json", false, "print the result as JSON")
	f.StringVar(&o.pcap, "pcap", "", "write a pcap of the iWARP session to `FILE` (loopback mode)")
	f.BoolVar(&o.quiet, "quiet", false, "no progress on stderr")
	f.BoolVar(&o.noRaw, "no-raw", false, "skip the raw TCP baseline")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the data pattern")
	f.StringVar(&o.warmup, "warmup", "auto", "octets moved over each path, untimed, before the measured rounds (`BYTES`; 0 for none; auto: an eighth of --bytes, at most 64 MiB)")
	f.IntVar(&o.rounds, "rounds", 4, "interleaved iWARP / raw TCP rounds the octets are split into")
	f.IntVar(&o.window, "window", 0, "messages in flight per half of the target buffer (0: about 4 MiB worth)")
	f.DurationVar(&o.timeout, "timeout", 10*time.Minute, "give up after this long")
	f.StringVar(&o.cpuProfile, "cpuprofile", "", "write a Go CPU profile of the run to `FILE` (go tool pprof)")
	return cmd
}

func parseSize(name, s string) (int64, error) {
	v, err := humanize.ParseBytes(s)
	if err != nil {
		return 0, usagef("--%s %q: %v (examples: 4096, 64KiB, 1GiB)", name, s, err)
	}
	return int64(v), nil
}

func (o *benchOpts) params() (benchParams, error) {
	switch o.op {
	case "write", "read", "send":
	default:
		return benchParams{}, usagef("--op %q: want write, read or send", o.op)
	}
	size, err := parseSize("size", o.size)
	if err != nil {
		return benchParams{}, err
	}
	if size < 1 || size > maxMessageSize {
		return benchParams{}, usagef("--size %d: want 1 to %d octets", size, maxMessageSize)
	}
	total, err := parseSize("bytes", o.total)
	if err != nil {
		return benchParams{}, err
	}
	if total < size {
		return benchParams{}, usagef("--bytes %d is less than one message of --size %d", total, size)
	}
	if o.mpaRev != 1 && o.mpaRev != 2 {
		return benchParams{}, usagef("--mpa-rev %d: want 1 or 2", o.mpaRev)
	}
	if o.listen != "" && o.connect != "" {
		return benchParams{}, usagef("--listen and --connect exclude each other: run one process of each")
	}
	if o.pcap != "" && (o.listen != "" || o.connect != "") {
		return benchParams{}, usagef("--pcap works in loopback mode only (neither --listen nor --connect)")
	}
	var warm int64
	if o.warmup == "auto" {
		warm = min(total/8, 64<<20) / size * size
	} else if warm, err = parseSize("warmup", o.warmup); err != nil {
		return benchParams{}, err
	}
	if o.pcap != "" {
		warm = 0
	}
	if warm > 0 && warm < size {
		warm = size
	}
	rounds := o.rounds
	if rounds < 1 {
		return benchParams{}, usagef("--rounds %d: want 1 or more", rounds)
	}
	if o.pcap != "" {
		rounds = 1 // one session in the capture
	}
	// Every round moves at least one whole message.
	rounds = int(min(int64(rounds), total/size))
	w := o.window
	if w <= 0 {
		w = int(max(1, min(1024, (4<<20)/size)))
	}
	return benchParams{Op: o.op, Size: int(size), Total: total, Seed: o.seed, Window: w, Raw: !o.noRaw, Rounds: rounds, Warmup: warm}, nil
}

func (o *benchOpts) mpaConfig() mpa.Config {
	return mpa.Config{Rev: uint8(o.mpaRev), Markers: o.markers, NoCRC: o.noCRC, IRD: 32, ORD: 32}
}

func runBench(ctx context.Context, stdout, stderr io.Writer, o *benchOpts) error {
	bp, err := o.params()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	var progW io.Writer = stderr
	if o.quiet {
		progW = nil
	}
	if o.listen != "" {
		ln, err := net.Listen("tcp", o.listen)
		if err != nil {
			return fmt.Errorf("listening on %s: %w", o.listen, err)
		}
		defer ln.Close()
		fmt.Fprintf(stderr, "bench server listening on %s\n", ln.Addr())
		return serveBench(ctx, ln, o, stderr)
	}
	var (
		addr   string
		srvErr = make(chan error, 1)
	)
	if o.connect != "" {
		addr = o.connect
		close(srvErr)
	} else {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		defer ln.Close()
		addr = ln.Addr().String()
		if o.pcap != "" {
			o.capture = &captureSlot{}
		}
		go func() { srvErr <- serveBench(ctx, ln, o, nil); close(srvErr) }()
	}
	res, err := clientBench(ctx, addr, bp, o, progW)
	if err != nil {
		cancel()
		if serr := <-srvErr; serr != nil && !errors.Is(serr, context.Canceled) {
			return fmt.Errorf("%w (server: %v)", err, serr)
		}
		return err
	}
	if serr := <-srvErr; serr != nil {
		return fmt.Errorf("server side: %w", serr)
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else {
		printResult(stdout, res)
	}
	if res.Mismatches != 0 {
		return fmt.Errorf("%d octets arrived different from what was sent", res.Mismatches)
	}
	return nil
}

func printResult(w io.Writer, r *Result) {
	mk := "off"
	if r.Markers {
		mk = "on"
	}
	crc := "off"
	if r.CRC {
		crc = "on"
	}
	fmt.Fprintf(w, "%s: %d messages of %s, %s in %.3fs (MPA rev %d, markers %s, CRC %s, EMSS %d, MULPDU %d)\n",
		r.Op, r.Messages, humanize.IBytes(uint64(r.Size)), humanize.IBytes(uint64(r.Bytes)), r.Seconds, r.MPARev, mk, crc, r.EMSS, r.MULPDU)
	fmt.Fprintf(w, "  iWARP goodput   %8.3f Gbit/s  (%s/s)\n", r.GoodputBps*8/1e9, humanize.Bytes(uint64(r.GoodputBps)))
	if r.RawTCPBps > 0 {
		fmt.Fprintf(w, "  raw TCP goodput %8.3f Gbit/s  (%s/s)\n", r.RawTCPBps*8/1e9, humanize.Bytes(uint64(r.RawTCPBps)))
		fmt.Fprintf(w, "  ratio           %8.3f\n", r.Ratio)
		if len(r.Rounds) > 1 {
			fmt.Fprintf(w, "  per round      ")
			for _, rd := range r.Rounds {
				fmt.Fprintf(w, " %.3f", rd.Ratio)
			}
			fmt.Fprintf(w, "  (%d rounds, alternating which side goes first)\n", len(r.Rounds))
		}
	}
	fmt.Fprintf(w, "  verified %d octets, %d mismatches\n", r.VerifiedBytes, r.Mismatches)
	if r.Pcap != "" {
		fmt.Fprintf(w, "  pcap written to %s\n", r.Pcap)
	}
}

// Control messages on QN 0 between client and server: a 24-octet Send
// {kind, a, b}.
const (
	ctlWindowDone = 1 // client: half a (of Writes) holds messages b.. ; or Sends up to b
	ctlCredit     = 2 // server: half a verified / b more Sends allowed
	ctlFinish     = 3 // client: all done, a = octets sent
	ctlVerdict    = 4 // server: a = verified octets, b = mismatches
	ctlLen        = 24
)

func putCtl(kind, a, b uint64) []byte {
	m := make([]byte, ctlLen)
	binary.BigEndian.PutUint64(m, kind)
	binary.BigEndian.PutUint64(m[8:], a)
	binary.BigEndian.PutUint64(m[16:], b)
	return m
}

func getCtl(m []byte) (kind, a, b uint64) {
	if len(m) < ctlLen {
		return 0, 0, 0
	}
	return binary.BigEndian.Uint64(m), binary.BigEndian.Uint64(m[8:]), binary.BigEndian.Uint64(m[16:])
}

// peekConn lets the server look at the first octets of a connection to
// tell an MPA Request from a raw TCP baseline without consuming them.
type peekConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// CloseWrite lets the queue pair's Close send its FIN after the last FPDU.
func (c *peekConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// SyscallConn exposes the socket underneath, so that the server's queue
// pair sizes its FPDUs from TCP_MAXSEG like the client's (without it the
// server fell back to an EMSS of 1460 and sent Read Responses in 1.4 KiB
// FPDUs).
func (c *peekConn) SyscallConn() (syscall.RawConn, error) {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return nil, fmt.Errorf("bench: %T is not a socket", c.Conn)
	}
	return sc.SyscallConn()
}

// serveBench serves one bench client on ln: its iWARP sessions and, if
// it announced them, as many raw TCP baselines, in the order the client
// opens them. The first connection is always an iWARP session; its
// parameters say how many rounds follow.
func serveBench(ctx context.Context, ln net.Listener, o *benchOpts, log io.Writer) error {
	dev := verbs.NewDevice()
	pd := dev.AllocPD()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	var (
		first      benchParams
		iw, raw    int
		haveParams bool
		st         serveStats
	)
	for !haveParams || iw < max(1, first.Rounds) || (first.Raw && raw < max(1, first.Rounds)) {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		pc := &peekConn{Conn: c, r: bufio.NewReaderSize(c, 64<<10)}
		key, err := pc.r.Peek(16)
		if err != nil {
			c.Close()
			continue
		}
		if string(key) == rawKey {
			pc.r.Discard(16)
			v, bad, err := rawReceive(ctx, pc)
			c.Close()
			if log != nil {
				fmt.Fprintf(log, "raw TCP baseline: verified %d octets, %d mismatches\n", v, bad)
			}
			if err != nil {
				return err
			}
			st.raw += v
			st.rawBad += bad
			raw++
			continue
		}
		var sc net.Conn = pc
		if o.capture != nil {
			sc = &serverTap{peekConn: pc, slot: o.capture}
		}
		bp, err := serveIWARP(ctx, pd, sc, o, log, &st)
		if err != nil {
			return err
		}
		if !haveParams {
			first, haveParams = bp, true
		}
		iw++
	}
	if log != nil && iw > 1 {
		fmt.Fprintf(log, "bench served: %d iWARP sessions and %d raw TCP baselines (warm-up included): iWARP verified %d octets, %d mismatches; raw TCP verified %d octets, %d mismatches\n",
			iw, raw, st.iwarp, st.iwarpBad, st.raw, st.rawBad)
	}
	return nil
}

// serveStats adds up what a bench server verified over all its sessions.
type serveStats struct {
	iwarp, iwarpBad, raw, rawBad int64
}

func serveIWARP(ctx context.Context, pd *verbs.PD, c net.Conn, o *benchOpts, log io.Writer, st *serveStats) (bp benchParams, err error) {
	var region *verbs.MR
	cfg := verbs.QPConfig{MPA: o.mpaConfig(), WritePerFPDU: o.pcap != ""}
	var qp *verbs.QP
	var bufs [][]byte
	cfg.MPA.Accept = func(req *mpa.StartupFrame) ([]byte, bool) {
		if err := json.Unmarshal(req.PrivateData, &bp); err != nil || bp.Size <= 0 || bp.Size > maxMessageSize || bp.Window <= 0 || bp.Window > 1<<20 {
			return []byte(`{"error":"bad bench parameters"}`), true
		}
		var buf []byte
		switch bp.Op {
		case "write":
			buf = make([]byte, 2*bp.Window*bp.Size)
		case "read":
			// The source: slot s of the region holds message s's pattern.
			pat := newPattern(bp.Seed, bp.Size)
			buf = make([]byte, bp.Window*bp.Size)
			for s := 0; s < bp.Window; s++ {
				copy(buf[s*bp.Size:], pat.msg(uint64(s)))
			}
		case "send":
		default:
			return []byte(`{"error":"unknown op"}`), true
		}
		if buf != nil {
			var err error
			region, err = pd.RegisterMR(buf, verbs.RemoteWrite|verbs.RemoteRead)
			if err != nil {
				return []byte(`{"error":"registration failed"}`), true
			}
		}
		// Receive buffers go up before the Reply: the client may Send as
		// soon as it has the Reply. Control messages, or whole messages
		// for Send.
		nrecv, rsize := 4, ctlLen
		if bp.Op == "send" {
			nrecv, rsize = 2*bp.Window+4, max(bp.Size, ctlLen)
		}
		bufs = make([][]byte, nrecv)
		for i := range bufs {
			bufs[i] = make([]byte, rsize)
			qp.PostRecv(uint64(i), bufs[i])
		}
		var r benchRegion
		if region != nil {
			r = benchRegion{STag: region.STag, Addr: region.Addr, Len: uint64(len(region.Buf))}
		}
		out, _ := json.Marshal(r)
		return out, false
	}
	qp = verbs.CreateQP(pd, cfg)
	if err := qp.Establish(ctx, c, mpa.Responder); err != nil {
		c.Close()
		return bp, fmt.Errorf("iWARP startup: %w", err)
	}
	defer qp.Close()
	if region != nil {
		defer region.Deregister()
	}
	pat := newPattern(bp.Seed, bp.Size)
	var verified, mismatches int64
	var nextMsg uint64 // Sends: index of the next message expected
	nmsg := uint64((bp.Total + int64(bp.Size) - 1) / int64(bp.Size))
	var sinceCredit int
	for {
		comp, err := pollQP(ctx, qp, qp.RecvCQ())
		if err != nil {
			return bp, err
		}
		if comp.Op != verbs.OpRecv {
			continue
		}
		b := bufs[comp.ID]
		if bp.Op == "send" && nextMsg < nmsg {
			// A data Send: verify it, repost, grant credit now and then.
			n := comp.Len
			mismatches += int64(pat.check(nextMsg, b[:n]))
			verified += int64(n)
			nextMsg++
			qp.PostRecv(comp.ID, b)
			sinceCredit++
			if sinceCredit == bp.Window {
				sinceCredit = 0
				if err := qp.PostSend(ctx, verbs.SendWR{Op: verbs.OpSend, Data: putCtl(ctlCredit, 0, uint64(bp.Window)), Unsignaled: true}); err != nil {
					return bp, err
				}
			}
			continue
		}
		kind, a, bb := getCtl(b[:comp.Len])
		qp.PostRecv(comp.ID, b)
		switch kind {
		case ctlWindowDone:
			// Writes: half a now holds messages bb .. bb+count-1.
			half := int(a)
			if bb >= nmsg || a > 1 {
				return bp, fmt.Errorf("bench: bad window notice (half %d, message %d of %d)", a, bb, nmsg)
			}
			count := int(min(uint64(bp.Window), nmsg-bb))
			for k := 0; k < count; k++ {
				i := bb + uint64(k)
				n := bp.Size
				if rem := bp.Total - int64(i)*int64(bp.Size); rem < int64(n) {
					n = int(rem)
				}
				off := (half*bp.Window + k) * bp.Size
				mismatches += int64(pat.check(i, region.Buf[off:off+n]))
				verified += int64(n)
			}
			if err := qp.PostSend(ctx, verbs.SendWR{Op: verbs.OpSend, Data: putCtl(ctlCredit, a, 0), Unsignaled: true}); err != nil {
				return bp, err
			}
		case ctlFinish:
			if bp.Op == "read" {
				verified = int64(a) // the client verified what it read
			}
			if log != nil {
				fmt.Fprintf(log, "iWARP %s: verified %d octets, %d mismatches\n", bp.Op, verified, mismatches)
			}
			st.iwarp += verified
			st.iwarpBad += mismatches
			// Close (deferred) sends the verdict before its FIN.
			return bp, qp.PostSend(ctx, verbs.SendWR{Op: verbs.OpSend, Data: putCtl(ctlVerdict, uint64(verified), uint64(mismatches)), Unsignaled: true})
		default:
			return bp, fmt.Errorf("bench: unexpected control message %d from the client", kind)
		}
	}
}

// pollQP waits for a completion, or the queue pair's death.
func pollQP(ctx context.Context, qp *verbs.QP, cq *verbs.CQ) (verbs.Completion, error) {
	for {
		select {
		case c := <-cq.C():
			if c.Err != nil {
				return c, c.Err
			}
			return c, nil
		case <-qp.Dead():
			// Completions queued before the failure still count.
			select {
			case c := <-cq.C():
				if c.Err == nil {
					return c, nil
				}
			default:
			}
			return verbs.Completion{}, qp.Err()
		case <-ctx.Done():
			return verbs.Completion{}, ctx.Err()
		}
	}
}

func clientBench(ctx context.Context, addr string, bp benchParams, o *benchOpts, progW io.Writer) (*Result, error) {
	pat := newPattern(bp.Seed, bp.Size)
	res := &Result{Op: bp.Op, Size: bp.Size, Bytes: bp.Total}
	rounds := int64(max(1, bp.Rounds))
	if bp.Warmup > 0 {
		// An untimed round first: a machine and a process that have been
		// idle run their first fraction of a second of load measurably
		// slower (the first of 8 rounds ran at about two thirds of the
		// speed of the others, whichever side went first).
		wb := bp
		wb.Total, wb.Rounds = bp.Warmup, bp.Rounds+1
		var discard Result
		if _, err := iwarpSession(ctx, addr, wb, o, pat, progW, " (warm-up)", &discard); err != nil {
			return nil, fmt.Errorf("warm-up: %w", err)
		}
		if bp.Raw {
			if _, err := rawPhase(ctx, addr, wb, pat, progW, " (warm-up)"); err != nil {
				return nil, fmt.Errorf("warm-up: %w", err)
			}
		}
		bp.Rounds++
	}
	var iwTime, rawTime time.Duration
	for r := int64(0); r < rounds; r++ {
		// An equal share of whole messages per round; the last takes the rest.
		rb := bp
		per := bp.Total / int64(bp.Size) / rounds * int64(bp.Size)
		rb.Total = per
		if r == rounds-1 {
			rb.Total = bp.Total - per*(rounds-1)
		}
		label := ""
		if rounds > 1 {
			label = fmt.Sprintf(" (round %d of %d)", r+1, rounds)
		}
		round := Round{Bytes: rb.Total, RawFirst: bp.Raw && r%2 == 1}
		var d time.Duration
		var err error
		if round.RawFirst {
			if d, err = rawPhase(ctx, addr, rb, pat, progW, label); err != nil {
				return nil, err
			}
			rawTime += d
			round.RawTCPBps = float64(rb.Total) / d.Seconds()
		}
		o := *o
		if r > 0 {
			o.pcap = ""
		}
		s, err := iwarpSession(ctx, addr, rb, &o, pat, progW, label, res)
		if err != nil {
			return nil, err
		}
		iwTime += s
		round.GoodputBps = float64(rb.Total) / s.Seconds()
		if bp.Raw && !round.RawFirst {
			if d, err = rawPhase(ctx, addr, rb, pat, progW, label); err != nil {
				return nil, err
			}
			rawTime += d
			round.RawTCPBps = float64(rb.Total) / d.Seconds()
		}
		if round.RawTCPBps > 0 {
			round.Ratio = round.GoodputBps / round.RawTCPBps
		}
		res.Rounds = append(res.Rounds, round)
	}
	res.Messages = (bp.Total + int64(bp.Size) - 1) / int64(bp.Size)
	res.Seconds = iwTime.Seconds()
	res.GoodputBps = float64(bp.Total) / iwTime.Seconds()
	if rawTime > 0 {
		res.RawTCPSeconds = rawTime.Seconds()
		res.RawTCPBps = float64(bp.Total) / rawTime.Seconds()
		res.Ratio = res.GoodputBps / res.RawTCPBps
	}
	if res.VerifiedBytes != bp.Total {
		return res, fmt.Errorf("bench: %d of %d octets verified", res.VerifiedBytes, bp.Total)
	}
	return res, nil
}

// rawPhase runs one raw TCP baseline of bp.Total octets and returns its
// time (to the receiver's verdict).
func rawPhase(ctx context.Context, addr string, bp benchParams, pat *pattern, progW io.Writer, label string) (time.Duration, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, fmt.Errorf("raw TCP baseline: %w", err)
	}
	defer c.Close()
	prog := newProgress(progW, "raw TCP"+label, bp.Total)
	d, err := rawSend(ctx, c, bp.Seed, pat, bp.Size, bp.Total, prog)
	prog.finish()
	return d, err
}

// iwarpSession runs one iWARP session moving bp.Total octets, adds what
// it verified and the session's parameters to res, and returns the time
// the operations took (startup excluded, the server's verdict included).
func iwarpSession(ctx context.Context, addr string, bp benchParams, o *benchOpts, pat *pattern, progW io.Writer, label string, res *Result) (time.Duration, error) {
	dev := verbs.NewDevice()
	pd := dev.AllocPD()
	pdata, _ := json.Marshal(bp)
	cfg := verbs.QPConfig{MPA: o.mpaConfig(), WritePerFPDU: o.pcap != ""}
	cfg.MPA.PrivateData = pdata
	var conn net.Conn
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return 0, err
	}
	var pw *capture.Writer
	var pf *os.File
	if o.pcap != "" {
		if err := os.MkdirAll(filepath.Dir(o.pcap), 0o755); err != nil {
			return 0, err
		}
		pf, err = os.Create(o.pcap)
		if err != nil {
			return 0, err
		}
		defer pf.Close()
		la, _ := netip.ParseAddrPort(conn.LocalAddr().String())
		ra, _ := netip.ParseAddrPort(conn.RemoteAddr().String())
		pw, err = capture.NewWriter(pf, la, ra)
		if err != nil {
			return 0, err
		}
		if err := pw.Open(time.Now()); err != nil {
			return 0, err
		}
		if o.capture != nil {
			// The server records its own writes (serverTap).
			conn = pw.Tap(conn, true)
			o.capture.set(pw)
			defer o.capture.set(nil)
		} else {
			conn = pw.TapDuplex(conn, true)
		}
		res.Pcap = o.pcap
	}
	qp := verbs.CreateQP(pd, cfg)
	ctl := make([][]byte, 4)
	for i := range ctl {
		ctl[i] = make([]byte, ctlLen)
		qp.PostRecv(uint64(i), ctl[i])
	}
	if err := qp.Establish(ctx, conn, mpa.Initiator); err != nil {
		conn.Close()
		var re *mpa.RejectError
		if errors.As(err, &re) {
			return 0, fmt.Errorf("the server rejected the bench: %s", re.Reply.PrivateData)
		}
		return 0, fmt.Errorf("iWARP startup: %w", err)
	}
	p := qp.Params()
	res.Markers, res.CRC, res.MPARev, res.EMSS, res.MULPDU = p.TxMarkers, p.CRC, p.Rev, qp.EMSS(), qp.MULPDU()
	var region benchRegion
	if err := json.Unmarshal(p.Peer.PrivateData, &region); err != nil {
		qp.Close()
		return 0, fmt.Errorf("bench: the server's reply is not a bench reply: %v", err)
	}
	prog := newProgress(progW, "iWARP "+bp.Op+label, bp.Total)
	start := time.Now()
	verified, bad, err := runClientOps(ctx, qp, pd, bp, pat, region, ctl, prog)
	elapsed := time.Since(start)
	prog.finish()
	res.WireBytes += qp.TxBytes.Load() + qp.RxBytes.Load()
	qp.Close()
	if pw != nil {
		if cerr := pw.Close(time.Now()); cerr != nil && err == nil {
			err = fmt.Errorf("writing the pcap: %w", cerr)
		}
	}
	if err != nil {
		return 0, err
	}
	res.VerifiedBytes += verified
	res.Mismatches += bad
	if verified != bp.Total {
		return 0, fmt.Errorf("bench: %d of %d octets verified", verified, bp.Total)
	}
	return elapsed, nil
}

// runClientOps drives the operation and returns the server's verdict (or,
// for Reads, the client's own).
func runClientOps(ctx context.Context, qp *verbs.QP, pd *verbs.PD, bp benchParams, pat *pattern, region benchRegion, ctl [][]byte, prog *progress) (int64, int64, error) {
	nmsg := uint64((bp.Total + int64(bp.Size) - 1) / int64(bp.Size))
	msgLen := func(i uint64) int {
		if rem := bp.Total - int64(i)*int64(bp.Size); rem < int64(bp.Size) {
			return int(rem)
		}
		return bp.Size
	}
	// recvCtl waits for the next control message from the server.
	recvCtl := func() (uint64, uint64, uint64, error) {
		c, err := pollQP(ctx, qp, qp.RecvCQ())
		if err != nil {
			return 0, 0, 0, err
		}
		k, a, b := getCtl(ctl[c.ID][:c.Len])
		qp.PostRecv(c.ID, ctl[c.ID])
		return k, a, b, nil
	}
	var clientVerified, clientBad int64
	switch bp.Op {
	case "write":
		if region.Len < uint64(2*bp.Window*bp.Size) {
			return 0, 0, fmt.Errorf("bench: the server's region of %d octets is too small", region.Len)
		}
		busy := [2]bool{}
		half := 0
		for i := uint64(0); i < nmsg; {
			if busy[half] {
				k, a, _, err := recvCtl()
				if err != nil {
					return 0, 0, err
				}
				if k != ctlCredit || a > 1 {
					return 0, 0, fmt.Errorf("bench: unexpected control message %d", k)
				}
				busy[a] = false
				continue
			}
			first := i
			for k := 0; k < bp.Window && i < nmsg; k++ {
				n := msgLen(i)
				to := region.Addr + uint64((half*bp.Window+k)*bp.Size)
				if err := qp.PostSend(ctx, verbs.SendWR{Op: verbs.OpWrite, Data: pat.msg(i)[:n], RemoteSTag: region.STag, RemoteTO: to, Unsignaled: true}); err != nil {
					return 0, 0, err
				}
				prog.add(int64(n))
				i++
			}
			if err := qp.PostSend(ctx, verbs.SendWR{Op: verbs.OpSend, Data: putCtl(ctlWindowDone, uint64(half), first), Unsignaled: true}); err != nil {
				return 0, 0, err
			}
			busy[half] = true
			half ^= 1
		}
	case "send":
		credit := 2 * bp.Window
		for i := uint64(0); i < nmsg; i++ {
			for credit == 0 {
				k, _, b, err := recvCtl()
				if err != nil {
					return 0, 0, err
				}
				if k != ctlCredit {
					return 0, 0, fmt.Errorf("bench: unexpected control message %d", k)
				}
				credit += int(b)
			}
			n := msgLen(i)
			if err := qp.PostSend(ctx, verbs.SendWR{Op: verbs.OpSend, Data: pat.msg(i)[:n], Unsignaled: true}); err != nil {
				return 0, 0, err
			}
			credit--
			prog.add(int64(n))
		}
	case "read":
		if region.Len < uint64(bp.Window*bp.Size) {
			return 0, 0, fmt.Errorf("bench: the server's region of %d octets is too small", region.Len)
		}
		// A local sink of two windows; reads land in slot i mod 2W and
		// are verified as they complete, in order.
		slots := 2 * bp.Window
		sinkBuf := make([]byte, slots*bp.Size)
		sink, err := pd.RegisterMR(sinkBuf, verbs.RemoteWrite)
		if err != nil {
			return 0, 0, err
		}
		defer sink.Deregister()
		var posted, done uint64
		for done < nmsg {
			for posted < nmsg && posted-done < uint64(slots) {
				n := msgLen(posted)
				src := posted % uint64(bp.Window)
				if err := qp.PostSend(ctx, verbs.SendWR{ID: posted, Op: verbs.OpRead, Sink: sink, SinkOffset: (posted % uint64(slots)) * uint64(bp.Size),
					Len: uint32(n), RemoteSTag: region.STag, RemoteTO: region.Addr + src*uint64(bp.Size)}); err != nil {
					return 0, 0, err
				}
				posted++
			}
			c, err := pollQP(ctx, qp, qp.SendCQ())
			if err != nil {
				return 0, 0, err
			}
			if c.Op != verbs.OpRead {
				continue
			}
			i := c.ID
			off := (i % uint64(slots)) * uint64(bp.Size)
			got := sinkBuf[off : off+uint64(c.Len)]
			clientBad += int64(pat.check(i%uint64(bp.Window), got))
			clientVerified += int64(c.Len)
			prog.add(int64(c.Len))
			done++
		}
	}
	// Finish: wait for outstanding credits to drain so that every window
	// was verified, then ask for the verdict.
	if err := qp.PostSend(ctx, verbs.SendWR{Op: verbs.OpSend, Data: putCtl(ctlFinish, uint64(clientVerified), 0), Unsignaled: true}); err != nil {
		return 0, 0, err
	}
	for {
		k, a, b, err := recvCtl()
		if err != nil {
			return 0, 0, err
		}
		switch k {
		case ctlCredit:
			continue
		case ctlVerdict:
			if bp.Op == "read" {
				return clientVerified, clientBad, nil
			}
			return int64(a), int64(b), nil
		default:
			return 0, 0, fmt.Errorf("bench: unexpected control message %d", k)
		}
	}
}
