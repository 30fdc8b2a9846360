// Package interop runs the project's stack against independent iWARP
// implementations. siw_test.go boots a Debian kernel with Linux soft-iWARP
// (siw) and rdma-core's rping in QEMU (internal/qemuguest) and runs the
// project's rping against it in both roles: MPA revisions 1 and 2, CRC on and
// off, sizes up to 64 KiB, several counts, and negative cases in which siw
// must refuse a Read or a Write outside its buffer with a Terminate.
//
// `make test-interop` (part of `make test`) runs it with -v, so the log shows
// rping's own output from the guest and the verified octets on this side.
package interop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openrnic/rnic/capture"
	"github.com/openrnic/rnic/internal/qemuguest"
	"github.com/openrnic/rnic/internal/siwtrace"
	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/rdmap"
	"github.com/openrnic/rnic/iwarp/verbs"
	"github.com/openrnic/rnic/rping"
)

// rpingCase is one rping session between the guest and this process.
type rpingCase struct {
	name        string
	guestServer bool // rping -s in the guest, our client; else the reverse
	rev         uint8
	noCRC       bool
	size, count int
	emss        int // our FPDU sizing; 0: TCP_MAXSEG of the host socket
	// Negative cases: our server overruns siw's buffer and siw must
	// answer with this Terminate.
	readOverrun, writeOverrun int
	wantLayer                 rdmap.Layer
	wantType, wantCode        uint8
	// siw as Initiator offers revision 2 and closes the connection when
	// our Reply falls back to revision 1 (RFC 6581 lets an Initiator
	// decline the fallback).
	guestRejects bool
	// siw as Responder to a revision 1 Initiator has no IRD/ORD from the
	// startup and takes rdma_accept's, which rping leaves at 0: its RDMA
	// Read fails locally ("post send error") and it disconnects.
	guestCannotRead bool
}

func (c rpingCase) negative() bool { return c.readOverrun > 0 || c.writeOverrun > 0 }

func (c rpingCase) config(verbose *bytes.Buffer) rping.Config {
	return rping.Config{
		Size: c.size, Count: c.count, Validate: true, Verbose: verbose,
		QP:          verbs.QPConfig{MPA: mpa.Config{Rev: c.rev, NoCRC: c.noCRC}, EMSS: c.emss},
		ReadOverrun: c.readOverrun, WriteOverrun: c.writeOverrun,
		// siw's responder misses an FPDU that arrives right after its
		// MPA Reply (docs/interop.md); under QEMU's emulation the window
		// is milliseconds wide.
		StartDelay: 250 * time.Millisecond,
	}
}

var cases = []rpingCase{
	// Our client against siw's rping -s.
	{name: "client-rev2-crc-S64-C5", guestServer: true, rev: 2, size: 64, count: 5},
	{name: "client-rev2-nocrc-S4096-C3", guestServer: true, rev: 2, noCRC: true, size: 4096, count: 3},
	{name: "client-rev2-crc-S65535-C2", guestServer: true, rev: 2, size: 65535, count: 2},
	{name: "client-rev2-nocrc-S9000-C4-emss1448", guestServer: true, rev: 2, noCRC: true, size: 9000, count: 4, emss: 1448},
	{name: "client-rev2-crc-S65535-C2-emss1448", guestServer: true, rev: 2, size: 65535, count: 2, emss: 1448},
	// Revision 1 from our side: siw accepts it and answers in revision 1,
	// but then rping's server cannot issue its RDMA Read.
	{name: "client-rev1-crc-S64-C1", guestServer: true, rev: 1, size: 64, count: 1, guestCannotRead: true},
	{name: "client-rev1-nocrc-S64-C1", guestServer: true, rev: 1, noCRC: true, size: 64, count: 1, guestCannotRead: true},
	// siw's rping -c against our server.
	{name: "server-rev2-crc-S64-C5", rev: 2, size: 64, count: 5},
	{name: "server-rev2-nocrc-S65535-C2", rev: 2, noCRC: true, size: 65535, count: 2},
	{name: "server-rev2-crc-S4096-C3-emss1448", rev: 2, size: 4096, count: 3, emss: 1448},
	{name: "server-rev2-nocrc-S1000-C10", rev: 2, noCRC: true, size: 1000, count: 10},
	// Our server answering siw's revision 2 Request with a revision 1
	// Reply: siw declines the fallback.
	{name: "server-rev1-declined", rev: 1, size: 64, count: 1, guestRejects: true},
	// siw must refuse an RDMA Write past its buffer (RFC 5041 7.2: DDP
	// tagged buffer error, base or bounds violation) ...
	{name: "server-write-overrun", rev: 2, size: 64, count: 1, writeOverrun: 8,
		wantLayer: rdmap.LayerDDP, wantType: rdmap.ETypeTaggedBuffer, wantCode: rdmap.CodeDDPBaseBounds},
	// ... and an RDMA Read Request past it (RFC 5040 7.1: RDMAP remote
	// protection error, base or bounds violation).
	{name: "server-read-overrun", rev: 2, noCRC: true, size: 64, count: 1, readOverrun: 8,
		wantLayer: rdmap.LayerRDMAP, wantType: rdmap.ETypeRemoteProtection, wantCode: rdmap.CodeBaseBounds},
}

// guestScript runs siw's side of every case in order. Server cases start
// rping -s and announce it once its listening socket is in /proc/net/tcp
// (7174 is 0x1C06, state 0A is LISTEN); client cases connect to this
// process's servers at 10.0.2.2.
func guestScript(ports map[string]int) string {
	var b strings.Builder
	b.WriteString("set -u\n")
	b.WriteString("listening() { grep -q ':1C06 00000000:0000 0A' /proc/net/tcp; }\n")
	for _, c := range cases {
		fmt.Fprintf(&b, "echo '@@BEGIN %s@@'\n", c.name)
		if c.guestServer {
			fmt.Fprintf(&b, "timeout 120 rping -s -a %s -p %d -v -S %d & pid=$!\n", qemuguest.GuestIP, rping.DefaultPort, c.size)
			b.WriteString("while ! listening; do sleep 0.05; done\n")
			fmt.Fprintf(&b, "echo '@@LISTENING %s@@'\n", c.name)
			b.WriteString("wait $pid; rc=$?\n")
		} else {
			fmt.Fprintf(&b, "timeout 120 rping -c -a %s -p %d -v -V -S %d -C %d; rc=$?\n", qemuguest.HostIP, ports[c.name], c.size, c.count)
		}
		fmt.Fprintf(&b, "echo \"@@END %s rc=$rc@@\"\n", c.name)
	}
	b.WriteString("dmesg | grep -i siw | tail -n 20\n")
	return b.String()
}

// section returns the guest's output for one case.
func section(out, name string) string {
	begin := "@@BEGIN " + name + "@@"
	i := strings.Index(out, begin)
	if i < 0 {
		return ""
	}
	rest := out[i+len(begin):]
	if j := strings.Index(rest, "@@END "+name+" "); j >= 0 {
		return rest[:j]
	}
	return rest
}

type outcome struct {
	st  *rping.Stats
	err error
	out bytes.Buffer
}

func TestSiwRping(t *testing.T) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	img, err := qemuguest.EnsureLog(ctx, "", testWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("guest image: kernel %s (Debian %s), ready after %v", img.KernelRelease, img.KernelVersion, time.Since(start).Round(time.Millisecond))

	// Our servers listen before the guest boots; each takes one client.
	ports := map[string]int{}
	results := map[string]chan *outcome{}
	for _, c := range cases {
		if c.guestServer {
			continue
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		ports[c.name] = ln.Addr().(*net.TCPAddr).Port
		ch := make(chan *outcome, 1)
		results[c.name] = ch
		go func() {
			o := &outcome{}
			conn, err := ln.Accept()
			if err != nil {
				o.err = err
			} else {
				o.st, o.err = rping.Serve(ctx, nil, conn, c.config(&o.out))
			}
			ch <- o
		}()
	}

	pcap := filepath.Join(outDir(t), "siw-rping.pcap")
	g, err := qemuguest.Start(ctx, img, qemuguest.Options{
		Script:   guestScript(ports),
		Forwards: []qemuguest.Forward{{GuestPort: rping.DefaultPort}},
		Pcap:     pcap,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Kill()
	if err := g.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	wall, uptime := g.ReadyAfter()
	t.Logf("guest ready: siw0 up after %v (guest uptime %v)", wall.Round(time.Millisecond), uptime.Round(time.Millisecond))

	var verified int64
	for _, c := range cases {
		var o *outcome
		if c.guestServer {
			if err := g.WaitFor(ctx, "@@LISTENING "+c.name+"@@"); err != nil {
				t.Fatal(err)
			}
			o = &outcome{}
			conn, err := net.Dial("tcp", g.HostAddr(rping.DefaultPort))
			if err != nil {
				t.Fatal(err)
			}
			o.st, o.err = rping.Client(ctx, nil, conn, c.config(&o.out))
		} else {
			select {
			case o = <-results[c.name]:
			case <-g.Done():
				t.Fatalf("%s: the guest stopped before the case ran:\n%s", c.name, g.ScriptOutput())
			case <-ctx.Done():
				t.Fatal(ctx.Err())
			}
		}
		// The console can deliver the marker line in pieces: wait for
		// all of it.
		if err := g.WaitFor(ctx, "@@END "+c.name+" rc="); err != nil {
			t.Fatal(err)
		}
		out := g.ScriptOutput()
		for deadline := time.Now().Add(10 * time.Second); guestRC(out, c.name) < 0 && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
			out = g.ScriptOutput()
		}
		verified += checkCase(t, c, o, section(out, c.name), guestRC(out, c.name))
	}
	status, err := g.Wait(ctx)
	if err != nil || status != 0 {
		t.Fatalf("guest script: status %d, %v\n%s", status, err, g.ScriptOutput())
	}
	t.Logf("siw's kernel log:\n%s", lastSection(g.ScriptOutput()))
	checkPcap(t, pcap)
	t.Logf("%d cases, %d octets verified on this side; interop wall time %v (image, boot, sessions, pcap checks)",
		len(cases), verified, time.Since(start).Round(time.Millisecond))
}

// checkCase checks one case on both sides and returns the octets verified
// here.
func checkCase(t *testing.T, c rpingCase, o *outcome, guest string, rc int) int64 {
	t.Helper()
	role := "our client vs siw's rping -s"
	guestLine := "server ping data: "
	if !c.guestServer {
		role = "siw's rping -c vs our server"
		guestLine = "ping data: "
	}
	t.Logf("== %s (%s): rev %d, CRC requested %v, size %d, count %d\n--- guest (rping on siw) ---\n%s--- ours ---\n%s", c.name, role, c.rev, !c.noCRC, c.size, c.count, shorten(guest), shorten(o.out.String()))
	if c.guestCannotRead {
		var qe *verbs.QPError
		if !errors.As(o.err, &qe) || qe.Conn == nil || o.st.Rounds != 0 || o.st.Params.Revision() != 1 || o.st.Params.CRC == c.noCRC {
			t.Errorf("%s: %v, %+v; want a revision 1 connection that siw closes before the first round", c.name, o.err, o.st)
		}
		if !strings.Contains(guest, "post send error") {
			t.Errorf("%s: the guest's rping did not fail its RDMA Read", c.name)
		}
		return 0
	}
	if c.guestRejects {
		if o.err != nil || o.st.Rounds != 0 || o.st.Params.Revision() != 1 {
			t.Errorf("%s: %v, %+v; want a revision 1 startup and no round", c.name, o.err, o.st)
		}
		if !strings.Contains(guest, "RDMA_CM_EVENT_REJECTED") {
			t.Errorf("%s: the guest did not report the rejection", c.name)
		}
		return 0
	}
	if c.negative() {
		var qe *verbs.QPError
		if !errors.As(o.err, &qe) || qe.Remote == nil {
			t.Errorf("%s: got %v, want siw's Terminate", c.name, o.err)
			return 0
		}
		// siw 6.1 on x86 writes the Terminate Control in little-endian
		// bitfield order; the stack must still read what it means.
		if r := qe.Remote; r.Layer != c.wantLayer || r.EType != c.wantType || r.Code != c.wantCode || !r.SwappedBitfields {
			t.Errorf("%s: siw sent %v, want layer %v type %d code %#02x", c.name, r, c.wantLayer, c.wantType, c.wantCode)
		}
		t.Logf("%s: as expected, %v", c.name, o.err)
		return 0
	}
	if o.err != nil {
		t.Errorf("%s: %v", c.name, o.err)
		return 0
	}
	want := int64(c.size * c.count)
	if o.st.Rounds != c.count || o.st.Verified != want {
		t.Errorf("%s: %d rounds, %d octets verified; want %d and %d", c.name, o.st.Rounds, o.st.Verified, c.count, want)
	}
	p := o.st.Params
	if p.Revision() != c.rev || p.CRC == c.noCRC || p.TxMarkers || p.RxMarkers {
		t.Errorf("%s: negotiated rev %d, CRC %v, markers %v/%v", c.name, p.Revision(), p.CRC, p.TxMarkers, p.RxMarkers)
	}
	// rping -v on the guest printed every round's data, which is what
	// rping's client generates.
	var wantGuest strings.Builder
	for i := range c.count {
		fmt.Fprintf(&wantGuest, "%s%s\n", guestLine, rping.PingData(i, c.size)[:c.size-1])
	}
	if got := pingLines(guest, guestLine); got != wantGuest.String() {
		t.Errorf("%s: the guest printed\n%s\nwant\n%s", c.name, shorten(got), shorten(wantGuest.String()))
	}
	if rc != 0 {
		t.Errorf("%s: the guest's rping exited with status %d", c.name, rc)
	}
	return o.st.Verified
}

var endRC = regexp.MustCompile(`@@END [^ ]+ rc=(\d+)@@`)

// guestRC returns the exit status the script printed for a case (-1 if
// none).
func guestRC(out, name string) int {
	m := regexp.MustCompile(`@@END ` + regexp.QuoteMeta(name) + ` rc=(\d+)@@`).FindStringSubmatch(out)
	if m == nil {
		return -1
	}
	rc, _ := strconv.Atoi(m[1])
	return rc
}

// pingLines keeps the lines that start with prefix.
func pingLines(out, prefix string) string {
	var b strings.Builder
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimRight(l, "\r")
		if strings.HasPrefix(l, prefix) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func lastSection(out string) string {
	if m := endRC.FindAllStringIndex(out, -1); len(m) > 0 {
		return out[m[len(m)-1][1]:]
	}
	return out
}

// shorten cuts long lines (ping data of up to 64 KiB) for the log.
func shorten(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if len(l) > 110 {
			l = fmt.Sprintf("%s... (%d octets)\n", l[:96], len(strings.TrimRight(l, "\n")))
		}
		b.WriteString(l)
	}
	return b.String()
}

func trunc(s string) string {
	if len(s) > 600 {
		return s[:600] + "..."
	}
	return s
}

// checkPcap reads the guest NIC's capture: every connection's startup
// frames and FPDUs must decode through the stack, CRCs checked where they
// were negotiated, and tshark (when installed) must decode DDP/RDMAP
// segments with no bad CRC.
func checkPcap(t *testing.T, path string) {
	t.Helper()
	convs, err := capture.ReadTCPStreams(path)
	if err != nil {
		t.Fatalf("pcap: %v", err)
	}
	// Every connection in the capture is one of the rping sessions.
	var fpdus, crcChecked, conns int
	for _, cv := range convs {
		tr, err := siwtrace.Decode(cv)
		if err != nil {
			t.Errorf("pcap %v: %v", cv, err)
			continue
		}
		conns++
		fpdus += len(tr.FPDUs)
		if tr.CRC {
			crcChecked += len(tr.FPDUs)
		}
	}
	want := len(cases)
	if conns != want {
		t.Errorf("pcap: %d MPA connections, want %d", conns, want)
	}
	t.Logf("pcap %s: %d MPA connections, %d FPDUs decoded by the stack, %d of them with their CRC checked", path, conns, fpdus, crcChecked)
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Fatalf("tshark not found: scripts/deps.sh (run by make) installs it")
	}
	out, err := exec.Command("tshark", "-r", path, "-V").CombinedOutput()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, trunc(string(out)))
	}
	good, bad := bytes.Count(out, []byte("Good CRC32")), bytes.Count(out, []byte("Bad CRC32"))
	list, err := exec.Command("tshark", "-r", path, "-Y", "iwarp_ddp_rdmap").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	segs := bytes.Count(list, []byte("\n"))
	t.Logf("tshark: %d packets with DDP/RDMAP segments, %d good CRC32, %d bad", segs, good, bad)
	if bad != 0 || good == 0 || segs == 0 {
		t.Errorf("tshark reads %d DDP/RDMAP packets, %d bad and %d good CRC32 in %s", segs, bad, good, path)
	}
}

// outDir is where the interop run leaves its pcap: build/interop/ in the
// repository, kept after the test for Wireshark.
func outDir(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	d := filepath.Join(filepath.Dir(wd), "build", "interop")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
