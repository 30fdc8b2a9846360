package ddp

import (
	"fmt"
	"sync"
)

// Placement and Delivery at the Data Sink.
//
// RFC 5041 separates Placement, writing a segment's payload into its
// buffer, from Delivery, telling the ULP that a message is complete: a
// Data Sink MAY place segments out of order and more than once, but MUST
// deliver each message once and in order (5.3, 5.4). MPA over TCP gives
// DDP its segments in order, except that an RNIC may find FPDUs through
// markers in TCP segments that arrive out of order and place them early.
// The Sink therefore has two ways in:
//
//   - Receive, for segments in stream order (the usual path): validate,
//     place, and deliver the message if the segment has L=1. Errors are
//     final.
//
//   - Place then Deliver, for an LLP that places early. Place validates
//     against the current state and places, in any order, any number of
//     times, but never delivers and never makes an error final: a segment
//     found out of order may be refused now and be fine once the segments
//     before it have been processed (a buffer posted in between). The
//     caller keeps a refused segment and hands it to Receive when its turn
//     comes. Deliver is then called in stream order for every segment that
//     Place accepted, with the payload length only: it re-runs every check
//     against the state at that point of the stream (final errors, as in
//     Receive) and delivers, without touching memory again.
//
// An early Place can write into a buffer that a message earlier in the
// stream, not yet processed, would have invalidated (RDMAP's Send with
// Invalidate). That write happened, in time, while the STag was valid; the
// in-order Deliver then reports the error. Streams that cannot accept this
// use Receive only.

// Delivery is the result of processing one segment in stream order.
type Delivery struct {
	// Delivered is set when the segment had L=1: its DDP Message is
	// complete and, the segments being processed in order, Delivered to the
	// ULP now (5.4).
	Delivered bool

	// Header is the segment's header: on the L segment it carries the
	// message's RsvdULP fields (ULPCtrl, ULPInfo) that 5.4 says DDP must
	// provide on Delivery, and its STag or QN and MSN.
	Header Header

	// For a delivered untagged message: its ULP Message Length (the MO plus
	// the payload length of the L segment, 5.4), the posted buffer that
	// holds it (the message is Buf[:MsgLen]) and the id given to Post.
	MsgLen uint32
	Buf    []byte
	ID     uint64
}

// posted is one buffer posted to an untagged queue.
type posted struct {
	buf []byte
	id  uint64
}

// queue is an untagged buffer queue: a ring of posted buffers, the first
// of which has MSN first, the others consecutive MSNs (4.3, 7.1 item 5).
type queue struct {
	ring  []posted
	head  int
	n     int
	first uint32
}

func (q *queue) at(i int) *posted { return &q.ring[(q.head+i)%len(q.ring)] }

func (q *queue) push(p posted) {
	if q.n == len(q.ring) {
		ring := make([]posted, max(8, 2*len(q.ring)))
		for i := 0; i < q.n; i++ {
			ring[i] = *q.at(i)
		}
		q.ring, q.head = ring, 0
	}
	q.ring[(q.head+q.n)%len(q.ring)] = p
	q.n++
}

func (q *queue) pop() posted {
	p := *q.at(0)
	*q.at(0) = posted{}
	q.head = (q.head + 1) % len(q.ring)
	q.n--
	q.first++
	return p
}

// Sink is the receiving half of one DDP Stream. It is safe for concurrent
// use: a ULP may Post buffers while another goroutine receives.
type Sink struct {
	mu     sync.Mutex
	pd     uint32
	stream uint64
	stags  *STagTable
	queues []queue
	err    error
}

// NewSink returns the Data Sink of the DDP Stream with id stream in
// Protection Domain pd, placing tagged segments through stags and
// untagged ones into queues QN 0 .. nqueues-1 (RDMAP uses 3: Send, Read
// Request, Terminate). Every queue starts at MSN 1 (4.3). stream is the
// id regions are bound to (Region.Stream); use a non-zero id, 0 means
// "any stream" in a Region.
func NewSink(pd uint32, stream uint64, stags *STagTable, nqueues int) *Sink {
	s := &Sink{pd: pd, stream: stream, stags: stags, queues: make([]queue, nqueues)}
	for i := range s.queues {
		s.queues[i].first = FirstMSN
	}
	return s
}

// Post appends buf to untagged queue qn and returns the MSN of the message
// it will receive: buffers take consecutive MSNs in the order they are
// posted (4.3, 7.1 item 5). id is returned in the Delivery.
func (s *Sink) Post(qn uint32, buf []byte, id uint64) (msn uint32, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if uint64(qn) >= uint64(len(s.queues)) {
		return 0, fmt.Errorf("ddp: Post to QN %d of a sink with %d queues", qn, len(s.queues))
	}
	q := &s.queues[qn]
	if q.n >= 1<<31-1 {
		return 0, fmt.Errorf("ddp: QN %d has 2^31 buffers posted", qn)
	}
	q.push(posted{buf: buf, id: id})
	return q.first + uint32(q.n-1), nil
}

// StartMSN sets the MSN the next message on queue qn will have, for a
// stream taken over after its first messages were received elsewhere (a
// host's software path took the peer's RTR, RFC 6581, before a device took
// the stream over): RFC 5041 4.3 counts from 1 on a fresh stream only. It
// fails once a buffer is posted on the queue.
func (s *Sink) StartMSN(qn uint32, msn uint32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if uint64(qn) >= uint64(len(s.queues)) {
		return fmt.Errorf("ddp: StartMSN on QN %d of a sink with %d queues", qn, len(s.queues))
	}
	if s.queues[qn].n != 0 {
		return fmt.Errorf("ddp: StartMSN on QN %d with %d buffers posted; set it before the first Post", qn, s.queues[qn].n)
	}
	s.queues[qn].first = msn
	return nil
}

// Window returns the MSN range of QN qn's posted buffers, first .. first+
// count-1: the legal MSNs of 7.1 item 5. first is the MSN the next
// delivered message on the queue will have.
func (s *Sink) Window(qn uint32) (first uint32, count int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if uint64(qn) >= uint64(len(s.queues)) {
		return 0, 0
	}
	return s.queues[qn].first, s.queues[qn].n
}

// Err returns the first error of the stream, or nil.
func (s *Sink) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Fail records err as the stream's error if it has none yet, so that the
// Sink places nothing more, and returns the stream's first error. A ULP
// or LLP uses it for errors found outside DDP (an RDMAP opcode error, an
// MPA CRC error, a segment too short for its header).
func (s *Sink) Fail(err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
	return s.err
}

// Receive processes one segment in stream order: it validates the segment
// (7.1; for a tagged one, the buffer must grant need and RemoteWrite,
// which placement always requires), places its payload and, if
// L=1, delivers the message. On the first error it places nothing of the
// segment and from then on drops every segment silently (7.1), returning
// that first error each time; the error is a *Error, *AccessError or the
// error given to Fail.
func (s *Sink) Receive(h *Header, payload []byte, need Access) (Delivery, error) {
	one := [1][]byte{payload}
	return s.ReceiveV(h, one[:], len(payload), need)
}

// ReceiveV is Receive for a payload of n octets given in pieces, in order
// (the ULPDU as the MPA Receiver's gathered delivery has it, markers
// removed): the same checks on the whole segment, then each piece placed
// after the one before it. n must be the pieces' total; nothing is written
// past n octets from where the segment goes.
func (s *Sink) ReceiveV(h *Header, pieces [][]byte, n int, need Access) (Delivery, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return Delivery{}, s.err
	}
	if err := s.check(h, pieces, n, need, true, true); err != nil {
		s.err = err
		return Delivery{}, err
	}
	return s.deliver(h, n), nil
}

// ReceiveSegment parses a whole DDP Segment and processes it as Receive
// does. A segment too short for its header is a final *ShortHeaderError.
// need is used only if the segment is tagged.
func (s *Sink) ReceiveSegment(seg []byte, need Access) (Delivery, error) {
	h, payload, err := ParseHeader(seg)
	if err != nil {
		return Delivery{}, s.Fail(err)
	}
	return s.Receive(&h, payload, need)
}

// Place validates one segment against the current state and places its
// payload, for an LLP that places segments before their turn (see the
// comment at the top of this file). It neither delivers nor records an
// error: an error means "not placed now", and the caller hands the segment
// to Receive in stream order instead. After the stream's first error it
// places nothing and returns that error.
func (s *Sink) Place(h *Header, payload []byte, need Access) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	one := [1][]byte{payload}
	return s.check(h, one[:], len(payload), need, true, false)
}

// Deliver completes, in stream order, the processing of a segment whose
// payload of n octets Place has already placed: it re-runs the checks of
// Receive against the stream's state at this point, with errors final as
// in Receive, and delivers the message if the segment has L=1. It does not
// write memory.
func (s *Sink) Deliver(h *Header, n int, need Access) (Delivery, error) {
	if n < 0 {
		panic("ddp: Deliver with negative payload length")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return Delivery{}, s.err
	}
	if err := s.check(h, nil, n, need, false, true); err != nil {
		s.err = err
		return Delivery{}, err
	}
	return s.deliver(h, n), nil
}

// check validates a segment with n octets of payload and, if write is
// set, places payload. inOrder adds the checks that only make sense in
// stream order. Errors carry the segment's header and length.
func (s *Sink) check(h *Header, pieces [][]byte, n int, need Access, write, inOrder bool) error {
	var err error
	if h.Tagged {
		err = s.checkTagged(h, pieces, n, need, write)
	} else {
		err = s.checkUntagged(h, pieces, n, write, inOrder)
	}
	if err == nil {
		return nil
	}
	segLen := h.Len() + n
	switch e := err.(type) {
	case *Error:
		e.Header, e.SegmentLen = h.Append(nil), segLen
	case *AccessError:
		e.Header, e.SegmentLen = h.Append(nil), segLen
	}
	return err
}

func (s *Sink) checkTagged(h *Header, pieces [][]byte, n int, need Access, write bool) error {
	// 4.1: DV must be the version in use. Checked on every segment, the
	// zero-length ones included (5.2: "Only the DDP Control and RsvdULP
	// Fields MUST be valid for a zero length Tagged DDP Segment").
	if h.DV != Version {
		return taggedError(CodeTaggedInvalidVersion, "DV %d", h.DV)
	}
	// 5.2: "The STag and TO fields MUST NOT be checked for a zero-length
	// Tagged DDP Message."
	if n == 0 {
		return nil
	}
	if s.stags == nil {
		return taggedError(CodeInvalidSTag, "STag %#08x: the stream has no STag table", h.STag)
	}
	// Placement writes: whatever else the ULP asks for, the buffer must
	// grant remote write (8.3.1 item 5: a ULP can revoke write access),
	// so a ULP that passes no right cannot open a read-only buffer.
	need |= RemoteWrite
	if !write {
		_, err := s.stags.Check(h.STag, s.pd, s.stream, h.TO, uint64(n), need)
		return err
	}
	return s.stags.place(h.STag, s.pd, s.stream, h.TO, pieces, n, need)
}

// checkUntagged runs the untagged checks of 7.1 in this order: DV, QN
// valid (item 1), MSN has a buffer (items 2 and 5), MO in the buffer (item
// 3), MO plus length in the buffer (item 4). They run for zero-length
// segments too: such a segment still completes a message that consumes a
// buffer, and its MO becomes the message length.
func (s *Sink) checkUntagged(h *Header, pieces [][]byte, n int, write, inOrder bool) error {
	if h.DV != Version {
		return untaggedError(CodeUntaggedInvalidVersion, "DV %d", h.DV)
	}
	if uint64(h.QN) >= uint64(len(s.queues)) {
		return untaggedError(CodeInvalidQN, "QN %d, the stream has %d queues", h.QN, len(s.queues))
	}
	q := &s.queues[h.QN]
	// 7.1 item 5: the legal MSNs run from the first available buffer's to
	// the last one's. Which of the two MSN errors: an MSN ahead of the
	// window (in serial number arithmetic modulo 2^32) asks for a buffer
	// that has not been posted, "no buffer available"; one behind it
	// belongs to a message already delivered, "MSN range is not valid".
	d := h.MSN - q.first
	if uint64(d) >= uint64(q.n) {
		if int32(d) >= 0 {
			return untaggedError(CodeNoBuffer, "QN %d MSN %d, buffers posted for MSN %d..%d", h.QN, h.MSN, q.first, q.first+uint32(q.n)-1)
		}
		return untaggedError(CodeMSNRange, "QN %d MSN %d is before the first undelivered MSN %d", h.QN, h.MSN, q.first)
	}
	p := q.at(int(d))
	size := uint64(len(p.buf))
	if uint64(h.MO) > size {
		return untaggedError(CodeInvalidMO, "QN %d MSN %d MO %d beyond the %d-octet buffer", h.QN, h.MSN, h.MO, size)
	}
	if uint64(h.MO)+uint64(n) > size {
		return untaggedError(CodeTooLong, "QN %d MSN %d: %d octets at MO %d exceed the %d-octet buffer", h.QN, h.MSN, n, h.MO, size)
	}
	// 5.3, 5.4: messages are delivered in the order they were sent, and a
	// Data Source sends the L segment of a message after all its other
	// segments and sends messages in order. So in stream order the L
	// segment of a queue's message must be that of its oldest undelivered
	// message; an L for a later MSN would ask DDP to deliver out of order.
	if inOrder && h.Last && d != 0 {
		return untaggedError(CodeMSNRange, "QN %d: last segment of MSN %d before MSN %d was delivered", h.QN, h.MSN, q.first)
	}
	if write {
		dst := p.buf[h.MO:][:n]
		for _, piece := range pieces {
			dst = dst[copy(dst, piece):]
		}
	}
	return nil
}

// deliver does the in-order bookkeeping of a valid segment.
func (s *Sink) deliver(h *Header, n int) Delivery {
	d := Delivery{Header: *h}
	if !h.Last {
		return d
	}
	d.Delivered = true
	if !h.Tagged {
		p := s.queues[h.QN].pop()
		d.MsgLen = h.MO + uint32(n)
		d.Buf, d.ID = p.buf, p.id
	}
	return d
}
