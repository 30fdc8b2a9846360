package ddp

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

var (
	propSeed = flag.Uint64("ddp.seed", 0, "seed of TestSinkSecurityProperties (0: from the clock)")
	propOps  = flag.Int("ddp.ops", 300000, "segments TestSinkSecurityProperties sends")
)

// The security properties of RFC 5041 8.3.1 and 7.1, checked against a
// model written separately from Sink: for every segment, the model works
// out from first principles whether it may be placed and where; the test
// applies exactly that to a shadow copy of memory and requires the Sink's
// memory to equal the shadow after every operation. So no byte is written
// outside a registered region or posted buffer, through an invalidated or
// deregistered STag, through another PD's or stream's STag, without the
// access right, out of bounds, or after the stream's first error; and the
// error the Sink reports must be the one the model expects.

const (
	propPD     = 1
	propStream = 7
	propQueues = 3
	arenaLen   = 4 << 10 // compared after every operation: small keeps -race fast
)

type mRegion struct {
	stag   uint32
	pd     uint32
	stream uint64
	access Access
	base   uint64
	off, n int
	valid  bool
}

type mBuf struct {
	off, n int
	id     uint64
}

type mQueue struct {
	first uint32
	bufs  []mBuf
}

type model struct {
	regions map[uint32]*mRegion // by index
	queues  [propQueues]mQueue
}

// verdict is what the model expects of one segment.
type verdict struct {
	ok     bool
	access bool // *AccessError
	typ    ErrorType
	code   uint8
	target int // arena offset of the payload, -1 if nothing is written
	buf    *mBuf
}

func (v verdict) String() string {
	switch {
	case v.ok:
		return fmt.Sprintf("ok, write at %d", v.target)
	case v.access:
		return "access error"
	}
	return (&Error{Type: v.typ, Code: v.code}).String()
}

func reject(t ErrorType, c uint8) verdict { return verdict{typ: t, code: c, target: -1} }

func (m *model) judge(h *Header, n int, need Access, inOrder bool) verdict {
	if h.Tagged {
		need |= RemoteWrite // placement writes
		if h.DV != 1 {
			return reject(TypeTaggedBuffer, CodeTaggedInvalidVersion)
		}
		if n == 0 {
			return verdict{ok: true, target: -1}
		}
		r := m.regions[h.STag>>8]
		if r == nil || r.stag != h.STag || !r.valid {
			return reject(TypeTaggedBuffer, CodeInvalidSTag)
		}
		if r.pd != propPD || (r.stream != 0 && r.stream != propStream) {
			return reject(TypeTaggedBuffer, CodeSTagNotAssociated)
		}
		if r.access&need != need {
			return verdict{access: true, target: -1}
		}
		end, carry := bits.Add64(h.TO, uint64(n), 0)
		if carry != 0 {
			return reject(TypeTaggedBuffer, CodeTOWrap)
		}
		if h.TO < r.base || end > r.base+uint64(r.n) {
			return reject(TypeTaggedBuffer, CodeBaseBounds)
		}
		return verdict{ok: true, target: r.off + int(h.TO-r.base)}
	}
	if h.DV != 1 {
		return reject(TypeUntaggedBuffer, CodeUntaggedInvalidVersion)
	}
	if h.QN >= propQueues {
		return reject(TypeUntaggedBuffer, CodeInvalidQN)
	}
	q := &m.queues[h.QN]
	i := -1
	for k := range q.bufs {
		if q.first+uint32(k) == h.MSN {
			i = k
		}
	}
	if i < 0 {
		if h.MSN-q.first < 1<<31 {
			return reject(TypeUntaggedBuffer, CodeNoBuffer)
		}
		return reject(TypeUntaggedBuffer, CodeMSNRange)
	}
	b := &q.bufs[i]
	if int64(h.MO) > int64(b.n) {
		return reject(TypeUntaggedBuffer, CodeInvalidMO)
	}
	if int64(h.MO)+int64(n) > int64(b.n) {
		return reject(TypeUntaggedBuffer, CodeTooLong)
	}
	if inOrder && h.Last && i != 0 {
		return reject(TypeUntaggedBuffer, CodeMSNRange)
	}
	v := verdict{ok: true, target: b.off + int(h.MO), buf: b}
	if n == 0 {
		v.target = -1
	}
	return v
}

func (m *model) deliver(h *Header) {
	if h.Last && !h.Tagged {
		q := &m.queues[h.QN]
		q.bufs = q.bufs[1:]
		q.first++
	}
}

func matches(err error, v verdict) bool {
	if v.ok {
		return err == nil
	}
	if v.access {
		var ae *AccessError
		return errors.As(err, &ae)
	}
	var de *Error
	return errors.As(err, &de) && de.Type == v.typ && de.Code == v.code
}

type propRun struct {
	t      *testing.T
	rng    *rand.Rand
	arena  []byte
	shadow []byte
	tab    *STagTable
	sink   *Sink
	m      *model
	failed error
	nextID uint64
	stats  map[string]int
}

func (p *propRun) reset() {
	p.tab = NewSTagTable()
	p.sink = NewSink(propPD, propStream, p.tab, propQueues)
	p.m = &model{regions: map[uint32]*mRegion{}}
	for i := range p.m.queues {
		p.m.queues[i].first = 1
	}
	p.failed = nil
	for i := 0; i < 6; i++ {
		p.register()
	}
	for i := 0; i < 6; i++ {
		p.post()
	}
}

func (p *propRun) register() {
	r := p.rng
	reg := &mRegion{
		stag:   MakeSTag(uint32(r.IntN(10)), uint8(r.IntN(4))),
		pd:     propPD,
		access: Access(r.IntN(4)),
		n:      r.IntN(300),
	}
	if r.IntN(5) == 0 {
		reg.pd = 2
	}
	switch r.IntN(5) {
	case 0:
		reg.stream = propStream
	case 1:
		reg.stream = propStream + 1
	}
	if r.IntN(4) == 0 { // extra chance of the right to write
		reg.access = RemoteWrite
	}
	reg.off = r.IntN(arenaLen/2 - reg.n)
	switch r.IntN(6) {
	case 0:
		reg.base = math.MaxUint64 - uint64(reg.n) + 1 - uint64(r.IntN(3)) // at the top, or ending at 2^64 (refused)
	case 1:
		reg.base = 0
	default:
		reg.base = r.Uint64() >> r.IntN(64)
	}
	err := p.tab.Register(Region{STag: reg.stag, PD: reg.pd, Stream: reg.stream, Access: reg.access, Base: reg.base, Buf: p.arena[reg.off : reg.off+reg.n : reg.off+reg.n]})
	idx := reg.stag >> 8
	old := p.m.regions[idx]
	_, carry := bits.Add64(reg.base, uint64(reg.n), 0)
	wraps := carry != 0
	wantErr := wraps || old != nil && old.valid
	if (err != nil) != wantErr {
		p.t.Fatalf("Register(%#x base %#x len %d) = %v, model expects error %v", reg.stag, reg.base, reg.n, err, wantErr)
	}
	if err == nil {
		reg.valid = true
		p.m.regions[idx] = reg
	}
}

func (p *propRun) post() {
	r := p.rng
	qn := uint32(r.IntN(propQueues))
	n := r.IntN(200)
	off := arenaLen/2 + r.IntN(arenaLen/2-n)
	p.nextID++
	msn, err := p.sink.Post(qn, p.arena[off:off+n:off+n], p.nextID)
	if err != nil {
		p.t.Fatal(err)
	}
	q := &p.m.queues[qn]
	if want := q.first + uint32(len(q.bufs)); msn != want {
		p.t.Fatalf("Post gave MSN %d, model expects %d", msn, want)
	}
	q.bufs = append(q.bufs, mBuf{off: off, n: n, id: p.nextID})
}

func (p *propRun) pickRegion() *mRegion {
	if len(p.m.regions) == 0 {
		return nil
	}
	k := p.rng.IntN(len(p.m.regions))
	for _, reg := range p.m.regions {
		if k == 0 {
			return reg
		}
		k--
	}
	return nil
}

// validSegment returns a segment the model accepts, when it can find a
// target for one: most of the traffic, so that episodes are long and
// errors interrupt them rather than end them at once.
func (p *propRun) validSegment() (Header, []byte, Access, bool) {
	r := p.rng
	h := Header{DV: 1, Last: r.IntN(3) == 0, Rsvd: uint8(r.IntN(16))}
	var n int
	if r.IntN(2) == 0 {
		var ok []*mRegion
		for _, reg := range p.m.regions {
			if reg.valid && reg.pd == propPD && (reg.stream == 0 || reg.stream == propStream) && reg.access&RemoteWrite != 0 && reg.n > 0 {
				ok = append(ok, reg)
			}
		}
		if len(ok) == 0 {
			return h, nil, 0, false
		}
		reg := ok[r.IntN(len(ok))]
		off := r.IntN(reg.n)
		n = r.IntN(reg.n - off + 1)
		h.Tagged, h.ULPCtrl, h.STag, h.TO = true, 0x40, reg.stag, reg.base+uint64(off)
	} else {
		var qs []uint32
		for qn := range p.m.queues {
			if len(p.m.queues[qn].bufs) > 0 {
				qs = append(qs, uint32(qn))
			}
		}
		if len(qs) == 0 {
			return h, nil, 0, false
		}
		h.QN = qs[r.IntN(len(qs))]
		q := &p.m.queues[h.QN]
		i := r.IntN(len(q.bufs))
		if h.Last {
			i = 0
		}
		b := q.bufs[i]
		mo := r.IntN(b.n + 1)
		n = r.IntN(b.n - mo + 1)
		h.ULPCtrl, h.MSN, h.MO = 0x43, q.first+uint32(i), uint32(mo)
	}
	return h, p.payload(n), RemoteWrite, true
}

func (p *propRun) payload(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(p.rng.Uint32()) | 1 // never the arena's initial zero
	}
	return b
}

// randomSegment returns a segment built to probe every check: stale keys,
// TOs around the bounds and the top of the TO space, MSNs around the
// window, MOs around the buffer, wrong DV, other access rights.
func (p *propRun) randomSegment() (Header, []byte, Access) {
	r := p.rng
	if r.IntN(100) < 93 {
		if h, b, need, ok := p.validSegment(); ok {
			return h, b, need
		}
	}
	var h Header
	h.DV = 1
	if r.IntN(40) == 0 {
		h.DV = uint8(r.IntN(4))
	}
	h.Last = r.IntN(3) == 0
	h.Rsvd = uint8(r.IntN(16))
	n := r.IntN(160)
	if r.IntN(10) == 0 {
		n = 0
	}
	need := RemoteWrite
	switch r.IntN(12) {
	case 0:
		need = RemoteRead
	case 1:
		need = RemoteRead | RemoteWrite
	case 2:
		need = 0
	}
	if r.IntN(2) == 0 {
		h.Tagged = true
		h.ULPCtrl = 0x40
		reg := p.pickRegion()
		if reg == nil || r.IntN(8) == 0 {
			h.STag = r.Uint32() & 0xfff
			h.TO = r.Uint64()
		} else {
			h.STag = reg.stag
			if r.IntN(10) == 0 {
				h.STag ^= uint32(1 + r.IntN(3)) // stale key
			}
			h.TO = reg.base + uint64(r.IntN(reg.n+40)) - 20
			if r.IntN(20) == 0 {
				h.TO = math.MaxUint64 - uint64(r.IntN(200))
			}
		}
	} else {
		h.ULPCtrl = 0x43
		h.QN = uint32(r.IntN(propQueues + 1))
		if r.IntN(50) == 0 {
			h.QN = r.Uint32()
		}
		q := &p.m.queues[h.QN%propQueues]
		h.MSN = q.first + uint32(r.IntN(len(q.bufs)+3)) - 1
		if r.IntN(30) == 0 {
			h.MSN = r.Uint32()
		}
		h.MO = uint32(r.IntN(220))
		if r.IntN(30) == 0 {
			h.MO = r.Uint32()
		}
		if r.IntN(3) == 0 {
			h.MO = 0
		}
	}
	return h, p.payload(n), need
}

func (p *propRun) apply(v verdict, payload []byte) {
	if v.target >= 0 {
		copy(p.shadow[v.target:], payload)
	}
}

func (p *propRun) checkMemory(what string, h *Header) {
	if !bytes.Equal(p.arena, p.shadow) {
		for i := range p.arena {
			if p.arena[i] != p.shadow[i] {
				p.t.Fatalf("%s %v: arena[%d] = %#x, model says %#x", what, h, i, p.arena[i], p.shadow[i])
			}
		}
	}
}

// segment sends one random segment, through Receive or through Place and
// Deliver, and checks the outcome against the model.
func (p *propRun) segment() {
	h, payload, need := p.randomSegment()
	if p.failed != nil {
		var err error
		if p.rng.IntN(2) == 0 {
			_, err = p.sink.Receive(&h, payload, need)
		} else {
			err = p.sink.Place(&h, payload, need)
		}
		if err != p.failed {
			p.t.Fatalf("after the first error %v, %v returned %v", p.failed, h, err)
		}
		p.stats["dropped after error"]++
		p.checkMemory("dropped segment", &h)
		return
	}
	if p.rng.IntN(4) == 0 {
		v := p.m.judge(&h, len(payload), need, false)
		err := p.sink.Place(&h, payload, need)
		if !matches(err, v) {
			p.t.Fatalf("Place(%v, %d octets, %v) = %v, model: %v", h, len(payload), need, err, v)
		}
		if err != nil {
			if p.sink.Err() != nil {
				p.t.Fatal("failed Place recorded an error")
			}
			p.stats["place refused"]++
			p.checkMemory("refused Place", &h)
			p.receive(&h, payload, need)
			return
		}
		p.apply(v, payload)
		p.checkMemory("Place", &h)
		p.stats["placed early"]++
		v = p.m.judge(&h, len(payload), need, true)
		d, err := p.sink.Deliver(&h, len(payload), need)
		p.outcome("Deliver", &h, len(payload), need, v, d, err)
		return
	}
	p.receive(&h, payload, need)
}

func (p *propRun) receive(h *Header, payload []byte, need Access) {
	v := p.m.judge(h, len(payload), need, true)
	what := "Receive"
	var d Delivery
	var err error
	if p.rng.IntN(2) == 0 {
		d, err = p.sink.Receive(h, payload, need)
	} else {
		// The same segment with its payload in pieces, as MPA's gathered
		// delivery hands it over.
		what = "ReceiveV"
		d, err = p.sink.ReceiveV(h, p.cut(payload), len(payload), need)
		p.stats["received in pieces"]++
	}
	if err == nil {
		p.apply(v, payload)
	}
	p.outcome(what, h, len(payload), need, v, d, err)
}

// cut splits b into 1 to 8 pieces at random points (some may be empty).
func (p *propRun) cut(b []byte) [][]byte {
	cuts := []int{0, len(b)}
	for k := p.rng.IntN(8); k > 0; k-- {
		cuts = append(cuts, p.rng.IntN(len(b)+1))
	}
	slices.Sort(cuts)
	pieces := make([][]byte, 0, len(cuts)-1)
	for i := 1; i < len(cuts); i++ {
		pieces = append(pieces, b[cuts[i-1]:cuts[i]])
	}
	return pieces
}

func (p *propRun) outcome(what string, h *Header, n int, need Access, v verdict, d Delivery, err error) {
	if !matches(err, v) {
		p.t.Fatalf("%s(%v, %d octets, %v) = %v, model: %v", what, h, n, need, err, v)
	}
	p.checkMemory(what, h)
	if err != nil {
		p.failed = err
		p.stats["error "+v.String()]++
		return
	}
	p.stats["accepted"]++
	if d.Delivered != h.Last {
		p.t.Fatalf("%s(%v): Delivered = %v", what, h, d.Delivered)
	}
	if d.Delivered && !h.Tagged {
		want := p.m.queues[h.QN].bufs[0]
		if d.ID != want.id || d.MsgLen != h.MO+uint32(n) {
			p.t.Fatalf("%s(%v): delivered buffer %d length %d, model: %d, %d", what, h, d.ID, d.MsgLen, want.id, h.MO+uint32(n))
		}
		p.stats["delivered untagged"]++
	}
	p.m.deliver(h)
}

func TestSinkSecurityProperties(t *testing.T) {
	seed := *propSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -ddp.seed=%d)", seed, seed)
	ops := *propOps
	if testing.Short() {
		ops /= 10
	}
	p := &propRun{t: t, rng: rand.New(rand.NewPCG(seed, 0x5eed)), arena: make([]byte, arenaLen), stats: map[string]int{}}
	p.shadow = bytes.Clone(p.arena)
	p.reset()
	afterError := 0
	for segs := 0; segs < ops; {
		switch k := p.rng.IntN(100); {
		case k < 80:
			p.segment()
			segs++
		case k < 84:
			if reg := p.pickRegion(); reg != nil {
				var err error
				if p.rng.IntN(2) == 0 {
					err = p.tab.Invalidate(reg.stag)
				} else {
					err = p.tab.InvalidateRemote(reg.stag, propPD, propStream)
					if reg.pd != propPD || reg.stream != 0 && reg.stream != propStream {
						if err == nil {
							t.Fatalf("InvalidateRemote of a region not associated with the stream succeeded")
						}
						break
					}
				}
				if (err == nil) != reg.valid {
					t.Fatalf("Invalidate(%#x) = %v, model valid %v", reg.stag, err, reg.valid)
				}
				reg.valid = false
			}
		case k < 88:
			p.register()
		case k < 90:
			if reg := p.pickRegion(); reg != nil {
				must(t, p.tab.Deregister(reg.stag))
				delete(p.m.regions, reg.stag>>8)
			}
		default:
			p.post()
		}
		if p.failed != nil {
			afterError++
			if afterError > 5 {
				afterError = 0
				p.reset()
				p.stats["episodes"]++
			}
		}
	}
	t.Logf("stats: %v", p.stats)
	// The run must have exercised every outcome, or it proves little.
	for _, want := range []string{"accepted", "placed early", "place refused", "delivered untagged", "dropped after error", "error access error", "received in pieces"} {
		if p.stats[want] == 0 {
			t.Errorf("no %q in the run", want)
		}
	}
	for _, e := range []*Error{
		{Type: TypeTaggedBuffer, Code: CodeInvalidSTag}, {Type: TypeTaggedBuffer, Code: CodeBaseBounds},
		{Type: TypeTaggedBuffer, Code: CodeSTagNotAssociated}, {Type: TypeTaggedBuffer, Code: CodeTOWrap},
		{Type: TypeTaggedBuffer, Code: CodeTaggedInvalidVersion}, {Type: TypeUntaggedBuffer, Code: CodeInvalidQN},
		{Type: TypeUntaggedBuffer, Code: CodeNoBuffer}, {Type: TypeUntaggedBuffer, Code: CodeMSNRange},
		{Type: TypeUntaggedBuffer, Code: CodeInvalidMO}, {Type: TypeUntaggedBuffer, Code: CodeTooLong},
		{Type: TypeUntaggedBuffer, Code: CodeUntaggedInvalidVersion},
	} {
		if ops >= 100000 && p.stats["error "+e.String()] == 0 {
			t.Errorf("no %q in the run", e)
		}
	}
}
