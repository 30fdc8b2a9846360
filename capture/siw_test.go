package capture

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
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

	// Walk the MPA framing: request/reply, then one FPDU per segment.
	wantOps := map[bool][]string{
		true:  rounds(3, "Send", "ReadResponse", "Send"),
		false: rounds(3, "ReadRequest", "Send", "Write", "Send"),
	}
	for _, fromClient := range []bool{true, false} {
		st := c.Stream(fromClient)
		frames, err := walkMPA(st.Data)
		if err != nil {
			t.Fatalf("client %v: %v", fromClient, err)
		}
		var ops []string
		starts := map[int64]int{}
		for _, f := range frames {
			starts[f.offset] = f.length
			if f.op != "" {
				ops = append(ops, f.op)
			}
		}
		if !slices.Equal(ops, wantOps[fromClient]) {
			t.Errorf("client %v: FPDUs %v, want %v", fromClient, ops, wantOps[fromClient])
		}
		// siw keeps FPDUs aligned: every segment is exactly one frame.
		for _, s := range st.Segments {
			if n, ok := starts[s.Offset]; !ok || n != len(s.Payload) {
				t.Errorf("client %v: segment at %d (%d octets) is not one MPA frame", fromClient, s.Offset, len(s.Payload))
			}
		}
	}
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
}

// walkMPA splits an MPA stream (RFC 5044, no markers) into frames. It
// is a minimal reader for the test, independent of the iwarp packages.
func walkMPA(b []byte) ([]mpaFrame, error) {
	if len(b) < 20 || !strings.HasPrefix(string(b), "MPA ID Re") {
		return nil, fmt.Errorf("stream does not start with an MPA key: %q", b[:min(len(b), 16)])
	}
	pd := int(binary.BigEndian.Uint16(b[18:20]))
	frames := []mpaFrame{{0, 20 + pd, ""}}
	off := 20 + pd
	names := map[byte]string{0: "Write", 1: "ReadRequest", 2: "ReadResponse", 3: "Send", 7: "Terminate"}
	for off < len(b) {
		if len(b)-off < 2 {
			return nil, fmt.Errorf("truncated FPDU at %d", off)
		}
		ulpdu := int(binary.BigEndian.Uint16(b[off:]))
		n := (2+ulpdu+3)&^3 + 4 // length, ULPDU, pad to 4, CRC
		if off+n > len(b) || ulpdu < 2 {
			return nil, fmt.Errorf("bad FPDU at %d: ULPDU length %d", off, ulpdu)
		}
		op, ok := names[b[off+3]&0x0f]
		if !ok {
			op = "op" + strconv.Itoa(int(b[off+3]&0x0f))
		}
		frames = append(frames, mpaFrame{int64(off), n, op})
		off += n
	}
	return frames, nil
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
