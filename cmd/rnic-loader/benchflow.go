package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/openrnic/rnic/iwarp/verbs"
)

// One iWARP bench session, as either end runs it.
//
// Each end of a session has up to two roles. The active role posts the
// operations: RDMA Writes into the peer's buffer, Sends, or RDMA Reads from
// the peer's buffer. The passive role is their target: it verifies the
// Writes and Sends that arrive, or serves as the Reads' source. Without
// --bidir the client is active and the server passive; with --bidir both
// ends are both, and data flows both ways on the one connection.
//
// The ends talk on QN 0 with control messages sent as Send with Solicited
// Event (RFC 5040 4.3, opcode 0x5), while the data of --op send goes as
// plain Sends (opcode 0x3): the receiver tells the two apart by the
// completion's Solicited flag, whatever their sizes.

// benchProto is the version of the bench protocol (the private data of the
// MPA Request, the control messages, the raw TCP hello): a server refuses
// a client of another.
const benchProto = 2

// Control messages: {kind, a, b, c} as big-endian 64-bit numbers, and for
// ctlStats the server's counters after them.
const (
	ctlGo         = 1 // client, --bidir: the server's operations may start (its clock starts here)
	ctlWindowDone = 2 // writer: half a of the target holds messages b .. b+c-1
	ctlCredit     = 3 // target of Writes: half a verified; of Sends: b more messages allowed
	ctlFinish     = 4 // active side, last: it moved a octets in b messages (Reads: and found c mismatches)
	ctlVerdict    = 5 // the passive side's answer to Finish: a octets and b messages verified, c mismatches
	ctlStats      = 6 // server, last of all: its queue pair's counters follow
	ctlLen        = 32
	ctlMax        = ctlLen + statsWireLen
	// ctlRecvs is how many receive buffers each end keeps posted for
	// control messages: at most two credits, a Go, a Finish, a Verdict and
	// the Stats are ever in flight towards one end.
	ctlRecvs = 8
)

func putCtl(kind, a, b, c uint64) []byte {
	m := make([]byte, ctlLen)
	binary.BigEndian.PutUint64(m, kind)
	binary.BigEndian.PutUint64(m[8:], a)
	binary.BigEndian.PutUint64(m[16:], b)
	binary.BigEndian.PutUint64(m[24:], c)
	return m
}

func getCtl(m []byte) (kind, a, b, c uint64) {
	if len(m) < ctlLen {
		return 0, 0, 0, 0
	}
	return binary.BigEndian.Uint64(m), binary.BigEndian.Uint64(m[8:]), binary.BigEndian.Uint64(m[16:]), binary.BigEndian.Uint64(m[24:])
}

// serverSeedXor turns the run's seed into the seed of the data the server
// originates (its Writes and Sends with --bidir, the source of the
// client's Reads), so that data reflected back to its sender by a bug
// does not verify.
const serverSeedXor = 0x5bd1e9955bd1e995

func dataSeed(seed uint64, fromServer bool) uint64 {
	if fromServer {
		return seed ^ serverSeedXor
	}
	return seed
}

// endpoint is one end of one iWARP bench session.
type endpoint struct {
	qp      *verbs.QP
	bp      benchParams
	client  bool
	active  bool // posts the operations
	passive bool // is their target
	// outPat is the data this end originates (its Writes and Sends, the
	// contents of its buffer for the peer's Reads); inPat the peer's, which
	// this end verifies.
	outPat, inPat *pattern
	region        *verbs.MR   // passive: the target of Writes or the source of Reads
	sink          *verbs.MR   // active Reads land here
	peer          benchRegion // active: the peer's buffer
	bufs          [][]byte    // receive buffers, by work request ID
	prog          *progress

	credit chan uint64   // receive loop to sender: a freed half, or Send credit
	goCh   chan struct{} // server with --bidir: closed when the client's Go arrives
	// onWire passes on the completions of the server's signaled Verdict
	// and Finish that its Read loop polled from the send queue's CQ.
	onWire chan uint64

	// Results, read once run has returned.
	sent, sentMsgs     int64 // active: octets and messages posted (Reads: read and verified)
	readBad            int64 // active Reads: mismatched octets
	got, gotMsgs       int64 // passive: octets and messages verified (Reads served: what the reader reported)
	gotBad             int64
	verdict            [3]int64 // active: the peer's Verdict (octets, messages, mismatches)
	haveVerdict        bool
	peerStats          *verbs.Stats // client: the server's counters, as of its Stats message
	activeAt, bothAt   time.Time    // when the active role's Verdict came; when both roles were done
	passiveAt, startAt time.Time
}

// newEndpoint makes an end of a session with parameters bp.
func newEndpoint(bp benchParams, client bool) *endpoint {
	e := &endpoint{bp: bp, client: client, active: client || bp.Bidir, passive: !client || bp.Bidir}
	e.outPat = newPattern(dataSeed(bp.Seed, !client), bp.Size)
	e.inPat = newPattern(dataSeed(bp.Seed, client), bp.Size)
	e.credit = make(chan uint64, 16)
	e.goCh = make(chan struct{})
	e.onWire = make(chan uint64, 2)
	return e
}

// nmsg is how many messages a bounded session moves per direction (0 when
// the session runs for a duration).
func (e *endpoint) nmsg() uint64 {
	return uint64((e.bp.Total + int64(e.bp.Size) - 1) / int64(e.bp.Size))
}

// msgLen is the length of message i: --size, but the last one of a
// bounded session takes what is left of --bytes.
func (e *endpoint) msgLen(i uint64) int {
	if e.bp.Total > 0 {
		if rem := e.bp.Total - int64(i)*int64(e.bp.Size); rem < int64(e.bp.Size) {
			return int(rem)
		}
	}
	return e.bp.Size
}

// register registers this end's buffers on pd and returns the one the
// peer uses (zero if none): the target of its Writes or the source of its
// Reads.
func (e *endpoint) register(pd *verbs.PD) (benchRegion, error) {
	bp := e.bp
	var own []byte
	var access verbs.Access
	if e.passive {
		switch bp.Op {
		case "write":
			own, access = make([]byte, 2*bp.Window*bp.Size), verbs.RemoteWrite
		case "read":
			// Slot s of the source holds message s; Read i reads slot i mod W.
			own, access = make([]byte, bp.Window*bp.Size), verbs.RemoteRead
			for s := 0; s < bp.Window; s++ {
				copy(own[s*bp.Size:], e.outPat.msg(uint64(s)))
			}
		}
	}
	var r benchRegion
	if own != nil {
		mr, err := pd.RegisterMR(own, access)
		if err != nil {
			return r, err
		}
		e.region = mr
		r = benchRegion{STag: mr.STag, Addr: mr.Addr, Len: uint64(len(own))}
	}
	if e.active && bp.Op == "read" {
		// Two windows of Reads in flight land in slot i mod 2W.
		mr, err := pd.RegisterMR(make([]byte, 2*bp.Window*bp.Size), verbs.RemoteWrite)
		if err != nil {
			e.release()
			return r, err
		}
		e.sink = mr
	}
	return r, nil
}

// postRecvs posts this end's receive buffers on qp, before the MPA
// exchange: the peer may send as soon as it is over.
func (e *endpoint) postRecvs(qp *verbs.QP) error {
	e.qp = qp
	// Every receive buffer takes whatever Send comes next, data or
	// control, so all are as large as the larger.
	n, size := ctlRecvs, ctlMax
	if e.passive && e.bp.Op == "send" {
		n, size = 2*e.bp.Window+ctlRecvs, max(e.bp.Size, ctlMax)
	}
	e.bufs = make([][]byte, n)
	for i := range e.bufs {
		e.bufs[i] = make([]byte, size)
		if err := qp.PostRecv(uint64(i), e.bufs[i]); err != nil {
			return err
		}
	}
	return nil
}

// release deregisters this end's regions.
func (e *endpoint) release() {
	if e.region != nil {
		e.region.Deregister()
		e.region = nil
	}
	if e.sink != nil {
		e.sink.Deregister()
		e.sink = nil
	}
}

// setPeer checks the peer's buffer for the active role.
func (e *endpoint) setPeer(r benchRegion) error {
	e.peer = r
	if !e.active {
		return nil
	}
	need := uint64(0)
	switch e.bp.Op {
	case "write":
		need = uint64(2 * e.bp.Window * e.bp.Size)
	case "read":
		need = uint64(e.bp.Window * e.bp.Size)
	}
	if r.Len < need {
		return fmt.Errorf("bench: the peer's buffer of %d octets is smaller than the %d a window of %s needs", r.Len, need, e.bp.Op)
	}
	return nil
}

// ctl sends a control message.
func (e *endpoint) ctl(ctx context.Context, m []byte) error {
	return e.qp.PostSend(ctx, verbs.SendWR{Op: verbs.OpSendSE, Data: m, Unsignaled: true})
}

// The work request IDs of the server's Verdict and Finish, which it
// posts signaled: their completions say that they, and everything the
// server posted before them, are on the wire, so that the counters it
// reports next count them (the queue pair counts what it has written).
const (
	idVerdict = 1<<62 + iota
	idFinish
)

// final sends the Verdict or the Finish: on the server signaled, with id.
func (e *endpoint) final(ctx context.Context, m []byte, id uint64) error {
	if e.client {
		return e.ctl(ctx, m)
	}
	return e.qp.PostSend(ctx, verbs.SendWR{ID: id, Op: verbs.OpSendSE, Data: m})
}

// waitOnWire waits for the completions of the server's Verdict (passive)
// and Finish (active). The Read loop, which polls the same CQ, passes on
// those it polled; it polls no more once the client's Verdict has come.
func (e *endpoint) waitOnWire(ctx context.Context) error {
	want := map[uint64]bool{}
	if e.passive {
		want[idVerdict] = true
	}
	if e.active {
		want[idFinish] = true
	}
	for len(want) > 0 {
		select {
		case id := <-e.onWire:
			delete(want, id)
		case c := <-e.qp.SendCQ().C():
			if c.Err != nil {
				return c.Err
			}
			delete(want, c.ID)
		case <-e.qp.Dead():
			return e.qp.Err()
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	return nil
}

// run runs the session on an established queue pair: the active role's
// operations on a goroutine of their own, the receive loop on this one.
// The client's clock starts when run is called; the server's active role
// starts at the client's Go.
func (e *endpoint) run(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	e.startAt = time.Now()
	var wg sync.WaitGroup
	if e.active {
		if e.client && e.bp.Bidir {
			if err := e.ctl(ctx, putCtl(ctlGo, 0, 0, 0)); err != nil {
				return err
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := e.activeLoop(ctx); err != nil {
				cancel(err)
			}
		}()
	}
	err := e.recvLoop(ctx)
	if err != nil {
		cancel(err)
	}
	wg.Wait()
	if c := context.Cause(ctx); c != nil && !errors.Is(c, context.Canceled) && (err == nil || errors.Is(err, context.Canceled)) {
		err = c // the sender's error, which ended the receive loop
	}
	if err == nil && e.active && (e.verdict[0] != e.sent || e.verdict[1] != e.sentMsgs) && e.bp.Op != "read" {
		err = fmt.Errorf("bench: this end sent %d octets in %d messages, the peer verified %d octets in %d (a bug in the bench or the stack; rerun with --pcap to capture it)", e.sent, e.sentMsgs, e.verdict[0], e.verdict[1])
	}
	return err
}

// more says whether the active role posts message i: a bounded session
// moves its messages, a timed one posts until its deadline (and at least
// one message).
func (e *endpoint) more(i uint64, deadline time.Time) bool {
	if e.bp.Total > 0 {
		return i < e.nmsg()
	}
	return i == 0 || time.Now().Before(deadline)
}

// waitCredit waits for the receive loop to pass on a credit.
func (e *endpoint) waitCredit(ctx context.Context) (uint64, error) {
	select {
	case c := <-e.credit:
		return c, nil
	case <-e.qp.Dead():
		return 0, e.qp.Err()
	case <-ctx.Done():
		return 0, context.Cause(ctx)
	}
}

// activeLoop posts the operations and, last, the Finish.
func (e *endpoint) activeLoop(ctx context.Context) error {
	if !e.client {
		select {
		case <-e.goCh:
		case <-e.qp.Dead():
			return e.qp.Err()
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	deadline := time.Now().Add(time.Duration(e.bp.Dur))
	bp := e.bp
	post := func(wr verbs.SendWR) error { return e.qp.PostSend(ctx, wr) }
	switch bp.Op {
	case "write":
		// Two halves of the peer's buffer: Writes fill one while the
		// peer verifies the other, which it hands back with a credit.
		busy := [2]bool{}
		half := 0
		for i := uint64(0); e.more(i, deadline); {
			for busy[half] {
				h, err := e.waitCredit(ctx)
				if err != nil {
					return err
				}
				busy[h] = false
			}
			first, k := i, 0
			for ; k < bp.Window && e.more(i, deadline); k++ {
				n := e.msgLen(i)
				to := e.peer.Addr + uint64((half*bp.Window+k)*bp.Size)
				if err := post(verbs.SendWR{Op: verbs.OpWrite, Data: e.outPat.msg(i)[:n], RemoteSTag: e.peer.STag, RemoteTO: to, Unsignaled: true}); err != nil {
					return err
				}
				e.sent += int64(n)
				e.sentMsgs++
				e.prog.add(int64(n))
				i++
			}
			if k == 0 {
				break
			}
			if err := e.ctl(ctx, putCtl(ctlWindowDone, uint64(half), first, uint64(k))); err != nil {
				return err
			}
			busy[half] = true
			half ^= 1
		}
	case "send":
		credit := uint64(2 * bp.Window)
		for i := uint64(0); e.more(i, deadline); i++ {
			for credit == 0 {
				c, err := e.waitCredit(ctx)
				if err != nil {
					return err
				}
				credit += c
			}
			n := e.msgLen(i)
			if err := post(verbs.SendWR{Op: verbs.OpSend, Data: e.outPat.msg(i)[:n], Unsignaled: true}); err != nil {
				return err
			}
			credit--
			e.sent += int64(n)
			e.sentMsgs++
			e.prog.add(int64(n))
		}
	case "read":
		// Reads land in slot i mod 2W of the sink and are verified as
		// they complete, in order.
		slots := uint64(2 * bp.Window)
		var posted, done uint64
		for {
			for posted-done < slots && e.more(posted, deadline) {
				n := e.msgLen(posted)
				src := posted % uint64(bp.Window)
				if err := post(verbs.SendWR{ID: posted, Op: verbs.OpRead, Sink: e.sink, SinkOffset: (posted % slots) * uint64(bp.Size),
					Len: uint32(n), RemoteSTag: e.peer.STag, RemoteTO: e.peer.Addr + src*uint64(bp.Size)}); err != nil {
					return err
				}
				posted++
			}
			if done == posted {
				break
			}
			c, err := pollQP(ctx, e.qp, e.qp.SendCQ())
			if err != nil {
				return err
			}
			if c.Op != verbs.OpRead {
				if c.ID == idVerdict {
					e.onWire <- c.ID
				}
				continue
			}
			if c.ID != done {
				return fmt.Errorf("bench: Read %d completed before Read %d (RDMAP completes Reads in order, RFC 5040 5.2)", c.ID, done)
			}
			off := (c.ID % slots) * uint64(bp.Size)
			got := e.sink.Buf[off : off+uint64(c.Len)]
			e.readBad += int64(e.inPat.check(c.ID%uint64(bp.Window), got))
			e.sent += int64(c.Len)
			e.sentMsgs++
			e.prog.add(int64(c.Len))
			done++
		}
	}
	return e.final(ctx, putCtl(ctlFinish, uint64(e.sent), uint64(e.sentMsgs), uint64(e.readBad)), idFinish)
}

// recvLoop handles what arrives on QN 0 until this end's part of the
// session is over: the passive role has answered the peer's Finish, the
// active role has the peer's Verdict, and the client has the server's
// Stats. The server sends its Stats then.
func (e *endpoint) recvLoop(ctx context.Context) error {
	bp := e.bp
	passiveDone, activeDone, statsDone := !e.passive, !e.active, !e.client
	var sinceCredit int
	for !(passiveDone && activeDone && statsDone) {
		c, err := pollQP(ctx, e.qp, e.qp.RecvCQ())
		if err != nil {
			return err
		}
		if c.Op != verbs.OpRecv {
			continue
		}
		b := e.bufs[c.ID]
		if !c.Solicited {
			// A data Send.
			if !e.passive || bp.Op != "send" || passiveDone {
				return fmt.Errorf("bench: an unexpected Send of %d octets from the peer (a bench of another version?)", c.Len)
			}
			i := uint64(e.gotMsgs)
			if bp.Total > 0 && i >= e.nmsg() {
				return fmt.Errorf("bench: the peer sent more than the %d messages of the session", e.nmsg())
			}
			if want := e.msgLen(i); c.Len != want {
				return fmt.Errorf("bench: Send %d carried %d octets, want %d", i, c.Len, want)
			}
			e.gotBad += int64(e.inPat.check(i, b[:c.Len]))
			e.got += int64(c.Len)
			e.gotMsgs++
			if e.client {
				e.prog.add(int64(c.Len))
			}
			if err := e.repost(c.ID); err != nil {
				return err
			}
			if sinceCredit++; sinceCredit == bp.Window {
				sinceCredit = 0
				if err := e.ctl(ctx, putCtl(ctlCredit, 0, uint64(bp.Window), 0)); err != nil {
					return err
				}
			}
			continue
		}
		kind, a, bb, cc := getCtl(b[:c.Len])
		var stats *verbs.Stats
		if kind == ctlStats {
			s, err := decodeStats(b[ctlLen:c.Len])
			if err != nil {
				return err
			}
			stats = &s
		}
		switch {
		case kind == ctlGo && !e.client && e.active:
			close(e.goCh)
		case kind == ctlWindowDone && e.passive && bp.Op == "write" && !passiveDone:
			if err := e.verifyWindow(a, bb, cc); err != nil {
				return err
			}
			if err := e.ctl(ctx, putCtl(ctlCredit, a, 0, 0)); err != nil {
				return err
			}
		case kind == ctlCredit && e.active && !activeDone:
			v := a
			if bp.Op == "send" {
				v = bb
			}
			select {
			case e.credit <- v:
			default:
				return errors.New("bench: the peer granted more credit than was used")
			}
		case kind == ctlFinish && e.passive && !passiveDone:
			if bp.Op == "read" {
				// The reader verified what it read; its word is the verdict.
				e.got, e.gotMsgs, e.gotBad = int64(a), int64(bb), int64(cc)
			} else if int64(a) != e.got || int64(bb) != e.gotMsgs {
				return fmt.Errorf("bench: the peer sent %d octets in %d messages, this end verified %d octets in %d (a bug in the bench or the stack; rerun with --pcap to capture it)", a, bb, e.got, e.gotMsgs)
			}
			if err := e.final(ctx, putCtl(ctlVerdict, uint64(e.got), uint64(e.gotMsgs), uint64(e.gotBad)), idVerdict); err != nil {
				return err
			}
			passiveDone, e.passiveAt = true, time.Now()
		case kind == ctlVerdict && e.active && !activeDone:
			e.verdict, e.haveVerdict = [3]int64{int64(a), int64(bb), int64(cc)}, true
			activeDone, e.activeAt = true, time.Now()
		case kind == ctlStats && e.client && !statsDone:
			e.peerStats = stats
			statsDone = true
		default:
			return fmt.Errorf("bench: unexpected control message %d from the peer (a bench of another version?)", kind)
		}
		if passiveDone && activeDone && e.bothAt.IsZero() {
			e.bothAt = time.Now()
		}
		if passiveDone && activeDone && statsDone {
			// That was the last message: the peer may have closed
			// already, and a repost would fail.
			break
		}
		if err := e.repost(c.ID); err != nil {
			return err
		}
	}
	if !e.client {
		// The server's last word: its counters, for the client's record,
		// once all it sent before is on the wire.
		if err := e.waitOnWire(ctx); err != nil {
			return err
		}
		st := e.qp.Stats()
		return e.ctl(ctx, append(putCtl(ctlStats, 0, 0, 0), encodeStats(st)...))
	}
	return nil
}

// repost posts receive buffer id again. A queue pair that is dead (the
// peer may have sent its last messages and closed while this end was
// busy) takes no buffer, but the completions already queued still count:
// the next poll returns them, or the queue pair's error.
func (e *endpoint) repost(id uint64) error {
	if err := e.qp.PostRecv(id, e.bufs[id]); err != nil && e.qp.Err() == nil {
		return err
	}
	return nil
}

// verifyWindow verifies the Writes that half h of this end's buffer holds:
// messages first .. first+count-1, in order after those verified so far.
func (e *endpoint) verifyWindow(h, first, count uint64) error {
	bp := e.bp
	if h > 1 || count == 0 || count > uint64(bp.Window) || first != uint64(e.gotMsgs) || bp.Total > 0 && first+count > e.nmsg() {
		return fmt.Errorf("bench: bad window notice (half %d, messages %d to %d; %d verified so far)", h, first, first+count, e.gotMsgs)
	}
	for k := uint64(0); k < count; k++ {
		i := first + k
		n := e.msgLen(i)
		off := (int(h)*bp.Window + int(k)) * bp.Size
		e.gotBad += int64(e.inPat.check(i, e.region.Buf[off:off+n]))
		e.got += int64(n)
		e.gotMsgs++
		if e.client {
			e.prog.add(int64(n))
		}
	}
	return nil
}

// activeVerified is what was verified of this end's operations: by the
// peer for Writes and Sends, by this end for Reads.
func (e *endpoint) activeVerified() (octets, bad int64) {
	if !e.active {
		return 0, 0
	}
	if e.bp.Op == "read" {
		return e.sent, e.readBad
	}
	return e.verdict[0], e.verdict[2]
}
