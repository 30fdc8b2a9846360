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
	size, count    int
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
}

// RpingResult is what rping reports for one connection (--json prints it).
type RpingResult struct {
	Role          string  `json:"role"` // client or server
	Peer          string  `json:"peer"`
	Size          int     `json:"size"`
	Rounds        int     `json:"rounds"`
	VerifiedBytes int64   `json:"verified_bytes"`
	MPARev        uint8   `json:"mpa_rev,omitempty"`
	CRC           bool    `json:"crc"`
	Markers       bool    `json:"markers"`
	IRD           uint16  `json:"ird,omitempty"`
	ORD           uint16  `json:"ord,omitempty"`
	Seconds       float64 `json:"seconds"`
	Error         string  `json:"error,omitempty"`
	Pcap          string  `json:"pcap,omitempty"`
}

func newRpingCmd() *cobra.Command {
	var o rpingOpts
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
runs -C rounds (0: until interrupted) and disconnects; the server serves
until its client disconnects (with -P, client after client). MPA revision 2
with IRD and ORD 1 is what rping on siw offers; siw refuses markers and uses
CRC if either side asks.

Exit status: 0 when every round completed (and verified with -V), 1 on a
protocol error, a Terminate from the peer, a data mismatch or a lost
connection, 2 on a wrong command line.`,
		Example: `  # A server on rping's port, printing what it reads
  rnic-loader rping -s -v

  # A client: 10 verified rounds of 4 KiB against rping -s on siw
  rnic-loader rping -c -a 192.168.1.10 -C 10 -S 4096 -V -v

  # Both sides of this tool, a summary for scripts, and a pcap
  rnic-loader rping -s -a 127.0.0.1 -p 7174 &
  rnic-loader rping -c -a 127.0.0.1 -C 3 -V --json --pcap build/rping.pcap`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRping(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), &o)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&o.server, "server", "s", false, "server side")
	f.BoolVarP(&o.client, "client", "c", false, "client side")
	f.StringVarP(&o.addr, "addr", "a", "", "address: the server's to connect to (-c), or to listen on (-s; default all)")
	f.IntVarP(&o.port, "port", "p", rping.DefaultPort, "TCP port")
	f.IntVarP(&o.size, "size", "S", rping.DefaultSize, fmt.Sprintf("ping data size (%d to %d)", rping.MinSize, rping.MaxSize))
	f.IntVarP(&o.count, "count", "C", 0, "client: rounds to run (0: until interrupted)")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "print the ping data of each round")
	f.BoolVarP(&o.verify, "verify", "V", false, "verify every round's data")
	f.BoolVarP(&o.persistent, "persistent", "P", false, "server: keep serving clients, one after the other")
	f.IntVar(&o.mpaRev, "mpa-rev", 2, "MPA revision to offer: 1 or 2")
	f.BoolVar(&o.noCRC, "no-crc", false, "declare a preference not to use CRC32c (used only if the peer agrees)")
	f.BoolVar(&o.markers, "markers", false, "ask for MPA markers (siw refuses them)")
	f.BoolVar(&o.json, "json", false, "print one JSON result per connection on stdout (ping data then goes to stderr)")
	f.StringVar(&o.pcap, "pcap", "", "write a pcap of the session to `FILE` (the last connection's, with -P)")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress or summary on stderr")
	f.DurationVar(&o.timeout, "timeout", 0, "give up after this long (0: never)")
	f.DurationVar(&o.startDelay, "start-delay", 100*time.Millisecond, "client: wait this long after the MPA startup before the first Send (Linux siw as server can miss an FPDU that arrives right after its MPA Reply; 0 sends at once)")
	f.IntVar(&o.overrunRead, "overrun-read", 0, "server, for testing a peer: RDMA-Read `N` octets past the advertised buffer")
	f.IntVar(&o.overrunWrite, "overrun-write", 0, "server, for testing a peer: RDMA-Write `N` octets past the advertised buffer")
	return cmd
}

func (o *rpingOpts) check() error {
	if o.server == o.client {
		return usagef("give exactly one of -s (server) and -c (client)")
	}
	if o.client && o.addr == "" {
		return usagef("the client needs the server's address: -a ADDR")
	}
	if o.port < 0 || o.port > 65535 || (o.client && o.port == 0) {
		return usagef("invalid port %d", o.port)
	}
	if err := rping.CheckSize(o.size); err != nil {
		return usageError{err}
	}
	if o.count < 0 {
		return usagef("invalid count %d", o.count)
	}
	if o.mpaRev != 1 && o.mpaRev != 2 {
		return usagef("--mpa-rev must be 1 or 2, not %d", o.mpaRev)
	}
	if o.overrunRead < 0 || o.overrunWrite < 0 {
		return usagef("overruns must not be negative")
	}
	if o.client && (o.overrunRead > 0 || o.overrunWrite > 0) {
		return usagef("--overrun-read and --overrun-write are server options")
	}
	if o.startDelay < 0 {
		return usagef("invalid --start-delay %v", o.startDelay)
	}
	if o.timeout < 0 {
		return usagef("invalid --timeout %v", o.timeout)
	}
	return nil
}

func (o *rpingOpts) config(verbose io.Writer, rounds *atomic.Int64) rping.Config {
	cfg := rping.Config{
		Size: o.size, Count: o.count, Validate: o.verify,
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

func runRping(ctx context.Context, stdout, stderr io.Writer, o *rpingOpts) error {
	if err := o.check(); err != nil {
		return err
	}
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}
	verbose := stdout
	if o.json {
		verbose = stderr
	}
	info := stderr
	if o.quiet {
		info = io.Discard
	}
	addr := net.JoinHostPort(o.addr, strconv.Itoa(o.port))
	if o.client {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return fmt.Errorf("rping: %w (is a server listening on %s?)", err, addr)
		}
		res, err := o.session(ctx, c, true, verbose, info)
		return o.report(stdout, info, res, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("rping: %w", err)
	}
	defer ln.Close()
	fmt.Fprintf(info, "rping server listening on %s\n", ln.Addr())
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("rping: %w", err)
		}
		res, err := o.session(ctx, c, false, verbose, info)
		err = o.report(stdout, info, res, err)
		if !o.persistent {
			return err
		}
		if err != nil {
			fmt.Fprintln(stderr, "rnic-loader:", err)
		}
	}
}

// session runs one connection, with its pcap and progress.
func (o *rpingOpts) session(ctx context.Context, c net.Conn, client bool, verbose, info io.Writer) (*RpingResult, error) {
	res := &RpingResult{Role: "server", Peer: c.RemoteAddr().String(), Size: o.size}
	if client {
		res.Role = "client"
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
		res.Pcap = o.pcap
	}
	var rounds atomic.Int64
	cfg := o.config(verbose, &rounds)
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
					if o.count > 0 {
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
		st, err = rping.Client(ctx, nil, c, cfg)
	} else {
		st, err = rping.Serve(ctx, nil, c, cfg)
	}
	close(done)
	res.Seconds = time.Since(start).Seconds()
	if st != nil {
		res.Rounds, res.VerifiedBytes = st.Rounds, st.Verified
		if p := st.Params; p != nil {
			res.MPARev, res.CRC, res.Markers = p.Revision(), p.CRC, p.TxMarkers || p.RxMarkers
			if p.Revision() >= 2 {
				res.IRD, res.ORD = p.Local.Params.IRD, p.Local.Params.ORD
			}
		}
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

func (o *rpingOpts) report(stdout, info io.Writer, res *RpingResult, err error) error {
	if err != nil {
		res.Error = err.Error()
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		if jerr := enc.Encode(res); jerr != nil && err == nil {
			err = jerr
		}
	}
	crc := "off"
	if res.CRC {
		crc = "on"
	}
	fmt.Fprintf(info, "rping %s: %d rounds of %d octets with %s, %d octets verified, MPA rev %d, CRC %s, %.3f s\n",
		res.Role, res.Rounds, res.Size, res.Peer, res.VerifiedBytes, res.MPARev, crc, res.Seconds)
	if res.Pcap != "" {
		fmt.Fprintf(info, "  pcap written to %s\n", res.Pcap)
	}
	return err
}
