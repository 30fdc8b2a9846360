package sctp

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// writePcap writes SCTP packets as UDP datagrams between two hosts, both
// on port 9899 (RFC 6951 5.1), with real UDP checksums.
func writePcap(t *testing.T, path string, pkts []relayed) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := pcapgo.NewWriter(f)
	if err := w.WriteFileHeader(262144, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	hosts := [2]net.IP{net.IPv4(10, 0, 0, 1).To4(), net.IPv4(10, 0, 0, 2).To4()}
	macs := [2]net.HardwareAddr{{2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 2}}
	ts := time.Unix(1700000000, 0)
	for i, p := range pkts {
		src, dst := 0, 1
		if !p.toListener {
			src, dst = 1, 0
		}
		eth := &layers.Ethernet{SrcMAC: macs[src], DstMAC: macs[dst], EthernetType: layers.EthernetTypeIPv4}
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: hosts[src], DstIP: hosts[dst], Flags: layers.IPv4DontFragment}
		udp := &layers.UDP{SrcPort: DefaultUDPPort, DstPort: DefaultUDPPort}
		udp.SetNetworkLayerForChecksum(ip)
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{ComputeChecksums: true, FixLengths: true}, eth, ip, udp, gopacket.Payload(p.pkt)); err != nil {
			t.Fatal(err)
		}
		ci := gopacket.CaptureInfo{Timestamp: ts.Add(time.Duration(i) * time.Millisecond), CaptureLength: len(buf.Bytes()), Length: len(buf.Bytes())}
		if err := w.WritePacket(ci, buf.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTsharkDecodes captures a whole association through the relay
// (handshake with the Adaptation Layer Indication, fragmented and whole
// messages, SACKs, heartbeats, graceful shutdown), adds a packet for each
// golden chunk, and has tshark decode the lot as SCTP over UDP 9899 with
// CRC32c checking on: every packet must be SCTP, every checksum good.
func TestTsharkDecodes(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Fatalf("tshark not found: scripts/deps.sh (run by make) installs it")
	}
	via, rp := viaRelay(t, nil)
	cfg := fastConfig()
	cfg.AdaptationIndication = u32(1)
	cfg.HeartbeatInterval = 10 * time.Millisecond
	s, c, _ := pair(t, cfg, cfg, via)
	ctx := testCtx(t)
	for i, n := range []int{1, 100, 1172, 1173, 5000} {
		b := make([]byte, n)
		fill(b, i)
		if err := c.SendMsg(ctx, uint16(i%3), 0x10, true, b); err != nil {
			t.Fatal(err)
		}
		if m, err := s.RecvMsg(ctx); err != nil || !bytes.Equal(m.Data, b) {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	for s.Stats().HeartbeatAcks == 0 {
		time.Sleep(20 * time.Millisecond)
		if ctx.Err() != nil {
			t.Fatal("no heartbeat acknowledged")
		}
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	<-s.Done()
	r := *rp
	r.mu.Lock()
	pkts := append([]relayed(nil), r.seen...)
	r.mu.Unlock()
	for _, g := range goldenChunks() {
		b := appendCommonHeader(nil, DefaultUDPPort, DefaultUDPPort, 0x55667788)
		if strings.HasPrefix(g.file, "init_") && !strings.HasPrefix(g.file, "init_ack") {
			b = appendCommonHeader(nil, DefaultUDPPort, DefaultUDPPort, 0)
		}
		b = g.build(b)
		sealPacket(b)
		pkts = append(pkts, relayed{toListener: true, pkt: b})
	}
	pkts = append(pkts, relayed{toListener: true, pkt: goldenPacket()})
	path := filepath.Join(t.TempDir(), "sctp.pcap")
	writePcap(t, path, pkts)

	out, err := exec.Command("tshark", "-r", path, "-d", "udp.port==9899,sctp", "-o", "sctp.checksum:CRC-32C",
		"-T", "fields", "-E", "separator=;", "-e", "frame.number", "-e", "sctp.checksum.status", "-e", "sctp.chunk_type", "-e", "_ws.malformed", "-e", "_ws.expert").CombinedOutput()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, out)
	}
	types := map[string]int{}
	lines := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "Running as user") {
			continue
		}
		f := strings.Split(line, ";")
		if len(f) < 5 {
			t.Errorf("tshark line %q", line)
			continue
		}
		lines++
		if f[1] != "1" {
			t.Errorf("frame %s: checksum status %q (1 is good)", f[0], f[1])
		}
		if f[3] != "" {
			t.Errorf("frame %s: malformed", f[0])
		}
		for _, ty := range strings.Split(f[2], ",") {
			types[ty]++
		}
	}
	if lines != len(pkts) {
		t.Errorf("tshark decoded %d frames, %d written\n%s", lines, len(pkts), out)
	}
	// Every chunk type the layer sends shows up as SCTP.
	for _, ty := range []int{ctData, ctInit, ctInitAck, ctSack, ctHeartbeat, ctHeartbeatAck, ctAbort, ctShutdown, ctShutdownAck, ctError, ctCookieEcho, ctCookieAck, ctShutdownComplete} {
		if types[strconv.Itoa(ty)] == 0 {
			t.Errorf("chunk type %d never decoded; types seen %v", ty, types)
		}
	}
	// And tshark reads the Adaptation Layer Indication in INIT and INIT ACK.
	ali, err := exec.Command("tshark", "-r", path, "-d", "udp.port==9899,sctp", "-Y", "sctp.parameter_type == 0xc006", "-T", "fields", "-e", "sctp.adaptation_layer_indication").Output()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(ali), "\n"); n < 4 {
		t.Errorf("tshark sees the adaptation indication in %d packets, want at least 4 (INIT and INIT ACK of the association, 2 golden)\n%s", n, ali)
	}
	t.Logf("tshark: %d frames, every checksum good; chunk types %v", lines, types)
}
