package verbs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openrnic/rnic/iwarp/ddp"
	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/rdmap"
)

// Opcode is the operation of a send work request.
type Opcode uint8

const (
	OpWrite     Opcode = iota // RDMA Write
	OpRead                    // RDMA Read
	OpSend                    // Send
	OpSendInv                 // Send with Invalidate
	OpSendSE                  // Send with Solicited Event
	OpSendSEInv               // Send with Solicited Event and Invalidate
	OpRecv                    // a receive completion
	opReadRTR                 // internal: zero-length Write used as RTR
)

var opNames = [...]string{"RDMA Write", "RDMA Read", "Send", "Send with Invalidate", "Send with SE", "Send with SE and Invalidate", "Receive", "RTR"}

func (o Opcode) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("opcode %d", uint8(o))
}

// SendWR is a work request on the send queue.
type SendWR struct {
	ID uint64
	Op Opcode
	// Data is the payload of a Write or Send. The queue pair reads it
	// until the work request completes (for an unsignaled one: until a
	// later signaled one completes), and it must not change before then:
	// without markers the queue pair hands Data itself to the kernel
	// (writev) after computing the FPDU's CRC over it, so a change in
	// between would reach the peer as a CRC error.
	Data []byte
	// RemoteSTag and RemoteTO name the peer's buffer: the Data Sink of a
	// Write, the Data Source of a Read.
	RemoteSTag uint32
	RemoteTO   uint64
	// For a Read: the local region and offset the data lands in, and how
	// many octets to read.
	Sink       *MR
	SinkOffset uint64
	Len        uint32
	// InvalidateSTag is the peer's STag that a Send with Invalidate
	// invalidates.
	InvalidateSTag uint32
	// Unsignaled suppresses the completion of a successful Write or Send.
	Unsignaled bool
}

// Completion reports the end of a work request.
type Completion struct {
	ID uint64
	Op Opcode
	// Len is the number of octets received (receives) or read (reads).
	Len int
	// Err is nil on success. After a queue pair fails, every outstanding
	// work request completes with its error (a *QPError).
	Err error
	// For receives: the Send variant's flags and the STag a Send with
	// Invalidate invalidated (0 if none).
	Solicited   bool
	Invalidated uint32
}

// QPError is the error that moves a queue pair to the error state: a
// protocol error found locally (and reported to the peer in a Terminate),
// a Terminate the peer sent, or the loss of the connection.
type QPError struct {
	// Local is the error found here, reported in the Terminate we sent.
	Local *rdmap.Error
	// Remote is the Terminate the peer sent.
	Remote *rdmap.Terminate
	// Conn is a failure of the TCP connection or MPA (code 1).
	Conn error
}

func (e *QPError) Error() string {
	switch {
	case e.Local != nil:
		return "qp: " + e.Local.Error() + " (Terminate sent to the peer)"
	case e.Remote != nil:
		return "qp: the peer terminated the stream: " + e.Remote.String()
	case e.Conn != nil:
		return "qp: connection lost: " + e.Conn.Error()
	}
	return "qp: error"
}

func (e *QPError) Unwrap() error {
	switch {
	case e.Local != nil:
		return e.Local
	case e.Conn != nil:
		return e.Conn
	}
	return nil
}

// ErrQPClosed completes work requests outstanding when Close is called.
var ErrQPClosed = errors.New("qp: closed")

// QPConfig configures a queue pair.
type QPConfig struct {
	// MPA is this side's startup configuration (markers, CRC, revision,
	// private data, IRD/ORD).
	MPA mpa.Config
	// SendCQ and RecvCQ receive completions; nil makes a CQ of 4096.
	SendCQ, RecvCQ *CQ
	// SendDepth bounds posted, unfinished send work requests (default 1024).
	SendDepth int
	// EMSS overrides the effective MSS read from TCP_MAXSEG (for tests).
	EMSS int
	// WritePerFPDU hands each FPDU to the connection in its own Write, so
	// that with TCP_NODELAY every TCP segment starts with an FPDU (FPDU
	// Alignment, RFC 5044 appendix A). It costs a system call per FPDU;
	// captures use it because Wireshark finds markers only in aligned
	// segments. By default FPDUs are batched into large Writes.
	WritePerFPDU bool
}

// QP is a queue pair: one RDMAP Stream over one TCP connection.
type QP struct {
	pd      *PD
	cfg     QPConfig
	conn    net.Conn
	perFPDU bool
	params  *mpa.Params
	stream  uint64
	sink    *ddp.Sink
	mulpdu  int
	emss    int

	sendCQ, recvCQ *CQ
	sq             chan *SendWR
	ctrl           chan txItem
	ord            chan struct{} // one token per outstanding outbound Read (ORD)

	orqMu sync.Mutex
	orq   []*pendingRead // outbound Reads in the order sent (RFC 5040 5.2.1)

	firstRx  chan struct{} // closed when the first FPDU arrives (RFC 5044 7.1.3 rule 4)
	rxOnce   sync.Once
	failOnce sync.Once
	err      atomic.Pointer[QPError]
	term     atomic.Pointer[rdmap.Error] // the Terminate to send as the transmit side stops
	dead     chan struct{}               // closed when the queue pair enters the error state
	done     sync.WaitGroup
	closing  atomic.Bool
	closeCh  chan struct{} // closed by Close: send what is queued, then FIN
	txDone   chan struct{} // closed when the transmit side has stopped

	nextMSN [3]uint32 // next MSN to send on QN 0, 1, 2

	// Counters.
	TxBytes, RxBytes atomic.Int64
}

type pendingRead struct {
	wr   *SendWR
	stag uint32
	to   uint64
	len  uint64
	got  uint64
}

// txItem is work the receive side hands the transmit side: a Read
// Response to send, or a Terminate.
type txItem struct {
	resp  *rdmap.Message
	after func()
}

// Dial connects to addr and runs the MPA startup as Initiator.
func Dial(ctx context.Context, pd *PD, addr string, cfg QPConfig) (*QP, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	qp, err := NewQP(ctx, pd, c, mpa.Initiator, cfg)
	if err != nil {
		c.Close()
		return nil, err
	}
	return qp, nil
}

// Accept accepts one connection on ln and runs the MPA startup as
// Responder.
func Accept(ctx context.Context, pd *PD, ln net.Listener, cfg QPConfig) (*QP, error) {
	stop := context.AfterFunc(ctx, func() {
		if d, ok := ln.(interface{ SetDeadline(time.Time) error }); ok {
			d.SetDeadline(time.Unix(1, 0))
		}
	})
	c, err := ln.Accept()
	stop()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	qp, err := NewQP(ctx, pd, c, mpa.Responder, cfg)
	if err != nil {
		c.Close()
		return nil, err
	}
	return qp, nil
}

// NewQP creates a queue pair and establishes it on c (CreateQP, then
// Establish). Use the two steps to post receive buffers before the peer
// can send.
func NewQP(ctx context.Context, pd *PD, c net.Conn, role mpa.Role, cfg QPConfig) (*QP, error) {
	qp := CreateQP(pd, cfg)
	if err := qp.Establish(ctx, c, role); err != nil {
		return nil, err
	}
	return qp, nil
}

// CreateQP creates a queue pair that is not connected yet: receive
// buffers posted now are in place before the peer's first Send can arrive
// (as with verbs, post receives before connecting); send work requests
// posted now wait for Establish.
func CreateQP(pd *PD, cfg QPConfig) *QP {
	if cfg.MPA.IRD == 0 {
		cfg.MPA.IRD = 16
	}
	if cfg.MPA.ORD == 0 {
		cfg.MPA.ORD = 16
	}
	cfg.MPA.IRD = min(cfg.MPA.IRD, mpa.MaxIRD)
	d := pd.dev
	d.mu.Lock()
	d.nextQP++
	stream := d.nextQP
	d.mu.Unlock()
	qp := &QP{
		pd: pd, cfg: cfg, stream: stream, perFPDU: cfg.WritePerFPDU,
		sink:    ddp.NewSink(pd.id, stream, d.stags, 3),
		sendCQ:  cfg.SendCQ,
		recvCQ:  cfg.RecvCQ,
		sq:      make(chan *SendWR, max(cfg.SendDepth, 1024)),
		ctrl:    make(chan txItem, int(cfg.MPA.IRD)+4),
		firstRx: make(chan struct{}),
		dead:    make(chan struct{}),
		closeCh: make(chan struct{}),
		txDone:  make(chan struct{}),
		nextMSN: [3]uint32{ddp.FirstMSN, ddp.FirstMSN, ddp.FirstMSN},
	}
	if qp.sendCQ == nil {
		qp.sendCQ = NewCQ(4096)
	}
	if qp.recvCQ == nil {
		qp.recvCQ = NewCQ(4096)
	}
	// RDMAP's own queues: QN 1 takes Read Requests, one buffer per IRD
	// credit, so that a peer exceeding our IRD hits DDP's MSN window
	// check (RFC 5041 7.1 item 5); QN 2 takes the peer's Terminate.
	for i := 0; i < int(cfg.MPA.IRD); i++ {
		qp.sink.Post(1, make([]byte, rdmap.ReadRequestLen), uint64(i))
	}
	qp.sink.Post(2, make([]byte, rdmap.MaxTerminateLen), 0)
	return qp
}

// Establish runs the MPA startup on c in the given role and starts Full
// Operation. The queue pair owns c from then on. As mpa.Initiate and
// mpa.Respond do, it closes c on a failed startup and leaves it open
// after a rejection (mpa.RejectError).
func (qp *QP) Establish(ctx context.Context, c net.Conn, role mpa.Role) error {
	if qp.conn != nil {
		return errors.New("qp: already established")
	}
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	var (
		p   *mpa.Params
		err error
	)
	if role == mpa.Initiator {
		p, err = mpa.Initiate(ctx, c, qp.cfg.MPA)
	} else {
		p, err = mpa.Respond(ctx, c, qp.cfg.MPA)
	}
	if err != nil {
		return err
	}
	if p.DDPVersion != ddp.Version {
		// MPA's permissive startup (RFC 5044 appendix C) accepted an
		// RDMAC peer, but this stack speaks DDP/RDMAP version 1 only.
		c.Close()
		return fmt.Errorf("qp: the peer negotiated DDP/RDMAP version %d (an RDMAC RNIC); this stack speaks version %d only", p.DDPVersion, ddp.Version)
	}
	emss := qp.cfg.EMSS
	if emss <= 0 {
		emss = tcpMaxSeg(c)
	}
	qp.conn, qp.params, qp.emss = c, p, emss
	qp.mulpdu = mpa.MULPDU(emss, p.TxMarkers)
	qp.ord = make(chan struct{}, max(int(p.ORD), 1))
	qp.done.Add(2)
	go qp.rxLoop()
	go qp.txLoop()
	return nil
}

// tcpMaxSeg reads TCP_MAXSEG, the EMSS MPA sizes FPDUs by (RFC 5044 4.5).
func tcpMaxSeg(c net.Conn) int {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return 1460
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 1460
	}
	mss := 1460
	rc.Control(func(fd uintptr) {
		if v, err := unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_MAXSEG); err == nil && v > 0 {
			mss = v
		}
	})
	return mss
}

// Params returns the negotiated MPA parameters.
func (qp *QP) Params() *mpa.Params { return qp.params }

// Stream returns the queue pair's DDP Stream id, for binding STags to it.
func (qp *QP) Stream() uint64 { return qp.stream }

// MULPDU returns the largest DDP segment the queue pair sends.
func (qp *QP) MULPDU() int { return qp.mulpdu }

// EMSS returns the effective MSS the queue pair frames for.
func (qp *QP) EMSS() int { return qp.emss }

// SendCQ and RecvCQ return the queue pair's completion queues.
func (qp *QP) SendCQ() *CQ { return qp.sendCQ }
func (qp *QP) RecvCQ() *CQ { return qp.recvCQ }

// Conn returns the underlying connection (for addresses and diagnostics).
func (qp *QP) Conn() net.Conn { return qp.conn }

// Err returns the error that moved the queue pair to the error state.
func (qp *QP) Err() error {
	if e := qp.err.Load(); e != nil {
		return e
	}
	return nil
}

// Dead is closed when the queue pair enters the error state.
func (qp *QP) Dead() <-chan struct{} { return qp.dead }

// PostRecv posts a receive buffer for a Send from the peer.
func (qp *QP) PostRecv(id uint64, buf []byte) error {
	if err := qp.Err(); err != nil {
		return err
	}
	_, err := qp.sink.Post(0, buf, id)
	return err
}

// PostSend queues a send work request. It blocks while the send queue is
// full.
func (qp *QP) PostSend(ctx context.Context, wr SendWR) error {
	if err := qp.Err(); err != nil {
		return err
	}
	switch wr.Op {
	case OpWrite, OpSend, OpSendInv, OpSendSE, OpSendSEInv:
		if uint64(len(wr.Data)) >= 1<<32 {
			return fmt.Errorf("qp: a %v of %d octets is longer than RDMAP's 2^32-1", wr.Op, len(wr.Data))
		}
	case OpRead:
		if wr.Sink == nil {
			return errors.New("qp: RDMA Read without a sink region")
		}
		if wr.SinkOffset > uint64(len(wr.Sink.Buf)) || uint64(wr.Len) > uint64(len(wr.Sink.Buf))-wr.SinkOffset {
			return fmt.Errorf("qp: RDMA Read of %d octets at offset %d does not fit the %d-octet sink region", wr.Len, wr.SinkOffset, len(wr.Sink.Buf))
		}
		if wr.Sink.pd != qp.pd {
			return errors.New("qp: RDMA Read sink region belongs to another protection domain")
		}
	default:
		return fmt.Errorf("qp: cannot post %v", wr.Op)
	}
	w := wr
	select {
	case qp.sq <- &w:
		return nil
	case <-qp.dead:
		return qp.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close ends the queue pair gracefully: the transmit side sends every work
// request already posted, then half-closes the connection (FIN); the queue
// pair then waits up to five seconds for the peer to close its half, closes
// the connection, and completes what is still outstanding with the
// queue pair's error (ErrQPClosed if there was none).
func (qp *QP) Close() error {
	if qp.closing.Swap(true) {
		qp.done.Wait()
		return nil
	}
	close(qp.closeCh)
	select {
	case <-qp.txDone:
	case <-time.After(5 * time.Second):
	}
	select {
	case <-qp.dead:
	case <-time.After(5 * time.Second):
	}
	if e := qp.err.Load(); e != nil && e.Local != nil {
		// We sent a Terminate: the receive side drains the stream
		// until the peer closes (at most two seconds) so that closing
		// with unread data does not reset the connection and discard
		// the Terminate before it is on the wire.
		qp.done.Wait()
	}
	qp.fail(&QPError{Conn: ErrQPClosed})
	qp.conn.Close()
	qp.done.Wait()
	return nil
}

// fail moves the queue pair to the error state once.
func (qp *QP) fail(e *QPError) {
	qp.failOnce.Do(func() {
		qp.err.Store(e)
		close(qp.dead)
		if e.Local == nil {
			qp.conn.Close()
		}
	})
}

// rxLoop reads the TCP stream and runs MPA, DDP and RDMAP on it.
func (qp *QP) rxLoop() {
	defer qp.done.Done()
	rx := mpa.NewReceiver(qp.params.RxMarkers, qp.params.CRC, 0)
	var scratch rxScratch
	rx.SetGather(func(seq uint32, pieces [][]byte, n int) error {
		return qp.onPieces(seq, pieces, n, &scratch)
	})
	buf := make([]byte, 256<<10)
	for {
		n, err := qp.conn.Read(buf)
		if n > 0 {
			qp.RxBytes.Add(int64(n))
			if ferr := rx.Feed(buf[:n], qp.onULPDU); ferr != nil {
				qp.rxError(ferr)
				qp.drain()
				return
			}
		}
		if err != nil {
			if qp.Err() == nil {
				if qp.closing.Load() {
					// Our Close is under way: the peer's FIN, or our
					// own close of the socket, ends the stream.
					err = ErrQPClosed
				} else if errors.Is(err, io.EOF) {
					err = &mpa.Error{Code: mpa.ErrTCPClosed, Detail: "the peer closed the connection"}
				} else {
					err = &mpa.Error{Code: mpa.ErrTCPClosed, Detail: err.Error()}
				}
				qp.fail(&QPError{Conn: err})
			}
			qp.flush()
			return
		}
	}
}

// drain keeps reading after a local error so that the Terminate we sent
// can reach the peer before the connection is torn down, then closes.
func (qp *QP) drain() {
	qp.conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	io.Copy(io.Discard, qp.conn)
	qp.conn.Close()
	qp.flush()
}

// rxError turns an error on the receive path into a Terminate to the peer
// (or records the peer's Terminate).
func (qp *QP) rxError(err error) {
	var pe *peerTerminated
	if errors.As(err, &pe) {
		qp.fail(&QPError{Remote: pe.t})
		qp.conn.Close()
		return
	}
	var me *mpa.Error
	var re *rdmap.Error
	if errors.As(err, &me) {
		re = rdmap.MPAError(uint8(me.Code), nil, 0)
		re.Detail = me.Detail
		re.Err = me
	} else {
		re = rdmap.ErrorFrom(err)
	}
	// The transmit side sends the Terminate as it stops.
	qp.term.Store(re)
	qp.fail(&QPError{Local: re})
}

type peerTerminated struct{ t *rdmap.Terminate }

func (e *peerTerminated) Error() string { return "peer sent Terminate: " + e.t.String() }

// onULPDU handles one DDP segment delivered in order by MPA.
// rxScratch is rxLoop's reusable memory for onPieces.
type rxScratch struct {
	pieces [][]byte
	join   []byte
}

// onPieces takes the MPA Receiver's gathered delivery (mpa.Receiver's
// SetGather): a ULPDU that markers cut, in pieces of the read buffer, n
// octets in all. An RDMA Write whose header is whole in the first piece is
// placed from the pieces (ddp.Sink.ReceiveV), saving the copy that would
// join them; any other ULPDU is joined and goes through onULPDU, so that
// both ways check, place and fail alike.
func (qp *QP) onPieces(seq uint32, pieces [][]byte, n int, sc *rxScratch) error {
	if len(pieces) > 0 && qp.Err() == nil {
		h, payload, err := ddp.ParseHeader(pieces[0])
		if err == nil {
			if op, cerr := rdmap.ClassifyHeader(&h); cerr == nil && op == rdmap.OpWrite {
				qp.rxOnce.Do(func() { close(qp.firstRx) })
				sc.pieces = append(append(sc.pieces[:0], payload), pieces[1:]...)
				_, err := qp.sink.ReceiveV(&h, sc.pieces, n-h.Len(), op.PlacementAccess())
				return err
			}
		}
	}
	sc.join = sc.join[:0]
	for _, p := range pieces {
		sc.join = append(sc.join, p...)
	}
	return qp.onULPDU(seq, sc.join)
}

func (qp *QP) onULPDU(seq uint32, ulpdu []byte) error {
	qp.rxOnce.Do(func() { close(qp.firstRx) })
	if qp.Err() != nil {
		return qp.Err()
	}
	h, payload, err := ddp.ParseHeader(ulpdu)
	if err != nil {
		return qp.sink.Fail(err)
	}
	op, err := rdmap.ClassifyHeader(&h)
	if err != nil {
		var re *rdmap.Error
		if errors.As(err, &re) {
			re.SegmentLen = len(ulpdu)
		}
		return qp.sink.Fail(err)
	}
	switch op {
	case rdmap.OpWrite:
		_, err := qp.sink.Receive(&h, payload, op.PlacementAccess())
		return err
	case rdmap.OpReadResponse:
		return qp.onReadResponse(&h, payload, ulpdu)
	case rdmap.OpReadRequest:
		d, err := qp.sink.Receive(&h, payload, 0)
		if err != nil || !d.Delivered {
			return err
		}
		return qp.onReadRequest(&h, d, ulpdu)
	case rdmap.OpTerminate:
		d, err := qp.sink.Receive(&h, payload, 0)
		if err != nil || !d.Delivered {
			return err
		}
		t, perr := rdmap.ParsePeerTerminate(d.Buf[:d.MsgLen])
		if perr != nil {
			return &peerTerminated{t: &rdmap.Terminate{Layer: rdmap.LayerRDMAP, EType: rdmap.ETypeRemoteOperation, Code: 0xff}}
		}
		return &peerTerminated{t: &t}
	default: // the Send variants
		d, err := qp.sink.Receive(&h, payload, 0)
		if err != nil || !d.Delivered {
			return err
		}
		c := Completion{ID: d.ID, Op: OpRecv, Len: int(d.MsgLen), Solicited: op.SolicitedEvent()}
		if op.Invalidates() {
			stag := d.Header.ULPInfo
			if err := rdmap.Invalidate(qp.pd.dev.stags, qp.pd.id, qp.stream, &d.Header); err != nil {
				var re *rdmap.Error
				if errors.As(err, &re) {
					re.SegmentLen = len(ulpdu)
				}
				return qp.sink.Fail(err)
			}
			c.Invalidated = stag
		}
		qp.complete(qp.recvCQ, c)
		return nil
	}
}

func (qp *QP) onReadResponse(h *ddp.Header, payload, ulpdu []byte) error {
	qp.orqMu.Lock()
	var pr *pendingRead
	if len(qp.orq) > 0 {
		pr = qp.orq[0]
	}
	qp.orqMu.Unlock()
	// RFC 5040 5.2.1: a Read Response must answer the oldest outstanding
	// Read Request, into the sink buffer that request named.
	n := uint64(len(payload))
	if pr == nil || h.STag != pr.stag || h.TO != pr.to+pr.got || pr.got+n > pr.len {
		return qp.sink.Fail(unexpectedReadResponse(h, ulpdu, pr))
	}
	if _, err := qp.sink.Receive(h, payload, rdmap.OpReadResponse.PlacementAccess()); err != nil {
		return err
	}
	pr.got += n
	if !h.Last {
		return nil
	}
	qp.orqMu.Lock()
	qp.orq = qp.orq[1:]
	qp.orqMu.Unlock()
	<-qp.ord
	if pr.wr.Op == opReadRTR {
		pr.wr.Sink.Deregister() // the RTR's empty sink region
	} else {
		qp.complete(qp.sendCQ, Completion{ID: pr.wr.ID, Op: OpRead, Len: int(pr.got)})
	}
	return nil
}

func (qp *QP) onReadRequest(h *ddp.Header, d ddp.Delivery, ulpdu []byte) error {
	rr, err := rdmap.DeliveredReadRequest(&d)
	if err != nil {
		return qp.sink.Fail(err)
	}
	data, err := rdmap.ReadSource(qp.pd.dev.stags, qp.pd.id, qp.stream, h, &rr)
	if err != nil {
		return qp.sink.Fail(err)
	}
	m := rdmap.NewReadResponse(rr.SinkSTag, rr.SinkTO, data)
	buf, id := d.Buf, d.ID
	// The IRD credit returns when the transmit side takes the response.
	after := func() { qp.sink.Post(1, buf, id) }
	select {
	case qp.ctrl <- txItem{resp: &m, after: after}:
		return nil
	case <-qp.dead:
		return qp.Err()
	}
}

func (qp *QP) complete(cq *CQ, c Completion) {
	select {
	case cq.ch <- c:
	case <-qp.dead:
		// Still deliver if there is room; a dead QP does not block.
		select {
		case cq.ch <- c:
		default:
		}
	}
}

// flush completes every outstanding work request with the queue pair's
// error.
func (qp *QP) flush() {
	err := qp.Err()
	qp.orqMu.Lock()
	orq := qp.orq
	qp.orq = nil
	qp.orqMu.Unlock()
	for _, pr := range orq {
		if pr.wr.Op != opReadRTR {
			qp.complete(qp.sendCQ, Completion{ID: pr.wr.ID, Op: OpRead, Err: err})
		}
	}
}

// txLoop frames and sends everything the queue pair transmits.
func (qp *QP) txLoop() {
	defer qp.done.Done()
	defer close(qp.txDone)
	tx := newTxState(qp)
	defer func() {
		// A local error found on the receive side is reported to the
		// peer in a Terminate after whatever was already framed
		// (RFC 5040 5.3).
		if re := qp.term.Load(); re != nil {
			tx.terminate(re)
		}
	}()
	defer func() {
		// Anything still queued completes with the error.
		err := qp.Err()
		for {
			select {
			case wr := <-qp.sq:
				qp.complete(qp.sendCQ, Completion{ID: wr.ID, Op: wr.Op, Err: err})
			default:
				return
			}
		}
	}()
	if qp.params.P2P && qp.params.Role == mpa.Initiator {
		if err := tx.rtr(); err != nil {
			qp.fail(&QPError{Conn: err})
			return
		}
	}
	if qp.params.WaitsForFirstFPDU() {
		// RFC 5044 7.1.3 rule 4: the Responder sends nothing before it
		// has received the Initiator's first FPDU.
		select {
		case <-qp.firstRx:
		case <-qp.dead:
			return
		case <-qp.closeCh:
			select {
			case <-qp.firstRx:
				// Both were ready: the loop below sends what was
				// posted before the Close, then the FIN.
			default:
				if qp.term.Load() == nil {
					tx.closeWrite()
				}
				return
			}
		}
	}
	var held *SendWR // a Read waiting for an ORD credit
	for {
		sq := qp.sq
		var ordC chan struct{}
		if held != nil {
			sq, ordC = nil, qp.ord
		}
		var closeC <-chan struct{}
		if held == nil && len(qp.sq) == 0 && len(qp.ctrl) == 0 {
			closeC = qp.closeCh
		}
		select {
		case <-closeC:
			if len(qp.sq) > 0 || len(qp.ctrl) > 0 {
				// Posted while this select waited: Close sends what
				// was posted before it, so go round and send that
				// first (closeCh stays closed).
				continue
			}
			if qp.term.Load() != nil {
				// A local error raced our Close: the deferred
				// Terminate goes out first and sends the FIN itself.
				return
			}
			if err := tx.flush(); err != nil {
				qp.fail(&QPError{Conn: err})
				return
			}
			tx.closeWrite()
			return
		case it := <-qp.ctrl:
			// The Read Request's IRD credit returns now, before a
			// single octet of the response is on the wire: the
			// requester may issue its next Read the moment the
			// response arrives, and that Read must find a buffer.
			it.after()
			if err := tx.message(it.resp, false); err != nil {
				qp.fail(&QPError{Conn: err})
				return
			}
		case wr := <-sq:
			if wr.Op == OpRead {
				select {
				case qp.ord <- struct{}{}:
				default:
					held = wr
				}
			}
			if held == nil {
				if err := tx.work(wr); err != nil {
					qp.fail(&QPError{Conn: err})
					return
				}
			}
		case ordC <- struct{}{}:
			wr := held
			held = nil
			if err := tx.work(wr); err != nil {
				qp.fail(&QPError{Conn: err})
				return
			}
		case <-qp.dead:
			return
		}
		if len(qp.ctrl) == 0 && (len(qp.sq) == 0 || held != nil) {
			if err := tx.flush(); err != nil {
				qp.fail(&QPError{Conn: err})
				return
			}
		}
	}
}

type txState struct {
	qp     *QP
	framer *mpa.Framer
	// out holds the FPDUs framed and not yet written. With gather set,
	// the payloads of Writes and Sends stay in the work requests' Data
	// and out is written with writev; otherwise every FPDU is copied into
	// out's scratch area and written with one Write.
	out     mpa.Gather
	gather  bool
	pending []Completion // completions due once out is on the wire
}

// txBatch is how many octets the transmit side frames before it writes
// them, when work keeps coming.
const txBatch = 512 << 10

// txGatherPieces bounds the pieces of one batch when gathering: writev
// takes at most 1024.
const txGatherPieces = 1024

// maxPieces bounds the pieces GatherFPDU adds for a ULPDU of n octets:
// ULPDU_Length and DDP header, payload, pad and CRC, and with markers two
// more per marker.
func (t *txState) maxPieces(n int) int {
	if t.qp.params.TxMarkers {
		return 3 + 2*(n/(mpa.MarkerInterval-mpa.MarkerLen)+2)
	}
	return 3
}

func newTxState(qp *QP) *txState {
	t := &txState{qp: qp, framer: mpa.NewFramer(qp.params.TxMarkers, qp.params.CRC, 0)}
	// Gathering pays only where the kernel gets a few long pieces: without
	// markers an FPDU is three (header, payload, pad and CRC). With
	// markers the payload comes in 508-octet pieces between 4-octet
	// markers, and the kernel copies such a list far slower than one
	// buffer: gathering a 512 KiB batch costs about 1.8 times what
	// copying it and writing the copy does (BenchmarkTCPWrite in
	// iwarp/mpa). Gathering also needs a connection that takes writev:
	// anything else would get one Write per piece, which would break
	// FPDU alignment for WritePerFPDU and cost a system call per piece.
	_, vectored := qp.conn.(*net.TCPConn)
	t.gather = vectored && !qp.params.TxMarkers
	return t
}

func (t *txState) msn(qn uint32) uint32 {
	m := t.qp.nextMSN[qn]
	t.qp.nextMSN[qn]++
	return m
}

// work sends one work request.
func (t *txState) work(wr *SendWR) error {
	qp := t.qp
	var m rdmap.Message
	switch wr.Op {
	case OpWrite:
		m = rdmap.NewWrite(wr.RemoteSTag, wr.RemoteTO, wr.Data)
	case OpSend:
		m = rdmap.NewSend(t.msn(0), wr.Data)
	case OpSendInv:
		m = rdmap.NewSendInvalidate(t.msn(0), wr.InvalidateSTag, wr.Data)
	case OpSendSE:
		m = rdmap.NewSendSE(t.msn(0), wr.Data)
	case OpSendSEInv:
		m = rdmap.NewSendSEInvalidate(t.msn(0), wr.InvalidateSTag, wr.Data)
	case OpRead, opReadRTR:
		rr := rdmap.ReadRequest{SinkSTag: wr.Sink.STag, SinkTO: wr.Sink.Addr + wr.SinkOffset, Size: wr.Len, SourceSTag: wr.RemoteSTag, SourceTO: wr.RemoteTO}
		qp.orqMu.Lock()
		qp.orq = append(qp.orq, &pendingRead{wr: wr, stag: rr.SinkSTag, to: rr.SinkTO, len: uint64(wr.Len)})
		qp.orqMu.Unlock()
		m = rdmap.NewReadRequest(t.msn(1), rr)
	}
	if err := t.message(&m, true); err != nil {
		return err
	}
	if wr.Op != OpRead && wr.Op != opReadRTR && !wr.Unsignaled {
		t.pending = append(t.pending, Completion{ID: wr.ID, Op: wr.Op, Len: len(wr.Data)})
	}
	return nil
}

// rtr sends the peer-to-peer ready-to-receive message (RFC 6581 4).
func (t *txState) rtr() error {
	var m rdmap.Message
	switch t.qp.params.RTR {
	case mpa.RTRSend:
		m = rdmap.NewSend(t.msn(0), nil)
	case mpa.RTRRead:
		sink, err := t.qp.pd.RegisterMRAt(nil, 0, 0, t.qp.stream)
		if err != nil {
			return err
		}
		t.qp.ord <- struct{}{}
		if err := t.work(&SendWR{Op: opReadRTR, Sink: sink, RemoteSTag: 1}); err != nil {
			return err
		}
		return t.flush()
	default:
		// A zero-length RDMA Write; a non-zero STag, which the peer does
		// not check for zero-length messages (RFC 5041 5.2) but some
		// peers refuse when it is 0.
		m = rdmap.NewWrite(1, 0, nil)
	}
	if err := t.message(&m, true); err != nil {
		return err
	}
	return t.flush()
}

// message frames every segment of m for sending, writing what is framed
// when a batch is full. owned says that m's payload is a work request's
// Data, which the application leaves alone until the request completes,
// so it may stay where it is until written; anything else (a Read
// Response's source region, which may change meanwhile) is copied, so
// that the CRC always matches the octets sent.
func (t *txState) message(m *rdmap.Message, owned bool) error {
	segs, err := m.Segments(t.qp.mulpdu)
	if err != nil {
		return err
	}
	var hdr [ddp.UntaggedHeaderLen]byte
	for {
		h, payload, ok := segs.Next()
		if !ok {
			return nil
		}
		n := h.Len() + len(payload)
		if t.out.Len() > 0 && (t.out.Len()+t.framer.WireLen(n) > txBatch ||
			t.gather && t.out.Pieces()+t.maxPieces(n) > txGatherPieces) {
			if err := t.flush(); err != nil {
				return err
			}
		}
		if t.gather && owned {
			err = t.framer.GatherFPDU(&t.out, h.Append(hdr[:0]), payload)
		} else {
			err = t.framer.CopyFPDU(&t.out, h.Append(hdr[:0]), payload)
		}
		if err != nil {
			return err
		}
		if t.qp.perFPDU {
			if err := t.write(); err != nil {
				return err
			}
		}
	}
}

// flush writes what is framed to the connection, FPDU-aligned (whole
// FPDUs only), and completes what it carried.
func (t *txState) flush() error {
	if err := t.write(); err != nil {
		return err
	}
	for _, c := range t.pending {
		t.qp.complete(t.qp.sendCQ, c)
	}
	t.pending = t.pending[:0]
	return nil
}

// write hands what is framed to the connection: one Write of the copied
// FPDUs, or a writev of the gathered pieces.
func (t *txState) write() error {
	if t.out.Len() > 0 {
		n, err := t.out.WriteTo(t.qp.conn)
		t.qp.TxBytes.Add(n)
		if err != nil {
			return &mpa.Error{Code: mpa.ErrTCPClosed, Detail: err.Error()}
		}
	}
	return nil
}

// terminate sends a Terminate for e and half-closes the connection
// (RFC 5040 5.3: the stream ends after the Terminate).
func (t *txState) terminate(e *rdmap.Error) {
	term := e.Terminate()
	m, err := rdmap.NewTerminate(t.msn(2), &term)
	if err == nil && t.message(&m, false) == nil {
		t.flush()
	}
	t.closeWrite()
}

// closeWrite sends FIN after everything written so far.
func (t *txState) closeWrite() {
	if tc, ok := t.qp.conn.(interface{ CloseWrite() error }); ok {
		tc.CloseWrite()
	}
}
