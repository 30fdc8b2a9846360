package simdev

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/openrnic/rnic/driver/hostif"
)

// Latency in clocks of the simulated device, from its stamps (STAMPS,
// docs/device.md "The simulated device"): for a 64-octet RDMA Write, Send
// and Read against the software stack (newStackPair), the clocks from the
// SQ doorbell's MMIO write to the first beat of the first frame on the
// network seam (m_net: the Write's or Send's FPDU, the Read Request), and
// from the last wire octet of the operation (the last beat of the FPDU
// the device sends; for the Read, of the Read Response it takes on s_net)
// to the DMA write of its CQE (negative: a Write's or Send's CQE is
// written before the frame's last beat leaves), and from the doorbell to
// the CQE. Host memory answers DMA reads 64 clocks
// after their address (rnic-sim's default --mem-latency), which the first
// figure includes (the SQE's fetch and the payload's).
//
//	go test -run '^$' -bench SimLatency -benchtime 20x ./driver/simdev

// recBackend records the offsets of the MMIO writes made while rec is on:
// which write is the doorbell, from the driver's side.
type recBackend struct {
	*Device
	mu   sync.Mutex
	rec  bool
	offs []uint32
	vals []uint32
}

func (r *recBackend) Write32(off, v uint32) error {
	r.mu.Lock()
	if r.rec {
		r.offs, r.vals = append(r.offs, off), append(r.vals, v)
	}
	r.mu.Unlock()
	return r.Device.Write32(off, v)
}

// latency is one operation's two figures, in clocks. The second is
// signed: the device writes a Write's or Send's CQE once the frame is on
// its way, before its last beat has left.
type latency struct {
	doorbellToWire, doorbellToCQE uint64
	wireToCQE                     int64
}

// measureLatency posts n signalled 64-octet operations of op (one at a
// time, each completed before the next) and returns their latencies.
func measureLatency(t testing.TB, op hostif.Opcode, n int) []latency {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sim := start(t, Config{MemSize: 4 << 20})
	rb := &recBackend{Device: sim}
	sp := newStackPair(t, ctx, rb, false)
	const size = 64
	if op == hostif.OpSend {
		for i := 0; i < n; i++ {
			if err := sp.vqp.PostRecv(uint64(i), make([]byte, size)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The stack's buffer for the Read's source.
	for i := range sp.vbuf[:4096] {
		sp.vbuf[i] = byte(i*5 + 1)
	}
	if err := sim.Stamps(true); err != nil {
		t.Fatal(err)
	}
	bufLo, bufHi := sp.buf.Addr, sp.buf.Addr+uint64(len(sp.buf.Mem))
	var out []latency
	var stamps []Stamp
	for i := 0; i < n; i++ {
		id := uint64(1000 + i)
		e := hostif.SQE{Op: op, Signaled: true, Length: size, ID: id, LKey: sp.mr.STag, LocalTO: sp.mr.TO + uint64(i%8)*size}
		if op != hostif.OpSend {
			e.RKey, e.RemoteTO = sp.vmr.STag, sp.vmr.Addr+uint64(i%8)*size
		}
		rb.mu.Lock()
		rb.rec, rb.offs, rb.vals = true, nil, nil
		rb.mu.Unlock()
		if err := sp.qp.PostSend(e); err != nil {
			t.Fatal(err)
		}
		rb.mu.Lock()
		rb.rec = false
		offs, vals := rb.offs, rb.vals
		rb.mu.Unlock()
		if len(offs) != 1 {
			t.Fatalf("PostSend made %d MMIO writes (%#x), want one: the doorbell", len(offs), offs)
		}
		if c := sp.waitCQEs(t, ctx, rb, 1)[0]; c.ID != id || c.Status != hostif.StatusSuccess {
			t.Fatalf("CQE %+v, want ID %d and success", c, id)
		}
		// The CQE's write: a burst from a CQE outside the data buffer
		// that holds it. Its stamp, and the frame's last beat's, may come
		// after the CQE is seen.
		var l latency
		for deadline := time.Now().Add(10 * time.Second); ; {
			stamps = append(stamps, sim.TakeStamps()...)
			var err error
			if l, err = latencyOf(stamps, op, offs[0], vals[0], sim.Mem(), bufLo, bufHi, id); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("operation %d: %v; stamps %+v", i, err, stamps)
			}
			time.Sleep(time.Millisecond)
		}
		out = append(out, l)
		// What follows the CQE (the CQ's doorbells) belongs to no one.
		stamps = nil
		sim.TakeStamps()
	}
	if err := sp.relay.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// latencyOf finds the doorbell's stamp (its offset and value), the first
// frame out after it, the CQE's write (a DMA write outside the data buffer
// [bufLo, bufHi) that spans a 32-octet slot decoding as the CQE of id) and the
// operation's last wire beat: the last beat of that frame (Write, Send),
// or the last beat of the last frame taken before the CQE (Read: the Read
// Response).
func latencyOf(stamps []Stamp, op hostif.Opcode, dbOff, dbVal uint32, mem []byte, bufLo, bufHi, id uint64) (latency, error) {
	var db, first, last, cqe *Stamp
	for k := range stamps {
		s := &stamps[k]
		switch {
		case db == nil:
			if s.Kind == StampMMIOWrite && s.A == dbOff && uint32(s.B) == dbVal {
				db = s
			}
		case s.Kind == StampNetOutFirst && first == nil:
			first = s
		case s.Kind == StampNetOutLast && op != hostif.OpRead && first != nil && last == nil && s.A == first.A &&
			uint32(s.B) == uint32(first.B):
			last = s
		case s.Kind == StampNetInLast && op == hostif.OpRead && cqe == nil:
			last = s
		case s.Kind == StampDMAWrite && cqe == nil && (s.B < bufLo || s.B >= bufHi):
			// A wide datapath writes a CQE as part of a beat: the burst's
			// address is the beat's, the CQE one of the slots it spans.
			for a := s.B; a+hostif.CQESize <= s.B+uint64(s.A) && a+hostif.CQESize <= uint64(len(mem)); a += hostif.CQESize {
				if c, err := hostif.DecodeCQE(mem[a : a+hostif.CQESize]); err == nil && c.ID == id {
					cqe = s
				}
			}
		}
	}
	switch {
	case db == nil:
		return latency{}, fmt.Errorf("no stamp of the doorbell (%#x <- %d)", dbOff, dbVal)
	case first == nil:
		return latency{}, fmt.Errorf("no frame out after the doorbell")
	case cqe == nil:
		return latency{}, fmt.Errorf("no stamp of the CQE's write")
	case last == nil:
		return latency{}, fmt.Errorf("no last wire beat")
	case !(db.Clock < first.Clock && first.Clock <= last.Clock && db.Clock < cqe.Clock):
		return latency{}, fmt.Errorf("stamps out of order: doorbell %d, first out %d, last wire %d, CQE %d",
			db.Clock, first.Clock, last.Clock, cqe.Clock)
	case op == hostif.OpRead && last.Clock >= cqe.Clock:
		return latency{}, fmt.Errorf("the Read's CQE (clock %d) before its Read Response's last beat (%d)", cqe.Clock, last.Clock)
	case op != hostif.OpRead && last.B>>32 <= 64:
		return latency{}, fmt.Errorf("the frame out has %d octets: no room for 64 octets of payload", last.B>>32)
	}
	return latency{first.Clock - db.Clock, cqe.Clock - db.Clock, int64(cqe.Clock) - int64(last.Clock)}, nil
}

var latencyOps = []struct {
	name string
	op   hostif.Opcode
}{{"Write", hostif.OpWrite}, {"Send", hostif.OpSend}, {"Read", hostif.OpRead}}

// The stamps of one operation of each kind come in order and give
// latencies: the doorbell's write, the frame out, the last wire beat and
// the CQE's write are all found.
func TestSimLatencyStamps(t *testing.T) {
	for _, o := range latencyOps {
		t.Run(o.name, func(t *testing.T) {
			for _, l := range measureLatency(t, o.op, 2) {
				t.Logf("doorbell to first wire octet %d clocks, last wire octet to CQE %d clocks, doorbell to CQE %d clocks",
					l.doorbellToWire, l.wireToCQE, l.doorbellToCQE)
			}
		})
	}
}

// BenchmarkSimLatency reports the mean latencies of b.N operations of
// each kind, in clocks (not wall time: the figures are the device's).
func BenchmarkSimLatency(b *testing.B) {
	for _, o := range latencyOps {
		b.Run(o.name, func(b *testing.B) {
			ls := measureLatency(b, o.op, b.N)
			var s1, s3 uint64
			var s2 int64
			for _, l := range ls {
				s1 += l.doorbellToWire
				s2 += l.wireToCQE
				s3 += l.doorbellToCQE
			}
			n := float64(len(ls))
			b.ReportMetric(float64(s1)/n, "clocks-doorbell-to-wire")
			b.ReportMetric(float64(s2)/n, "clocks-wire-to-CQE")
			if o.op != hostif.OpRead {
				// A Read's includes the clocks the device ran while it
				// waited for the peer's Read Response.
				b.ReportMetric(float64(s3)/n, "clocks-doorbell-to-CQE")
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}
