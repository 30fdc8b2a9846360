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
}

// NewRelay starts relaying n's SegOut. The relay ends when the device
// closes its SegOut channel (Backend.Close).
func NewRelay(n Network) *Relay {
	r := &Relay{n: n, qp: map[uint16]*relayConn{}, outD: make(chan struct{})}
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
	defer close(r.outD)
	for s := range ch {
		r.mu.Lock()
		rc := r.qp[s.QPN]
		r.mu.Unlock()
		if rc == nil {
			r.fail(fmt.Errorf("driver: the device sent a segment for QP %d, which the relay does not carry: Add its connection before QP_RTS", s.QPN))
			continue
		}
		rc.mu.Lock()
		if s.Seq != rc.tx {
			rc.mu.Unlock()
			r.fail(fmt.Errorf("driver: the device sent QP %d's octets at stream offset %d, the stream is at %d: the device lost or repeated octets",
				s.QPN, s.Seq, rc.tx))
			continue
		}
		rc.tx += uint32(len(s.Octets))
		if rc.hold {
			rc.held = append(rc.held, s.Octets)
			rc.mu.Unlock()
			continue
		}
		_, err := rc.c.Write(s.Octets)
		rc.mu.Unlock()
		if err != nil {
			r.fail(fmt.Errorf("driver: writing QP %d's octets to its socket: %w", s.QPN, err))
		}
	}
}

// Add relays QP rts.QPN's connection c, whose startup StartMPA ran with
// outcome p; call it before QP_RTS, so no segment of the QP finds the
// relay without it. The relay owns c from then on.
func (r *Relay) Add(c net.Conn, rts hostif.QPRTS, p *mpa.Params) {
	rc := &relayConn{c: c, tx: rts.TxSeq, rx: rts.RxSeq, hold: p.WaitsForFirstFPDU()}
	r.mu.Lock()
	r.qp[rts.QPN] = rc
	r.mu.Unlock()
	r.wg.Add(1)
	go r.in(rts.QPN, rc)
}

// in reads the socket and gives each read to the device.
func (r *Relay) in(qpn uint16, rc *relayConn) {
	defer r.wg.Done()
	buf := make([]byte, 64<<10)
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
			if err := r.n.SegIn(seg); err != nil {
				r.fail(err)
				return
			}
		}
		if err != nil {
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
