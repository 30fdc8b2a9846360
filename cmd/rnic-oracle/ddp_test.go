package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/openrnic/rnic/iwarp/ddp"
	"github.com/openrnic/rnic/iwarp/rdmap"
)

// segmentsOf runs one rdmap_segments request through handle and returns
// the decoded segments, the refusal, or the request error.
func segmentsOf(t *testing.T, req map[string]any) (segs [][]byte, refused, reqErr string) {
	t.Helper()
	req["op"] = "rdmap_segments"
	line, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var reply struct {
		Segments []string `json:"segments"`
		Refused  string   `json:"refused"`
		Error    string   `json:"error"`
	}
	if err := json.Unmarshal(handle(line), &reply); err != nil {
		t.Fatal(err)
	}
	for _, s := range reply.Segments {
		b, err := hex.DecodeString(s)
		if err != nil {
			t.Fatalf("segment %q: %v", s, err)
		}
		segs = append(segs, b)
	}
	return segs, reply.Refused, reply.Error
}

func hexOf(b []byte) string { return hex.EncodeToString(b) }

// TestRDMAPSegmentsGolden: whole segments written out octet by octet from
// RFC 5041 4.2/4.3 and RFC 5040 (../shared/spec/NOTES.md), independent of
// the Go stack's encoder.
func TestRDMAPSegmentsGolden(t *testing.T) {
	cases := []struct {
		name string
		req  map[string]any
		want []string
	}{
		{"Send MSN 1", map[string]any{"opcode": 3, "msn": 1, "payload": "616263", "mulpdu": 128},
			[]string{"4143" + "00000000" + "00000000" + "00000001" + "00000000" + "616263"}},
		{"RDMA Write", map[string]any{"opcode": 0, "stag": 0x11223344, "to": uint64(0x0102030405060708), "payload": "ff", "mulpdu": 128},
			[]string{"c140" + "11223344" + "0102030405060708" + "ff"}},
		{"zero-length Read Response", map[string]any{"opcode": 2, "stag": 7, "to": 9, "payload": "", "mulpdu": 15},
			[]string{"c142" + "00000007" + "0000000000000009"}},
		{"Send with SE and Invalidate", map[string]any{"opcode": 6, "msn": 2, "inv_stag": 0xaabbccdd, "payload": "00", "mulpdu": 19},
			[]string{"4146" + "aabbccdd" + "00000000" + "00000002" + "00000000" + "00"}},
		{"Read Request", map[string]any{"opcode": 1, "msn": 3, "mulpdu": 46, "rr": map[string]any{
			"sink_stag": 0x10, "sink_to": 0x20, "size": 0x30, "src_stag": 0x40, "src_to": uint64(1) << 63}},
			[]string{"4141" + "00000000" + "00000001" + "00000003" + "00000000" +
				"00000010" + "0000000000000020" + "00000030" + "00000040" + "8000000000000000"}},
		{"Terminate", map[string]any{"opcode": 7, "msn": 1, "payload": "12060000", "mulpdu": 22},
			[]string{"4147" + "00000000" + "00000002" + "00000001" + "00000000" + "12060000"}},
		{"Write in three segments", map[string]any{"opcode": 0, "stag": 1, "to": 0xfffffffe, "payload": "0102030405", "mulpdu": 16},
			[]string{
				"8140" + "00000001" + "00000000fffffffe" + "0102",
				"8140" + "00000001" + "0000000100000000" + "0304",
				"c140" + "00000001" + "0000000100000002" + "05",
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			segs, refused, reqErr := segmentsOf(t, c.req)
			if refused != "" || reqErr != "" {
				t.Fatalf("refused %q, error %q", refused, reqErr)
			}
			if len(segs) != len(c.want) {
				t.Fatalf("%d segments, want %d", len(segs), len(c.want))
			}
			for i := range segs {
				if hexOf(segs[i]) != c.want[i] {
					t.Errorf("segment %d\n got %s\nwant %s", i, hexOf(segs[i]), c.want[i])
				}
			}
		})
	}
}

// TestRDMAPSegmentsRefused: descriptors the Go stack refuses come back as
// "refused" with its message (not as a failed request); malformed requests
// as errors.
func TestRDMAPSegmentsRefused(t *testing.T) {
	rr := map[string]any{"sink_stag": 1, "sink_to": 2, "size": 3, "src_stag": 4, "src_to": 5}
	cases := []struct {
		name    string
		req     map[string]any
		refused string // prefix of the refusal
		reqErr  string // prefix of the request error
	}{
		{"unknown opcode", map[string]any{"opcode": 8, "payload": "", "mulpdu": 128}, "rdmap: cannot send opcode 0x8", ""},
		{"Invalidate STag on a Send", map[string]any{"opcode": 3, "inv_stag": 1, "payload": "", "mulpdu": 128}, "rdmap: Send cannot carry an Invalidate STag", ""},
		{"Invalidate STag on a Read Request", map[string]any{"opcode": 1, "inv_stag": 1, "rr": rr, "mulpdu": 128}, "rdmap: RDMA Read Request cannot carry", ""},
		{"short Terminate", map[string]any{"opcode": 7, "payload": "000000", "mulpdu": 128}, "rdmap: malformed Terminate", ""},
		{"Terminate layer 3", map[string]any{"opcode": 7, "payload": "30000000", "mulpdu": 128}, "rdmap: malformed Terminate: layer 3", ""},
		{"Terminate, M without length", map[string]any{"opcode": 7, "payload": "00008000", "mulpdu": 128}, "rdmap: malformed Terminate", ""},
		{"Terminate too long for MULPDU", map[string]any{"opcode": 7, "payload": "00000000", "mulpdu": 21}, "rdmap: Terminate of 22 octets does not fit", ""},
		{"Read Request too long for MULPDU", map[string]any{"opcode": 1, "rr": rr, "mulpdu": 45}, "rdmap: RDMA Read Request of 46 octets does not fit", ""},
		{"tagged MULPDU 14", map[string]any{"opcode": 0, "payload": "", "mulpdu": 14}, "ddp: MULPDU 14 leaves no room", ""},
		{"untagged MULPDU 18", map[string]any{"opcode": 5, "payload": "00", "mulpdu": 18}, "ddp: MULPDU 18 leaves no room", ""},
		{"TO wrap", map[string]any{"opcode": 2, "to": uint64(1<<64 - 2), "payload": "0000", "mulpdu": 128}, "ddp: 2 octets at TO 0xfffffffffffffffe wrap", ""},

		{"no opcode", map[string]any{"payload": "", "mulpdu": 128}, "", `rdmap_segments: missing field "opcode"`},
		{"no mulpdu", map[string]any{"opcode": 0, "payload": ""}, "", `rdmap_segments: missing field "mulpdu"`},
		{"no payload", map[string]any{"opcode": 0, "mulpdu": 128}, "", `rdmap_segments: missing field "payload"`},
		{"bad payload", map[string]any{"opcode": 0, "payload": "0", "mulpdu": 128}, "", `rdmap_segments: field "payload": not a hex string`},
		{"rr on a Send", map[string]any{"opcode": 3, "payload": "", "rr": rr, "mulpdu": 128}, "", `rdmap_segments: "rr" is for a Read Request, not Send`},
		{"payload on a Read Request", map[string]any{"opcode": 1, "payload": "", "rr": rr, "mulpdu": 128}, "", `rdmap_segments: a Read Request takes "rr"`},
		{"Read Request without rr", map[string]any{"opcode": 1, "mulpdu": 128}, "", `rdmap_segments: missing field "rr"`},
		{"rr incomplete", map[string]any{"opcode": 1, "rr": map[string]any{"sink_stag": 1}, "mulpdu": 128}, "", `rdmap_segments: "rr" needs`},
		{"opcode too big", map[string]any{"opcode": 256, "payload": "", "mulpdu": 128}, "", `rdmap_segments: field "opcode": want uint8`},
		{"unknown field", map[string]any{"opcode": 0, "payload": "", "mulpdu": 128, "len": 0}, "", `rdmap_segments: json: unknown field "len"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			segs, refused, reqErr := segmentsOf(t, c.req)
			if c.reqErr != "" {
				if !strings.HasPrefix(reqErr, c.reqErr) {
					t.Fatalf("error %q, want prefix %q", reqErr, c.reqErr)
				}
				return
			}
			if reqErr != "" || len(segs) != 0 {
				t.Fatalf("error %q, %d segments", reqErr, len(segs))
			}
			if !strings.HasPrefix(refused, c.refused) {
				t.Fatalf("refused %q, want prefix %q", refused, c.refused)
			}
		})
	}
}

// TestRDMAPSegmentsRandom: random messages of every opcode; the segments
// parse with ddp.ParseHeader, carry the message's payload in order, are
// MULPDU long but for the last, and advance TO or MO by the payload sent.
func TestRDMAPSegmentsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 300; i++ {
		op := uint8(r.IntN(7)) // no Terminate: its payload has a format
		if op == uint8(rdmap.OpReadRequest) {
			continue
		}
		payload := make([]byte, r.IntN(3000))
		for j := range payload {
			payload[j] = byte(r.Uint32())
		}
		tagged := rdmap.Opcode(op).Tagged()
		hlen := ddp.UntaggedHeaderLen
		if tagged {
			hlen = ddp.TaggedHeaderLen
		}
		mulpdu := hlen + 1 + r.IntN(600)
		to := r.Uint64() >> 1
		inv := uint32(0)
		if rdmap.Opcode(op).Invalidates() {
			inv = r.Uint32()
		}
		req := map[string]any{"opcode": op, "stag": r.Uint32(), "to": to, "msn": r.Uint32(),
			"inv_stag": inv, "payload": hexOf(payload), "mulpdu": mulpdu}
		segs, refused, reqErr := segmentsOf(t, req)
		if refused != "" || reqErr != "" {
			t.Fatalf("case %d: refused %q, error %q", i, refused, reqErr)
		}
		var got []byte
		for k, s := range segs {
			h, p, err := ddp.ParseHeader(s)
			if err != nil {
				t.Fatalf("case %d segment %d: %v", i, k, err)
			}
			last := k == len(segs)-1
			if h.Last != last || len(s) > mulpdu || (!last && len(s) != mulpdu) {
				t.Fatalf("case %d segment %d: L=%v, %d octets, MULPDU %d", i, k, h.Last, len(s), mulpdu)
			}
			off := uint64(len(got))
			if (tagged && h.TO != to+off) || (!tagged && uint64(h.MO) != off) {
				t.Fatalf("case %d segment %d: %v at offset %d", i, k, h, off)
			}
			got = append(got, p...)
		}
		if !bytes.Equal(got, payload) {
			t.Fatalf("case %d: payload not carried in order", i)
		}
	}
}

// TestRDMAPSegmentsTerminate: a well-formed Terminate from rdmap's own
// encoder goes through whole; the same with one octet more is refused.
func TestRDMAPSegmentsTerminate(t *testing.T) {
	hdr := make([]byte, ddp.UntaggedHeaderLen)
	hdr[1] = rdmap.Control(rdmap.OpReadRequest)
	term := &rdmap.Terminate{Layer: rdmap.LayerDDP, EType: 2, Code: 1, M: true, SegmentLen: 46,
		D: true, DDPHeader: hdr, R: true, RDMAHeader: make([]byte, rdmap.ReadRequestLen)}
	p, err := term.Append(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(p) != rdmap.MaxTerminateLen {
		t.Fatalf("Terminate of %d octets, want the longest, %d", len(p), rdmap.MaxTerminateLen)
	}
	segs, refused, _ := segmentsOf(t, map[string]any{"opcode": 7, "msn": 1, "payload": hexOf(p), "mulpdu": 18 + len(p)})
	if refused != "" || len(segs) != 1 || !bytes.Equal(segs[0][18:], p) {
		t.Fatalf("refused %q, %d segments", refused, len(segs))
	}
	_, refused, _ = segmentsOf(t, map[string]any{"opcode": 7, "msn": 1, "payload": hexOf(append(p, 0)), "mulpdu": 128})
	if !strings.HasPrefix(refused, "rdmap: malformed Terminate") {
		t.Fatalf("refused %q", refused)
	}
}
