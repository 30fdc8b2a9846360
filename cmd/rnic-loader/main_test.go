package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
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
				t.Fatalf("result %+v", r)
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
		t.Fatalf("result %+v", r)
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
