package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/openrnic/rnic/iwarp/crc32c"
)

func decodeReply(t *testing.T, line []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("reply %q is not a JSON object: %v", line, err)
	}
	return m
}

// TestDispatch runs single requests through handle: the answer's fields, or
// the start of its error message.
func TestDispatch(t *testing.T) {
	inc := make([]byte, 32)
	for i := range inc {
		inc[i] = byte(i)
	}
	cases := []struct {
		name    string
		req     string
		want    string // exact JSON reply, when non-empty
		wantErr string // prefix of the "error" field, when non-empty
	}{
		// RFC 3720 B.4 vectors (and ../shared/spec/NOTES.md for the wire order).
		{"rfc3720 zeros", `{"op":"crc32c","data":"` + strings.Repeat("00", 32) + `"}`,
			`{"crc":2324772522,"state":2324772522,"wire":"aa36918a"}`, ""},
		{"rfc3720 ones, upper-case hex", `{"op":"crc32c","data":"` + strings.Repeat("FF", 32) + `"}`,
			`{"crc":1655221059,"state":1655221059,"wire":"43aba862"}`, ""},
		{"rfc3720 incrementing", `{"op":"crc32c","data":"` + hex.EncodeToString(inc) + `"}`,
			`{"crc":1188919630,"state":1188919630,"wire":"4e79dd46"}`, ""},
		{"123456789", `{"op":"crc32c","data":"313233343536373839","init":true}`,
			`{"crc":3808858755,"state":3808858755,"wire":"839206e3"}`, ""},
		{"empty", `{"op":"crc32c","data":""}`, `{"crc":0,"state":0,"wire":"00000000"}`, ""},
		{"resume", `{"op":"crc32c","init":false,"state":416359221,"data":"36373839"}`,
			`{"crc":3808858755,"state":3808858755,"wire":"839206e3"}`, ""},
		{"resume nothing", `{"op":"crc32c","init":false,"state":12345,"data":""}`,
			`{"crc":12345,"state":12345,"wire":"39300000"}`, ""},
		{"segments", `{"op":"crc32c_segments","segments":["3132333435","","36373839"]}`,
			`{"states":[416359221,416359221,3808858755],"crc":3808858755,"state":3808858755,"wire":"839206e3"}`, ""},
		{"no segments", `{"op":"crc32c_segments","segments":[]}`,
			`{"states":[],"crc":0,"state":0,"wire":"00000000"}`, ""},
		{"id echoed", `{"id":[1,"x"],"op":"ops"}`, `{"id":[1,"x"],"ops":["crc32c","crc32c_segments","ddp_place","ddp_place_stream","ddpsctp_path","model_admin","model_alloc","model_close","model_cqe","model_event","model_open","model_read32","model_seg","model_state","model_write32","mpa_fpdus","mpa_ooo","mpa_receive","ops","rdmap_segments","rq_run","rr_run","sq_run","tuf_frames","tuf_receive","tuf_seam"]}`, ""},
		{"id echoed on error", `{"id":42,"op":"nope"}`, `{"id":42,"error":"unknown op \"nope\" (known: crc32c, crc32c_segments, ddp_place, ddp_place_stream, ddpsctp_path, model_admin, model_alloc, model_close, model_cqe, model_event, model_open, model_read32, model_seg, model_state, model_write32, mpa_fpdus, mpa_ooo, mpa_receive, ops, rdmap_segments, rq_run, rr_run, sq_run, tuf_frames, tuf_receive, tuf_seam)"}`, ""},

		{"not json", `crc32c 00`, "", "request is not a JSON object"},
		{"not an object", `[1,2]`, "", "request is not a JSON object"},
		{"null", `null`, "", "request is not a JSON object"},
		{"no op", `{"data":"00"}`, "", `request has no "op"`},
		{"op not a string", `{"op":1}`, "", `"op" must be a string`},
		{"missing data", `{"op":"crc32c"}`, "", `crc32c: missing field "data"`},
		{"null data", `{"op":"crc32c","data":null}`, "", `crc32c: missing field "data"`},
		{"odd hex", `{"op":"crc32c","data":"123"}`, "", `crc32c: field "data": not a hex string`},
		{"bad hex", `{"op":"crc32c","data":"0g"}`, "", `crc32c: field "data": not a hex string`},
		{"data not a string", `{"op":"crc32c","data":[0]}`, "", `crc32c: field "data": want string`},
		{"unknown field", `{"op":"crc32c","data":"00","stat":1}`, "", `crc32c: json: unknown field "stat"`},
		{"state with init", `{"op":"crc32c","data":"00","state":1}`, "", `crc32c: "state" given with init`},
		{"resume without state", `{"op":"crc32c","data":"00","init":false}`, "", `crc32c: "init": false needs "state"`},
		{"state too big", `{"op":"crc32c","data":"00","init":false,"state":4294967296}`, "", `crc32c: field "state": want uint32`},
		{"state negative", `{"op":"crc32c","data":"00","init":false,"state":-1}`, "", `crc32c: field "state": want uint32`},
		{"bad segment", `{"op":"crc32c_segments","segments":["00","x"]}`, "", `crc32c_segments: field "segments[1]": not a hex string`},
		{"missing segments", `{"op":"crc32c_segments"}`, "", `crc32c_segments: missing field "segments"`},
		{"ops takes no fields", `{"op":"ops","x":1}`, "", `ops: json: unknown field "x"`},
		{"ooo segment without len", `{"op":"mpa_ooo","stream":"00","segments":[{"seq":0}]}`, "", `mpa_ooo: segments[0]: seq and len are required`},
		{"ooo segment past the stream", `{"op":"mpa_ooo","stream":"0000","segments":[{"seq":1,"len":2}]}`, "", `mpa_ooo: segments[0]: octets 1..3 are beyond the 2-octet stream`},
		{"ooo next past the stream", `{"op":"mpa_ooo","stream":"0000","segments":[{"seq":1,"len":1,"next":3}]}`, "", `mpa_ooo: segments[0]: next is 3 octets into the 2-octet stream`},
		{"ULPDU too long", `{"op":"mpa_fpdus","ulpdus":["` + strings.Repeat("00", 64769) + `"]}`, "", `mpa_fpdus: ulpdus[0]: mpa: ULPDU longer than`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := handle([]byte(c.req))
			if c.want != "" {
				if string(got) != c.want {
					t.Fatalf("reply\n got %s\nwant %s", got, c.want)
				}
				return
			}
			m := decodeReply(t, got)
			msg, ok := m["error"].(string)
			if !ok {
				t.Fatalf("reply %s has no error", got)
			}
			if !strings.HasPrefix(msg, c.wantErr) {
				t.Fatalf("error %q, want it to start with %q", msg, c.wantErr)
			}
			if len(m) != 1 {
				t.Errorf("error reply %s has fields besides \"error\"", got)
			}
		})
	}
}

// TestResumedStateMatchesWhole: feeding each segment's state back as the
// next one's start gives the CRC of the whole, as the hardware relies on.
func TestResumedStateMatchesWhole(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 200; i++ {
		data := make([]byte, r.IntN(3000))
		for j := range data {
			data[j] = byte(r.Uint32())
		}
		whole := crc32c.Checksum(data)
		var state uint32
		init := true
		for rest := data; ; {
			n := min(len(rest), r.IntN(700))
			req := map[string]any{"op": "crc32c", "data": hex.EncodeToString(rest[:n])}
			if !init {
				req["init"] = false
				req["state"] = state
			}
			line, _ := json.Marshal(req)
			var reply crcResult
			if err := json.Unmarshal(handle(line), &reply); err != nil {
				t.Fatal(err)
			}
			state, init, rest = reply.State, false, rest[n:]
			if len(rest) == 0 {
				break
			}
		}
		if state != whole {
			t.Fatalf("len %d: resumed state %#x, whole CRC %#x", len(data), state, whole)
		}
	}
}

// TestMPAFPDUs: RFC 5044 Figures 5 and 6 through the framing op, and the
// CRC coverage it reports (markers and pad inside the covered octets).
func TestMPAFPDUs(t *testing.T) {
	ddp := func(msn byte) string { // untagged Send, Last; the figures' DDP header
		h := make([]byte, 18)
		h[0], h[1], h[13] = 0x41, 0x43, msn
		return hex.EncodeToString(h)
	}
	frame := func(ulpdus ...string) []fpdu {
		t.Helper()
		req := fmt.Sprintf(`{"op":"mpa_fpdus","markers":true,"base":0,"ulpdus":["%s"]}`, strings.Join(ulpdus, `","`))
		var reply struct {
			FPDUs []fpdu `json:"fpdus"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal(handle([]byte(req)), &reply); err != nil || reply.Error != "" {
			t.Fatalf("reply: %v %s", err, reply.Error)
		}
		if len(reply.FPDUs) != len(ulpdus) {
			t.Fatalf("%d FPDUs, want %d", len(reply.FPDUs), len(ulpdus))
		}
		return reply.FPDUs
	}
	// Figure 5: the first FPDU of a stream, 24 octets of Send data.
	fig5 := frame(ddp(1) + strings.Repeat("00", 24))[0]
	if fig5.Seq != 0 || fig5.CRC != crc32c.Wire([]byte{0x52, 0x23, 0x99, 0x83}) {
		t.Errorf("Figure 5: seq %d crc %#x", fig5.Seq, fig5.CRC)
	}
	// Figure 6: the second FPDU of a stream whose first one took 492
	// octets (the leading marker, a 482-octet ULPDU, its CRC).
	fpdus := frame(ddp(1)+strings.Repeat("00", 482-18), ddp(2)+strings.Repeat("00", 24))
	fig6 := fpdus[1]
	if fig6.Seq != 492 || fig6.CRC != crc32c.Wire([]byte{0x84, 0x92, 0x58, 0x98}) {
		t.Errorf("Figure 6: seq %d crc %#x", fig6.Seq, fig6.CRC)
	}
	// Figure 6 has a marker between the DDP header and the data, inside
	// the CRC's coverage.
	if wire, _ := hex.DecodeString(fig6.Wire); !bytes.Equal(wire[20:24], []byte{0, 0, 0, 0x14}) {
		t.Errorf("Figure 6 marker: % x", wire[20:24])
	}
	for i, f := range append(fpdus, fig5) {
		wire, _ := hex.DecodeString(f.Wire)
		if f.CRCLen != len(wire)-4 || crc32c.Checksum(wire[:f.CRCLen]) != f.CRC || crc32c.Wire(wire[f.CRCLen:]) != f.CRC {
			t.Errorf("FPDU %d: crc_len %d of %d octets, crc %#x", i, f.CRCLen, len(wire), f.CRC)
		}
	}
	// With "crc": false the same FPDU carries a zero CRC field and nothing
	// else changes.
	var off struct {
		FPDUs []fpdu `json:"fpdus"`
	}
	req := `{"op":"mpa_fpdus","markers":true,"crc":false,"ulpdus":["` + ddp(1) + strings.Repeat("00", 24) + `"]}`
	if err := json.Unmarshal(handle([]byte(req)), &off); err != nil || len(off.FPDUs) != 1 {
		t.Fatalf("crc off: %v %+v", err, off)
	}
	on, _ := hex.DecodeString(fig5.Wire)
	got, _ := hex.DecodeString(off.FPDUs[0].Wire)
	if n := len(on) - 4; len(got) != len(on) || !bytes.Equal(got[:n], on[:n]) || !bytes.Equal(got[n:], make([]byte, 4)) || off.FPDUs[0].CRC != 0 {
		t.Errorf("crc off: % x", got)
	}
}

// TestServe runs a session through serve: blank lines are skipped, a bad
// line is answered and the session goes on, replies come in order.
func TestServe(t *testing.T) {
	in := strings.Join([]string{
		`{"op":"crc32c","id":1,"data":"313233343536373839"}`,
		``,
		`{"op":"crc32c","id":2,"data":"xx"}`,
		`   `,
		`{oops`,
		`{"op":"ops","id":3}`, // no newline at the end of the input
	}, "\n")
	var out bytes.Buffer
	if err := serve(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d reply lines, want 4:\n%s", len(lines), out.String())
	}
	wantIDs := []any{1.0, 2.0, nil, 3.0}
	wantErr := []bool{false, true, true, false}
	for i, line := range lines {
		m := decodeReply(t, []byte(line))
		if m["id"] != wantIDs[i] {
			t.Errorf("line %d: id %v, want %v", i, m["id"], wantIDs[i])
		}
		if _, isErr := m["error"]; isErr != wantErr[i] {
			t.Errorf("line %d: %s", i, line)
		}
	}
}

func TestRegisterTwicePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("registering an existing op did not panic")
		}
	}()
	register("crc32c", "", nil)
}

func TestEveryOpDocumented(t *testing.T) {
	for _, name := range opNames() {
		if ops[name].doc == "" || ops[name].run == nil {
			t.Errorf("op %q has no doc or no handler", name)
		}
	}
}
