package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/openrnic/rnic/driver/hostif"
)

type rqReply struct {
	Error   string      `json:"error"`
	MemBase uint64      `json:"mem_base"`
	Steps   []rqStepOut `json:"steps"`
}

// rqProgram is sqProgram's setup (QP 0 with its RQ at base+0x4000 and a
// ring of 4, recv CQ 0, MR 1 over [base+0x8000, +0x4000) at TO 0x1000, MR 2
// remote write, unbound, for the Invalidates) as an rq_run request.
func rqProgram(t *testing.T, base uint64, extra ...string) string {
	t.Helper()
	req := sqProgram(t, base)
	mr2 := hostif.MRWrite{Index: 2, Key: 9, Access: hostif.AccessRemoteWrite, PD: 5, BoundQPN: hostif.NotBound,
		BaseTO: 0, Length: 0x100, Addr: base + 0xc000}
	a, err := mr2.Args()
	if err != nil {
		t.Fatal(err)
	}
	w := []string{fmt.Sprint(uint32(mr2.Opcode()))}
	for _, x := range a {
		w = append(w, fmt.Sprint(x))
	}
	steps := append([]string{`{"admin":[` + strings.Join(w, ",") + `]}`}, extra...)
	req = strings.Replace(req, `"op":"sq_run"`, `"op":"rq_run"`, 1)
	return strings.TrimSuffix(req, "]}") + "," + strings.Join(steps, ",") + "]}"
}

func runRQ(t *testing.T, req string) rqReply {
	t.Helper()
	var r rqReply
	if err := json.Unmarshal(handle([]byte(req)), &r); err != nil {
		t.Fatal(err)
	}
	if r.Error != "" {
		t.Fatalf("rq_run: %s", r.Error)
	}
	return r
}

func rqeStep(t *testing.T, addr uint64, e hostif.RQE, patch func([]byte)) string {
	t.Helper()
	b := make([]byte, hostif.RQESize)
	if err := e.Encode(b); err != nil {
		t.Fatal(err)
	}
	if patch != nil {
		patch(b)
	}
	return fmt.Sprintf(`{"mem":{"addr":%d,"data":"%s"}}`, addr, hex.EncodeToString(b))
}

func rqCQE(t *testing.T, c sqCQE) hostif.CQE {
	t.Helper()
	b, _ := hex.DecodeString(c.Entry)
	e, err := hostif.DecodeCQE(append(b, 1))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestRQRun: two good entries (one of length 0) are posted with the
// buffer's device address, a reserved octet completes BAD_WQE and a key
// mismatch LOCAL_ACCESS (neither posted); a Send with SE and Invalidate
// completes the oldest with its length, the solicited and invalidated flags
// and the STag; a Send longer than the next buffer fails the QP (QP_ERROR,
// the buffer PROTOCOL with the Terminate's octets); the next entry
// completes FLUSHED; an RQ doorbell on QP 9 raises DOORBELL_BAD (detail 1).
func TestRQRun(t *testing.T) {
	base := runRQ(t, rqProgram(t, 0)).MemBase
	rq := base + 0x4000
	good := hostif.RQE{ID: 0x11, LKey: 1<<8 | 7, Length: 100, LocalTO: 0x1003}
	zero := hostif.RQE{ID: 0x22}
	bad := hostif.RQE{ID: 0x33}
	key := hostif.RQE{ID: 0x44, LKey: 1<<8 | 8, Length: 10, LocalTO: 0x1000}
	small := hostif.RQE{ID: 0x55, LKey: 1<<8 | 7, Length: 8, LocalTO: 0x2000}
	r := runRQ(t, rqProgram(t, base,
		rqeStep(t, rq, good, nil), rqeStep(t, rq+32, zero, nil), rqeStep(t, rq+64, bad, func(b []byte) { b[30] = 1 }),
		rqeStep(t, rq+96, key, nil), `{"rqdb":{"qpn":0,"value":4}}`,
		`{"send":{"qpn":0,"op":6,"len":77,"inv":521}}`,
		`{"send":{"qpn":0,"op":3,"len":0}}`,
		rqeStep(t, rq, small, nil), `{"rqdb":{"qpn":0,"value":5}}`,
		`{"send":{"qpn":0,"op":3,"len":9}}`,
		rqeStep(t, rq+32, zero, nil), `{"rqdb":{"qpn":0,"value":6}}`,
		`{"rqdb":{"qpn":9,"value":1}}`,
	))
	const setup = 7
	for i := 0; i < setup; i++ {
		if s := r.Steps[i].Status; s == nil || *s != 0 {
			t.Fatalf("setup step %d: status %v", i, s)
		}
	}
	db := r.Steps[setup+4]
	if len(db.Posts) != 2 || db.Posts[0] != (rqPost{ID: 0x11, Addr: base + 0x8003, Len: 100}) ||
		db.Posts[1] != (rqPost{ID: 0x22}) || len(db.CQEs) != 2 {
		t.Fatalf("the doorbell: %+v", db)
	}
	if e := rqCQE(t, db.CQEs[0]); e.ID != 0x33 || e.Status != hostif.StatusBadWQE || e.Op != hostif.OpRecv {
		t.Fatalf("BAD_WQE: %v", e)
	}
	if e := rqCQE(t, db.CQEs[1]); e.ID != 0x44 || e.Status != hostif.StatusLocalAccess {
		t.Fatalf("LOCAL_ACCESS: %v", e)
	}
	s := r.Steps[setup+5]
	if len(s.CQEs) != 1 {
		t.Fatalf("the Send: %+v", s)
	}
	if e := rqCQE(t, s.CQEs[0]); e.ID != 0x11 || e.Length != 77 || !e.Solicited || !e.Invalidated || e.InvalidatedSTag != 521 {
		t.Fatalf("the Send's CQE: %v", e)
	}
	if e := rqCQE(t, r.Steps[setup+6].CQEs[0]); e.ID != 0x22 || e.Length != 0 || e.Solicited || e.Invalidated {
		t.Fatalf("the empty Send's CQE: %v", e)
	}
	f := r.Steps[setup+9]
	if len(f.CQEs) != 1 || len(f.Events) != 1 || f.Events[0][:2] != "01" {
		t.Fatalf("the long Send: %+v", f)
	}
	if e := rqCQE(t, f.CQEs[0]); e.ID != 0x55 || e.Status != hostif.StatusProtocol || e.TermLayerEType == 0 {
		t.Fatalf("the long Send's CQE: %v", e)
	}
	fl := r.Steps[setup+11]
	if len(fl.Posts) != 0 || len(fl.CQEs) != 1 || rqCQE(t, fl.CQEs[0]).Status != hostif.StatusFlushed {
		t.Fatalf("after the error: %+v", fl)
	}
	if ev := r.Steps[setup+12].Events; len(ev) != 1 || ev[0][:16] != "0401090001000000" {
		t.Fatalf("DOORBELL_BAD: %v", ev)
	}
}
