package driver

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/openrnic/rnic/driver/hostif"
)

// Reasm is the receiving host's side of a device's exception path
// (docs/device.md, "Event ring and exception ring"): the segments the
// device's receive datapath does not take in order come back on the
// exception ring, and the host must lose none of them. Reasm feeds a
// device's segments (SegIn, instead of Network.SegIn) and reads the
// exception ring (Service) for the QPs added to it:
//
//   - Out of order (reason 3): the octets are kept, and offered again, in
//     order, once the device has taken every octet before them (TCP's
//     reassembly queue, RFC 9293 3.10.7.4, done by the host for the
//     device). The device may have searched them for FPDUs through their
//     markers and placed those early (RFC 5044 4.3, rnic_rx.v's
//     mpa_rx_ooo); offered again they are delineated and delivered in
//     order, as rnic_rx.v describes.
//   - Duplicate (reason 4): octets the device took already; dropped. Held
//     octets whose turn comes when the device has them already (a
//     duplicate copy of an out-of-order segment) are dropped without
//     being offered.
//   - In error (reason 2): the QP's stream is over (it is in the error
//     state: a Terminate went out or came in); dropped and counted.
//   - Not enabled (reason 1): octets for a QP before its QP_RTS; Reasm
//     cannot place them in the stream and reports them (Err).
//
// How the host knows where the device is: the device takes a segment
// [seq, seq+len) exactly when seq is at or before its next expected
// sequence number rcv_nxt, and then rcv_nxt becomes max(rcv_nxt, seq+len)
// (mpa_rx_align.v's classification, the model's segIn). The device takes
// segments in the order it is given them, so Reasm, which gives them,
// follows rcv_nxt octet for octet from QP_RTS's receive sequence number,
// and predicts which segments come back and why. Each exception buffer the
// device writes is checked against that prediction (a difference is the
// device's or the host's bug, reported by Err). The prediction also keeps
// the ring from wrapping: the ring has no consumer index (the device
// overwrites the oldest buffer), so SegIn waits, reading the ring, while
// the buffers still to come would not fit in it.
type Reasm struct {
	src ExceptionSource
	n   Network
	// take steps the device's output by hand (the model's
	// TakeSegments), for Wire.Step; nil for a device that runs alone.
	take func() []Segment
	mu   sync.Mutex
	qp   map[uint16]*reasmQP
	// want: the exception buffers the device will write, in order.
	want   []excWant
	events []hostif.Event // events other than EXCEPTION, for Events
	st     ReasmStats
	err    error
	// Poll is how long SegIn sleeps between two reads of the ring while
	// it waits for room (a device that runs on its own: the sim).
	Poll time.Duration
}

type reasmQP struct {
	next uint32    // the device's rcv_nxt, as Reasm follows it
	held []Segment // out-of-order octets the device handed back, by Seq
	dead bool      // in error: nothing is predicted any more
}

type excWant struct {
	qpn uint16
	seq uint32
	n   int
	why hostif.ExcReason
}

// ReasmStats counts what Reasm did.
type ReasmStats struct {
	Fed        uint64 // segments given to the device (SegIn and re-offers)
	OutOfOrder uint64 // exception buffers of reason out of order, kept
	Duplicate  uint64 // exception buffers of reason duplicate, dropped
	InError    uint64 // exception buffers of a QP in error, dropped
	Reoffered  uint64 // kept buffers given to the device again, in order
	Dropped    uint64 // kept buffers dropped: the device had their octets by their turn
	Waits      uint64 // times SegIn waited for room in the exception ring
}

// excRoom is the octets an exception buffer holds after its header.
const excRoom = 1<<ExcBufLog2 - hostif.ExcHeaderLen

// ExceptionSource is where Reasm reads what the device handed back: a
// Device (its Events, then its Exceptions), or a test's fake.
type ExceptionSource interface {
	Events() ([]hostif.Event, error)
	Exceptions() ([]Exception, error)
}

// NewReasm returns the exception handling of d, whose data path
// (InitDataPath) is set up, feeding d's network seam.
func NewReasm(d *Device) *Reasm {
	r := NewReasmOn(d, d.B.Network())
	if t, ok := d.B.(taker); ok {
		r.take = t.TakeSegments
	}
	return r
}

// NewReasmOn returns the exception handling of a device whose exception
// ring src reads and whose network seam is n.
func NewReasmOn(src ExceptionSource, n Network) *Reasm {
	r := &Reasm{src: src, n: n, qp: map[uint16]*reasmQP{}, Poll: 200 * time.Microsecond}
	if t, ok := n.(taker); ok {
		r.take = t.TakeSegments
	}
	return r
}

// Add starts following QP qpn, whose QP_RTS gave the receive sequence
// number rxSeq (hostif.QPRTS.RxSeq): call it after QP_RTS and before the
// QP's first segment.
func (r *Reasm) Add(qpn uint16, rxSeq uint32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.qp[qpn] = &reasmQP{next: rxSeq}
}

// Err returns the first inconsistency Reasm found, or nil.
func (r *Reasm) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Stats returns the counts so far.
func (r *Reasm) Stats() ReasmStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st
}

// Held returns the out-of-order octets kept for QP qpn.
func (r *Reasm) Held(qpn uint16) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	if q := r.qp[qpn]; q != nil {
		for _, s := range q.held {
			n += len(s.Octets)
		}
	}
	return n
}

// Next returns the sequence number the device expects next on QP qpn, as
// Reasm follows it.
func (r *Reasm) Next(qpn uint16) uint32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if q := r.qp[qpn]; q != nil {
		return q.next
	}
	return 0
}

// Pending returns the exception buffers the device is still to hand back.
func (r *Reasm) Pending() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.want)
}

// Events returns the events other than EXCEPTION that Service read since
// the last call (Service takes the event ring: Device.Events must not be
// called besides it).
func (r *Reasm) Events() []hostif.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.events
	r.events = nil
	return e
}

func (r *Reasm) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// SegIn gives the device a segment of its peer's stream.
func (r *Reasm) SegIn(s Segment) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.segIn(s, true)
}

// buffers returns the exception buffers a segment of n octets fills.
func buffers(n int) int { return max(1, (n+excRoom-1)/excRoom) }

// segIn feeds s, predicting what the device does with it. room: wait for
// room in the exception ring first (not from inside Service).
func (r *Reasm) segIn(s Segment, room bool) error {
	for {
		q := r.qp[s.QPN]
		if q == nil || q.dead {
			r.st.Fed++
			return r.n.SegIn(s)
		}
		why := hostif.ExcReason(0)
		end := s.Seq + uint32(len(s.Octets))
		switch {
		case len(s.Octets) == 0:
			why = hostif.ExcEmpty
		case int32(s.Seq-q.next) > 0:
			why = hostif.ExcOutOfOrder
		case int32(end-q.next) <= 0:
			why = hostif.ExcDuplicate
		}
		if why == 0 {
			next := q.next
			q.next = end
			r.st.Fed++
			if err := r.n.SegIn(s); err != nil {
				// The device did not take it (a closed device, a
				// mirror that found a difference): it is where it was.
				q.next = next
				return err
			}
			return nil
		}
		k := buffers(len(s.Octets))
		if k > 1<<ExcLog2 {
			// More buffers than the ring has: the device would
			// overwrite the first before the host reads them. The
			// host cuts the segment (TCP may re-segment).
			cut := (1 << ExcLog2) * excRoom
			for off := 0; off < len(s.Octets); off += cut {
				p := Segment{QPN: s.QPN, Seq: s.Seq + uint32(off), Octets: s.Octets[off:min(off+cut, len(s.Octets))]}
				if err := r.segIn(p, room); err != nil {
					return err
				}
			}
			return nil
		}
		if room && len(r.want)+k > 1<<ExcLog2 {
			// Wait for room, then decide again: another caller may
			// have moved rcv_nxt meanwhile. Not once the device has
			// handed back a buffer the host did not predict: the
			// buffers the host waits for may never come.
			if r.err != nil {
				return r.err
			}
			r.st.Waits++
			if err := r.service(); err != nil {
				return err
			}
			if len(r.want)+k > 1<<ExcLog2 {
				r.mu.Unlock()
				time.Sleep(r.Poll)
				r.mu.Lock()
			}
			continue
		}
		was := len(r.want)
		for off := 0; off == 0 || off < len(s.Octets); off += excRoom {
			r.want = append(r.want, excWant{qpn: s.QPN, seq: s.Seq + uint32(off), n: min(excRoom, len(s.Octets)-off), why: why})
		}
		r.st.Fed++
		if err := r.n.SegIn(s); err != nil {
			// The device did not take it: no buffer of it will come
			// back (waiting for them would wait for ever).
			r.want = r.want[:was]
			return err
		}
		return nil
	}
}

// Service reads the events and the exception ring the device wrote since
// the last call and handles each exception buffer (see Reasm); kept
// octets whose hole has closed go back to the device.
func (r *Reasm) Service() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.service()
}

func (r *Reasm) service() error {
	evs, err := r.src.Events()
	for _, e := range evs {
		if e.Type != hostif.EventException {
			r.events = append(r.events, e)
		}
	}
	if err != nil {
		return err
	}
	xs, err := r.src.Exceptions()
	for _, x := range xs {
		r.handle(x)
	}
	if err != nil {
		return err
	}
	for qpn, q := range r.qp {
		if err := r.reoffer(qpn, q); err != nil {
			return err
		}
	}
	return nil
}

// handle takes one exception buffer.
func (r *Reasm) handle(x Exception) {
	q := r.qp[x.QPN]
	if q == nil {
		r.fail(fmt.Errorf("driver: the device handed back %d octets of QP %d (reason %v), which the host does not follow: Add the QP to the Reasm after QP_RTS",
			x.Length, x.QPN, x.Reason))
		return
	}
	if x.Reason == hostif.ExcInError {
		// The stream is over; what the host predicted for the QP
		// comes back in error, or not at all.
		r.st.InError++
		q.dead, q.held = true, nil
		r.want = slices.DeleteFunc(r.want, func(w excWant) bool { return w.qpn == x.QPN })
		return
	}
	if len(r.want) == 0 || r.want[0] != (excWant{qpn: x.QPN, seq: x.Seq, n: int(x.Length), why: x.Reason}) {
		exp := "none"
		if len(r.want) > 0 {
			w := r.want[0]
			exp = fmt.Sprintf("QP %d's octets at %d+%d with reason %v", w.qpn, w.seq, w.n, w.why)
		}
		r.fail(fmt.Errorf("driver: the device handed back QP %d's octets at %d+%d with reason %v, the host expected %s: "+
			"the device's next expected sequence number is not where the host follows it (a device bug, or segments fed besides the Reasm)",
			x.QPN, x.Seq, x.Length, x.Reason, exp))
	} else {
		r.want = r.want[1:]
	}
	switch x.Reason {
	case hostif.ExcOutOfOrder:
		r.st.OutOfOrder++
		s := Segment{QPN: x.QPN, Seq: x.Seq, Octets: x.Octets}
		i, _ := slices.BinarySearchFunc(q.held, s, func(a, b Segment) int { return int(int32(a.Seq - b.Seq)) })
		q.held = slices.Insert(q.held, i, s)
	case hostif.ExcDuplicate:
		r.st.Duplicate++
	case hostif.ExcEmpty:
	case hostif.ExcNotEnabled:
		r.fail(fmt.Errorf("driver: the device handed back %d octets of QP %d as not enabled: the octets are lost; give a QP's segments to the device only after its QP_RTS",
			x.Length, x.QPN))
	default:
		r.fail(fmt.Errorf("driver: the device handed back QP %d's octets with reason %d, which docs/device.md does not define", x.QPN, x.Reason))
	}
}

// reoffer gives the kept octets whose hole has closed back to the device,
// in order; those the device has taken meanwhile are dropped.
func (r *Reasm) reoffer(qpn uint16, q *reasmQP) error {
	for len(q.held) > 0 && !q.dead && int32(q.held[0].Seq-q.next) <= 0 {
		s := q.held[0]
		q.held = q.held[1:]
		if int32(s.Seq+uint32(len(s.Octets))-q.next) <= 0 {
			r.st.Dropped++
			continue
		}
		r.st.Reoffered++
		if err := r.segIn(s, false); err != nil {
			return err
		}
	}
	return nil
}

// ErrReasmStuck is returned by Settle when the device does not hand back
// the exception buffers Reasm expects.
var ErrReasmStuck = errors.New("driver: the device did not hand back the exception buffers the host expects: its exception ring writer is stuck, or its events are lost (read them more often)")

// Settle services the ring until every exception buffer the host expects
// has come back, polling at most polls times (a bound in reads, not in
// time).
func (r *Reasm) Settle(polls int) error {
	for range polls {
		if err := r.Service(); err != nil {
			return err
		}
		if r.Pending() == 0 {
			return nil
		}
		time.Sleep(r.Poll)
	}
	return ErrReasmStuck
}
