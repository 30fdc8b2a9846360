package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/verbs"
)

// rnic-loader lat measures latency as perftest's ib_write_lat,
// ib_send_lat and ib_read_lat do, over the Go iWARP stack, and raw TCP
// ping-pong over the same path in the same run as the yardstick.
//
// Each message size is one iWARP session and one raw TCP connection, both
// open for the whole size. After an untimed warm-up on each, the
// iterations are split into rounds; in each round both paths run their
// share, the one that goes first alternating (iWARP first in round 1, raw
// TCP first in round 2, ...), so that a machine whose load drifts during
// the run weighs on both alike.
//
// Every message is verified: a ping or pong carries its iteration number
// in its first octets (the low min(size, 8) octets, little-endian) and
// the rest of a fixed pseudo-random pattern (pattern.go; one per
// direction). The receiver checks the iteration number before it answers
// (a stale or lost message fails there) and the whole message after its
// answer is on its way, so that the check of a large message is not part
// of the time measured; a difference fails the run.

const (
	latSchema     = "rnic-loader/lat/1"
	latMaxSize    = 64 << 20
	latMaxIters   = 10_000_000
	latMaxRounds  = 1000
	latMaxSizes   = 64
	latAllFirst   = 2
	latAllLast    = 8 << 20
	latAllBudget  = 1 << 30 // -a without --iters: octets per path and size
	latAllMinIter = 100
	// latCtlLen is a control message on QN 0 (Sends with Solicited Event,
	// which tells them from ping Sends): kind, a, b as big-endian 64-bit
	// numbers.
	latCtlLen      = 24
	latCtlFinish   = 1 // client: no more pings
	latCtlVerdict  = 2 // server: a pings verified, b octets differed
	latCtlMismatch = 3 // server: ping a arrived with b octets wrong
	// latRecvBufs is how many receive buffers each side keeps posted: a
	// ping-pong has one message in flight, a control message may follow.
	latRecvBufs = 3
)

// latServerIgnores are the lat flags a server has no use for: the client
// chooses them and sends them in its MPA Request (or raw TCP hello).
var latServerIgnores = []string{"op", "size", "all", "iters", "duration", "warmup-iters", "rounds", "no-inline", "receive-thread", "json"}

type latOpts struct {
	listen, connect string
	persistent      bool
	op              string
	size            *sizeValue
	all             bool
	iters           int
	duration        time.Duration
	warmup          int
	rounds          int
	noInline        bool
	receiveThread   bool
	markers, noCRC  bool
	mpaRev          int
	json, quiet     bool
	timeout         time.Duration
	startupTimeout  time.Duration
	cpuProfile      string
	itersGiven      bool
}

// latParams travel from the client to the server in the MPA Request's
// private data: what to expect and verify, and for RDMA Writes where the
// client wants its pongs.
type latParams struct {
	// Test is "lat": a bench client's Request to a lat server (or the
	// reverse) is refused with a message that says so.
	Test   string `json:"test"`
	Op     string `json:"op"`
	Size   int    `json:"size"`
	Seed   uint64 `json:"seed"`
	Inline bool   `json:"inline"`
	// Thread: the queue pairs run their receive side on a goroutine of
	// their own, not on the one that waits (verbs' ManualProgress).
	Thread bool `json:"thread,omitempty"`
	// Run groups the connections of one client run; Sizes is how many
	// iWARP sessions (and as many raw TCP baselines) it has.
	Run   uint64 `json:"run"`
	Sizes int    `json:"sizes"`
	STag  uint32 `json:"stag"`
	Addr  uint64 `json:"addr"`
}

// latRegion travels back in the Reply: the server's region, the Data Sink
// of the client's Writes or the Data Source of its Reads.
type latRegion struct {
	STag uint32 `json:"stag"`
	Addr uint64 `json:"addr"`
	Len  uint64 `json:"len"`
}

func (p *latParams) check() error {
	switch {
	case p.Test != "lat":
		return errors.New("not a lat client: this is an rnic-loader lat server (rnic-loader lat --connect talks to it)")
	case p.Op != "write" && p.Op != "send" && p.Op != "read":
		return fmt.Errorf("unknown op %q", p.Op)
	case p.Size < 1 || p.Size > latMaxSize:
		return fmt.Errorf("message size %d out of range (1 to %d)", p.Size, latMaxSize)
	case p.Sizes < 1 || p.Sizes > latMaxSizes:
		return fmt.Errorf("%d sizes in a run: want 1 to %d", p.Sizes, latMaxSizes)
	}
	return nil
}

// The result: --json prints it as is, schema rnic-loader/lat/1. Every
// field is always present, null where unknown.
type latResult struct {
	Schema string  `json:"schema"`
	Mode   string  `json:"mode"`   // "loopback" or "client"
	Server *string `json:"server"` // the address given to --connect
	Op     string  `json:"op"`
	// Timed says what one sample is: "half_round_trip" (write, send: half
	// a ping-pong, as ib_write_lat and ib_send_lat report) or
	// "round_trip" (read: one Read from post to completion, as
	// ib_read_lat; on raw TCP a request and its response).
	Timed      string `json:"timed"`
	InlineSend bool   `json:"inline_send"`
	// ManualProgress: the waiting goroutine runs the receive side
	// (false with --receive-thread).
	ManualProgress bool `json:"manual_progress"`
	AllSizes       bool `json:"all_sizes"`
	// Iterations per size and path (null with --duration), or the
	// duration per size.
	Iterations      *int     `json:"iterations"`
	DurationSeconds *float64 `json:"duration_seconds"`
	WarmupIters     int      `json:"warmup_iterations"`
	Rounds          int      `json:"rounds"`
	// What MPA negotiated: null until a session has.
	MPARev  *uint8 `json:"mpa_rev"`
	Markers *bool  `json:"markers"`
	CRC     *bool  `json:"crc"`
	EMSS    *int   `json:"emss"`
	MULPDU  *int   `json:"mulpdu"`
	// Octets of pings and pongs (and Reads, and raw TCP read requests)
	// verified on both paths, warm-up included, and how many differed.
	VerifiedOctets int64          `json:"verified_octets"`
	Mismatches     int64          `json:"mismatches"`
	Interrupted    bool           `json:"interrupted"`
	Error          *string        `json:"error"`
	Sizes          []latSizeStats `json:"sizes"`
}

// latSizeStats is one message size: both paths' statistics and their ratio.
type latSizeStats struct {
	MessageOctets int64    `json:"message_octets"`
	Iterations    *int     `json:"iterations"` // planned per path; null with --duration
	WarmupIters   int      `json:"warmup_iterations"`
	IWARP         latStats `json:"iwarp"`
	RawTCP        latStats `json:"raw_tcp"`
	// iWARP over raw TCP, of the medians and of the 99th percentiles.
	RatioMedian *float64   `json:"ratio_median"`
	RatioP99    *float64   `json:"ratio_p99"`
	Rounds      []latRound `json:"rounds"`
}

// latRound is one round of a size: how many samples each path took and
// their medians, to show drift through the run.
type latRound struct {
	Round               int      `json:"round"` // from 1
	RawFirst            bool     `json:"raw_first"`
	IWARPSamples        int      `json:"iwarp_samples"`
	RawTCPSamples       int      `json:"raw_tcp_samples"`
	IWARPMedianSeconds  *float64 `json:"iwarp_median_seconds"`
	RawTCPMedianSeconds *float64 `json:"raw_tcp_median_seconds"`
	RatioMedian         *float64 `json:"ratio_median"`
}

func newLatCmd() *cobra.Command {
	o := latOpts{size: newSize(64, 1, latMaxSize, "message size")}
	cmd := &cobra.Command{
		Use:   "lat",
		Short: "Measure RDMA Write, Send or Read latency over the Go iWARP stack, against raw TCP",
		Long: `lat measures latency as perftest's ib_write_lat, ib_send_lat and ib_read_lat
do, over the Go reference iWARP stack (RDMAP/DDP/MPA on real TCP), and raw TCP
ping-pong over the same path, with the same message size and number of
iterations, in the same run, reporting both and their ratio.

  write  ping-pong of RDMA Writes: each side Writes into the other's buffer
         and learns of the peer's Write when it has been placed (the stack's
         NotifyWrites, where ib_write_lat polls the buffer's last octet).
  send   ping-pong of Sends into receive buffers posted ahead.
  read   the client RDMA-Reads the server's buffer, one Read at a time; the
         server's CPU takes no part. Raw TCP: an 8-octet request answered
         by --size octets.

Write and send report half of each round trip (as ib_write_lat and
ib_send_lat), read the whole Read (as ib_read_lat). Each iteration is timed
alone (monotonic clock). Every ping and pong carries its iteration number and
a pattern that the receiver checks; Reads are checked by the client. A
difference fails the run (exit 1). Raw TCP uses TCP_NODELAY and reads exact
message sizes.

Each size is one iWARP session and one raw TCP connection. After
--warmup-iters untimed iterations on each, the iterations are split into
--rounds rounds in which both paths run their share, the one that goes first
alternating (iWARP first in round 1, raw TCP in round 2, ...), so that load
that drifts during the run weighs on both alike. With --duration, the first
path of a round runs for its share of the time and the second as many
iterations. -a runs every power of two from 2 octets to 8 MiB, one line
each; without --iters each size runs as many iterations as move 1 GiB each
way (at most 10000, at least 100).

The default size, 64 octets, is the size the stack's latency goal is set at
(a median within 1.3 times raw TCP's); it holds the 8-octet iteration number
and a pattern (perftest's default of 2 octets holds only the number's low
octets). Queue pairs use InlineSend (PostSend writes to the socket itself
when the send queue is idle; measured faster) unless --no-inline; the client
tells the server.

The goroutine that waits for a completion runs the queue pair's receive
side itself (verbs' ManualProgress), as raw TCP's reader does. With
--receive-thread each queue pair reads on a goroutine of its own and hands
each completion to the waiting one; with idle processors the Go runtime
wakes another thread for that hand-off, which costs more than the hand-off
itself (GOMAXPROCS=1 shows the stack without that cost).

With neither --listen nor --connect both ends run in this process over
loopback. A server (--listen) serves one client run and exits, or with -P run
after run until Ctrl-C; it refuses the flags the client chooses. Anything
that is not a lat client is logged and dropped.

Output: a table of min, median, mean, p99, p99.9, max and standard deviation
in µs for iWARP and raw TCP, their ratios and a histogram (buckets √2 wide);
-a prints one line per size. Progress goes to stderr once a second (-q:
none). Percentiles interpolate between the closest ranks (numpy's default).
--json prints one record (schema "rnic-loader/lat/1"), also on failure, with
"error" set. Its fields, all always present (null when unknown): schema,
mode, server, op, timed ("half_round_trip" or "round_trip"), inline_send,
all_sizes, iterations (per size and path; null with --duration, and with -a
without --iters, where each size has its own), duration_seconds,
warmup_iterations, rounds, mpa_rev,
markers, crc, emss, mulpdu, verified_octets, mismatches, interrupted, error,
and sizes: a list, one per size, of {message_octets, iterations,
warmup_iterations, iwarp, raw_tcp, ratio_median, ratio_p99, rounds}, where
iwarp and raw_tcp are {samples, min_seconds, median_seconds, mean_seconds,
p99_seconds, p99_9_seconds, max_seconds, stddev_seconds, histogram: a list of
{low_seconds, high_seconds, count}} and rounds a list of {round, raw_first,
iwarp_samples, raw_tcp_samples, iwarp_median_seconds, raw_tcp_median_seconds,
ratio_median}.

Ctrl-C ends a run early: what was measured is reported ("interrupted": true)
and the exit status is 0. A --timeout that fires is a failure.
Exit status: 0 success, 1 failure (mismatch, protocol error, lost peer,
--timeout), 2 wrong command line.`,
		Example: `  # 64-octet RDMA Write latency against raw TCP, both ends in this process
  rnic-loader lat

  # Send latency between two processes; JSON for scripts
  rnic-loader lat --listen 127.0.0.1:7176 -P
  rnic-loader lat --connect 127.0.0.1:7176 --op send --json

  # Reads of 4 KiB for 10 seconds, in 20 rounds
  rnic-loader lat --op read --size 4KiB --duration 10s --rounds 20

  # Every size from 2 octets to 8 MiB, one line each, as perftest's -a
  rnic-loader lat -a

  # The same without InlineSend, to see what it saves
  rnic-loader lat --no-inline`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.check(cmd.Flags().Changed); err != nil {
				return err
			}
			return runLat(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), &o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", "", "serve lat clients on `ADDR` (host:port); see -P")
	f.StringVar(&o.connect, "connect", "", "run the client against a server at `ADDR` (host:port)")
	f.BoolVarP(&o.persistent, "persistent", "P", false, "server: keep serving client runs, one after the other, until Ctrl-C")
	f.StringVar(&o.op, "op", "write", "operation: write, send or read")
	f.Var(o.size, "size", "message size in octets (1 to 64 MiB; e.g. 64, 4KiB, 1MB)")
	f.BoolVarP(&o.all, "all", "a", false, "every size from 2 octets to 8 MiB, powers of two, one line each")
	f.IntVar(&o.iters, "iters", 10000, fmt.Sprintf("timed iterations per size on each path (1 to %d)", latMaxIters))
	f.DurationVar(&o.duration, "duration", 0, "run each size for about this long instead of --iters (e.g. 10s)")
	f.IntVar(&o.warmup, "warmup-iters", 1000, "untimed iterations on each path before the timed ones (0: none; -a: at most a size's --iters)")
	f.IntVar(&o.rounds, "rounds", 10, fmt.Sprintf("rounds the iterations are split into, iWARP and raw TCP alternating first (1 to %d)", latMaxRounds))
	f.BoolVar(&o.noInline, "no-inline", false, "queue pairs without InlineSend: every work request goes through the transmit goroutine")
	f.BoolVar(&o.receiveThread, "receive-thread", false, "queue pairs read on a goroutine of their own, which hands each completion to the waiting one (no ManualProgress)")
	f.BoolVar(&o.markers, "markers", false, "ask for MPA markers in both directions")
	f.BoolVar(&o.noCRC, "no-crc", false, "declare a preference not to use CRC32c (used only if the peer agrees)")
	f.IntVar(&o.mpaRev, "mpa-rev", 2, "MPA revision to offer: 1 or 2")
	f.BoolVar(&o.json, "json", false, "print the result as one JSON record (schema rnic-loader/lat/1) on stdout")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "nothing on stderr but warnings and errors: no progress lines, no server log")
	f.DurationVar(&o.timeout, "timeout", 10*time.Minute, "give up after this long, a failure (0: no limit; a server has no limit unless given one)")
	f.DurationVar(&o.startupTimeout, "startup-timeout", mpa.DefaultStartupTimeout, "limit on each connection's startup: the MPA exchange, or a baseline's hello (a server drops a client that is silent this long)")
	f.StringVar(&o.cpuProfile, "cpuprofile", "", "write a Go CPU profile of the run to `FILE` (go tool pprof)")
	return cmd
}

// check refuses flags that do nothing where they are given, and values
// out of range; changed says which flags the user set.
func (o *latOpts) check(changed func(string) bool) error {
	if o.listen != "" && o.connect != "" {
		return usagef("--listen and --connect exclude each other: run one process of each")
	}
	if o.listen != "" {
		var ignored []string
		for _, f := range latServerIgnores {
			if changed(f) {
				ignored = append(ignored, f)
			}
		}
		if len(ignored) > 0 {
			return usagef("%s: the client chooses these and tells the server, so a lat server (--listen) does not take them; give them to the client (rnic-loader lat --connect ADDR)", flagNames(ignored...))
		}
		if !changed("timeout") {
			o.timeout = 0 // a server waits for its clients as long as it takes
		}
	} else if o.persistent {
		return usagef("-P/--persistent is for a server: give it with --listen ADDR")
	}
	switch o.op {
	case "write", "send", "read":
	default:
		return usagef("--op %q: want write, send or read", o.op)
	}
	if o.all && changed("size") {
		return usagef("-a/--all runs every size from 2 octets to 8 MiB: give either it or --size")
	}
	o.itersGiven = changed("iters")
	if o.itersGiven && changed("duration") {
		return usagef("--iters and --duration exclude each other: give a number of iterations or a time")
	}
	if o.iters < 1 || o.iters > latMaxIters {
		return usagef("--iters %d: want 1 to %d", o.iters, latMaxIters)
	}
	if changed("duration") && o.duration <= 0 {
		return usagef("--duration %v: want a positive duration such as 10s", o.duration)
	}
	if o.warmup < 0 || o.warmup > latMaxIters {
		return usagef("--warmup-iters %d: want 0 (no warm-up) to %d", o.warmup, latMaxIters)
	}
	if o.rounds < 1 || o.rounds > latMaxRounds {
		return usagef("--rounds %d: want 1 to %d", o.rounds, latMaxRounds)
	}
	if o.mpaRev != 1 && o.mpaRev != 2 {
		return usagef("--mpa-rev %d: want 1 or 2", o.mpaRev)
	}
	if o.timeout < 0 {
		return usagef("--timeout %v: want 0 (no limit) or a positive duration such as 30s", o.timeout)
	}
	if o.startupTimeout <= 0 {
		return usagef("--startup-timeout %v: want a positive duration such as 10s (a server must not wait forever for a silent client)", o.startupTimeout)
	}
	return nil
}

func (o *latOpts) mpaConfig() mpa.Config {
	// One Read at a time: IRD and ORD of 1 would do; a little more costs
	// nothing.
	return mpa.Config{Rev: uint8(o.mpaRev), Markers: o.markers, NoCRC: o.noCRC, IRD: 4, ORD: 4, Timeout: o.startupTimeout}
}

// sizes lists the message sizes of the run.
func (o *latOpts) sizes() []int {
	if !o.all {
		return []int{int(o.size.Int64())}
	}
	var s []int
	for n := latAllFirst; n <= latAllLast; n *= 2 {
		s = append(s, n)
	}
	return s
}

// itersFor is the number of timed iterations of a size (0 with
// --duration): --iters, or with -a and no --iters, what moves latAllBudget
// octets each way, within latAllMinIter and --iters.
func (o *latOpts) itersFor(size int) int {
	if o.duration > 0 {
		return 0
	}
	if o.all && !o.itersGiven {
		return min(o.iters, max(latAllMinIter, latAllBudget/size))
	}
	return o.iters
}

func (o *latOpts) warmupFor(size int) int {
	if n := o.itersFor(size); n > 0 && o.all {
		return min(o.warmup, n)
	}
	return o.warmup
}

func runLat(ctx context.Context, stdout, stderr io.Writer, o *latOpts) error {
	ctx, cancel := withTimeout(ctx, o.timeout)
	defer cancel()
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
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
			fmt.Fprintf(stderr, "lat server listening on %s\n", ln.Addr())
		}
		err = serveLat(ctx, ln, o, progW, stderr)
		if wasInterrupted(ctx) {
			return nil
		}
		if c := endCause(ctx); c != nil {
			return c
		}
		return err
	}
	res := &latResult{
		Schema: latSchema, Mode: "loopback", Op: o.op, Timed: "half_round_trip",
		InlineSend: !o.noInline, ManualProgress: !o.receiveThread, AllSizes: o.all, WarmupIters: o.warmup, Rounds: o.rounds,
		Sizes: []latSizeStats{},
	}
	if o.op == "read" {
		res.Timed = "round_trip"
	}
	if o.duration > 0 {
		res.DurationSeconds = ptr(o.duration.Seconds())
	} else if !o.all || o.itersGiven {
		res.Iterations = ptr(o.iters)
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
		go func() { srvErr <- serveLat(srvCtx, ln, o, nil, stderr); close(srvErr) }()
	}
	var lines func(*latSizeStats)
	if !o.json && o.all {
		header := false
		lines = func(s *latSizeStats) {
			if !header {
				printLatAllHeader(stdout, res)
				header = true
			}
			printLatAllLine(stdout, s)
		}
	}
	err := latClient(ctx, addr, o, progW, res, lines)
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
		res.Interrupted, err = true, nil
	case err != nil && endCause(ctx) != nil:
		err = endCause(ctx)
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
		if o.all {
			printLatAllEnd(stdout, res)
		} else {
			printLat(stdout, res)
		}
	}
	return err
}

// latClient runs the client's side, size after size, adding each size's
// figures to res as it ends (a run that fails or is interrupted reports
// the sizes it measured, the one in progress included) and handing them
// to line, if set.
func latClient(ctx context.Context, addr string, o *latOpts, progW io.Writer, res *latResult, line func(*latSizeStats)) error {
	sizes := o.sizes()
	run := rand.Uint64()
	prog := newLatProgress(progW, o.op)
	defer prog.stop()
	for idx, size := range sizes {
		p := latParams{Test: "lat", Op: o.op, Size: size, Seed: run + uint64(idx), Inline: !o.noInline, Thread: o.receiveThread, Run: run, Sizes: len(sizes)}
		st, err := latSize(ctx, addr, o, p, prog, res)
		if st != nil {
			res.Sizes = append(res.Sizes, *st)
			if line != nil {
				line(st)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// latPath is one side of the comparison: an iWARP session or a raw TCP
// connection, ready for ping-pong iterations.
type latPath interface {
	// iter runs iteration i and returns its time: from just before the
	// ping (or Read) is posted to its answer's arrival. The answer is
	// verified after the clock stops.
	iter(ctx context.Context, i uint64) (time.Duration, error)
	// finish ends the session and returns the server's verdict: pings
	// it verified and octets that differed.
	finish(ctx context.Context) (verified, mismatches int64, err error)
	close()
	counts() (verified, mismatches int64) // what this side verified
}

// latSize measures one message size: it opens both paths, warms them up,
// runs the rounds and collects the verdicts. It returns the size's
// figures whenever some were measured, with the error that ended it.
func latSize(ctx context.Context, addr string, o *latOpts, p latParams, prog *latProgress, res *latResult) (*latSizeStats, error) {
	iters, warm := o.itersFor(p.Size), o.warmupFor(p.Size)
	prog.size(p.Size, iters)
	iw, err := dialLatIWARP(ctx, addr, o, p, res)
	if err != nil {
		return nil, err
	}
	defer iw.close()
	raw, err := dialLatRaw(ctx, addr, o, p)
	if err != nil {
		return nil, err
	}
	defer raw.close()
	paths := [2]latPath{iw, raw}
	var next [2]uint64 // the next iteration number of each path
	// The untimed warm-up: the paths' first iterations run slower (cold
	// caches, the scheduler learning the goroutines, TCP's first
	// segments), and would show in the tail of the timed ones.
	for k, pa := range paths {
		for ; next[k] < uint64(warm); next[k]++ {
			if _, err := pa.iter(ctx, next[k]); err != nil {
				return nil, latPathErr(k, err)
			}
		}
	}
	st := &latSizeStats{MessageOctets: int64(p.Size), WarmupIters: warm, Rounds: []latRound{}}
	if iters > 0 {
		st.Iterations = ptr(iters)
	}
	rounds := o.rounds
	if iters > 0 {
		rounds = min(rounds, iters)
	}
	// Room for the samples, made before the timed loops; past 2^20 (and
	// with --duration) the slices grow between two iterations.
	capHint := min(iters, 1<<20)
	if iters == 0 {
		capHint = 1 << 16
	}
	samples := [2][]int64{make([]int64, 0, capHint), make([]int64, 0, capHint)}
	var bounds [][2][2]int // per round, per path: start and end index in samples
	half := o.op != "read"
	defer func() {
		st.IWARP = summarize(latValues(samples[0], half))
		st.RawTCP = summarize(latValues(samples[1], half))
		st.RatioMedian, st.RatioP99 = latRatio(st.IWARP.MedianSeconds, st.RawTCP.MedianSeconds), latRatio(st.IWARP.P99Seconds, st.RawTCP.P99Seconds)
		for r, b := range bounds {
			rd := latRound{Round: r + 1, RawFirst: r%2 == 1, IWARPSamples: b[0][1] - b[0][0], RawTCPSamples: b[1][1] - b[1][0]}
			iwR := summarize(latValues(samples[0][b[0][0]:b[0][1]], half))
			rawR := summarize(latValues(samples[1][b[1][0]:b[1][1]], half))
			rd.IWARPMedianSeconds, rd.RawTCPMedianSeconds = iwR.MedianSeconds, rawR.MedianSeconds
			rd.RatioMedian = latRatio(rd.IWARPMedianSeconds, rd.RawTCPMedianSeconds)
			st.Rounds = append(st.Rounds, rd)
		}
		for _, pa := range paths {
			v, m := pa.counts()
			res.VerifiedOctets += v
			res.Mismatches += m
		}
	}()
	for r := 0; r < rounds; r++ {
		order := [2]int{0, 1}
		if r%2 == 1 {
			order = [2]int{1, 0} // raw TCP first in every other round
		}
		prog.round(r+1, rounds)
		bounds = append(bounds, [2][2]int{{len(samples[0]), len(samples[0])}, {len(samples[1]), len(samples[1])}})
		b := &bounds[len(bounds)-1]
		// An equal share of the iterations per round; the last takes the
		// rest. With --duration the first path runs for its share of the
		// time and the second as many iterations.
		n := iters / rounds
		if r == rounds-1 {
			n = iters - n*(rounds-1)
		}
		var until time.Time
		if iters == 0 {
			until = time.Now().Add(o.duration / time.Duration(2*rounds))
		}
		for j, k := range order {
			if j == 1 {
				n, until = len(samples[order[0]])-b[order[0]][0], time.Time{}
			}
			var err error
			samples[k], next[k], err = latLoop(ctx, paths[k], samples[k], next[k], n, until, prog.counter(k))
			b[k][1] = len(samples[k])
			if err != nil {
				return st, latPathErr(k, err)
			}
		}
		if iters == 0 && len(samples[0]) >= latMaxIters {
			break // --duration: no more room for samples
		}
	}
	// The verdicts: the server's count of what it verified, and whether
	// anything differed.
	for k, pa := range paths {
		v, m, err := pa.finish(ctx)
		if err != nil {
			return st, latPathErr(k, err)
		}
		res.VerifiedOctets += v
		res.Mismatches += m
		if m > 0 {
			return st, latPathErr(k, fmt.Errorf("the server found %d octets of the pings different from what was sent", m))
		}
	}
	return st, nil
}

func latPathErr(k int, err error) error {
	if k == 0 {
		return fmt.Errorf("iWARP: %w", err)
	}
	return fmt.Errorf("raw TCP: %w", err)
}

func latRatio(a, b *float64) *float64 {
	if a == nil || b == nil || *b == 0 {
		return nil
	}
	return ptr(*a / *b)
}

// latLoop is the timed loop: n iterations of pa from iteration i (or, with
// n 0, until the time until), each one's time appended to samples in
// nanoseconds. Nothing in it allocates but the append past samples'
// capacity (--duration), between two iterations.
func latLoop(ctx context.Context, pa latPath, samples []int64, i uint64, n int, until time.Time, count *atomic.Int64) ([]int64, uint64, error) {
	for k := 0; n == 0 || k < n; k++ {
		if n == 0 && len(samples) >= latMaxIters {
			break
		}
		d, err := pa.iter(ctx, i)
		if err != nil {
			return samples, i, err
		}
		samples = append(samples, int64(d))
		count.Add(1)
		i++
		if n == 0 && !time.Now().Before(until) {
			break
		}
	}
	return samples, i, nil
}

// latCtl encodes a control message.
func latCtl(kind, a, b uint64) []byte {
	m := make([]byte, latCtlLen)
	binary.BigEndian.PutUint64(m, kind)
	binary.BigEndian.PutUint64(m[8:], a)
	binary.BigEndian.PutUint64(m[16:], b)
	return m
}

func latGetCtl(m []byte) (kind, a, b uint64) {
	if len(m) != latCtlLen {
		return 0, 0, 0
	}
	return binary.BigEndian.Uint64(m), binary.BigEndian.Uint64(m[8:]), binary.BigEndian.Uint64(m[16:])
}

// latPutIter writes iteration i into the first min(len(b), 8) octets of a
// message, little-endian: the low octets of i when the message is shorter.
func latPutIter(b []byte, i uint64) {
	for k := 0; k < len(b) && k < 8; k++ {
		b[k] = byte(i >> (8 * k))
	}
}

// latIterOK reports whether message b carries iteration i.
func latIterOK(b []byte, i uint64) bool {
	for k := 0; k < len(b) && k < 8; k++ {
		if b[k] != byte(i>>(8*k)) {
			return false
		}
	}
	return true
}

// latDiff counts the octets of got that differ from message i of a
// direction whose pattern is want: the iteration number in the first
// octets (numbered), the pattern after them.
func latDiff(got, want []byte, i uint64, numbered bool) int {
	if len(got) != len(want) {
		return max(len(got), len(want))
	}
	h := 0
	n := 0
	if numbered {
		h = min(len(got), 8)
		for k := 0; k < h; k++ {
			if got[k] != byte(i>>(8*k)) {
				n++
			}
		}
	}
	return n + countDiffs(got[h:], want[h:])
}

func countDiffs(a, b []byte) int {
	if string(a) == string(b) {
		return 0
	}
	n := 0
	for k := range a {
		if a[k] != b[k] {
			n++
		}
	}
	return n
}

// latPatterns are the contents of a size's messages: pings (client to
// server), pongs, and the server's buffer that Reads read. Each call makes
// new buffers: a sender writes iteration numbers into its own copy.
func latPing(p latParams) []byte { return newPattern(p.Seed, p.Size).msg(0) }
func latPong(p latParams) []byte { return newPattern(p.Seed+1<<32, p.Size).msg(0) }
func latReadSrc(p latParams) []byte {
	return newPattern(p.Seed+2<<32, p.Size).msg(0)
}

// latWait waits for a completion on cq, or the queue pair's end. A
// completion already queued is taken without blocking.
func latWait(ctx context.Context, qp *verbs.QP, cq *verbs.CQ) (verbs.Completion, error) {
	// With ManualProgress, Poll reads and processes the connection on
	// this goroutine while it waits.
	c, err := qp.Poll(ctx, cq)
	if err != nil {
		return c, err
	}
	return c, c.Err
}

// latIWARP is the client's iWARP session of one size.
type latIWARP struct {
	qp                   *verbs.QP
	p                    latParams
	send                 []byte    // write, send: the ping, numbered in place
	want                 []byte    // the pong's pattern, or the server's buffer (read)
	local                *verbs.MR // write: where pongs land; read: the sink
	bufs                 [][]byte  // receive buffers: control messages, and pongs (send)
	wr                   verbs.SendWR
	remote               latRegion // the server's buffer
	verified, mismatches int64
}

func dialLatIWARP(ctx context.Context, addr string, o *latOpts, p latParams, res *latResult) (*latIWARP, error) {
	pd := verbs.NewDevice().AllocPD()
	s := &latIWARP{p: p}
	rsize := latCtlLen
	switch p.Op {
	case "write":
		s.send, s.want = latPing(p), latPong(p)
		mr, err := pd.RegisterMR(make([]byte, p.Size), verbs.RemoteWrite)
		if err != nil {
			return nil, err
		}
		s.local = mr
		p.STag, p.Addr = mr.STag, mr.Addr
	case "send":
		s.send, s.want = latPing(p), latPong(p)
		rsize = max(p.Size, latCtlLen)
	case "read":
		s.want = latReadSrc(p)
		mr, err := pd.RegisterMR(make([]byte, p.Size), verbs.RemoteWrite)
		if err != nil {
			return nil, err
		}
		s.local = mr
	}
	pdata, _ := json.Marshal(p)
	cfg := verbs.QPConfig{MPA: o.mpaConfig(), InlineSend: p.Inline, ManualProgress: !p.Thread, NotifyWrites: p.Op == "write"}
	cfg.MPA.PrivateData = pdata
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, dialError(ctx, addr, err, "rnic-loader lat --listen "+addr)
	}
	s.qp = verbs.CreateQP(pd, cfg)
	s.bufs = make([][]byte, latRecvBufs)
	for i := range s.bufs {
		s.bufs[i] = make([]byte, rsize)
		s.qp.PostRecv(uint64(i), s.bufs[i])
	}
	if err := s.qp.Establish(ctx, conn, mpa.Initiator); err != nil {
		conn.Close()
		var re *mpa.RejectError
		if errors.As(err, &re) {
			return nil, fmt.Errorf("the server at %s rejected the lat session: %s (is it a lat server of the same version: rnic-loader lat --listen?)", addr, re.Reply.PrivateData)
		}
		return nil, fmt.Errorf("iWARP startup with %s: %w (is it a lat server: rnic-loader lat --listen?)", addr, err)
	}
	mp := s.qp.Params()
	res.Markers, res.CRC, res.MPARev, res.EMSS, res.MULPDU = ptr(mp.TxMarkers), ptr(mp.CRC), ptr(mp.Revision()), ptr(s.qp.EMSS()), ptr(s.qp.MULPDU())
	var region latRegion
	if err := json.Unmarshal(mp.Peer.PrivateData, &region); err != nil {
		s.qp.Close()
		return nil, fmt.Errorf("the server's MPA Reply is not a lat reply (%v): is %s a lat server (rnic-loader lat --listen)?", err, addr)
	}
	// Writes alternate between two halves of the server's buffer (see
	// serveLatIWARP); Reads read one message.
	wantLen := map[string]uint64{"write": 2 * uint64(p.Size), "read": uint64(p.Size), "send": 0}[p.Op]
	if region.Len != wantLen {
		s.qp.Close()
		return nil, fmt.Errorf("the server's buffer is %d octets, not the %d expected: is it a lat server of the same version?", region.Len, wantLen)
	}
	s.remote = region
	switch p.Op {
	case "write":
		s.wr = verbs.SendWR{Op: verbs.OpWrite, Data: s.send, RemoteSTag: region.STag, RemoteTO: region.Addr, Unsignaled: true}
	case "send":
		s.wr = verbs.SendWR{Op: verbs.OpSend, Data: s.send, Unsignaled: true}
	case "read":
		s.wr = verbs.SendWR{Op: verbs.OpRead, Sink: s.local, Len: uint32(p.Size), RemoteSTag: region.STag, RemoteTO: region.Addr}
	}
	return s, nil
}

func (s *latIWARP) iter(ctx context.Context, i uint64) (time.Duration, error) {
	switch s.p.Op {
	case "write":
		latPutIter(s.send, i)
		s.wr.RemoteTO = s.remote.Addr + (i%2)*uint64(s.p.Size)
		t0 := time.Now()
		if err := s.qp.PostSend(ctx, s.wr); err != nil {
			return 0, s.why(err)
		}
		c, err := latWait(ctx, s.qp, s.qp.RecvCQ())
		d := time.Since(t0)
		if err != nil {
			return 0, s.why(err)
		}
		if c.Op != verbs.OpRemoteWrite {
			return 0, s.unexpected(c, i)
		}
		if c.STag != s.local.STag || c.End != s.local.Addr+uint64(s.p.Size) {
			return 0, fmt.Errorf("pong %d: the server's Write ended at %#x of STag %#x, not at the end of the %d-octet buffer (%#x of %#x)", i, c.End, c.STag, s.p.Size, s.local.Addr+uint64(s.p.Size), s.local.STag)
		}
		return d, s.check(s.local.Buf, i, true, "pong")
	case "send":
		latPutIter(s.send, i)
		t0 := time.Now()
		if err := s.qp.PostSend(ctx, s.wr); err != nil {
			return 0, s.why(err)
		}
		c, err := latWait(ctx, s.qp, s.qp.RecvCQ())
		d := time.Since(t0)
		if err != nil {
			return 0, s.why(err)
		}
		if c.Op != verbs.OpRecv || c.Solicited {
			return 0, s.unexpected(c, i)
		}
		err = s.check(s.bufs[c.ID][:c.Len], i, true, "pong")
		// The next pong can come only after our next ping.
		s.qp.PostRecv(c.ID, s.bufs[c.ID])
		return d, err
	default: // read
		// The first and last octets of the sink are set to what the
		// Read must not leave there, so that a Read that places
		// nothing is caught.
		buf := s.local.Buf
		buf[0], buf[len(buf)-1] = ^s.want[0], ^s.want[len(buf)-1]
		s.wr.ID = i
		t0 := time.Now()
		if err := s.qp.PostSend(ctx, s.wr); err != nil {
			return 0, err
		}
		c, err := latWait(ctx, s.qp, s.qp.SendCQ())
		d := time.Since(t0)
		if err != nil {
			return 0, err
		}
		if c.Op != verbs.OpRead || c.ID != i || c.Len != s.p.Size {
			return 0, fmt.Errorf("Read %d: completion %v of %d octets for work request %d", i, c.Op, c.Len, c.ID)
		}
		return d, s.check(buf, i, false, "Read")
	}
}

// check verifies what arrived for iteration i.
func (s *latIWARP) check(got []byte, i uint64, numbered bool, what string) error {
	s.verified += int64(len(got))
	if n := latDiff(got, s.want, i, numbered); n > 0 {
		s.mismatches += int64(n)
		return fmt.Errorf("%s %d: %d of its %d octets differ from what the server sent (a bug in the stack or the path)", what, i, n, s.p.Size)
	}
	return nil
}

// why looks, when the session failed, for the server's report of a ping
// that arrived wrong: the server sends it and closes, so the failure may
// be seen first.
func (s *latIWARP) why(err error) error {
	if s.p.Op == "read" {
		return err
	}
	for {
		select {
		case c := <-s.qp.RecvCQ().C():
			if c.Err == nil && c.Op == verbs.OpRecv && c.Solicited {
				return s.unexpected(c, 0)
			}
		default:
			return err
		}
	}
}

// unexpected explains a completion that is not the answer to ping i: the
// server's report of a ping that arrived wrong, or a bug.
func (s *latIWARP) unexpected(c verbs.Completion, i uint64) error {
	if c.Op == verbs.OpRecv && int(c.ID) < len(s.bufs) {
		kind, a, b := latGetCtl(s.bufs[c.ID][:c.Len])
		if kind == latCtlMismatch {
			s.mismatches += int64(b)
			return fmt.Errorf("the server found ping %d different from what was sent in %d octets", a, b)
		}
	}
	return fmt.Errorf("waiting for pong %d: unexpected %v completion (%d octets)", i, c.Op, c.Len)
}

func (s *latIWARP) finish(ctx context.Context) (int64, int64, error) {
	if err := s.qp.PostSend(ctx, verbs.SendWR{Op: verbs.OpSendSE, Data: latCtl(latCtlFinish, 0, 0), Unsignaled: true}); err != nil {
		return 0, 0, err
	}
	for {
		c, err := latWait(ctx, s.qp, s.qp.RecvCQ())
		if err != nil {
			return 0, 0, fmt.Errorf("waiting for the server's verdict: %w", err)
		}
		if c.Op != verbs.OpRecv || !c.Solicited {
			return 0, 0, fmt.Errorf("waiting for the server's verdict: unexpected %v completion", c.Op)
		}
		kind, a, b := latGetCtl(s.bufs[c.ID][:c.Len])
		s.qp.PostRecv(c.ID, s.bufs[c.ID])
		switch kind {
		case latCtlVerdict:
			return int64(a), int64(b), nil
		case latCtlMismatch:
			return 0, int64(b), fmt.Errorf("the server found ping %d different from what was sent in %d octets", a, b)
		default:
			return 0, 0, fmt.Errorf("waiting for the server's verdict: unexpected control message %d", kind)
		}
	}
}

func (s *latIWARP) counts() (int64, int64) { return s.verified, s.mismatches }

func (s *latIWARP) close() {
	s.qp.Close()
	if s.local != nil {
		s.local.Deregister()
	}
}

// The raw TCP baseline of a size: a connection that opens with
// latRawKey, then op (0 write, 1 send, 2 read), size, seed, the run's id
// and its number of sizes as big-endian 64-bit numbers. The key differs
// from MPA's (and from bench's baseline) so that one listener tells them
// apart from the first 16 octets. Then pings and pongs of --size octets
// (read: an 8-octet request carrying the iteration number, answered by
// --size octets), until the client half-closes; the server answers with
// its verdict, 16 octets: pings verified and octets that differed.
const (
	latRawKey      = "RNIC raw lat v1 "
	latRawHelloLen = len(latRawKey) + 5*8
	latVerdictLen  = 16
)

var latOps = []string{"write", "send", "read"}

func latRawHello(p latParams) []byte {
	b := []byte(latRawKey)
	op := 0
	for k, name := range latOps {
		if name == p.Op {
			op = k
		}
	}
	b = binary.BigEndian.AppendUint64(b, uint64(op))
	b = binary.BigEndian.AppendUint64(b, uint64(p.Size))
	b = binary.BigEndian.AppendUint64(b, p.Seed)
	b = binary.BigEndian.AppendUint64(b, p.Run)
	return binary.BigEndian.AppendUint64(b, uint64(p.Sizes))
}

func parseLatRawHello(h []byte) (latParams, error) {
	h = h[len(latRawKey):]
	op := binary.BigEndian.Uint64(h)
	p := latParams{Test: "lat", Size: int(min(binary.BigEndian.Uint64(h[8:]), 1<<40)), Seed: binary.BigEndian.Uint64(h[16:]),
		Run: binary.BigEndian.Uint64(h[24:]), Sizes: int(min(binary.BigEndian.Uint64(h[32:]), 1<<20))}
	if op < uint64(len(latOps)) {
		p.Op = latOps[op]
	}
	if err := p.check(); err != nil {
		return p, fmt.Errorf("bad raw TCP hello: %w", err)
	}
	return p, nil
}

// latRaw is the client's raw TCP baseline of one size.
type latRaw struct {
	c          *net.TCPConn
	p          latParams
	send, want []byte
	recv       []byte
	req        [8]byte
	stop       func() bool
	verified   int64
	mismatches int64
}

func dialLatRaw(ctx context.Context, addr string, o *latOpts, p latParams) (*latRaw, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, dialError(ctx, addr, err, "rnic-loader lat --listen "+addr)
	}
	tc := c.(*net.TCPConn)
	tc.SetNoDelay(true)
	s := &latRaw{c: tc, p: p, recv: make([]byte, p.Size)}
	if p.Op == "read" {
		s.want = latReadSrc(p)
	} else {
		s.send, s.want = latPing(p), latPong(p)
	}
	// Ctrl-C or --timeout: a deadline in the past ends a blocked read.
	s.stop = context.AfterFunc(ctx, func() { tc.SetDeadline(time.Unix(1, 0)) })
	if _, err := tc.Write(latRawHello(p)); err != nil {
		s.close()
		return nil, fmt.Errorf("sending the hello: %w", err)
	}
	return s, nil
}

func (s *latRaw) iter(ctx context.Context, i uint64) (time.Duration, error) {
	msg := s.send
	if s.p.Op == "read" {
		binary.LittleEndian.PutUint64(s.req[:], i)
		msg = s.req[:]
	} else {
		latPutIter(msg, i)
	}
	t0 := time.Now()
	if _, err := s.c.Write(msg); err != nil {
		return 0, s.ioErr(ctx, "ping", i, err)
	}
	if _, err := io.ReadFull(s.c, s.recv); err != nil {
		return 0, s.ioErr(ctx, "pong", i, err)
	}
	d := time.Since(t0)
	s.verified += int64(len(s.recv))
	if n := latDiff(s.recv, s.want, i, true); n > 0 {
		s.mismatches += int64(n)
		return 0, fmt.Errorf("pong %d: %d of its %d octets differ from what the server sent (a bug in the path)", i, n, s.p.Size)
	}
	return d, nil
}

func (s *latRaw) ioErr(ctx context.Context, what string, i uint64, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%s %d: the server closed the connection (a lat server closes a baseline whose ping arrives wrong, and says so in its log; or it went away)", what, i)
	}
	return fmt.Errorf("%s %d: %w", what, i, err)
}

func (s *latRaw) finish(ctx context.Context) (int64, int64, error) {
	if err := s.c.CloseWrite(); err != nil {
		return 0, 0, err
	}
	var v [latVerdictLen]byte
	if _, err := io.ReadFull(s.c, v[:]); err != nil {
		if ctx.Err() != nil {
			return 0, 0, ctx.Err()
		}
		return 0, 0, fmt.Errorf("waiting for the server's verdict: %w", err)
	}
	return int64(binary.BigEndian.Uint64(v[:])), int64(binary.BigEndian.Uint64(v[8:])), nil
}

func (s *latRaw) counts() (int64, int64) { return s.verified, s.mismatches }

func (s *latRaw) close() {
	s.stop()
	s.c.Close()
}

// latProgress prints how far the run has come on stderr once a second,
// from counters the timed loops bump (one atomic add per iteration).
type latProgress struct {
	w           io.Writer
	op          string
	sz, iters   atomic.Int64
	rnd, rounds atomic.Int64
	n           [2]atomic.Int64
	done        chan struct{}
	finished    chan struct{}
}

func newLatProgress(w io.Writer, op string) *latProgress {
	p := &latProgress{w: w, op: op, done: make(chan struct{}), finished: make(chan struct{})}
	if w == nil {
		close(p.finished)
		return p
	}
	go func() {
		defer close(p.finished)
		t := time.NewTicker(progressInterval)
		defer t.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-t.C:
				of := "iterations"
				if it := p.iters.Load(); it > 0 {
					of = fmt.Sprintf("of %d iterations", it)
				}
				fmt.Fprintf(p.w, "lat %s %s: round %d of %d, iWARP %d, raw TCP %d %s\n", p.op, sayOctets(p.sz.Load()),
					p.rnd.Load(), p.rounds.Load(), p.n[0].Load(), p.n[1].Load(), of)
			}
		}
	}()
	return p
}

func (p *latProgress) size(size, iters int) {
	p.sz.Store(int64(size))
	p.iters.Store(int64(iters))
	p.rnd.Store(0)
	p.n[0].Store(0)
	p.n[1].Store(0)
}

func (p *latProgress) round(r, of int) {
	p.rnd.Store(int64(r))
	p.rounds.Store(int64(of))
}

func (p *latProgress) counter(k int) *atomic.Int64 { return &p.n[k] }

func (p *latProgress) stop() {
	close(p.done)
	<-p.finished
}

// Text output.

func latOnOff(b *bool) string {
	if *b {
		return "on"
	}
	return "off"
}

func latTimedWords(r *latResult) string {
	if r.Timed == "round_trip" {
		return "µs, the whole Read (as ib_read_lat); raw TCP: a request and its response"
	}
	return fmt.Sprintf("µs, half the round trip (as ib_%s_lat)", r.Op)
}

func latMPALine(w io.Writer, r *latResult) {
	if r.MPARev == nil {
		fmt.Fprintf(w, "  MPA not negotiated\n")
		return
	}
	fmt.Fprintf(w, "  MPA rev %d, markers %s, CRC %s, EMSS %d, MULPDU %d; inline send %s\n", *r.MPARev, latOnOff(r.Markers), latOnOff(r.CRC), *r.EMSS, *r.MULPDU, latOnOff(&r.InlineSend))
}

func us(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f", *v*1e6)
}

func ratioStr(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f", *v)
}

func printLat(w io.Writer, r *latResult) {
	what := "iterations"
	if r.Iterations != nil {
		what = fmt.Sprintf("%d iterations", *r.Iterations)
	} else if r.DurationSeconds != nil {
		what = fmt.Sprintf("%gs of iterations", *r.DurationSeconds)
	}
	warm := ""
	if r.WarmupIters > 0 {
		warm = fmt.Sprintf(", after %d warm-up iterations", r.WarmupIters)
	}
	size := "?"
	if len(r.Sizes) > 0 {
		size = sayOctets(r.Sizes[0].MessageOctets)
	}
	fmt.Fprintf(w, "%s latency: %s, %s on each path in %d rounds%s\n", r.Op, size, what, r.Rounds, warm)
	latMPALine(w, r)
	if r.Interrupted {
		fmt.Fprintf(w, "  interrupted: the figures are of the iterations completed\n")
	}
	if len(r.Sizes) == 0 {
		fmt.Fprintf(w, "  nothing measured\n")
		fmt.Fprintf(w, "  verified %d octets, %d mismatches\n", r.VerifiedOctets, r.Mismatches)
		return
	}
	s := &r.Sizes[0]
	fmt.Fprintf(w, "  %s\n", latTimedWords(r))
	fmt.Fprintf(w, "  %-8s %8s %8s %8s %8s %8s %8s %8s %8s\n", "", "samples", "min", "median", "mean", "p99", "p99.9", "max", "stddev")
	for _, row := range []struct {
		name string
		st   *latStats
	}{{"iWARP", &s.IWARP}, {"raw TCP", &s.RawTCP}} {
		st := row.st
		fmt.Fprintf(w, "  %-8s %8d %8s %8s %8s %8s %8s %8s %8s\n", row.name, st.Samples, us(st.MinSeconds), us(st.MedianSeconds),
			us(st.MeanSeconds), us(st.P99Seconds), us(st.P999Seconds), us(st.MaxSeconds), us(st.StddevSeconds))
	}
	fmt.Fprintf(w, "  ratio iWARP / raw TCP: median %s, p99 %s\n", ratioStr(s.RatioMedian), ratioStr(s.RatioP99))
	printLatHistogram(w, s)
	fmt.Fprintf(w, "  verified %d octets, %d mismatches\n", r.VerifiedOctets, r.Mismatches)
}

// printLatHistogram prints both paths' histograms side by side, over the
// buckets from the lowest either has to the highest, bars scaled to the
// fullest bucket of either.
func printLatHistogram(w io.Writer, s *latSizeStats) {
	hs := [2][]latBucket{s.IWARP.Histogram, s.RawTCP.Histogram}
	first, last, most := 0, 0, 0
	set := false
	for _, h := range hs {
		if len(h) == 0 {
			continue
		}
		a, b := bucketOf(h[0].LowSeconds*1e6), bucketOf(h[len(h)-1].LowSeconds*1e6)
		if !set || a < first {
			first = a
		}
		if !set || b > last {
			last = b
		}
		set = true
		for _, bk := range h {
			most = max(most, bk.Count)
		}
	}
	if !set {
		return
	}
	const width = 24
	fmt.Fprintf(w, "  histogram (µs, buckets √2 wide): %-*s %s\n", 8+width, "iWARP", "raw TCP")
	for k := first; k <= last; k++ {
		var cell [2]string
		for i, h := range hs {
			n := 0
			if len(h) > 0 {
				if j := k - bucketOf(h[0].LowSeconds*1e6); j >= 0 && j < len(h) {
					n = h[j].Count
				}
			}
			bar := 0
			if n > 0 {
				bar = max(1, n*width/most)
			}
			cell[i] = fmt.Sprintf("%7d %-*s", n, width, strings.Repeat("#", bar))
		}
		fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("    [%9.2f, %9.2f) %s %s", bucketLow(k), bucketLow(k+1), cell[0], cell[1]), " "))
	}
}

func printLatAllHeader(w io.Writer, r *latResult) {
	fmt.Fprintf(w, "%s latency, every size from %d octets to %s: %s\n", r.Op, latAllFirst, shortOctets(latAllLast), latTimedWords(r))
	latMPALine(w, r)
	fmt.Fprintf(w, "  %9s %7s | %-34s | %-17s | %s\n", "", "", "iWARP", "raw TCP", "ratio")
	fmt.Fprintf(w, "  %9s %7s | %8s %8s %8s %8s | %8s %8s | %6s %6s\n", "octets", "iters", "min", "median", "p99", "max", "median", "p99", "median", "p99")
}

func printLatAllLine(w io.Writer, s *latSizeStats) {
	fmt.Fprintf(w, "  %9d %7d | %8s %8s %8s %8s | %8s %8s | %6s %6s\n", s.MessageOctets, s.IWARP.Samples,
		us(s.IWARP.MinSeconds), us(s.IWARP.MedianSeconds), us(s.IWARP.P99Seconds), us(s.IWARP.MaxSeconds),
		us(s.RawTCP.MedianSeconds), us(s.RawTCP.P99Seconds), ratioStr(s.RatioMedian), ratioStr(s.RatioP99))
}

func printLatAllEnd(w io.Writer, r *latResult) {
	if len(r.Sizes) == 0 {
		printLatAllHeader(w, r)
	}
	if r.Interrupted {
		fmt.Fprintf(w, "  interrupted after %d sizes (the last one partly measured)\n", len(r.Sizes))
	}
	fmt.Fprintf(w, "  verified %d octets, %d mismatches\n", r.VerifiedOctets, r.Mismatches)
}
