package driver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"

	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/iwarp/ddp"
	"github.com/openrnic/rnic/iwarp/mpa"
)

// The relay: TCP runs in host software, the device frames, checks and
// places (docs/device.md, "Shape"; ARCHITECTURE.md, "Network path"). The
// host runs the MPA startup on the connection's socket (StartMPA), hands
// the connection to the device with QP_RTS, and from then on moves octets
// between the socket and the device's segment streams (Relay). Sequence
// numbers on the seam are offsets in the TCP stream, counted from its
// first octet, the MPA Request's: the device needs them for the marker
// positions (RFC 5044 4.3) and for putting segments in order, and any
// origin serves as long as both directions keep theirs.

// StartMPA runs the MPA startup on c in role with cfg (RFC 5044 7.1,
// RFC 6581) and returns the QP_RTS that hands the connection to QP qpn of
// the device: each direction's markers and the CRCs as negotiated, marker
// bases and next sequence numbers at the end of the startup frames, MULPDU
// for an EMSS of emss (RFC 5044 4.5), IRD and ORD as negotiated. The
// device starts Full Operation from there; the host sends nothing more on
// c itself.
//
// Peer-to-peer mode is refused: its RTR (RFC 6581 4) would be the host's
// first FPDU, which this relay does not frame yet.
func StartMPA(ctx context.Context, c net.Conn, role mpa.Role, cfg mpa.Config, qpn uint16, emss int) (hostif.QPRTS, *mpa.Params, error) {
	if cfg.P2P {
		return hostif.QPRTS{}, nil, errors.New("driver: peer-to-peer mode (RFC 6581 RTR) is not relayed yet; start the connection without P2P")
	}
	var (
		p   *mpa.Params
		err error
	)
	if role == mpa.Initiator {
		p, err = mpa.Initiate(ctx, c, cfg)
	} else {
		p, err = mpa.Respond(ctx, c, cfg)
	}
	if err != nil {
		return hostif.QPRTS{}, nil, err
	}
	if p.DDPVersion != ddp.Version {
		c.Close()
		return hostif.QPRTS{}, nil, fmt.Errorf("driver: the peer negotiated DDP/RDMAP version %d (an RDMAC RNIC); the device speaks version %d only",
			p.DDPVersion, ddp.Version)
	}
	var flags uint8
	if p.TxMarkers {
		flags |= hostif.RTSMarkersTx
	}
	if p.RxMarkers {
		flags |= hostif.RTSMarkersRx
	}
	if p.CRC {
		// RFC 5044 7.1.1: CRCs are on both ways when either end asks.
		flags |= hostif.RTSCRCTx | hostif.RTSCRCRx
	}
	tx, rx := uint32(p.Local.Len()), uint32(p.Peer.Len())
	return hostif.QPRTS{QPN: qpn, IRD: uint8(min(p.IRD, 255)), ORD: uint8(min(p.ORD, 255)),
		MULPDU: uint16(mpa.MULPDU(emss, p.TxMarkers)), Flags: flags,
		TxMarkerBase: tx, RxMarkerBase: rx, TxSeq: tx, RxSeq: rx,
		RxMSNSend: ddp.FirstMSN, RxMSNReadRq: ddp.FirstMSN}, p, nil
}

// MaxSegment is the longest segment the network seam carries.
const MaxSegment = 0xffff

// Relay moves octets between the sockets of a device's offloaded
// connections and its network seam: what a socket reads goes to SegIn with
// the stream offset of its first octet; what SegOut delivers is written to
// its QP's socket, after a check that it continues the stream where the
// last one ended. One Relay serves one device (it takes SegOut's channel).
type Relay struct {
	n  Network
	mu sync.Mutex
	qp map[uint16]*relayConn
	// err is the first failure: a socket error, a segment for a QP the
	// relay does not carry, a gap or overlap in the device's stream.
	err  error
	wg   sync.WaitGroup
	outD chan struct{}
	// got counts the device's segments out has handled (written, held or
	// refused); gotC is broadcast at each, and when out ends.
	got  uint64
	gotC *sync.Cond
	// x, if set (UseReasm), takes the sockets' octets to the device.
	x *Reasm
}

type relayConn struct {
	c      net.Conn
	mu     sync.Mutex // orders writes to c
	tx, rx uint32
	// hold: the Responder sends no FPDU before it has received one
	// (RFC 5044 7.1.3 rule 4); the relay keeps the device's segments
	// until the first octets of Full Operation arrive.
	hold bool
	held [][]byte
	// ended is closed when the socket's reader stops; endErr (read after
	// ended) is io.EOF for the peer's orderly close, else the failure.
	started bool
	ended   chan struct{}
	endErr  error
}

// NewRelay starts relaying n's SegOut. The relay ends when the device
// closes its SegOut channel (Backend.Close).
func NewRelay(n Network) *Relay {
	r := &Relay{n: n, qp: map[uint16]*relayConn{}, outD: make(chan struct{})}
	r.gotC = sync.NewCond(&r.mu)
	go r.out(n.SegOut())
	return r
}

func (r *Relay) fail(err error) {
	r.mu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.mu.Unlock()
}

// Err returns the relay's first failure, or nil.
func (r *Relay) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

func (r *Relay) out(ch <-chan Segment) {
	defer func() {
		r.mu.Lock()
		close(r.outD)
		r.gotC.Broadcast()
		r.mu.Unlock()
	}()
	for s := range ch {
		r.handle(s)
		r.mu.Lock()
		r.got++
		r.gotC.Broadcast()
		r.mu.Unlock()
	}
}

// handle writes one of the device's segments to its QP's socket.
func (r *Relay) handle(s Segment) {
	r.mu.Lock()
	rc := r.qp[s.QPN]
	r.mu.Unlock()
	if rc == nil {
		r.fail(fmt.Errorf("driver: the device sent a segment for QP %d, which the relay does not carry: Add its connection before QP_RTS", s.QPN))
		return
	}
	rc.mu.Lock()
	if s.Seq != rc.tx {
		rc.mu.Unlock()
		r.fail(fmt.Errorf("driver: the device sent QP %d's octets at stream offset %d, the stream is at %d: the device lost or repeated octets",
			s.QPN, s.Seq, rc.tx))
		return
	}
	rc.tx += uint32(len(s.Octets))
	if rc.hold {
		rc.held = append(rc.held, s.Octets)
		rc.mu.Unlock()
		return
	}
	_, err := rc.c.Write(s.Octets)
	rc.mu.Unlock()
	if err != nil {
		r.fail(fmt.Errorf("driver: writing QP %d's octets to its socket: %w", s.QPN, err))
	}
}

// Add relays QP rts.QPN's connection c, whose startup StartMPA ran with
// outcome p: from now on the device's segments of the QP go to c. Call it
// before QP_RTS, so no segment of the QP finds the relay without it, and
// Start after QP_RTS, so that no octet of the peer reaches the device
// before the QP is in Full Operation there (it would take the exception
// path, docs/device.md). The relay owns c from then on.
func (r *Relay) Add(c net.Conn, rts hostif.QPRTS, p *mpa.Params) {
	rc := &relayConn{c: c, tx: rts.TxSeq, rx: rts.RxSeq, hold: p.WaitsForFirstFPDU(), ended: make(chan struct{})}
	r.mu.Lock()
	r.qp[rts.QPN] = rc
	if r.x != nil {
		r.x.Add(rts.QPN, rts.RxSeq)
	}
	r.mu.Unlock()
}

// UseReasm gives the sockets' octets to the device through x, the host's
// exception handling (reasm.go), which follows each QP added from then
// on: what the device hands back (a segment that came before its QP_RTS
// took effect, one after a hole) is then handled, never lost. The caller
// reads the device's events through x.Service (and x.Events).
func (r *Relay) UseReasm(x *Reasm) {
	r.mu.Lock()
	r.x = x
	r.mu.Unlock()
}

// Start begins reading QP qpn's socket into the device (SegIn). It is an
// error to start a QP not added, or twice.
func (r *Relay) Start(qpn uint16) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	rc := r.qp[qpn]
	switch {
	case rc == nil:
		return fmt.Errorf("driver: Relay.Start of QP %d, which was not added", qpn)
	case rc.started:
		return fmt.Errorf("driver: Relay.Start of QP %d twice", qpn)
	}
	rc.started = true
	r.wg.Add(1)
	go r.in(qpn, rc)
	return nil
}

// Ended returns a channel closed when QP qpn's socket stops delivering
// (the peer closed it, or it failed), and the reason: io.EOF for the
// peer's orderly close. A QP the relay does not carry returns nil, nil.
func (r *Relay) Ended(qpn uint16) (<-chan struct{}, func() error) {
	r.mu.Lock()
	rc := r.qp[qpn]
	r.mu.Unlock()
	if rc == nil {
		return nil, nil
	}
	return rc.ended, func() error {
		select {
		case <-rc.ended:
			return rc.endErr
		default:
			return nil
		}
	}
}

// in reads the socket and gives each read to the device.
func (r *Relay) in(qpn uint16, rc *relayConn) {
	defer r.wg.Done()
	var endErr error
	defer func() {
		rc.endErr = endErr
		close(rc.ended)
	}()
	// A segment on the seam is at most 65535 octets (its length field is
	// 16 bits: docs/device.md, rnic_dev's s_net tuser).
	buf := make([]byte, MaxSegment)
	for {
		n, err := rc.c.Read(buf)
		if n > 0 {
			rc.mu.Lock()
			if rc.hold {
				rc.hold = false
				for _, o := range rc.held {
					if _, err := rc.c.Write(o); err != nil {
						r.fail(fmt.Errorf("driver: writing QP %d's octets to its socket: %w", qpn, err))
					}
				}
				rc.held = nil
			}
			rc.mu.Unlock()
			seg := Segment{QPN: qpn, Seq: rc.rx, Octets: append([]byte(nil), buf[:n]...)}
			rc.rx += uint32(n)
			r.mu.Lock()
			in := r.n.SegIn
			if r.x != nil {
				in = r.x.SegIn
			}
			r.mu.Unlock()
			if err := in(seg); err != nil {
				r.fail(err)
				endErr = err
				return
			}
		}
		if err != nil {
			endErr = err
			if !errors.Is(err, net.ErrClosed) && !errors.Is(err, io.EOF) {
				// The connection broke; the device learns
				// nothing of it yet (the host's TCP state is
				// not part of the seam), nor of the peer's FIN.
				r.fail(fmt.Errorf("driver: QP %d's socket: %w", qpn, err))
			}
			return
		}
	}
}

// Remove stops relaying QP qpn, which the device has drained (QP_DRAIN):
// every segment the device sent until now is written to the sockets
// first (a Terminate the device sent reaches the peer before the
// connection's end), then the QP's socket is closed and its reader waited
// for. Segments the device sends for the QP afterwards are the relay's
// error, as for a QP never added. Removing a QP not carried does nothing.
func (r *Relay) Remove(qpn uint16) error {
	target := r.n.Sent()
	r.mu.Lock()
	for r.got < target && !closed(r.outD) {
		r.gotC.Wait()
	}
	rc := r.qp[qpn]
	delete(r.qp, qpn)
	r.mu.Unlock()
	if rc == nil {
		return nil
	}
	err := rc.c.Close()
	if rc.started {
		<-rc.ended
	}
	return err
}

func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// Close closes every relayed socket and waits for the readers.
func (r *Relay) Close() error {
	r.mu.Lock()
	for _, rc := range r.qp {
		rc.c.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
	return nil
}
