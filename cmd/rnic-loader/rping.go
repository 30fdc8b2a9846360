package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/openrnic/rnic/capture"
	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/verbs"
	"github.com/openrnic/rnic/rping"
)

type rpingOpts struct {
	server, client bool
	addr           string
	port           int
	size           *sizeValue
	count          int
	verbose        bool
	verify         bool
	persistent     bool
	mpaRev         int
	noCRC          bool
	markers        bool
	json           bool
	pcap           string
	quiet          bool
	timeout        time.Duration
	overrunRead    int
	overrunWrite   int
	startDelay     time.Duration
	dev            deviceFlags
	provider       rping.Provider // nil: the software stack
	transport      string         // tcp (MPA) or sctp (DDP/SCTP)
}

const (
	rpingSchema = "rnic-loader/rping/1"
	// rpingGrace is how long a client interrupted in the middle of a
	// round waits for the round to end before it drops the connection.
	rpingGrace = 2 * time.Second
)

// RpingResult is what rping reports for one connection; --json prints it,
// schema rnic-loader/rping/1. Every field is always present, null where
// unknown (a session that never negotiated MPA has no revision).
type RpingResult struct {
	Schema string `json:"schema"`
	Role   string `json:"role"`   // client or server
	Device string `json:"device"` // --device: soft, model or sim
	Peer   string `json:"peer"`
	// SizeOctets is the ping size in use: the client's -S (a server
	// learns it from the client's advertisement; its own -S until then).
	// Count is the client's -C (0: until interrupted), null on a server.
	SizeOctets      int      `json:"size_octets"`
	Count           *int     `json:"count"`
	Rounds          int      `json:"rounds"`
	Validated       bool     `json:"validated"` // -V
	VerifiedOctets  int64    `json:"verified_octets"`
	MPARev          *uint8   `json:"mpa_rev"`
	CRC             *bool    `json:"crc"`
	Markers         *bool    `json:"markers"`
	IRD             *uint16  `json:"ird"`
	ORD             *uint16  `json:"ord"`
	Seconds         float64  `json:"seconds"`
	RoundsPerSecond *float64 `json:"rounds_per_second"`
	Pcap            *string  `json:"pcap"`
	Interrupted     bool     `json:"interrupted"`
	Error           *string  `json:"error"`
}

var (
	rpingClientOnly = []string{"count", "start-delay"}
	rpingServerOnly = []string{"persistent", "overrun-read", "overrun-write"}
)

func newRpingCmd() *cobra.Command {
	o := rpingOpts{size: newSize(rping.DefaultSize, rping.MinSize, rping.MaxSize, "ping size")}
	cmd := &cobra.Command{
		Use:   "rping (-s | -c -a ADDR) [flags]",
		Short: "rdma-core's rping, client or server, over the reference stack",
		Long: `rping speaks the protocol of rdma-core's rping example, so that either side
can stand opposite rping on Linux siw (or any iWARP device): the client Sends a
16-octet advertisement {be64 address, be32 STag, be32 length} of a buffer
holding "rdma-ping-N: ABC...", the server RDMA-Reads it and Sends "go ahead",
the client advertises a second buffer, the server RDMA-Writes the data back
into it and Sends again. One such exchange is a round.

The options follow rping's: -s or -c, -a, -p, -S, -C, -v, -V, -P. The client
runs -C rounds (0: until Ctrl-C) and disconnects; the server serves until its
client disconnects (with -P, client after client, until Ctrl-C). MPA revision
2 with IRD and ORD 1 is what rping on siw offers; siw refuses markers and uses
CRC if either side asks. Client-only flags (-C, --start-delay) are refused on
a server, server-only flags (-P, --overrun-read, --overrun-write) on a client.

-S takes a size like every size flag (26 to 65535 octets: 4096, 4KiB, 4K =
4000). Ping data (-v) goes to stdout, progress and the summary to stderr
(-q: none); --json prints one record per connection on stdout (the ping
data then goes to stderr), schema "rnic-loader/rping/1", every field
always present (null when unknown): schema, role, device, peer, size_octets, count,
rounds, validated, verified_octets, mpa_rev, crc, markers, ird, ord,
seconds, rounds_per_second, pcap, interrupted, error. A record is printed
for a failed connection too, with "error" set.

--device picks what runs this side's queue pair: soft (the default, the
software stack), model (the RNIC as the driver's in-process model of it:
buffers in DMA memory registered in its MR table, work requests through its
SQ and RQ rings, completions from its CQs; the MPA startup runs in host
software, then the device frames, checks and places, its octets relayed to
the socket), or sim (the same on the verilated hardware, hw/sim's rnic-sim:
--sim names it, default $RNIC_SIM or build/sim/rnic-sim; --fst writes its
waveform).

--transport sctp runs the session over DDP/SCTP instead of MPA over TCP
(docs/ddp-sctp.md): the client sets up an SCTP association (over UDP, RFC
6951) to the server's UDP port -p and its DDP Stream Session on stream 0;
the same rounds, checks and record (mpa_rev, crc and markers null). It is
for the software stack (--device soft) and takes none of MPA's flags, nor
--pcap.

Ctrl-C ends a client after the round in progress (or after 2 s), and a
server at once: the summary (and JSON record) is printed, "interrupted" is
true and the exit status 0. A --timeout that fires is a failure.
Exit status: 0 when every round completed (and verified with -V), 1 on a
protocol error, a Terminate from the peer, a data mismatch, a lost
connection or a --timeout, 2 on a wrong command line.`,
		Example: `  # A server on rping's port, printing what it reads, serving until Ctrl-C
  rnic-loader rping -s -v -P

  # A client: 10 verified rounds of 4 KiB against rping -s on siw
  rnic-loader rping -c -a 192.168.1.10 -C 10 -S 4KiB -V -v

  # Pings until Ctrl-C, giving up if the whole run takes more than a minute
  rnic-loader rping -c -a 127.0.0.1 -C 0 --timeout 1m

  # The server on the driver's model of the RNIC, against a software client
  rnic-loader rping -s -a 127.0.0.1 --device model &
  rnic-loader rping -c -a 127.0.0.1 -C 10 -V

  # The client on the simulated RNIC hardware (make sim builds it), with a
  # waveform of every clock it ran
  rnic-loader rping -s -a 127.0.0.1 -S 20000 &
  rnic-loader rping -c -a 127.0.0.1 -C 5 -S 20000 -V --device sim --fst rping.fst

  # The same, checked against the driver's model run beside it (--mirror)
  rnic-loader rping -c -a 127.0.0.1 -C 5 -S 20000 -V --device sim --mirror

  # Both sides of this tool over DDP/SCTP (SCTP over UDP port 7174)
  rnic-loader rping -s -a 127.0.0.1 --transport sctp &
  rnic-loader rping -c -a 127.0.0.1 -C 10 -V --transport sctp

  # Both sides of this tool, a summary for scripts, and a pcap
  rnic-loader rping -s -a 127.0.0.1 -p 7174 &
  rnic-loader rping -c -a 127.0.0.1 -C 3 -V --json --pcap build/rping.pcap`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.check(cmd.Flags().Changed); err != nil {
				return err
			}
			return runRping(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), &o)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&o.server, "server", "s", false, "server side")
	f.BoolVarP(&o.client, "client", "c", false, "client side")
	f.StringVarP(&o.addr, "addr", "a", "", "address: the server's to connect to (-c), or to listen on (-s; default all)")
	f.IntVarP(&o.port, "port", "p", rping.DefaultPort, "TCP port")
	f.VarP(o.size, "size", "S", fmt.Sprintf("ping data size in octets (%d to %d; e.g. 64, 4KiB)", rping.MinSize, rping.MaxSize))
	f.IntVarP(&o.count, "count", "C", 0, "client: rounds to run (0: until Ctrl-C)")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "print the ping data of each round")
	f.BoolVarP(&o.verify, "verify", "V", false, "verify every round's data")
	f.BoolVarP(&o.persistent, "persistent", "P", false, "server: keep serving clients, one after the other, until Ctrl-C")
	f.IntVar(&o.mpaRev, "mpa-rev", 2, "MPA revision to offer: 1 or 2")
	f.BoolVar(&o.noCRC, "no-crc", false, "declare a preference not to use CRC32c (used only if the peer agrees)")
	f.BoolVar(&o.markers, "markers", false, "ask for MPA markers (siw refuses them)")
	f.BoolVar(&o.json, "json", false, "print one JSON record per connection (schema rnic-loader/rping/1) on stdout; ping data then goes to stderr")
	f.StringVar(&o.pcap, "pcap", "", "write a pcap of the session to `FILE` (the last connection's, with -P)")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "nothing on stderr but warnings and errors: no progress lines, no summary")
	f.DurationVar(&o.timeout, "timeout", 0, "give up after this long, a failure (0: no limit)")
	f.StringVar(&o.transport, "transport", "tcp", "DDP's lower layer: tcp (MPA over TCP, what rping on siw speaks) or sctp (DDP/SCTP over userspace SCTP over UDP, on the UDP port -p)")
	f.DurationVar(&o.startDelay, "start-delay", 100*time.Millisecond, "client: wait this long after the MPA startup before the first Send (Linux siw as server can miss an FPDU that arrives right after its MPA Reply; 0 sends at once)")
	f.IntVar(&o.overrunRead, "overrun-read", 0, "server, for testing a peer: RDMA-Read `N` octets past the advertised buffer")
	f.IntVar(&o.overrunWrite, "overrun-write", 0, "server, for testing a peer: RDMA-Write `N` octets past the advertised buffer")
	o.dev.addDevice(cmd, "soft", "what runs this side: soft (the software stack), model (the RNIC as the driver's model of it) or sim (the verilated device)")
	return cmd
}

func (o *rpingOpts) check(changed func(string) bool) error {
	if o.server == o.client {
		return usagef("give exactly one of -s (server) and -c (client)")
	}
	wrongSide := func(names []string, what string) error {
		var bad []string
		for _, n := range names {
			if changed(n) {
				bad = append(bad, n)
			}
		}
		if len(bad) == 0 {
			return nil
		}
		return usagef("%s: %s", flagNames(bad...), what)
	}
	if o.server {
		if err := wrongSide(rpingClientOnly, "client flags (the client chooses them): a server (-s) does not take them; give them to the client (rping -c)"); err != nil {
			return err
		}
	} else if err := wrongSide(rpingServerOnly, "server flags: a client (-c) does not take them; give them to the server (rping -s)"); err != nil {
		return err
	}
	if o.client && o.addr == "" {
		return usagef("the client needs the server's address: -a ADDR")
	}
	if o.port < 0 || o.port > 65535 || (o.client && o.port == 0) {
		return usagef("invalid port %d: want 1 to 65535 (0 on a server: any free port)", o.port)
	}
	if o.count < 0 {
		return usagef("invalid count %d: want 0 (until Ctrl-C) or more", o.count)
	}
	if o.mpaRev != 1 && o.mpaRev != 2 {
		return usagef("--mpa-rev must be 1 or 2, not %d", o.mpaRev)
	}
	if o.overrunRead < 0 || o.overrunWrite < 0 {
		return usagef("overruns must not be negative")
	}
	if o.startDelay < 0 {
		return usagef("invalid --start-delay %v: want 0 or more", o.startDelay)
	}
	if o.timeout < 0 {
		return usagef("invalid --timeout %v: want 0 (no limit) or a positive duration such as 30s", o.timeout)
	}
	switch o.dev.device {
	case "soft", "model", "sim":
	default:
		return usagef("--device %s: not a device this build drives; use soft, model or sim", o.dev.device)
	}
	if o.dev.device != "sim" && (o.dev.simBin != "" || o.dev.fst != "" || o.dev.mirror) {
		return usagef("--sim, --fst and --mirror are for --device sim, not --device %s", o.dev.device)
	}
	switch {
	case o.transport != "tcp" && o.transport != "sctp":
		return usagef("--transport %q: want tcp (MPA over TCP) or sctp (DDP/SCTP over UDP)", o.transport)
	case o.transport == "tcp":
	case o.dev.device != "soft":
		return usagef("--transport sctp runs on the software stack: --device %s speaks MPA over TCP only", o.dev.device)
	case o.pcap != "":
		return usagef("--pcap captures MPA over TCP; a DDP/SCTP capture comes from the interop test (docs/ddp-sctp.md)")
	case changed("markers") || changed("no-crc") || changed("mpa-rev") || changed("start-delay"):
		return usagef("--markers, --no-crc, --mpa-rev and --start-delay are for MPA over TCP; DDP/SCTP has none of them")
	}
	return nil
}

func (o *rpingOpts) config(verbose io.Writer, rounds *atomic.Int64) rping.Config {
	cfg := rping.Config{
		Size: int(o.size.Int64()), Count: o.count, Validate: o.verify,
		QP:          verbs.QPConfig{MPA: mpa.Config{Rev: uint8(o.mpaRev), NoCRC: o.noCRC, Markers: o.markers}},
		ReadOverrun: o.overrunRead, WriteOverrun: o.overrunWrite,
		Round:      func(s rping.Stats) { rounds.Store(int64(s.Rounds)) },
		StartDelay: o.startDelay,
	}
	if o.verbose {
		cfg.Verbose = verbose
	}
	return cfg
}

func runRping(ctx context.Context, stdout, stderr io.Writer, o *rpingOpts) (err error) {
	ctx, cancel := withTimeout(ctx, o.timeout)
	defer cancel()
	verbose := stdout
	if o.json {
		verbose = stderr
	}
	info := stderr
	if o.quiet {
		info = io.Discard
	}
	if o.dev.device != "soft" {
		d, relay, closeDev, oerr := o.dev.openVerbs(ctx)
		if oerr != nil {
			return fmt.Errorf("rping: %w", oerr)
		}
		// With --mirror, a difference between the device and the model
		// fails the run that otherwise passed.
		defer func() {
			if cerr := closeDev(); cerr != nil && err == nil {
				err = fmt.Errorf("rping: the device and the model differ: %w", cerr)
			}
		}()
		o.provider = &rping.Device{D: d, Relay: relay, Vector: verbsVector}
	}
	addr := net.JoinHostPort(o.addr, strconv.Itoa(o.port))
	if o.transport == "sctp" {
		return o.runSCTP(ctx, addr, stdout, stderr, verbose, info)
	}
	if o.client {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			if c := endCause(ctx); c != nil {
				if wasInterrupted(ctx) {
					return nil
				}
				return c
			}
			return fmt.Errorf("rping: %w", dialError(ctx, addr, err, "rnic-loader rping -s -a "+o.addr+" -p "+strconv.Itoa(o.port)))
		}
		res, err := o.session(ctx, c, true, verbose, info)
		return o.report(ctx, stdout, info, res, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("rping: listening on %s: %w (is another server on that port? choose another with -p)", addr, err)
	}
	defer ln.Close()
	fmt.Fprintf(info, "rping server listening on %s\n", ln.Addr())
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	served := 0
	for {
		c, err := ln.Accept()
		if err != nil {
			if wasInterrupted(ctx) {
				fmt.Fprintf(info, "rping server: interrupted after %d connections\n", served)
				return nil
			}
			if c := endCause(ctx); c != nil {
				return c
			}
			return fmt.Errorf("rping: %w", err)
		}
		served++
		res, err := o.session(ctx, c, false, verbose, info)
		err = o.report(ctx, stdout, info, res, err)
		if !o.persistent || ctx.Err() != nil {
			return err
		}
		if err != nil {
			fmt.Fprintln(stderr, "rnic-loader:", err)
		}
	}
}

// stopGate sits between the queue pair and the connection of a client.
// Once shut, its writes fail: an interrupted client shuts it at the end of
// a round, so that the next round's advertisement never leaves and the
// server sees the connection end between rounds, rping's normal end.
type stopGate struct {
	net.Conn
	shut atomic.Bool
}

func (g *stopGate) Write(p []byte) (int, error) {
	if g.shut.Load() {
		return 0, net.ErrClosed
	}
	return g.Conn.Write(p)
}

func (g *stopGate) CloseWrite() error {
	if cw, ok := g.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// SyscallConn lets the queue pair read TCP_MAXSEG through the gate.
func (g *stopGate) SyscallConn() (syscall.RawConn, error) {
	sc, ok := g.Conn.(syscall.Conn)
	if !ok {
		return nil, fmt.Errorf("rping: %T is not a socket", g.Conn)
	}
	return sc.SyscallConn()
}

// session runs one connection, with its pcap and progress.
func (o *rpingOpts) session(ctx context.Context, c net.Conn, client bool, verbose, info io.Writer) (*RpingResult, error) {
	res := &RpingResult{Schema: rpingSchema, Role: "server", Device: o.dev.device, Peer: c.RemoteAddr().String(), SizeOctets: int(o.size.Int64()), Validated: o.verify}
	if client {
		res.Role = "client"
		res.Count = ptr(o.count)
	}
	var pw *capture.Writer
	if o.pcap != "" {
		pf, w, err := openPcap(o.pcap, c, client)
		if err != nil {
			c.Close()
			return res, err
		}
		defer pf.Close()
		pw = w
		c = pw.TapDuplex(c, client)
		res.Pcap = ptr(o.pcap)
	}
	var rounds atomic.Int64
	cfg := o.config(verbose, &rounds)
	sessCtx := ctx
	if client {
		// Ctrl-C lets the round in progress finish (rpingGrace at most),
		// then stops the client between two rounds; a --timeout stops it
		// at once.
		gate := &stopGate{Conn: c}
		if o.transport != "sctp" {
			// (Over SCTP the queue pair writes to its session, not to
			// c: the grace below ends the client.)
			c = gate
		}
		var stopping atomic.Bool
		var cancelSess context.CancelCauseFunc
		sessCtx, cancelSess = context.WithCancelCause(context.WithoutCancel(ctx))
		defer cancelSess(nil)
		defer context.AfterFunc(ctx, func() {
			if !wasInterrupted(ctx) {
				cancelSess(context.Cause(ctx))
				return
			}
			stopping.Store(true)
			time.AfterFunc(rpingGrace, func() { cancelSess(context.Cause(ctx)) })
		})()
		round := cfg.Round
		cfg.Round = func(s rping.Stats) {
			round(s)
			if stopping.Load() {
				gate.shut.Store(true)
			}
		}
	}
	done := make(chan struct{})
	if !o.verbose {
		go func() {
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-done:
					return
				case <-t.C:
					if o.count > 0 && client {
						fmt.Fprintf(info, "rping %s: %d of %d rounds\n", res.Role, rounds.Load(), o.count)
					} else {
						fmt.Fprintf(info, "rping %s: %d rounds\n", res.Role, rounds.Load())
					}
				}
			}
		}()
	}
	start := time.Now()
	var st *rping.Stats
	var err error
	if client {
		st, err = rping.Client(sessCtx, o.provider, c, cfg)
	} else {
		st, err = rping.Serve(sessCtx, o.provider, c, cfg)
	}
	close(done)
	res.Seconds = time.Since(start).Seconds()
	if st != nil {
		res.Rounds, res.VerifiedOctets = st.Rounds, st.Verified
		if st.Size > 0 {
			res.SizeOctets = st.Size
		}
		if p := st.Params; p != nil && o.transport != "sctp" {
			res.MPARev, res.CRC, res.Markers = ptr(p.Revision()), ptr(p.CRC), ptr(p.TxMarkers || p.RxMarkers)
			if p.Revision() >= 2 {
				res.IRD, res.ORD = ptr(p.Local.Params.IRD), ptr(p.Local.Params.ORD)
			}
		}
	}
	if res.Seconds > 0 {
		res.RoundsPerSecond = ptr(float64(res.Rounds) / res.Seconds)
	}
	if pw != nil {
		if cerr := pw.Close(time.Now()); cerr != nil && err == nil {
			err = fmt.Errorf("rping: writing the pcap: %w", cerr)
		}
	}
	return res, err
}

func openPcap(path string, c net.Conn, client bool) (*os.File, *capture.Writer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, nil, err
	}
	pf, err := os.Create(path)
	if err != nil {
		return nil, nil, err
	}
	la, err1 := netip.ParseAddrPort(c.LocalAddr().String())
	ra, err2 := netip.ParseAddrPort(c.RemoteAddr().String())
	if err := errors.Join(err1, err2); err != nil {
		pf.Close()
		return nil, nil, fmt.Errorf("rping: --pcap needs IP endpoints: %w", err)
	}
	cli, srv := la, ra
	if !client {
		cli, srv = ra, la
	}
	pw, err := capture.NewWriter(pf, cli, srv)
	if err == nil {
		err = pw.Open(time.Now())
	}
	if err != nil {
		pf.Close()
		return nil, nil, err
	}
	return pf, pw, nil
}

// report prints the record and the summary of one connection and returns
// the error the command ends with: none when a Ctrl-C ended it, the
// --timeout's when that fired.
func (o *rpingOpts) report(ctx context.Context, stdout, info io.Writer, res *RpingResult, err error) error {
	if err != nil && wasInterrupted(ctx) {
		res.Interrupted, err = true, nil
	} else if c := endCause(ctx); err != nil && c != nil {
		err = fmt.Errorf("rping: %w", c)
	}
	if err != nil {
		res.Error = ptr(err.Error())
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		if jerr := enc.Encode(res); jerr != nil && err == nil {
			err = jerr
		}
	}
	mpaDesc := "MPA not negotiated"
	if o.transport == "sctp" {
		mpaDesc = "DDP/SCTP"
	} else if res.MPARev != nil {
		mpaDesc = fmt.Sprintf("MPA rev %d, CRC %s", *res.MPARev, onOff(res.CRC))
	}
	verified := ""
	if o.verify {
		verified = fmt.Sprintf(", %d octets verified", res.VerifiedOctets)
	}
	end := ""
	if res.Interrupted {
		end = ", interrupted"
	}
	fmt.Fprintf(info, "rping %s: %d rounds of %s with %s%s, %s, %.3f s%s\n",
		res.Role, res.Rounds, sayOctets(int64(res.SizeOctets)), res.Peer, verified, mpaDesc, res.Seconds, end)
	if res.Pcap != nil {
		fmt.Fprintf(info, "  pcap written to %s\n", *res.Pcap)
	}
	return err
}
