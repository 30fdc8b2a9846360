package model

import (
	"sync"

	"github.com/openrnic/rnic/driver"
)

// seam is the model's side of the network seam: the segments the device
// sends wait in order in a queue (the device never blocks on its
// consumer, so its logic never waits under the mutex). They leave either
// through SegOut's channel, fed by one goroutine that only moves them, or
// through TakeSegments, for a caller that steps the model by hand. The
// two are exclusive: once SegOut is called, the channel takes everything.
type seam struct {
	q       []driver.Segment
	cond    *sync.Cond
	ch      chan driver.Segment
	pumping bool
	stop    chan struct{}
	sent    uint64
}

func (s *seam) push(qpn uint16, seq uint32, octets []byte) {
	s.q = append(s.q, driver.Segment{QPN: qpn, Seq: seq, Octets: octets})
	s.sent++
	if s.pumping {
		s.cond.Signal()
	}
}

// network is Device's driver.Network.
type network struct{ d *Device }

// Network implements driver.Backend: the segment streams of the device's
// offloaded connections, relayed by host software (driver.Relay) or
// connected back to back in tests.
func (d *Device) Network() driver.Network { return network{d} }

// SegIn implements driver.Network: the device takes the segment at once
// (checked, placed, completed) before SegIn returns. The octets are not
// kept. Errors are the caller's mistakes (a QP number beyond the device's,
// a closed device); what the device does with a segment it does not take
// is the exception ring's business, not an error.
func (n network) SegIn(s driver.Segment) error {
	d := n.d
	d.mu.Lock()
	defer d.mu.Unlock()
	defer d.settle()
	if d.closed {
		return errClosed
	}
	return d.segIn(s.QPN, s.Seq, s.Octets)
}

// SegOut implements driver.Network: the first call starts the goroutine
// that moves queued segments into the channel, in the order the device
// sent them; the channel closes when the device closes.
func (n network) SegOut() <-chan driver.Segment {
	d := n.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.net.pumping {
		d.net.pumping = true
		d.net.ch = make(chan driver.Segment, 64)
		go d.pump()
	}
	return d.net.ch
}

// Sent implements driver.Network: every segment the device has sent.
func (n network) Sent() uint64 {
	n.d.mu.Lock()
	defer n.d.mu.Unlock()
	return n.d.net.sent
}

func (d *Device) pump() {
	defer close(d.net.ch)
	for {
		d.mu.Lock()
		for len(d.net.q) == 0 && !d.closed {
			d.net.cond.Wait()
		}
		if d.closed {
			d.mu.Unlock()
			return
		}
		s := d.net.q[0]
		d.net.q[0] = driver.Segment{}
		d.net.q = d.net.q[1:]
		d.mu.Unlock()
		select {
		case d.net.ch <- s:
		case <-d.net.stop:
			return
		}
	}
}

// TakeSegments returns the segments the device sent since the last call,
// in order, for a caller that steps the model without SegOut (tests that
// connect two models back to back and want every step deterministic). It
// returns nil once SegOut has been called: the channel has them.
func (d *Device) TakeSegments() []driver.Segment {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.net.pumping {
		return nil
	}
	q := d.net.q
	d.net.q = nil
	return q
}
