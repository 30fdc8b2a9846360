package rdmap

import (
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrnic/rnic/internal/golden"

	"github.com/openrnic/rnic/iwarp/ddp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenMULPDU is small so that the Write golden file shows segmentation:
// 128 is the smallest MULPDU MPA offers (RFC 5044).
const goldenMULPDU = 128

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// Offending headers used in the Terminate golden files.
var (
	offTagged   = ddp.Header{Tagged: true, Last: true, DV: 1, ULPCtrl: 0x40, STag: 0x0000ab01, TO: 0x10}
	offUntagged = ddp.Header{Last: true, DV: 1, ULPCtrl: 0x43, QN: 0, MSN: 9, MO: 0}
	offReadReq  = ddp.Header{Last: true, DV: 1, ULPCtrl: 0x41, QN: 1, MSN: 3, MO: 0}
	goldenRR    = ReadRequest{SinkSTag: 0x00002301, SinkTO: 0x1000, Size: 0x10000, SourceSTag: 0x00003401, SourceTO: 0x0000000200000000}
)

func mustTerminate(t testing.TB, msn uint32, term Terminate) Message {
	m, err := NewTerminate(msn, &term)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

type goldenCase struct {
	file string
	desc string
	msg  Message
}

func goldenCases(t testing.TB) []goldenCase {
	offT := offTagged.Append(nil)
	offU := offUntagged.Append(nil)
	offRR := offReadReq.Append(nil)
	return []goldenCase{
		{"write", "RDMA Write of 200 octets to STag 0x00001201 TO 0x100000000, MULPDU 128", NewWrite(0x00001201, 0x0000000100000000, pattern(200))},
		{"write_zero", "zero-length RDMA Write (an RTR) to STag 0x00001201 TO 0", NewWrite(0x00001201, 0, nil)},
		{"read_request", "RDMA Read Request MSN 1: sink 0x00002301/0x1000, size 0x10000, source 0x00003401/0x200000000", NewReadRequest(1, goldenRR)},
		{"read_response", "RDMA Read Response of 40 octets to sink STag 0x00002301 TO 0x1000", NewReadResponse(0x00002301, 0x1000, pattern(40))},
		{"send", "Send MSN 1 of 16 octets", NewSend(1, pattern(16))},
		{"send_invalidate", "Send with Invalidate MSN 2 of 16 octets, Invalidate STag 0x00004501", NewSendInvalidate(2, 0x00004501, pattern(16))},
		{"send_se", "Send with Solicited Event MSN 3 of 16 octets", NewSendSE(3, pattern(16))},
		{"send_se_invalidate", "Send with SE and Invalidate MSN 4 of 16 octets, Invalidate STag 0x00004601", NewSendSEInvalidate(4, 0x00004601, pattern(16))},
		{"terminate", "Terminate MSN 1, RDMAP Local Catastrophic Error, no headers", mustTerminate(t, 1, Terminate{Layer: LayerRDMAP, EType: ETypeLocalCatastrophic, Code: CodeLocalCatastrophic})},
		{"terminate_m", "Terminate MSN 1, RDMAP Remote Operation Error 0x07 for a 10-octet segment too short for its header: M", mustTerminate(t, 1, Terminate{Layer: LayerRDMAP, EType: ETypeRemoteOperation, Code: CodeStreamCatastrophic, M: true, SegmentLen: 10})},
		{"terminate_md_tagged", "Terminate MSN 1, DDP Tagged Buffer Error Base or bounds violation: M, D (tagged header)", mustTerminate(t, 1, Terminate{Layer: LayerDDP, EType: ETypeTaggedBuffer, Code: CodeDDPBaseBounds, M: true, SegmentLen: 14 + 100, D: true, DDPHeader: offT})},
		{"terminate_md_untagged", "Terminate MSN 2, DDP Untagged Buffer Error no buffer available: M, D (untagged header)", mustTerminate(t, 2, Terminate{Layer: LayerDDP, EType: ETypeUntaggedBuffer, Code: CodeDDPNoBuffer, M: true, SegmentLen: 18 + 16, D: true, DDPHeader: offU})},
		{"terminate_mdr", "Terminate MSN 1, RDMAP Remote Protection Error Invalid STag on a Read Request: M, D, R", mustTerminate(t, 1, Terminate{Layer: LayerRDMAP, EType: ETypeRemoteProtection, Code: CodeInvalidSTag, M: true, SegmentLen: 18 + 28, D: true, DDPHeader: offRR, R: true, RDMAHeader: goldenRR.Append(nil)})},
		{"terminate_llp_crc", "Terminate MSN 1, LLP (MPA) CRC error: M, D", mustTerminate(t, 1, Terminate{Layer: LayerLLP, EType: ETypeMPA, Code: CodeMPACRC, M: true, SegmentLen: 18 + 16, D: true, DDPHeader: offU})},
	}
}

// fieldLine names the fields of a segment with their values.
func fieldLine(h *ddp.Header, payload []byte) string {
	var b strings.Builder
	_, op := ParseControl(h.ULPCtrl)
	l := 0
	if h.Last {
		l = 1
	}
	if h.Tagged {
		fmt.Fprintf(&b, "DDP ctrl %02x (T=1 L=%d DV=%d) | RDMAP ctrl %02x (RV=1 %v) | STag %08x | TO %016x", h.Append(nil)[0], l, h.DV, h.ULPCtrl, op, h.STag, h.TO)
	} else {
		fmt.Fprintf(&b, "DDP ctrl %02x (T=0 L=%d DV=%d) | RDMAP ctrl %02x (RV=1 %v) | RsvdULP[8:39] %08x | QN %08x | MSN %08x | MO %08x", h.Append(nil)[0], l, h.DV, h.ULPCtrl, op, h.ULPInfo, h.QN, h.MSN, h.MO)
	}
	switch op {
	case OpReadRequest:
		b.WriteString(" | Sink STag(4) Sink TO(8) Size(4) Source STag(4) Source TO(8)")
	case OpTerminate:
		t, err := ParseTerminate(payload)
		if err == nil {
			b.WriteString(" | Terminate Control(4)")
			if t.M {
				b.WriteString(" DDP Segment Length(2)")
			}
			if t.D {
				fmt.Fprintf(&b, " Terminated DDP Header(%d)", len(t.DDPHeader))
			}
			if t.R {
				b.WriteString(" Terminated RDMA Header(28)")
			}
		}
	default:
		fmt.Fprintf(&b, " | payload %d octets", len(payload))
	}
	return b.String()
}

func renderGolden(t testing.TB, c goldenCase) []byte {
	segs, err := c.msg.AppendSegments(nil, goldenMULPDU)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n", c.desc)
	for i, seg := range segs {
		h, payload, err := ddp.ParseHeader(seg)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "# segment %d/%d, %d octets: %s\n", i+1, len(segs), len(seg), fieldLine(&h, payload))
		for off := 0; off < len(seg); off += 16 {
			line := seg[off:min(off+16, len(seg))]
			parts := make([]string, len(line))
			for j, c := range line {
				parts[j] = fmt.Sprintf("%02x", c)
			}
			b.WriteString(strings.Join(parts, " ") + "\n")
		}
	}
	return b.Bytes()
}

func TestGolden(t *testing.T) {
	for _, c := range goldenCases(t) {
		t.Run(c.file, func(t *testing.T) {
			got := renderGolden(t, c)
			golden.Check(t, filepath.Join("testdata", "golden", c.file+".hex"), got, *update)
			if *update {
				return
			}
			// Every golden segment classifies as the message's opcode.
			for i, seg := range golden.Segments(t, filepath.Join("testdata", "golden", c.file+".hex")) {
				s, err := Classify(seg)
				if err != nil || s.Opcode != c.msg.Opcode {
					t.Errorf("segment %d: Classify = %v, %v", i, s.Opcode, err)
				}
			}
		})
	}
}

// TestGoldenByHand checks the golden files against the field layout of
// RFC 5041 4.1 to 4.3 and RFC 5040, octet by octet, with values worked
// out by hand here rather than by the encoder, so that a wrong encoder
// cannot bless its own output with -update. The checks were also done by
// reading the files:
//
//   - write.hex: 200 octets at MULPDU 128 give 114 (128-14) + 86 octets.
//     Segment 1 starts 81 40 (T=1 L=0 DV=1; RV=1 opcode 0), STag
//     00 00 12 01, TO 00 00 00 01 00 00 00 00; segment 2 starts c1 40
//     (L=1), same STag, TO 00 00 00 01 00 00 00 72 (0x100000000 + 114),
//     payload 72 73 ... (the pattern continues at octet 114).
//   - write_zero.hex: one 14-octet segment c1 40 00 00 12 01 and a zero TO.
//   - read_request.hex: 41 41 (T=0 L=1 DV=1; RV=1 opcode 1), RsvdULP
//     00 00 00 00, QN 00 00 00 01, MSN 00 00 00 01, MO 0, then the 28
//     octets 00 00 23 01 | 00 00 00 00 00 00 10 00 | 00 01 00 00 |
//     00 00 34 01 | 00 00 00 02 00 00 00 00.
//   - read_response.hex: c1 42, STag 00 00 23 01, TO ... 10 00.
//   - send*.hex: 41 43 / 41 44 / 41 45 / 41 46, QN 0, MSN 1 to 4; the
//     Invalidate variants carry 00 00 45 01 and 00 00 46 01 in octets 2-5,
//     the others zero there.
//   - terminate*.hex: 41 47, QN 00 00 00 02; Terminate Control
//     Layer<<28 | EType<<24 | Code<<16 | M 0x8000 | D 0x4000 | R 0x2000:
//     00 00 00 00 (none), 02 07 80 00 then 00 0a (M), 11 01 c0 00 then
//     00 72 and the 14-octet tagged header c1 40 00 00 ab 01 ... 10
//     (M, D), 12 02 c0 00 then 00 22 and the 18-octet header (M, D),
//     01 00 e0 00 then 00 2e, the Read Request's header 41 41 ... and the
//     28-octet Read Request (M, D, R), 20 02 c0 00 (LLP CRC, M, D).
//
// It also runs with -update: TestGolden, earlier in the file, has then just
// rewritten the files, and these checks are what vouch for them.
func TestGoldenByHand(t *testing.T) {
	type check struct {
		seg, off int
		hex      string
	}
	for file, checks := range map[string][]check{
		"write": {
			{0, 0, "81 40 00001201 0000000100000000 000102"},
			{1, 0, "c1 40 00001201 0000000100000072 727374"},
		},
		"write_zero":   {{0, 0, "c1 40 00001201 0000000000000000"}},
		"read_request": {{0, 0, "41 41 00000000 00000001 00000001 00000000 00002301 0000000000001000 00010000 00003401 0000000200000000"}},
		"read_response": {
			{0, 0, "c1 42 00002301 0000000000001000 00010203"},
		},
		"send":               {{0, 0, "41 43 00000000 00000000 00000001 00000000 000102"}},
		"send_invalidate":    {{0, 0, "41 44 00004501 00000000 00000002 00000000 000102"}},
		"send_se":            {{0, 0, "41 45 00000000 00000000 00000003 00000000 000102"}},
		"send_se_invalidate": {{0, 0, "41 46 00004601 00000000 00000004 00000000 000102"}},
		"terminate":          {{0, 0, "41 47 00000000 00000002 00000001 00000000 00000000"}},
		"terminate_m":        {{0, 0, "41 47 00000000 00000002 00000001 00000000 02078000 000a"}},
		"terminate_md_tagged": {
			{0, 0, "41 47 00000000 00000002 00000001 00000000 1101c000 0072 c1 40 0000ab01 0000000000000010"},
		},
		"terminate_md_untagged": {
			{0, 0, "41 47 00000000 00000002 00000002 00000000 1202c000 0022 41 43 00000000 00000000 00000009 00000000"},
		},
		"terminate_mdr": {
			{0, 0, "41 47 00000000 00000002 00000001 00000000 0100e000 002e 41 41 00000000 00000001 00000003 00000000"},
			{0, 18 + 4 + 2 + 18, "00002301 0000000000001000 00010000 00003401 0000000200000000"},
		},
		"terminate_llp_crc": {{0, 0, "41 47 00000000 00000002 00000001 00000000 2002c000 0022 41 43"}},
	} {
		segs := golden.Segments(t, filepath.Join("testdata", "golden", file+".hex"))
		for _, c := range checks {
			want, err := hex.DecodeString(strings.ReplaceAll(c.hex, " ", ""))
			if err != nil {
				t.Fatal(err)
			}
			if c.seg >= len(segs) || len(segs[c.seg]) < c.off+len(want) || !bytes.Equal(segs[c.seg][c.off:c.off+len(want)], want) {
				t.Errorf("%s segment %d at %d: want % x", file, c.seg, c.off, want)
			}
		}
	}
	// Exact lengths: header plus payload, nothing more.
	for file, lens := range map[string][]int{
		"write": {128, 14 + 86}, "write_zero": {14}, "read_request": {18 + 28}, "read_response": {14 + 40},
		"send": {18 + 16}, "terminate": {18 + 4}, "terminate_m": {18 + 6}, "terminate_md_tagged": {18 + 6 + 14},
		"terminate_md_untagged": {18 + 6 + 18}, "terminate_mdr": {18 + 6 + 18 + 28}, "terminate_llp_crc": {18 + 6 + 18},
	} {
		segs := golden.Segments(t, filepath.Join("testdata", "golden", file+".hex"))
		if len(segs) != len(lens) {
			t.Errorf("%s: %d segments, want %d", file, len(segs), len(lens))
			continue
		}
		for i, n := range lens {
			if len(segs[i]) != n {
				t.Errorf("%s segment %d: %d octets, want %d", file, i, len(segs[i]), n)
			}
		}
	}
}

// TestRFC5044Figure5 checks the Send encoding against a third party: the
// 42-octet ULPDU (DDP Segment) of RFC 5044 figure 5 (shared/spec/
// rfc5044-mpa.txt), FPDU octets 0006 to 002f: "41 43", four reserved
// octets, QN 0, MSN 1, MO 0 and 24 octets of zeros.
func TestRFC5044Figure5(t *testing.T) {
	want, _ := hex.DecodeString("4143" + "00000000" + "00000000" + "00000001" + "00000000" + strings.Repeat("00", 24))
	if len(want) != 42 {
		t.Fatalf("reference is %d octets", len(want))
	}
	m := NewSend(1, make([]byte, 24))
	segs, err := m.AppendSegments(nil, goldenMULPDU)
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) != 1 || !bytes.Equal(segs[0], want) {
		t.Fatalf("Send = % x\nRFC 5044 figure 5: % x", segs, want)
	}
	// The second example (figure 6) is a Send with MSN 2.
	m.MSN = 2
	segs, _ = m.AppendSegments(nil, goldenMULPDU)
	want[13] = 2
	if !bytes.Equal(segs[0], want) {
		t.Fatalf("Send MSN 2 = % x", segs[0])
	}
}
