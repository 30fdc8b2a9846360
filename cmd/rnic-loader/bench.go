package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/openrnic/rnic/capture"
	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/verbs"
)

const (
	maxMessageSize = 1 << 30
	maxTotal       = 1 << 50 // --bytes: a petabyte is more than any run here moves
	maxRounds      = 1000
	maxWindow      = 1 << 20
	// maxWindowOctets bounds --window × --size: the server holds two
	// windows of Writes in memory.
	maxWindowOctets = 1 << 30
	benchSchema     = "rnic-loader/bench/1"
	pcapNote        = "--pcap writes one FPDU per TCP segment (WritePerFPDU), with no warm-up and one round; goodput not comparable with runs without --pcap"
)

type benchOpts struct {
	listen, connect string
	op              string
	size            *sizeValue
	total           *sizeValue
	warmup          *sizeValue
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
	timeout         time.Duration
	startupTimeout  time.Duration
	persistent      bool
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
	// Run tells the server which connections belong to one client run,
	// so that a stranger's connection interleaved with them (a port scan,
	// a second client) neither counts towards the run nor breaks it.
	Run uint64 `json:"run"`
	// Rounds is how many iWARP sessions (and as many raw TCP baselines)
	// the client runs, the warm-up included; Total is this session's share.
	Rounds int   `json:"rounds"`
	Warmup int64 `json:"-"`
}

// benchRegion travels back in the Reply's private data: the server's
// buffer for Writes and Reads.
type benchRegion struct {
	STag uint32 `json:"stag"`
	Addr uint64 `json:"addr"`
	Len  uint64 `json:"len"`
}

// Result is what bench reports; --json prints it as is, schema
// rnic-loader/bench/1. Every field is always present: null where the value
// is unknown (a session that never negotiated MPA, a baseline that was
// skipped or never ran, a run that failed or was interrupted before its
// first round ended). Rates carry their unit in their name.
type Result struct {
	Schema string `json:"schema"`
	// Mode is "loopback" (both ends in this process) or "client".
	Mode   string  `json:"mode"`
	Server *string `json:"server"` // the address given to --connect
	Op     string  `json:"op"`
	// MessageOctets is --size, TotalOctets --bytes, WarmupOctets what
	// moved over each path, untimed, before the measured rounds.
	MessageOctets int64  `json:"message_octets"`
	TotalOctets   int64  `json:"total_octets"`
	WarmupOctets  int64  `json:"warmup_octets"`
	Messages      int64  `json:"messages"`
	Window        int    `json:"window_messages"`
	Seed          uint64 `json:"seed"`
	// What MPA negotiated: null until a session has.
	MPARev  *uint8 `json:"mpa_rev"`
	Markers *bool  `json:"markers"`
	CRC     *bool  `json:"crc"`
	EMSS    *int   `json:"emss"`
	MULPDU  *int   `json:"mulpdu"`
	// Totals over the completed rounds: the octets they moved, the time
	// each side took, rates in bits and messages per second.
	MeasuredOctets          int64    `json:"measured_octets"`
	Seconds                 *float64 `json:"seconds"`
	GoodputBitsPerSecond    *float64 `json:"goodput_bits_per_second"`
	MessagesPerSecond       *float64 `json:"messages_per_second"`
	RawTCPSeconds           *float64 `json:"raw_tcp_seconds"`
	RawTCPBitsPerSecond     *float64 `json:"raw_tcp_bits_per_second"`
	RawTCPMessagesPerSecond *float64 `json:"raw_tcp_messages_per_second"`
	// Ratio is iWARP goodput over raw TCP goodput.
	Ratio         *float64 `json:"ratio"`
	VerifiedBytes int64    `json:"verified_octets"`
	Mismatches    int64    `json:"mismatches"`
	WireBytes     int64    `json:"wire_octets"`
	Pcap          *string  `json:"pcap"`
	Note          *string  `json:"note"`
	Interrupted   bool     `json:"interrupted"`
	Error         *string  `json:"error"`
	// Rounds holds each completed round's figures; the totals above are
	// over all of them.
	Rounds []Round `json:"rounds"`
}

// Round is one iWARP phase and one raw TCP phase of a bench run.
type Round struct {
	Round                   int      `json:"round"` // from 1
	Octets                  int64    `json:"octets"`
	Messages                int64    `json:"messages"`
	RawFirst                bool     `json:"raw_first"`
	Seconds                 float64  `json:"seconds"`
	GoodputBitsPerSecond    float64  `json:"goodput_bits_per_second"`
	MessagesPerSecond       float64  `json:"messages_per_second"`
	RawTCPSeconds           *float64 `json:"raw_tcp_seconds"`
	RawTCPBitsPerSecond     *float64 `json:"raw_tcp_bits_per_second"`
	RawTCPMessagesPerSecond *float64 `json:"raw_tcp_messages_per_second"`
	Ratio                   *float64 `json:"ratio"`
}

func ptr[T any](v T) *T { return &v }

// serverIgnores are the bench flags a server (--listen) has no use for:
// the client chooses them and sends them in its MPA Request.
var serverIgnores = []string{"op", "size", "bytes", "seed", "window", "rounds", "warmup", "no-raw", "json"}

func newBenchCmd() *cobra.Command {
	o := benchOpts{
		size:   newSize(64<<10, 1, maxMessageSize, "message size"),
		total:  newSize(256<<20, 1, maxTotal, "total"),
		warmup: newSize(0, 0, maxTotal, "warm-up"),
	}
	o.warmup.auto, o.warmup.isAuto = "auto", true
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure and verify RDMA Write, Read or Send over the Go iWARP stack",
		Long: `bench moves data over the Go reference iWARP stack (RDMAP/DDP/MPA on real TCP),
verifies every octet that arrives, and measures raw TCP over the same path with
the same octets, reporting both goodputs and their ratio. The raw TCP baseline
is plain TCP at its best: 4 MiB per system call on both sides, whatever the
message size, the receiver verifying every octet as the iWARP server does.

With neither --listen nor --connect both ends run in this process over
loopback. Otherwise run a server with --listen and a client with --connect:
the client chooses the operation, sizes, seed, window and rounds and tells the
server in the MPA Request's private data, so the server refuses those flags.
A server serves one client run (all the connections of its rounds) and exits,
or with -P/--persistent client run after client run until Ctrl-C. It serves
connections independently and logs each client's address: a connection that
is neither a bench client nor a raw TCP baseline, or that sends no hello
within --startup-timeout, is logged with the reason and dropped, and the
server goes on.

The run is split into --rounds rounds, each an iWARP session and a raw TCP
phase moving an equal share of --bytes, in alternating order (iWARP first,
then raw first, ...), so that a machine whose speed drifts during the run
weighs on both sides alike. The goodputs are total octets over total time of
each side.

Sizes: 4096, or with a unit: K/KB, M/MB, G/GB decimal (1000, ...), KiB, MiB,
GiB binary (1024, ...); every size is said back in octets.

Output: a summary on stdout, progress on stderr once a second (-q: none).
Rates are in Gbit/s (10^9 bits per second). --json prints one record
instead (schema "rnic-loader/bench/1"), also when the run fails (with
"error" set; the exit status stays 1). Its fields, all always present (null
when unknown): schema, mode, server, op, message_octets, total_octets,
warmup_octets, messages, window_messages, seed, mpa_rev, markers, crc, emss,
mulpdu, measured_octets, seconds, goodput_bits_per_second,
messages_per_second, raw_tcp_seconds, raw_tcp_bits_per_second,
raw_tcp_messages_per_second, ratio (iWARP/raw TCP goodput), verified_octets,
mismatches, wire_octets, pcap, note, interrupted, error, and rounds: a list of
{round, octets, messages, raw_first, seconds, goodput_bits_per_second,
messages_per_second, raw_tcp_seconds, raw_tcp_bits_per_second,
raw_tcp_messages_per_second, ratio}. *_bits_per_second are bits (not
octets) per second.

--pcap writes one FPDU per TCP segment (the capture needs FPDU alignment),
runs one round with no warm-up, and says so in a note: its goodput is not
comparable with runs without --pcap.

Ctrl-C ends a run early: the rounds completed so far are reported
("interrupted": true) and the exit status is 0; a server prints what it
served and exits 0. A --timeout that fires is a failure (exit 1).
Exit status: 0 success, 1 failure (mismatch, protocol error, lost peer,
--timeout), 2 wrong command line.`,
		Example: `  # 64 KiB RDMA Writes with markers and CRC, both ends in this process
  rnic-loader bench --op write --size 64KiB --bytes 1GiB --markers

  # Two processes; JSON for scripts. The server serves one client run and
  # exits; -P keeps it serving until Ctrl-C
  rnic-loader bench --listen 127.0.0.1:7175 -P
  rnic-loader bench --connect 127.0.0.1:7175 --op read --size 4096 --json

  # Eight rounds after a 64 MiB warm-up, no progress lines
  rnic-loader bench --op send --size 1MB --bytes 4GiB --rounds 8 --warmup 64MiB -q

  # A short session captured to a pcap Wireshark decodes
  rnic-loader bench --op send --bytes 1MiB --size 8KiB --pcap build/bench.pcap`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.check(cmd.Flags().Changed); err != nil {
				return err
			}
			return runBench(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), &o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", "", "serve bench clients on `ADDR` (host:port); see -P")
	f.StringVar(&o.connect, "connect", "", "run the client against a server at `ADDR` (host:port)")
	f.BoolVarP(&o.persistent, "persistent", "P", false, "server: keep serving client runs, one after the other, until Ctrl-C")
	f.StringVar(&o.op, "op", "write", "operation: write, read or send")
	f.Var(o.size, "size", "message size in octets (1 to 1 GiB; e.g. 4096, 64KiB, 1MB)")
	f.Var(o.total, "bytes", "total octets to move over each path (e.g. 1GiB)")
	f.BoolVar(&o.markers, "markers", false, "ask for MPA markers in both directions")
	f.BoolVar(&o.noCRC, "no-crc", false, "declare a preference not to use CRC32c (used only if the peer agrees)")
	f.IntVar(&o.mpaRev, "mpa-rev", 2, "MPA revision to offer: 1 or 2")
	f.BoolVar(&o.json, "json", false, "print the result as one JSON record (schema rnic-loader/bench/1) on stdout")
	f.StringVar(&o.pcap, "pcap", "", "write a pcap of the iWARP session to `FILE` (loopback mode; one FPDU per segment: goodput not comparable)")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "nothing on stderr but warnings and errors: no progress lines, no server log")
	f.BoolVar(&o.noRaw, "no-raw", false, "skip the raw TCP baseline")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the data pattern")
	f.Var(o.warmup, "warmup", "octets moved over each path, untimed, before the measured rounds (0 for none; auto: an eighth of --bytes, at most 64 MiB)")
	f.IntVar(&o.rounds, "rounds", 4, fmt.Sprintf("interleaved iWARP / raw TCP rounds the octets are split into (1 to %d)", maxRounds))
	f.IntVar(&o.window, "window", 0, fmt.Sprintf("messages in flight per half of the target buffer (0: about 4 MiB worth; at most %d, and window × size at most 1 GiB)", maxWindow))
	f.DurationVar(&o.timeout, "timeout", 10*time.Minute, "give up after this long, a failure (0: no limit; a server has no limit unless given one)")
	f.DurationVar(&o.startupTimeout, "startup-timeout", mpa.DefaultStartupTimeout, "limit on each connection's startup: the MPA exchange, or a baseline's hello (a server drops a client that is silent this long)")
	f.StringVar(&o.cpuProfile, "cpuprofile", "", "write a Go CPU profile of the run to `FILE` (go tool pprof)")
	return cmd
}

// check refuses flags that do nothing where they are given; changed says
// which flags the user set.
func (o *benchOpts) check(changed func(string) bool) error {
	if o.listen != "" && o.connect != "" {
		return usagef("--listen and --connect exclude each other: run one process of each")
	}
	if o.listen != "" {
		var ignored []string
		for _, f := range serverIgnores {
			if changed(f) {
				ignored = append(ignored, f)
			}
		}
		if len(ignored) > 0 {
			return usagef("%s: the client chooses these and tells the server, so a bench server (--listen) does not take them; give them to the client (rnic-loader bench --connect ADDR)", flagNames(ignored...))
		}
		if !changed("timeout") {
			o.timeout = 0 // a server waits for its clients as long as it takes
		}
	} else if o.persistent {
		return usagef("-P/--persistent is for a server: give it with --listen ADDR")
	}
	if o.pcap != "" && (o.listen != "" || o.connect != "") {
		return usagef("--pcap works in loopback mode only (neither --listen nor --connect)")
	}
	if o.timeout < 0 {
		return usagef("--timeout %v: want 0 (no limit) or a positive duration such as 30s", o.timeout)
	}
	if o.startupTimeout <= 0 {
		return usagef("--startup-timeout %v: want a positive duration such as 10s (a server must not wait forever for a silent client)", o.startupTimeout)
	}
	return nil
}

func (o *benchOpts) params() (benchParams, error) {
	switch o.op {
	case "write", "read", "send":
	default:
		return benchParams{}, usagef("--op %q: want write, read or send", o.op)
	}
	size, total := o.size.Int64(), o.total.Int64()
	if total < size {
		return benchParams{}, usagef("--bytes %s is less than one message of --size %s: give --bytes at least --size", sayOctets(total), sayOctets(size))
	}
	if o.mpaRev != 1 && o.mpaRev != 2 {
		return benchParams{}, usagef("--mpa-rev %d: want 1 or 2", o.mpaRev)
	}
	var warm int64
	if o.warmup.isAuto {
		warm = min(total/8, 64<<20) / size * size
	} else {
		warm = o.warmup.Int64()
	}
	if o.pcap != "" {
		warm = 0
	}
	if warm > 0 && warm < size {
		warm = size
	}
	rounds := o.rounds
	if rounds < 1 || rounds > maxRounds {
		return benchParams{}, usagef("--rounds %d: want 1 to %d", rounds, maxRounds)
	}
	if o.pcap != "" {
		rounds = 1 // one session in the capture
	}
	// Every round moves at least one whole message.
	rounds = int(min(int64(rounds), total/size))
	w := o.window
	if w < 0 || w > maxWindow {
		return benchParams{}, usagef("--window %d: want 0 (about 4 MiB worth of messages) or 1 to %d messages", w, maxWindow)
	}
	if w == 0 {
		w = int(max(1, min(1024, (4<<20)/size)))
	}
	if int64(w)*size > maxWindowOctets {
		return benchParams{}, usagef("--window %d × --size %s is %s, past the limit of %s: give a smaller --window", w, sayOctets(size), sayOctets(int64(w)*size), sayOctets(maxWindowOctets))
	}
	return benchParams{Op: o.op, Size: int(size), Total: total, Seed: o.seed, Window: w, Raw: !o.noRaw, Rounds: rounds, Warmup: warm, Run: rand.Uint64()}, nil
}

func (o *benchOpts) mpaConfig() mpa.Config {
	return mpa.Config{Rev: uint8(o.mpaRev), Markers: o.markers, NoCRC: o.noCRC, IRD: 32, ORD: 32, Timeout: o.startupTimeout}
}

func runBench(ctx context.Context, stdout, stderr io.Writer, o *benchOpts) error {
	var bp benchParams
	if o.listen == "" {
		var err error
		if bp, err = o.params(); err != nil {
			return err
		}
	} else if o.mpaRev != 1 && o.mpaRev != 2 {
		return usagef("--mpa-rev %d: want 1 or 2", o.mpaRev)
	}
	ctx, cancel := withTimeout(ctx, o.timeout)
	defer cancel()
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
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
			return fmt.Errorf("listening on %s: %w (is another server on that port? choose another port)", o.listen, err)
		}
		defer ln.Close()
		if !o.quiet {
			fmt.Fprintf(stderr, "bench server listening on %s\n", ln.Addr())
		}
		err = serveBench(ctx, ln, o, progW, stderr)
		if wasInterrupted(ctx) {
			return nil
		}
		if c := endCause(ctx); c != nil {
			return c
		}
		return err
	}
	res := &Result{
		Schema: benchSchema, Mode: "loopback", Op: bp.Op,
		MessageOctets: int64(bp.Size), TotalOctets: bp.Total, WarmupOctets: bp.Warmup,
		Messages: (bp.Total + int64(bp.Size) - 1) / int64(bp.Size), Window: bp.Window, Seed: bp.Seed,
		Rounds: []Round{},
	}
	if o.pcap != "" {
		res.Note = ptr(pcapNote)
	}
	var (
		addr   string
		srvErr = make(chan error, 1)
	)
	srvCtx, srvCancel := context.WithCancel(ctx)
	defer srvCancel()
	if o.connect != "" {
		addr = o.connect
		res.Mode, res.Server = "client", ptr(addr)
		close(srvErr)
	} else {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("loopback: %w", err)
		}
		defer ln.Close()
		addr = ln.Addr().String()
		if o.pcap != "" {
			o.capture = &captureSlot{}
		}
		go func() { srvErr <- serveBench(srvCtx, ln, o, nil, stderr); close(srvErr) }()
	}
	err := clientBench(ctx, addr, bp, o, progW, res)
	if err != nil {
		srvCancel()
	}
	if serr := <-srvErr; serr != nil && err == nil {
		err = fmt.Errorf("loopback server: %w", serr)
	} else if serr != nil && !errors.Is(serr, context.Canceled) && ctx.Err() == nil {
		err = fmt.Errorf("%w (loopback server: %v)", err, serr)
	}
	switch {
	case err != nil && wasInterrupted(ctx):
		// Ctrl-C: the run ends here, and what it measured is the result.
		res.Interrupted, err = true, nil
	case err != nil && endCause(ctx) != nil:
		err = endCause(ctx)
	case err == nil && res.Mismatches != 0:
		err = fmt.Errorf("%d octets arrived different from what was sent: the stack or the path corrupts data; rerun with --pcap to capture it", res.Mismatches)
	}
	if err != nil {
		res.Error = ptr(err.Error())
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if jerr := enc.Encode(res); jerr != nil && err == nil {
			err = jerr
		}
	} else if err == nil {
		printResult(stdout, res)
	}
	return err
}

func onOff(b *bool) string {
	if *b {
		return "on"
	}
	return "off"
}

func printResult(w io.Writer, r *Result) {
	warm := ""
	if r.WarmupOctets > 0 {
		warm = fmt.Sprintf(", after a warm-up of %s", sayOctets(r.WarmupOctets))
	}
	fmt.Fprintf(w, "%s: %d messages of %s, %s in %d rounds%s\n",
		r.Op, r.Messages, sayOctets(r.MessageOctets), sayOctets(r.TotalOctets), len(r.Rounds), warm)
	if r.MPARev == nil {
		fmt.Fprintf(w, "  MPA not negotiated\n")
	} else {
		fmt.Fprintf(w, "  MPA rev %d, markers %s, CRC %s, EMSS %d, MULPDU %d\n", *r.MPARev, onOff(r.Markers), onOff(r.CRC), *r.EMSS, *r.MULPDU)
	}
	if r.Interrupted {
		fmt.Fprintf(w, "  interrupted: %d rounds completed, %s measured\n", len(r.Rounds), sayOctets(r.MeasuredOctets))
	}
	if r.GoodputBitsPerSecond == nil {
		fmt.Fprintf(w, "  no round completed: no goodput to report\n")
	} else {
		fmt.Fprintf(w, "  iWARP goodput   %8.3f Gbit/s  (%.0f messages/s, %.3f s)\n", *r.GoodputBitsPerSecond/1e9, *r.MessagesPerSecond, *r.Seconds)
	}
	if r.RawTCPBitsPerSecond != nil {
		fmt.Fprintf(w, "  raw TCP goodput %8.3f Gbit/s  (%.0f messages/s, %.3f s)\n", *r.RawTCPBitsPerSecond/1e9, *r.RawTCPMessagesPerSecond, *r.RawTCPSeconds)
		fmt.Fprintf(w, "  ratio           %8.3f  (iWARP / raw TCP)\n", *r.Ratio)
	}
	if len(r.Rounds) > 1 {
		fmt.Fprintf(w, "  per round (Gbit/s; the side named first ran first):\n")
		for _, rd := range r.Rounds {
			iw := fmt.Sprintf("iWARP %.3f", rd.GoodputBitsPerSecond/1e9)
			if rd.RawTCPBitsPerSecond == nil {
				fmt.Fprintf(w, "    round %d: %s\n", rd.Round, iw)
				continue
			}
			raw := fmt.Sprintf("raw TCP %.3f", *rd.RawTCPBitsPerSecond/1e9)
			if rd.RawFirst {
				iw, raw = raw, iw
			}
			fmt.Fprintf(w, "    round %d: %s, %s, ratio %.3f\n", rd.Round, iw, raw, *rd.Ratio)
		}
	}
	fmt.Fprintf(w, "  verified %d octets, %d mismatches\n", r.VerifiedBytes, r.Mismatches)
	if r.Pcap != nil {
		fmt.Fprintf(w, "  pcap written to %s\n", *r.Pcap)
	}
	if r.Note != nil {
		fmt.Fprintf(w, "  note: %s\n", *r.Note)
	}
}

// clientBench runs the client's side: the warm-up, then the rounds. It
// fills res as rounds complete, so that a run that fails or is
// interrupted still reports the rounds it finished.
func clientBench(ctx context.Context, addr string, bp benchParams, o *benchOpts, progW io.Writer, res *Result) error {
	pat := newPattern(bp.Seed, bp.Size)
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
			res.MPARev, res.Markers, res.CRC, res.EMSS, res.MULPDU = discard.MPARev, discard.Markers, discard.CRC, discard.EMSS, discard.MULPDU
			return fmt.Errorf("warm-up: %w", err)
		}
		if bp.Raw {
			if _, err := rawPhase(ctx, addr, wb, pat, progW, " (warm-up)"); err != nil {
				return fmt.Errorf("warm-up: %w", err)
			}
		}
		bp.Rounds++
	}
	var iwTime, rawTime time.Duration
	var iwMsgs int64
	defer func() {
		// Totals over the completed rounds, whatever ended the run.
		if iwTime > 0 {
			res.Seconds = ptr(iwTime.Seconds())
			res.GoodputBitsPerSecond = ptr(float64(res.MeasuredOctets) * 8 / iwTime.Seconds())
			res.MessagesPerSecond = ptr(float64(iwMsgs) / iwTime.Seconds())
		}
		if rawTime > 0 {
			res.RawTCPSeconds = ptr(rawTime.Seconds())
			res.RawTCPBitsPerSecond = ptr(float64(res.MeasuredOctets) * 8 / rawTime.Seconds())
			res.RawTCPMessagesPerSecond = ptr(float64(iwMsgs) / rawTime.Seconds())
			res.Ratio = ptr(*res.GoodputBitsPerSecond / *res.RawTCPBitsPerSecond)
		}
	}()
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
		msgs := (rb.Total + int64(bp.Size) - 1) / int64(bp.Size)
		round := Round{Round: int(r + 1), Octets: rb.Total, Messages: msgs, RawFirst: bp.Raw && r%2 == 1}
		var raw time.Duration
		rawRound := func() error {
			d, err := rawPhase(ctx, addr, rb, pat, progW, label)
			if err != nil {
				return err
			}
			raw = d
			round.RawTCPSeconds = ptr(d.Seconds())
			round.RawTCPBitsPerSecond = ptr(float64(rb.Total) * 8 / d.Seconds())
			round.RawTCPMessagesPerSecond = ptr(float64(msgs) / d.Seconds())
			return nil
		}
		if round.RawFirst {
			if err := rawRound(); err != nil {
				return err
			}
		}
		o := *o
		if r > 0 {
			o.pcap = ""
		}
		s, err := iwarpSession(ctx, addr, rb, &o, pat, progW, label, res)
		if err != nil {
			return err
		}
		round.Seconds = s.Seconds()
		round.GoodputBitsPerSecond = float64(rb.Total) * 8 / s.Seconds()
		round.MessagesPerSecond = float64(msgs) / s.Seconds()
		if bp.Raw && !round.RawFirst {
			if err := rawRound(); err != nil {
				return err
			}
		}
		if round.RawTCPBitsPerSecond != nil {
			round.Ratio = ptr(round.GoodputBitsPerSecond / *round.RawTCPBitsPerSecond)
		}
		// The round counts only now that both its phases are done.
		iwTime += s
		rawTime += raw
		iwMsgs += msgs
		res.MeasuredOctets += rb.Total
		res.Rounds = append(res.Rounds, round)
	}
	if res.VerifiedBytes != bp.Total {
		return fmt.Errorf("bench: %d of %d octets verified: the server's verdict does not cover the run (a bug in the bench or the stack; rerun with --pcap to capture it)", res.VerifiedBytes, bp.Total)
	}
	return nil
}

// rawPhase runs one raw TCP baseline of bp.Total octets and returns its
// time (to the receiver's verdict).
func rawPhase(ctx context.Context, addr string, bp benchParams, pat *pattern, progW io.Writer, label string) (time.Duration, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return 0, fmt.Errorf("raw TCP baseline: %w", dialError(ctx, addr, err, "rnic-loader bench --listen "+addr))
	}
	defer c.Close()
	prog := newProgress(progW, "raw TCP"+label, bp.Total)
	t, err := rawSend(ctx, c, pat, rawHello{size: bp.Size, total: bp.Total, seed: bp.Seed, run: bp.Run, rounds: bp.Rounds}, prog)
	prog.finish()
	return t, err
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
		return 0, dialError(ctx, addr, err, "rnic-loader bench --listen "+addr)
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
		res.Pcap = ptr(o.pcap)
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
			return 0, fmt.Errorf("the server at %s rejected the bench: %s", addr, re.Reply.PrivateData)
		}
		return 0, fmt.Errorf("iWARP startup with %s: %w (is it a bench server: rnic-loader bench --listen?)", addr, err)
	}
	p := qp.Params()
	res.Markers, res.CRC, res.MPARev, res.EMSS, res.MULPDU = ptr(p.TxMarkers), ptr(p.CRC), ptr(p.Revision()), ptr(qp.EMSS()), ptr(qp.MULPDU())
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
		return 0, fmt.Errorf("bench: the server verified %d of %d octets (a bug in the bench or the stack; rerun with --pcap to capture it)", verified, bp.Total)
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
