package main

import (
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/openrnic/rnic/iwarp/ddp"
	"github.com/openrnic/rnic/iwarp/rdmap"
)

// The DDP/RDMAP receive op, for hw/rtl/ddp_rx.v: what the Go stack places
// in host memory and delivers for a sequence of configuration steps and
// received ULPDUs, in the order the hardware sees them.
//
// Host memory is one byte slice; every STag region and posted buffer is a
// sub-slice of it at its host offset, so the Go stack's own copies
// (ddp.STagTable and ddp.Sink) write the memory the testbench compares with
// the hardware's. Connection c is the DDP Stream with id c+1 (0 means "any
// stream" in a ddp.Region) in its own ddp.Sink with RDMAP's 3 queues.
//
// Each ULPDU goes, in the order of its first octet, through rdmap.Stream,
// the receive dispatcher iwarp/verbs' queue pairs use too: rdmap.Classify,
// Sink.Receive with the opcode's placement access (which validates all of
// RFC 5041 7.1 before it places a byte), then on delivery: for a Send with
// Invalidate rdmap.Invalidate, for a Read Request rdmap.DeliveredReadRequest,
// for a Terminate the end of the stream. Any error is final for the stream
// (Sink.Fail): the Sink places nothing after it. The one difference from a
// queue pair: ddp_rx keeps no read queue, so Read Responses are placed as
// tagged segments without the match against outstanding Read Requests
// (rdmap.Stream's UncheckedReadResponses); that match is the device's.
//
// The MPA verdicts gate delivery only, as in the hardware (hw/README.md,
// "Placement is cut through"): a ULPDU is placed as its header allows
// whatever its verdict, but its completion or error, and those of every
// later ULPDU of the stream, are reported only while the verdicts are good.
// A bad verdict is reported as the LLP error rdmap.MPAError gives (layer
// LLP, type 0, the MPA error number) in place of whatever the ULPDU itself
// would have reported, and ends the stream's reports; a ULPDU without a
// verdict (the stream failed before it) reports nothing.

func init() {
	register("ddp_place",
		`DDP/RDMAP receive placement through iwarp/ddp's STagTable and Sink: {mem_size, ring_depth?, ops: [{stag}|{conn}|{post}|{ulpdu: {conn, data, verdict?}}|{early: {conn, data}}]} -> {mem, events: [{conn, ulpdu, kind, ...}]}`,
		opDDPPlace)
}

type placeSTag struct {
	Index  *uint32 `json:"index"`
	Valid  bool    `json:"valid"`
	Key    uint8   `json:"key"`
	PD     uint32  `json:"pd"`
	Conn   *int    `json:"conn"` // bound connection; absent or null: any connection of the PD
	Access uint8   `json:"access"`
	Base   uint64  `json:"base"`
	Len    int     `json:"len"`
	Host   int     `json:"host"`
}

type placeConn struct {
	Conn *int   `json:"conn"`
	PD   uint32 `json:"pd"`
}

type placePost struct {
	Conn *int   `json:"conn"`
	QN   uint32 `json:"qn"`
	Addr int    `json:"addr"`
	Len  int    `json:"len"`
	ID   uint64 `json:"id"`
}

type placeULPDU struct {
	Conn    *int    `json:"conn"`
	Data    *string `json:"data"`
	Verdict *uint8  `json:"verdict"` // absent: no verdict ever came
}

// placeEarly is a validated ULPDU found out of order (mpa_rx_ooo), to be
// placed before its turn and delivered later, in stream order, as a ulpdu.
type placeEarly struct {
	Conn *int    `json:"conn"`
	Data *string `json:"data"`
}

type placeOp struct {
	STag  *placeSTag  `json:"stag"`
	Conn  *placeConn  `json:"conn"`
	Post  *placePost  `json:"post"`
	ULPDU *placeULPDU `json:"ulpdu"`
	Early *placeEarly `json:"early"`
}

// placeEvent is one completion or error, as the hardware reports it.
type placeEvent struct {
	Conn  int    `json:"conn"`
	ULPDU int    `json:"ulpdu"` // index among the connection's ULPDUs
	Kind  string `json:"kind"`  // "completion" or "error"

	// Completions.
	Opcode  uint8  `json:"opcode"`
	Tagged  bool   `json:"tagged"`
	STag    uint32 `json:"stag"`     // tagged: the segment's STag
	QN      uint32 `json:"qn"`       // untagged
	MSN     uint32 `json:"msn"`      // untagged
	Len     uint32 `json:"len"`      // untagged: the ULP Message Length
	ID      uint64 `json:"id"`       // untagged: the posted buffer's id
	InvSTag uint32 `json:"inv_stag"` // Send with Invalidate: the STag invalidated
	RR      string `json:"rr"`       // Read Request: its 28-octet body

	// Errors (RFC 5040 section 7 layer, type, code).
	Layer  uint8  `json:"layer"`
	EType  uint8  `json:"etype"`
	Code   uint8  `json:"code"`
	Detail string `json:"detail,omitempty"`
	// What the Terminate for the error copies (RFC 5040 4.8,
	// rdmap.Error.Terminate): M with the segment length, D with the DDP
	// header (hex), R with the Read Request header (hex).
	TermM   bool   `json:"term_m"`
	TermD   bool   `json:"term_d"`
	TermR   bool   `json:"term_r"`
	SegLen  uint16 `json:"seg_len"`
	DDPHdr  string `json:"ddp_hdr"`
	RDMAHdr string `json:"rdma_hdr"`
}

// errEvent is the error event for e, with what its Terminate copies.
func errEvent(e *rdmap.Error, detail string) placeEvent {
	t := e.Terminate()
	return placeEvent{Kind: "error", Layer: uint8(e.Layer), EType: e.Type, Code: e.Code, Detail: detail,
		TermM: t.M, TermD: t.D, TermR: t.R, SegLen: t.SegmentLen,
		DDPHdr: hex.EncodeToString(t.DDPHeader), RDMAHdr: hex.EncodeToString(t.RDMAHeader)}
}

type placeReply struct {
	Mem    string       `json:"mem"`
	Events []placeEvent `json:"events"`
}

type placeStream struct {
	rx   *rdmap.Stream
	sink *ddp.Sink
	n    int // ULPDUs seen
}

// newPlaceStream is connection c's stream in protection domain pd: DDP
// Stream id c+1, RDMAP's queues, Read Responses unchecked (see above).
func newPlaceStream(stags *ddp.STagTable, c int, pd uint32) placeStream {
	sink := ddp.NewSink(pd, uint64(c)+1, stags, rdmap.NumQueues)
	rx := rdmap.NewStream(sink, stags, pd, uint64(c)+1)
	rx.UncheckedReadResponses = true
	return placeStream{rx: rx, sink: sink}
}

// record is what one ULPDU reports once its verdict is good.
type record struct {
	conn, index int
	verdict     *uint8
	event       *placeEvent // nil: nothing to report
	final       bool        // the stream reports nothing after this one
	restart     bool        // not a ULPDU: the connection was (re)configured
}

func opDDPPlace(params []byte) (any, error) {
	var p struct {
		MemSize   *int      `json:"mem_size"`
		RingDepth int       `json:"ring_depth"`
		Ops       []placeOp `json:"ops"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.MemSize == nil || *p.MemSize < 0 || *p.MemSize > 1<<28 {
		return nil, errors.New(`"mem_size" missing or not in 0..2^28`)
	}
	mem := make([]byte, *p.MemSize)
	span := func(what string, off, n int) ([]byte, error) {
		if off < 0 || n < 0 || off > len(mem) || n > len(mem)-off {
			return nil, fmt.Errorf("%s: %d octets at %d outside the %d-octet memory", what, n, off, len(mem))
		}
		return mem[off : off+n : off+n], nil
	}
	stags := ddp.NewSTagTable()
	registered := map[uint32]uint32{} // index -> STag in the table
	streams := map[int]*placeStream{}
	var records []record

	for i, o := range p.Ops {
		set := 0
		for _, x := range []bool{o.STag != nil, o.Conn != nil, o.Post != nil, o.ULPDU != nil, o.Early != nil} {
			if x {
				set++
			}
		}
		if set != 1 {
			return nil, fmt.Errorf("ops[%d]: want exactly one of stag, conn, post, ulpdu, early", i)
		}
		switch {
		case o.STag != nil:
			s := o.STag
			if s.Index == nil || *s.Index >= 1<<24 {
				return nil, fmt.Errorf("ops[%d]: stag index missing or not 24 bits", i)
			}
			// The hardware overwrites the entry: the old region goes.
			if old, ok := registered[*s.Index]; ok {
				if err := stags.Deregister(old); err != nil {
					return nil, fmt.Errorf("ops[%d]: %v", i, err)
				}
				delete(registered, *s.Index)
			}
			if !s.Valid {
				continue // an invalid entry: every STag with its index is invalid
			}
			buf, err := span(fmt.Sprintf("ops[%d] stag", i), s.Host, s.Len)
			if err != nil {
				return nil, err
			}
			r := ddp.Region{STag: ddp.MakeSTag(*s.Index, s.Key), PD: s.PD, Access: ddp.Access(s.Access), Base: s.Base, Buf: buf}
			if s.Conn != nil {
				r.Stream = uint64(*s.Conn) + 1
			}
			if err := stags.Register(r); err != nil {
				return nil, fmt.Errorf("ops[%d]: %v", i, err)
			}
			registered[*s.Index] = r.STag
		case o.Conn != nil:
			if o.Conn.Conn == nil || *o.Conn.Conn < 0 {
				return nil, fmt.Errorf("ops[%d]: conn missing", i)
			}
			c := *o.Conn.Conn
			st := newPlaceStream(stags, c, o.Conn.PD)
			streams[c] = &st
			records = append(records, record{conn: c, restart: true})
		case o.Post != nil:
			po := o.Post
			if po.Conn == nil {
				return nil, fmt.Errorf("ops[%d]: post without conn", i)
			}
			st := streams[*po.Conn]
			if st == nil {
				return nil, fmt.Errorf("ops[%d]: post to connection %d, which is not configured", i, *po.Conn)
			}
			buf, err := span(fmt.Sprintf("ops[%d] post", i), po.Addr, po.Len)
			if err != nil {
				return nil, err
			}
			if _, n := st.sink.Window(po.QN); p.RingDepth > 0 && n >= p.RingDepth {
				continue // the hardware ignores a post to a full ring
			}
			if _, err := st.sink.Post(po.QN, buf, po.ID); err != nil {
				return nil, fmt.Errorf("ops[%d]: %v", i, err)
			}
		case o.ULPDU != nil:
			u := o.ULPDU
			if u.Conn == nil {
				return nil, fmt.Errorf("ops[%d]: ulpdu without conn", i)
			}
			data, err := decodeHex("data", u.Data)
			if err != nil {
				return nil, fmt.Errorf("ops[%d]: %v", i, err)
			}
			c := *u.Conn
			st := streams[c]
			rec := record{conn: c, verdict: u.Verdict}
			if st == nil {
				// Not configured: the hardware drops it, reporting nothing.
				rec.index = -1
			} else {
				rec.index = st.n
				st.n++
				ev, final := receive(st, data)
				if ev != nil {
					ev.Conn, ev.ULPDU = c, rec.index
				}
				rec.event, rec.final = ev, final
			}
			records = append(records, rec)
		case o.Early != nil:
			e := o.Early
			if e.Conn == nil {
				return nil, fmt.Errorf("ops[%d]: early without conn", i)
			}
			data, err := decodeHex("data", e.Data)
			if err != nil {
				return nil, fmt.Errorf("ops[%d]: %v", i, err)
			}
			if st := streams[*e.Conn]; st != nil {
				earlyPlace(st, data)
			}
		}
	}

	// Delivery, in each stream's order, while the verdicts are good.
	events := []placeEvent{}
	done := map[int]bool{}
	for _, r := range records {
		if r.restart {
			done[r.conn] = false // a new stream on the connection
			continue
		}
		if r.index < 0 || done[r.conn] {
			continue
		}
		switch {
		case r.verdict == nil:
			done[r.conn] = true
		case *r.verdict != 0:
			e := rdmap.MPAError(*r.verdict, nil, 0)
			pe := errEvent(e, e.String())
			pe.Conn, pe.ULPDU = r.conn, r.index
			events = append(events, pe)
			done[r.conn] = true
		default:
			if r.event != nil {
				events = append(events, *r.event)
			}
			done[r.conn] = r.final
		}
	}
	return placeReply{Mem: hex.EncodeToString(mem), Events: events}, nil
}

// receive runs one ULPDU through the stream's dispatcher and returns what
// it reports once its verdict is good (nil: nothing) and whether the
// stream ends with it.
func receive(st *placeStream, ulpdu []byte) (*placeEvent, bool) {
	if st.sink.Err() != nil {
		return nil, false // the stream failed earlier: dropped silently
	}
	ev, err := st.rx.Receive(ulpdu)
	if err != nil {
		return errorEvent(err), true
	}
	return report(ev)
}

// earlyPlace places a ULPDU found out of order, as an LLP that places
// segments before their turn does (iwarp/ddp's Sink.Place): RDMAP's
// classification, then every check of RFC 5041 7.1 against the stream's
// state now, then the write. It changes nothing else: no delivery, no
// queue advance, no invalidation, and a ULPDU that fails a check is simply
// not placed early (its turn in stream order reports the error, if it is
// still one then). After the stream's first error nothing is placed.
func earlyPlace(st *placeStream, ulpdu []byte) {
	seg, err := rdmap.Classify(ulpdu)
	if err != nil {
		return
	}
	h := seg.Header
	_ = st.sink.Place(&h, seg.Payload, seg.Opcode.PlacementAccess())
}

// errorEvent reports the error that ended a stream: RDMAP's layer, type
// and code for the Terminate, and the headers and length it copies.
func errorEvent(err error) *placeEvent {
	e := rdmap.ErrorFrom(err)
	pe := errEvent(e, e.Error())
	return &pe
}

// report is what the dispatcher's event for a segment reports: nothing
// until its message is delivered, then a completion (a Read Request's
// body, the STag a Send with Invalidate invalidated), and for a Terminate
// the end of the stream.
func report(ev rdmap.Event) (*placeEvent, bool) {
	if ev.Kind == rdmap.EventNone {
		return nil, false
	}
	h := &ev.Header
	pe := &placeEvent{Kind: "completion", Opcode: uint8(ev.Opcode), Tagged: h.Tagged}
	if h.Tagged {
		pe.STag = h.STag
		return pe, false
	}
	d := &ev.Delivery
	pe.QN, pe.MSN, pe.Len, pe.ID = h.QN, h.MSN, d.MsgLen, d.ID
	switch ev.Kind {
	case rdmap.EventReadRequest:
		pe.RR = hex.EncodeToString(ev.ReadRequest.Append(nil))
	case rdmap.EventTerminate:
		return pe, true
	case rdmap.EventSend:
		pe.InvSTag = ev.Invalidated
	}
	return pe, false
}
