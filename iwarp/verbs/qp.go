package verbs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
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
	// OpRemoteWrite completes on the receive queue when the peer's RDMA
	// Write has been placed, with QPConfig.NotifyWrites.
	OpRemoteWrite
)

var opNames = [...]string{"RDMA Write", "RDMA Read", "Send", "Send with Invalidate", "Send with SE", "Send with SE and Invalidate", "Receive", "RTR", "Remote RDMA Write"}

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
	// SinkCheckedOnPlacement leaves the check that Len octets fit the sink
	// region to DDP's bounds check when the Read Response is placed, as
	// verbs providers that check the sink only then do (Linux siw): a
	// Read that does not fit then fails the queue pair with a Terminate
	// to the peer (DDP Tagged Buffer Error, base or bounds violation)
	// instead of being refused by PostSend. rping's server uses it to
	// tell a client with a larger buffer why, as rdma-core's rping does.
	SinkCheckedOnPlacement bool
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
	// For OpRemoteWrite: the STag written and End, the TO just past the
	// Write's last octet.
	STag uint32
	End  uint64
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

// Unwrap returns the error inside: the local *rdmap.Error, the peer's
// *rdmap.Terminate or the connection's error, so that errors.As finds
// each of them.
func (e *QPError) Unwrap() error {
	switch {
	case e.Local != nil:
		return e.Local
	case e.Remote != nil:
		return e.Remote
	case e.Conn != nil:
		return e.Conn
	}
	return nil
}

// ErrQPClosed completes work requests outstanding when Close is called,
// and is returned by calls on a closed queue pair.
var ErrQPClosed = errors.New("qp: closed")

// DefaultSendDepth is the send queue depth of a QPConfig without one.
const DefaultSendDepth = 1024

// DefaultCloseTimeout bounds Close: how long it waits for the transmit
// side to send what was posted and for the peer to close its half.
const DefaultCloseTimeout = 5 * time.Second

// QPConfig configures a queue pair.
type QPConfig struct {
	// MPA is this side's startup configuration (markers, CRC, revision,
	// private data, IRD/ORD).
	MPA mpa.Config
	// SendCQ and RecvCQ receive completions; nil makes a CQ of 4096.
	SendCQ, RecvCQ *CQ
	// SendDepth bounds the send work requests posted and not yet
	// completed (default 1024): PostSend waits for a slot while that many
	// are outstanding. A Write or Send holds its slot until it is on the
	// wire (signaled or not), a Read until its response has arrived.
	SendDepth int
	// EMSS overrides the effective MSS read from TCP_MAXSEG (for tests).
	EMSS int
	// WritePerFPDU hands each FPDU to the connection in its own Write, so
	// that with TCP_NODELAY every TCP segment starts with an FPDU (FPDU
	// Alignment, RFC 5044 appendix A). It costs a system call per FPDU;
	// captures use it because Wireshark finds markers only in aligned
	// segments. By default FPDUs are batched into large Writes.
	WritePerFPDU bool
	// NotifyWrites completes an OpRemoteWrite on the receive CQ each time
	// an RDMA Write from the peer has been placed whole. RDMAP tells the
	// Data Sink's ULP nothing of Writes (RFC 5040 5.1): an application on
	// an RNIC learns of one by polling the buffer's last octet, as
	// perftest's ib_write_lat does. This is that poll's equivalent for
	// the software stack, where the buffer is written by another goroutine.
	NotifyWrites bool
	// InlineSend lets PostSend frame and write a work request itself when
	// the send queue is idle (nothing queued or being sent), instead of
	// handing it to the queue pair's transmit goroutine: one goroutine
	// hand-off less on the way to the wire, for latency. Work requests
	// posted while another is being written queue and go out batched, as
	// without it; a stream of posts that each find the queue idle costs a
	// system call each.
	InlineSend bool
	// ManualProgress starts no receive goroutine: the application drives
	// the receive side itself, with Poll or Progress, on its own goroutine
	// (libfabric's manual progress). A completion then reaches the waiting
	// goroutine without a hand-off from another one, which on a machine
	// with idle processors costs a thread wake-up each (the latency of
	// rnic-loader lat). The peer's Read Requests, Terminate and FIN are
	// only seen while the application calls them; Shutdown and Close take
	// over the receive side.
	ManualProgress bool
}

// QP is a queue pair: one RDMAP Stream over one TCP connection.
type QP struct {
	pd   *PD
	cfg  QPConfig
	conn net.Conn   // the TCP connection under MPA
	ll   lowerLayer // what carries the DDP segments (lower.go)
	// waitFirst: nothing is sent before a segment has arrived.
	waitFirst bool
	perFPDU   bool
	params    *mpa.Params
	stream    uint64
	sink      *ddp.Sink
	mulpdu    int
	emss      int

	rx *rdmap.Stream // the receive dispatcher, with the outstanding Reads

	// The transmit side's state, used by the transmit goroutine and, with
	// InlineSend, by PostSend: txMu is held while either frames or writes.
	txMu    sync.Mutex
	tx      *txState
	queued  atomic.Int64 // work requests and Read Responses handed to the transmit goroutine and not yet sent
	txReady atomic.Bool  // the transmit goroutine is past the startup (RTR, rule 4)

	sendCQ, recvCQ *CQ
	sq             chan *SendWR
	slots          chan struct{} // one token per posted, uncompleted send work request (SendDepth)
	ctrl           chan txItem
	ord            chan struct{} // one token per outstanding outbound Read (ORD)

	// sqOrder holds the work requests framed and not yet completed, in
	// the order they were posted: their completions are delivered in that
	// order (verbs' send queue ordering), whichever finishes first.
	orderMu sync.Mutex
	sqOrder []*sqEntry

	// mu guards the change from created to established or closed.
	mu          sync.Mutex
	established bool
	closed      bool
	peerFIN     atomic.Bool // the peer closed its half in order

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

	// The receive side: rxMu is held while a goroutine reads and
	// processes (the receive goroutine, or Progress with ManualProgress).
	rxMu      sync.Mutex
	rxEnd     sync.Once   // counts the receive side out of done
	rxEnded   atomic.Bool // the receive side has stopped
	rxStarted atomic.Bool // the receive goroutine runs
	progress  *progressCtx

	// TxBytes and RxBytes count the octets written to and read from the
	// connection (MPA framing included); Stats has them and more.
	TxBytes, RxBytes atomic.Int64

	txFPDUs, rxFPDUs atomic.Int64
	txMsgs, rxMsgs   [rdmap.NumOpcodes]atomic.Int64 // messages by RDMAP opcode
	termSent         atomic.Pointer[rdmap.Terminate]
	termRecv         atomic.Pointer[rdmap.Terminate]
	mpaErr           atomic.Pointer[mpa.Error] // the MPA error the receive side found
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
// Responder. Cancelling ctx interrupts the wait for a connection when ln
// has SetDeadline (as *net.TCPListener has); the listener is left as it
// was, ready for the next Accept.
func Accept(ctx context.Context, pd *PD, ln net.Listener, cfg QPConfig) (*QP, error) {
	c, err := acceptCtx(ctx, ln)
	if err != nil {
		return nil, err
	}
	qp, err := NewQP(ctx, pd, c, mpa.Responder, cfg)
	if err != nil {
		c.Close()
		return nil, err
	}
	return qp, nil
}

// acceptCtx is ln.Accept interrupted by ctx: cancelling sets a deadline in
// the past, which is cleared again before it returns, once the function
// that set it can no longer run.
func acceptCtx(ctx context.Context, ln net.Listener) (net.Conn, error) {
	dl, ok := ln.(interface{ SetDeadline(time.Time) error })
	if !ok {
		return ln.Accept()
	}
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(fired)
		dl.SetDeadline(time.Unix(1, 0))
	})
	c, err := ln.Accept()
	if !stop() {
		// The cancellation ran, or is running: wait for it, then undo
		// its deadline so the listener keeps working.
		<-fired
		dl.SetDeadline(time.Time{})
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return c, nil
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
	depth := cfg.SendDepth
	if depth <= 0 {
		depth = DefaultSendDepth
	}
	d := pd.dev
	d.mu.Lock()
	d.nextQP++
	stream := d.nextQP
	d.mu.Unlock()
	qp := &QP{
		pd: pd, cfg: cfg, stream: stream, perFPDU: cfg.WritePerFPDU,
		sink:    ddp.NewSink(pd.id, stream, d.stags, rdmap.NumQueues),
		sendCQ:  cfg.SendCQ,
		recvCQ:  cfg.RecvCQ,
		sq:      make(chan *SendWR, depth),
		slots:   make(chan struct{}, depth),
		ctrl:    make(chan txItem, int(cfg.MPA.IRD)+4),
		firstRx: make(chan struct{}),
		dead:    make(chan struct{}),
		closeCh: make(chan struct{}),
		txDone:  make(chan struct{}),
		nextMSN: [3]uint32{ddp.FirstMSN, ddp.FirstMSN, ddp.FirstMSN},
	}
	qp.rx = rdmap.NewStream(qp.sink, d.stags, pd.id, stream)
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
	qp.mu.Lock()
	switch {
	case qp.closed:
		qp.mu.Unlock()
		return ErrQPClosed
	case qp.established || qp.ll != nil:
		qp.mu.Unlock()
		return errors.New("qp: already established")
	}
	qp.established = true // claimed: a second Establish fails
	qp.mu.Unlock()
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
	if err == nil && p.DDPVersion != ddp.Version {
		// MPA's permissive startup (RFC 5044 appendix C) accepted an
		// RDMAC peer, but this stack speaks DDP/RDMAP version 1 only.
		c.Close()
		err = fmt.Errorf("qp: the peer negotiated DDP/RDMAP version %d (an RDMAC RNIC); this stack speaks version %d only", p.DDPVersion, ddp.Version)
	}
	if err != nil {
		qp.mu.Lock()
		qp.established = false
		qp.mu.Unlock()
		return err
	}
	emss := qp.cfg.EMSS
	if emss <= 0 {
		emss = TCPMaxSeg(c)
	}
	qp.mu.Lock()
	if qp.closed {
		// Closed while the startup ran.
		qp.mu.Unlock()
		c.Close()
		return ErrQPClosed
	}
	qp.conn, qp.params, qp.emss = c, p, emss
	qp.start(newMPALayer(c, p, emss, qp.onULPDU, qp.onPieces), p.WaitsForFirstFPDU())
	return nil
}

// start begins Full Operation over ll, with mu held, and releases mu.
// waitFirst says this side sends nothing before it has received a segment
// (MPA's Responder, RFC 5044 7.1.3 rule 4).
func (qp *QP) start(ll lowerLayer, waitFirst bool) {
	qp.ll, qp.waitFirst = ll, waitFirst
	qp.mulpdu = ll.mulpdu()
	qp.ord = make(chan struct{}, max(int(qp.params.ORD), 1))
	qp.tx = &txState{qp: qp}
	qp.done.Add(2)
	qp.mu.Unlock()
	if !qp.cfg.ManualProgress {
		qp.startRx()
	}
	go qp.txLoop()
}

// TCPMaxSeg reads c's TCP_MAXSEG, the EMSS MPA sizes FPDUs by (RFC 5044
// 4.5), or 1460 where c does not say (not a TCP socket).
func TCPMaxSeg(c net.Conn) int {
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
func (qp *QP) Params() *mpa.Params {
	qp.mu.Lock()
	defer qp.mu.Unlock()
	return qp.params
}

// PD returns the protection domain the queue pair belongs to.
func (qp *QP) PD() *PD { return qp.pd }

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
func (qp *QP) Conn() net.Conn {
	qp.mu.Lock()
	defer qp.mu.Unlock()
	return qp.conn
}

// Err returns the error that moved the queue pair to the error state.
func (qp *QP) Err() error {
	if e := qp.err.Load(); e != nil {
		return e
	}
	return nil
}

// Dead is closed when the queue pair enters the error state.
func (qp *QP) Dead() <-chan struct{} { return qp.dead }

// Stats are a queue pair's counters: what it sent and received, and the
// errors that ended it.
type Stats struct {
	// TxOctets and RxOctets are the octets written to and read from the
	// TCP connection, MPA framing (length, markers, pad, CRC) included.
	TxOctets, RxOctets int64
	// TxFPDUs and RxFPDUs count FPDUs, one DDP segment each; RxFPDUs
	// counts those that passed MPA's checks.
	TxFPDUs, RxFPDUs int64
	// TxMessages and RxMessages count whole RDMAP messages by opcode
	// (index rdmap.Opcode): sent, and received complete.
	TxMessages, RxMessages [rdmap.NumOpcodes]int64
	// CRCErrors and MarkerErrors count the MPA errors of those kinds the
	// receive side found (RFC 5044 8, codes 2 and 3): at most one, as the
	// first ends the stream.
	CRCErrors, MarkerErrors int64
	// TerminateSent and TerminateReceived are the Terminate this side
	// sent and the one the peer sent, if any (RFC 5040 4.8).
	TerminateSent, TerminateReceived *rdmap.Terminate
}

// Stats returns a snapshot of the queue pair's counters.
func (qp *QP) Stats() Stats {
	st := Stats{
		TxOctets: qp.TxBytes.Load(), RxOctets: qp.RxBytes.Load(),
		TxFPDUs: qp.txFPDUs.Load(), RxFPDUs: qp.rxFPDUs.Load(),
		TerminateSent: qp.termSent.Load(), TerminateReceived: qp.termRecv.Load(),
	}
	for i := range st.TxMessages {
		st.TxMessages[i] = qp.txMsgs[i].Load()
		st.RxMessages[i] = qp.rxMsgs[i].Load()
	}
	if me := qp.mpaErr.Load(); me != nil {
		switch me.Code {
		case mpa.ErrCRC:
			st.CRCErrors = 1
		case mpa.ErrMarker:
			st.MarkerErrors = 1
		}
	}
	return st
}

// PostRecv posts a receive buffer for a Send from the peer.
func (qp *QP) PostRecv(id uint64, buf []byte) error {
	if err := qp.Err(); err != nil {
		return err
	}
	_, err := qp.sink.Post(0, buf, id)
	return err
}

// PostSend queues a send work request. It waits while SendDepth work
// requests are outstanding, until one completes or ctx ends. It refuses,
// with an error that names the problem, a work request the queue pair
// cannot carry out: a Write or Send longer than RDMAP allows, a Read
// whose sink region is missing, too small, of another protection domain
// or without remote write access, a Read to a peer that takes none. A
// refused work request leaves the queue pair as it was.
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
		if err := qp.checkRead(&wr); err != nil {
			return err
		}
	default:
		return fmt.Errorf("qp: cannot post %v", wr.Op)
	}
	select {
	case qp.slots <- struct{}{}:
	case <-qp.dead:
		return qp.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
	w := wr
	if qp.cfg.InlineSend && qp.sendInline(&w) {
		return nil
	}
	// The send queue holds as many work requests as there are slots, so
	// this never waits.
	qp.queued.Add(1)
	select {
	case qp.sq <- &w:
		return nil
	case <-qp.dead:
		qp.queued.Add(-1)
		qp.release(1)
		return qp.Err()
	}
}

// sendInline frames and writes wr on the posting goroutine when the
// transmit side is idle, and reports whether it did. Nothing queued may
// be overtaken: work requests handed to the transmit goroutine count in
// queued until it has sent them, and it sends under txMu.
func (qp *QP) sendInline(wr *SendWR) bool {
	if !qp.txReady.Load() || !qp.txMu.TryLock() {
		return false
	}
	defer qp.txMu.Unlock()
	if qp.queued.Load() != 0 || len(qp.ctrl) != 0 || qp.closing.Load() || qp.Err() != nil {
		return false
	}
	if wr.Op == OpRead {
		select {
		case qp.ord <- struct{}{}:
		default:
			return false // waits for an ORD credit in the queue
		}
	}
	err := qp.tx.work(wr)
	if err == nil {
		err = qp.tx.flush()
	}
	if err != nil {
		// The transmit goroutine completes what is left with the error.
		qp.fail(&QPError{Conn: err})
	}
	return true
}

func (qp *QP) checkRead(wr *SendWR) error {
	sink := wr.Sink
	switch {
	case sink == nil:
		return errors.New("qp: RDMA Read without a sink region")
	case !wr.SinkCheckedOnPlacement && (wr.SinkOffset > uint64(len(sink.Buf)) || uint64(wr.Len) > uint64(len(sink.Buf))-wr.SinkOffset):
		return fmt.Errorf("qp: RDMA Read of %d octets at offset %d does not fit the %d-octet sink region", wr.Len, wr.SinkOffset, len(sink.Buf))
	case sink.pd != qp.pd:
		return errors.New("qp: RDMA Read sink region belongs to another protection domain")
	case sink.Access&RemoteWrite == 0:
		// RFC 5040 4.4 (and RFC 5041 7.1): the Read Response is a tagged
		// message, placed into the sink through its STag like an RDMA
		// Write, so the sink needs remote write access. Posting it anyway
		// would fail the Read Response here and send the peer an
		// access-rights Terminate it did nothing to deserve.
		return fmt.Errorf("qp: RDMA Read sink region (STag %#08x) lacks remote write access: the Read Response is written into it through its STag; register the sink with verbs.RemoteWrite", sink.STag)
	}
	if p := qp.Params(); p != nil && p.ORD == 0 {
		return errNoReads(p)
	}
	return nil
}

// errNoReads is the error of a Read to a peer that accepts none.
func errNoReads(p *mpa.Params) error {
	if p.Peer.Enhanced && p.Peer.Params.IRD == 0 {
		return errors.New("qp: RDMA Read refused: the peer advertised IRD 0 in its MPA startup frame (it accepts no RDMA Read Requests, RFC 6581 3)")
	}
	return errors.New("qp: RDMA Read refused: this queue pair's ORD is 0 (QPConfig.MPA.ORD)")
}

// respondInline sends a Read Response on the receiving goroutine when the
// transmit side is idle, as sendInline does for work requests, and
// reports whether it did. A response cannot overtake another: they queue
// in ctrl, which must be empty.
func (qp *QP) respondInline(m *rdmap.Message, after func()) bool {
	if !qp.txReady.Load() || !qp.txMu.TryLock() {
		return false
	}
	defer qp.txMu.Unlock()
	if qp.queued.Load() != 0 || len(qp.ctrl) != 0 || qp.closing.Load() || qp.Err() != nil {
		return false
	}
	after()
	err := qp.tx.message(m, false)
	if err == nil {
		err = qp.tx.flush()
	}
	if err != nil {
		qp.fail(&QPError{Conn: err})
	}
	return true
}

// sqEntry is a work request between the moment its place in the send
// queue's completion order is fixed (it is framed, or refused) and its
// completion.
type sqEntry struct {
	wr   *SendWR
	done bool
	c    Completion
}

// orderSQ gives wr its place in the completion order: after every work
// request framed or refused before it.
func (qp *QP) orderSQ(wr *SendWR) *sqEntry {
	e := &sqEntry{wr: wr}
	qp.orderMu.Lock()
	qp.sqOrder = append(qp.sqOrder, e)
	qp.orderMu.Unlock()
	return e
}

// finishSQ records that e's work request finished (n octets read, or
// err) and delivers, in order, every completion no earlier work request
// holds back: a successful unsignaled Write or Send completes silently.
// The lock is held while delivering, so that two goroutines finishing at
// once cannot deliver out of order; a full CQ holds both, as flow control.
func (qp *QP) finishSQ(e *sqEntry, n int, err error) {
	qp.orderMu.Lock()
	defer qp.orderMu.Unlock()
	e.done = true
	e.c = Completion{ID: e.wr.ID, Op: e.wr.Op, Len: n, Err: err}
	i := 0
	for ; i < len(qp.sqOrder) && qp.sqOrder[i].done; i++ {
		h := qp.sqOrder[i]
		if h.c.Err != nil || !h.wr.Unsignaled || h.wr.Op == OpRead {
			qp.complete(qp.sendCQ, h.c)
		}
		qp.sqOrder[i] = nil
	}
	qp.sqOrder = qp.sqOrder[i:]
}

// release returns n send queue slots.
func (qp *QP) release(n int) {
	for range n {
		select {
		case <-qp.slots:
		default:
		}
	}
}

// Close ends the queue pair as Shutdown does, waiting at most
// DefaultCloseTimeout.
func (qp *QP) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultCloseTimeout)
	defer cancel()
	return qp.Shutdown(ctx)
}

// Shutdown ends the queue pair gracefully: the transmit side sends every
// work request already posted, then half-closes the connection (FIN); the
// queue pair waits for the peer to close its half, closes the connection,
// and completes what is still outstanding with the queue pair's error
// (ErrQPClosed if there was none). A queue pair that never connected just
// completes what was posted with ErrQPClosed.
//
// When ctx ends first, Shutdown closes the connection at once and returns
// an error that wraps ctx.Err(). Otherwise it returns nil for a graceful
// end (no error, or the peer closed its half first), or the *QPError that
// ended the queue pair before (a Terminate either way, a lost connection).
func (qp *QP) Shutdown(ctx context.Context) error {
	if qp.closing.Swap(true) {
		// A second call: wait for the first to finish.
		if err := waitCtx(ctx, &qp.done); err != nil {
			return err
		}
		return qp.closeErr(nil)
	}
	qp.mu.Lock()
	qp.closed = true
	ll := qp.ll
	qp.mu.Unlock()
	if ll == nil {
		qp.fail(&QPError{Conn: ErrQPClosed})
		qp.drainSQ()
		return nil
	}
	// With ManualProgress nobody may be reading: the FIN, or the peer's
	// answer to ours, must be seen.
	qp.startRx()
	close(qp.closeCh)
	var ctxErr error
	select {
	case <-qp.txDone:
		select {
		case <-qp.dead:
		case <-ctx.Done():
			ctxErr = fmt.Errorf("qp: the peer did not close its half of the connection: %w", ctx.Err())
		}
	case <-ctx.Done():
		ctxErr = fmt.Errorf("qp: sending what was posted before Close: %w", ctx.Err())
	}
	if e := qp.err.Load(); ctxErr == nil && e != nil && e.Local != nil {
		// We sent a Terminate: the receive side drains the stream
		// until the peer closes (at most two seconds) so that closing
		// with unread data does not reset the connection and discard
		// the Terminate before it is on the wire.
		waitCtx(ctx, &qp.done)
	}
	qp.fail(&QPError{Conn: ErrQPClosed})
	ll.close()
	qp.done.Wait()
	return qp.closeErr(ctxErr)
}

// closeErr is what Shutdown reports: ctxErr if it gave up, nil for a
// graceful end, else the error that ended the queue pair.
func (qp *QP) closeErr(ctxErr error) error {
	if ctxErr != nil {
		return ctxErr
	}
	e := qp.err.Load()
	switch {
	case e == nil, e.Local == nil && e.Remote == nil && errors.Is(e.Conn, ErrQPClosed):
		return nil
	case e.Local == nil && e.Remote == nil && qp.peerFIN.Load():
		return nil // the peer closed first, in order
	}
	return e
}

// waitCtx waits for wg or ctx, whichever comes first.
func waitCtx(ctx context.Context, wg *sync.WaitGroup) error {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// drainSQ completes every queued work request with the queue pair's
// error and frees its slot.
func (qp *QP) drainSQ() {
	err := qp.Err()
	for {
		select {
		case wr := <-qp.sq:
			qp.finishSQ(qp.orderSQ(wr), 0, err)
			qp.release(1)
		default:
			return
		}
	}
}

// fail moves the queue pair to the error state once.
func (qp *QP) fail(e *QPError) {
	qp.failOnce.Do(func() {
		qp.err.Store(e)
		close(qp.dead)
		if e.Local == nil {
			qp.mu.Lock()
			ll := qp.ll
			qp.mu.Unlock()
			if ll != nil {
				ll.close()
			}
		}
	})
}

// startRx starts the receive goroutine, once.
func (qp *QP) startRx() {
	if qp.rxStarted.CompareAndSwap(false, true) {
		go qp.rxLoop()
	}
}

// rxLoop reads the TCP stream and runs MPA, DDP and RDMAP on it.
func (qp *QP) rxLoop() {
	qp.rxMu.Lock()
	qp.dropProgressCtx() // a cancelled Progress's deadline must not end this loop
	qp.rxMu.Unlock()
	for {
		qp.rxMu.Lock()
		ended := qp.rxEnded.Load() || qp.rxStep()
		qp.rxMu.Unlock()
		if ended {
			qp.endRx()
			return
		}
	}
}

// endRx records that the receive side has stopped.
func (qp *QP) endRx() {
	qp.rxEnded.Store(true)
	qp.rxEnd.Do(qp.done.Done)
}

// Progress runs the receive side on the calling goroutine, with
// ManualProgress: it waits for the connection's next octets (or ctx's end)
// and processes them, completing what they complete. It returns nil, ctx's
// error, or the queue pair's error once the receive side has stopped.
// After a protocol error it may take up to two seconds, to let the
// Terminate reach the peer before the connection closes.
func (qp *QP) Progress(ctx context.Context) error {
	if !qp.cfg.ManualProgress {
		return errors.New("qp: Progress needs QPConfig.ManualProgress; the receive goroutine runs the receive side")
	}
	qp.mu.Lock()
	ll := qp.ll
	qp.mu.Unlock()
	if ll == nil {
		return errors.New("qp: Progress before Establish")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	qp.rxMu.Lock()
	if qp.rxEnded.Load() {
		qp.rxMu.Unlock()
		return qp.Err()
	}
	qp.watchProgressCtx(ctx)
	ended := qp.rxStep()
	if ended {
		qp.dropProgressCtx()
	}
	qp.rxMu.Unlock()
	if ended {
		qp.endRx()
		return qp.Err()
	}
	return ctx.Err()
}

// progressCtx is the context Progress watches: when it ends, the
// connection's read deadline goes to the past, so that a blocked read
// returns. It stays registered from one Progress call to the next with
// the same context, which saves a registration per call.
type progressCtx struct {
	done  <-chan struct{}
	stop  func() bool
	fired chan struct{}
}

// watchProgressCtx makes ctx interrupt the connection's reads, with rxMu
// held.
func (qp *QP) watchProgressCtx(ctx context.Context) {
	done := ctx.Done()
	if qp.progress != nil && qp.progress.done == done {
		return
	}
	qp.dropProgressCtx()
	if done == nil {
		return
	}
	pc := &progressCtx{done: done, fired: make(chan struct{})}
	pc.stop = context.AfterFunc(ctx, func() {
		defer close(pc.fired)
		qp.ll.setReadDeadline(time.Unix(1, 0))
	})
	qp.progress = pc
}

// dropProgressCtx stops watching the last Progress context and clears the
// deadline it may have set, with rxMu held.
func (qp *QP) dropProgressCtx() {
	pc := qp.progress
	if pc == nil {
		return
	}
	qp.progress = nil
	if !pc.stop() {
		<-pc.fired
		qp.ll.setReadDeadline(time.Time{})
	}
}

// Poll returns the next completion of cq, one of the queue pair's CQs. With
// ManualProgress it drives the receive side while it waits (Progress);
// otherwise it waits as cq.Poll does. Once the queue pair has failed it
// returns the completions still queued, then the queue pair's error.
func (qp *QP) Poll(ctx context.Context, cq *CQ) (Completion, error) {
	for {
		if c, ok := cq.TryPoll(); ok {
			return c, nil
		}
		if !qp.cfg.ManualProgress || qp.rxStarted.Load() {
			select {
			case c := <-cq.ch:
				return c, nil
			case <-qp.dead:
				if c, ok := cq.TryPoll(); ok {
					return c, nil
				}
				return Completion{}, qp.Err()
			case <-ctx.Done():
				return Completion{}, ctx.Err()
			}
		}
		if err := qp.Progress(ctx); err != nil {
			if c, ok := cq.TryPoll(); ok {
				return c, nil
			}
			return Completion{}, err
		}
	}
}

// rxStep reads once from the lower layer and runs DDP and RDMAP on what
// came, with rxMu held. It reports whether the receive side ended.
func (qp *QP) rxStep() bool {
	ferr, err := qp.ll.receive(qp.countRx)
	if ferr != nil {
		qp.rxError(ferr)
		qp.drain()
		return true
	}
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) && qp.cfg.ManualProgress && qp.Err() == nil && !qp.closing.Load() {
			// Progress's context ended: the stream goes on.
			return false
		}
		if qp.Err() == nil {
			if qp.closing.Load() {
				// Our Close is under way: the peer's FIN, or our
				// own close of the socket, ends the stream.
				err = ErrQPClosed
			} else {
				if errors.Is(err, io.EOF) {
					qp.peerFIN.Store(true)
				}
				err = qp.ll.lost(err)
			}
			qp.fail(&QPError{Conn: err})
		}
		qp.flush()
		return true
	}
	return false
}

// countRx counts octets read from the lower layer.
func (qp *QP) countRx(n int) { qp.RxBytes.Add(int64(n)) }

// drain keeps reading after a local error so that the Terminate we sent
// can reach the peer before the connection is torn down, then closes.
func (qp *QP) drain() {
	qp.ll.drain(2 * time.Second)
	qp.flush()
}

// rxError turns an error on the receive path into a Terminate to the peer
// (or records the peer's Terminate).
func (qp *QP) rxError(err error) {
	var pt *rdmap.Terminate
	if errors.As(err, &pt) {
		qp.fail(&QPError{Remote: pt})
		qp.ll.close()
		return
	}
	var me *mpa.Error
	var re *rdmap.Error
	if errors.As(err, &me) {
		qp.mpaErr.Store(me)
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

// onPieces takes the MPA Receiver's gathered delivery (mpa.Receiver's
// SetGather): a ULPDU that markers cut, in pieces of the read buffer, n
// octets in all (rdmap.Stream's ReceiveV).
func (qp *QP) onPieces(_ uint32, pieces [][]byte, n int) error {
	qp.rxOnce.Do(func() { close(qp.firstRx) })
	if err := qp.Err(); err != nil {
		return err
	}
	ev, err := qp.rx.ReceiveV(pieces, n)
	return qp.onEvent(ev, err)
}

// onULPDU handles one DDP segment delivered in order by MPA.
func (qp *QP) onULPDU(_ uint32, ulpdu []byte) error {
	// MPA delivers only FPDUs it validated: from now on this side may
	// send (RFC 5044 7.1.3 rule 4), a Terminate included.
	qp.rxOnce.Do(func() { close(qp.firstRx) })
	if err := qp.Err(); err != nil {
		return err
	}
	ev, err := qp.rx.Receive(ulpdu)
	return qp.onEvent(ev, err)
}

// onEvent acts on what the receive dispatcher reports for a segment.
func (qp *QP) onEvent(ev rdmap.Event, err error) error {
	qp.rxFPDUs.Add(1)
	if err != nil {
		return err
	}
	if ev.Kind != rdmap.EventNone {
		qp.rxMsgs[ev.Opcode].Add(1)
	}
	switch ev.Kind {
	case rdmap.EventWrite:
		if qp.cfg.NotifyWrites {
			qp.complete(qp.recvCQ, Completion{Op: OpRemoteWrite, STag: ev.Header.STag, End: ev.Header.TO + uint64(ev.Len)})
		}
	case rdmap.EventReadResponse:
		e := ev.Read.Ref.(*sqEntry)
		<-qp.ord
		if e.wr.Op == opReadRTR {
			e.wr.Sink.Deregister() // the RTR's empty sink region
			return nil
		}
		qp.release(1)
		qp.finishSQ(e, int(ev.Read.Got), nil)
	case rdmap.EventReadRequest:
		return qp.onReadRequest(&ev)
	case rdmap.EventTerminate:
		qp.termRecv.Store(ev.Terminate)
		return ev.Terminate
	case rdmap.EventSend:
		d := &ev.Delivery
		qp.complete(qp.recvCQ, Completion{ID: d.ID, Op: OpRecv, Len: int(d.MsgLen),
			Solicited: ev.Opcode.SolicitedEvent(), Invalidated: ev.Invalidated})
	}
	return nil
}

// onReadRequest answers a delivered Read Request from the Data Source
// region it names (RFC 5040 4.4, 5.2).
func (qp *QP) onReadRequest(ev *rdmap.Event) error {
	data, err := rdmap.ReadSource(qp.pd.dev.stags, qp.pd.id, qp.stream, &ev.Header, &ev.ReadRequest)
	if err != nil {
		return qp.sink.Fail(err)
	}
	m := rdmap.NewReadResponse(ev.ReadRequest.SinkSTag, ev.ReadRequest.SinkTO, data)
	buf, id := ev.Delivery.Buf, ev.Delivery.ID
	// The IRD credit returns when the transmit side takes the response.
	after := func() { qp.sink.Post(1, buf, id) }
	if qp.cfg.InlineSend && qp.respondInline(&m, after) {
		return nil
	}
	qp.queued.Add(1)
	select {
	case qp.ctrl <- txItem{resp: &m, after: after}:
		return nil
	case <-qp.dead:
		qp.queued.Add(-1)
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

// flush completes every outstanding Read with the queue pair's error.
func (qp *QP) flush() {
	err := qp.Err()
	for _, r := range qp.rx.TakeReads() {
		e := r.Ref.(*sqEntry)
		if e.wr.Op != opReadRTR {
			qp.release(1)
			qp.finishSQ(e, 0, err)
		}
	}
}

// txLoop frames and sends everything the queue pair transmits.
func (qp *QP) txLoop() {
	defer qp.done.Done()
	defer close(qp.txDone)
	tx := qp.tx
	var held *SendWR // a Read waiting for an ORD credit
	defer func() {
		qp.txMu.Lock()
		defer qp.txMu.Unlock()
		// Anything framed but not written, or still queued, completes
		// with the error.
		for _, e := range tx.pending {
			qp.finishSQ(e, 0, qp.Err())
		}
		tx.pending = tx.pending[:0]
		qp.release(tx.slots)
		tx.slots = 0
		if held != nil {
			qp.finishSQ(qp.orderSQ(held), 0, qp.Err())
			qp.release(1)
		}
		qp.drainSQ()
		// A local error found on the receive side is reported to the
		// peer in a Terminate after whatever was already framed
		// (RFC 5040 5.3), unless this side may not send yet: a
		// Responder sends no FPDU before it has received a valid one
		// (RFC 5044 7.1.3 rule 4), so then it only closes the
		// connection (section 8 leaves that to the ULP).
		if re := qp.term.Load(); re != nil {
			if qp.maySend() {
				tx.terminate(re)
			} else {
				tx.closeWrite()
			}
		}
	}()
	if qp.params.P2P && qp.params.Role == mpa.Initiator {
		if err := tx.rtr(); err != nil {
			qp.fail(&QPError{Conn: err})
			return
		}
	}
	if qp.waitFirst {
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
	qp.txReady.Store(true)
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
		var (
			step txStep
			it   txItem
			wr   *SendWR
		)
		select {
		case <-closeC:
			step = stepClose
		case it = <-qp.ctrl:
			step = stepCtrl
		case wr = <-sq:
			step = stepWork
		case ordC <- struct{}{}:
			step, wr, held = stepHeld, held, nil
		case <-qp.dead:
			return
		}
		qp.txMu.Lock()
		stop := qp.txStep(step, it, wr, &held)
		qp.txMu.Unlock()
		if stop {
			return
		}
	}
}

type txStep uint8

const (
	stepClose txStep = iota // Close was called
	stepCtrl                // a Read Response to send
	stepWork                // a work request from the send queue
	stepHeld                // a Read that was waiting has its ORD credit
)

// txStep carries out one step of txLoop, with txMu held, and reports
// whether the loop ends.
func (qp *QP) txStep(step txStep, it txItem, wr *SendWR, held **SendWR) bool {
	tx := qp.tx
	switch step {
	case stepClose:
		if len(qp.sq) > 0 || len(qp.ctrl) > 0 {
			// Posted while the loop waited: Close sends what was
			// posted before it, so go round and send that first
			// (closeCh stays closed).
			return false
		}
		if qp.term.Load() != nil {
			// A local error raced our Close: the deferred Terminate
			// goes out first and sends the FIN itself.
			return true
		}
		if err := tx.flush(); err != nil {
			qp.fail(&QPError{Conn: err})
			return true
		}
		tx.closeWrite()
		return true
	case stepCtrl:
		// The Read Request's IRD credit returns now, before a single
		// octet of the response is on the wire: the requester may issue
		// its next Read the moment the response arrives, and that Read
		// must find a buffer.
		it.after()
		qp.queued.Add(-1)
		if err := tx.message(it.resp, false); err != nil {
			qp.fail(&QPError{Conn: err})
			return true
		}
	case stepWork:
		if wr.Op == OpRead && qp.params.ORD == 0 {
			// Posted before the startup told us the peer's IRD:
			// refused now, and never sent.
			qp.queued.Add(-1)
			qp.finishSQ(qp.orderSQ(wr), 0, errNoReads(qp.params))
			qp.release(1)
			return false
		}
		if wr.Op == OpRead {
			select {
			case qp.ord <- struct{}{}:
			default:
				// Waits for an ORD credit, still counted in queued
				// so that nothing overtakes it; what is framed goes
				// out now (below), or the credit would never come.
				*held = wr
			}
		}
		if *held == nil {
			qp.queued.Add(-1)
			if err := tx.work(wr); err != nil {
				qp.fail(&QPError{Conn: err})
				return true
			}
		}
	case stepHeld:
		qp.queued.Add(-1)
		if err := tx.work(wr); err != nil {
			qp.fail(&QPError{Conn: err})
			return true
		}
	}
	if len(qp.ctrl) == 0 && (len(qp.sq) == 0 || *held != nil) {
		if err := tx.flush(); err != nil {
			qp.fail(&QPError{Conn: err})
			return true
		}
	}
	return false
}

// maySend reports whether this side may send FPDUs: always, except for a
// Responder that has not yet received a valid FPDU (RFC 5044 7.1.3
// rule 4).
func (qp *QP) maySend() bool {
	if !qp.waitFirst {
		return true
	}
	select {
	case <-qp.firstRx:
		return true
	default:
		return false
	}
}

type txState struct {
	qp      *QP
	pending []*sqEntry // work requests that complete once the batch is written
	slots   int        // send queue slots of the work requests in the batch
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
		// Recorded before it can reach the peer, in sending order
		// (RFC 5040 5.2.1); its slot is freed when it completes.
		e := &sqEntry{wr: wr}
		if wr.Op == OpRead {
			e = qp.orderSQ(wr)
		}
		qp.rx.ExpectRead(&rdmap.OutstandingRead{SinkSTag: rr.SinkSTag, SinkTO: rr.SinkTO, Len: uint64(wr.Len), Ref: e})
		m = rdmap.NewReadRequest(t.msn(1), rr)
	}
	if wr.Op != OpRead && wr.Op != opReadRTR {
		// Counted before framing, so that a failure while framing or
		// writing completes it with the error.
		t.slots++
		if !wr.Unsignaled {
			t.pending = append(t.pending, qp.orderSQ(wr))
		}
	}
	return t.message(&m, true)
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
			t.qp.txMsgs[m.Opcode].Add(1)
			return nil
		}
		t.qp.txFPDUs.Add(1)
		if t.qp.ll.full(h.Len() + len(payload)) {
			if err := t.flush(); err != nil {
				return err
			}
		}
		if err := t.qp.ll.queue(h.Append(hdr[:0]), payload, owned); err != nil {
			return err
		}
		if t.qp.perFPDU {
			if err := t.write(); err != nil {
				return err
			}
		}
	}
}

// flush writes what is framed to the lower layer, whole segments only
// (for MPA: FPDU-aligned), and completes what it carried.
func (t *txState) flush() error {
	if err := t.write(); err != nil {
		return err
	}
	for _, e := range t.pending {
		t.qp.finishSQ(e, len(e.wr.Data), nil)
	}
	t.pending = t.pending[:0]
	t.qp.release(t.slots)
	t.slots = 0
	return nil
}

// write hands what is framed to the lower layer.
func (t *txState) write() error {
	n, err := t.qp.ll.write()
	t.qp.TxBytes.Add(n)
	return err
}

// terminate sends a Terminate for e and half-closes the connection
// (RFC 5040 5.3: the stream ends after the Terminate).
func (t *txState) terminate(e *rdmap.Error) {
	term := e.Terminate()
	m, err := rdmap.NewTerminate(t.msn(2), &term)
	if err == nil && t.message(&m, false) == nil && t.flush() == nil {
		t.qp.termSent.Store(&term)
	}
	t.closeWrite()
}

// closeWrite ends this side's half (for TCP: FIN) after everything
// written so far.
func (t *txState) closeWrite() { t.qp.ll.closeWrite() }
