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

type streamResp struct {
	Events  []streamEvent   `json:"events"`
	Places  [][2]int        `json:"places"`
	Drops   []streamDrop    `json:"drops"`
	Refused []streamRefused `json:"refused"`
	Mem     string          `json:"mem"`
	Error   string          `json:"error"`
}

func streamReq(t *testing.T, req map[string]any) streamResp {
	t.Helper()
	req["op"] = "ddp_place_stream"
	line, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var r streamResp
	if err := json.Unmarshal(handle(line), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPlaceStreamMatchesPlace: the same steps in three batches give
// ddp_place's memory and events, and places names each segment's octets.
func TestPlaceStreamMatchesPlace(t *testing.T) {
	good, crc := 0, 2
	stag := ddp.MakeSTag(5, 0x21)
	ops := []any{
		map[string]any{"conn": map[string]any{"conn": 3, "pd": 9}},
		map[string]any{"conn": map[string]any{"conn": 4, "pd": 9}},
		map[string]any{"stag": map[string]any{"index": 5, "valid": true, "key": 0x21, "pd": 9, "access": 1, "base": 1000, "len": 100, "host": 64}},
		map[string]any{"post": map[string]any{"conn": 3, "qn": 0, "addr": 200, "len": 16, "id": 77}},
		map[string]any{"post": map[string]any{"conn": 4, "qn": 0, "addr": 240, "len": 16, "id": 78}},
	}
	ops = append(ops, ulpdus(3, &good, segs(t, rdmap.NewWrite(stag, 1010, []byte("hello world")), 20)...)...)
	ops = append(ops, ulpdus(4, &good, segs(t, rdmap.NewSendInvalidate(1, stag, []byte("inv")), 128)...)...)
	ops = append(ops, ulpdus(3, &good, segs(t, rdmap.NewWrite(stag, 1000, []byte("late")), 128)...)...)
	ops = append(ops, ulpdus(4, &crc, segs(t, rdmap.NewWrite(stag, 1000, []byte("x")), 128)...)...)
	mem, want, reqErr := placeReq(t, map[string]any{"mem_size": 512, "ops": ops})
	if reqErr != "" {
		t.Fatal(reqErr)
	}
	var got []placeEvent
	var places [][2]int
	cuts := []int{0, 4, 7, len(ops)}
	for b := 0; b+1 < len(cuts); b++ {
		req := map[string]any{"session": "t", "ops": ops[cuts[b]:cuts[b+1]], "mem": true}
		if b == 0 {
			req["open"] = map[string]any{"mem_size": 512}
		}
		r := streamReq(t, req)
		if r.Error != "" {
			t.Fatal(r.Error)
		}
		for _, e := range r.Events {
			got = append(got, e.placeEvent)
		}
		places = append(places, r.Places...)
		if b == len(cuts)-2 && r.Mem != hex.EncodeToString(mem) {
			t.Errorf("memory differs from ddp_place's")
		}
	}
	if len(got) != len(want) {
		t.Fatalf("events %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	// The Write's two segments (11 octets, MULPDU 20: 6 + 5), the Send,
	// the Write after the invalidation (nothing), the Write with a CRC
	// error after the stream failed... on conn 4 after the Send: placed.
	wantPlaces := [][2]int{{74, 6}, {80, 5}, {240, 3}, {0, 0}, {0, 0}}
	if len(places) != len(wantPlaces) {
		t.Fatalf("places %v, want %v", places, wantPlaces)
	}
	for i := range wantPlaces {
		if places[i] != wantPlaces[i] {
			t.Errorf("places %v, want %v", places, wantPlaces)
			break
		}
	}
	if r := streamReq(t, map[string]any{"session": "t", "ops": []any{}, "close": true}); r.Error != "" {
		t.Fatal(r.Error)
	}
	if r := streamReq(t, map[string]any{"session": "t", "ops": []any{}}); !strings.Contains(r.Error, `no session "t"`) {
		t.Errorf("closed session: %q", r.Error)
	}
}

// TestPlaceStreamDropsRefusedPoison: ULPDUs of a disabled connection are
// dropped and listed; posts past the ring depth, to QN 3 and to a disabled
// connection are refused;
// a Write into poisoned memory reports a Local Catastrophic Error, keeps
// the poisoned octets and ends the stream.
func TestPlaceStreamDropsRefusedPoison(t *testing.T) {
	good := 0
	stag := ddp.MakeSTag(2, 7)
	post := func(c, qn, addr, id int) any {
		return map[string]any{"post": map[string]any{"conn": c, "qn": qn, "addr": addr, "len": 8, "id": id}}
	}
	ops := []any{
		map[string]any{"conn": map[string]any{"conn": 0, "pd": 1}},
		map[string]any{"conn": map[string]any{"conn": 1, "pd": 1}},
		map[string]any{"conn": map[string]any{"conn": 1, "pd": 1, "enable": false}},
		map[string]any{"stag": map[string]any{"index": 2, "valid": true, "key": 7, "pd": 1, "access": 1, "base": 0, "len": 64, "host": 0}},
		map[string]any{"poison": map[string]any{"addr": 10, "len": 2}},
		post(0, 0, 100, 1), post(0, 0, 108, 2), post(0, 0, 116, 3), post(0, 3, 124, 4), post(1, 0, 132, 5),
	}
	ops = append(ops, ulpdus(1, &good, segs(t, rdmap.NewWrite(stag, 40, []byte("dropped")), 128)...)...)
	ops = append(ops, ulpdus(0, &good, segs(t, rdmap.NewWrite(stag, 8, []byte("abcdef")), 128)...)...)
	ops = append(ops, ulpdus(0, &good, segs(t, rdmap.NewWrite(stag, 20, []byte("after")), 128)...)...)
	r := streamReq(t, map[string]any{"session": "p", "open": map[string]any{"mem_size": 256, "ring_depth": 2}, "ops": ops, "mem": true, "close": true})
	if r.Error != "" {
		t.Fatal(r.Error)
	}
	mem, _ := hex.DecodeString(r.Mem)
	if !bytes.Equal(mem[8:14], []byte{'a', 'b', 0, 0, 'e', 'f'}) || mem[20] != 0 || mem[40] != 0 {
		t.Errorf("memory % x", mem[:48])
	}
	if len(r.Drops) != 1 || r.Drops[0] != (streamDrop{Op: 10, Conn: 1}) {
		t.Errorf("drops %+v", r.Drops)
	}
	wantRef := []streamRefused{{Op: 7, Conn: 0, QN: 0, ID: 3, Reason: 1}, {Op: 8, Conn: 0, QN: 3, ID: 4, Reason: 2},
		{Op: 9, Conn: 1, QN: 0, ID: 5, Reason: 3}}
	if len(r.Refused) != 3 || r.Refused[0] != wantRef[0] || r.Refused[1] != wantRef[1] || r.Refused[2] != wantRef[2] {
		t.Errorf("refused %+v", r.Refused)
	}
	if len(r.Events) != 1 {
		t.Fatalf("events %+v", r.Events)
	}
	if e := r.Events[0]; e.Conn != 0 || e.Kind != "error" || e.Layer != 0 || e.EType != 0 || e.Code != 0 || e.Op != 11 {
		t.Errorf("event %+v, want a Local Catastrophic Error for op 11", e)
	}
	if len(r.Places) != 3 || r.Places[0] != [2]int{0, 0} || r.Places[1] != [2]int{8, 6} || r.Places[2] != [2]int{0, 0} {
		t.Errorf("places %v", r.Places)
	}
}

// TestPlaceStreamEarly: early ops on a session place what ddp_place's do,
// list where in places (nothing for one that fails a check or comes after
// the stream failed), and one that would touch poisoned memory is refused.
func TestPlaceStreamEarly(t *testing.T) {
	good := 0
	stag := ddp.MakeSTag(5, 0x21)
	early := func(h string) any { return map[string]any{"early": map[string]any{"conn": 3, "data": h}} }
	write := segs(t, rdmap.NewWrite(stag, 1010, []byte("hello world")), 64)
	outside := segs(t, rdmap.NewWrite(stag, 1095, []byte("too long")), 64)
	send := segs(t, rdmap.NewSend(2, []byte("xyz")), 64)
	foreign := segs(t, rdmap.NewWrite(ddp.MakeSTag(6, 1), 0, []byte("no")), 64)
	ops := []any{
		map[string]any{"conn": map[string]any{"conn": 3, "pd": 9}},
		map[string]any{"stag": map[string]any{"index": 5, "valid": true, "key": 0x21, "pd": 9, "access": 1, "base": 1000, "len": 100, "host": 64}},
		map[string]any{"post": map[string]any{"conn": 3, "qn": 0, "addr": 200, "len": 16, "id": 77}},
		map[string]any{"post": map[string]any{"conn": 3, "qn": 0, "addr": 220, "len": 16, "id": 78}},
		early(write[0]), early(outside[0]), early(send[0]),
	}
	ops = append(ops, ulpdus(3, &good, foreign...)...) // fails the stream
	ops = append(ops, early(write[0]))
	mem, _, reqErr := placeReq(t, map[string]any{"mem_size": 512, "ops": ops})
	if reqErr != "" {
		t.Fatal(reqErr)
	}
	r := streamReq(t, map[string]any{"session": "e", "open": map[string]any{"mem_size": 512}, "ops": ops, "mem": true})
	if r.Error != "" {
		t.Fatal(r.Error)
	}
	if r.Mem != hex.EncodeToString(mem) {
		t.Errorf("memory differs from ddp_place's")
	}
	want := [][2]int{{74, 11}, {0, 0}, {220, 3}, {0, 0}, {0, 0}}
	if len(r.Places) != len(want) {
		t.Fatalf("places %v, want %v", r.Places, want)
	}
	for i := range want {
		if r.Places[i] != want[i] {
			t.Fatalf("places %v, want %v", r.Places, want)
		}
	}
	r = streamReq(t, map[string]any{"session": "p", "open": map[string]any{"mem_size": 512}, "ops": []any{
		ops[0], ops[1], map[string]any{"poison": map[string]any{"addr": 80, "len": 1}}, early(write[0])}})
	if !strings.Contains(r.Error, "poisoned memory") {
		t.Errorf("early into poisoned memory: %q", r.Error)
	}
}

// Regression: a Send with Invalidate that may not invalidate its STag is
// placed, then refused at delivery. places must name the buffer it went
// to (the hardware writes it there), not [0, 0].
func TestPlaceStreamRefusedAfterDelivery(t *testing.T) {
	good := 0
	foreign := ddp.MakeSTag(6, 1) // registered in another PD
	ops := []any{
		map[string]any{"conn": map[string]any{"conn": 2, "pd": 9}},
		map[string]any{"stag": map[string]any{"index": 6, "valid": true, "key": 1, "pd": 8, "access": 1, "base": 0, "len": 64, "host": 0}},
		map[string]any{"post": map[string]any{"conn": 2, "qn": 0, "addr": 300, "len": 16, "id": 5}},
	}
	ops = append(ops, ulpdus(2, &good, segs(t, rdmap.NewSendInvalidate(1, foreign, []byte("abc")), 128)...)...)
	r := streamReq(t, map[string]any{"session": "d", "open": map[string]any{"mem_size": 512}, "ops": ops, "mem": true, "close": true})
	if r.Error != "" {
		t.Fatal(r.Error)
	}
	if len(r.Places) != 1 || r.Places[0] != [2]int{300, 3} {
		t.Errorf("places %v, want [[300 3]]", r.Places)
	}
	if len(r.Events) != 1 || r.Events[0].Kind != "error" || r.Events[0].Code != rdmap.CodeCannotInvalidate {
		t.Errorf("events %+v, want the STag-cannot-be-invalidated error", r.Events)
	}
	mem, _ := hex.DecodeString(r.Mem)
	if string(mem[300:303]) != "abc" {
		t.Errorf("memory at 300: %q", mem[300:303])
	}
}

// TestPlaceStreamCut: a tagged ULPDU in pieces (upto/more) is cut by a
// write of its STag's entry between its pieces: the payload that came
// before stays placed, nothing after it is, it reports Invalid STag
// (1/1/0) and its stream places and reports nothing more. A ULPDU of
// another STag index, an untagged one, and one whose entry is written only
// after its last piece, are not cut; a ULPDU that never completes its
// pieces reports nothing yet.
func TestPlaceStreamCut(t *testing.T) {
	good := 0
	s5, s6 := ddp.MakeSTag(5, 0x21), ddp.MakeSTag(6, 0x31)
	payload := bytes.Repeat([]byte("0123456789"), 10) // 100 octets
	w5 := segs(t, rdmap.NewWrite(s5, 0, payload), 200)[0]
	w6 := segs(t, rdmap.NewWrite(s6, 0, payload), 200)[0]
	send := segs(t, rdmap.NewSend(1, payload[:40]), 200)[0]
	after := segs(t, rdmap.NewWrite(s5, 0, []byte("later")), 200)[0]
	reg := func(idx, key, host int, valid bool) any {
		return map[string]any{"stag": map[string]any{"index": idx, "valid": valid, "key": key, "pd": 9, "access": 1,
			"base": 0, "len": 128, "host": host}}
	}
	piece := func(c int, h string, upto int) any {
		return map[string]any{"ulpdu": map[string]any{"conn": c, "data": h, "verdict": good, "upto": upto}}
	}
	more := func(c int, upto int) any {
		m := map[string]any{"conn": c}
		if upto > 0 {
			m["upto"] = upto
		}
		return map[string]any{"more": m}
	}
	conn := func(c int) any { return map[string]any{"conn": map[string]any{"conn": c, "pd": 9}} }
	ops := []any{conn(1), conn(2), conn(3), reg(5, 0x21, 0, true), reg(6, 0x31, 256, true),
		map[string]any{"post": map[string]any{"conn": 3, "qn": 0, "addr": 512, "len": 64, "id": 7}},
		piece(1, w5, 14+30),  // conn 1: 30 payload octets through STag 5
		piece(2, w6, 14+10),  // conn 2: through STag 6
		piece(3, send, 14+4), // conn 3: a Send (18-octet header: 0 payload yet)
		reg(5, 0, 0, false),  // invalidate STag 5: cuts conn 1's Write
		more(1, 14+60), more(2, 0), more(3, 0), more(1, 0),
		reg(6, 0x32, 256, true), // after conn 2's Write ended: no cut
	}
	ops = append(ops, ulpdus(1, &good, after)...) // the stream failed: nothing
	ops = append(ops, piece(2, w6, 20))           // never completed here
	r := streamReq(t, map[string]any{"session": "cut", "open": map[string]any{"mem_size": 1024}, "ops": ops, "mem": true, "close": true})
	if r.Error != "" {
		t.Fatal(r.Error)
	}
	mem, _ := hex.DecodeString(r.Mem)
	if !bytes.Equal(mem[0:30], payload[:30]) || !bytes.Equal(mem[30:128], make([]byte, 98)) {
		t.Errorf("STag 5's region % x, want the first 30 payload octets and nothing after", mem[:128])
	}
	if !bytes.Equal(mem[256:356], payload) || !bytes.Equal(mem[512:552], payload[:40]) {
		t.Errorf("the ULPDUs not cut were not placed whole")
	}
	type ev struct {
		conn            int
		kind            string
		layer, et, code uint8
		op              int
	}
	var got []ev
	for _, e := range r.Events {
		got = append(got, ev{e.Conn, e.Kind, e.Layer, e.EType, e.Code, e.Op})
	}
	want := []ev{{2, "completion", 0, 0, 0, 7}, {3, "completion", 0, 0, 0, 8}, {1, "error", 1, 1, 0, 6}}
	if len(got) != len(want) {
		t.Fatalf("events %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("events %+v, want %+v", got, want)
			break
		}
	}
	wantPlaces := [][2]int{{0, 100}, {256, 100}, {512, 40}, {0, 0}, {0, 0}} // the last: a stale key
	for i := range wantPlaces {
		if i >= len(r.Places) || r.Places[i] != wantPlaces[i] {
			t.Fatalf("places %v, want %v", r.Places, wantPlaces)
		}
	}
	for _, bad := range [][]any{
		{conn(1), more(1, 0)},                // nothing in pieces
		{conn(1), piece(1, w5, 10)},          // inside the header
		{conn(1), piece(1, w5, 20), conn(1)}, // restart inside it
		{conn(1), piece(1, w5, 20), piece(1, w5, 20)},
		{conn(1), piece(1, w5, 20), more(1, 20)}, // no progress
	} {
		if r := streamReq(t, map[string]any{"session": "bad", "open": map[string]any{"mem_size": 256}, "ops": bad}); r.Error == "" {
			t.Errorf("%v: no error", bad)
		}
	}
}
