package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// pkt describes one crafted TCP packet for the reassembly tests.
type pkt struct {
	fromClient bool
	flags      string // any of S A F R P
	seq        uint32
	payload    []byte
	capLen     int // bytes of the frame kept in the capture; 0: all
}

// buildPcap crafts a capture of pkts between client and server with the
// given link type (Ethernet, Linux SLL or raw IP), directly with
// gopacket so that the reader is not tested against our own Writer.
func buildPcap(t *testing.T, lt layers.LinkType, client, server netip.AddrPort, pkts []pkt) []byte {
	t.Helper()
	var out bytes.Buffer
	pw := pcapgo.NewWriter(&out)
	if err := pw.WriteFileHeader(65536, lt); err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1700000000, 0)
	for i, p := range pkts {
		src, dst := client, server
		if !p.fromClient {
			src, dst = server, client
		}
		tcp := &layers.TCP{
			SrcPort: layers.TCPPort(src.Port()), DstPort: layers.TCPPort(dst.Port()),
			Seq: p.seq, Ack: 1, Window: 1000,
			SYN: strings.Contains(p.flags, "S"), ACK: strings.Contains(p.flags, "A"),
			FIN: strings.Contains(p.flags, "F"), RST: strings.Contains(p.flags, "R"),
			PSH: strings.Contains(p.flags, "P"),
		}
		var netl gopacket.SerializableLayer
		et := layers.EthernetTypeIPv4
		if src.Addr().Is4() {
			ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolTCP,
				SrcIP: src.Addr().AsSlice(), DstIP: dst.Addr().AsSlice()}
			_ = tcp.SetNetworkLayerForChecksum(ip)
			netl = ip
		} else {
			et = layers.EthernetTypeIPv6
			ip := &layers.IPv6{Version: 6, NextHeader: layers.IPProtocolTCP, HopLimit: 64,
				SrcIP: src.Addr().AsSlice(), DstIP: dst.Addr().AsSlice()}
			_ = tcp.SetNetworkLayerForChecksum(ip)
			netl = ip
		}
		ls := []gopacket.SerializableLayer{netl, tcp, gopacket.Payload(p.payload)}
		if lt == layers.LinkTypeEthernet {
			eth := &layers.Ethernet{SrcMAC: []byte{2, 0, 0, 0, 0, 1}, DstMAC: []byte{2, 0, 0, 0, 0, 2}, EthernetType: et}
			ls = append([]gopacket.SerializableLayer{eth}, ls...)
		}
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
			t.Fatal(err)
		}
		frame := buf.Bytes()
		if lt == layers.LinkTypeLinuxSLL {
			hdr := make([]byte, 16)
			binary.BigEndian.PutUint16(hdr[0:], 0) // to us
			binary.BigEndian.PutUint16(hdr[2:], 1) // ARPHRD_ETHER
			binary.BigEndian.PutUint16(hdr[4:], 6)
			copy(hdr[6:], []byte{2, 0, 0, 0, 0, 1})
			binary.BigEndian.PutUint16(hdr[14:], uint16(et))
			frame = append(hdr, frame...)
		}
		kept := frame
		if p.capLen > 0 {
			kept = frame[:p.capLen]
		}
		ci := gopacket.CaptureInfo{Timestamp: t0.Add(time.Duration(i) * time.Millisecond), CaptureLength: len(kept), Length: len(frame)}
		if err := pw.WritePacket(ci, kept); err != nil {
			t.Fatal(err)
		}
	}
	return out.Bytes()
}

var (
	cli4 = netip.MustParseAddrPort("192.0.2.1:40000")
	srv4 = netip.MustParseAddrPort("192.0.2.2:7174")
	cli6 = netip.MustParseAddrPort("[2001:db8::1]:40000")
	srv6 = netip.MustParseAddrPort("[2001:db8::2]:7174")
)

func readBytes(t *testing.T, b []byte) ([]*Conversation, error) {
	t.Helper()
	return ReadTCPStreamsFrom(bytes.NewReader(b))
}

// readOne reads a capture that must hold exactly one conversation.
func readOne(t *testing.T, b []byte) *Conversation {
	t.Helper()
	convs, err := readBytes(t, b)
	if err != nil {
		t.Fatalf("ReadTCPStreamsFrom: %v", err)
	}
	if len(convs) != 1 {
		t.Fatalf("got %d conversations, want 1", len(convs))
	}
	return convs[0]
}

// handshake returns SYN, SYN-ACK and ACK for the given ISNs.
func handshake(ci, si uint32) []pkt {
	return []pkt{
		{fromClient: true, flags: "S", seq: ci},
		{fromClient: false, flags: "SA", seq: si},
		{fromClient: true, flags: "A", seq: ci + 1},
	}
}

func TestReassemblyWrapsSequenceNumbers(t *testing.T) {
	msg := []byte("the quick brown fox jumps over the lazy dog, twice over: the quick brown fox")
	ci, si := uint32(0xffffffe0), uint32(0xfffffffe) // both wrap inside the stream
	pkts := handshake(ci, si)
	for off := 0; off < len(msg); off += 7 {
		end := min(off+7, len(msg))
		pkts = append(pkts, pkt{fromClient: true, flags: "PA", seq: ci + 1 + uint32(off), payload: msg[off:end]})
		pkts = append(pkts, pkt{fromClient: false, flags: "PA", seq: si + 1 + uint32(off), payload: msg[off:end]})
	}
	pkts = append(pkts,
		pkt{fromClient: true, flags: "FA", seq: ci + 1 + uint32(len(msg))},
		pkt{fromClient: false, flags: "FA", seq: si + 1 + uint32(len(msg))})
	for _, lt := range []layers.LinkType{layers.LinkTypeEthernet, layers.LinkTypeLinuxSLL, layers.LinkTypeRaw} {
		for _, fam := range [][2]netip.AddrPort{{cli4, srv4}, {cli6, srv6}} {
			c := readOne(t, (buildPcap(t, lt, fam[0], fam[1], pkts)))
			if c.Client != fam[0] || c.Server != fam[1] {
				t.Errorf("%v: client %v server %v, want %v %v", lt, c.Client, c.Server, fam[0], fam[1])
			}
			for _, st := range []*Stream{&c.ClientToServer, &c.ServerToClient} {
				if !bytes.Equal(st.Data, msg) {
					t.Errorf("%v %v: data %q, want %q", lt, fam[0], st.Data, msg)
				}
				if !st.SYN || !st.FIN || st.RST {
					t.Errorf("%v: SYN %v FIN %v RST %v", lt, st.SYN, st.FIN, st.RST)
				}
			}
			if c.ClientToServer.ISN != ci || c.ServerToClient.ISN != si {
				t.Errorf("ISNs %#x %#x, want %#x %#x", c.ClientToServer.ISN, c.ServerToClient.ISN, ci, si)
			}
			last := c.ServerToClient.Segments[len(c.ServerToClient.Segments)-1]
			if want := int64(len(msg) - len(last.Payload)); last.Offset != want {
				t.Errorf("last segment offset %d, want %d", last.Offset, want)
			}
		}
	}
}

func TestReassemblyOutOfOrderDuplicatesOverlap(t *testing.T) {
	data := []byte("0123456789abcdefghijklmnopqrstuvwxyz")
	ci := uint32(1000)
	seg := func(lo, hi int) pkt {
		return pkt{fromClient: true, flags: "PA", seq: ci + 1 + uint32(lo), payload: data[lo:hi]}
	}
	pkts := append(handshake(ci, 5000),
		seg(0, 10),
		seg(20, 30), // out of order
		seg(0, 10),  // duplicate
		seg(5, 25),  // overlap, fills the hole
		seg(30, 36),
		seg(28, 36), // retransmission of the tail
	)
	c := readOne(t, (buildPcap(t, layers.LinkTypeEthernet, cli4, srv4, pkts)))
	st := c.ClientToServer
	if !bytes.Equal(st.Data, data) {
		t.Fatalf("data %q, want %q", st.Data, data)
	}
	var got []bool
	for _, s := range st.Segments {
		got = append(got, s.Retransmission)
	}
	want := []bool{false, false, true, false, false, true}
	if !slices.Equal(got, want) {
		t.Errorf("retransmission flags %v, want %v", got, want)
	}
	if len(c.ServerToClient.Data) != 0 {
		t.Errorf("server sent %d octets, want 0", len(c.ServerToClient.Data))
	}
}

// An overlapping segment with different octets does not overwrite what
// the lower-sequence segment placed.
func TestReassemblyConflictingOverlap(t *testing.T) {
	ci := uint32(1)
	pkts := append(handshake(ci, 2),
		pkt{fromClient: true, flags: "A", seq: ci + 1, payload: []byte("AAAA")},
		pkt{fromClient: true, flags: "A", seq: ci + 3, payload: []byte("BBBB")})
	c := readOne(t, (buildPcap(t, layers.LinkTypeEthernet, cli4, srv4, pkts)))
	if got := string(c.ClientToServer.Data); got != "AAAABB" {
		t.Errorf("data %q, want AAAABB", got)
	}
}

func TestReassemblyGap(t *testing.T) {
	ci, si := uint32(100), uint32(200)
	pkts := append(handshake(ci, si),
		pkt{fromClient: true, flags: "PA", seq: ci + 1, payload: []byte("0123456789")},
		pkt{fromClient: true, flags: "PA", seq: ci + 21, payload: []byte("KLMNOPQRST")},
		pkt{fromClient: false, flags: "PA", seq: si + 1, payload: []byte("hello")},
		pkt{fromClient: false, flags: "FA", seq: si + 9}, // FIN after a 3-octet hole
	)
	convs, err := readBytes(t, buildPcap(t, layers.LinkTypeEthernet, cli4, srv4, pkts))
	if err == nil {
		t.Fatal("no error for a stream with holes")
	}
	if len(convs) != 1 {
		t.Fatalf("got %d conversations, want 1 (returned with the error)", len(convs))
	}
	var gaps []*GapError
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var g *GapError
		if !errors.As(e, &g) {
			t.Fatalf("error %v is not a *GapError", e)
		}
		gaps = append(gaps, g)
	}
	if len(gaps) != 2 {
		t.Fatalf("got %d gaps (%v), want 2", len(gaps), err)
	}
	if g := gaps[0]; !g.FromClient || g.Offset != 10 || g.Seq != ci+11 || g.Missing != 10 {
		t.Errorf("client gap %+v, want offset 10 seq %d missing 10", *g, ci+11)
	}
	if g := gaps[1]; g.FromClient || g.Offset != 5 || g.Missing != 3 {
		t.Errorf("server gap %+v, want offset 5 missing 3", *g)
	}
	if got := string(convs[0].ClientToServer.Data); got != "0123456789" {
		t.Errorf("data before the gap %q", got)
	}
	if !strings.Contains(err.Error(), "10 octets missing at offset 10") {
		t.Errorf("error text %q", err)
	}
}

// A packet cut by the snap length leaves a gap, unless a retransmission
// brings the missing octets.
func TestReassemblyTruncatedPackets(t *testing.T) {
	ci := uint32(7)
	payload := bytes.Repeat([]byte("0123456789"), 10)
	hdr := 14 + 20 + 20
	cut := pkt{fromClient: true, flags: "PA", seq: ci + 1, payload: payload, capLen: hdr + 40}
	_, err := readBytes(t, buildPcap(t, layers.LinkTypeEthernet, cli4, srv4, append(handshake(ci, 9), cut)))
	var g *GapError
	if !errors.As(err, &g) || g.Offset != 40 || g.Missing != 60 {
		t.Fatalf("error %v, want a 60-octet gap at offset 40", err)
	}
	whole := cut
	whole.capLen = 0
	c := readOne(t, (buildPcap(t, layers.LinkTypeEthernet, cli4, srv4, append(handshake(ci, 9), cut, whole))))
	if !bytes.Equal(c.ClientToServer.Data, payload) {
		t.Errorf("data %q", c.ClientToServer.Data)
	}
	if s := c.ClientToServer.Segments; len(s) != 2 || len(s[0].Payload) != 40 || s[1].Retransmission {
		t.Errorf("segments %+v", s)
	}
}

// Ethernet pads short frames to 60 octets: the padding is not payload.
func TestReassemblyIgnoresEthernetPadding(t *testing.T) {
	ci := uint32(7)
	c := readOne(t, (buildPcap(t, layers.LinkTypeEthernet, cli4, srv4,
		append(handshake(ci, 9), pkt{fromClient: true, flags: "PA", seq: ci + 1, payload: []byte("x")}))))
	if got := string(c.ClientToServer.Data); got != "x" {
		t.Errorf("data %q, want x", got)
	}
}

// Without a handshake in the capture, the first sender is taken as the
// client and the ISNs are inferred.
func TestReassemblyMidStream(t *testing.T) {
	pkts := []pkt{
		{fromClient: false, flags: "PA", seq: 5005, payload: []byte("world")},
		{fromClient: true, flags: "PA", seq: 99, payload: []byte("hello")},
		{fromClient: false, flags: "PA", seq: 5000, payload: []byte("hello")}, // earlier, late
	}
	c := readOne(t, (buildPcap(t, layers.LinkTypeEthernet, cli4, srv4, pkts)))
	if c.Client != srv4 || c.Server != cli4 {
		t.Errorf("client %v server %v: want the first sender as client", c.Client, c.Server)
	}
	st := c.ClientToServer // sent by srv4
	if st.SYN || st.ISN != 4999 || string(st.Data) != "helloworld" {
		t.Errorf("stream SYN %v ISN %d data %q", st.SYN, st.ISN, st.Data)
	}
	if st := c.ServerToClient; st.ISN != 98 || string(st.Data) != "hello" {
		t.Errorf("other stream ISN %d data %q", st.ISN, st.Data)
	}
}

// A second SYN with another ISN on the same ports is a new connection;
// a retransmitted SYN is not. Roles come from the SYN even when the
// SYN-ACK is captured first.
func TestReassemblyConnectionReuse(t *testing.T) {
	pkts := []pkt{
		{fromClient: false, flags: "SA", seq: 500},
		{fromClient: true, flags: "S", seq: 100},
		{fromClient: true, flags: "S", seq: 100},
		{fromClient: true, flags: "PA", seq: 101, payload: []byte("one")},
		{fromClient: true, flags: "FA", seq: 104},
		{fromClient: false, flags: "FA", seq: 501},
		{fromClient: true, flags: "S", seq: 9000},
		{fromClient: false, flags: "SA", seq: 7000},
		{fromClient: true, flags: "PA", seq: 9001, payload: []byte("two")},
		{fromClient: true, flags: "RA", seq: 9004, payload: []byte("reset reason")},
	}
	convs, err := readBytes(t, buildPcap(t, layers.LinkTypeEthernet, cli6, srv6, pkts))
	if err != nil {
		t.Fatal(err)
	}
	if len(convs) != 2 {
		t.Fatalf("got %d conversations, want 2", len(convs))
	}
	for i, want := range []string{"one", "two"} {
		c := convs[i]
		if c.Client != cli6 || string(c.ClientToServer.Data) != want {
			t.Errorf("conversation %d: client %v data %q, want %v %q", i, c.Client, c.ClientToServer.Data, cli6, want)
		}
	}
	if convs[0].ServerToClient.ISN != 500 || convs[1].ServerToClient.ISN != 7000 || !convs[1].ClientToServer.RST {
		t.Errorf("second conversation %+v", convs[1])
	}
}

func TestReadErrors(t *testing.T) {
	if _, err := ReadTCPStreams("testdata/does-not-exist.pcap"); err == nil {
		t.Error("no error for a missing file")
	}
	if _, err := ReadTCPStreamsFrom(strings.NewReader("")); err == nil {
		t.Error("no error for an empty input")
	}
	if _, err := ReadTCPStreamsFrom(strings.NewReader("this is not a capture file")); err == nil {
		t.Error("no error for a text file")
	}
	// A file cut inside a packet record: what came before is returned.
	b := buildPcap(t, layers.LinkTypeEthernet, cli4, srv4, append(handshake(1, 2),
		pkt{fromClient: true, flags: "PA", seq: 2, payload: []byte("abc")},
		pkt{fromClient: true, flags: "PA", seq: 5, payload: []byte("def")}))
	convs, err := readBytes(t, b[:len(b)-10])
	if err == nil || len(convs) != 1 || string(convs[0].ClientToServer.Data) != "abc" {
		t.Errorf("truncated file: %d conversations, err %v", len(convs), err)
	}
	// An unsupported link type is said so.
	var out bytes.Buffer
	pw := pcapgo.NewWriter(&out)
	_ = pw.WriteFileHeader(65536, layers.LinkTypeIEEE802_11)
	_ = pw.WritePacket(gopacket.CaptureInfo{CaptureLength: 4, Length: 4}, []byte{1, 2, 3, 4})
	if _, err := readBytes(t, out.Bytes()); err == nil || !strings.Contains(err.Error(), "unsupported link type") {
		t.Errorf("802.11 capture: err %v", err)
	}
}

func TestReadPcapng(t *testing.T) {
	pcapBytes := buildPcap(t, layers.LinkTypeEthernet, cli4, srv4, append(handshake(1, 2),
		pkt{fromClient: true, flags: "PA", seq: 2, payload: []byte("abc")},
		pkt{fromClient: false, flags: "PA", seq: 3, payload: []byte("xyz")}))
	r, err := pcapgo.NewReader(bytes.NewReader(pcapBytes))
	if err != nil {
		t.Fatal(err)
	}
	var ng bytes.Buffer
	nw, err := pcapgo.NewNgWriter(&ng, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	for {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		if err := nw.WritePacket(ci, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := nw.Flush(); err != nil {
		t.Fatal(err)
	}
	c := readOne(t, (ng.Bytes()))
	if string(c.ClientToServer.Data) != "abc" || string(c.ServerToClient.Data) != "xyz" {
		t.Errorf("pcapng: %q %q", c.ClientToServer.Data, c.ServerToClient.Data)
	}
}

func TestCoverage(t *testing.T) {
	var cv coverage
	steps := []struct {
		lo, hi int64
		fresh  bool
		after  coverage
	}{
		{10, 20, true, coverage{{10, 20}}},
		{12, 18, false, coverage{{10, 20}}},
		{30, 40, true, coverage{{10, 20}, {30, 40}}},
		{0, 5, true, coverage{{0, 5}, {10, 20}, {30, 40}}},
		{5, 10, true, coverage{{0, 20}, {30, 40}}},
		{20, 30, true, coverage{{0, 40}}},
		{0, 40, false, coverage{{0, 40}}},
		{39, 41, true, coverage{{0, 41}}},
		{7, 7, false, coverage{{0, 41}}},
	}
	for _, s := range steps {
		if got := cv.add(s.lo, s.hi); got != s.fresh || !slices.Equal(cv, s.after) {
			t.Fatalf("add(%d,%d) = %v, %v; want %v, %v", s.lo, s.hi, got, cv, s.fresh, s.after)
		}
	}
}
