package capture

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// siwCapture is the third-party capture of two Linux soft-iWARP (siw)
// peers running rping, kept in shared/testdata beside the repository
// (see its README.md).
const siwCapture = "../../shared/testdata/siw-rping-default.pcap"

func requireSiwCapture(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(siwCapture); err != nil {
		t.Fatalf("the siw rping capture is missing: %v\n"+
			"It belongs in shared/testdata/ next to the repository (shared/ sits beside main/).", err)
	}
	return siwCapture
}

// tshark returns the path of tshark, failing the test when it is not
// installed.
func tshark(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("tshark")
	if err != nil {
		t.Fatalf("tshark is not on PATH (%v): run `make deps` (scripts/deps.sh installs it)", err)
	}
	return p
}

// runTshark runs tshark with args and returns its standard output.
func runTshark(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(tshark(t), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// The facts below were read off the capture with tshark
// (-z conv,tcp; -T fields -e tcp.seq_raw -e tcp.len; -V).
func TestReadSiwRping(t *testing.T) {
	convs, err := ReadTCPStreams(requireSiwCapture(t))
	if err != nil {
		t.Fatalf("ReadTCPStreams: %v", err)
	}
	if len(convs) != 1 {
		t.Fatalf("got %d TCP conversations, want 1", len(convs))
	}
	c := convs[0]
	if want := netip.MustParseAddrPort("10.0.9.2:45437"); c.Client != want {
		t.Errorf("client %v, want %v", c.Client, want)
	}
	if want := netip.MustParseAddrPort("10.0.9.1:7174"); c.Server != want {
		t.Errorf("server %v, want %v", c.Server, want)
	}
	cs, sc := &c.ClientToServer, &c.ServerToClient
	if cs.ISN != 1625547488 || sc.ISN != 4057660892 {
		t.Errorf("ISNs %d %d, want 1625547488 4057660892", cs.ISN, sc.ISN)
	}
	if len(cs.Data) != 516 || len(sc.Data) != 672 {
		t.Errorf("stream lengths %d (client) %d (server), want 516 672", len(cs.Data), len(sc.Data))
	}
	if !cs.SYN || !sc.SYN || !cs.FIN || !sc.FIN || cs.RST || sc.RST {
		t.Errorf("flags: client %+v server %+v", *cs, *sc)
	}
	// rping's client closes first (tshark frames 53 and 54).
	if want := time.Unix(1795359283, 266712000); !cs.FINTime.Equal(want) {
		t.Errorf("client FIN at %v, want %v", cs.FINTime, want)
	}
	if want := time.Unix(1795359283, 268284000); !sc.FINTime.Equal(want) {
		t.Errorf("server FIN at %v, want %v", sc.FINTime, want)
	}
	// 10 data segments from the client; 16 from the server, three of them
	// retransmissions of the Send that ends each round (tshark frames 28,
	// 38, 49).
	if n := len(cs.Segments); n != 10 {
		t.Errorf("client data segments %d, want 10", n)
	}
	if n := len(sc.Segments); n != 16 {
		t.Errorf("server data segments %d, want 16", n)
	}
	var retx []int64
	for _, s := range sc.Segments {
		if s.Retransmission {
			retx = append(retx, s.Offset)
		}
	}
	if !slices.Equal(retx, []int64{200, 416, 632}) {
		t.Errorf("server retransmissions at offsets %v, want [200 416 632]", retx)
	}
	for _, s := range cs.Segments {
		if s.Retransmission {
			t.Errorf("client segment at %d marked as retransmission", s.Offset)
		}
	}
	if got := string(cs.Data[:16]); got != "MPA ID Req Frame" {
		t.Errorf("client stream starts with %q, want the MPA request key", got)
	}
	if got := string(sc.Data[:16]); got != "MPA ID Rep Frame" {
		t.Errorf("server stream starts with %q, want the MPA reply key", got)
	}

	// Walk the MPA framing of the reassembled streams: startup frame,
	// then FPDUs. What is checked is what RFC 5044 guarantees; where TCP
	// segment boundaries fall is not among it (see checkMPAStream).
	crc, markers := negotiated(c)
	if crc || markers {
		t.Errorf("CRC %v, markers %v negotiated; the README says neither", crc, markers)
	}
	wantOps := map[bool][]string{
		true:  rounds(3, "Send", "ReadResponse", "Send"),
		false: rounds(3, "ReadRequest", "Send", "Write", "Send"),
	}
	for _, fromClient := range []bool{true, false} {
		st := c.Stream(fromClient)
		frames := checkMPAStream(t, fmt.Sprintf("client %v", fromClient), st, crc)
		var ops []string
		for _, f := range frames[1:] {
			ops = append(ops, f.op)
		}
		if !slices.Equal(ops, wantOps[fromClient]) {
			t.Errorf("client %v: FPDUs %v, want %v", fromClient, ops, wantOps[fromClient])
		}
	}
}

// negotiated returns what the two startup frames of c agreed on: CRCs
// when either side asked (RFC 5044 7.1.1, C), markers when either side
// requires them on what it receives (M).
func negotiated(c *Conversation) (crc, markers bool) {
	for _, fromClient := range []bool{true, false} {
		if d := c.Stream(fromClient).Data; len(d) > 16 {
			crc = crc || d[16]&startupCRC != 0
			markers = markers || d[16]&startupMarkers != 0
		}
	}
	return crc, markers
}

func rounds(n int, ops ...string) []string {
	var out []string
	for range n {
		out = append(out, ops...)
	}
	return out
}

// mpaFrame is one frame of an MPA stream: the request or reply, or an
// FPDU with its RDMAP opcode.
type mpaFrame struct {
	offset int64
	length int
	op     string
	// For FPDUs: the ULPDU, the pad after it and the CRC field.
	ulpdu, pad, crc []byte
}

// MPA startup frame flags (RFC 5044 7.1.1): octet 16 holds M, C, R.
const (
	startupMarkers = 0x80
	startupCRC     = 0x40
)

// walkMPA splits an MPA stream without markers (RFC 5044 4.1, 7.1.1)
// into frames. It is a minimal reader for the test, independent of the
// iwarp packages, and reads only the reassembled octets: TCP segment
// boundaries play no part (RFC 5044 A.4).
func walkMPA(b []byte) ([]mpaFrame, error) {
	if len(b) < 20 || !strings.HasPrefix(string(b), "MPA ID Re") {
		return nil, fmt.Errorf("stream does not start with an MPA key: %q", b[:min(len(b), 16)])
	}
	if b[16]&startupMarkers != 0 {
		return nil, errors.New("the startup frame asks for markers, which this reader does not skip")
	}
	pd := int(binary.BigEndian.Uint16(b[18:20]))
	frames := []mpaFrame{{offset: 0, length: 20 + pd}}
	off := 20 + pd
	if off > len(b) {
		return nil, fmt.Errorf("startup frame of %d octets, stream of %d", off, len(b))
	}
	names := map[byte]string{0: "Write", 1: "ReadRequest", 2: "ReadResponse", 3: "Send", 7: "Terminate"}
	for off < len(b) {
		if len(b)-off < 2 {
			return nil, fmt.Errorf("truncated FPDU at %d", off)
		}
		ulpdu := int(binary.BigEndian.Uint16(b[off:]))
		padded := (2+ulpdu+3)&^3 - 2 // ULPDU and pad: 2+ULPDU+pad is a multiple of 4
		n := 2 + padded + 4          // length field, ULPDU, pad, CRC
		if off+n > len(b) || ulpdu < 2 {
			return nil, fmt.Errorf("bad FPDU at %d: ULPDU length %d, %d octets left", off, ulpdu, len(b)-off)
		}
		op, ok := names[b[off+3]&0x0f]
		if !ok {
			op = "op" + strconv.Itoa(int(b[off+3]&0x0f))
		}
		body := b[off+2 : off+2+padded]
		frames = append(frames, mpaFrame{
			offset: int64(off), length: n, op: op,
			ulpdu: body[:ulpdu], pad: body[ulpdu:], crc: b[off+2+padded : off+n],
		})
		off += n
	}
	return frames, nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checkMPAStream checks one direction of a captured MPA connection for
// what the specifications guarantee, whatever the TCP segmentation: the
// reassembled stream is a startup frame followed by whole FPDUs to its
// last octet; each ULPDU holds at least its DDP header (RFC 5041 4.2,
// 4.3: 14 octets tagged, 18 untagged); pads are zero (RFC 5044 4.1); and
// when CRCs are in use (crc, negotiated from both startup frames, RFC 5044
// 7.1.1), every CRC field holds the CRC32c of the FPDU, least significant
// octet first (RFC 5044 4.4; RFC 3720 B.4). Without CRCs the field may
// hold anything. How FPDUs sit in TCP segments is only logged: senders
// SHOULD align them, receivers MUST NOT depend on it (RFC 5044 A.4), and
// siw splits some Read Responses at the MSS.
func checkMPAStream(t *testing.T, who string, st *Stream, crc bool) []mpaFrame {
	t.Helper()
	frames, err := walkMPA(st.Data)
	if err != nil {
		t.Fatalf("%s: %v", who, err)
	}
	for _, f := range frames[1:] {
		hdr := 18
		if f.ulpdu[0]&0x80 != 0 { // DDP T flag
			hdr = 14
		}
		if len(f.ulpdu) < hdr {
			t.Errorf("%s: FPDU at %d: ULPDU of %d octets, shorter than its DDP header (%d)", who, f.offset, len(f.ulpdu), hdr)
		}
		if !bytes.Equal(f.pad, make([]byte, len(f.pad))) {
			t.Errorf("%s: FPDU at %d: pad % x, want zeros", who, f.offset, f.pad)
		}
		if crc {
			raw := st.Data[f.offset : f.offset+int64(f.length)-4]
			if got, want := binary.LittleEndian.Uint32(f.crc), crc32.Checksum(raw, castagnoli); got != want {
				t.Errorf("%s: FPDU at %d: CRC %#08x, computed %#08x", who, f.offset, got, want)
			}
		}
	}
	a := alignmentOf(frames, st.Segments)
	t.Logf("%s: %d frames; %d of %d data segments start at a frame boundary, %d frames span more than one segment, %d segments end inside a frame and start another",
		who, len(frames), a.alignedSegs, a.segs, a.spanning, a.straddling)
	return frames
}

// alignment describes where a stream's segments fall on its frames.
type alignment struct {
	segs        int // segments, retransmissions left out
	alignedSegs int // segments that start where a frame starts
	spanning    int // frames whose octets came in more than one segment
	straddling  int // segments holding the end of one frame and the start of the next
}

func alignmentOf(frames []mpaFrame, segs []Segment) alignment {
	var a alignment
	starts := map[int64]bool{}
	for _, f := range frames {
		starts[f.offset] = true
	}
	for _, s := range segs {
		if s.Retransmission {
			continue
		}
		a.segs++
		if starts[s.Offset] {
			a.alignedSegs++
		}
		end := s.Offset + int64(len(s.Payload))
		for _, f := range frames {
			if f.offset > s.Offset && f.offset < end {
				a.straddling++
				break
			}
		}
	}
	for _, f := range frames {
		n := 0
		for _, s := range segs {
			if !s.Retransmission && s.Offset < f.offset+int64(f.length) && s.Offset+int64(len(s.Payload)) > f.offset {
				n++
			}
		}
		if n > 1 {
			a.spanning++
		}
	}
	return a
}

// TestReadSiwRpingAgainstTshark rebuilds both streams from tshark's own
// dissection (raw sequence numbers and payload bytes of every segment)
// and compares them with ours octet for octet.
func TestReadSiwRpingAgainstTshark(t *testing.T) {
	path := requireSiwCapture(t)
	out := runTshark(t, "-r", path, "-Y", "tcp.len > 0", "-T", "fields",
		"-e", "tcp.srcport", "-e", "tcp.seq_raw", "-e", "tcp.payload")
	convs, err := ReadTCPStreams(path)
	if err != nil || len(convs) != 1 {
		t.Fatalf("ReadTCPStreams: %d conversations, %v", len(convs), err)
	}
	c := convs[0]
	want := map[bool][]byte{}
	segs := map[bool]int{}
	for line := range strings.Lines(strings.TrimSpace(out)) {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("unexpected tshark line %q", line)
		}
		fromClient := f[0] == strconv.Itoa(int(c.Client.Port()))
		seq, err := strconv.ParseUint(f[1], 10, 32)
		if err != nil {
			t.Fatal(err)
		}
		payload, err := hex.DecodeString(strings.ReplaceAll(f[2], ":", ""))
		if err != nil {
			t.Fatal(err)
		}
		off := int(uint32(seq) - (c.Stream(fromClient).ISN + 1))
		buf := want[fromClient]
		if len(buf) < off+len(payload) {
			buf = append(buf, make([]byte, off+len(payload)-len(buf))...)
		}
		copy(buf[off:], payload)
		want[fromClient] = buf
		segs[fromClient]++
	}
	for _, fromClient := range []bool{true, false} {
		st := c.Stream(fromClient)
		if !bytes.Equal(st.Data, want[fromClient]) {
			t.Errorf("client %v: stream differs from tshark's (%d vs %d octets)", fromClient, len(st.Data), len(want[fromClient]))
		}
		if len(st.Segments) != segs[fromClient] {
			t.Errorf("client %v: %d segments, tshark %d", fromClient, len(st.Segments), segs[fromClient])
		}
	}
}

// siwSend is one data segment of a capture, retransmissions left out.
type siwSend struct {
	fromClient bool
	s          Segment
}

// sendsOf returns c's data segments in capture order, without
// retransmissions.
func sendsOf(c *Conversation) []siwSend {
	var out []siwSend
	for _, fromClient := range []bool{true, false} {
		for _, s := range c.Stream(fromClient).Segments {
			if !s.Retransmission {
				out = append(out, siwSend{fromClient, s})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b siwSend) int { return a.s.Time.Compare(b.s.Time) })
	return out
}

// resegment writes, with the project's Writer, a capture of c's two
// streams in c's order of sends, but cut into TCP segments of at most mss
// octets wherever that falls, and with the last hold octets of each send
// carried into the same side's next one, so that segments also hold the
// end of one FPDU and the start of the next. It is what a TCP sender that
// knows nothing of MPA, or a re-segmenting middlebox, puts on the wire
// (RFC 5044 A.4).
func resegment(t *testing.T, c *Conversation, mss, hold int) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := NewWriter(&b, c.Client, c.Server, WithISN(c.ClientToServer.ISN, c.ServerToClient.ISN), WithMSS(mss))
	if err != nil {
		t.Fatal(err)
	}
	sends := sendsOf(c)
	last := map[bool]int{}
	for i, e := range sends {
		last[e.fromClient] = i
	}
	carry := map[bool][]byte{}
	for i, e := range sends {
		data := append(carry[e.fromClient], e.s.Payload...)
		keep := hold
		if i == last[e.fromClient] {
			keep = 0
		}
		keep = min(keep, len(data)-1)
		out := data[:len(data)-keep]
		carry[e.fromClient] = slices.Clone(data[len(data)-keep:])
		var pieces [][]byte
		for len(out) > 0 {
			n := min(mss, len(out))
			pieces = append(pieces, out[:n])
			out = out[n:]
		}
		if err := w.Segment(e.fromClient, e.s.Time, pieces...); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(sends[len(sends)-1].s.Time); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestReadSplitFPDUs reads the siw capture re-cut so that FPDUs are split
// across TCP segments, as siw does with some Read Responses at the MSS and
// as RFC 5044 A.4 lets any sender or middlebox do: reassembly must give
// the same octets, and the MPA framing the same FPDUs, whatever the cut.
func TestReadSplitFPDUs(t *testing.T) {
	orig, err := ReadTCPStreams(requireSiwCapture(t))
	if err != nil || len(orig) != 1 {
		t.Fatalf("ReadTCPStreams: %d conversations, %v", len(orig), err)
	}
	for _, v := range []struct{ mss, hold int }{
		{61, 0},   // a Read Response FPDU (84 octets) in two segments
		{1460, 3}, // every segment ends 3 octets into the next frame
		{7, 5},    // both
		{1, 0},    // one octet a segment: the length field split too
	} {
		t.Run(fmt.Sprintf("mss%d-hold%d", v.mss, v.hold), func(t *testing.T) {
			convs, err := ReadTCPStreamsFrom(bytes.NewReader(resegment(t, orig[0], v.mss, v.hold)))
			if err != nil || len(convs) != 1 {
				t.Fatalf("ReadTCPStreams: %d conversations, %v", len(convs), err)
			}
			c := convs[0]
			crc, _ := negotiated(c)
			for _, fromClient := range []bool{true, false} {
				who := fmt.Sprintf("client %v", fromClient)
				st, ost := c.Stream(fromClient), orig[0].Stream(fromClient)
				if !bytes.Equal(st.Data, ost.Data) {
					t.Fatalf("%s: reassembled %d octets that differ from the original's %d", who, len(st.Data), len(ost.Data))
				}
				for _, s := range st.Segments {
					if s.Retransmission || len(s.Payload) > v.mss {
						t.Errorf("%s: segment at %d of %d octets, retransmission %v", who, s.Offset, len(s.Payload), s.Retransmission)
					}
				}
				frames := checkMPAStream(t, who, st, crc)
				want, err := walkMPA(ost.Data)
				if err != nil {
					t.Fatal(err)
				}
				if len(frames) != len(want) {
					t.Fatalf("%s: %d frames, the original %d", who, len(frames), len(want))
				}
				for i := range frames {
					if frames[i].offset != want[i].offset || frames[i].op != want[i].op {
						t.Errorf("%s: frame %d at %d (%s), the original's at %d (%s)", who, i, frames[i].offset, frames[i].op, want[i].offset, want[i].op)
					}
				}
				// The cut must really break the alignment, or this test
				// would check nothing.
				a := alignmentOf(frames, st.Segments)
				if a.spanning == 0 || a.alignedSegs == a.segs || (v.hold > 0 && a.straddling == 0) {
					t.Errorf("%s: the re-cut capture is still aligned: %+v", who, a)
				}
			}
		})
	}
}
