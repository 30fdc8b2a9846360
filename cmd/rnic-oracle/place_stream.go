package main

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/openrnic/rnic/iwarp/ddp"
	"github.com/openrnic/rnic/iwarp/rdmap"
)

// ddp_place_stream: ddp_place in batches, for long runs (the ddp_rx
// security soak). A named session keeps the host memory, the STag table,
// the streams and their delivery state from one request to the next, so a
// testbench sends each batch of configuration steps and ULPDUs once, as it
// feeds them to the hardware, and gets back what that batch did:
//
//   - events: the completions and errors the batch's ULPDUs report, in
//     delivery order, with ddp_place's fields and the index of the ULPDU's
//     op in the batch ("op");
//   - places: for every ulpdu and early op of the batch, in order, [host
//     address, octets] of the host memory the Go stack placed its payload
//     in ([x, 0]: none). Everything the hardware may write for that ULPDU
//     is in that range;
//   - drops: the ulpdu ops of connections that are not enabled (never
//     configured, or configured with enable false): the hardware drops them
//     and reports each on m_drop;
//   - refused: the posts the hardware refuses (m_post_err): reason 1 the
//     queue's ring is full (ring_depth buffers posted and not consumed),
//     reason 2 QN 3 (there is no such queue), reason 3 the connection is
//     not enabled;
//   - mem: the whole host memory, hex, when the request asks for it.
//
// The steps are ddp_place's ({stag}, {conn}, {post}, {ulpdu}, {early})
// with two additions: conn takes "enable" (default true; false disables the
// connection: its ULPDUs are dropped), and {poison: {addr, len}} marks host
// memory that refuses writes with an error response (the AXI slave answers
// SLVERR to a burst that writes any octet of it and writes none of those
// octets). A ULPDU whose placement touches poisoned memory places the rest,
// and reports an RDMAP Local Catastrophic Error (layer 0, type 0, code 0,
// what rdmap.ErrorFrom gives for a host error) in place of its own report,
// unless its verdict is bad; the stream places and reports nothing after it.
// (An early ULPDU whose placement would touch poisoned memory is refused
// as a request error: which later ULPDU the hardware charges the error
// response to depends on when the response comes.)
//
// A ULPDU may arrive in pieces with other steps between them, as the
// hardware takes configuration between any two pieces: {ulpdu: {...,
// upto: k}} says only its first k octets (the header among them) have come
// when the next steps are taken, and {more: {conn, upto?}} that its octets
// up to upto (absent: all) have come since; nothing else of the connection
// comes until the ULPDU is whole. The checks of RFC 5041 7.1 are made on
// the first piece, against the tables as they are then. A tagged ULPDU
// that passed them and places payload is cut by any write of its STag's
// entry (an invalidation, or an overwrite with another key, PD, binding,
// range or the same ones) taken before its last octet: the entry it was
// checked against is gone, and DDP places nothing through an STag it has
// not validated (draft-ietf-rddp-ddp-07 8.1: validated "before any data
// is Placed"); so no payload octet that comes after the write is placed
// (those that came before stay in host memory), and the ULPDU reports
// Invalid STag (RFC 5041 7.2: DDP layer, Tagged Buffer Error 1, code 0)
// in place of its own report (unless its verdict is bad), which ends the
// stream as any error does. Its place range is the whole ULPDU's.
//
// A session starts with "open": {mem_size, ring_depth?} (which restarts a
// session of the same name) and ends with "close": true or at the end of
// the oracle's input.

func init() {
	register("ddp_place_stream",
		`ddp_place in batches on a named session: {session, open?: {mem_size, ring_depth?}, ops: [{stag}|{conn: {conn, pd, enable?}}|{post}|{ulpdu: {conn, data, verdict?, upto?}}|{more: {conn, upto?}}|{early}|{poison: {addr, len}}], mem?, close?} -> {events, places, drops, refused, mem?}`,
		opDDPPlaceStream)
}

type streamConnOp struct {
	Conn   *int   `json:"conn"`
	PD     uint32 `json:"pd"`
	Enable *bool  `json:"enable"`
}

type streamPoison struct {
	Addr int `json:"addr"`
	Len  int `json:"len"`
}

// streamULPDU is ddp_place's ulpdu with upto: the octets that have come
// before the next steps (absent: all of them).
type streamULPDU struct {
	placeULPDU
	Upto *int `json:"upto"`
}

// streamMore: more octets of a connection's ULPDU that came in pieces.
type streamMore struct {
	Conn *int `json:"conn"`
	Upto *int `json:"upto"`
}

type streamOp struct {
	STag   *placeSTag    `json:"stag"`
	Conn   *streamConnOp `json:"conn"`
	Post   *placePost    `json:"post"`
	ULPDU  *streamULPDU  `json:"ulpdu"`
	More   *streamMore   `json:"more"`
	Early  *placeEarly   `json:"early"`
	Poison *streamPoison `json:"poison"`
}

// openULPDU is a ULPDU of which only the first upto octets have come
// (streamULPDU.Upto): its report waits for its last octet, and a write of
// its STag's entry before then cuts it.
type openULPDU struct {
	op, index int
	verdict   *uint8
	upto, n   int
	// Tagged and placed: the STag index it places through, its payload's
	// host range and that memory as it was before the ULPDU.
	cuttable  bool
	stagIndex uint32
	place     [2]int
	before    []byte
	ev        *placeEvent
	final     bool
	hostErr   bool
}

// ddpHeaderTagged is the length of a tagged DDP header with RDMAP's
// control octet (RFC 5041 4.2): where a tagged ULPDU's payload begins.
const ddpHeaderTagged = 14

type streamEvent struct {
	placeEvent
	Op int `json:"op"` // index of the ULPDU's op in its batch
}

type streamDrop struct {
	Op   int `json:"op"`
	Conn int `json:"conn"`
}

type streamRefused struct {
	Op     int    `json:"op"`
	Conn   int    `json:"conn"`
	QN     uint32 `json:"qn"`
	ID     uint64 `json:"id"`
	Reason int    `json:"reason"` // 1 ring full, 2 QN 3, 3 connection not enabled
}

type streamReply struct {
	Events  []streamEvent   `json:"events"`
	Places  [][2]int        `json:"places"`
	Drops   []streamDrop    `json:"drops"`
	Refused []streamRefused `json:"refused"`
	Mem     string          `json:"mem,omitempty"`
}

// sessStream is a connection's stream in a session: ddp_place's
// placeStream, the host address of each posted buffer by queue and MSN,
// and its delivery state.
type sessStream struct {
	placeStream
	posted map[[2]uint32]int // {qn, msn} -> host address
	done   bool              // reports nothing more (error, Terminate, no verdict)
}

type placeSession struct {
	mem       []byte
	ringDepth int
	stags     *ddp.STagTable
	// index -> the registered region's STag and host address
	registered map[uint32]struct {
		stag uint32
		host int
	}
	streams map[int]*sessStream // nil or absent: not enabled
	poison  [][2]int            // [addr, end)
	open    map[int]*openULPDU  // by connection: ULPDUs in pieces, not yet whole
}

var placeSessions = map[string]*placeSession{}

// errHostWrite is the host's error response to a write (AXI SLVERR or
// DECERR); rdmap.ErrorFrom makes it a Local Catastrophic Error.
var errHostWrite = errors.New("host memory refused a write (error response)")

func opDDPPlaceStream(params []byte) (any, error) {
	var p struct {
		Session *string `json:"session"`
		Open    *struct {
			MemSize   *int `json:"mem_size"`
			RingDepth int  `json:"ring_depth"`
		} `json:"open"`
		Ops   []streamOp `json:"ops"`
		Mem   bool       `json:"mem"`
		Close bool       `json:"close"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.Session == nil {
		return nil, errors.New(`"session" missing`)
	}
	if p.Open != nil {
		if p.Open.MemSize == nil || *p.Open.MemSize < 0 || *p.Open.MemSize > 1<<28 {
			return nil, errors.New(`open: "mem_size" missing or not in 0..2^28`)
		}
		placeSessions[*p.Session] = &placeSession{
			mem:       make([]byte, *p.Open.MemSize),
			ringDepth: p.Open.RingDepth,
			stags:     ddp.NewSTagTable(),
			registered: map[uint32]struct {
				stag uint32
				host int
			}{},
			streams: map[int]*sessStream{},
			open:    map[int]*openULPDU{},
		}
	}
	ps := placeSessions[*p.Session]
	if ps == nil {
		return nil, fmt.Errorf("no session %q (open it first)", *p.Session)
	}
	reply := streamReply{Events: []streamEvent{}, Places: [][2]int{}, Drops: []streamDrop{}, Refused: []streamRefused{}}
	for i, o := range p.Ops {
		if err := ps.step(i, o, &reply); err != nil {
			return nil, fmt.Errorf("ops[%d]: %v", i, err)
		}
	}
	if p.Mem {
		reply.Mem = hex.EncodeToString(ps.mem)
	}
	if p.Close {
		delete(placeSessions, *p.Session)
	}
	return reply, nil
}

func (ps *placeSession) span(what string, off, n int) ([]byte, error) {
	if off < 0 || n < 0 || off > len(ps.mem) || n > len(ps.mem)-off {
		return nil, fmt.Errorf("%s: %d octets at %d outside the %d-octet memory", what, n, off, len(ps.mem))
	}
	return ps.mem[off : off+n : off+n], nil
}

func (ps *placeSession) step(i int, o streamOp, reply *streamReply) error {
	set := 0
	for _, x := range []bool{o.STag != nil, o.Conn != nil, o.Post != nil, o.ULPDU != nil, o.More != nil, o.Early != nil, o.Poison != nil} {
		if x {
			set++
		}
	}
	if set != 1 {
		return errors.New("want exactly one of stag, conn, post, ulpdu, more, early, poison")
	}
	switch {
	case o.Early != nil:
		e := o.Early
		if e.Conn == nil {
			return errors.New("early without conn")
		}
		data, err := decodeHex("data", e.Data)
		if err != nil {
			return err
		}
		place := [2]int{0, 0}
		if st := ps.streams[*e.Conn]; st != nil {
			place = ps.placeEarly(st, data)
		}
		if place[1] > 0 && ps.poisoned(place) {
			return fmt.Errorf("early: placing %d octets at %#x touches poisoned memory (not modelled)", place[1], place[0])
		}
		reply.Places = append(reply.Places, place)
	case o.Poison != nil:
		if _, err := ps.span("poison", o.Poison.Addr, o.Poison.Len); err != nil {
			return err
		}
		ps.poison = append(ps.poison, [2]int{o.Poison.Addr, o.Poison.Addr + o.Poison.Len})
	case o.STag != nil:
		s := o.STag
		if s.Index == nil || *s.Index >= 1<<24 {
			return errors.New("stag index missing or not 24 bits")
		}
		ps.cut(*s.Index)
		// The hardware overwrites the entry: the old region goes.
		if old, ok := ps.registered[*s.Index]; ok {
			if err := ps.stags.Deregister(old.stag); err != nil {
				return err
			}
			delete(ps.registered, *s.Index)
		}
		if !s.Valid {
			return nil
		}
		buf, err := ps.span("stag", s.Host, s.Len)
		if err != nil {
			return err
		}
		r := ddp.Region{STag: ddp.MakeSTag(*s.Index, s.Key), PD: s.PD, Access: ddp.Access(s.Access), Base: s.Base, Buf: buf}
		if s.Conn != nil {
			r.Stream = uint64(*s.Conn) + 1
		}
		if err := ps.stags.Register(r); err != nil {
			return err
		}
		ps.registered[*s.Index] = struct {
			stag uint32
			host int
		}{r.STag, s.Host}
	case o.Conn != nil:
		if o.Conn.Conn == nil || *o.Conn.Conn < 0 {
			return errors.New("conn missing")
		}
		c := *o.Conn.Conn
		if ps.open[c] != nil {
			return fmt.Errorf("conn %d (re)configured inside a ULPDU that came in pieces (not modelled)", c)
		}
		if o.Conn.Enable != nil && !*o.Conn.Enable {
			delete(ps.streams, c)
			return nil
		}
		ps.streams[c] = &sessStream{
			placeStream: newPlaceStream(ps.stags, c, o.Conn.PD),
			posted:      map[[2]uint32]int{},
		}
	case o.Post != nil:
		po := o.Post
		if po.Conn == nil {
			return errors.New("post without conn")
		}
		buf, err := ps.span("post", po.Addr, po.Len)
		if err != nil {
			return err
		}
		ref := streamRefused{Op: i, Conn: *po.Conn, QN: po.QN, ID: po.ID}
		st := ps.streams[*po.Conn]
		if st == nil {
			ref.Reason = 3
			reply.Refused = append(reply.Refused, ref)
			return nil
		}
		if po.QN >= rdmap.NumQueues {
			ref.Reason = 2
			reply.Refused = append(reply.Refused, ref)
			return nil
		}
		if _, n := st.sink.Window(po.QN); ps.ringDepth > 0 && n >= ps.ringDepth {
			ref.Reason = 1
			reply.Refused = append(reply.Refused, ref)
			return nil
		}
		msn, err := st.sink.Post(po.QN, buf, po.ID)
		if err != nil {
			return err
		}
		st.posted[[2]uint32{po.QN, msn}] = po.Addr
	case o.More != nil:
		m := o.More
		if m.Conn == nil || ps.open[*m.Conn] == nil {
			return errors.New("more: no ULPDU of that connection came in pieces")
		}
		ou := ps.open[*m.Conn]
		upto := ou.n
		if m.Upto != nil {
			upto = *m.Upto
		}
		if upto <= ou.upto || upto > ou.n {
			return fmt.Errorf("more: upto %d not in %d+1..%d", upto, ou.upto, ou.n)
		}
		ou.upto = upto
		if upto == ou.n {
			delete(ps.open, *m.Conn)
			ps.deliver(*m.Conn, ou.op, ou.index, ou.verdict, ou.ev, ou.final, ou.hostErr, reply)
		}
	case o.ULPDU != nil:
		u := o.ULPDU
		if u.Conn == nil {
			return errors.New("ulpdu without conn")
		}
		data, err := decodeHex("data", u.Data)
		if err != nil {
			return err
		}
		c := *u.Conn
		if ps.open[c] != nil {
			return fmt.Errorf("ulpdu of conn %d inside its ULPDU that came in pieces", c)
		}
		var ou *openULPDU
		if u.Upto != nil && *u.Upto < len(data) {
			if *u.Upto < ddpHeaderTagged {
				return fmt.Errorf("ulpdu: upto %d is inside the header", *u.Upto)
			}
			ou = &openULPDU{op: i, verdict: u.Verdict, upto: *u.Upto, n: len(data)}
		}
		st := ps.streams[c]
		if st == nil {
			reply.Drops = append(reply.Drops, streamDrop{Op: i, Conn: c})
			reply.Places = append(reply.Places, [2]int{0, 0})
			if ou != nil {
				ou.index = -1
				ps.open[c] = ou
			}
			return nil
		}
		index := st.n
		st.n++
		var before []byte
		if ou != nil {
			before = append([]byte(nil), ps.mem...)
		}
		ev, final, place := ps.receive(st, data)
		reply.Places = append(reply.Places, place)
		hostErr := false
		if place[1] > 0 && ps.poisoned(place) {
			hostErr = true
			st.sink.Fail(errHostWrite)
		}
		if ou != nil {
			ou.index, ou.ev, ou.final, ou.hostErr = index, ev, final, hostErr
			if place[1] > 0 && data[0]&0x80 != 0 {
				ou.cuttable = true
				ou.stagIndex = ddp.STagIndex(binary.BigEndian.Uint32(data[2:6]))
				ou.place = place
				ou.before = before[place[0] : place[0]+place[1]]
			}
			ps.open[c] = ou
			return nil
		}
		ps.deliver(c, i, index, u.Verdict, ev, final, hostErr, reply)
	}
	return nil
}

// deliver reports a ULPDU of connection c (op i of the batch, the
// stream's ULPDU index) in stream order, while the verdicts are good.
func (ps *placeSession) deliver(c, i, index int, verdict *uint8, ev *placeEvent, final, hostErr bool, reply *streamReply) {
	st := ps.streams[c]
	if index < 0 || st == nil || st.done {
		return
	}
	switch {
	case verdict == nil:
		st.done = true
	case *verdict != 0:
		e := rdmap.MPAError(*verdict, nil, 0)
		pe := errEvent(e, e.String())
		pe.Conn, pe.ULPDU = c, index
		reply.Events = append(reply.Events, streamEvent{pe, i})
		st.done = true
	case hostErr:
		e := rdmap.ErrorFrom(errHostWrite)
		pe := errEvent(e, e.Error())
		pe.Conn, pe.ULPDU = c, index
		reply.Events = append(reply.Events, streamEvent{pe, i})
		st.done = true
	default:
		if ev != nil {
			ev.Conn, ev.ULPDU = c, index
			reply.Events = append(reply.Events, streamEvent{*ev, i})
		}
		st.done = final
	}
}

// cut ends the placement of every tagged ULPDU in pieces that places
// through STag index idx (a write of its entry is being taken): its
// payload octets that have not come yet are put back as they were, and it
// reports Invalid STag, which fails its stream (see the top of the file).
func (ps *placeSession) cut(idx uint32) {
	for c, ou := range ps.open {
		if !ou.cuttable || ou.stagIndex != idx {
			continue
		}
		ou.cuttable = false
		k := ou.upto - ddpHeaderTagged // payload octets placed
		copy(ps.mem[ou.place[0]+k:ou.place[0]+ou.place[1]], ou.before[k:])
		err := &ddp.Error{Type: ddp.TypeTaggedBuffer, Code: ddp.CodeInvalidSTag,
			Detail: fmt.Sprintf("STag index %#x rewritten after %d of the ULPDU's %d payload octets", idx, k, ou.place[1])}
		if st := ps.streams[c]; st != nil {
			st.sink.Fail(err)
		}
		ou.ev, ou.final = errorEvent(err), true
	}
}

// poisoned reports whether place overlaps poisoned memory (receive has
// put back the poisoned octets it overwrote: the host refused them).
func (ps *placeSession) poisoned(place [2]int) bool {
	hit := false
	for _, pz := range ps.poison {
		lo, hi := max(pz[0], place[0]), min(pz[1], place[0]+place[1])
		if lo < hi {
			hit = true
		}
	}
	return hit
}

// receive is ddp_place's receive (rdmap.Stream, as iwarp/verbs' queue
// pairs run it) that also returns the host memory the segment's payload
// went to: the region's host address plus TO - base for a tagged segment,
// the posted buffer's plus MO for an untagged one, when the Sink took it.
func (ps *placeSession) receive(st *sessStream, ulpdu []byte) (*placeEvent, bool, [2]int) {
	s := st.sink
	none := [2]int{0, 0}
	if s.Err() != nil {
		return nil, false, none // the stream failed earlier: dropped silently
	}
	seg, err := rdmap.Classify(ulpdu)
	if err != nil {
		return errorEvent(s.Fail(err)), true, none
	}
	h := seg.Header
	// Where the payload will go, read before it is placed (delivery may
	// pop the buffer); used only if the Sink takes the segment.
	place := ps.where(st, &h, len(seg.Payload))
	saved := ps.savePoison()
	ev, err := st.rx.ReceiveSegment(&seg, len(ulpdu))
	if !ev.Placed {
		return errorEvent(err), true, none
	}
	if place[1] != len(seg.Payload) {
		panic(fmt.Sprintf("ddp_place_stream: placed %d octets and cannot tell where", len(seg.Payload)))
	}
	ps.restorePoison(saved)
	if ev.Delivery.Delivered && !h.Tagged {
		delete(st.posted, [2]uint32{h.QN, h.MSN})
	}
	if err != nil {
		// Placed, then refused at delivery (an invalidation it may not
		// make, a malformed Read Request): the range stands.
		return errorEvent(err), true, place
	}
	pe, end := report(ev)
	return pe, end, place
}

// where is the host memory a segment's n payload octets go to if the
// checks pass: the region's host address plus TO - base for a tagged
// segment, the posted buffer's plus MO for an untagged one.
func (ps *placeSession) where(st *sessStream, h *ddp.Header, n int) [2]int {
	if n == 0 {
		return [2]int{0, 0}
	}
	if h.Tagged {
		if reg, ok := ps.registered[ddp.STagIndex(h.STag)]; ok {
			if r, ok := ps.stags.Lookup(reg.stag); ok {
				return [2]int{reg.host + int(h.TO-r.Base), n}
			}
		}
	} else if addr, ok := st.posted[[2]uint32{h.QN, h.MSN}]; ok {
		return [2]int{addr + int(h.MO), n}
	}
	return [2]int{0, 0}
}

// placeEarly is ddp_place's earlyPlace (Sink.Place: no delivery, no
// report, nothing but the write) that also returns where it wrote.
func (ps *placeSession) placeEarly(st *sessStream, ulpdu []byte) [2]int {
	none := [2]int{0, 0}
	if st.sink.Err() != nil {
		return none
	}
	seg, err := rdmap.Classify(ulpdu)
	if err != nil {
		return none
	}
	h := seg.Header
	place := ps.where(st, &h, len(seg.Payload))
	if err := st.sink.Place(&h, seg.Payload, seg.Opcode.PlacementAccess()); err != nil {
		return none
	}
	if place[1] != len(seg.Payload) {
		panic(fmt.Sprintf("ddp_place_stream: placed %d octets early and cannot tell where", len(seg.Payload)))
	}
	return place
}

func (ps *placeSession) savePoison() [][]byte {
	if len(ps.poison) == 0 {
		return nil
	}
	out := make([][]byte, len(ps.poison))
	for i, pz := range ps.poison {
		out[i] = append([]byte(nil), ps.mem[pz[0]:pz[1]]...)
	}
	return out
}

func (ps *placeSession) restorePoison(saved [][]byte) {
	for i, pz := range ps.poison {
		copy(ps.mem[pz[0]:pz[1]], saved[i])
	}
}
