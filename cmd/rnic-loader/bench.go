package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"runtime/pprof"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/openrnic/rnic/capture"
	"github.com/openrnic/rnic/iwarp/ddpsctp"
	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/sctp"
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
	maxQPs          = 256
	// maxSessions bounds the sessions and connections a client run
	// announces: every size of a sweep, every round and warm-up, every
	// queue pair.
	maxSessions = 1 << 24
	maxDuration = 24 * time.Hour
	// sweepMin and sweepMax are the sizes -a runs, every power of two
	// between them, as perftest's -a.
	sweepMin = 2
	sweepMax = 8 << 20
	// sweepBudget is -a's time per size and path unless --iters or
	// --duration says otherwise: 23 sizes take about half a minute.
	sweepBudget = 500 * time.Millisecond
	benchSchema = "rnic-loader/bench/2"
	pcapNote    = "--pcap writes one FPDU per TCP segment (WritePerFPDU), with no warm-up and one round; goodput not comparable with runs without --pcap"
)

type benchOpts struct {
	listen, connect string
	op              string
	size            *sizeValue
	total           *sizeValue
	warmup          *sizeValue
	iters           int64
	duration        time.Duration
	sweep           bool
	bidir           bool
	qps             int
	stats           bool
	markers         bool
	noCRC           bool
	mpaRev          int
	framing         string // --framing: mpa or tuf (benchtuf.go)
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
	// dev is --device (the client's end), --sim and --fst; peerDevice the
	// server's end; markersTo which ends receive markers (benchdev.go).
	dev        deviceFlags
	peerDevice string
	markersTo  string

	// transport is --transport as given; transports the lower layers it
	// names, in order; cur the one this pass runs (benchtransport.go).
	transport  string
	transports []string
	cur        string
	sctpMTU    int
	// sctpLn is the server's DDP/SCTP listener, sctpAddr the UDP address
	// a client's sessions go to, when cur is sctp.
	sctpLn   *ddpsctp.Listener
	sctpAddr string

	// changed says which flags the user set.
	changed func(string) bool

	// capture, in loopback mode with --pcap: the client puts the session's
	// pcap writer here, and the server's end of the connection records
	// its own writes into it (serverTap).
	capture *captureSlot
}

// benchParams travel from the client to the server in the MPA Request's
// private data, so that a server started with --listen alone learns what
// to expect and verify. Amounts are per direction of this session.
type benchParams struct {
	Proto int    `json:"proto"` // benchProto
	Op    string `json:"op"`
	Size  int    `json:"size"`
	// Total is the octets each active side moves; 0 for a timed session,
	// whose active sides post for Dur nanoseconds.
	Total  int64  `json:"bytes"`
	Dur    int64  `json:"duration_ns"`
	Seed   uint64 `json:"seed"`
	Window int    `json:"window"`
	Bidir  bool   `json:"bidir"`
	// Region is the client's buffer for a --bidir write or read: the
	// target of the server's Writes or the source of its Reads.
	Region *benchRegion `json:"region,omitempty"`
	// Run tells the server which connections belong to one client run,
	// so that a stranger's connection interleaved with them (a port scan,
	// a second client) neither counts towards the run nor breaks it.
	Run uint64 `json:"run"`
	// Sessions and RawConns are how many iWARP sessions and raw TCP
	// baseline connections the client run has: every size, round,
	// warm-up and queue pair.
	Sessions int `json:"sessions"`
	RawConns int `json:"raw_conns"`
}

// check refuses parameters a server cannot serve.
func (bp *benchParams) check() error {
	switch {
	case bp.Op != "write" && bp.Op != "read" && bp.Op != "send":
		return fmt.Errorf("unknown op %q", bp.Op)
	case bp.Size <= 0 || bp.Size > maxMessageSize || bp.Window <= 0 || bp.Window > maxWindow || int64(bp.Window)*int64(bp.Size) > maxWindowOctets:
		return fmt.Errorf("bad size %d or window %d", bp.Size, bp.Window)
	case bp.Total < 0 || bp.Total == 0 && (bp.Dur <= 0 || bp.Dur > int64(maxDuration)):
		return fmt.Errorf("bad amount: %d octets, %d ns", bp.Total, bp.Dur)
	case bp.Sessions < 1 || bp.Sessions > maxSessions || bp.RawConns < 0 || bp.RawConns > maxSessions:
		return fmt.Errorf("bad session counts %d, %d", bp.Sessions, bp.RawConns)
	case bp.Bidir && bp.Op != "send" && bp.Region == nil:
		return errors.New("a bidirectional write or read without the client's buffer")
	}
	return nil
}

// benchRegion travels back in the Reply's private data: the server's
// buffer for Writes and Reads (and the client's, for --bidir, in the
// Request's).
type benchRegion struct {
	STag uint32 `json:"stag"`
	Addr uint64 `json:"addr"`
	Len  uint64 `json:"len"`
}

// Result is what bench reports; --json prints it as is, schema
// rnic-loader/bench/2. Every field is always present: null where the value
// is unknown (a session that never negotiated MPA, a baseline that was
// skipped or never ran, a run that failed or was interrupted before its
// first round ended) or does not apply. Rates carry their unit in their
// name. The figures of one message size are inline; with -a they are in
// Sizes, one record per size, and the inline ones are the sweep's sums
// (counts, octets, counters) or null (sizes and rates).
type Result struct {
	Schema string `json:"schema"`
	// Mode is "loopback" (both ends in this process) or "client".
	Mode   string  `json:"mode"`
	Sweep  bool    `json:"sweep"`  // -a
	Server *string `json:"server"` // the address given to --connect
	Op     string  `json:"op"`
	Bidir  bool    `json:"bidir"`
	QPs    int     `json:"qps"`
	// DurationSeconds is the time each path runs per size (--duration,
	// or -a's budget), null when an amount (--bytes, --iters) bounds it.
	DurationSeconds *float64 `json:"duration_seconds"`
	// Iterations is --iters, null unless given.
	Iterations *int64 `json:"iterations"`
	Seed       uint64 `json:"seed"`
	// What MPA negotiated: null until a session has.
	MPARev  *uint8 `json:"mpa_rev"`
	Markers *bool  `json:"markers"`
	CRC     *bool  `json:"crc"`
	EMSS    *int   `json:"emss"`
	MULPDU  *int   `json:"mulpdu"`
	// Framing is --framing tuf's: MPA's goodput beside TUF's (benchtuf.go).
	Framing *FramingFigures `json:"framing"`
	Figures
	Pcap        *string `json:"pcap"`
	Note        *string `json:"note"`
	Interrupted bool    `json:"interrupted"`
	Error       *string `json:"error"`
	// Sizes holds -a's records, one per size done; null without -a.
	Sizes []*Figures `json:"sizes"`

	mu sync.Mutex // guards the MPA fields while queue pairs establish

	// transport is the pass's lower layer ("sctp", or "tcp" or "" for
	// MPA); printed and onSize what -a printed of its table.
	transport string
	printed   int
	onSize    func(*Figures)
	// started is when each measured round's iWARP phase started, for
	// --transport's comparison of the order they ran in.
	started []time.Time
}

// Figures are the measurements of one message size.
type Figures struct {
	MessageOctets *int64 `json:"message_octets"`
	// TotalOctets and Messages are what each queue pair moves in each
	// direction over the measured rounds (--bytes, or --iters × --size);
	// null for a timed run.
	TotalOctets *int64 `json:"total_octets"`
	Messages    *int64 `json:"messages"`
	// The untimed warm-up on each path: octets, or seconds when timed.
	WarmupOctets  *int64   `json:"warmup_octets"`
	WarmupSeconds *float64 `json:"warmup_seconds"`
	Window        *int     `json:"window_messages"`
	// Totals over the completed rounds, all queue pairs and directions:
	// the octets and messages they moved, the time the iWARP phases took,
	// rates in bits and messages per second. Peak is the best round's
	// goodput.
	MeasuredOctets       int64    `json:"measured_octets"`
	MeasuredMessages     int64    `json:"measured_messages"`
	Seconds              *float64 `json:"seconds"`
	GoodputBitsPerSecond *float64 `json:"goodput_bits_per_second"`
	PeakBitsPerSecond    *float64 `json:"peak_bits_per_second"`
	MessagesPerSecond    *float64 `json:"messages_per_second"`
	// The raw TCP baseline's: null without one.
	RawTCPOctets            *int64   `json:"raw_tcp_octets"`
	RawTCPSeconds           *float64 `json:"raw_tcp_seconds"`
	RawTCPBitsPerSecond     *float64 `json:"raw_tcp_bits_per_second"`
	RawTCPMessagesPerSecond *float64 `json:"raw_tcp_messages_per_second"`
	// Ratio is iWARP goodput over raw TCP goodput.
	Ratio         *float64 `json:"ratio"`
	VerifiedBytes int64    `json:"verified_octets"`
	Mismatches    int64    `json:"mismatches"`
	WireBytes     int64    `json:"wire_octets"`
	// Directions splits the figures by who posted the operations: the
	// client, and with --bidir the server. Their rates are over the
	// iWARP phases' time, so that they add up to the totals.
	Directions []Direction `json:"directions"`
	// QueuePairs splits them by queue pair (--qps): each over its own
	// time, from the phase's start to its own end.
	QueuePairs []QPFigures `json:"queue_pairs"`
	// Stack is the stack's counters over the measured rounds' sessions
	// (and a session that failed, if one did).
	Stack Stack `json:"stack"`
	// Rounds holds each completed round's figures; the totals above are
	// over all of them.
	Rounds []Round `json:"rounds"`
}

// Direction is one direction of a run: the operations one side posted.
type Direction struct {
	Initiator            string   `json:"initiator"` // "client" or "server"
	DataFrom             string   `json:"data_from"`
	DataTo               string   `json:"data_to"`
	Octets               int64    `json:"octets"`
	Messages             int64    `json:"messages"`
	GoodputBitsPerSecond *float64 `json:"goodput_bits_per_second"`
	MessagesPerSecond    *float64 `json:"messages_per_second"`
	RawTCPOctets         *int64   `json:"raw_tcp_octets"`
	RawTCPBitsPerSecond  *float64 `json:"raw_tcp_bits_per_second"`
}

// QPFigures are one queue pair's figures over the rounds.
type QPFigures struct {
	QP                   int     `json:"qp"` // from 1
	Octets               int64   `json:"octets"`
	Messages             int64   `json:"messages"`
	Seconds              float64 `json:"seconds"`
	GoodputBitsPerSecond float64 `json:"goodput_bits_per_second"`
	MessagesPerSecond    float64 `json:"messages_per_second"`
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
	RawTCPOctets            *int64   `json:"raw_tcp_octets"`
	RawTCPSeconds           *float64 `json:"raw_tcp_seconds"`
	RawTCPBitsPerSecond     *float64 `json:"raw_tcp_bits_per_second"`
	RawTCPMessagesPerSecond *float64 `json:"raw_tcp_messages_per_second"`
	Ratio                   *float64 `json:"ratio"`
}

func ptr[T any](v T) *T { return &v }

// serverIgnores are the bench flags a server (--listen) has no use for:
// the client chooses them and sends them in its MPA Request.
var serverIgnores = []string{"op", "size", "bytes", "iters", "duration", "all", "bidir", "qps", "seed", "window", "rounds", "warmup", "no-raw", "json", "stats", "framing"}

func newBenchCmd() *cobra.Command {
	o := benchOpts{
		size:   newSize(64<<10, 1, maxMessageSize, "message size"),
		total:  newSize(256<<20, 1, maxTotal, "total"),
		warmup: newSize(0, 0, maxTotal, "warm-up"),
	}
	o.warmup.auto, o.warmup.isAuto = "auto", true
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure and verify RDMA Write, Read or Send over the Go iWARP stack or an RNIC",
		Long: `bench moves data over the Go reference iWARP stack (RDMAP/DDP/MPA on real TCP),
verifies every octet that arrives, and measures raw TCP over the same path with
the same octets, reporting both goodputs, message rates and their ratio, as
perftest's ib_write_bw, ib_read_bw and ib_send_bw do for an RNIC. The raw TCP
baseline is plain TCP at its best: 4 MiB per system call on both sides,
whatever the message size, the receiver verifying every octet as the iWARP
receiver does, the data flowing the way the operation moves it.

With neither --listen nor --connect both ends run in this process over
loopback. Otherwise run a server with --listen and a client with --connect:
the client chooses the operation, sizes, amounts, seed, window, rounds, queue
pairs and directions and tells the server in the MPA Request's private data,
so the server refuses those flags. A server serves one client run (all the
connections of its rounds) and exits, or with -P/--persistent client run
after client run until Ctrl-C. It serves connections independently and logs
each client's address: a connection that is neither a bench client nor a raw
TCP baseline, or that sends no hello within --startup-timeout, is logged with
the reason and dropped, and the server goes on.

How much: --bytes (octets) or --iters (messages, as perftest's -n) per queue
pair and direction, or --duration: each path posts for that long and then
drains, every octet still verified. The three exclude each other.
-a sweeps the sizes 2, 4, 8, ... 8 MiB, a line per size as ib_write_bw -a
prints: #bytes, #iterations (messages moved), BW peak (the best round's
goodput), BW average (all rounds' octets over their time), MsgRate (million
messages a second), and the raw TCP goodput and ratio. Each size runs for
--iters messages or --duration (default ` + sweepBudget.String() + ` per size and path).

--qps N runs N queue pairs at once, each on its own TCP connection (the
baseline as many TCP connections), and reports their sum and each one.
--bidir makes both sides post at once: the client tells the server in its
MPA Request, with its own buffer for the server's Writes or Reads; the
figures are each direction's and their sum. The baseline of --bidir runs a
TCP connection each way per queue pair.

The run is split into --rounds rounds, each an iWARP phase and a raw TCP
phase moving an equal share, in alternating order (iWARP first, then raw
first, ...), so that a machine whose speed drifts during the run weighs on
both sides alike. The goodputs are total octets over total time of each
side. --stats prints the stack's counters (verbs QP.Stats: octets, FPDUs,
messages by RDMAP opcode, CRC and marker errors, Terminates by kind) summed
over the measured sessions, the client's and the server's.

Sizes: 4096, or with a unit: K/KB, M/MB, G/GB decimal (1000, ...), KiB, MiB,
GiB binary (1024, ...); every size is said back in octets.

Output: a summary on stdout, progress on stderr once a second (-q: none).
Rates are in Gbit/s (10^9 bits per second) and Mmsg/s (10^6 messages per
second). --json prints one record instead (schema "rnic-loader/bench/2"),
also when the run fails (with "error" set; the exit status stays 1). Its
fields, all always present (null when unknown or not applicable): schema,
mode, sweep, server, op, bidir, qps, duration_seconds, iterations, seed,
mpa_rev, markers, crc, emss, mulpdu, framing, then one size's figures:
message_octets, total_octets, messages (per queue pair and direction),
warmup_octets, warmup_seconds, window_messages, measured_octets,
measured_messages, seconds, goodput_bits_per_second, peak_bits_per_second,
messages_per_second, raw_tcp_octets, raw_tcp_seconds,
raw_tcp_bits_per_second, raw_tcp_messages_per_second, ratio (iWARP/raw TCP
goodput), verified_octets, mismatches, wire_octets, directions (a list of
{initiator, data_from, data_to, octets, messages, goodput_bits_per_second,
messages_per_second, raw_tcp_octets, raw_tcp_bits_per_second}),
queue_pairs (a list of {qp, octets, messages, seconds,
goodput_bits_per_second, messages_per_second}), stack ({client, server},
each {sessions, tx_octets, rx_octets, tx_fpdus, rx_fpdus, tx_messages,
rx_messages (by RDMAP opcode name), crc_errors, marker_errors,
terminates_sent, terminates_received (by kind)}; server null when it sent
none), rounds (a list of {round, octets, messages, raw_first, seconds,
goodput_bits_per_second, messages_per_second, raw_tcp_octets,
raw_tcp_seconds, raw_tcp_bits_per_second, raw_tcp_messages_per_second,
ratio}); then pcap, note, interrupted, error, and sizes: with -a a list of
one size's figures per size, the inline figures then being the sweep's sums
(null for sizes and rates). *_bits_per_second are bits (not
octets) per second. The server's counters are as of its last control
message, which they do not count.

--framing tuf runs the iWARP sessions over DDP over TUF (TCP ULP Framing,
draft-ietf-tsvwg-tcp-ulp-frame-01, with a CRC32c trailer: docs/tuf.md)
instead of MPA, and runs the same sessions over MPA beside them in every
round and warm-up (after them in odd rounds, before them in even ones): the figures are TUF's, and "framing" holds
{framing, emss, mulpdu, mpa_octets, mpa_seconds, mpa_bits_per_second,
mpa_verified_octets, ratio_to_mpa} (TUF's EMSS and MULPDU, MPA's figures
beside them, TUF goodput over MPA goodput; null without --framing tuf).
Every octet of both is verified. A server takes either framing without
being told. Not with -a, --pcap or a device.

--pcap writes one FPDU per TCP segment (the capture needs FPDU alignment),
runs one round with no warm-up, and says so in a note: its goodput is not
comparable with runs without --pcap.

--device and --peer-device put an end on an RNIC: --device the client's,
--peer-device the server's (both ends run in this process, over loopback
TCP): soft (the default: the software stack), model (the driver's
in-process model of the RNIC) or sim (the simulated hardware, hw/sim's
rnic-sim: --sim names it, default $RNIC_SIM or build/sim/rnic-sim, which
` + "`make sim`" + ` builds; --fst writes the client's waveform). Two sims are two
rnic-sim processes. The same operations, every octet verified, the same MPA
options, and --markers-to client|server|both for markers on what one end
receives (MPA revision 2 asks for them per direction). A device run moves
--bytes or --iters (default 1 MiB with a sim, 64 MiB with the model), a
window of messages (--window, default about 1 MiB worth) at a time, each
window verified before the next; it takes no -a, --qps, --bidir,
--duration, --rounds, --warmup, --stats, --listen or --connect. There is
no raw TCP baseline (the simulated clock, not the path, is the limit): each
simulated end reports instead its clocks over the run, the clocks a second
it ran, the clocks a message, the goodput in octets a clock and as a
fraction of the datapath's clock-limited rate, DATA_W/8 octets a clock
(DATA_W from the ID block, ` + "`rnic-loader info`" + `). --json prints one record of
schema "rnic-loader/bench-device/1": schema, op, device, peer_device,
seed, message_octets, total_octets, messages, window_messages, mpa_rev,
markers_to_client, markers_to_server, crc, measured_octets,
measured_messages, seconds, goodput_bits_per_second, messages_per_second,
verified_octets, mismatches, ends (the client's, then the server's: {role,
device, data_width_bits, clocks, clocks_per_second, clocks_per_message,
goodput_octets_per_clock, clock_limited_fraction}, null where the end has
no clock), pcap, interrupted, error. --pcap captures the session, each end
recording what it writes: Wireshark decodes it, CRCs good, without markers
(the simulated device's segments do not always start with an FPDU, and
Wireshark finds markers only in segments that do).

--transport picks DDP's lower layer: tcp (MPA over TCP, the default), sctp
(DDP/SCTP: the ddpsctp adaptation layer on the userspace SCTP association,
over UDP; docs/ddp-sctp.md), or sctp,tcp (or tcp,sctp): both in one run,
then their goodputs compared. The warm-up and every round run an iWARP
phase over each, in the order given in the warm-up and odd rounds and the
other way round in even ones, so that a machine whose load changes weighs
on both alike; each phase verifies every octet. The same RDMAP, DDP
placement and verification run over either, and the raw TCP baseline stays
raw TCP, once a round, in both transports' records. Over SCTP every iWARP session has its own association and its DDP
Stream Session on stream 0; --sctp-mtu sets the SCTP packet size (default
` + fmt.Sprint(loopbackSCTPMTU) + ` in loopback mode, ` + fmt.Sprint(sctp.DefaultMTU) + ` across hosts). A server given --transport
sctp (or sctp,tcp) also serves DDP/SCTP on the UDP port of its --listen
address, and a client with --transport sctp sends its sessions there. With
--transport, --json prints one record of schema "` + transportSchema + `":
schema, transports, runs (a list of {transport, result}, result being the
run's rnic-loader/bench/2 record, with mpa_rev, markers, crc and emss null
over SCTP), comparison ({sctp_goodput_bits_per_second,
tcp_goodput_bits_per_second, sctp_over_tcp, rounds}, null unless both ran;
rounds a list of {round, first, sctp_goodput_bits_per_second,
tcp_goodput_bits_per_second, sctp_over_tcp}, first the transport whose
phase ran first, null with -a) and error; the text output prints each
transport's report, the rounds compared and the run's ratio. --markers, --no-crc, --mpa-rev and --pcap are MPA's.

Ctrl-C ends a run early: the rounds completed so far are reported
("interrupted": true) and the exit status is 0; a server prints what it
served and exits 0. A --timeout that fires is a failure (exit 1).
Exit status: 0 success, 1 failure (mismatch, protocol error, lost peer,
--timeout), 2 wrong command line.`,
		Example: `  # 64 KiB RDMA Writes with markers and CRC, both ends in this process
  rnic-loader bench --op write --size 64KiB --bytes 1GiB --markers

  # DDP over TUF, with MPA over TCP beside it in the same run
  rnic-loader bench --framing tuf --op write --size 64KiB --bytes 1GiB

  # Two processes; JSON for scripts. The server serves one client run and
  # exits; -P keeps it serving until Ctrl-C
  rnic-loader bench --listen 127.0.0.1:7175 -P
  rnic-loader bench --connect 127.0.0.1:7175 --op read --size 4096 --json

  # ib_write_bw -a: every size from 2 octets to 8 MiB, a second per size
  rnic-loader bench -a --op write --duration 1s

  # Four queue pairs, both directions, 10 s, with the stack's counters
  rnic-loader bench --qps 4 --bidir --duration 10s --stats

  # Eight rounds after a 64 MiB warm-up, no progress lines
  rnic-loader bench --op send --size 1MB --bytes 4GiB --rounds 8 --warmup 64MiB -q

  # A short session captured to a pcap Wireshark decodes
  rnic-loader bench --op send --bytes 1MiB --size 8KiB --pcap build/bench.pcap

  # The client on the simulated RNIC (make sim), the server on the software
  # stack: 64 KiB Writes, markers on what the server receives
  rnic-loader bench --device sim --op write --size 64KiB --bytes 1MiB --markers-to server

  # The same, the model run beside the simulated RNIC with the same inputs:
  # the first difference in what they send or write to memory fails the run
  rnic-loader bench --device sim --mirror --op write --size 64KiB --iters 64

  # Both ends on simulated RNICs (two rnic-sim processes), Reads, a pcap
  rnic-loader bench --device sim --peer-device sim --op read --size 16KiB --bytes 256KiB --pcap build/sims.pcap

  # DDP over SCTP beside MPA over TCP: 64 KiB Writes over each, round by
  # round, compared
  rnic-loader bench --transport sctp,tcp --op write --size 64KiB --bytes 256MiB

  # A server for both transports, a client over DDP/SCTP
  rnic-loader bench --listen 127.0.0.1:7175 --transport sctp,tcp
  rnic-loader bench --connect 127.0.0.1:7175 --transport sctp --op read --json

  # The server on the driver's model of the RNIC, Sends, JSON
  rnic-loader bench --peer-device model --op send --size 4KiB --bytes 16MiB --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.changed = cmd.Flags().Changed
			if err := o.check(o.changed); err != nil {
				return err
			}
			if err := o.checkFraming(o.changed); err != nil {
				return err
			}
			if err := o.checkDevice(o.changed); err != nil {
				return err
			}
			if o.isDeviceRun() {
				return runDevBench(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), &o)
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
	f.Var(o.total, "bytes", "octets each queue pair moves in each direction (e.g. 1GiB)")
	f.Int64VarP(&o.iters, "iters", "n", 0, "messages each queue pair moves in each direction, instead of --bytes")
	f.DurationVar(&o.duration, "duration", 0, "post for this long on each path (e.g. 10s), then drain, instead of --bytes")
	f.BoolVarP(&o.sweep, "all", "a", false, "sweep the sizes 2 octets to 8 MiB, powers of two (a table as ib_write_bw -a)")
	f.BoolVar(&o.bidir, "bidir", false, "both sides post operations at once, each into the other's buffer")
	f.IntVar(&o.qps, "qps", 1, fmt.Sprintf("queue pairs at once, each on its own TCP connection (1 to %d)", maxQPs))
	f.BoolVar(&o.stats, "stats", false, "print the stack's counters (FPDUs, octets, messages, errors, Terminates), the client's and the server's")
	f.BoolVar(&o.markers, "markers", false, "ask for MPA markers in both directions")
	f.BoolVar(&o.noCRC, "no-crc", false, "declare a preference not to use CRC32c (used only if the peer agrees)")
	f.IntVar(&o.mpaRev, "mpa-rev", 2, "MPA revision to offer: 1 or 2")
	f.StringVar(&o.framing, "framing", framingMPA, "iWARP framing: mpa (MPA over TCP) or tuf (DDP over TUF, with MPA run beside it in every round)")
	f.BoolVar(&o.json, "json", false, "print the result as one JSON record (schema "+benchSchema+") on stdout")
	f.StringVar(&o.pcap, "pcap", "", "write a pcap of the iWARP session to `FILE` (loopback mode; one FPDU per segment: goodput not comparable)")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "nothing on stderr but warnings and errors: no progress lines, no server log")
	f.BoolVar(&o.noRaw, "no-raw", false, "skip the raw TCP baseline")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the data pattern")
	f.Var(o.warmup, "warmup", "octets moved over each path, untimed, before the measured rounds of each size (0 for none; auto: an eighth of the amount, at most 64 MiB or 1 s)")
	f.IntVar(&o.rounds, "rounds", 4, fmt.Sprintf("interleaved iWARP / raw TCP rounds the amount is split into (1 to %d; BW peak is the best of them)", maxRounds))
	f.IntVar(&o.window, "window", 0, fmt.Sprintf("messages in flight per half of the target buffer (0: about 4 MiB worth; at most %d, and window × size at most 1 GiB)", maxWindow))
	f.DurationVar(&o.timeout, "timeout", 10*time.Minute, "give up after this long, a failure (0: no limit; a server has no limit unless given one)")
	f.DurationVar(&o.startupTimeout, "startup-timeout", mpa.DefaultStartupTimeout, "limit on each connection's startup: the MPA exchange, or a baseline's hello (a server drops a client that is silent this long)")
	f.StringVar(&o.cpuProfile, "cpuprofile", "", "write a Go CPU profile of the run to `FILE` (go tool pprof)")
	o.dev.addDevice(cmd, "soft", "what runs the client's end: soft (the software stack), model (the driver's model of the RNIC) or sim (the simulated RNIC)")
	f.StringVar(&o.peerDevice, "peer-device", "soft", "what runs the server's end, in this process: soft, model or sim (a second simulated device)")
	f.StringVar(&o.markersTo, "markers-to", "", "device bench: which ends ask for markers on what they receive: client, server or both (--markers is both)")
	f.StringVar(&o.transport, "transport", "tcp", "DDP's lower layer: tcp (MPA over TCP), sctp (DDP/SCTP over userspace SCTP over UDP), or sctp,tcp: both in one run, alternating round by round, compared")
	f.IntVar(&o.sctpMTU, "sctp-mtu", 0, fmt.Sprintf("largest SCTP packet with --transport sctp (%d to %d; 0: %d, or %d in loopback mode, where loopback's MTU allows it)", sctp.MinMTU, sctp.MaxMTU, sctp.DefaultMTU, loopbackSCTPMTU))
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
	return o.checkTransport(changed)
}

// sizePlan is what a client run does at one message size.
type sizePlan struct {
	size, window, rounds int
	// total (octets) or dur bounds what each queue pair moves in each
	// direction over the measured rounds.
	total int64
	dur   time.Duration
	// The warm-up on each path: warmTotal octets, or warmDur.
	warmTotal int64
	warmDur   time.Duration
}

func (sp *sizePlan) warm() bool { return sp.warmTotal > 0 || sp.warmDur > 0 }

// runPlan is what a client run does.
type runPlan struct {
	op                 string
	bidir, raw         bool
	qps                int
	seed, run          uint64
	sizes              []sizePlan
	sessions, rawConns int
}

// rawDirs is how many raw TCP connections a queue pair's baseline takes.
func (p *runPlan) rawDirs() int {
	if p.bidir {
		return 2
	}
	return 1
}

// session is the parameters of one iWARP session at size sp, moving total
// octets or running for dur.
func (p *runPlan) session(sp *sizePlan, total int64, dur time.Duration) benchParams {
	return benchParams{Proto: benchProto, Op: p.op, Size: sp.size, Total: total, Dur: int64(dur), Seed: p.seed, Window: sp.window,
		Bidir: p.bidir, Run: p.run, Sessions: p.sessions, RawConns: p.rawConns}
}

func (o *benchOpts) params() (*runPlan, error) {
	switch o.op {
	case "write", "read", "send":
	default:
		return nil, usagef("--op %q: want write, read or send", o.op)
	}
	changed := o.changed
	if changed == nil {
		changed = func(string) bool { return false }
	}
	var given []string
	for _, f := range []string{"bytes", "iters", "duration"} {
		if changed(f) {
			given = append(given, f)
		}
	}
	if len(given) > 1 {
		return nil, usagef("%s: each says how much a run moves, so give one of them (--bytes octets, --iters messages, --duration time)", flagNames(given...))
	}
	if o.sweep && changed("size") {
		return nil, usagef("-a/--all runs every size from %d octets to %s; give it without --size", sweepMin, shortOctets(sweepMax))
	}
	if o.sweep && changed("bytes") {
		return nil, usagef("-a/--all with --bytes: the same octets at every size would take ages at %d octets; give --iters N (messages per size) or --duration D (time per size)", sweepMin)
	}
	if changed("iters") && (o.iters < 1 || o.iters > maxTotal) {
		return nil, usagef("--iters %d: want a positive number of messages", o.iters)
	}
	if changed("duration") && (o.duration <= 0 || o.duration > maxDuration) {
		return nil, usagef("--duration %v: want a positive duration up to %v, such as 10s", o.duration, maxDuration)
	}
	if o.qps < 1 || o.qps > maxQPs {
		return nil, usagef("--qps %d: want 1 to %d queue pairs", o.qps, maxQPs)
	}
	if o.pcap != "" && (o.sweep || o.qps > 1) {
		return nil, usagef("--pcap captures one session: give it without -a and with --qps 1")
	}
	if o.mpaRev != 1 && o.mpaRev != 2 {
		return nil, usagef("--mpa-rev %d: want 1 or 2", o.mpaRev)
	}
	if o.rounds < 1 || o.rounds > maxRounds {
		return nil, usagef("--rounds %d: want 1 to %d", o.rounds, maxRounds)
	}
	if o.window < 0 || o.window > maxWindow {
		return nil, usagef("--window %d: want 0 (about 4 MiB worth of messages) or 1 to %d messages", o.window, maxWindow)
	}
	p := &runPlan{op: o.op, bidir: o.bidir, raw: !o.noRaw, qps: o.qps, seed: o.seed, run: rand.Uint64()}
	sizes := []int64{o.size.Int64()}
	if o.sweep {
		sizes = nil
		for s := int64(sweepMin); s <= sweepMax; s *= 2 {
			sizes = append(sizes, s)
		}
	}
	dur := o.duration
	if o.sweep && !changed("iters") && !changed("duration") {
		dur = sweepBudget
	}
	for _, size := range sizes {
		sp := sizePlan{size: int(size), rounds: o.rounds}
		switch {
		case changed("iters"):
			if o.iters > maxTotal/size {
				return nil, usagef("--iters %d × --size %s is past the limit of %s: give fewer", o.iters, sayOctets(size), sayOctets(maxTotal))
			}
			sp.total = o.iters * size
		case dur > 0:
			sp.dur = dur
		default:
			sp.total = o.total.Int64()
			if sp.total < size {
				return nil, usagef("--bytes %s is less than one message of --size %s: give --bytes at least --size", sayOctets(sp.total), sayOctets(size))
			}
		}
		switch {
		case o.pcap != "":
			sp.rounds = 1 // one session in the capture, no warm-up
		case !o.warmup.isAuto:
			if w := o.warmup.Int64(); w > 0 {
				sp.warmTotal = max(w/size, 1) * size
			}
		case sp.total > 0:
			sp.warmTotal = min(sp.total/8, 64<<20) / size * size
		default:
			sp.warmDur = min(sp.dur/8, time.Second)
		}
		if sp.total > 0 {
			// Every round moves at least one whole message.
			sp.rounds = int(min(int64(sp.rounds), sp.total/size))
		}
		w := o.window
		if w == 0 {
			w = int(max(1, min(1024, (4<<20)/size)))
		}
		if int64(w)*size > maxWindowOctets {
			return nil, usagef("--window %d × --size %s is %s, past the limit of %s: give a smaller --window", w, sayOctets(size), sayOctets(int64(w)*size), sayOctets(maxWindowOctets))
		}
		sp.window = w
		sessions := sp.rounds
		if sp.warm() {
			sessions++
		}
		p.sessions += (sessions + o.extraSessions(sessions)) * p.qps
		if p.raw {
			p.rawConns += sessions * p.qps * p.rawDirs()
		}
		p.sizes = append(p.sizes, sp)
	}
	if p.sessions > maxSessions {
		return nil, usagef("the run has %d sessions, past the limit of %d: give fewer --rounds or --qps", p.sessions, maxSessions)
	}
	return p, nil
}

func (o *benchOpts) mpaConfig() mpa.Config {
	return mpa.Config{Rev: uint8(o.mpaRev), Markers: o.markers, NoCRC: o.noCRC, IRD: 32, ORD: 32, Timeout: o.startupTimeout}
}

func runBench(ctx context.Context, stdout, stderr io.Writer, o *benchOpts) error {
	var plan *runPlan
	if o.listen == "" {
		var err error
		if plan, err = o.params(); err != nil {
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
		if slices.Contains(o.transports, "sctp") {
			// DDP/SCTP on the same port number, over UDP.
			sln, err := listenSCTP(ln.Addr().String(), o, false)
			if err != nil {
				return fmt.Errorf("listening for DDP/SCTP on UDP %s: %w (is another server on that port? choose another port)", ln.Addr(), err)
			}
			defer sln.Close()
			o.sctpLn = sln
			if !o.quiet {
				fmt.Fprintf(stderr, "bench server: DDP/SCTP on UDP %s\n", sln.Addr())
			}
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
	if changed := o.changed; changed != nil && changed("transport") {
		return runTransports(ctx, stdout, stderr, o, plan, progW)
	}
	results, err := benchPass(ctx, stdout, stderr, o, plan, progW)
	res := results[0]
	if o.json {
		if jerr := writeJSON(stdout, res); jerr != nil && err == nil {
			err = jerr
		}
	} else if err == nil {
		printPass(stdout, o, res)
	}
	return err
}

// benchPass runs one client run (both ends in loopback mode) and returns
// a result per transport of o.transports, whose iWARP phases alternate
// round by round (benchtransport.go); with -a, text output and one
// transport it prints the table's rows as the sizes complete (printPass
// ends the table).
func benchPass(ctx context.Context, stdout, stderr io.Writer, o *benchOpts, plan *runPlan, progW io.Writer) ([]*Result, error) {
	results := make([]*Result, len(o.transports))
	for i, t := range o.transports {
		res := &Result{Schema: benchSchema, Mode: "loopback", Sweep: o.sweep, Op: plan.op, Bidir: plan.bidir, QPs: plan.qps, Seed: plan.seed, transport: t}
		if d := plan.sizes[0].dur; d > 0 {
			res.DurationSeconds = ptr(d.Seconds())
		}
		if o.changed != nil && o.changed("iters") {
			res.Iterations = ptr(o.iters)
		}
		if o.sweep {
			res.Sizes = []*Figures{}
			res.Figures = emptyFigures()
		} else {
			res.Figures = *newFigures(plan, &plan.sizes[0])
		}
		if o.pcap != "" {
			res.Note = ptr(pcapNote)
		}
		if o.connect != "" {
			res.Mode, res.Server = "client", ptr(o.connect)
		}
		results[i] = res
	}
	var (
		addr   string
		srvErr = make(chan error, 1)
	)
	srvCtx, srvCancel := context.WithCancel(ctx)
	defer srvCancel()
	if o.connect != "" {
		addr = o.connect
		o.sctpAddr = addr
		close(srvErr)
	} else {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return results, fmt.Errorf("loopback: %w", err)
		}
		defer ln.Close()
		addr = ln.Addr().String()
		if slices.Contains(o.transports, "sctp") {
			sln, err := listenSCTP("127.0.0.1:0", o, true)
			if err != nil {
				return results, fmt.Errorf("loopback: %w", err)
			}
			defer sln.Close()
			o.sctpLn, o.sctpAddr = sln, sln.Addr().String()
		}
		if o.pcap != "" {
			o.capture = &captureSlot{}
		}
		go func() { srvErr <- serveBench(srvCtx, ln, o, nil, stderr); close(srvErr) }()
	}
	legs := make([]*leg, len(results))
	for i, res := range results {
		lo := *o
		lo.cur = res.transport
		legs[i] = &leg{o: &lo, res: res}
	}
	// -a prints its table a line at a time, as each size completes; with
	// two transports, each table once the run is over.
	var onSize func(*Figures)
	if o.sweep && !o.json {
		for _, res := range results {
			res.onSize = sweepPrinter(stdout, res)
		}
		if len(results) == 1 {
			onSize = results[0].onSize
		}
	}
	err := clientBench(ctx, addr, plan, progW, legs, onSize)
	if err != nil {
		srvCancel()
	}
	if serr := <-srvErr; serr != nil && err == nil {
		err = fmt.Errorf("loopback server: %w", serr)
	} else if serr != nil && !errors.Is(serr, context.Canceled) && ctx.Err() == nil {
		err = fmt.Errorf("%w (loopback server: %v)", err, serr)
	}
	var first error
	for _, res := range results {
		res.finishFraming()
		var rerr error
		res.Interrupted, rerr = runEnd(ctx, err, res.Mismatches, "the stack or the path")
		if rerr != nil {
			res.Error = ptr(rerr.Error())
			if first == nil {
				first = rerr
			}
		}
	}
	return results, first
}

// sweepPrinter prints res's -a table a row at a time, the header first.
func sweepPrinter(stdout io.Writer, res *Result) func(*Figures) {
	return func(f *Figures) {
		if res.printed == 0 {
			printSweepHeader(stdout, res)
		}
		printSweepRow(stdout, f)
		res.printed++
	}
}

// printPass prints a pass's result for people.
func printPass(stdout io.Writer, o *benchOpts, res *Result) {
	if o.sweep {
		// A size cut short by Ctrl-C still has its line.
		for _, f := range res.Sizes[res.printed:] {
			res.onSize(f)
		}
		printSweepEnd(stdout, res)
	} else {
		printResult(stdout, res)
	}
	if o.stats {
		printStack(stdout, res.Stack)
	}
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

// runEnd is how a bench run ends, on the software stack or a device:
// Ctrl-C ends it with what it measured as the result (interrupted, no
// error), a --timeout is its cause, and octets that arrived different
// from what was sent are an error naming who may have corrupted them.
func runEnd(ctx context.Context, err error, mismatches int64, who string) (interrupted bool, _ error) {
	switch {
	case err != nil && wasInterrupted(ctx):
		return true, nil
	case err != nil && endCause(ctx) != nil:
		return false, endCause(ctx)
	case err == nil && mismatches != 0:
		return false, fmt.Errorf("%d octets arrived different from what was sent: %s corrupts data; rerun with --pcap to capture it", mismatches, who)
	}
	return false, err
}
