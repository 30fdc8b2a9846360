package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/openrnic/rnic/iwarp/ddp"
	"github.com/openrnic/rnic/iwarp/rdmap"
)

// placeReq runs one ddp_place request through handle.
func placeReq(t *testing.T, req map[string]any) (mem []byte, events []placeEvent, reqErr string) {
	t.Helper()
	req["op"] = "ddp_place"
	line, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var reply struct {
		Mem    string       `json:"mem"`
		Events []placeEvent `json:"events"`
		Error  string       `json:"error"`
	}
	if err := json.Unmarshal(handle(line), &reply); err != nil {
		t.Fatal(err)
	}
	mem, err = hex.DecodeString(reply.Mem)
	if err != nil {
		t.Fatal(err)
	}
	return mem, reply.Events, reply.Error
}

func segs(t *testing.T, m rdmap.Message, mulpdu int) []string {
	t.Helper()
	ss, err := m.AppendSegments(nil, mulpdu)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = hex.EncodeToString(s)
	}
	return out
}

func ulpdus(conn int, verdict *int, hexes ...string) []any {
	var ops []any
	for _, h := range hexes {
		u := map[string]any{"conn": conn, "data": h}
		if verdict != nil {
			u["verdict"] = *verdict
		}
		ops = append(ops, map[string]any{"ulpdu": u})
	}
	return ops
}

// TestPlaceOrder: a Write, a Send and a Read Request are placed where the
// STag and the posted buffers say, delivered in order, with the Go stack's
// fields; the bytes of a Write are at the region's host offset plus TO -
// base.
func TestPlaceOrder(t *testing.T) {
	good := 0
	rr := rdmap.ReadRequest{SinkSTag: 1, SinkTO: 2, Size: 3, SourceSTag: 4, SourceTO: 5}
	ops := []any{
		map[string]any{"conn": map[string]any{"conn": 3, "pd": 9}},
		map[string]any{"stag": map[string]any{"index": 5, "valid": true, "key": 0x21, "pd": 9, "access": 1, "base": 1000, "len": 100, "host": 64}},
		map[string]any{"post": map[string]any{"conn": 3, "qn": 0, "addr": 200, "len": 16, "id": 77}},
		map[string]any{"post": map[string]any{"conn": 3, "qn": 1, "addr": 300, "len": 28, "id": 78}},
	}
	ops = append(ops, ulpdus(3, &good, segs(t, rdmap.NewWrite(ddp.MakeSTag(5, 0x21), 1010, []byte("hello world")), 20)...)...)
	ops = append(ops, ulpdus(3, &good, segs(t, rdmap.NewSend(1, []byte("abc")), 128)...)...)
	ops = append(ops, ulpdus(3, &good, segs(t, rdmap.NewReadRequest(1, rr), 128)...)...)
	mem, events, reqErr := placeReq(t, map[string]any{"mem_size": 512, "ops": ops})
	if reqErr != "" {
		t.Fatal(reqErr)
	}
	if got := mem[74 : 74+11]; string(got) != "hello world" {
		t.Errorf("Write placed %q at 74", got)
	}
	if string(mem[200:203]) != "abc" || !bytes.Equal(mem[300:328], rr.Append(nil)) {
		t.Errorf("Send or Read Request not placed: % x / % x", mem[200:203], mem[300:328])
	}
	if len(events) != 3 {
		t.Fatalf("events %+v", events)
	}
	w, s, r := events[0], events[1], events[2]
	if w.Kind != "completion" || !w.Tagged || w.STag != ddp.MakeSTag(5, 0x21) || w.ULPDU != 1 { // two segments
		t.Errorf("Write: %+v", w)
	}
	if s.Kind != "completion" || s.QN != 0 || s.MSN != 1 || s.Len != 3 || s.ID != 77 || s.ULPDU != 2 {
		t.Errorf("Send: %+v", s)
	}
	if r.QN != 1 || r.Len != 28 || r.ID != 78 || r.RR != hex.EncodeToString(rr.Append(nil)) {
		t.Errorf("Read Request: %+v", r)
	}
}

// TestPlaceErrors: the first error ends the stream's reports and its
// placement; a bad verdict wins over the ULPDU's own error; a Send with
// Invalidate makes later Writes fail; a reconfigured connection starts
// afresh.
func TestPlaceErrors(t *testing.T) {
	good, crc := 0, 2
	stag := ddp.MakeSTag(7, 1)
	region := map[string]any{"stag": map[string]any{"index": 7, "valid": true, "key": 1, "pd": 1, "access": 3, "base": 0, "len": 32, "host": 0}}
	conn := func(c int) any { return map[string]any{"conn": map[string]any{"conn": c, "pd": 1}} }
	post := func(c int) any {
		return map[string]any{"post": map[string]any{"conn": c, "qn": 0, "addr": 100 + 40*c, "len": 40, "id": c}}
	}
	ops := []any{region, conn(0), conn(1), conn(2), post(0), post(1), post(2)}
	// conn 0: out-of-bounds Write, then a good one (not placed).
	ops = append(ops, ulpdus(0, &good, segs(t, rdmap.NewWrite(stag, 30, []byte("xyz")), 128)...)...)
	ops = append(ops, ulpdus(0, &good, segs(t, rdmap.NewWrite(stag, 0, []byte("nope")), 128)...)...)
	// conn 1: an invalid-STag Write with a CRC error: the LLP error wins.
	ops = append(ops, ulpdus(1, &crc, segs(t, rdmap.NewWrite(stag^0xff, 0, []byte("q")), 128)...)...)
	// conn 2: Send with Invalidate of the region, then a Write to it.
	ops = append(ops, ulpdus(2, &good, segs(t, rdmap.NewSendInvalidate(1, stag, []byte("si")), 128)...)...)
	ops = append(ops, ulpdus(2, &good, segs(t, rdmap.NewWrite(stag, 4, []byte("late")), 128)...)...)
	// conn 0 again, restarted: a fresh stream, the region now invalid.
	ops = append(ops, conn(0))
	ops = append(ops, ulpdus(0, &good, segs(t, rdmap.NewWrite(stag, 0, []byte("z")), 128)...)...)
	mem, events, reqErr := placeReq(t, map[string]any{"mem_size": 256, "ops": ops})
	if reqErr != "" {
		t.Fatal(reqErr)
	}
	if !bytes.Equal(mem[:32], make([]byte, 32)) {
		t.Errorf("region written: % x", mem[:32])
	}
	if string(mem[180:182]) != "si" {
		t.Errorf("Send with Invalidate not placed: % x", mem[180:182])
	}
	type want struct {
		conn               int
		kind               string
		layer, etype, code uint8
		inv                uint32
	}
	wants := []want{
		{0, "error", 1, 1, 1, 0}, // DDP base or bounds
		{1, "error", 2, 0, 2, 0}, // LLP, MPA CRC
		{2, "completion", 0, 0, 0, stag},
		{2, "error", 1, 1, 0, 0}, // DDP invalid STag
		{0, "error", 1, 1, 0, 0}, // restarted, invalid STag
	}
	if len(events) != len(wants) {
		t.Fatalf("events %+v", events)
	}
	for i, w := range wants {
		e := events[i]
		if e.Conn != w.conn || e.Kind != w.kind || e.Layer != w.layer || e.EType != w.etype || e.Code != w.code || e.InvSTag != w.inv {
			t.Errorf("event %d: %+v, want %+v", i, e, w)
		}
	}
}

// TestPlaceNoVerdict: a ULPDU without a verdict is placed but not
// delivered, nor is anything after it.
func TestPlaceNoVerdict(t *testing.T) {
	good := 0
	ops := []any{
		map[string]any{"conn": map[string]any{"conn": 0, "pd": 1}},
		map[string]any{"post": map[string]any{"conn": 0, "qn": 0, "addr": 0, "len": 8, "id": 1}},
		map[string]any{"post": map[string]any{"conn": 0, "qn": 0, "addr": 8, "len": 8, "id": 2}},
	}
	ops = append(ops, ulpdus(0, nil, segs(t, rdmap.NewSend(1, []byte("a")), 128)...)...)
	ops = append(ops, ulpdus(0, &good, segs(t, rdmap.NewSend(2, []byte("b")), 128)...)...)
	mem, events, reqErr := placeReq(t, map[string]any{"mem_size": 16, "ops": ops})
	if reqErr != "" || len(events) != 0 || mem[0] != 'a' || mem[8] != 'b' {
		t.Fatalf("err %q events %+v mem % x", reqErr, events, mem)
	}
}

func TestPlaceBadRequests(t *testing.T) {
	cases := []struct {
		req  string
		want string
	}{
		{`{"op":"ddp_place","ops":[]}`, `ddp_place: "mem_size" missing`},
		{`{"op":"ddp_place","mem_size":8,"ops":[{}]}`, `ddp_place: ops[0]: want exactly one of`},
		{`{"op":"ddp_place","mem_size":8,"ops":[{"stag":{"index":1,"valid":true,"len":9,"host":0}}]}`, `ddp_place: ops[0] stag: 9 octets at 0 outside`},
		{`{"op":"ddp_place","mem_size":8,"ops":[{"post":{"conn":1,"addr":0,"len":1}}]}`, `ddp_place: ops[0]: post to connection 1, which is not configured`},
		{`{"op":"ddp_place","mem_size":8,"ops":[{"ulpdu":{"conn":1,"data":"zz"}}]}`, `ddp_place: ops[0]: field "data": not a hex string`},
		{`{"op":"ddp_place","mem_size":8,"ops":[{"early":{"data":"00"}}]}`, `ddp_place: ops[0]: early without conn`},
		{`{"op":"ddp_place","mem_size":8,"ops":[{"early":{"conn":1,"data":"zz"}}]}`, `ddp_place: ops[0]: field "data": not a hex string`},
	}
	for _, c := range cases {
		m := decodeReply(t, handle([]byte(c.req)))
		if msg, _ := m["error"].(string); !strings.HasPrefix(msg, c.want) {
			t.Errorf("%s: error %q, want prefix %q", c.req, msg, c.want)
		}
	}
}

// TestPlaceEarly: ULPDUs found out of order are placed where their headers
// say, as ddp.Sink.Place does, and report nothing; one that fails a check
// (out of bounds, an MSN with no buffer) places nothing and ends nothing;
// the same ULPDUs in stream order then deliver as usual.
func TestPlaceEarly(t *testing.T) {
	good := 0
	write := segs(t, rdmap.NewWrite(ddp.MakeSTag(5, 0x21), 1010, []byte("hello world")), 64)
	outside := segs(t, rdmap.NewWrite(ddp.MakeSTag(5, 0x21), 1095, []byte("too long")), 64)
	send := segs(t, rdmap.NewSend(2, []byte("xyz")), 64)
	noBuf := segs(t, rdmap.NewSend(9, []byte("nope")), 64)
	early := func(h string) any { return map[string]any{"early": map[string]any{"conn": 3, "data": h}} }
	ops := []any{
		map[string]any{"conn": map[string]any{"conn": 3, "pd": 9}},
		map[string]any{"stag": map[string]any{"index": 5, "valid": true, "key": 0x21, "pd": 9, "access": 1, "base": 1000, "len": 100, "host": 64}},
		map[string]any{"post": map[string]any{"conn": 3, "qn": 0, "addr": 200, "len": 16, "id": 77}},
		map[string]any{"post": map[string]any{"conn": 3, "qn": 0, "addr": 220, "len": 16, "id": 78}},
		early(write[0]), early(outside[0]), early(send[0]), early(noBuf[0]),
	}
	mem, events, reqErr := placeReq(t, map[string]any{"mem_size": 512, "ops": ops})
	if reqErr != "" {
		t.Fatal(reqErr)
	}
	if string(mem[74:85]) != "hello world" || string(mem[220:223]) != "xyz" || len(events) != 0 {
		t.Fatalf("early: % x / % x, events %+v", mem[74:85], mem[220:223], events)
	}
	if !bytes.Equal(mem[159:167], make([]byte, 8)) || !bytes.Equal(mem[200:216], make([]byte, 16)) {
		t.Errorf("an early ULPDU that fails its checks was placed")
	}
	// Then in stream order: the Write and the Send for MSN 1 and 2 deliver.
	ops = append(ops, ulpdus(3, &good, write...)...)
	ops = append(ops, ulpdus(3, &good, segs(t, rdmap.NewSend(1, []byte("abc")), 64)...)...)
	ops = append(ops, ulpdus(3, &good, send...)...)
	mem, events, reqErr = placeReq(t, map[string]any{"mem_size": 512, "ops": ops})
	if reqErr != "" {
		t.Fatal(reqErr)
	}
	if len(events) != 3 || events[0].Kind != "completion" || events[2].MSN != 2 || events[2].ID != 78 ||
		string(mem[200:203]) != "abc" || string(mem[220:223]) != "xyz" {
		t.Fatalf("in order after early: events %+v", events)
	}
	// An early op on a connection never configured is ignored.
	if _, _, reqErr := placeReq(t, map[string]any{"mem_size": 16, "ops": []any{
		map[string]any{"early": map[string]any{"conn": 1, "data": write[0]}}}}); reqErr != "" {
		t.Fatal(reqErr)
	}
}
