package verbs

import (
	"errors"
	"io"
	"net"
	"time"

	"github.com/openrnic/rnic/iwarp/mpa"
)

// lowerLayer is the seam between a queue pair's DDP and RDMAP and the Lower
// Layer Protocol that carries its DDP segments (RFC 5041 3, "Reliable
// Delivery LLP Requirements"): MPA over TCP (mpaLayer, the default) or
// another framing. The queue pair segments messages by mulpdu, queues each
// segment, writes batches, and hands every segment received, in the
// sender's order, to its DDP/RDMAP receive dispatcher; the layer owns its
// transport.
//
// The transmit methods are called with the queue pair's txMu held, the
// receive methods with rxMu held: a layer needs no locks of its own for
// either side.
type lowerLayer interface {
	// mulpdu is the largest DDP segment the layer carries (RFC 5041 3,
	// item 1).
	mulpdu() int
	// full reports whether a segment of n octets (DDP header and
	// payload) does not fit the batch being assembled: the transmit side
	// then writes the batch first.
	full(n int) bool
	// queue adds one DDP segment to the batch. owned says payload stays
	// unchanged until the batch is written, so the layer may refer to it
	// instead of copying.
	queue(hdr, payload []byte, owned bool) error
	// write hands the batch to the transport and returns the octets that
	// went out, framing included.
	write() (int64, error)
	// receive waits for the transport's next data, reports the octets
	// read to read before it delivers anything (so that counters a
	// completion's consumer reads include them), then delivers the DDP
	// segments they complete, in the sender's order. It returns the error
	// delivery or the layer's own checks found (ferr: the stream is
	// broken, a Terminate goes to the peer), and the transport's error
	// (err; io.EOF when the peer ended its half in order).
	receive(read func(n int)) (ferr, err error)
	// setReadDeadline interrupts a receive blocked past t (zero: never).
	setReadDeadline(t time.Time) error
	// drain reads and discards for at most d, until the peer closes, so
	// that what was written last (a Terminate) is not lost to a reset,
	// then closes the transport.
	drain(d time.Duration)
	// closeWrite ends this side's half in order, after what was written.
	closeWrite()
	// close tears the transport down.
	close() error
	// lost is the queue pair's error for the transport's error err from
	// receive (io.EOF: the peer ended its half in order).
	lost(err error) error
}

// mpaLayer is MPA Full Operation (RFC 5044) over a TCP connection.
type mpaLayer struct {
	conn   net.Conn
	params *mpa.Params
	max    int // MULPDU for the connection's EMSS
	framer *mpa.Framer
	// out holds the FPDUs framed and not yet written. With gather set,
	// the payloads of Writes and Sends stay in the work requests' Data
	// and out is written with writev; otherwise every FPDU is copied into
	// out's scratch area and written with one Write.
	out    mpa.Gather
	gather bool
	rx     *mpa.Receiver
	rxBuf  []byte
	// deliver takes each ULPDU in one piece.
	deliver func(seq uint32, ulpdu []byte) error
}

// newMPALayer starts MPA Full Operation on c with the negotiated p, framing
// for emss, and delivers received ULPDUs to deliver (in one piece) or
// gather (cut by markers).
func newMPALayer(c net.Conn, p *mpa.Params, emss int, deliver func(uint32, []byte) error, gather func(uint32, [][]byte, int) error) *mpaLayer {
	l := &mpaLayer{
		conn: c, params: p, max: mpa.MULPDU(emss, p.TxMarkers),
		framer:  mpa.NewFramer(p.TxMarkers, p.CRC, 0),
		rx:      mpa.NewReceiver(p.RxMarkers, p.CRC, 0),
		rxBuf:   make([]byte, 256<<10),
		deliver: deliver,
	}
	l.rx.SetGather(gather)
	// Gathering pays only where the kernel gets a few long pieces: without
	// markers an FPDU is three (header, payload, pad and CRC). With
	// markers the payload comes in 508-octet pieces between 4-octet
	// markers, and the kernel copies such a list far slower than one
	// buffer: gathering a 512 KiB batch costs about 1.8 times what
	// copying it and writing the copy does (BenchmarkTCPWrite in
	// iwarp/mpa). Gathering also needs a connection that takes writev:
	// anything else would get one Write per piece, which would break
	// FPDU alignment for WritePerFPDU and cost a system call per piece.
	_, vectored := c.(*net.TCPConn)
	l.gather = vectored && !p.TxMarkers
	return l
}

// txBatch is how many octets the transmit side frames before it writes
// them, when work keeps coming.
const txBatch = 512 << 10

// txGatherPieces bounds the pieces of one batch when gathering: writev
// takes at most 1024.
const txGatherPieces = 1024

func (l *mpaLayer) mulpdu() int { return l.max }

// maxPieces bounds the pieces GatherFPDU adds for a ULPDU of n octets:
// ULPDU_Length and DDP header, payload, pad and CRC, and with markers two
// more per marker.
func (l *mpaLayer) maxPieces(n int) int {
	if l.params.TxMarkers {
		return 3 + 2*(n/(mpa.MarkerInterval-mpa.MarkerLen)+2)
	}
	return 3
}

func (l *mpaLayer) full(n int) bool {
	return l.out.Len() > 0 && (l.out.Len()+l.framer.WireLen(n) > txBatch ||
		l.gather && l.out.Pieces()+l.maxPieces(n) > txGatherPieces)
}

func (l *mpaLayer) queue(hdr, payload []byte, owned bool) error {
	if l.gather && owned {
		return l.framer.GatherFPDU(&l.out, hdr, payload)
	}
	return l.framer.CopyFPDU(&l.out, hdr, payload)
}

// write hands what is framed to the connection: one Write of the copied
// FPDUs, or a writev of the gathered pieces.
func (l *mpaLayer) write() (int64, error) {
	if l.out.Len() == 0 {
		return 0, nil
	}
	n, err := l.out.WriteTo(l.conn)
	if err != nil {
		return n, &mpa.Error{Code: mpa.ErrTCPClosed, Detail: err.Error()}
	}
	return n, nil
}

func (l *mpaLayer) receive(read func(int)) (error, error) {
	n, err := l.conn.Read(l.rxBuf)
	if n > 0 {
		read(n)
		if ferr := l.rx.Feed(l.rxBuf[:n], l.deliver); ferr != nil {
			return ferr, nil
		}
	}
	return nil, err
}

func (l *mpaLayer) setReadDeadline(t time.Time) error { return l.conn.SetReadDeadline(t) }

func (l *mpaLayer) drain(d time.Duration) {
	l.conn.SetReadDeadline(time.Now().Add(d))
	io.Copy(io.Discard, l.conn)
	l.conn.Close()
}

// closeWrite sends FIN after everything written so far.
func (l *mpaLayer) closeWrite() {
	if tc, ok := l.conn.(interface{ CloseWrite() error }); ok {
		tc.CloseWrite()
	}
}

func (l *mpaLayer) close() error { return l.conn.Close() }

func (l *mpaLayer) lost(err error) error {
	if errors.Is(err, io.EOF) {
		return &mpa.Error{Code: mpa.ErrTCPClosed, Detail: "the peer closed the connection"}
	}
	return &mpa.Error{Code: mpa.ErrTCPClosed, Detail: err.Error()}
}
