package driver

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// Wire connects two devices' network seams directly, QP a of one to QP b
// of the other, with no kernel TCP in between: the wire plays the network
// and both ends' TCP reliability, so it can impair the segments the way a
// network and TCP do (Impair) and the receive datapaths meet out-of-order,
// duplicate and re-cut segments. Sequence numbers stay TCP's stream
// offsets, as the relay's. What each device hands back on its exception
// path goes through the receiving host's Reasm, which keeps out-of-order
// octets and offers them again in order.
//
// The MPA startup still needs a byte stream: run StartMPA for both ends
// over a net.Pipe (or loopback) pair, give each device its QP_RTS, then
// hand both QPs to the wire, which carries the streams from the first
// FPDU's sequence number on (the QPRTS's TxSeq and RxSeq).
//
// Two ways to run it: Step/Run takes the segments of devices that can be
// stepped by hand (the model's TakeSegments) and moves them in bursts,
// deterministically for a seed; Start runs goroutines on the devices'
// SegOut channels, for devices that run on their own (the sim), a burst
// being what a device sent until it paused.
type Wire struct {
	imp  Impair
	side [2]*wireSide
	mu   sync.Mutex // serialises bursts (Step) and the error
	err  error
	stop chan struct{}
	wg   sync.WaitGroup
}

// Impair says how the wire impairs each direction. Every impairment is
// drawn from the wire's seed, so the same seed and the same segments give
// the same deliveries; impairments combine, applied in this order to each
// burst: Middlebox, Cut/Coalesce, Dup, Reorder, Loss.
type Impair struct {
	// Middlebox > 0 re-segments the stream at that fixed size (e.g. 536
	// octets, a minimal MSS), independent of FPDU boundaries, as a
	// re-segmenting middlebox does (RFC 5044 1.1 and 4.1 on why FPDUs
	// may not survive the path intact).
	Middlebox int
	// Cut is the probability that a segment is cut at random points,
	// pieces down to one octet; Coalesce that it is joined to the next
	// (up to MaxCoalesce octets).
	Cut, Coalesce float64
	// Dup is the probability that a segment is delivered twice: half of
	// them as an exact copy a little later, half as a partial copy that
	// overlaps it and perhaps its neighbour.
	Dup float64
	// Reorder > 1 shuffles windows of that many segments.
	Reorder int
	// Loss is the probability that a segment is lost; it is sent again
	// (TCP's retransmission) after LossAfter later segments, or at the
	// end of the burst if fewer follow or LossAfter is 0.
	Loss      float64
	LossAfter int
}

// MaxCoalesce bounds a segment the wire joins from several.
const MaxCoalesce = 8192

func (im Impair) String() string {
	var s []string
	if im.Middlebox > 0 {
		s = append(s, fmt.Sprintf("middlebox%d", im.Middlebox))
	}
	if im.Cut > 0 || im.Coalesce > 0 {
		s = append(s, fmt.Sprintf("cut%g/coalesce%g", im.Cut, im.Coalesce))
	}
	if im.Dup > 0 {
		s = append(s, fmt.Sprintf("dup%g", im.Dup))
	}
	if im.Reorder > 1 {
		s = append(s, fmt.Sprintf("reorder%d", im.Reorder))
	}
	if im.Loss > 0 {
		s = append(s, fmt.Sprintf("loss%g/%d", im.Loss, im.LossAfter))
	}
	if len(s) == 0 {
		return "clean"
	}
	return fmt.Sprint(s)
}

// WireEnd is one end of a wire: a device's QP, the Reasm of its device
// (the receiving host's exception handling), the QP's QP_RTS, and whether
// it is the MPA Responder, which sends no FPDU before it has received one
// (RFC 5044 7.1.3 rule 4): the wire holds its segments until then, as the
// relay does.
type WireEnd struct {
	Reasm     *Reasm
	QPN       uint16
	RxSeq     uint32 // QP_RTS's RxSeq: where the peer's stream starts
	Responder bool
}

type wireSide struct {
	WireEnd
	rng  *rand.Rand // impairs what this side sends
	take func() []Segment
	out  <-chan Segment
	peer *wireSide
	hold bool
	held []Segment
	// got: the peer has delivered at least one segment to this side.
	got bool
	st  WireStats
}

// WireStats counts one direction's segments.
type WireStats struct {
	Sent      uint64 // segments the device sent
	Delivered uint64 // segments given to the peer (copies and pieces included)
	Lost      uint64 // segments lost and sent again
	Dups      uint64 // copies
}

// taker is a network seam that can be stepped by hand (the model's).
type taker interface{ TakeSegments() []Segment }

// NewWire connects a and b. Each Reasm must follow its QP from RxSeq
// (NewWire adds it).
func NewWire(a, b WireEnd, imp Impair, seed uint64) *Wire {
	w := &Wire{imp: imp}
	for i, e := range []WireEnd{a, b} {
		e.Reasm.Add(e.QPN, e.RxSeq)
		w.side[i] = &wireSide{WireEnd: e, rng: rand.New(rand.NewPCG(seed, uint64(i)+1)), hold: e.Responder}
		w.side[i].take = e.Reasm.take
	}
	w.side[0].peer, w.side[1].peer = w.side[1], w.side[0]
	return w
}

// Err returns the wire's first failure, or the Reasms'.
func (w *Wire) Err() error {
	w.mu.Lock()
	err := w.err
	w.mu.Unlock()
	if err != nil {
		return err
	}
	for _, s := range w.side {
		if err := s.Reasm.Err(); err != nil {
			return err
		}
	}
	return nil
}

func (w *Wire) fail(err error) error {
	if w.err == nil {
		w.err = err
	}
	return err
}

// Stats returns the counts of the direction from a (0) or from b (1).
func (w *Wire) Stats(from int) WireStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.side[from].st
}

// Step moves one burst each way of devices stepped by hand (TakeSegments)
// and services both exception rings; it reports whether anything moved.
func (w *Wire) Step() (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	moved := false
	for _, s := range w.side {
		if s.take == nil {
			return false, w.fail(errors.New("driver: Wire.Step needs devices stepped by hand (the model's TakeSegments); use Start for the others"))
		}
		b := s.take()
		if len(b) > 0 {
			moved = true
		}
		if err := w.burst(s, b); err != nil {
			return moved, err
		}
	}
	for _, s := range w.side {
		f := s.Reasm.Stats().Fed
		if err := s.Reasm.Service(); err != nil {
			return moved, w.fail(err)
		}
		if s.Reasm.Stats().Fed != f {
			moved = true
		}
	}
	return moved, nil
}

// Run steps until nothing moves (at most steps bursts each way).
func (w *Wire) Run(steps int) error {
	for range steps {
		moved, err := w.Step()
		if err != nil {
			return err
		}
		if !moved {
			return w.Err()
		}
	}
	return w.fail(fmt.Errorf("driver: the wire still moves segments after %d bursts each way: the devices loop (or give Run more steps)", steps))
}

// burst impairs what side s sent and gives it to the peer.
func (w *Wire) burst(s *wireSide, b []Segment) error {
	for _, seg := range b {
		if seg.QPN != s.QPN {
			return w.fail(fmt.Errorf("driver: the device sent a segment of QP %d on the wire of QP %d: a wire carries one QP of each device", seg.QPN, s.QPN))
		}
	}
	s.st.Sent += uint64(len(b))
	if s.hold {
		// The Responder's segments wait for the Initiator's first
		// (RFC 5044 7.1.3 rule 4).
		s.held = append(s.held, b...)
		if !s.got {
			return nil
		}
		s.hold, b, s.held = false, s.held, nil
	}
	if len(b) == 0 {
		return nil
	}
	p := s.peer
	for _, seg := range w.imp.apply(s.rng, b, &s.st) {
		seg.QPN = p.QPN
		s.st.Delivered++
		if err := p.Reasm.SegIn(seg); err != nil {
			return w.fail(err)
		}
		p.got = true
	}
	if p.hold {
		return w.burst(p, nil)
	}
	return nil
}

// Start runs the wire on the devices' SegOut channels until Stop: per
// direction, a goroutine drains the channel at once (a device never waits
// for the wire) and another takes a burst (what the device sent until it
// paused for quiet), impairs and delivers it; one more services both
// exception rings every poll.
func (w *Wire) Start(quiet, poll time.Duration) {
	w.stop = make(chan struct{})
	for _, s := range w.side {
		q := &segQueue{kick: make(chan struct{}, 1)}
		w.wg.Add(2)
		go func() {
			defer w.wg.Done()
			out := s.Reasm.n.SegOut()
			for {
				select {
				case <-w.stop:
					return
				case seg, ok := <-out:
					if !ok {
						return
					}
					q.push(seg)
				}
			}
		}()
		go w.pump(s, q, quiet)
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		t := time.NewTicker(poll)
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
			}
			for _, s := range w.side {
				if err := s.Reasm.Service(); err != nil {
					w.mu.Lock()
					w.fail(err)
					w.mu.Unlock()
				}
			}
		}
	}()
}

// segQueue holds what a device sent until the wire takes it.
type segQueue struct {
	mu   sync.Mutex
	q    []Segment
	kick chan struct{}
}

func (q *segQueue) push(s Segment) {
	q.mu.Lock()
	q.q = append(q.q, s)
	q.mu.Unlock()
	select {
	case q.kick <- struct{}{}:
	default:
	}
}

func (q *segQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.q)
}

func (q *segQueue) take() []Segment {
	q.mu.Lock()
	defer q.mu.Unlock()
	b := q.q
	q.q = nil
	return b
}

func (w *Wire) pump(s *wireSide, q *segQueue, quiet time.Duration) {
	defer w.wg.Done()
	for {
		select {
		case <-w.stop:
			return
		case <-q.kick:
		}
		// The burst ends when the device pauses for quiet.
		for n := -1; n != q.len() && n < 256; {
			n = q.len()
			select {
			case <-w.stop:
				return
			case <-time.After(quiet):
			}
		}
		b := q.take()
		if len(b) == 0 {
			continue
		}
		w.mu.Lock()
		w.burst(s, b)
		w.mu.Unlock()
	}
}

// Stop ends Start's goroutines.
func (w *Wire) Stop() {
	if w.stop != nil {
		close(w.stop)
		w.wg.Wait()
		w.stop = nil
	}
}

// apply impairs one burst: the device's segments of one QP, in order and
// contiguous in the stream.
func (im Impair) apply(rng *rand.Rand, b []Segment, st *WireStats) []Segment {
	// The burst's octets by sequence number, for re-cutting and partial
	// copies: runs of contiguous segments.
	type run struct {
		seq uint32
		o   []byte
	}
	var runs []run
	for _, s := range b {
		if n := len(runs); n > 0 && runs[n-1].seq+uint32(len(runs[n-1].o)) == s.Seq {
			runs[n-1].o = append(runs[n-1].o, s.Octets...)
			continue
		}
		runs = append(runs, run{s.Seq, append([]byte(nil), s.Octets...)})
	}
	segs := slices.Clone(b)
	if im.Middlebox > 0 {
		segs = segs[:0]
		for _, r := range runs {
			for off := 0; off < len(r.o); off += im.Middlebox {
				segs = append(segs, Segment{QPN: b[0].QPN, Seq: r.seq + uint32(off), Octets: r.o[off:min(off+im.Middlebox, len(r.o))]})
			}
		}
	}
	if im.Cut > 0 || im.Coalesce > 0 {
		var out []Segment
		for i := 0; i < len(segs); i++ {
			s := segs[i]
			for im.Coalesce > 0 && i+1 < len(segs) && rng.Float64() < im.Coalesce &&
				s.Seq+uint32(len(s.Octets)) == segs[i+1].Seq && len(s.Octets)+len(segs[i+1].Octets) <= MaxCoalesce {
				i++
				s.Octets = append(slices.Clip(slices.Clone(s.Octets)), segs[i].Octets...)
			}
			if len(s.Octets) > 1 && rng.Float64() < im.Cut {
				for off := 0; off < len(s.Octets); {
					rem := len(s.Octets) - off
					n := 1 + rng.IntN(rem)
					if rng.IntN(3) == 0 {
						n = 1 + rng.IntN(min(rem, 4)) // down to one octet
					}
					out = append(out, Segment{QPN: s.QPN, Seq: s.Seq + uint32(off), Octets: s.Octets[off : off+n]})
					off += n
				}
				continue
			}
			out = append(out, s)
		}
		segs = out
	}
	if im.Dup > 0 {
		var out []Segment
		var later []struct {
			at int
			s  Segment
		}
		for i, s := range segs {
			out = append(out, s)
			if rng.Float64() >= im.Dup || len(s.Octets) == 0 {
				continue
			}
			st.Dups++
			c := s
			if rng.IntN(2) == 1 {
				// A partial copy: from inside s to inside the octets
				// after it (as far as the run goes).
				for _, r := range runs {
					if int32(s.Seq-r.seq) >= 0 && int32(s.Seq-r.seq) < int32(len(r.o)) {
						lo := int(s.Seq-r.seq) + rng.IntN(len(s.Octets))
						hi := min(len(r.o), lo+1+rng.IntN(len(s.Octets)+64))
						c = Segment{QPN: s.QPN, Seq: r.seq + uint32(lo), Octets: r.o[lo:hi]}
						break
					}
				}
			}
			later = append(later, struct {
				at int
				s  Segment
			}{i + rng.IntN(3), c})
		}
		segs = nil
		for i, s := range out {
			segs = append(segs, s)
			for _, l := range later {
				if l.at == i {
					segs = append(segs, l.s)
				}
			}
		}
		for _, l := range later {
			if l.at >= len(out) {
				segs = append(segs, l.s)
			}
		}
	}
	if im.Reorder > 1 {
		for i := 0; i < len(segs); i += im.Reorder {
			w := segs[i:min(i+im.Reorder, len(segs))]
			rng.Shuffle(len(w), func(a, b int) { w[a], w[b] = w[b], w[a] })
		}
	}
	if im.Loss > 0 {
		type lost struct {
			left int
			s    Segment
		}
		var out []Segment
		var pend []lost
		for _, s := range segs {
			if rng.Float64() < im.Loss {
				st.Lost++
				pend = append(pend, lost{im.LossAfter, s})
				if im.LossAfter == 0 {
					pend[len(pend)-1].left = -1
				}
				continue
			}
			out = append(out, s)
			for i := 0; i < len(pend); i++ {
				if pend[i].left < 0 {
					continue
				}
				if pend[i].left--; pend[i].left == 0 {
					out = append(out, pend[i].s)
					pend = slices.Delete(pend, i, i+1)
					i--
				}
			}
		}
		for _, p := range pend {
			out = append(out, p.s)
		}
		segs = out
	}
	return segs
}
