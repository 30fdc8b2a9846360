package rdmap

import (
	"errors"
	"fmt"
	"sync"

	"github.com/openrnic/rnic/iwarp/ddp"
)

// Stream is the receiving side of one RDMAP Stream: it takes the DDP
// Segments the LLP delivers in order, classifies them (Classify), places
// them through the stream's ddp.Sink, matches Read Responses with the
// outstanding RDMA Read Requests, and reports what each segment completes.
//
// It is the one receive dispatcher of the project: iwarp/verbs' queue
// pair runs every received ULPDU through it, and so does cmd/rnic-oracle,
// the model the hardware's ddp_rx is checked against, so that the two
// cannot drift apart.
//
// Every error is final for the stream (RFC 5040 5.3, RFC 5041 7.1): the
// Sink records it and places nothing more, and every later segment returns
// it. Errors are what the Sink and Classify return (*Error, *ddp.Error,
// *ddp.AccessError, ...: ErrorFrom turns each into the Terminate to send),
// or, after a Terminate from the peer, that *Terminate.
//
// Receive, ReceiveV and ReceiveSegment must be called from one goroutine
// at a time (the LLP's, in stream order); ExpectRead and TakeReads may be
// called from any goroutine.
type Stream struct {
	sink  *ddp.Sink
	stags *ddp.STagTable
	pd    uint32
	id    uint64

	// UncheckedReadResponses places Read Responses as plain tagged
	// segments, without matching them against the outstanding Read
	// Requests. That is the model of a receiver that keeps no read queue:
	// the hardware's ddp_rx, which leaves the match to the device around
	// it. Queue pairs leave it false.
	UncheckedReadResponses bool

	mu  sync.Mutex
	orq []*OutstandingRead // RDMA Read Requests sent, oldest first (RFC 5040 5.2.1)

	join   []byte   // ReceiveV's scratch for ULPDUs it joins
	pieces [][]byte // ReceiveV's scratch for a Write's payload pieces
}

// NewStream returns the receive dispatcher of the RDMAP Stream whose Data
// Sink is sink: its tagged segments are placed through stags, and Send
// with Invalidate may invalidate STags of protection domain pd bound to
// the stream with id (or to no stream).
func NewStream(sink *ddp.Sink, stags *ddp.STagTable, pd uint32, id uint64) *Stream {
	return &Stream{sink: sink, stags: stags, pd: pd, id: id}
}

// Sink returns the stream's Data Sink.
func (s *Stream) Sink() *ddp.Sink { return s.sink }

// OutstandingRead is an RDMA Read Request sent on the stream and not yet
// fully answered: the Data Sink buffer it named, and how much of the
// response has arrived.
type OutstandingRead struct {
	SinkSTag uint32
	SinkTO   uint64
	Len      uint64 // the RDMA Read Message Size
	Got      uint64 // octets of the Read Response placed so far
	// Ref is the requester's own reference (a work request), returned
	// with the read when it completes or is taken back.
	Ref any
}

// ExpectRead records a Read Request about to be sent: Read Responses must
// answer the outstanding Read Requests in the order they were sent
// (RFC 5040 5.2.1), so call it in sending order, before the request can
// reach the peer.
func (s *Stream) ExpectRead(r *OutstandingRead) {
	s.mu.Lock()
	s.orq = append(s.orq, r)
	s.mu.Unlock()
}

// TakeReads removes and returns every outstanding read, oldest first: the
// requests a failed stream will never see answered.
func (s *Stream) TakeReads() []*OutstandingRead {
	s.mu.Lock()
	defer s.mu.Unlock()
	orq := s.orq
	s.orq = nil
	return orq
}

func (s *Stream) oldestRead() *OutstandingRead {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.orq) == 0 {
		return nil
	}
	return s.orq[0]
}

func (s *Stream) popRead() {
	s.mu.Lock()
	s.orq = s.orq[1:]
	s.mu.Unlock()
}

// EventKind says what a received segment completed.
type EventKind uint8

const (
	// EventNone: the segment was placed and completes nothing yet (not
	// the last of its message).
	EventNone EventKind = iota
	// EventWrite: the last segment of an RDMA Write was placed. RDMAP
	// reports nothing to the Data Sink's ULP for it (RFC 5040 5.1).
	EventWrite
	// EventReadResponse: the last segment of a Read Response was placed;
	// Read is the request it answered, whole (nil for unchecked Read
	// Responses).
	EventReadResponse
	// EventReadRequest: a Read Request was delivered, ReadRequest is its
	// body; the Data Source answers it. Delivery holds the QN 1 buffer it
	// arrived in, which the Data Source posts again once it has taken the
	// request (one buffer per IRD credit).
	EventReadRequest
	// EventSend: a Send variant was delivered into Delivery's buffer;
	// Invalidated is the STag a Send with Invalidate invalidated.
	EventSend
	// EventTerminate: the peer's Terminate was delivered; the stream
	// ends (RFC 5040 5.3) and every later segment returns Terminate as
	// the stream's error.
	EventTerminate
)

// Event is what a segment completed.
type Event struct {
	Kind   EventKind
	Opcode Opcode
	Header ddp.Header
	// Placed says the Sink took the segment: its payload is in the Data
	// Sink's buffer. It can be set alongside an error found after
	// delivery (a Send with Invalidate that may not invalidate, a Read
	// Request of the wrong length): the payload landed, the stream ends.
	Placed bool
	// Len is the segment's payload length.
	Len int
	// Delivery is the Sink's delivery of an untagged message.
	Delivery    ddp.Delivery
	Read        *OutstandingRead
	ReadRequest ReadRequest
	Terminate   *Terminate
	Invalidated uint32
}

// Receive processes one ULPDU (a whole DDP Segment) in stream order.
func (s *Stream) Receive(ulpdu []byte) (Event, error) {
	if err := s.sink.Err(); err != nil {
		return Event{}, err
	}
	seg, err := Classify(ulpdu)
	if err != nil {
		return Event{}, s.sink.Fail(err)
	}
	return s.ReceiveSegment(&seg, len(ulpdu))
}

// ReceiveV processes one ULPDU of n octets given in pieces, in order (an
// MPA receiver's gathered delivery, markers removed). An RDMA Write whose
// DDP header lies whole in the first piece is placed from the pieces
// (ddp.Sink.ReceiveV), saving the copy that would join them; any other
// ULPDU is joined into the stream's scratch memory and goes through
// Receive, so both ways check, place and fail alike.
func (s *Stream) ReceiveV(pieces [][]byte, n int) (Event, error) {
	if err := s.sink.Err(); err != nil {
		return Event{}, err
	}
	if len(pieces) > 0 {
		if h, payload, err := ddp.ParseHeader(pieces[0]); err == nil {
			if op, cerr := ClassifyHeader(&h); cerr == nil && op == OpWrite {
				s.pieces = append(append(s.pieces[:0], payload), pieces[1:]...)
				d, err := s.sink.ReceiveV(&h, s.pieces, n-h.Len(), op.PlacementAccess())
				clear(s.pieces) // keep no reference to the caller's buffer
				if err != nil {
					return Event{}, err
				}
				return tagged(op, &h, d, nil, n-h.Len()), nil
			}
		}
	}
	s.join = s.join[:0]
	for _, p := range pieces {
		s.join = append(s.join, p...)
	}
	return s.Receive(s.join)
}

// ReceiveSegment processes a segment that Classify has already taken
// apart; segLen is the whole segment's length (the MPA ULPDU_Length), for
// the Terminate. A caller that needs to look at the classified segment
// before it is placed (the oracle, to tell where its payload goes) calls
// Classify and then this.
func (s *Stream) ReceiveSegment(seg *Segment, segLen int) (Event, error) {
	if err := s.sink.Err(); err != nil {
		return Event{}, err
	}
	h, op := &seg.Header, seg.Opcode
	switch op {
	case OpWrite:
		d, err := s.sink.Receive(h, seg.Payload, op.PlacementAccess())
		if err != nil {
			return Event{}, err
		}
		return tagged(op, h, d, nil, len(seg.Payload)), nil
	case OpReadResponse:
		return s.readResponse(seg, segLen)
	}
	d, err := s.sink.Receive(h, seg.Payload, 0)
	if err != nil {
		return Event{}, err
	}
	ev := Event{Opcode: op, Header: *h, Delivery: d, Placed: true, Len: len(seg.Payload)}
	if !d.Delivered {
		return ev, nil
	}
	switch {
	case op == OpReadRequest:
		rr, err := DeliveredReadRequest(&d)
		if err != nil {
			return ev, s.sink.Fail(withSegment(err, h, segLen))
		}
		ev.Kind, ev.ReadRequest = EventReadRequest, rr
	case op == OpTerminate:
		t, err := ParsePeerTerminate(d.Buf[:d.MsgLen])
		if err != nil {
			// A Terminate we cannot read still ends the stream.
			t = Terminate{Layer: LayerRDMAP, EType: ETypeRemoteOperation, Code: CodeUnspecified}
		}
		s.sink.Fail(&t)
		ev.Kind, ev.Terminate = EventTerminate, &t
	default: // the Send variants
		ev.Kind = EventSend
		if op.Invalidates() {
			if err := Invalidate(s.stags, s.pd, s.id, &d.Header); err != nil {
				return ev, s.sink.Fail(withSegment(err, h, segLen))
			}
			ev.Invalidated = d.Header.ULPInfo
		}
	}
	return ev, nil
}

// readResponse places a Read Response segment into the sink buffer of the
// oldest outstanding Read Request, which it must continue exactly: the
// request's STag, the next TO, no more than the RDMA Read Message Size
// (RFC 5040 5.2.1). The last segment completes the read only if the whole
// size arrived.
func (s *Stream) readResponse(seg *Segment, segLen int) (Event, error) {
	h := &seg.Header
	if s.UncheckedReadResponses {
		d, err := s.sink.Receive(h, seg.Payload, OpReadResponse.PlacementAccess())
		if err != nil {
			return Event{}, err
		}
		return tagged(OpReadResponse, h, d, nil, len(seg.Payload)), nil
	}
	r := s.oldestRead()
	n := uint64(len(seg.Payload))
	if r == nil || h.STag != r.SinkSTag || h.TO != r.SinkTO+r.Got || r.Got+n > r.Len {
		return Event{}, s.sink.Fail(unexpectedReadResponse(h, segLen, r))
	}
	if h.Last && r.Got+n != r.Len {
		// A Read Response must carry the whole RDMA Read Message Size:
		// a Read that ends short has not read what was asked, and must
		// not complete as a success with fewer octets (the rest of the
		// sink buffer would silently keep its old contents).
		e := &Error{Layer: LayerRDMAP, Type: ETypeRemoteProtection, Code: CodeBaseBounds, SegmentLen: segLen, DDPHeader: h.Append(nil),
			Detail: fmt.Sprintf("the Read Response ended (L=1) after %d of the %d octets its RDMA Read Request asked for", r.Got+n, r.Len)}
		return Event{}, s.sink.Fail(e)
	}
	d, err := s.sink.Receive(h, seg.Payload, OpReadResponse.PlacementAccess())
	if err != nil {
		return Event{}, err
	}
	r.Got += n
	if !h.Last {
		return Event{Opcode: OpReadResponse, Header: *h, Placed: true, Len: int(n)}, nil
	}
	s.popRead()
	return tagged(OpReadResponse, h, d, r, int(n)), nil
}

func tagged(op Opcode, h *ddp.Header, d ddp.Delivery, r *OutstandingRead, n int) Event {
	ev := Event{Opcode: op, Header: *h, Delivery: d, Placed: true, Len: n}
	if d.Delivered {
		ev.Kind, ev.Read = EventWrite, r
		if op == OpReadResponse {
			ev.Kind = EventReadResponse
		}
	}
	return ev
}

// withSegment adds the offending segment's header and length to an *Error
// found after delivery, for the Terminate.
func withSegment(err error, h *ddp.Header, segLen int) error {
	var re *Error
	if errors.As(err, &re) {
		if re.SegmentLen == 0 {
			re.SegmentLen = segLen
		}
		if re.DDPHeader == nil {
			re.DDPHeader = h.Append(nil)
		}
	}
	return err
}

// unexpectedReadResponse reports a Read Response that does not continue
// the oldest outstanding Read Request (RFC 5040 5.2.1): RDMAP Remote
// Operation Error, Unexpected OpCode when no Read is outstanding; otherwise
// a Remote Protection Error on the sink STag, since the segment aims at a
// buffer the request did not name.
func unexpectedReadResponse(h *ddp.Header, segLen int, r *OutstandingRead) *Error {
	e := &Error{Layer: LayerRDMAP, SegmentLen: segLen, DDPHeader: h.Append(nil)}
	switch {
	case r == nil:
		e.Type, e.Code = ETypeRemoteOperation, CodeUnexpectedOpcode
		e.Detail = "a Read Response with no RDMA Read Request outstanding"
	case h.STag != r.SinkSTag:
		e.Type, e.Code = ETypeRemoteProtection, CodeInvalidSTag
		e.Detail = fmt.Sprintf("Read Response to STag %#08x, the oldest Read Request named %#08x", h.STag, r.SinkSTag)
	default:
		e.Type, e.Code = ETypeRemoteProtection, CodeBaseBounds
		e.Detail = fmt.Sprintf("Read Response at TO %#x, expected %#x within %d octets", h.TO, r.SinkTO+r.Got, r.Len)
	}
	return e
}
