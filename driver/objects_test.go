package driver_test

import (
	"testing"

	"github.com/openrnic/rnic/driver"
	"github.com/openrnic/rnic/driver/hostif"
)

// What `rnic-loader stag list` and `qp list` show: the regions as they are
// registered and deregistered (a reused index under a new key), and each
// QP's state through CREATE_QP, QP_RTS and the error events of a Write to
// an STag the peer does not have (the target's QP_ERROR, the requester's
// TERMINATE_RECEIVED).
func TestObjectLists(t *testing.T) {
	a, b := newEnd(t, 7), newEnd(t, 0x8000_0000)
	if q := a.d.QPs(); len(q) != 1 || q[0].QPN != a.qp.N || q[0].State != driver.QPStateCreated || q[0].SQLog2 != 2 ||
		q[0].SendCQ != a.cq.N || q[0].RecvCQ != a.cq.N || q[0].PD != a.pd.ID {
		t.Fatalf("QPs after CREATE_QP: %+v", q)
	}
	extra, err := a.pd.RegisterMR(a.buf, 100, 200, hostif.AccessRemoteRead)
	if err != nil {
		t.Fatal(err)
	}
	ms := a.d.MRs()
	if len(ms) != 2 || ms[0].STag != a.mr.STag || ms[1].STag != extra.STag || ms[1].Len != 200 || ms[1].TO != a.buf.Addr+100 ||
		ms[1].Access != hostif.AccessRemoteRead || driver.AccessString(ms[1].Access) != "RR" || driver.AccessString(a.mr.Access) != "LR,LW,RR,RW" {
		t.Fatalf("MRs: %+v", ms)
	}
	if a.d.MR(extra.STag) != extra || a.d.MR(extra.STag^1) != nil {
		t.Fatal("MR by STag: the region, or a wrong key, not refused")
	}
	if err := extra.Deregister(); err != nil {
		t.Fatal(err)
	}
	again, err := a.pd.RegisterMR(a.buf, 0, 10, hostif.AccessLocalRead)
	if err != nil {
		t.Fatal(err)
	}
	if ms := a.d.MRs(); len(ms) != 2 || ms[1].Index != extra.Index || ms[1].STag == extra.STag || a.d.MR(extra.STag) != nil {
		t.Fatalf("MRs after the index's reuse: %+v (old STag %#x)", ms, extra.STag)
	}
	_ = again
	connect(a, b)
	if q := a.d.QPs(); q[0].State != driver.QPStateRTS {
		t.Fatalf("after QP_RTS: %v", q[0].State)
	}
	if err := a.qp.PostSend(hostif.SQE{Op: hostif.OpWrite, Signaled: true, ID: 9, Length: 8, LKey: a.mr.STag, LocalTO: a.mr.TO,
		RKey: b.mr.STag ^ 0x80, RemoteTO: b.mr.TO}); err != nil {
		t.Fatal(err)
	}
	if q := a.d.QPs(); q[0].SQPI != 1 || q[0].SQOutstanding != 1 {
		t.Fatalf("after a post: %+v", q[0])
	}
	run(t, a, b)
	for _, e := range []*end{a, b} {
		if q := e.d.QPs(); q[0].State != driver.QPStateRTS {
			t.Fatalf("before Events: %v (the driver learns of the error from the event ring)", q[0].State)
		}
		evs, err := e.d.Events()
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			t.Fatal("no error event")
		}
		if q := e.d.QPs(); q[0].State != driver.QPStateError || q[0].State.String() != "error" {
			t.Fatalf("after %v: %v", evs, q[0].State)
		}
	}
	if _, err := a.qp.Destroy(); err != nil {
		t.Fatal(err)
	}
	if q := a.d.QPs(); len(q) != 0 {
		t.Fatalf("after Destroy: %+v", q)
	}
}
