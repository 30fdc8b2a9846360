package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/verbs"
)

// A lat server serves every connection on its own goroutine and groups
// them into client runs by the run id each carries (in the MPA Request's
// private data, or the raw TCP hello). A connection that never says which
// run it is part of (garbage, a port scan, a silent client) is logged with
// its address and the reason, dropped after --startup-timeout at the
// latest, and counts for nothing.
//
// The server looks at a connection's first octets with MSG_PEEK rather
// than reading them: the queue pair then gets the *net.TCPConn itself, as
// the client's does, so that both ends send alike (writev of FPDUs, the
// EMSS from TCP_MAXSEG), and the QP can be configured from the Request's
// private data (InlineSend, NotifyWrites) before the MPA exchange.

// latRun is one client run as the server sees it.
type latRun struct {
	id                   uint64
	client               string
	sizes                int
	iw, raw              int // sessions and baselines ended
	open                 int // connections being served
	verified, mismatches int64
	err                  error
	done                 bool
	idle                 *time.Timer
}

type latServer struct {
	o *latOpts
	// log takes the per-connection log (nil with -q or in loopback
	// mode); warn takes warnings, such as a dropped stranger.
	log, warn io.Writer
	logMu     sync.Mutex

	mu       sync.Mutex
	runs     map[uint64]*latRun
	finished chan *latRun
}

func (s *latServer) logf(warning bool, format string, args ...any) {
	w := s.log
	if warning {
		w = s.warn
	}
	if w == nil {
		return
	}
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(w, "lat server: "+format+"\n", args...)
}

// serveLat serves lat clients on ln: one client run, or with --persistent
// run after run until ctx ends. It returns the first run's error without
// --persistent, ctx's error when ctx ends first, or an accept error.
func serveLat(ctx context.Context, ln net.Listener, o *latOpts, log, warn io.Writer) error {
	s := &latServer{o: o, log: log, warn: warn, runs: map[uint64]*latRun{}, finished: make(chan *latRun, 16)}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait() // every connection closed and its goroutine gone
	defer cancel()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
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
			if ctx.Err() != nil {
				// Stopping (Ctrl-C, or the loopback client's end): a
				// run cut short by it is no failure of the client.
				continue
			}
			served++
			if r.err != nil {
				failed++
				s.logf(true, "client %s: the run failed: %v", r.client, r.err)
			} else {
				s.logf(false, "client %s: served %d sizes (an iWARP session and a raw TCP baseline each): verified %d octets, %d mismatches",
					r.client, r.sizes, r.verified, r.mismatches)
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

// join finds or makes the run a connection belongs to and counts the
// connection as open on it; nil for a run that is over.
func (s *latServer) join(id uint64, peer string, sizes int) *latRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.runs[id]
	if r == nil {
		r = &latRun{id: id, client: peer, sizes: sizes}
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
func (s *latServer) leave(r *latRun, raw bool, verified, mismatches int64, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.open--
	if r.done {
		return
	}
	r.verified += verified
	r.mismatches += mismatches
	switch {
	case err != nil:
		r.err = err
	case raw:
		r.raw++
	default:
		r.iw++
	}
	if r.err == nil && r.mismatches > 0 {
		r.err = fmt.Errorf("%d octets of the pings arrived different from what was sent", r.mismatches)
	}
	complete := r.iw >= r.sizes && r.raw >= r.sizes
	if r.err != nil || complete {
		s.finish(r)
		return
	}
	if r.open == 0 {
		wait := max(s.o.startupTimeout, time.Second)
		r.idle = time.AfterFunc(wait, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if !r.done && r.open == 0 {
				r.err = fmt.Errorf("the client went away after %d of %d iWARP sessions and %d raw TCP baselines (nothing for %v)", r.iw, r.sizes, r.raw, wait)
				s.finish(r)
			}
		})
	}
}

// finish ends r (s.mu held).
func (s *latServer) finish(r *latRun) {
	r.done = true
	// The run's id stays in runs so that a late connection of it is
	// refused; the entry is small.
	select {
	case s.finished <- r:
	default:
		s.logf(r.err != nil, "client %s: run ended: %v", r.client, r.err)
	}
}

// serveConn tells what a connection is from its first octets, within
// --startup-timeout, and serves it.
func (s *latServer) serveConn(ctx context.Context, c net.Conn) {
	peer := c.RemoteAddr().String()
	defer func() {
		// Octets only peeked at are still unread: closing over them
		// would reset the connection (RFC 2525 2.17) instead of ending
		// it with a FIN.
		latDiscard(c)
		c.Close()
	}()
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	tc, ok := c.(*net.TCPConn)
	if !ok {
		s.logf(true, "%s: dropped: not a TCP connection (%T)", peer, c)
		return
	}
	tc.SetNoDelay(true)
	timeout := s.o.startupTimeout
	c.SetReadDeadline(time.Now().Add(timeout))
	head, err := latPeek(tc)
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		switch {
		case len(head) == 0 && errors.Is(err, io.EOF):
			s.logf(false, "%s: closed without sending anything", peer)
		case errors.Is(err, io.EOF):
			s.logf(true, "%s: dropped: sent %d octets and closed, before a lat hello", peer, len(head))
		case errors.Is(err, os.ErrDeadlineExceeded):
			s.logf(true, "%s: dropped: sent %d octets and then nothing for %v (--startup-timeout); a lat client sends its hello at once", peer, len(head), timeout)
		default:
			s.logf(true, "%s: dropped after %d octets, before a lat hello: %v", peer, len(head), err)
		}
		return
	}
	if string(head[:len(latRawKey)]) == latRawKey {
		s.serveRawConn(ctx, tc, peer)
		return
	}
	// An MPA Request (latPeek checked the key and that it is whole).
	req, _, _ := mpa.ParseStartupFrame(head, 0)
	var p latParams
	perr := json.Unmarshal(req.PrivateData, &p)
	if perr == nil {
		perr = p.check()
	}
	var r *latRun
	verified, mismatches, established, err := serveLatIWARP(ctx, tc, s.o, p, req.PrivateData, perr, func() bool {
		r = s.join(p.Run, peer, p.Sizes)
		return r != nil
	})
	if !established {
		if ctx.Err() == nil {
			if perr != nil {
				s.logf(true, "%s: dropped: rejected its MPA Request: %v", peer, perr)
			} else {
				s.logf(true, "%s: dropped: the MPA startup failed: %v", peer, err)
			}
		}
		return
	}
	if r == nil {
		s.logf(true, "%s: dropped: an iWARP session of a client run that is over", peer)
		return
	}
	if err != nil {
		err = fmt.Errorf("%s: iWARP %s session of %s: %w", peer, p.Op, sayOctets(int64(p.Size)), err)
	} else {
		s.logf(false, "%s: iWARP %s session of %s: verified %d octets, %d mismatches", peer, p.Op, sayOctets(int64(p.Size)), verified, mismatches)
	}
	s.leave(r, false, verified, mismatches, err)
}

// latPeek waits for the first octets of a connection without consuming
// them (MSG_PEEK) until they are a whole MPA Request or the start of a
// raw TCP baseline hello, and returns them. Anything else is an error, as
// is a peer that closes or falls silent first (the read deadline).
func latPeek(c *net.TCPConn) ([]byte, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, mpa.StartupHeaderLen+1024)
	var got []byte
	var perr error
	// judge says whether the octets so far settle what the connection is.
	judge := func(b []byte) bool {
		if len(b) < len(latRawKey) {
			return false
		}
		switch string(b[:len(latRawKey)]) {
		case latRawKey:
			return true
		case mpa.KeyRequest:
			_, _, err := mpa.ParseStartupFrame(b, 0)
			if errors.Is(err, mpa.ErrIncomplete) && len(b) < len(buf) {
				return false
			}
			perr = err
			return true
		}
		perr = errors.New("not a lat client (neither an MPA Request nor a raw TCP baseline hello)")
		return true
	}
	rerr := rc.Read(func(fd uintptr) bool {
		for {
			n, _, err := unix.Recvfrom(int(fd), buf, unix.MSG_PEEK|unix.MSG_DONTWAIT)
			switch {
			case err == unix.EINTR:
				continue
			case err == unix.EAGAIN:
				return false // wait for octets
			case err != nil:
				perr = err
				return true
			case n == 0:
				perr = io.EOF
				return true
			}
			got = buf[:n]
			if judge(got) {
				return true
			}
			// Too few octets: a peer that has closed its half sends no
			// more, and no more readiness would wake us.
			if info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO); err == nil && info.State == unix.BPF_TCP_CLOSE_WAIT {
				perr = io.EOF
				return true
			}
			return false
		}
	})
	if rerr != nil {
		return got, rerr
	}
	return got, perr
}

// latDiscard reads and drops what the peer has sent and nobody read,
// without waiting for more.
func latDiscard(c net.Conn) {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return
	}
	buf := make([]byte, 4096)
	rc.Control(func(fd uintptr) {
		for {
			n, _, err := unix.Recvfrom(int(fd), buf, unix.MSG_DONTWAIT)
			if n <= 0 && err != unix.EINTR {
				return
			}
		}
	})
}

// serveLatIWARP serves one iWARP lat session on c, whose first octets are
// the MPA Request with private data pdata (parsed into p, or perr).
// established reports whether the MPA startup succeeded; joined, called
// then, says whether to serve the session.
func serveLatIWARP(ctx context.Context, c *net.TCPConn, o *latOpts, p latParams, pdata []byte, perr error, joined func() bool) (verified, mismatches int64, established bool, err error) {
	pd := verbs.NewDevice().AllocPD()
	cfg := verbs.QPConfig{MPA: o.mpaConfig(), InlineSend: p.Inline, ManualProgress: !p.Thread, NotifyWrites: p.Op == "write"}
	var (
		region     *verbs.MR
		reply      []byte
		want, send []byte
		bufs       [][]byte
	)
	rsize := latCtlLen
	if perr == nil {
		var buf []byte
		switch p.Op {
		case "write":
			// Two halves, pings alternating between them: the server
			// checks ping i after its pong has left, and the client's
			// ping i+1, which may come at once, lands in the other half.
			buf = make([]byte, 2*p.Size)
			want, send = latPing(p), latPong(p)
		case "send":
			want, send = latPing(p), latPong(p)
			rsize = max(p.Size, latCtlLen)
		case "read":
			buf = latReadSrc(p)
		}
		var lr latRegion
		if buf != nil {
			region, err = pd.RegisterMR(buf, verbs.RemoteWrite|verbs.RemoteRead)
			if err != nil {
				perr = err
			} else {
				lr = latRegion{STag: region.STag, Addr: region.Addr, Len: uint64(len(buf))}
			}
		}
		reply, _ = json.Marshal(lr)
	}
	cfg.MPA.Accept = func(req *mpa.StartupFrame) ([]byte, bool) {
		if perr != nil {
			out, _ := json.Marshal(map[string]string{"error": perr.Error()})
			return out, true
		}
		if !bytes.Equal(req.PrivateData, pdata) {
			return []byte(`{"error":"the MPA Request changed between peek and read"}`), true
		}
		return reply, false
	}
	qp := verbs.CreateQP(pd, cfg)
	// Receive buffers go up before the Reply: the client may Send as
	// soon as it has it.
	bufs = make([][]byte, latRecvBufs)
	for i := range bufs {
		bufs[i] = make([]byte, rsize)
		qp.PostRecv(uint64(i), bufs[i])
	}
	if region != nil {
		defer region.Deregister()
	}
	if err := qp.Establish(ctx, c, mpa.Responder); err != nil {
		qp.Close()
		return 0, 0, false, err
	}
	defer qp.Close()
	if !joined() {
		return 0, 0, true, nil
	}
	if perr != nil {
		return 0, 0, true, perr // not reached: a rejected startup fails
	}
	var wr verbs.SendWR
	switch p.Op {
	case "write":
		wr = verbs.SendWR{Op: verbs.OpWrite, Data: send, RemoteSTag: p.STag, RemoteTO: p.Addr, Unsignaled: true}
	case "send":
		wr = verbs.SendWR{Op: verbs.OpSend, Data: send, Unsignaled: true}
	}
	// report tells the client that ping i arrived wrong, and ends the
	// session; Close (deferred) sends it before the FIN.
	report := func(i uint64, n int) (int64, int64, bool, error) {
		mismatches += int64(n)
		qp.PostSend(ctx, verbs.SendWR{Op: verbs.OpSendSE, Data: latCtl(latCtlMismatch, i, uint64(n)), Unsignaled: true})
		return verified, mismatches, true, fmt.Errorf("ping %d arrived with %d of its %d octets different from what was sent", i, n, p.Size)
	}
	var next uint64
	for {
		comp, err := latWait(ctx, qp, qp.RecvCQ())
		if err != nil {
			return verified, mismatches, true, err
		}
		var got []byte
		switch {
		case comp.Op == verbs.OpRemoteWrite && p.Op == "write":
			half := int(next % 2)
			if comp.STag != region.STag || comp.End != region.Addr+uint64((half+1)*p.Size) {
				return verified, mismatches, true, fmt.Errorf("ping %d: the client's Write ended at %#x of STag %#x, not at the end of half %d of the buffer", next, comp.End, comp.STag, half)
			}
			got = region.Buf[half*p.Size : (half+1)*p.Size]
		case comp.Op == verbs.OpRecv && !comp.Solicited && p.Op == "send":
			got = bufs[comp.ID][:comp.Len]
		case comp.Op == verbs.OpRecv && comp.Solicited:
			kind, _, _ := latGetCtl(bufs[comp.ID][:comp.Len])
			qp.PostRecv(comp.ID, bufs[comp.ID])
			if kind != latCtlFinish {
				return verified, mismatches, true, fmt.Errorf("unexpected control message %d from the client", kind)
			}
			return verified, mismatches, true, qp.PostSend(ctx, verbs.SendWR{Op: verbs.OpSendSE, Data: latCtl(latCtlVerdict, uint64(verified), uint64(mismatches)), Unsignaled: true})
		default:
			return verified, mismatches, true, fmt.Errorf("unexpected %v completion (%d octets) for a %s session", comp.Op, comp.Len, p.Op)
		}
		// The iteration number first, then the pong, then the rest of
		// the ping while the pong is on its way.
		if len(got) != p.Size || !latIterOK(got, next) {
			return report(next, max(1, latDiff(got, want, next, true)))
		}
		latPutIter(send, next)
		if err := qp.PostSend(ctx, wr); err != nil {
			return verified, mismatches, true, err
		}
		verified += int64(len(got))
		if n := latDiff(got, want, next, true); n > 0 {
			return report(next, n)
		}
		if p.Op == "send" {
			qp.PostRecv(comp.ID, bufs[comp.ID])
		}
		next++
	}
}

// serveRawConn serves a raw TCP baseline whose key has been peeked.
func (s *latServer) serveRawConn(ctx context.Context, c *net.TCPConn, peer string) {
	hello := make([]byte, latRawHelloLen)
	if _, err := io.ReadFull(c, hello); err != nil {
		if ctx.Err() == nil {
			s.logf(true, "%s: dropped: an incomplete raw TCP baseline hello: %v", peer, err)
		}
		return
	}
	p, err := parseLatRawHello(hello)
	if err != nil {
		s.logf(true, "%s: dropped: %v", peer, err)
		return
	}
	c.SetReadDeadline(time.Time{})
	r := s.join(p.Run, peer, p.Sizes)
	if r == nil {
		s.logf(true, "%s: dropped: a raw TCP baseline of a client run that is over", peer)
		return
	}
	v, m, err := serveLatRaw(c, p)
	if err != nil {
		err = fmt.Errorf("%s: raw TCP baseline of %s: %w", peer, sayOctets(int64(p.Size)), err)
	} else {
		s.logf(false, "%s: raw TCP baseline of %s: verified %d octets, %d mismatches", peer, sayOctets(int64(p.Size)), v, m)
	}
	s.leave(r, true, v, m, err)
}

// serveLatRaw answers a baseline's pings until the client half-closes,
// then sends the verdict. A ping that arrives wrong ends it at once (the
// connection closes): the client cannot be told otherwise mid-stream.
func serveLatRaw(c *net.TCPConn, p latParams) (verified, mismatches int64, err error) {
	var in, want, send []byte
	if p.Op == "read" {
		in, send = make([]byte, 8), latReadSrc(p)
	} else {
		in, want, send = make([]byte, p.Size), latPing(p), latPong(p)
	}
	for i := uint64(0); ; i++ {
		if _, err := io.ReadFull(c, in); err != nil {
			if errors.Is(err, io.EOF) {
				break // the client's half-close: the end
			}
			return verified, mismatches, fmt.Errorf("ping %d: %w", i, err)
		}
		if p.Op == "read" {
			if binary.LittleEndian.Uint64(in) != i {
				return verified, mismatches + 8, fmt.Errorf("request %d asked for %d", i, binary.LittleEndian.Uint64(in))
			}
		} else if !latIterOK(in, i) {
			n := max(1, latDiff(in, want, i, true))
			return verified, mismatches + int64(n), fmt.Errorf("ping %d arrived with %d of its %d octets different from what was sent", i, n, p.Size)
		}
		latPutIter(send, i)
		if _, err := c.Write(send); err != nil {
			return verified, mismatches, fmt.Errorf("pong %d: %w", i, err)
		}
		verified += int64(len(in))
		if want != nil {
			if n := latDiff(in, want, i, true); n > 0 {
				return verified, mismatches + int64(n), fmt.Errorf("ping %d arrived with %d of its %d octets different from what was sent", i, n, p.Size)
			}
		}
	}
	var v [latVerdictLen]byte
	binary.BigEndian.PutUint64(v[:], uint64(verified))
	binary.BigEndian.PutUint64(v[8:], uint64(mismatches))
	_, err = c.Write(v[:])
	return verified, mismatches, err
}
