package main

import (
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
	"slices"
	"sync"
	"time"

	"github.com/openrnic/rnic/capture"
	"github.com/openrnic/rnic/iwarp/ddpsctp"
	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/verbs"
)

// The client's side of a run: for each size its warm-up, then its rounds,
// each an iWARP phase and a raw TCP phase; each phase runs --qps queue
// pairs (or TCP connections) at once.

// emptyFigures are the inline figures of a sweep before any size is done.
func emptyFigures() Figures {
	return Figures{Directions: []Direction{}, QueuePairs: []QPFigures{}, Rounds: []Round{}}
}

// newFigures are the figures of size sp before any round is done.
func newFigures(p *runPlan, sp *sizePlan) *Figures {
	f := emptyFigures()
	f.MessageOctets = ptr(int64(sp.size))
	if sp.total > 0 {
		f.TotalOctets = ptr(sp.total)
		f.Messages = ptr((sp.total + int64(sp.size) - 1) / int64(sp.size))
	}
	switch {
	case sp.warmTotal > 0:
		f.WarmupOctets = ptr(sp.warmTotal)
	case sp.warmDur > 0:
		f.WarmupSeconds = ptr(sp.warmDur.Seconds())
	default:
		f.WarmupOctets = ptr(int64(0))
	}
	f.Window = ptr(sp.window)
	return &f
}

// leg is what one lower layer does in a client run, into its own record:
// a run has one, or with --transport sctp,tcp one per transport, every
// round and the warm-up running each (benchtransport.go).
type leg struct {
	o   *benchOpts // cur is the leg's transport
	res *Result
	fig *Figures // the size being run
	acc *sizeAcc
}

// clientBench runs the client's side of a run and fills each leg's record
// as rounds complete, so that a run that fails or is interrupted still
// reports what it finished. onSize, if set, is told of each size of a
// sweep when done (one leg).
func clientBench(ctx context.Context, addr string, p *runPlan, progW io.Writer, legs []*leg, onSize func(*Figures)) error {
	sweep := legs[0].o.sweep
	for i := range p.sizes {
		sp := &p.sizes[i]
		for _, l := range legs {
			l.fig = &l.res.Figures
			if sweep {
				l.fig = newFigures(p, sp)
			}
		}
		err := clientSize(ctx, addr, p, sp, progW, legs)
		for _, l := range legs {
			if sweep && (err == nil || len(l.fig.Rounds) > 0) {
				l.res.Sizes = append(l.res.Sizes, l.fig)
				sumFigures(&l.res.Figures, l.fig)
				if err == nil && onSize != nil {
					onSize(l.fig)
				}
			}
		}
		if err != nil {
			if sweep {
				return fmt.Errorf("size %s: %w", sayOctets(int64(sp.size)), err)
			}
			return err
		}
	}
	return nil
}

// sumFigures adds a size's counts to a sweep's inline figures.
func sumFigures(sum, f *Figures) {
	sum.MeasuredOctets += f.MeasuredOctets
	sum.MeasuredMessages += f.MeasuredMessages
	sum.VerifiedBytes += f.VerifiedBytes
	sum.Mismatches += f.Mismatches
	sum.WireBytes += f.WireBytes
	if f.RawTCPOctets != nil {
		sum.RawTCPOctets = ptr(*f.RawTCPOctets + ptrOr(sum.RawTCPOctets, 0))
	}
	sum.Stack.merge(f.Stack)
}

func ptrOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// sizeAcc adds up a size's rounds.
type sizeAcc struct {
	iwTime, rawTime time.Duration
	octets, msgs    int64
	rawOctets       int64
	rawMsgs         int64
	raw             bool
	dir             [2]struct{ octets, msgs, rawOctets int64 }
	qp              []QPFigures
	qpTime          []time.Duration
	peak            float64
	op              string
	hasServerDir    bool // --bidir
}

// fill puts the totals into fig.
func (a *sizeAcc) fill(fig *Figures) {
	fig.MeasuredOctets, fig.MeasuredMessages = a.octets, a.msgs
	if a.iwTime > 0 {
		s := a.iwTime.Seconds()
		fig.Seconds = ptr(s)
		fig.GoodputBitsPerSecond = ptr(float64(a.octets) * 8 / s)
		fig.MessagesPerSecond = ptr(float64(a.msgs) / s)
		fig.PeakBitsPerSecond = ptr(a.peak)
	}
	if a.raw && a.rawTime > 0 {
		s := a.rawTime.Seconds()
		fig.RawTCPOctets = ptr(a.rawOctets)
		fig.RawTCPSeconds = ptr(s)
		fig.RawTCPBitsPerSecond = ptr(float64(a.rawOctets) * 8 / s)
		fig.RawTCPMessagesPerSecond = ptr(float64(a.rawMsgs) / s)
		if fig.GoodputBitsPerSecond != nil {
			fig.Ratio = ptr(*fig.GoodputBitsPerSecond / *fig.RawTCPBitsPerSecond)
		}
	}
	fig.Directions = fig.Directions[:0]
	if a.iwTime > 0 {
		for d := range a.dir {
			if d == 1 && !a.hasServerDir {
				break
			}
			fig.Directions = append(fig.Directions, a.direction(d, fig))
		}
	}
	fig.QueuePairs = fig.QueuePairs[:0]
	for q := range a.qp {
		if a.iwTime == 0 {
			break // no round done
		}
		f := a.qp[q]
		if s := a.qpTime[q].Seconds(); s > 0 {
			f.Seconds = s
			f.GoodputBitsPerSecond = float64(f.Octets) * 8 / s
			f.MessagesPerSecond = float64(f.Messages) / s
		}
		fig.QueuePairs = append(fig.QueuePairs, f)
	}
}

// direction is direction d's figures (0: the client's operations, 1: the
// server's).
func (a *sizeAcc) direction(d int, fig *Figures) Direction {
	who, other := "client", "server"
	if d == 1 {
		who, other = other, who
	}
	from, to := who, other
	if a.op == "read" {
		from, to = to, from
	}
	s := a.iwTime.Seconds()
	x := Direction{Initiator: who, DataFrom: from, DataTo: to, Octets: a.dir[d].octets, Messages: a.dir[d].msgs,
		GoodputBitsPerSecond: ptr(float64(a.dir[d].octets) * 8 / s), MessagesPerSecond: ptr(float64(a.dir[d].msgs) / s)}
	if a.raw && a.rawTime > 0 {
		x.RawTCPOctets = ptr(a.dir[d].rawOctets)
		x.RawTCPBitsPerSecond = ptr(float64(a.dir[d].rawOctets) * 8 / a.rawTime.Seconds())
	}
	return x
}

// clientSize runs one size: its warm-up and its rounds, each leg's
// iWARP phase in each, in the legs' order in the warm-up and odd rounds and
// the other way round in even ones.
func clientSize(ctx context.Context, addr string, p *runPlan, sp *sizePlan, progW io.Writer, legs []*leg) error {
	for _, l := range legs {
		l.acc = &sizeAcc{op: p.op, hasServerDir: p.bidir, qp: make([]QPFigures, p.qps), qpTime: make([]time.Duration, p.qps)}
		for q := range l.acc.qp {
			l.acc.qp[q].QP = q + 1
		}
		defer l.acc.fill(l.fig)
	}
	sweep := legs[0].o.sweep
	if sweep {
		progW = nil // phases of a fraction of a second each
	}
	label := func(s string) string {
		if sweep {
			return fmt.Sprintf(" (%s%s)", shortOctets(int64(sp.size)), s)
		}
		if s == "" {
			return ""
		}
		return " (" + s[2:] + ")"
	}
	// iwarpLabel names the phase, and its transport when legs compare.
	iwarpLabel := func(l *leg, s string) string {
		over := ""
		if len(legs) > 1 {
			over = " over " + transportShort(l.o.cur)
		}
		return "iWARP " + p.op + over + label(s)
	}
	// inOrder is the legs in the order of round r+1: as given in odd
	// rounds, the other way round in even ones, as the raw TCP baseline
	// alternates.
	inOrder := func(r int) []*leg {
		if r%2 == 0 {
			return legs
		}
		rev := slices.Clone(legs)
		slices.Reverse(rev)
		return rev
	}
	if sp.warm() {
		// An untimed round first: a machine and a process that have been
		// idle run their first fraction of a second of load measurably
		// slower (the first of 8 rounds ran at about two thirds of the
		// speed of the others, whichever side went first).
		wb := p.session(sp, sp.warmTotal, sp.warmDur)
		for _, l := range legs {
			ph, err := iwarpPhase(ctx, addr, wb, p.qps, l.o, progW, iwarpLabel(l, ", warm-up"), l.res)
			if err != nil {
				l.fig.Stack.merge(ph.stack) // the failed session's counters, its Terminate
				return fmt.Errorf("warm-up%s: %w", legName(legs, l), err)
			}
			if _, err := mpaBeside(ctx, addr, wb, l.o, progW, iwarpLabel(l, ", warm-up"), l.res, false); err != nil {
				return fmt.Errorf("warm-up: %w", err)
			}
		}
		if p.raw {
			if _, err := rawPhase(ctx, addr, wb, p, progW, "raw TCP"+label(", warm-up")); err != nil {
				return fmt.Errorf("warm-up: %w", err)
			}
		}
	}
	rounds := sp.rounds
	for r := 0; r < rounds; r++ {
		// An equal share of whole messages per round, the last taking
		// the rest; or an equal share of the time.
		var total int64
		var dur time.Duration
		if sp.total > 0 {
			per := sp.total / int64(sp.size) / int64(rounds) * int64(sp.size)
			total = per
			if r == rounds-1 {
				total = sp.total - per*int64(rounds-1)
			}
		} else {
			dur = sp.dur / time.Duration(rounds)
		}
		rb := p.session(sp, total, dur)
		l := ""
		if rounds > 1 {
			l = fmt.Sprintf(", round %d of %d", r+1, rounds)
		}
		rawFirst := p.raw && r%2 == 1
		var rawRes *rawResult
		rawRound := func() error {
			rr, err := rawPhase(ctx, addr, rb, p, progW, "raw TCP"+label(l))
			if err != nil {
				return err
			}
			rawRes = &rr
			return nil
		}
		if rawFirst {
			if err := rawRound(); err != nil {
				return err
			}
		}
		phases := make(map[*leg]phaseResult, len(legs))
		for _, lg := range inOrder(r) {
			o := *lg.o
			if r > 0 {
				o.pcap = ""
			}
			// --framing tuf: MPA beside TUF, first in every other round.
			mpaFirst := r%2 == 1
			if mpaFirst {
				if _, err := mpaBeside(ctx, addr, rb, &o, progW, iwarpLabel(lg, l), lg.res, true); err != nil {
					return err
				}
			}
			lg.res.started = append(lg.res.started, time.Now())
			ph, err := iwarpPhase(ctx, addr, rb, p.qps, &o, progW, iwarpLabel(lg, l), lg.res)
			lg.fig.Stack.merge(ph.stack)
			if err != nil {
				if len(legs) > 1 {
					err = fmt.Errorf("%s: %w", transportName(lg.o.cur), err)
				}
				return err
			}
			if !mpaFirst {
				if _, err := mpaBeside(ctx, addr, rb, &o, progW, iwarpLabel(lg, l), lg.res, true); err != nil {
					return err
				}
			}
			phases[lg] = ph
		}
		if p.raw && !rawFirst {
			if err := rawRound(); err != nil {
				return err
			}
		}
		// The round counts only now that all its phases are done.
		for _, lg := range legs {
			lg.addRound(r+1, rawFirst, phases[lg], rawRes)
		}
	}
	if sp.total > 0 {
		want := sp.total * int64(p.qps)
		if p.bidir {
			want *= 2
		}
		for _, lg := range legs {
			if lg.fig.VerifiedBytes != want {
				return fmt.Errorf("bench%s: %d of %d octets verified: the verdicts do not cover the run (a bug in the bench or the stack; rerun with --pcap to capture it)", legName(legs, lg), lg.fig.VerifiedBytes, want)
			}
		}
	}
	return nil
}

// legName names l's transport in an error when legs compare, else nothing.
func legName(legs []*leg, l *leg) string {
	if len(legs) < 2 {
		return ""
	}
	return " over " + transportShort(l.o.cur)
}

// addRound adds round n's iWARP phase and the raw TCP one (nil without a
// baseline) to the leg's figures.
func (l *leg) addRound(n int, rawFirst bool, ph phaseResult, rawRes *rawResult) {
	acc, fig := l.acc, l.fig
	round := Round{Round: n, RawFirst: rawFirst}
	round.Octets, round.Messages = ph.octets(), ph.msgs()
	round.Seconds = ph.elapsed.Seconds()
	round.GoodputBitsPerSecond = float64(round.Octets) * 8 / round.Seconds
	round.MessagesPerSecond = float64(round.Messages) / round.Seconds
	if rawRes != nil {
		s := rawRes.elapsed.Seconds()
		round.RawTCPOctets = ptr(rawRes.octets())
		round.RawTCPSeconds = ptr(s)
		round.RawTCPBitsPerSecond = ptr(float64(rawRes.octets()) * 8 / s)
		round.RawTCPMessagesPerSecond = ptr(float64(rawRes.msgs()) / s)
		round.Ratio = ptr(round.GoodputBitsPerSecond / *round.RawTCPBitsPerSecond)
		acc.raw = true
		acc.rawTime += rawRes.elapsed
		acc.rawOctets += rawRes.octets()
		acc.rawMsgs += rawRes.msgs()
		for d := range rawRes.dir {
			acc.dir[d].rawOctets += rawRes.dir[d].octets
		}
	}
	acc.iwTime += ph.elapsed
	acc.octets += round.Octets
	acc.msgs += round.Messages
	acc.peak = max(acc.peak, round.GoodputBitsPerSecond)
	for d := range ph.dir {
		acc.dir[d].octets += ph.dir[d].octets
		acc.dir[d].msgs += ph.dir[d].msgs
	}
	for q, qr := range ph.qps {
		acc.qp[q].Octets += qr.octets
		acc.qp[q].Messages += qr.msgs
		acc.qpTime[q] += qr.elapsed
	}
	fig.VerifiedBytes += ph.verified
	fig.Mismatches += ph.bad
	fig.WireBytes += ph.wire
	fig.Rounds = append(fig.Rounds, round)
}

// flow is what moved one way in a phase: octets and messages.
type flow struct{ octets, msgs int64 }

// qpResult is what one queue pair did in an iWARP phase.
type qpResult struct {
	flow
	elapsed time.Duration
}

// phaseResult is what an iWARP phase did, all its queue pairs together.
type phaseResult struct {
	elapsed       time.Duration
	dir           [2]flow // the client's operations, the server's
	qps           []qpResult
	verified, bad int64
	wire          int64
	stack         Stack
}

func (ph *phaseResult) octets() int64 { return ph.dir[0].octets + ph.dir[1].octets }
func (ph *phaseResult) msgs() int64   { return ph.dir[0].msgs + ph.dir[1].msgs }

// clientSession is the client's end of one iWARP session.
type clientSession struct {
	e     *endpoint
	qp    *verbs.QP
	assoc *ddpsctp.Conn // the session's own SCTP association (--transport sctp)
	pw    *capture.Writer
	pf    *os.File
	slot  *captureSlot
}

// iwarpPhase runs qps iWARP sessions of bp at once: it establishes them
// all, starts them together and times them until the last is done.
func iwarpPhase(ctx context.Context, addr string, bp benchParams, qps int, o *benchOpts, progW io.Writer, label string, res *Result) (phaseResult, error) {
	ph := phaseResult{qps: make([]qpResult, qps)}
	sess := make([]*clientSession, qps)
	errs := make([]error, qps)
	var wg sync.WaitGroup
	for q := range sess {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sess[q], errs[q] = dialSession(ctx, addr, bp, o, res)
		}()
	}
	wg.Wait()
	closeAll := func() {
		for _, s := range sess {
			if s != nil {
				s.close()
			}
		}
	}
	if err := firstError(errs); err != nil {
		closeAll()
		return ph, err
	}
	var total int64
	if bp.Total > 0 {
		total = bp.Total * int64(qps)
		if bp.Bidir {
			total *= 2
		}
	}
	prog := startProgress(progW, label, total, time.Duration(bp.Dur))
	pctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	start := time.Now()
	for q, s := range sess {
		s.e.prog = prog
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[q] = s.e.run(pctx); errs[q] != nil {
				cancel(errs[q])
			}
		}()
	}
	wg.Wait()
	prog.finish()
	for _, s := range sess {
		s.qp.Close()
		if s.assoc != nil {
			s.assoc.Close()
		}
		s.e.release()
	}
	for q, s := range sess {
		e := s.e
		ph.stack.addStats(s.qp.Stats(), e.peerStats)
		ph.wire += s.qp.TxBytes.Load() + s.qp.RxBytes.Load()
		if errs[q] != nil {
			continue
		}
		d := e.bothAt.Sub(start)
		ph.elapsed = max(ph.elapsed, d)
		c := flow{e.sent, e.sentMsgs}
		srv := flow{e.got, e.gotMsgs}
		ph.dir[0].octets += c.octets
		ph.dir[0].msgs += c.msgs
		ph.dir[1].octets += srv.octets
		ph.dir[1].msgs += srv.msgs
		ph.qps[q] = qpResult{flow: flow{c.octets + srv.octets, c.msgs + srv.msgs}, elapsed: d}
		av, abad := e.activeVerified()
		ph.verified += av + e.got
		ph.bad += abad + e.gotBad
	}
	var perr error
	for _, s := range sess {
		if err := s.closeCapture(); err != nil && perr == nil {
			perr = fmt.Errorf("writing the pcap: %w", err)
		}
	}
	if err := firstError(errs); err != nil {
		return ph, err
	}
	return ph, perr
}

// firstError is the first error that is not another's cancellation.
func firstError(errs []error) error {
	var first error
	for _, err := range errs {
		if err == nil {
			continue
		}
		if first == nil || errors.Is(first, context.Canceled) && !errors.Is(err, context.Canceled) {
			first = err
		}
	}
	return first
}

// dialSession connects one iWARP session of bp and establishes it.
func dialSession(ctx context.Context, addr string, bp benchParams, o *benchOpts, res *Result) (*clientSession, error) {
	pd := verbs.NewDevice().AllocPD()
	e := newEndpoint(bp, true)
	own, err := e.register(pd)
	if err != nil {
		return nil, err
	}
	if bp.Bidir && bp.Op != "send" {
		bp.Region = &own
	}
	pdata, _ := json.Marshal(bp)
	cfg := verbs.QPConfig{MPA: o.mpaConfig(), WritePerFPDU: o.pcap != ""}
	cfg.MPA.PrivateData = pdata
	if o.cur == "sctp" {
		return dialSCTPSession(ctx, pd, e, cfg, o, res)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		e.release()
		return nil, dialError(ctx, addr, err, "rnic-loader bench --listen "+addr)
	}
	s := &clientSession{e: e}
	if o.pcap != "" {
		if conn, err = s.capture(conn, o, res); err != nil {
			conn.Close()
			e.release()
			return nil, err
		}
	}
	qp := verbs.CreateQP(pd, cfg)
	s.qp = qp
	if err := e.postRecvs(qp); err != nil {
		conn.Close()
		e.release()
		return nil, err
	}
	if err := establishQP(ctx, qp, conn, mpa.Initiator, o.framing); err != nil {
		conn.Close()
		e.release()
		s.closeCapture()
		if reply, ok := rejectReply(err); ok {
			return nil, fmt.Errorf("the server at %s rejected the bench: %s", addr, reply)
		}
		return nil, fmt.Errorf("iWARP startup with %s: %w (is it a bench server: rnic-loader bench --listen?)", addr, err)
	}
	p := qp.Params()
	if o.framing == framingTUF {
		res.setFraming(qp.EMSS(), qp.MULPDU())
	} else {
		res.setMPA(p.TxMarkers, p.CRC, p.Revision(), qp.EMSS(), qp.MULPDU())
	}
	return s, s.setPeer(p)
}

// setPeer takes the server's region from its reply.
func (s *clientSession) setPeer(p *mpa.Params) error {
	var region benchRegion
	err := json.Unmarshal(p.Peer.PrivateData, &region)
	if err == nil {
		err = s.e.setPeer(region)
	}
	if err != nil {
		s.close()
		return fmt.Errorf("bench: the server's reply is not a bench reply: %v", err)
	}
	return nil
}

// setMPA records what MPA negotiated, once; the queue pairs of a phase
// establish at once.
func (res *Result) setMPA(markers, crc bool, rev uint8, emss, mulpdu int) {
	res.mu.Lock()
	defer res.mu.Unlock()
	if res.MPARev == nil {
		res.Markers, res.CRC, res.MPARev, res.EMSS, res.MULPDU = ptr(markers), ptr(crc), ptr(rev), ptr(emss), ptr(mulpdu)
	}
}

// capture sets up --pcap for the session's connection.
func (s *clientSession) capture(conn net.Conn, o *benchOpts, res *Result) (net.Conn, error) {
	if err := os.MkdirAll(filepath.Dir(o.pcap), 0o755); err != nil {
		return conn, err
	}
	pf, err := os.Create(o.pcap)
	if err != nil {
		return conn, err
	}
	s.pf = pf
	la, _ := netip.ParseAddrPort(conn.LocalAddr().String())
	ra, _ := netip.ParseAddrPort(conn.RemoteAddr().String())
	pw, err := capture.NewWriter(pf, la, ra)
	if err == nil {
		err = pw.Open(time.Now())
	}
	if err != nil {
		pf.Close()
		s.pf = nil
		return conn, err
	}
	s.pw = pw
	res.Pcap = ptr(o.pcap)
	if o.capture != nil {
		// The server records its own writes (serverTap).
		o.capture.set(pw)
		s.slot = o.capture
		return pw.Tap(conn, true), nil
	}
	return pw.TapDuplex(conn, true), nil
}

// closeCapture finishes the session's pcap, if it has one.
func (s *clientSession) closeCapture() error {
	if s.pf == nil {
		return nil
	}
	if s.slot != nil {
		s.slot.set(nil)
	}
	err := s.pw.Close(time.Now())
	if cerr := s.pf.Close(); err == nil {
		err = cerr
	}
	s.pf = nil
	return err
}

func (s *clientSession) close() {
	if s.qp != nil {
		s.qp.Close()
	}
	if s.assoc != nil {
		s.assoc.Close()
	}
	s.e.release()
	s.closeCapture()
}

// rawResult is what a raw TCP phase did.
type rawResult struct {
	elapsed time.Duration
	dir     [2]flow // as the iWARP phase's: the client's operations, the server's
}

func (r *rawResult) octets() int64 { return r.dir[0].octets + r.dir[1].octets }
func (r *rawResult) msgs() int64   { return r.dir[0].msgs + r.dir[1].msgs }

// rawPhase runs the raw TCP baseline of one iWARP phase: per queue pair a
// connection each way data flows, all at once, timed from when all are
// connected to when the last receiver has verified the last octet.
func rawPhase(ctx context.Context, addr string, bp benchParams, p *runPlan, progW io.Writer, label string) (rawResult, error) {
	var res rawResult
	type rawConn struct {
		c           net.Conn
		serverSends bool
		d           int // the direction: 0 the client's operations, 1 the server's
		f           flow
		elapsed     time.Duration
	}
	var conns []*rawConn
	for q := 0; q < p.qps; q++ {
		// The client's operations move data from the client unless they
		// are Reads; the server's (--bidir) the other way.
		conns = append(conns, &rawConn{serverSends: bp.Op == "read", d: 0})
		if bp.Bidir {
			conns = append(conns, &rawConn{serverSends: bp.Op != "read", d: 1})
		}
	}
	errs := make([]error, len(conns))
	var wg sync.WaitGroup
	for i, rc := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var d net.Dialer
			c, err := d.DialContext(ctx, "tcp", addr)
			if err != nil {
				errs[i] = fmt.Errorf("raw TCP baseline: %w", dialError(ctx, addr, err, "rnic-loader bench --listen "+addr))
				return
			}
			rc.c = c
			h := rawHello{size: bp.Size, total: bp.Total, seed: bp.Seed, run: bp.Run, sessions: bp.Sessions, rawConns: bp.RawConns}
			if rc.serverSends {
				h.flags |= rawServerSends
			}
			if _, err := c.Write(h.append(nil)); err != nil {
				errs[i] = fmt.Errorf("raw TCP baseline: %w", err)
			}
		}()
	}
	wg.Wait()
	defer func() {
		for _, rc := range conns {
			if rc.c != nil {
				rc.c.Close()
			}
		}
	}()
	if err := firstError(errs); err != nil {
		return res, err
	}
	var total int64
	if bp.Total > 0 {
		total = bp.Total * int64(len(conns))
	}
	prog := startProgress(progW, label, total, time.Duration(bp.Dur))
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	deadline := start.Add(time.Duration(bp.Dur))
	for i, rc := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			rc.f, err = rawClientConn(pctx, rc.c, bp, rc.serverSends, deadline, prog)
			rc.elapsed = time.Since(start)
			if err != nil {
				errs[i] = err
				cancel()
			}
		}()
	}
	wg.Wait()
	prog.finish()
	if err := firstError(errs); err != nil {
		return res, err
	}
	for _, rc := range conns {
		res.elapsed = max(res.elapsed, rc.elapsed)
		res.dir[rc.d].octets += rc.f.octets
		res.dir[rc.d].msgs += rc.f.msgs
	}
	return res, nil
}

// rawClientConn runs the client's end of one baseline connection whose
// hello has gone: it sends and waits for the server's verdict, or it
// receives and verifies what the server sends.
func rawClientConn(ctx context.Context, c net.Conn, bp benchParams, serverSends bool, deadline time.Time, prog *progress) (flow, error) {
	timed := bp.Total == 0
	if !serverSends {
		pat := newPattern(dataSeed(bp.Seed, false), bp.Size)
		var stop func() bool
		if timed {
			stop = func() bool { return !time.Now().Before(deadline) }
		}
		n, m, err := rawSend(ctx, c, pat, bp.Size, bp.Total, stop, prog)
		if err == nil {
			err = closeWrite(c)
		}
		if err != nil {
			return flow{}, err
		}
		// The receiver answers once it has verified everything, so the
		// time covers delivery, not just handing octets to the kernel.
		var v [rawVerdictLen]byte
		stopDL := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
		defer stopDL()
		if _, err := io.ReadFull(c, v[:]); err != nil {
			return flow{}, fmt.Errorf("raw TCP: waiting for the receiver's verdict: %w", err)
		}
		be := binary.BigEndian
		ver, vm, bad := int64(be.Uint64(v[0:])), int64(be.Uint64(v[8:])), int64(be.Uint64(v[16:]))
		switch {
		case bad != 0:
			return flow{}, fmt.Errorf("raw TCP: the receiver found %d mismatched octets", bad)
		case ver != n || vm != m:
			return flow{}, fmt.Errorf("raw TCP: sent %d octets in %d messages, the receiver verified %d in %d", n, m, ver, vm)
		}
		return flow{n, m}, nil
	}
	if _, err := c.Write([]byte{rawGo}); err != nil {
		return flow{}, fmt.Errorf("raw TCP: %w", err)
	}
	if timed {
		// The client's FIN tells the server to stop after whole messages.
		t := time.AfterFunc(time.Until(deadline), func() { closeWrite(c) })
		defer t.Stop()
	}
	pat := newPattern(dataSeed(bp.Seed, true), bp.Size)
	v, m, bad, err := rawReceive(ctx, c, pat, bp.Size, bp.Total, prog)
	if err != nil {
		return flow{}, err
	}
	if bad != 0 {
		return flow{}, fmt.Errorf("raw TCP: %d octets from the server arrived different from what it sent", bad)
	}
	return flow{v, m}, nil
}
