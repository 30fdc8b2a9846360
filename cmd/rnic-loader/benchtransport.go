package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/openrnic/rnic/iwarp/ddpsctp"
	"github.com/openrnic/rnic/iwarp/sctp"
	"github.com/openrnic/rnic/iwarp/verbs"
)

// bench --transport: the iWARP sessions run over MPA on TCP (tcp, the
// default) or over DDP/SCTP (sctp: the ddpsctp adaptation layer on the
// userspace SCTP association of iwarp/sctp, over UDP), the same RDMAP, DDP
// placement and verification either way. The raw TCP baseline stays raw
// TCP. "sctp,tcp" runs the whole bench once per transport, in that order,
// and compares their goodputs.

const (
	transportSchema = "rnic-loader/bench-transport/1"
	// loopbackSCTPMTU is the SCTP packet size of a loopback run: lo's MTU
	// is 65536, so the largest UDP payload goes unfragmented, as section 9
	// of the DDP/SCTP draft wants of a MULPDU (65458 octets). Per packet
	// costs dominate the userspace association: at 16384 it moves about
	// half as much.
	loopbackSCTPMTU = sctp.MaxMTU
)

// checkTransport parses --transport and refuses what does not go with it.
func (o *benchOpts) checkTransport(changed func(string) bool) error {
	o.transports = nil
	for _, t := range strings.Split(o.transport, ",") {
		t = strings.TrimSpace(t)
		switch {
		case t != "tcp" && t != "sctp":
			return usagef("--transport %q: want tcp, sctp or a list of them such as sctp,tcp", o.transport)
		case slices.Contains(o.transports, t):
			return usagef("--transport %q names %s twice", o.transport, t)
		}
		o.transports = append(o.transports, t)
	}
	o.cur = o.transports[0]
	hasSCTP := slices.Contains(o.transports, "sctp")
	if changed("sctp-mtu") && (o.sctpMTU < sctp.MinMTU || o.sctpMTU > sctp.MaxMTU) {
		return usagef("--sctp-mtu %d: want %d to %d octets", o.sctpMTU, sctp.MinMTU, sctp.MaxMTU)
	}
	if !changed("transport") {
		if changed("sctp-mtu") {
			return usagef("--sctp-mtu is for DDP/SCTP: give it with --transport sctp (or sctp,tcp)")
		}
		return nil
	}
	switch {
	case o.isDeviceRun():
		return usagef("--transport is for the software stack: --device and --peer-device run MPA over TCP only")
	case hasSCTP && o.framing == framingTUF:
		return usagef("--framing tuf frames DDP on TCP: give it with --transport tcp (DDP/SCTP has its own framing, the DDP Segment Chunk)")
	case hasSCTP && o.pcap != "":
		return usagef("--pcap captures MPA over TCP; for a capture of DDP/SCTP use the interop test's (make test-interop, docs/ddp-sctp.md)")
	case o.listen == "" && !slices.Contains(o.transports, "tcp") && (changed("markers") || changed("no-crc") || changed("mpa-rev")):
		return usagef("--markers, --no-crc and --mpa-rev are MPA's; DDP/SCTP has no markers and always SCTP's CRC32c: give them with --transport tcp or sctp,tcp")
	case o.listen != "" && len(o.transports) > 1 && o.transports[0] != "sctp":
		// Either order serves both; say it one way.
		o.transports = []string{"sctp", "tcp"}
	}
	return nil
}

// sctpConfig is the SCTP configuration of the bench's associations.
func (o *benchOpts) sctpConfig(loopback bool) sctp.Config {
	mtu := o.sctpMTU
	if mtu == 0 {
		mtu = sctp.DefaultMTU
		if loopback {
			mtu = loopbackSCTPMTU
		}
	}
	return sctp.Config{MTU: mtu}
}

// listenSCTP listens for DDP/SCTP associations on the UDP address addr.
func listenSCTP(addr string, o *benchOpts, loopback bool) (*ddpsctp.Listener, error) {
	return ddpsctp.Listen(addr, o.sctpConfig(loopback), ddpsctp.Config{})
}

// acceptSCTP serves the DDP/SCTP associations of ln until ctx ends: each
// session request of each association is one iWARP session, counted in its
// client run as an MPA connection is.
func (s *benchServer) acceptSCTP(ctx context.Context, ln *ddpsctp.Listener, wg *sync.WaitGroup) {
	for {
		c, err := ln.Accept(ctx)
		if err != nil {
			var ae *ddpsctp.AdaptationError
			if errors.As(err, &ae) {
				s.logf(true, "dropped an SCTP association: %v", err)
				continue
			}
			return // ctx ended, or the listener closed
		}
		peer := "an SCTP peer"
		if ra := c.RemoteAddr(); ra != nil {
			peer = ra.String()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			stop := context.AfterFunc(ctx, func() { c.Close() })
			defer stop()
			for {
				r, err := c.Listen(ctx)
				if err != nil {
					return
				}
				s.serveSession(ctx, r, peer)
			}
		}()
	}
}

// serveSession serves one DDP/SCTP session request as serveConn serves an
// MPA connection.
func (s *benchServer) serveSession(ctx context.Context, req *ddpsctp.Request, peer string) {
	peer = fmt.Sprintf("%s stream %d", peer, req.Stream())
	var r *serverRun
	establish := func(qp *verbs.QP) error { return qp.EstablishRequest(ctx, req) }
	bp, verified, bad, established, err := serveIWARP(ctx, establish, s.o, func(bp benchParams) bool {
		r = s.join(bp.Run, peer, bp.Sessions, bp.RawConns)
		return r != nil
	})
	switch {
	case !established:
		if ctx.Err() == nil {
			s.logf(true, "%s: dropped: not a bench client's DDP/SCTP session: %v", peer, err)
		}
		return
	case r == nil:
		s.logf(true, "%s: dropped: an iWARP session of a client run that is over", peer)
		return
	case err != nil:
		err = fmt.Errorf("%s: iWARP %s session over DDP/SCTP: %w", peer, bp.Op, err)
	default:
		s.logf(false, "%s: iWARP %s session over DDP/SCTP: verified %d octets, %d mismatches", peer, bp.Op, verified, bad)
	}
	s.leave(r, false, verified, bad, err)
}

// dialSCTPSession sets up a session's own SCTP association and its DDP
// Stream Session (stream 0), with the bench parameters in the Initiate's
// private data.
func dialSCTPSession(ctx context.Context, pd *verbs.PD, e *endpoint, cfg verbs.QPConfig, o *benchOpts, res *Result) (*clientSession, error) {
	addr := o.sctpAddr
	if len(cfg.MPA.PrivateData) > verbs.MaxSessionPrivateData {
		e.release()
		return nil, fmt.Errorf("bench: the session's parameters take %d octets, more than DDP/SCTP's private data holds (%d)", len(cfg.MPA.PrivateData), verbs.MaxSessionPrivateData)
	}
	c, err := ddpsctp.Dial(ctx, addr, o.sctpConfig(o.connect == ""), ddpsctp.Config{})
	if err != nil {
		e.release()
		return nil, fmt.Errorf("DDP/SCTP association with %s (UDP): %w (is it a bench server with --transport sctp?)", addr, err)
	}
	s := &clientSession{e: e, assoc: c}
	qp := verbs.CreateQP(pd, cfg)
	s.qp = qp
	if err := e.postRecvs(qp); err != nil {
		s.close()
		return nil, err
	}
	if err := qp.EstablishSession(ctx, c, 0); err != nil {
		s.qp = nil
		s.close()
		var re *ddpsctp.RejectError
		if errors.As(err, &re) {
			return nil, fmt.Errorf("the server at %s rejected the bench: %s", addr, re.PrivateData)
		}
		return nil, fmt.Errorf("DDP/SCTP session with %s: %w", addr, err)
	}
	res.setSCTP(qp.MULPDU())
	return s, s.setPeer(qp.Params())
}

// setSCTP records the session's MULPDU, once; MPA's fields stay null.
func (res *Result) setSCTP(mulpdu int) {
	res.mu.Lock()
	defer res.mu.Unlock()
	if res.MULPDU == nil {
		res.MULPDU = ptr(mulpdu)
	}
}

// TransportResult is bench's --json record with --transport: schema
// rnic-loader/bench-transport/1.
type TransportResult struct {
	Schema     string          `json:"schema"`
	Transports []string        `json:"transports"`
	Runs       []TransportRun  `json:"runs"`
	Comparison *TransportRatio `json:"comparison"` // null unless both ran
	Error      *string         `json:"error"`
}

// TransportRun is one transport's bench record (schema rnic-loader/bench/2).
type TransportRun struct {
	Transport string  `json:"transport"`
	Result    *Result `json:"result"`
}

// TransportRatio compares DDP/SCTP's goodput with MPA over TCP's, over the
// run and round by round.
type TransportRatio struct {
	SCTPBitsPerSecond *float64 `json:"sctp_goodput_bits_per_second"`
	TCPBitsPerSecond  *float64 `json:"tcp_goodput_bits_per_second"`
	SCTPOverTCP       *float64 `json:"sctp_over_tcp"`
	// Rounds compares each round's phases; null with -a, whose rounds
	// are in each size's record.
	Rounds []TransportRound `json:"rounds"`
}

// TransportRound compares one round's DDP/SCTP and MPA/TCP phases.
type TransportRound struct {
	Round             int     `json:"round"` // from 1
	First             string  `json:"first"` // the transport whose phase ran first
	SCTPBitsPerSecond float64 `json:"sctp_goodput_bits_per_second"`
	TCPBitsPerSecond  float64 `json:"tcp_goodput_bits_per_second"`
	SCTPOverTCP       float64 `json:"sctp_over_tcp"`
}

// compareRounds pairs the rounds of the sctp and tcp records, each with the
// transport whose phase started first.
func compareRounds(sctpRes, tcpRes *Result) []TransportRound {
	if sctpRes.Sweep {
		return nil
	}
	rounds := []TransportRound{}
	for i := range min(len(sctpRes.Rounds), len(tcpRes.Rounds), len(sctpRes.started), len(tcpRes.started)) {
		s, t := sctpRes.Rounds[i], tcpRes.Rounds[i]
		first := "sctp"
		if tcpRes.started[i].Before(sctpRes.started[i]) {
			first = "tcp"
		}
		rounds = append(rounds, TransportRound{Round: s.Round, First: first, SCTPBitsPerSecond: s.GoodputBitsPerSecond,
			TCPBitsPerSecond: t.GoodputBitsPerSecond, SCTPOverTCP: s.GoodputBitsPerSecond / t.GoodputBitsPerSecond})
	}
	return rounds
}

// transportName says what a pass runs over.
func transportName(t string) string {
	if t == "sctp" {
		return "DDP/SCTP (userspace SCTP over UDP)"
	}
	return "MPA over TCP"
}

// transportShort is the transport's name in progress lines and errors.
func transportShort(t string) string {
	if t == "sctp" {
		return "DDP/SCTP"
	}
	return "MPA/TCP"
}

// runTransports runs the bench over the transports of --transport, their
// iWARP phases alternating round by round in one run, and reports each
// with their comparison.
func runTransports(ctx context.Context, stdout, stderr io.Writer, o *benchOpts, plan *runPlan, progW io.Writer) error {
	out := TransportResult{Schema: transportSchema, Transports: o.transports}
	results, err := benchPass(ctx, stdout, stderr, o, plan, progW)
	goodput := map[string]*float64{}
	byName := map[string]*Result{}
	for _, res := range results {
		out.Runs = append(out.Runs, TransportRun{Transport: res.transport, Result: res})
		byName[res.transport] = res
		if err == nil && !res.Interrupted {
			goodput[res.transport] = res.GoodputBitsPerSecond
		}
		if !o.json && err == nil {
			fmt.Fprintf(stdout, "== %s ==\n", transportName(res.transport))
			printPass(stdout, o, res)
		}
	}
	if s, tcp := goodput["sctp"], goodput["tcp"]; s != nil && tcp != nil {
		out.Comparison = &TransportRatio{SCTPBitsPerSecond: s, TCPBitsPerSecond: tcp, SCTPOverTCP: ptr(*s / *tcp),
			Rounds: compareRounds(byName["sctp"], byName["tcp"])}
		if !o.json && len(out.Comparison.Rounds) > 0 {
			fmt.Fprintf(stdout, "per round (Gbit/s; the transport named first ran first):\n")
			for _, r := range out.Comparison.Rounds {
				a, b := "DDP/SCTP", "MPA/TCP"
				ga, gb := r.SCTPBitsPerSecond, r.TCPBitsPerSecond
				if r.First == "tcp" {
					a, b, ga, gb = b, a, gb, ga
				}
				fmt.Fprintf(stdout, "  round %d: %s %.3f, %s %.3f, DDP/SCTP / MPA/TCP %.3f\n", r.Round, a, ga/1e9, b, gb/1e9, r.SCTPOverTCP)
			}
		}
		if !o.json {
			fmt.Fprintf(stdout, "DDP/SCTP %.3f Gbit/s, MPA/TCP %.3f Gbit/s: DDP/SCTP / MPA/TCP goodput %.3f\n", *s/1e9, *tcp/1e9, *s / *tcp)
		}
	}
	if err != nil {
		out.Error = ptr(err.Error())
	}
	if o.json {
		if jerr := writeJSON(stdout, out); jerr != nil && err == nil {
			err = jerr
		}
	}
	return err
}

// mpaOrSCTPLine says what the pass's lower layer negotiated.
func mpaOrSCTPLine(w io.Writer, r *Result) bool {
	if r.transport != "sctp" {
		return false
	}
	if r.MULPDU == nil {
		fmt.Fprintf(w, "  DDP/SCTP: no session established\n")
	} else {
		fmt.Fprintf(w, "  DDP/SCTP: unordered DATA chunks, CRC32c, MULPDU %d\n", *r.MULPDU)
	}
	return true
}
