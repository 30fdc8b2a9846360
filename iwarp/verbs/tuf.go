package verbs

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/openrnic/rnic/iwarp/crc32c"
	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/tuf"
)

// Queue pairs over TUF (package tuf, draft-ietf-tsvwg-tcp-ulp-frame-01):
// the same DDP placement and RDMAP as over MPA, with each DDP segment in
// an FPDU of its own (no ULPDU packing: the FPDU's Length is the segment's
// length, which DDP needs from its lower layer) ending in the CRC32c
// trailer (docs/tuf.md). The startup is tuf.Initiate/Respond on the TCP
// connection; its private data starts with the queue pair's IRD and ORD,
// as over DDP/SCTP (sessionPD), followed by the consumer's private data.
//
// Over a kernel TCP socket the segment boundaries are not visible: the
// receive side delineates by Length and Key (tuf.Receiver) and checks every
// trailer; the sender sizes FPDUs to the EMSS (MaxULPDU) but the kernel
// segments the stream as it likes.
//
// Errors: a bad trailer ends the stream as MPA's CRC error does (the
// Terminate carries LLP error 2); a wrong key or a Length too short for
// the trailer, framing lost, as MPA's code 3.

// EstablishTUF runs the DDP over TUF startup on c in the given role, with
// a fresh key from crypto/rand, and starts Full Operation. The queue pair
// owns c from then on; a failed startup closes c, a rejection leaves it
// open (*tuf.RejectError).
func (qp *QP) EstablishTUF(ctx context.Context, c net.Conn, role mpa.Role) error {
	if err := qp.claim(); err != nil {
		return err
	}
	p, key, peerKey, err := qp.tufStartup(ctx, c, role)
	if err != nil {
		qp.unclaim()
		var re *tuf.RejectError
		if !errors.As(err, &re) {
			c.Close()
		}
		return err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	emss := qp.cfg.EMSS
	if emss <= 0 {
		emss = TCPMaxSeg(c)
	}
	if emss < tuf.MinEMSS+14 {
		c.Close()
		qp.unclaim()
		return fmt.Errorf("qp: EMSS %d leaves no room for a DDP header in a TUF FPDU", emss)
	}
	qp.mu.Lock()
	if qp.closed {
		qp.mu.Unlock()
		c.Close()
		return ErrQPClosed
	}
	qp.conn, qp.params, qp.emss = c, p, emss
	l := &tufLayer{
		mpaLayer: &mpaLayer{conn: c}, key: key, max: tuf.MaxULPDU(emss),
		rx: tuf.NewReceiver(peerKey), rxBuf: make([]byte, 256<<10), deliver: qp.onULPDU,
	}
	// Gathering needs a connection that takes writev: anything else would
	// get one Write per piece (net.Buffers).
	_, l.gather = c.(*net.TCPConn)
	// Either side may send at once: the Initiator has the Reply and sent
	// the Ack, the Responder has read the Ack (package tuf's startup).
	qp.start(l, false)
	return nil
}

// tufStartup exchanges keys, IRD/ORD and private data.
func (qp *QP) tufStartup(ctx context.Context, c net.Conn, role mpa.Role) (*mpa.Params, tuf.Key, tuf.Key, error) {
	key, err := tuf.NewKey(nil)
	if err != nil {
		return nil, 0, 0, err
	}
	spd, err := sessionPD(&qp.cfg.MPA)
	if err != nil {
		return nil, 0, 0, err
	}
	if role == mpa.Initiator {
		reply, err := tuf.Initiate(ctx, c, tuf.StartupFrame{Key: key, PrivateData: spd})
		if err != nil {
			return nil, 0, 0, err
		}
		ird, ord, peerPD, err := parseSessionPD(reply.PrivateData)
		if err != nil {
			return nil, 0, 0, err
		}
		p := &mpa.Params{Role: mpa.Initiator, IRD: qp.cfg.MPA.IRD, ORD: min(qp.cfg.MPA.ORD, ird),
			Local: mpa.StartupFrame{PrivateData: qp.cfg.MPA.PrivateData},
			Peer:  mpa.StartupFrame{Reply: true, Params: mpa.EnhancedParams{IRD: ird, ORD: ord}, PrivateData: peerPD}}
		return p, key, reply.Key, nil
	}
	var peer mpa.StartupFrame
	var perr error
	req, err := tuf.Respond(ctx, c, func(req tuf.StartupFrame) tuf.StartupFrame {
		ird, ord, peerPD, err := parseSessionPD(req.PrivateData)
		if err != nil {
			perr = err
			return tuf.StartupFrame{Reject: true}
		}
		peer = mpa.StartupFrame{Params: mpa.EnhancedParams{IRD: ird, ORD: ord}, PrivateData: peerPD}
		if acc := qp.cfg.MPA.Accept; acc != nil {
			reply, reject := acc(&peer)
			if reject {
				return tuf.StartupFrame{Reject: true, PrivateData: reply[:min(len(reply), MaxSessionPrivateData)]}
			}
			qp.cfg.MPA.PrivateData = reply
			if spd, perr = sessionPD(&qp.cfg.MPA); perr != nil {
				return tuf.StartupFrame{Reject: true}
			}
		}
		return tuf.StartupFrame{Key: key, PrivateData: spd}
	})
	if perr != nil {
		c.Close()
		return nil, 0, 0, perr
	}
	if err != nil {
		return nil, 0, 0, err
	}
	p := &mpa.Params{Role: mpa.Responder, IRD: qp.cfg.MPA.IRD, ORD: min(qp.cfg.MPA.ORD, peer.Params.IRD),
		Local: mpa.StartupFrame{Reply: true, PrivateData: qp.cfg.MPA.PrivateData}, Peer: peer}
	return p, key, req.Key, nil
}

// tufLayer carries a queue pair's DDP segments as TUF FPDUs on a TCP
// connection. The connection's handling (deadlines, drain, half close,
// close, loss) is MPA's: the embedded mpaLayer holds only the connection,
// and tufLayer's own methods do the framing.
type tufLayer struct {
	*mpaLayer
	key     tuf.Key
	max     int // MaxULPDU for the connection's EMSS
	out     net.Buffers
	queued  int  // octets in out
	gather  bool // payloads the work requests own stay where they are (writev)
	rx      *tuf.Receiver
	rxBuf   []byte
	deliver func(seq uint32, ulpdu []byte) error
}

func (l *tufLayer) mulpdu() int { return l.max }

func (l *tufLayer) full(n int) bool {
	return l.queued > 0 && (l.queued+n+tuf.Overhead > txBatch || len(l.out)+3 > txGatherPieces)
}

// queue frames one DDP segment. Gathering, a payload the work request owns
// is not copied: the FPDU goes out as its header (TUF and DDP headers),
// the payload and the trailer, written with writev; the CRC32c runs over
// the payload where it lies.
func (l *tufLayer) queue(hdr, payload []byte, owned bool) error {
	n := len(hdr) + len(payload)
	if n > tuf.MaxULPDUs {
		return fmt.Errorf("%w: %d octets", tuf.ErrTooLong, n)
	}
	if l.gather && owned && len(payload) > 0 {
		head := tuf.Header{Length: uint16(n + tuf.CRCLen), Key: l.key}.Append(make([]byte, 0, tuf.HeaderLen+len(hdr)))
		head = append(head, hdr...)
		sum := crc32c.Update(crc32c.Checksum(head), payload)
		l.out = append(l.out, head, payload, crc32c.AppendWire(nil, sum))
	} else {
		f, err := tuf.AppendFPDU(make([]byte, 0, n+tuf.Overhead), l.key, hdr, payload)
		if err != nil {
			return err
		}
		l.out = append(l.out, f)
	}
	l.queued += n + tuf.Overhead
	return nil
}

// write hands what is framed to the connection in one writev (a TCP
// connection) or one Write per FPDU piece.
func (l *tufLayer) write() (int64, error) {
	if l.queued == 0 {
		return 0, nil
	}
	bufs := l.out
	n, err := bufs.WriteTo(l.conn)
	clear(l.out)
	l.out, l.queued = l.out[:0], 0
	if err != nil {
		return n, &mpa.Error{Code: mpa.ErrTCPClosed, Detail: err.Error()}
	}
	return n, nil
}

func (l *tufLayer) receive(read func(int)) (error, error) {
	n, err := l.conn.Read(l.rxBuf)
	if n > 0 {
		read(n)
		ferr := l.rx.Feed(l.rxBuf[:n], func(off uint64, u []byte) error { return l.deliver(uint32(off), u) })
		if ferr != nil {
			return llpError(ferr), nil
		}
	}
	return nil, err
}

// llpError gives a TUF receive error the LLP error code the Terminate
// carries (RFC 5040 7: layer LLP; the codes are MPA's, RFC 5044 8): a bad
// trailer is a CRC error (2); a wrong key, a Length too short for the
// trailer or a truncated FPDU mean the framing is lost, MPA's code 3.
// Errors from the DDP/RDMAP side pass unchanged.
func llpError(err error) error {
	var te *tuf.Error
	if !errors.As(err, &te) {
		return err
	}
	code := mpa.ErrMarker
	if te.Code == tuf.ErrCRC {
		code = mpa.ErrCRC
	}
	return &mpa.Error{Code: code, Seq: uint32(te.Offset), Detail: "TUF: " + te.Error()}
}
