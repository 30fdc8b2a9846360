package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/verbs"
)

// A bench server serves every connection on its own goroutine and groups
// them into client runs by the run id each carries (in the MPA Request's
// private data, or in the raw TCP baseline's hello). A connection that
// never says which run it belongs to (garbage, a port scan, a client
// that goes silent) is a stranger: it is logged with its address and the
// reason, dropped after --startup-timeout at the latest, and counts for
// nothing, so it can neither end the server nor break a real client's run
// that is interleaved with it.

// serverRun is one client run as the server sees it.
type serverRun struct {
	id     uint64
	client string // the address of its first connection
	// sessions and rawConns are how many iWARP sessions and raw TCP
	// baseline connections the run has, warm-ups included.
	sessions, rawConns int
	iw, rawN           int
	open               int // connections being served
	st                 serveStats
	err                error
	done               bool
	idle               *time.Timer
}

// serveStats adds up what a bench server verified over a run's sessions.
type serveStats struct {
	iwarp, iwarpBad, raw, rawBad int64
}

func (r *serverRun) complete() bool {
	return r.iw >= r.sessions && r.rawN >= r.rawConns
}

type benchServer struct {
	o *benchOpts
	// log takes the per-connection log (nil with -q or in loopback
	// mode); warn takes warnings, such as a dropped stranger.
	log, warn io.Writer
	logMu     sync.Mutex

	mu       sync.Mutex
	runs     map[uint64]*serverRun
	finished chan *serverRun
}

func (s *benchServer) logf(warning bool, format string, args ...any) {
	w := s.log
	if warning {
		w = s.warn
	}
	if w == nil {
		return
	}
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(w, "bench server: "+format+"\n", args...)
}

// serveBench serves bench clients on ln: one client run, or with
// --persistent run after run until ctx ends. It returns the first run's
// error (a failed session, mismatches) without --persistent, ctx's error
// when ctx ends first, or an accept error.
func serveBench(ctx context.Context, ln net.Listener, o *benchOpts, log, warn io.Writer) error {
	s := &benchServer{o: o, log: log, warn: warn, runs: map[uint64]*serverRun{}, finished: make(chan *serverRun, 16)}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait() // every connection closed and its goroutine gone
	defer cancel()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	if o.sctpLn != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.acceptSCTP(ctx, o.sctpLn, &wg)
		}()
	}
	acceptErr := make(chan error, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				acceptErr <- err
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.serveConn(ctx, c)
			}()
		}
	}()
	var served, failed int
	for {
		select {
		case r := <-s.finished:
			served++
			if r.err != nil {
				failed++
				s.logf(true, "client %s: the run failed: %v", r.client, r.err)
			} else {
				s.logf(false, "client %s: served %d iWARP sessions and %d raw TCP baseline connections (warm-up included): iWARP verified %d octets, %d mismatches; raw TCP verified %d octets, %d mismatches",
					r.client, r.iw, r.rawN, r.st.iwarp, r.st.iwarpBad, r.st.raw, r.st.rawBad)
			}
			if !o.persistent {
				return r.err
			}
		case err := <-acceptErr:
			if ctx.Err() != nil {
				if o.persistent || served > 0 {
					s.logf(false, "stopped after %d client runs (%d failed)", served, failed)
				}
				return ctx.Err()
			}
			return fmt.Errorf("accepting connections: %w", err)
		}
	}
}

// run finds or makes the run a connection belongs to and counts the
// connection as open on it. It returns nil for a run that is over (a
// late or replayed connection), which the caller drops.
func (s *benchServer) join(id uint64, peer string, sessions, rawConns int) *serverRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.runs[id]
	if r == nil {
		r = &serverRun{id: id, client: peer, sessions: sessions, rawConns: rawConns}
		s.runs[id] = r
	}
	if r.done {
		return nil
	}
	r.open++
	if r.idle != nil {
		r.idle.Stop()
	}
	return r
}

// leave records the end of one of the run's connections: what it
// verified, or its error (which ends the run). A run with no connection
// open for --startup-timeout has lost its client.
func (s *benchServer) leave(r *serverRun, raw bool, verified, bad int64, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.open--
	if r.done {
		return
	}
	switch {
	case err != nil:
		r.err = err
	case raw:
		r.rawN++
		r.st.raw += verified
		r.st.rawBad += bad
	default:
		r.iw++
		r.st.iwarp += verified
		r.st.iwarpBad += bad
	}
	if r.err == nil && r.complete() && r.st.iwarpBad+r.st.rawBad > 0 {
		r.err = fmt.Errorf("%d octets arrived different from what was sent", r.st.iwarpBad+r.st.rawBad)
	}
	if r.err != nil || r.complete() {
		s.finish(r)
		return
	}
	if r.open == 0 {
		wait := max(s.o.startupTimeout, time.Second)
		r.idle = time.AfterFunc(wait, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if !r.done && r.open == 0 {
				r.err = fmt.Errorf("the client went away after %d of %d iWARP sessions and %d of %d raw TCP baseline connections (nothing for %v)", r.iw, r.sessions, r.rawN, r.rawConns, wait)
				s.finish(r)
			}
		})
	}
}

// finish ends r (s.mu held).
func (s *benchServer) finish(r *serverRun) {
	r.done = true
	select {
	case s.finished <- r:
	default:
		// With --persistent the loop drains runs as they finish; a
		// burst beyond the buffer is logged here rather than block.
		s.logf(r.err != nil, "client %s: run ended: %v", r.client, r.err)
	}
}

// serveConn serves one connection: it reads the first 16 octets within
// --startup-timeout and hands the connection to the raw TCP receiver or to
// an iWARP session.
func (s *benchServer) serveConn(ctx context.Context, c net.Conn) {
	peer := c.RemoteAddr().String()
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	timeout := s.o.startupTimeout
	c.SetReadDeadline(time.Now().Add(timeout))
	pc := &peekConn{Conn: c, r: bufio.NewReaderSize(c, 64<<10)}
	key, err := pc.r.Peek(16)
	if err != nil {
		c.Close()
		if ctx.Err() != nil {
			return
		}
		n := pc.r.Buffered()
		switch {
		case n == 0 && errors.Is(err, io.EOF):
			// A port probe, or a client checking that the server is up.
			s.logf(false, "%s: closed without sending anything", peer)
		case errors.Is(err, os.ErrDeadlineExceeded):
			s.logf(true, "%s: dropped: sent %d octets and then nothing for %v (--startup-timeout); a bench client sends its hello at once", peer, n, timeout)
		default:
			s.logf(true, "%s: dropped after %d octets, before a bench hello: %v", peer, n, err)
		}
		return
	}
	if string(key) == rawKey {
		s.serveRaw(ctx, pc, peer)
		return
	}
	var sc net.Conn = pc
	if s.o.capture != nil {
		sc = &serverTap{peekConn: pc, slot: s.o.capture}
	}
	// The MPA startup has its own limit, --startup-timeout (mpaConfig).
	// The connection joins its run once the startup has succeeded.
	var r *serverRun
	framing := framingOf(key)
	establish := func(qp *verbs.QP) error {
		err := establishQP(ctx, qp, sc, mpa.Responder, framing)
		if err != nil {
			sc.Close()
		}
		return err
	}
	bp, verified, bad, established, err := serveIWARP(ctx, establish, s.o, func(bp benchParams) bool {
		r = s.join(bp.Run, peer, bp.Sessions, bp.RawConns)
		return r != nil
	})
	if !established {
		c.Close()
		if ctx.Err() == nil {
			var me *mpa.Error
			if errors.As(err, &me) && me.Code == mpa.ErrTCPClosed {
				s.logf(true, "%s: dropped: no complete MPA Request: %v", peer, err)
			} else {
				s.logf(true, "%s: dropped: not a bench client (neither an MPA Request nor a raw TCP baseline hello): %v", peer, err)
			}
		}
		return
	}
	if r == nil {
		s.logf(true, "%s: dropped: an iWARP session of a client run that is over", peer)
		return
	}
	if err != nil {
		err = fmt.Errorf("%s: iWARP %s session: %w", peer, bp.Op, err)
	} else {
		s.logf(false, "%s: iWARP %s session: verified %d octets, %d mismatches", peer, bp.Op, verified, bad)
	}
	s.leave(r, false, verified, bad, err)
}

// serveRaw serves a raw TCP baseline connection whose key is buffered.
func (s *benchServer) serveRaw(ctx context.Context, pc *peekConn, peer string) {
	defer pc.Close()
	pc.r.Discard(16)
	var hdr [rawHdrLen]byte
	if _, err := io.ReadFull(pc, hdr[:]); err != nil {
		if ctx.Err() == nil {
			s.logf(true, "%s: dropped: an incomplete raw TCP baseline hello: %v", peer, err)
		}
		return
	}
	h, err := parseRawHello(hdr[:])
	if err != nil {
		s.logf(true, "%s: dropped: %v", peer, err)
		return
	}
	pc.SetReadDeadline(time.Time{})
	r := s.join(h.run, peer, h.sessions, h.rawConns)
	if r == nil {
		s.logf(true, "%s: dropped: a raw TCP baseline of a client run that is over", peer)
		return
	}
	n, _, bad, err := rawServe(ctx, pc, h)
	var v int64
	switch {
	case err != nil:
		err = fmt.Errorf("%s: raw TCP baseline: %w", peer, err)
	case h.serverSends():
		s.logf(false, "%s: raw TCP baseline: sent %d octets", peer, n)
	default:
		v = n
		s.logf(false, "%s: raw TCP baseline: verified %d octets, %d mismatches", peer, v, bad)
	}
	s.leave(r, true, v, bad, err)
}

// serveIWARP serves one iWARP bench session that establish starts on a
// queue pair: MPA (or TUF, framing tuf) on a connection whose first octets
// were those of an MPA (or TUF) Request, or a DDP/SCTP session request.
// established reports whether the startup
// succeeded (before it, a failure is a stranger's, not a client run's);
// verified and mismatches are what the server verified (of Reads: what the
// client reported). joined, called once the startup succeeded, says
// whether to serve the session (false: drop it).
func serveIWARP(ctx context.Context, establish func(*verbs.QP) error, o *benchOpts, joined func(benchParams) bool) (bp benchParams, verified, mismatches int64, established bool, err error) {
	pd := verbs.NewDevice().AllocPD()
	cfg := verbs.QPConfig{MPA: o.mpaConfig(), WritePerFPDU: o.pcap != ""}
	var qp *verbs.QP
	var e *endpoint
	cfg.MPA.Accept = func(req *mpa.StartupFrame) ([]byte, bool) {
		if err := json.Unmarshal(req.PrivateData, &bp); err != nil || bp.Proto != benchProto {
			return []byte(`{"error":"not a bench client of this version: run the same rnic-loader on both ends"}`), true
		}
		if err := bp.check(); err != nil {
			return []byte(fmt.Sprintf(`{"error":%q}`, err.Error())), true
		}
		e = newEndpoint(bp, false)
		// Buffers go up before the Reply: the client may Send or Write
		// as soon as it has the Reply.
		r, err := e.register(pd)
		if err == nil {
			err = e.postRecvs(qp)
		}
		if err == nil && e.active {
			err = e.setPeer(ptrOr(bp.Region, benchRegion{}))
		}
		if err != nil {
			e.release()
			e = nil
			return []byte(fmt.Sprintf(`{"error":%q}`, err.Error())), true
		}
		out, _ := json.Marshal(r)
		return out, false
	}
	qp = verbs.CreateQP(pd, cfg)
	if err := establish(qp); err != nil {
		if e != nil {
			e.release()
		}
		return bp, 0, 0, false, err
	}
	established = true
	defer e.release()
	if !joined(bp) {
		qp.Close()
		return bp, 0, 0, true, nil
	}
	defer qp.Close()
	err = e.run(ctx)
	av, abad := e.activeVerified()
	return bp, e.got + av, e.gotBad + abad, true, err
}
