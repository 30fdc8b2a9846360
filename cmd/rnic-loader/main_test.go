package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code = run(ctx, args, &o, &e)
	return code, o.String(), e.String()
}

func TestBenchLoopbackJSON(t *testing.T) {
	for _, args := range [][]string{
		{"--op", "write", "--size", "64KiB", "--bytes", "8MiB", "--markers"},
		{"--op", "write", "--size", "100", "--bytes", "100KiB", "--window", "7"},
		{"--op", "read", "--size", "4096", "--bytes", "2MiB", "--markers"},
		{"--op", "read", "--size", "70000", "--bytes", "1MiB", "--no-crc"},
		{"--op", "send", "--size", "1", "--bytes", "3000", "--mpa-rev", "1"},
		{"--op", "send", "--size", "9000", "--bytes", "1000001", "--markers", "--no-crc"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, out, errOut := runCLI(t, append([]string{"bench", "--json", "--quiet"}, args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var r Result
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("bad JSON %q: %v", out, err)
			}
			if r.VerifiedBytes != *r.TotalOctets || r.MeasuredOctets != *r.TotalOctets || r.Mismatches != 0 || r.Error != nil ||
				r.GoodputBitsPerSecond == nil || r.RawTCPBitsPerSecond == nil || *r.Ratio <= 0 {
				t.Fatalf("result %+v", &r)
			}
			// The rates are bits per second: octets × 8 over the time.
			if want := float64(r.MeasuredOctets) * 8 / *r.Seconds; math.Abs(*r.GoodputBitsPerSecond/want-1) > 1e-9 {
				t.Errorf("goodput_bits_per_second %g, want %g (octets × 8 / seconds)", *r.GoodputBitsPerSecond, want)
			}
			if *r.RawTCPOctets != r.MeasuredOctets {
				t.Errorf("raw_tcp_octets %d, want the %d the iWARP side moved", *r.RawTCPOctets, r.MeasuredOctets)
			}
			if want := float64(*r.RawTCPOctets) * 8 / *r.RawTCPSeconds; math.Abs(*r.RawTCPBitsPerSecond/want-1) > 1e-9 {
				t.Errorf("raw_tcp_bits_per_second %g, want %g", *r.RawTCPBitsPerSecond, want)
			}
			if r.MeasuredMessages != *r.Messages {
				t.Errorf("measured_messages %d, want %d", r.MeasuredMessages, *r.Messages)
			}
			if want := float64(*r.Messages) / *r.Seconds; math.Abs(*r.MessagesPerSecond/want-1) > 1e-9 {
				t.Errorf("messages_per_second %g, want %g", *r.MessagesPerSecond, want)
			}
		})
	}
}

// The octets are split into interleaved rounds of whole messages, the raw
// phase going first in every other one, after an untimed warm-up.
func TestBenchRounds(t *testing.T) {
	code, out, errOut := runCLI(t, "bench", "--json", "--quiet", "--op", "send", "--size", "9000", "--bytes", "1000001", "--rounds", "3", "--warmup", "20000")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("bad JSON %q: %v", out, err)
	}
	if len(r.Rounds) != 3 || r.VerifiedBytes != 1000001 || r.Mismatches != 0 {
		t.Fatalf("result %+v", &r)
	}
	var sum int64
	for i, rd := range r.Rounds {
		sum += rd.Octets
		if i < 2 && rd.Octets%9000 != 0 {
			t.Errorf("round %d moves %d octets, not whole messages", i, rd.Octets)
		}
		if rd.Round != i+1 || rd.RawFirst != (i%2 == 1) || rd.GoodputBitsPerSecond <= 0 || rd.RawTCPBitsPerSecond == nil || rd.Ratio == nil || *rd.Ratio <= 0 {
			t.Errorf("round %d: %+v", i, rd)
		}
		if want := float64(rd.Octets) * 8 / rd.Seconds; math.Abs(rd.GoodputBitsPerSecond/want-1) > 1e-9 {
			t.Errorf("round %d: goodput_bits_per_second %g, want octets × 8 / seconds = %g", i, rd.GoodputBitsPerSecond, want)
		}
	}
	if sum != 1000001 {
		t.Errorf("rounds move %d octets, want 1000001", sum)
	}
	// Fewer messages than rounds: one round per message.
	code, out, errOut = runCLI(t, "bench", "--json", "--quiet", "--size", "1MiB", "--bytes", "2MiB", "--rounds", "5")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Rounds) != 2 {
		t.Fatalf("%d rounds (%v), want 2", len(r.Rounds), err)
	}
}

// The bench server wraps its connection to peek at the first octets; the
// wrapper must still expose the socket, or the queue pair cannot read
// TCP_MAXSEG and sizes FPDUs for a 1460-octet EMSS.
func TestPeekConnExposesSocket(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			defer c.Close()
			time.Sleep(time.Second)
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pc := &peekConn{Conn: c, r: bufio.NewReader(c)}
	var sc syscall.Conn = pc
	raw, err := sc.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var mss int
	var serr error
	if err := raw.Control(func(fd uintptr) { mss, serr = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_MAXSEG) }); err != nil || serr != nil {
		t.Fatal(err, serr)
	}
	if mss <= 1460 {
		t.Fatalf("TCP_MAXSEG through the wrapper = %d; loopback's is far larger", mss)
	}
}

// TestBenchPcapFPDUAligned: in a loopback bench's pcap every FPDU, in both
// directions, starts a captured TCP segment (FPDU Alignment, RFC 5044
// appendix A), which Wireshark needs to delineate FPDUs without markers.
// The server's Read Responses used to be recorded from the client's reads,
// cut wherever a read ended, and tshark then found bad CRCs.
func TestBenchPcapFPDUAligned(t *testing.T) {
	for _, op := range []string{"read", "write", "send"} {
		pcap := filepath.Join(t.TempDir(), op+".pcap")
		code, _, stderr := runCLI(t, "bench", "--op", op, "--size", "8KiB", "--bytes", "512KiB", "--no-raw",
			"--quiet", "--pcap", pcap)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", op, code, stderr)
		}
		f, err := os.Open(pcap)
		if err != nil {
			t.Fatal(err)
		}
		r, err := pcapgo.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		// Per direction (by source port): the stream and where each
		// captured segment starts in it.
		type dir struct {
			stream []byte
			starts map[int]bool
		}
		dirs := map[layers.TCPPort]*dir{}
		for {
			data, _, err := r.ReadPacketData()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			p := gopacket.NewPacket(data, layers.LayerTypeEthernet, gopacket.Default)
			tcp, _ := p.Layer(layers.LayerTypeTCP).(*layers.TCP)
			if tcp == nil || len(tcp.Payload) == 0 {
				continue
			}
			d := dirs[tcp.SrcPort]
			if d == nil {
				d = &dir{starts: map[int]bool{}}
				dirs[tcp.SrcPort] = d
			}
			d.starts[len(d.stream)] = true
			d.stream = append(d.stream, tcp.Payload...)
		}
		f.Close()
		if len(dirs) != 2 {
			t.Fatalf("%s: %d directions with data", op, len(dirs))
		}
		fpdus := 0
		for port, d := range dirs {
			// The MPA Request or Reply: 20 octets of header, then private
			// data (RFC 5044 7.1: PD_Length in octets 18-19), then FPDUs of
			// ULPDU_Length, ULPDU, pad and CRC (markers are off).
			off := 20 + int(binary.BigEndian.Uint16(d.stream[18:20]))
			for off < len(d.stream) {
				if !d.starts[off] {
					t.Fatalf("%s: port %d: the FPDU at stream offset %d does not start a segment", op, port, off)
				}
				ulen := int(binary.BigEndian.Uint16(d.stream[off:]))
				off += 2 + ulen + (-(2 + ulen))&3 + 4
				fpdus++
			}
			if off != len(d.stream) {
				t.Fatalf("%s: port %d: the last FPDU runs past the stream", op, port)
			}
		}
		if fpdus < 64 {
			t.Fatalf("%s: only %d FPDUs", op, fpdus)
		}
	}
}

// DDP header lengths (RFC 5041 4.2, 4.3): each FPDU's ULPDU is the
// header and at most MULPDU minus it of payload.
const (
	taggedHdr   = 14
	untaggedHdr = 18
)

// fpduWire is the length on the wire of an FPDU carrying ulpdu octets
// without markers: ULPDU_Length, the ULPDU, pad to 4 octets, and the CRC
// field, there even when CRC is not in use (RFC 5044, CRC Calculation:
// "the sender MUST include a CRC field").
func fpduWire(ulpdu int) int64 {
	n := 2 + ulpdu
	n += (-n) & 3
	return int64(n + 4)
}

// msgFPDUs and msgWire are the FPDUs of a message of size octets and
// their length on the wire.
func msgFPDUs(size, mulpdu, hdr int) int64 {
	per := mulpdu - hdr
	return int64((size + per - 1) / per)
}

func msgWire(size, mulpdu, hdr int) int64 {
	per := mulpdu - hdr
	var n int64
	for size > per {
		n += fpduWire(mulpdu)
		size -= per
	}
	return n + fpduWire(hdr+size)
}

// counterErrors says what is wrong with the stack counters of a bench
// record of one size whose messages are all whole (--bytes a multiple of
// --size, or --duration): what each side sent and received must follow
// from the messages the record says moved, FPDU by FPDU, and the two
// sides must agree.
func counterErrors(r *Result) []string {
	var bad []string
	errf := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	c, s := r.Stack.Client, r.Stack.Server
	if c == nil || s == nil {
		return []string{"no counters"}
	}
	size, mulpdu := int(*r.MessageOctets), *r.MULPDU
	var dir [2]int64 // messages the client's and the server's operations moved
	for _, d := range r.Directions {
		if d.Initiator == "server" {
			dir[1] = d.Messages
		} else {
			dir[0] = d.Messages
		}
	}
	if dir[0]+dir[1] != r.MeasuredMessages {
		errf("directions move %d+%d messages, the record %d", dir[0], dir[1], r.MeasuredMessages)
	}
	// What each side's own operations and its answers to the peer's put
	// on the wire: tx[side][opcode name].
	type side struct {
		name       string
		st         *StackCounters
		ops, peers int64
	}
	sides := []side{{"client", c, dir[0], dir[1]}, {"server", s, dir[1], dir[0]}}
	se := "Send with Solicited Event"
	for _, x := range sides {
		want := map[string]int64{}
		var dataMsgs int64 // messages whose payload this side sends
		hdr := taggedHdr
		switch r.Op {
		case "write":
			want["RDMA Write"], dataMsgs = x.ops, x.ops
		case "send":
			want["Send"], dataMsgs, hdr = x.ops, x.ops, untaggedHdr
		case "read":
			want["RDMA Read Request"], want["RDMA Read Response"], dataMsgs = x.ops, x.peers, x.peers
		}
		for name, n := range x.st.TxMessages {
			if name != se && n != want[name] {
				errf("%s sent %d %s messages, want %d", x.name, n, name, want[name])
			}
		}
		ctl := x.st.TxMessages[se]
		fpdus := dataMsgs*msgFPDUs(size, mulpdu, hdr) + x.st.TxMessages["RDMA Read Request"] + ctl
		if x.st.TxFPDUs != fpdus {
			errf("%s sent %d FPDUs, want %d (%d data messages of %d FPDUs, MULPDU %d, and %d others)", x.name, x.st.TxFPDUs, fpdus, dataMsgs, msgFPDUs(size, mulpdu, hdr), mulpdu, fpdus-dataMsgs*msgFPDUs(size, mulpdu, hdr))
		}
		if !*r.Markers {
			// Control messages are 32 octets (the server's Stats, 208,
			// are not in its own counters).
			octets := dataMsgs*msgWire(size, mulpdu, hdr) + x.st.TxMessages["RDMA Read Request"]*fpduWire(untaggedHdr+28) + ctl*fpduWire(untaggedHdr+ctlLen)
			if x.st.TxOctets != octets {
				errf("%s sent %d octets, want %d", x.name, x.st.TxOctets, octets)
			}
		}
		if x.st.CRCErrors+x.st.MarkerErrors != 0 || len(x.st.TerminatesSent)+len(x.st.TerminatesReceived) != 0 {
			errf("%s counted errors: CRC %d, marker %d, Terminates %v %v", x.name, x.st.CRCErrors, x.st.MarkerErrors, x.st.TerminatesSent, x.st.TerminatesReceived)
		}
	}
	// The server received all the client sent; the client all the server
	// sent and its Stats, one per session, which the server's own
	// counters cannot count.
	if s.RxOctets != c.TxOctets || s.RxFPDUs != c.TxFPDUs {
		errf("server received %d octets in %d FPDUs, client sent %d in %d", s.RxOctets, s.RxFPDUs, c.TxOctets, c.TxFPDUs)
	}
	if c.RxFPDUs != s.TxFPDUs+int64(s.Sessions) || c.Sessions != s.Sessions {
		errf("client received %d FPDUs in %d sessions, server sent %d in %d and a Stats each", c.RxFPDUs, c.Sessions, s.TxFPDUs, s.Sessions)
	}
	for name, n := range c.TxMessages {
		if s.RxMessages[name] != n {
			errf("client sent %d %s, server received %d", n, name, s.RxMessages[name])
		}
	}
	for name, n := range s.TxMessages {
		want := n
		if name == se {
			want += int64(s.Sessions)
		}
		if c.RxMessages[name] != want {
			errf("server sent %d %s, client received %d", want, name, c.RxMessages[name])
		}
	}
	var qo, qm int64
	for _, q := range r.QueuePairs {
		qo += q.Octets
		qm += q.Messages
	}
	if qo != r.MeasuredOctets || qm != r.MeasuredMessages || len(r.QueuePairs) != r.QPs {
		errf("%d queue pairs move %d octets in %d messages, the record %d in %d", len(r.QueuePairs), qo, qm, r.MeasuredOctets, r.MeasuredMessages)
	}
	return bad
}

func benchJSON(t *testing.T, args ...string) *Result {
	t.Helper()
	code, out, errOut := runCLI(t, append([]string{"bench", "--json", "--quiet"}, args...)...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errOut)
	}
	var r Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("bad JSON %q: %v", out, err)
	}
	return &r
}

// The stack's counters in the record follow from what the run moved:
// FPDUs by MULPDU, octets FPDU by FPDU, messages by opcode, and the
// client's and the server's agree, for every operation, with markers and
// without, with several queue pairs and in both directions.
func TestBenchStackCounters(t *testing.T) {
	for _, args := range [][]string{
		{"--op", "write", "--size", "64KiB", "--bytes", "4MiB"},
		{"--op", "write", "--size", "100000", "--bytes", "1000000", "--markers", "--qps", "2"},
		{"--op", "send", "--size", "9000", "--bytes", "900000", "--no-crc"},
		{"--op", "read", "--size", "70000", "--bytes", "700000", "--markers"},
		{"--op", "write", "--size", "4KiB", "--iters", "300", "--bidir", "--qps", "2"},
		{"--op", "send", "--size", "40000", "--iters", "30", "--bidir"},
		{"--op", "read", "--size", "64KiB", "--duration", "200ms", "--bidir"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := benchJSON(t, append(args, "--rounds", "2", "--no-raw")...)
			for _, e := range counterErrors(r) {
				t.Error(e)
			}
			if r.VerifiedBytes != r.MeasuredOctets || r.Mismatches != 0 {
				t.Errorf("verified %d of the %d octets moved, %d mismatches", r.VerifiedBytes, r.MeasuredOctets, r.Mismatches)
			}
			if r.Stack.Client.Sessions != 2*r.QPs {
				t.Errorf("counters of %d client sessions, want the %d measured", r.Stack.Client.Sessions, 2*r.QPs)
			}
		})
	}
}

// counterErrors fails a record whose counters are off by one anywhere,
// so that TestBenchStackCounters can fail.
func TestCounterCheckCatchesWrongCounters(t *testing.T) {
	good := benchJSON(t, "--op", "write", "--size", "64KiB", "--bytes", "2MiB", "--no-raw", "--bidir")
	if e := counterErrors(good); len(e) != 0 {
		t.Fatalf("a good record fails: %v", e)
	}
	raw, _ := json.Marshal(good)
	for name, spoil := range map[string]func(r *Result){
		"client tx FPDUs":        func(r *Result) { r.Stack.Client.TxFPDUs++ },
		"server rx FPDUs":        func(r *Result) { r.Stack.Server.RxFPDUs-- },
		"client tx octets":       func(r *Result) { r.Stack.Client.TxOctets += 4 },
		"server rx octets":       func(r *Result) { r.Stack.Server.RxOctets-- },
		"client rx FPDUs":        func(r *Result) { r.Stack.Client.RxFPDUs++ },
		"server tx RDMA Write":   func(r *Result) { r.Stack.Server.TxMessages["RDMA Write"]++ },
		"client rx RDMA Write":   func(r *Result) { r.Stack.Client.RxMessages["RDMA Write"]-- },
		"client tx Send":         func(r *Result) { r.Stack.Client.TxMessages["Send"] = 1 },
		"CRC error":              func(r *Result) { r.Stack.Server.CRCErrors = 1 },
		"marker error":           func(r *Result) { r.Stack.Client.MarkerErrors = 1 },
		"Terminate":              func(r *Result) { r.Stack.Client.TerminatesReceived["LLP: MPA: CRC error"] = 1 },
		"server sessions":        func(r *Result) { r.Stack.Server.Sessions-- },
		"a direction's messages": func(r *Result) { r.Directions[1].Messages-- },
	} {
		var r Result
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		spoil(&r)
		if len(counterErrors(&r)) == 0 {
			t.Errorf("%s off: the check passes", name)
		}
	}
}

// Cobra's own argument errors are usage errors (exit 2); a command's error
// that only mentions "accepts" or "requires" is a failure (exit 1).
func TestIsCobraUsage(t *testing.T) {
	for msg, want := range map[string]bool{
		`unknown command "x" for "rnic-loader"`:                true,
		"accepts 1 arg(s), received 0":                         true,
		"accepts between 1 and 2 arg(s), received 3":           true,
		"requires at least 1 arg(s), only received 0":          true,
		"unknown flag: --nope":                                 true,
		"unknown shorthand flag: 'z' in -z":                    true,
		"image security counter 5: the device accepts 6 or up": false,
		"the flash requires a write enable first":              false,
	} {
		if got := isCobraUsage(errors.New(msg)); got != want {
			t.Errorf("isCobraUsage(%q) = %v, want %v", msg, got, want)
		}
	}
}
