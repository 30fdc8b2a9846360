package main

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/openrnic/rnic/driver/hostif"
)

// sqProgram builds an sq_run request: one QP (0) with its SQ at base, its
// send CQ 0 at base+0x1000, the event ring at base+0x2000 and one MR
// (index 1, key 7, local read and write, remote write) over
// [base+0x8000, +0x4000) at TO 0x1000, then the extra steps.
func sqProgram(t *testing.T, base uint64, extra ...string) string {
	t.Helper()
	cmd := func(c interface {
		Opcode() hostif.AdminOpcode
		Args() (hostif.Args, error)
	}) string {
		a, err := c.Args()
		if err != nil {
			t.Fatal(err)
		}
		w := []string{fmt.Sprint(uint32(c.Opcode()))}
		for _, x := range a {
			w = append(w, fmt.Sprint(x))
		}
		return `{"admin":[` + strings.Join(w, ",") + `]}`
	}
	steps := []string{
		cmd(hostif.DMAWindow{Slot: 0, Addr: base, Length: 0x10000}),
		cmd(hostif.EventRing{Ring: base + 0x2000, Log2: 6, ExcRing: base + 0x3000, ExcLog2: 1, ExcBufLog2: 6}),
		cmd(hostif.CreateCQ{CQN: 0, Ring: base + 0x1000, Log2: 6}),
		cmd(hostif.CreateQP{QPN: 0, PD: 5, SQRing: base, RQRing: base + 0x4000, SQLog2: 4, RQLog2: 2}),
		cmd(hostif.QPRTS{QPN: 0, IRD: 1, ORD: 1, MULPDU: 100, Flags: 0xf, TxSeq: 1000, RxSeq: 2000, TxMarkerBase: 990,
			RxMarkerBase: 1990, RxMSNSend: 1, RxMSNReadRq: 1}),
		cmd(hostif.MRWrite{Index: 1, Key: 7, Access: hostif.AccessLocalRead | hostif.AccessLocalWrite | hostif.AccessRemoteWrite,
			PD: 5, BoundQPN: hostif.NotBound, BaseTO: 0x1000, Length: 0x4000, Addr: base + 0x8000}),
	}
	return `{"op":"sq_run","config":{"qps":4,"cqs":4,"stags":4,"windows":2,"sq_log2":8,"rq_log2":8,"cq_log2":8},` +
		`"mem_size":65536,"steps":[` + strings.Join(append(steps, extra...), ",") + `]}`
}

func sqeStep(t *testing.T, addr uint64, e hostif.SQE, patch func([]byte)) string {
	t.Helper()
	b := make([]byte, hostif.SQESize)
	if err := e.Encode(b); err != nil {
		t.Fatal(err)
	}
	if patch != nil {
		patch(b)
	}
	return fmt.Sprintf(`{"mem":{"addr":%d,"data":"%s"}}`, addr, hex.EncodeToString(b))
}

type sqReply struct {
	Error   string      `json:"error"`
	MemBase uint64      `json:"mem_base"`
	Steps   []sqStepOut `json:"steps"`
}

func runSQ(t *testing.T, req string) sqReply {
	t.Helper()
	var r sqReply
	if err := json.Unmarshal(handle([]byte(req)), &r); err != nil {
		t.Fatal(err)
	}
	if r.Error != "" {
		t.Fatalf("sq_run: %s", r.Error)
	}
	return r
}

// TestSQRun: a signalled Write of 150 octets goes out as two FPDUs (MULPDU
// 100) at the QP_RTS's sequence number and completes; a Read waits for the
// peer's Read Response and a Write behind it completes after it; an entry
// with a reserved bit completes BAD_WQE, sends a Terminate, raises
// QP_ERROR, and the next entry completes FLUSHED.
func TestSQRun(t *testing.T) {
	base := runSQ(t, sqProgram(t, 0)).MemBase // the first run only learns the base
	wr := hostif.SQE{Op: hostif.OpWrite, Signaled: true, Length: 150, ID: 0x11, LKey: 1<<8 | 7, LocalTO: 0x1003, RKey: 0x99, RemoteTO: 5}
	rd := hostif.SQE{Op: hostif.OpRead, Signaled: true, Length: 40, ID: 0x22, LKey: 1<<8 | 7, LocalTO: 0x2000, RKey: 0x55, RemoteTO: 9}
	wr2 := wr
	wr2.ID, wr2.Length = 0x33, 0
	bad := wr
	bad.ID = 0x44
	fl := wr
	fl.ID = 0x55
	r := runSQ(t, sqProgram(t, base,
		sqeStep(t, base, wr, nil), `{"sqdb":{"qpn":0,"value":1}}`,
		sqeStep(t, base+64, rd, nil), sqeStep(t, base+128, wr2, nil), `{"sqdb":{"qpn":0,"value":3}}`,
		fmt.Sprintf(`{"read_resp":{"qpn":0,"sink_stag":%d,"sink_to":%d,"len":40}}`, rd.LKey, rd.LocalTO),
		sqeStep(t, base+192, bad, func(b []byte) { b[50] = 1 }), sqeStep(t, base+256, fl, nil),
		`{"sqdb":{"qpn":0,"value":5}}`,
		`{"sqdb":{"qpn":9,"value":1}}`,
	))
	const setup = 6
	for i := 0; i < setup; i++ {
		if s := r.Steps[i].Status; s == nil || *s != 0 {
			t.Fatalf("setup step %d: status %v", i, s)
		}
	}
	cqe := func(c sqCQE) hostif.CQE {
		b, _ := hex.DecodeString(c.Entry)
		e, err := hostif.DecodeCQE(append(b, 1))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	w := r.Steps[setup+1]
	if len(w.Segs) != 2 || w.Segs[0].Seq != 1000 || len(w.CQEs) != 1 {
		t.Fatalf("the Write: %+v", w)
	}
	if e := cqe(w.CQEs[0]); e.ID != 0x11 || e.Length != 150 || e.Status != hostif.StatusSuccess {
		t.Fatalf("the Write's CQE: %v", e)
	}
	rr := r.Steps[setup+4]
	if len(rr.Segs) != 2 || len(rr.CQEs) != 0 { // the Read Request and the zero-length Write
		t.Fatalf("the Read and the Write behind it: %+v", rr)
	}
	resp := r.Steps[setup+5]
	if len(resp.CQEs) != 2 || cqe(resp.CQEs[0]).ID != 0x22 || cqe(resp.CQEs[0]).Length != 40 || cqe(resp.CQEs[1]).ID != 0x33 {
		t.Fatalf("the Read Response's completions: %+v", resp)
	}
	f := r.Steps[setup+8]
	if len(f.Segs) != 1 || len(f.CQEs) != 2 || len(f.Events) != 1 {
		t.Fatalf("the bad entry: %+v", f)
	}
	if e := cqe(f.CQEs[0]); e.ID != 0x44 || e.Status != hostif.StatusBadWQE {
		t.Fatalf("the bad entry's CQE: %v", e)
	}
	if e := cqe(f.CQEs[1]); e.ID != 0x55 || e.Status != hostif.StatusFlushed {
		t.Fatalf("the flushed entry's CQE: %v", e)
	}
	if f.Events[0] != "01000000000000000000000000000000"[:30] {
		t.Fatalf("QP_ERROR: %s", f.Events[0])
	}
	db := r.Steps[setup+9].Events
	if len(db) != 1 || db[0][:16] != "0400090001000000" {
		t.Fatalf("DOORBELL_BAD: %v", db)
	}
	_ = binary.LittleEndian
}

// TestSQRunBadReadResponse: a Read Response to the wrong STag completes the
// Read with PROTOCOL and the Terminate's layer/etype and code, raises
// QP_ERROR and sends the Terminate; the unsignalled Write behind the Read,
// already on the wire, completes nothing; the next entry completes FLUSHED.
func TestSQRunBadReadResponse(t *testing.T) {
	base := runSQ(t, sqProgram(t, 0)).MemBase
	rd := hostif.SQE{Op: hostif.OpRead, Signaled: true, Length: 40, ID: 0x22, LKey: 1<<8 | 7, LocalTO: 0x2000, RKey: 0x55, RemoteTO: 9}
	wr := hostif.SQE{Op: hostif.OpWrite, Length: 0, ID: 0x33}
	r := runSQ(t, sqProgram(t, base, sqeStep(t, base, rd, nil), sqeStep(t, base+64, wr, nil), `{"sqdb":{"qpn":0,"value":2}}`,
		fmt.Sprintf(`{"read_resp":{"qpn":0,"sink_stag":%d,"sink_to":%d,"len":40,"bad":true}}`, rd.LKey, rd.LocalTO),
		sqeStep(t, base+128, wr, nil), `{"sqdb":{"qpn":0,"value":3}}`))
	o := r.Steps[len(r.Steps)-3]
	if len(o.CQEs) != 1 || len(o.Events) != 1 || len(o.Segs) != 1 {
		t.Fatalf("the bad Read Response: %+v", o)
	}
	b, _ := hex.DecodeString(o.CQEs[0].Entry)
	e, err := hostif.DecodeCQE(append(b, 1))
	if err != nil || e.ID != 0x22 || e.Status != hostif.StatusProtocol || e.TermLayerEType == 0 {
		t.Fatalf("the Read's CQE: %v %v", e, err)
	}
	o = r.Steps[len(r.Steps)-1]
	if len(o.CQEs) != 1 {
		t.Fatalf("the entry after the error: %+v", o)
	}
	b, _ = hex.DecodeString(o.CQEs[0].Entry)
	if e, err = hostif.DecodeCQE(append(b, 1)); err != nil || e.ID != 0x33 || e.Status != hostif.StatusFlushed {
		t.Fatalf("the flushed CQE: %v %v", e, err)
	}
}

// TestSQRunXFail: another engine's local fault (xfail) behind an
// outstanding Read fails the QP as the SQ engine's own faults do: QP_ERROR
// (detail 0, value 0), a Terminate of RDMAP Local Catastrophic (4 octets of
// zero Terminate Control), the Read completing FLUSHED; an xfail on a QP
// already in error, or without QP_RTS, changes nothing.
func TestSQRunXFail(t *testing.T) {
	base := runSQ(t, sqProgram(t, 0)).MemBase
	rd := hostif.SQE{Op: hostif.OpRead, Signaled: true, Length: 40, ID: 0x22, LKey: 1<<8 | 7, LocalTO: 0x2000, RKey: 0x55, RemoteTO: 9}
	r := runSQ(t, sqProgram(t, base, sqeStep(t, base, rd, nil), `{"sqdb":{"qpn":0,"value":1}}`,
		`{"xfail":{"qpn":0}}`, `{"xfail":{"qpn":0}}`, `{"xfail":{"qpn":2}}`))
	o := r.Steps[len(r.Steps)-3]
	if len(o.Events) != 1 || len(o.Segs) != 1 || len(o.CQEs) != 1 {
		t.Fatalf("the fault: %+v", o)
	}
	ev, _ := hex.DecodeString(o.Events[0])
	if ev[0] != byte(hostif.EventQPError) || ev[1] != 0 || binary.LittleEndian.Uint32(ev[4:8]) != 0 {
		t.Fatalf("the event %x", ev)
	}
	b, _ := hex.DecodeString(o.CQEs[0].Entry)
	if e, err := hostif.DecodeCQE(append(b, 1)); err != nil || e.ID != 0x22 || e.Status != hostif.StatusFlushed {
		t.Fatalf("the Read's CQE: %v %v", e, err)
	}
	for _, o := range r.Steps[len(r.Steps)-2:] {
		if len(o.Events) != 0 || len(o.Segs) != 0 || len(o.CQEs) != 0 {
			t.Fatalf("an xfail on a QP in error or not started: %+v", o)
		}
	}
}

// TestRRRun: rr_run answers the peer's Read Requests as the model does: a
// Read of 150 octets through a remote-read MR goes out as two Read
// Response FPDUs (MULPDU 100, op 2) carrying the source's octets, a
// zero-size Read through an invalid STag as one empty Read Response, and a
// Read through an MR without remote read as a Terminate (op 7, RDMAP
// Remote Protection, Access rights) with QP_ERROR; sq_run refuses read_req.
func TestRRRun(t *testing.T) {
	base := runSQ(t, sqProgram(t, 0)).MemBase
	mr := func(idx uint16, key uint8, acc uint8) string {
		a, err := hostif.MRWrite{Index: idx, Key: key, Access: acc, PD: 5, BoundQPN: hostif.NotBound, BaseTO: 0x1000,
			Length: 0x4000, Addr: base + 0x8000}.Args()
		if err != nil {
			t.Fatal(err)
		}
		w := []string{fmt.Sprint(uint32(hostif.OpMRWrite))}
		for _, x := range a {
			w = append(w, fmt.Sprint(x))
		}
		return `{"admin":[` + strings.Join(w, ",") + `]}`
	}
	src := make([]byte, 150)
	for i := range src {
		src[i] = byte(3*i + 1)
	}
	req := strings.Replace(sqProgram(t, base,
		mr(2, 9, hostif.AccessRemoteRead), mr(3, 4, hostif.AccessLocalRead),
		fmt.Sprintf(`{"mem":{"addr":%d,"data":"%s"}}`, base+0x8010, hex.EncodeToString(src)),
		fmt.Sprintf(`{"read_req":{"qpn":0,"sink_stag":%d,"sink_to":77,"size":150,"src_stag":%d,"src_to":%d}}`,
			0xabcd01, 2<<8|9, 0x1010),
		`{"read_req":{"qpn":0,"sink_stag":5,"sink_to":6,"size":0,"src_stag":4294967295,"src_to":0}}`,
		fmt.Sprintf(`{"read_req":{"qpn":0,"sink_stag":5,"sink_to":6,"size":1,"src_stag":%d,"src_to":%d}}`, 3<<8|4, 0x1000),
	), `"op":"sq_run"`, `"op":"rr_run"`, 1)
	r := runSQ(t, req)
	ops := func(o sqStepOut) []int {
		var v []int
		for _, s := range o.Segs {
			if s.Op == nil {
				t.Fatalf("segment without op: %+v", s)
			}
			v = append(v, *s.Op)
		}
		return v
	}
	n := len(r.Steps)
	if got := ops(r.Steps[n-3]); fmt.Sprint(got) != "[2 2]" {
		t.Fatalf("150-octet Read: ops %v", got)
	}
	a, _ := hex.DecodeString(r.Steps[n-3].Segs[0].Octets)
	b, _ := hex.DecodeString(r.Steps[n-3].Segs[1].Octets)
	if !strings.Contains(string(a), string(src[:20])) || !strings.Contains(string(b), string(src[140:])) {
		t.Fatalf("the Read Response does not carry the source: %x %x", a, b)
	}
	if got := ops(r.Steps[n-2]); fmt.Sprint(got) != "[2]" {
		t.Fatalf("zero-size Read: ops %v", got)
	}
	last := r.Steps[n-1]
	if got := ops(last); fmt.Sprint(got) != "[7]" {
		t.Fatalf("Read without remote read access: ops %v", got)
	}
	if s := last.Segs[0]; *s.LayerEType != 0x01 || *s.Code != 0x02 {
		t.Fatalf("Terminate: layer/etype %#x code %#x, want 0x01 0x02", *s.LayerEType, *s.Code)
	}
	if len(last.Events) != 1 || !strings.HasPrefix(last.Events[0], "0101") {
		t.Fatalf("events %v, want QP_ERROR with layer/etype 0x01", last.Events)
	}
	var bad sqReply
	if err := json.Unmarshal(handle([]byte(strings.Replace(req, `"op":"rr_run"`, `"op":"sq_run"`, 1))), &bad); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(bad.Error, "read_req is rr_run's") {
		t.Fatalf("sq_run with read_req: error %q", bad.Error)
	}
}
