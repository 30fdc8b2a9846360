// Package wiretest is the traffic the impairment wire's tests run
// (driver.Wire): two devices of any backend, each with a QP, a send and a
// receive CQ and a registered buffer, connected by an MPA startup over a
// net.Pipe and then by a wire; Writes, Sends and Reads of several sizes
// each way through the driver's verbs API; and the outcome (every octet of
// both buffers, every CQE, the counters) to check directly and against a
// clean run.
package wiretest

import (
	"context"
	"fmt"
	"net"
	"slices"

	"github.com/openrnic/rnic/driver"
	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/iwarp/mpa"
)

// Buffer regions: each end's buffer holds the source of its Writes, Sends
// and Read Responses, the sink of the peer's Writes, the sink of its own
// Reads and the receive buffers of the peer's Sends.
const (
	Region  = 128 << 10
	src     = 0 * Region
	wsink   = 1 * Region
	rsink   = 2 * Region
	recv    = 3 * Region
	BufSize = 4 * Region
)

// ORD is the IRD and ORD each end offers in the MPA startup.
var ORD uint16 = 4

// Sizes are the message sizes of the traffic, 1 octet to 64 KiB.
var Sizes = []int{1, 7, 100, 1460, 4000, 16384, 65536}

// End is one device's side.
type End struct {
	D        *driver.Device
	PD       *driver.PD
	SCQ, RCQ *driver.CQ
	QP       *driver.QP
	Buf      *driver.Buffer
	MR       *driver.MR
	X        *driver.Reasm
	RTS      hostif.QPRTS
	P        *mpa.Params
}

// NewEnd sets up b's side; fill seeds its source octets.
func NewEnd(b driver.Backend, fill byte) (*End, error) {
	d, err := driver.Open(b)
	if err != nil {
		return nil, err
	}
	if err := d.InitDataPath(1 << 20); err != nil {
		return nil, err
	}
	e := &End{D: d, PD: d.AllocPD()}
	if e.SCQ, err = d.CreateCQ(7, 0); err != nil {
		return nil, err
	}
	if e.RCQ, err = d.CreateCQ(7, 0); err != nil {
		return nil, err
	}
	if e.QP, err = e.PD.CreateQP(6, 4, e.SCQ, e.RCQ); err != nil {
		return nil, err
	}
	if e.Buf, err = d.AllocDMA(BufSize); err != nil {
		return nil, err
	}
	for i := range e.Buf.Mem[:Region] {
		e.Buf.Mem[i] = byte(i*7+i>>9) ^ fill
	}
	all := hostif.AccessLocalRead | hostif.AccessLocalWrite | hostif.AccessRemoteRead | hostif.AccessRemoteWrite
	if e.MR, err = e.PD.RegisterMR(e.Buf, 0, BufSize, all); err != nil {
		return nil, err
	}
	e.X = driver.NewReasm(d)
	return e, nil
}

// Connect runs the MPA startup between a (Initiator) and b (Responder)
// over a net.Pipe, CRCs on, markers as asked, and gives each device its
// QP_RTS; the pipe is closed after: the wire carries the streams from the
// first FPDU on.
func Connect(ctx context.Context, a, b *End, markers bool) error {
	ca, cb := net.Pipe()
	defer ca.Close()
	defer cb.Close()
	cfg := mpa.Config{Markers: markers, IRD: ORD, ORD: ORD}
	errc := make(chan error, 1)
	go func() {
		var err error
		b.RTS, b.P, err = driver.StartMPA(ctx, cb, mpa.Responder, cfg, b.QP.N, 1460)
		errc <- err
	}()
	var err error
	a.RTS, a.P, err = driver.StartMPA(ctx, ca, mpa.Initiator, cfg, a.QP.N, 1460)
	if berr := <-errc; err == nil {
		err = berr
	}
	if err != nil {
		return err
	}
	if a.P.TxMarkers != markers || !a.P.CRC {
		return fmt.Errorf("wiretest: the startup negotiated markers %v, CRC %v; want markers %v, CRC on", a.P.TxMarkers, a.P.CRC, markers)
	}
	for _, e := range []*End{a, b} {
		if err := e.QP.RTS(e.RTS); err != nil {
			return err
		}
	}
	return nil
}

// NewWire connects a's and b's QPs (after Connect) with imp.
func NewWire(a, b *End, imp driver.Impair, seed uint64) *driver.Wire {
	return driver.NewWire(
		driver.WireEnd{Reasm: a.X, QPN: a.QP.N, RxSeq: a.RTS.RxSeq, Responder: a.P.WaitsForFirstFPDU()},
		driver.WireEnd{Reasm: b.X, QPN: b.QP.N, RxSeq: b.RTS.RxSeq, Responder: b.P.WaitsForFirstFPDU()}, imp, seed)
}

// off is where the message of size index i sits in a region: after the
// ones before it, at an odd offset so placement meets every alignment.
func off(sizes []int, i int) int {
	o := 0
	for _, n := range sizes[:i] {
		o += n + 3
	}
	return o + i
}

// Post posts the traffic of both ends, each to the other: first every
// receive buffer on both (PostRecvs), then every send entry (PostSends),
// so that no Send reaches an end before its receives are posted, however
// fast the other end is. It returns the number of send and receive CQEs
// each end will get.
func Post(ends [2]*End, sizes []int, reads [2]bool) (want [2][2]int, err error) {
	for k, e := range ends {
		if want[k][1], err = PostRecvs(e, sizes); err != nil {
			return want, err
		}
	}
	for k, e := range ends {
		if want[k][0], err = PostSends(e, ends[1-k], sizes, reads[k]); err != nil {
			return want, err
		}
	}
	return want, nil
}

// PostRecvs posts a receive buffer on e for each of its peer's Sends and
// returns their number.
func PostRecvs(e *End, sizes []int) (int, error) {
	for i, n := range sizes {
		if err := e.QP.PostRecv(hostif.RQE{ID: uint64(0x100 + i), LKey: e.MR.STag, Length: uint32(n), LocalTO: e.MR.TO + recv + uint64(off(sizes, i))}); err != nil {
			return 0, err
		}
	}
	return len(sizes), nil
}

// PostSends posts e's send entries to peer p: per size a Write, a Send and
// (reads) a Read, each signalled. The entry of size i and kind k (0 Write,
// 1 Send, 2 Read) has ID 3i+k+1. It returns their number.
func PostSends(e, p *End, sizes []int, reads bool) (int, error) {
	lk, to := e.MR.STag, e.MR.TO
	var sqes []hostif.SQE
	for i, n := range sizes {
		o := uint64(off(sizes, i))
		for k, s := range []hostif.SQE{
			{Op: hostif.OpWrite, Length: uint32(n), LKey: lk, LocalTO: to + src + o, RKey: p.MR.STag, RemoteTO: p.MR.TO + wsink + o},
			{Op: hostif.OpSend, Length: uint32(n), LKey: lk, LocalTO: to + src + o + 1},
			{Op: hostif.OpRead, Length: uint32(n), LKey: lk, LocalTO: to + rsink + o, RKey: p.MR.STag, RemoteTO: p.MR.TO + src + o + 2},
		} {
			s.ID, s.Signaled = uint64(i*3+k+1), true
			if k < 2 || reads {
				sqes = append(sqes, s)
			}
		}
	}
	for _, s := range sqes {
		if err := e.QP.PostSend(s); err != nil {
			return 0, err
		}
	}
	return len(sqes), nil
}

// Outcome is what a run left: both buffers, both ends' CQEs (send CQ
// then receive CQ, in order) and counters.
type Outcome struct {
	Mem      [2][]byte
	Send     [2][]hostif.CQE
	Recv     [2][]hostif.CQE
	Counters [2]map[string]uint64
}

// Poll takes what e's CQs hold.
func Poll(e *End) (send, recv []hostif.CQE, err error) {
	for _, c := range []struct {
		cq  *driver.CQ
		out *[]hostif.CQE
	}{{e.SCQ, &send}, {e.RCQ, &recv}} {
		for {
			x, ok, err := c.cq.Poll()
			if err != nil {
				return nil, nil, err
			}
			if !ok {
				break
			}
			*c.out = append(*c.out, x)
		}
	}
	return send, recv, nil
}

// Counters reads e's counters by name.
func Counters(e *End) (map[string]uint64, error) {
	cs, err := e.D.Map.Counters(e.D.B)
	if err != nil {
		return nil, err
	}
	m := map[string]uint64{}
	for _, c := range cs {
		m[c.Name] = c.Value
	}
	return m, nil
}

// Check checks an outcome directly: every CQE succeeded with its length,
// and every octet of both buffers is what the traffic put there (and
// the regions no message reaches are as they were: zero). reads says
// which ends posted Reads.
func Check(o *Outcome, sizes []int, reads [2]bool) error {
	for k := range 2 {
		me, peer := o.Mem[k], o.Mem[1-k]
		want := make([]byte, BufSize)
		copy(want[:Region], me[:Region]) // the source, not written
		for i, n := range sizes {
			x := off(sizes, i)
			copy(want[wsink+x:], peer[src+x:src+x+n])
			if reads[k] {
				copy(want[rsink+x:], peer[src+x+2:src+x+2+n])
			}
			copy(want[recv+x:], peer[src+x+1:src+x+1+n])
		}
		for i := range want {
			if me[i] != want[i] {
				return fmt.Errorf("end %d: octet %#x (region %d, offset %d) is %#02x, want %#02x", k, i, i/Region, i%Region, me[i], want[i])
			}
		}
		kinds := 2
		if reads[k] {
			kinds = 3
		}
		if len(o.Send[k]) != kinds*len(sizes) || len(o.Recv[k]) != len(sizes) {
			return fmt.Errorf("end %d: %d send and %d receive CQEs, want %d and %d", k, len(o.Send[k]), len(o.Recv[k]), kinds*len(sizes), len(sizes))
		}
		seen := map[uint64]bool{}
		for j, c := range o.Send[k] {
			i, op := int(c.ID-1)/3, int(c.ID-1)%3
			wantOp := []hostif.Opcode{hostif.OpWrite, hostif.OpSend, hostif.OpRead}
			if c.ID < 1 || i >= len(sizes) || op >= kinds || seen[c.ID] || c.Op != wantOp[op] || c.Status != hostif.StatusSuccess ||
				(op == 2 && c.Length != uint32(sizes[i])) {
				return fmt.Errorf("end %d: send CQE %d is %+v", k, j, c)
			}
			seen[c.ID] = true
		}
		for i, c := range o.Recv[k] {
			if c.ID != uint64(0x100+i) || c.Status != hostif.StatusSuccess || c.Length != uint32(sizes[i]) || c.Op != hostif.OpRecv {
				return fmt.Errorf("end %d: receive CQE %d is %+v", k, i, c)
			}
		}
	}
	return nil
}

// Same reports how two outcomes' memory and CQEs differ ("" if not).
func Same(a, b *Outcome) string {
	for k := range 2 {
		if i := slices.Index(diff(a.Mem[k], b.Mem[k]), true); i >= 0 {
			return fmt.Sprintf("end %d: octet %#x is %#02x, the clean run's %#02x", k, i, a.Mem[k][i], b.Mem[k][i])
		}
		if fmt.Sprint(a.Send[k]) != fmt.Sprint(b.Send[k]) {
			return fmt.Sprintf("end %d: send CQEs\n%v\nclean run's\n%v", k, a.Send[k], b.Send[k])
		}
		if fmt.Sprint(a.Recv[k]) != fmt.Sprint(b.Recv[k]) {
			return fmt.Sprintf("end %d: receive CQEs\n%v\nclean run's\n%v", k, a.Recv[k], b.Recv[k])
		}
	}
	return ""
}

func diff(a, b []byte) []bool {
	d := make([]bool, max(len(a), len(b)))
	for i := range d {
		d[i] = i >= len(a) || i >= len(b) || a[i] != b[i]
	}
	return d
}
