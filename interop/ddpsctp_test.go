package interop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openrnic/rnic/internal/qemuguest"
	"github.com/openrnic/rnic/iwarp/ddpsctp"
	"github.com/openrnic/rnic/iwarp/sctp"
)

// DDP over SCTP against the Linux kernel's SCTP (sctp.ko in the guest,
// with its RFC 6951 UDP encapsulation): interop/sctppeer in the guest
// speaks the DDP/SCTP adaptation layer from the draft over a kernel SCTP
// socket; this side is the project's ddpsctp on the userspace association
// of iwarp/sctp. One guest boot, three phases (sctppeer's doc): sessions
// accepted and rejected each way, DDP segments of several sizes both ways,
// the Adaptation Layer Indication seen on both sides, an association
// without it aborted. The guest NIC's capture must decode as SCTP with
// every CRC32c good.

const (
	guestSCTPPort = 5000 // sctppeer's listening SCTP port (phase A)
	hostSCTPPort  = 5001 // ours, for phases B and C
	// guestUDPPort is the guest kernel's encapsulation port
	// (net.sctp.udp_port): RFC 6951's 9899.
	guestUDPPort = sctp.DefaultUDPPort
)

// buildSCTPPeer builds interop/sctppeer static for the guest.
func buildSCTPPeer(t *testing.T) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "sctppeer")
	cmd := exec.Command("go", "build", "-o", out, "./sctppeer")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building sctppeer: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestLinuxSCTP(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	img, err := qemuguest.EnsureLog(ctx, "", testWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	peer := buildSCTPPeer(t)

	// Our listener for the guest's associations (phases B, C), up
	// before the guest boots: its UDP port is the guest's encap_port.
	scfg := sctp.Config{Port: hostSCTPPort, RTOInitial: 300 * time.Millisecond, RTOMin: 100 * time.Millisecond}
	ln, err := ddpsctp.Listen("127.0.0.1:0", scfg, ddpsctp.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := strings.Cut(ln.Addr().String(), ":")

	pcap := filepath.Join(outDir(t), "linux-sctp.pcap")
	script := strings.Join([]string{
		"chmod 755 /root/sctppeer",
		"modprobe sctp || exit 10",
		fmt.Sprintf("echo %d > /proc/sys/net/sctp/udp_port || exit 11", guestUDPPort),
		fmt.Sprintf("echo %s > /proc/sys/net/sctp/encap_port || exit 12", port),
		fmt.Sprintf("/root/sctppeer -listen %d -connect %s:%d", guestSCTPPort, qemuguest.HostIP, hostSCTPPort),
	}, "\n")
	g, err := qemuguest.Start(ctx, img, qemuguest.Options{
		Script:   script,
		Files:    map[string][]byte{"/root/sctppeer": append([]byte(nil), peer...)},
		Forwards: []qemuguest.Forward{{GuestPort: guestUDPPort, UDP: true}},
		Pcap:     pcap,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Kill()
	if err := g.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if err := g.WaitFor(ctx, "SCTPPEER-LISTENING"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()

	// Phase A: we are the active side, over the UDP forward to the
	// guest's port 9899.
	dcfg := scfg
	dcfg.Port, dcfg.PeerPort = 0, guestSCTPPort
	c, err := ddpsctp.Dial(ctx, g.HostAddr(guestUDPPort), dcfg, ddpsctp.Config{})
	if err != nil {
		t.Fatalf("phase A: association with the guest kernel: %v\n%s", err, g.ScriptOutput())
	}
	var re *ddpsctp.RejectError
	if _, err := c.Initiate(ctx, 1, []byte("reject me")); !errors.As(err, &re) || string(re.PrivateData) != "no thanks" {
		t.Fatalf("phase A: Initiate on stream 1: %v, want the guest's Reject", err)
	}
	s, err := c.Initiate(ctx, 2, []byte("hello"))
	if err != nil {
		t.Fatalf("phase A: Initiate on stream 2: %v", err)
	}
	if string(s.PeerPrivateData()) != "welcome" {
		t.Fatalf("phase A: Accept private data %q", s.PeerPrivateData())
	}
	sizes := []int{1, 100, 515, 516, 1000, s.MULPDU()}
	for i, n := range sizes {
		if err := s.Send(ctx, bytes.Repeat([]byte{byte(i + 1)}, n)); err != nil {
			t.Fatal(err)
		}
	}
	for i, n := range sizes {
		seg, err := s.Receive(ctx)
		if err != nil || !bytes.Equal(seg, bytes.Repeat([]byte{byte(i + 1)}, n)) {
			t.Fatalf("phase A: echo %d of %d octets: %d octets, %v", i, n, len(seg), err)
		}
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Receive(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("phase A: after our Terminate: %v, want the guest's Terminate", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("phase A: SHUTDOWN: %v", err)
	}
	t.Logf("phase A: the guest rejected stream 1 and echoed %v octets on stream 2 (MULPDU %d)", sizes, s.MULPDU())

	// Phase B: the guest is the active side.
	c, err = ln.Accept(ctx)
	if err != nil {
		t.Fatalf("phase B: %v\n%s", err, g.ScriptOutput())
	}
	r, err := c.Listen(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.Stream() != 3 || string(r.PrivateData()) != "guest" {
		t.Fatalf("phase B: request on stream %d with %q", r.Stream(), r.PrivateData())
	}
	s, err = r.Accept(ctx, []byte("host"))
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for {
		seg, err := s.Receive(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("phase B: %v", err)
		}
		got = append(got, len(seg))
		if err := s.Send(ctx, seg); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if r, err = c.Listen(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.Reject(ctx, []byte("not this one")); err != nil {
		t.Fatal(err)
	}
	t.Logf("phase B: echoed the guest's segments of %v octets, rejected its session on stream %d", got, r.Stream())

	// Phase C: the guest's association without the indication is
	// refused here and aborted.
	var ae *ddpsctp.AdaptationError
	if _, err := ln.Accept(ctx); !errors.As(err, &ae) || ae.Present {
		t.Fatalf("phase C: %v, want an AdaptationError for a missing indication", err)
	} else {
		t.Logf("phase C: %v", err)
	}

	status, err := g.Wait(ctx)
	out := g.ScriptOutput()
	t.Logf("guest (%v after it was ready):\n%s", time.Since(start).Round(time.Millisecond), out)
	if err != nil || status != 0 {
		t.Fatalf("guest: status %d, %v", status, err)
	}
	for _, want := range []string{
		"A: peer's adaptation layer indication 1 (DDP)",
		"B: peer's adaptation layer indication 1 (DDP)",
		"B: the host rejected the session on stream 4 (\"not this one\")",
		"C: without the indication the host ended the association",
		"SCTPPEER-OK",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("guest output lacks %q", want)
		}
	}
	checkSCTPPcap(t, pcap)
}

// checkSCTPPcap has tshark decode the capture as SCTP over UDP port 9899
// and checks every packet's CRC32c, the indications in INIT and INIT ACK,
// and the adaptation layer's unordered DATA chunks.
func checkSCTPPcap(t *testing.T, path string) {
	t.Helper()
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Fatalf("tshark not found: scripts/deps.sh (run by make) installs it")
	}
	out, err := exec.Command("tshark", "-r", path, "-d", fmt.Sprintf("udp.port==%d,sctp", guestUDPPort),
		"-o", "sctp.checksum:CRC-32C", "-T", "fields", "-E", "separator=;",
		"-e", "sctp.checksum.status", "-e", "sctp.chunk_type", "-e", "sctp.adaptation_layer_indication",
		"-e", "sctp.data_u_bit", "-e", "sctp.data_payload_proto_id").CombinedOutput()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, out)
	}
	var packets, good int
	counts := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, ";")
		if len(f) < 5 || f[0] == "" {
			continue
		}
		packets++
		// Field 0 is the checksum status: Wireshark's Good is 1 (0 Bad,
		// 2 Unverified).
		if f[0] == "1" {
			good++
		}
		for _, ct := range strings.Split(f[1], ",") {
			counts["chunk "+ct]++
		}
		for _, ind := range strings.Split(f[2], ",") {
			if v, err := strconv.ParseUint(ind, 0, 32); err == nil && v == 1 {
				counts["adaptation"]++ // parameter 0xC006 with DDP's 1
			}
		}
		for _, u := range strings.Split(f[3], ",") {
			if u != "" {
				counts["u="+u]++
			}
		}
		for _, p := range strings.Split(f[4], ",") {
			if p != "" {
				counts["ppid "+p]++
			}
		}
	}
	t.Logf("tshark: %d SCTP packets, %d with a good CRC32c; %v", packets, good, counts)
	switch {
	case packets == 0:
		t.Errorf("tshark decodes no SCTP in %s", path)
	case good != packets:
		t.Errorf("%d of %d SCTP packets in %s without a good CRC32c", packets-good, packets, path)
	}
	if counts["chunk 1"] < 3 || counts["chunk 2"] < 3 {
		t.Errorf("want the INIT and INIT ACK of three associations, got %d and %d", counts["chunk 1"], counts["chunk 2"])
	}
	if counts["adaptation"] < 5 {
		t.Errorf("want the Adaptation Layer Indication 1 in 5 INIT or INIT ACK chunks (all but phase C's INIT), got %d", counts["adaptation"])
	}
	if counts["u=0"] != 0 || counts["u=1"] == 0 {
		t.Errorf("DATA chunks: %d ordered, %d unordered; the adaptation layer sends unordered only", counts["u=0"], counts["u=1"])
	}
	if counts["ppid 16"] == 0 || counts["ppid 17"] == 0 {
		t.Errorf("DATA chunks with PPID 0x10: %d, 0x11: %d; want both", counts["ppid 16"], counts["ppid 17"])
	}
}
