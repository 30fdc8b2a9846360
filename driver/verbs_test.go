package driver_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/openrnic/rnic/driver"
	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/driver/model"
)

// end is one model device driven through the verbs API.
type end struct {
	t    *testing.T
	m    *model.Device
	d    *driver.Device
	pd   *driver.PD
	cq   *driver.CQ
	qp   *driver.QP
	buf  *driver.Buffer
	mr   *driver.MR
	wire uint32 // the sequence number this end's stream starts at
}

func newEnd(t *testing.T, wire uint32) *end {
	t.Helper()
	m, err := model.New(model.DefaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	d, err := driver.Open(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.AllocDMA(4096); !errors.Is(err, driver.ErrNoDataPath) {
		t.Fatalf("AllocDMA before InitDataPath: %v", err)
	}
	if err := d.InitDataPath(0); err != nil {
		t.Fatal(err)
	}
	e := &end{t: t, m: m, d: d, pd: d.AllocPD(), wire: wire}
	if e.cq, err = d.CreateCQ(5, 0); err != nil {
		t.Fatal(err)
	}
	if e.qp, err = e.pd.CreateQP(2, 2, e.cq, e.cq); err != nil {
		t.Fatal(err)
	}
	if e.buf, err = d.AllocDMA(64 << 10); err != nil {
		t.Fatal(err)
	}
	all := hostif.AccessLocalRead | hostif.AccessLocalWrite | hostif.AccessRemoteRead | hostif.AccessRemoteWrite
	if e.mr, err = e.pd.RegisterMR(e.buf, 0, 64<<10, all); err != nil {
		t.Fatal(err)
	}
	return e
}

func connect(a, b *end) {
	flags := hostif.RTSMarkersTx | hostif.RTSMarkersRx | hostif.RTSCRCTx | hostif.RTSCRCRx
	for _, x := range [][2]*end{{a, b}, {b, a}} {
		if err := x[0].qp.RTS(hostif.QPRTS{IRD: 2, ORD: 2, MULPDU: 1024, Flags: flags, TxMarkerBase: x[0].wire,
			RxMarkerBase: x[1].wire, TxSeq: x[0].wire, RxSeq: x[1].wire, RxMSNSend: 1, RxMSNReadRq: 1}); err != nil {
			a.t.Fatal(err)
		}
	}
}

// run moves segments both ways until neither device sends more.
func run(t *testing.T, a, b *end) {
	for {
		sa, sb := a.m.TakeSegments(), b.m.TakeSegments()
		if len(sa)+len(sb) == 0 {
			return
		}
		for _, s := range sa {
			if err := b.m.Network().SegIn(s); err != nil {
				t.Fatal(err)
			}
		}
		for _, s := range sb {
			if err := a.m.Network().SegIn(s); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func (e *end) polled() []hostif.CQE {
	e.t.Helper()
	var out []hostif.CQE
	for {
		c, ok, err := e.cq.Poll()
		if err != nil {
			e.t.Fatal(err)
		}
		if !ok {
			return out
		}
		out = append(out, c)
	}
}

// Two model devices through the verbs API: a Write announced by a Send, a
// Read, a Send with Invalidate; the SQ's slots come back as its CQEs are
// polled; Destroy drains.
func TestVerbsAPIBackToBack(t *testing.T) {
	a, b := newEnd(t, 7), newEnd(t, 0x8000_0000)
	connect(a, b)
	for i := range a.mr.Buf[:10000] {
		a.mr.Buf[i] = byte(i * 13)
	}
	for i := range 2 {
		if err := b.qp.PostRecv(hostif.RQE{ID: uint64(100 + i), LKey: b.mr.STag, Length: 64, LocalTO: b.mr.TO + 60000 + uint64(i)*64}); err != nil {
			t.Fatal(err)
		}
	}
	lk := a.mr.STag
	post := func(e hostif.SQE) {
		t.Helper()
		if err := a.qp.PostSend(e); err != nil {
			t.Fatal(err)
		}
	}
	post(hostif.SQE{Op: hostif.OpWrite, Length: 10000, ID: 1, LKey: lk, LocalTO: a.mr.TO, RKey: b.mr.STag, RemoteTO: b.mr.TO + 1000})
	post(hostif.SQE{Op: hostif.OpSend, Signaled: true, Length: 4, ID: 2, LKey: lk, LocalTO: a.mr.TO})
	post(hostif.SQE{Op: hostif.OpRead, Signaled: true, Length: 3000, ID: 3, LKey: lk, LocalTO: a.mr.TO + 20000, RKey: b.mr.STag, RemoteTO: b.mr.TO + 1000})
	// Four entries outstanding in a ring of four: the fifth waits for a
	// poll.
	post(hostif.SQE{Op: hostif.OpWrite, ID: 4, RKey: 1})
	if err := a.qp.PostSend(hostif.SQE{Op: hostif.OpWrite, ID: 5, RKey: 1}); err == nil || !strings.Contains(err.Error(), "poll its send CQ") {
		t.Fatalf("a fifth entry in a ring of four: %v", err)
	}
	run(t, a, b)
	got := a.polled()
	if len(got) != 2 || got[0].ID != 2 || got[1].ID != 3 || got[1].Length != 3000 || got[1].Status != hostif.StatusSuccess {
		t.Fatalf("A's CQEs %v", got)
	}
	// ID 4 was unsignalled and is still counted outstanding: one slot
	// is free only after the next signalled completion.
	post(hostif.SQE{Op: hostif.OpSendInv, Signaled: true, ID: 6, InvalidateSTag: b.mr.STag})
	run(t, a, b)
	if got := a.polled(); len(got) != 1 || got[0].ID != 6 {
		t.Fatalf("A's CQEs %v", got)
	}
	if !bytes.Equal(b.mr.Buf[1000:11000], a.mr.Buf[:10000]) || !bytes.Equal(a.mr.Buf[20000:23000], a.mr.Buf[:3000]) {
		t.Fatal("the Write or the Read placed other octets")
	}
	got = b.polled()
	if len(got) != 2 || got[0].ID != 100 || got[0].Length != 4 || !got[1].Invalidated || got[1].InvalidatedSTag != b.mr.STag {
		t.Fatalf("B's CQEs %v", got)
	}
	// B's region is invalid in the device; Deregister frees its index.
	if err := b.mr.Deregister(); err != nil {
		t.Fatal(err)
	}
	if err := b.mr.Deregister(); err == nil {
		t.Fatal("a second Deregister")
	}
	// Reregistered, the index has a new key: the old STag is refused.
	mr2, err := b.pd.RegisterMR(b.buf, 0, 4096, hostif.AccessRemoteWrite)
	if err != nil {
		t.Fatal(err)
	}
	if mr2.Index != b.mr.Index || mr2.STag == b.mr.STag {
		t.Fatalf("reregistered: index %d STag %#x, before %d %#x", mr2.Index, mr2.STag, b.mr.Index, b.mr.STag)
	}
	res, err := a.qp.Destroy()
	if err != nil || res.SQIndex != 5 || res.RQIndex != 0 {
		t.Fatalf("Destroy: %v, %v", res, err)
	}
	if err := a.cq.Destroy(); err != nil {
		t.Fatal(err)
	}
	if err := a.d.FreeDMA(a.buf); err != nil {
		t.Fatal(err)
	}
}
