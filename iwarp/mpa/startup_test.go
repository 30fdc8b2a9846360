package mpa

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

// The Request and Reply frames two Linux siw peers exchanged in
// ../shared/testdata/siw-rping-default.pcap (frames 17 and 19): revision 2,
// Enhanced, no M, no C, PD_Length 4, IRD 1, ORD 1.
const (
	siwRequest = "4d504120494420526571204672616d65" + "10020004" + "00010001"
	siwReply   = "4d504120494420526570204672616d65" + "10020004" + "00010001"
)

func TestParseSiwFrames(t *testing.T) {
	for _, c := range []struct {
		hex   string
		reply bool
	}{{siwRequest, false}, {siwReply, true}} {
		b, _ := hex.DecodeString(c.hex)
		f, n, err := ParseStartupFrame(b, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := StartupFrame{Reply: c.reply, Rev: 2, Enhanced: true, Params: EnhancedParams{IRD: 1, ORD: 1}}
		if n != len(b) || !equalFrames(f, want) {
			t.Fatalf("parsed %+v (%d octets), want %+v (%d)", f, n, want, len(b))
		}
		out, err := f.Append(nil)
		if err != nil || !bytes.Equal(out, b) {
			t.Fatalf("re-encoded % x, want % x (err %v)", out, b, err)
		}
	}
}

func equalFrames(a, b StartupFrame) bool {
	return a.Reply == b.Reply && a.Markers == b.Markers && a.CRC == b.CRC && a.Reject == b.Reject &&
		a.Enhanced == b.Enhanced && a.Rev == b.Rev && a.Params == b.Params && bytes.Equal(a.PrivateData, b.PrivateData)
}

func TestStartupFrameRoundTrip(t *testing.T) {
	frames := []StartupFrame{
		{Rev: 1, Markers: true, CRC: true},
		{Reply: true, Rev: 1, Reject: true, PrivateData: []byte("no thanks")},
		{Rev: 2, Enhanced: true, Params: EnhancedParams{P2P: true, IRD: 128, ORD: MaxIRD, RTR: RTRWrite | RTRRead | RTRSend}, PrivateData: bytes.Repeat([]byte{7}, 508)},
		{Reply: true, Rev: 2, Enhanced: true, Params: EnhancedParams{P2P: true, IRD: 3, ORD: 2, RTR: RTRSend}},
		{Rev: 2, CRC: true, PrivateData: []byte{1, 2, 3}}, // revision 2 without Enhanced: plain private data
		{Rev: 0, Markers: true, CRC: true},
	}
	for i, f := range frames {
		b, err := f.Append(nil)
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		if len(b) != f.Len() {
			t.Fatalf("%d: Len %d, encoded %d", i, f.Len(), len(b))
		}
		g, n, err := ParseStartupFrame(b, 0)
		if err != nil || n != len(b) || !equalFrames(f, g) {
			t.Fatalf("%d: round trip gave %+v, %d, %v; want %+v", i, g, n, err, f)
		}
		// Every strict prefix is incomplete, never an error or a frame.
		for cut := 0; cut < len(b); cut++ {
			if _, _, err := ParseStartupFrame(b[:cut], 0); err != ErrIncomplete {
				t.Fatalf("%d: prefix of %d octets: %v, want ErrIncomplete", i, cut, err)
			}
		}
	}
}

func TestStartupFrameErrors(t *testing.T) {
	good, _ := hex.DecodeString(siwRequest)
	mut := func(f func(b []byte) []byte) []byte { return f(append([]byte{}, good...)) }
	cases := []struct {
		name  string
		b     []byte
		maxPD int
	}{
		{"bad key", mut(func(b []byte) []byte { b[3] = 'X'; return b }), 0},
		{"lower-case key", mut(func(b []byte) []byte { copy(b, "mpa id req frame"); return b }), 0},
		{"PD_Length over 512", mut(func(b []byte) []byte { b[18], b[19] = 0x02, 0x01; return append(b, make([]byte, 600)...) }), 0},
		{"PD_Length over the buffer", mut(func(b []byte) []byte { b[19] = 40; return append(b, make([]byte, 40)...) }), 32},
		{"Enhanced without IRD/ORD", mut(func(b []byte) []byte { b[19] = 2; return b[:22] }), 0},
	}
	for _, c := range cases {
		_, _, err := ParseStartupFrame(c.b, c.maxPD)
		var me *Error
		if !errors.As(err, &me) || me.Code != ErrBadStartupFrame {
			t.Errorf("%s: got %v, want MPA error %d", c.name, err, ErrBadStartupFrame)
		}
	}
	if _, err := (&StartupFrame{PrivateData: make([]byte, 513)}).Append(nil); err == nil {
		t.Error("Append accepted 513 octets of private data")
	}
	if _, err := (&StartupFrame{Rev: 2, Enhanced: true, PrivateData: make([]byte, 509)}).Append(nil); err == nil {
		t.Error("Append accepted 509+4 octets of private data")
	}
}

// tcpPair returns both ends of a real loopback TCP connection.
func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- nil
			return
		}
		done <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-done
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

type outcome struct {
	p   *Params
	err error
}

func startup(t *testing.T, icfg, rcfg Config) (ini, res outcome, ic, rc net.Conn) {
	t.Helper()
	ic, rc = tcpPair(t)
	ctx := context.Background()
	ch := make(chan outcome, 1)
	go func() {
		p, err := Respond(ctx, rc, rcfg)
		ch <- outcome{p, err}
	}()
	p, err := Initiate(ctx, ic, icfg)
	return outcome{p, err}, <-ch, ic, rc
}

func TestNegotiate(t *testing.T) {
	cases := []struct {
		name       string
		ini, res   Config
		iTx, iRx   bool // Initiator's markers on send and receive
		crc        bool
		rev        uint8 // revision each side sees from the other (Responder's view)
		run        uint8 // the revision the connection runs (0: 2)
		iORD, rORD uint16
		p2p        bool
		rtr        RTR
	}{
		{name: "rev2 defaults, CRC on", crc: true, rev: 2},
		{name: "both decline CRC", ini: Config{NoCRC: true}, res: Config{NoCRC: true}, rev: 2},
		{name: "one side wants CRC", ini: Config{NoCRC: true}, crc: true, rev: 2},
		{name: "initiator wants markers", ini: Config{Markers: true}, iRx: true, crc: true, rev: 2},
		{name: "responder wants markers", res: Config{Markers: true}, iTx: true, crc: true, rev: 2},
		{name: "rev1 initiator, rev2 responder", ini: Config{Rev: 1, IRD: 4, ORD: 4}, res: Config{IRD: 8, ORD: 8}, crc: true, rev: 1, run: 1, iORD: 4, rORD: 8},
		{name: "rev2 initiator, rev1 responder", ini: Config{IRD: 4, ORD: 4}, res: Config{Rev: 1, IRD: 8, ORD: 8}, crc: true, rev: 2, run: 1, iORD: 4, rORD: 8},
		{name: "IRD/ORD", ini: Config{IRD: 16, ORD: 8}, res: Config{IRD: 4, ORD: 32}, crc: true, rev: 2, iORD: 4, rORD: 16},
		{name: "p2p write RTR", ini: Config{P2P: true}, res: Config{}, crc: true, rev: 2, p2p: true, rtr: RTRWrite},
		{name: "p2p send RTR", ini: Config{P2P: true, RTR: RTRSend | RTRRead}, res: Config{RTR: RTRSend}, crc: true, rev: 2, p2p: true, rtr: RTRSend},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ini, res, _, _ := startup(t, c.ini, c.res)
			if ini.err != nil || res.err != nil {
				t.Fatalf("initiator: %v, responder: %v", ini.err, res.err)
			}
			ip, rp := ini.p, res.p
			if ip.TxMarkers != c.iTx || ip.RxMarkers != c.iRx || rp.TxMarkers != c.iRx || rp.RxMarkers != c.iTx {
				t.Errorf("markers: initiator tx %v rx %v, responder tx %v rx %v", ip.TxMarkers, ip.RxMarkers, rp.TxMarkers, rp.RxMarkers)
			}
			if ip.CRC != c.crc || rp.CRC != c.crc {
				t.Errorf("CRC: initiator %v responder %v, want %v", ip.CRC, rp.CRC, c.crc)
			}
			if rp.Rev != c.rev || ip.Local.Rev != rp.Rev {
				t.Errorf("revision: responder saw %d, initiator sent %d, want %d", rp.Rev, ip.Local.Rev, c.rev)
			}
			run := c.run
			if run == 0 {
				run = 2
			}
			if ip.Revision() != run || rp.Revision() != run {
				t.Errorf("Revision(): initiator %d responder %d, want %d", ip.Revision(), rp.Revision(), run)
			}
			if ip.ORD != c.iORD || rp.ORD != c.rORD {
				t.Errorf("ORD: initiator %d responder %d, want %d and %d", ip.ORD, rp.ORD, c.iORD, c.rORD)
			}
			if ip.P2P != c.p2p || rp.P2P != c.p2p || ip.RTR != c.rtr || rp.RTR != c.rtr {
				t.Errorf("p2p: initiator %v/%v responder %v/%v, want %v/%v", ip.P2P, ip.RTR, rp.P2P, rp.RTR, c.p2p, c.rtr)
			}
			if ip.DDPVersion != 1 || rp.DDPVersion != 1 {
				t.Errorf("DDP version %d/%d", ip.DDPVersion, rp.DDPVersion)
			}
			if !rp.WaitsForFirstFPDU() || ip.WaitsForFirstFPDU() {
				t.Error("only the Responder waits for the first FPDU (RFC 5044 7.1.3 rule 4)")
			}
		})
	}
}

func TestNegotiateReject(t *testing.T) {
	rcfg := Config{Accept: func(req *StartupFrame) ([]byte, bool) {
		if string(req.PrivateData) != "hello" {
			t.Errorf("Responder saw private data %q", req.PrivateData)
		}
		return []byte("go away"), true
	}}
	ini, res, ic, rc := startup(t, Config{PrivateData: []byte("hello")}, rcfg)
	var ire, rre *RejectError
	if !errors.As(ini.err, &ire) || !errors.As(res.err, &rre) {
		t.Fatalf("initiator %v, responder %v: want RejectError on both", ini.err, res.err)
	}
	if string(ire.Reply.PrivateData) != "go away" || !ire.Reply.Reject {
		t.Errorf("initiator got reply %+v", ire.Reply)
	}
	// RFC 5044 7.1.3 rules 2 and 3: TCP stays open after a rejection.
	if _, err := ic.Write([]byte("still here")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 10)
	if _, err := io.ReadFull(rc, buf); err != nil || string(buf) != "still here" {
		t.Fatalf("connection after reject: %q, %v", buf, err)
	}
}

func TestNegotiateNoMatchingRTR(t *testing.T) {
	ini, res, _, _ := startup(t, Config{P2P: true, RTR: RTRSend}, Config{RTR: RTRRead})
	var ire, rre *RejectError
	if !errors.As(ini.err, &ire) || !errors.As(res.err, &rre) || rre.Code != ErrNoMatchingRTR {
		t.Fatalf("initiator %v, responder %v: want a rejection with code %d", ini.err, res.err, ErrNoMatchingRTR)
	}
}

func wantCode(t *testing.T, who string, err error, code ErrorCode) {
	t.Helper()
	var me *Error
	if !errors.As(err, &me) || me.Code != code {
		t.Errorf("%s: got %v, want MPA error %d (%v)", who, err, code, code)
	}
}

func TestInitiatorInitiator(t *testing.T) {
	a, b := tcpPair(t)
	ch := make(chan error, 1)
	go func() { _, err := Initiate(context.Background(), b, Config{}); ch <- err }()
	_, err := Initiate(context.Background(), a, Config{})
	wantCode(t, "first initiator", err, ErrBadStartupFrame)
	wantCode(t, "second initiator", <-ch, ErrBadStartupFrame)
}

func TestResponderResponderTimesOut(t *testing.T) {
	a, b := tcpPair(t)
	ch := make(chan error, 1)
	cfg := Config{Timeout: 200 * time.Millisecond}
	go func() { _, err := Respond(context.Background(), b, cfg); ch <- err }()
	_, err := Respond(context.Background(), a, cfg)
	wantCode(t, "first responder", err, ErrTCPClosed)
	wantCode(t, "second responder", <-ch, ErrTCPClosed)
}

func TestStartupCancelledByContext(t *testing.T) {
	_, b := tcpPair(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := Respond(ctx, b, Config{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func TestBadReplyClosesConnection(t *testing.T) {
	a, b := tcpPair(t)
	go func() {
		ReadStartupFrame(b, 0)
		b.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
	}()
	_, err := Initiate(context.Background(), a, Config{})
	wantCode(t, "initiator", err, ErrBadStartupFrame)
	// The Initiator closed its end (RFC 5044 7.1.3 rule 3): the peer sees
	// EOF, or a reset because the rest of its junk was never read.
	b.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := b.Read(make([]byte, 1)); err != io.EOF && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("peer read after bad reply: %v, want EOF or reset", err)
	}
}

func TestRevisionZero(t *testing.T) {
	rdmac := Config{Rev: 1}
	// An RDMAC Initiator: simulate by sending a revision 0 Request by hand.
	for _, permissive := range []bool{true, false} {
		a, b := tcpPair(t)
		ch := make(chan outcome, 1)
		go func() {
			p, err := Respond(context.Background(), b, Config{Permissive: permissive})
			ch <- outcome{p, err}
		}()
		req, _ := (&StartupFrame{Rev: 0, Markers: true, CRC: true}).Append(nil)
		a.Write(req)
		rep, err := ReadStartupFrame(a, 0)
		res := <-ch
		if permissive {
			if res.err != nil || res.p.DDPVersion != 0 || !res.p.TxMarkers || !res.p.RxMarkers || !res.p.CRC {
				t.Fatalf("permissive responder: %+v, %v", res.p, res.err)
			}
			if err != nil || rep.Rev != 0 || !rep.Markers || !rep.CRC {
				t.Fatalf("permissive reply %+v, %v: want rev 0 with M and C (appendix C.2.4)", rep, err)
			}
		} else {
			wantCode(t, "non-permissive responder", res.err, ErrBadStartupFrame)
			if err != nil || rep.Rev != 2 {
				t.Fatalf("non-permissive reply %+v, %v: want our own revision (appendix C.2.1)", rep, err)
			}
		}
	}
	// A permissive Initiator facing an RDMAC Responder (appendix C.2.5).
	for _, permissive := range []bool{true, false} {
		a, b := tcpPair(t)
		go func() {
			ReadStartupFrame(b, 0)
			rep, _ := (&StartupFrame{Reply: true, Rev: 0, Markers: true, CRC: true}).Append(nil)
			b.Write(rep)
		}()
		cfg := rdmac
		cfg.Permissive = permissive
		p, err := Initiate(context.Background(), a, cfg)
		if permissive {
			if err != nil || p.DDPVersion != 0 || !p.TxMarkers || !p.RxMarkers || !p.CRC {
				t.Fatalf("permissive initiator: %+v, %v", p, err)
			}
		} else {
			wantCode(t, "non-permissive initiator", err, ErrBadStartupFrame)
		}
	}
}

func TestReadStartupFrameStopsAtFrameEnd(t *testing.T) {
	rep, _ := (&StartupFrame{Reply: true, Rev: 1, PrivateData: []byte("pd")}).Append(nil)
	fpdu := []byte{0x00, 0x02, 0xaa, 0xbb, 1, 2, 3, 4}
	r := bytes.NewReader(append(rep, fpdu...))
	f, err := ReadStartupFrame(r, 0)
	if err != nil || string(f.PrivateData) != "pd" {
		t.Fatalf("%+v, %v", f, err)
	}
	rest, _ := io.ReadAll(r)
	if !bytes.Equal(rest, fpdu) {
		t.Fatalf("octets after the frame: % x, want % x", rest, fpdu)
	}
}

// FuzzParseStartupFrame: any input either fails cleanly or parses to a
// frame that re-encodes to exactly the octets it came from (the reserved
// bits aside, which RFC 5044 7.1.1 says are not checked).
func FuzzParseStartupFrame(f *testing.F) {
	for _, h := range []string{siwRequest, siwReply} {
		b, _ := hex.DecodeString(h)
		f.Add(b, 0)
	}
	b, _ := (&StartupFrame{Reply: true, Rev: 1, Reject: true, Markers: true, PrivateData: []byte("private")}).Append(nil)
	f.Add(b, 16)
	f.Fuzz(func(t *testing.T, b []byte, maxPD int) {
		fr, n, err := ParseStartupFrame(b, maxPD)
		if err != nil {
			var me *Error
			if err != ErrIncomplete && (!errors.As(err, &me) || me.Code != ErrBadStartupFrame) {
				t.Fatalf("unexpected error type %T: %v", err, err)
			}
			return
		}
		if n > len(b) || n != fr.Len() {
			t.Fatalf("consumed %d of %d, Len %d", n, len(b), fr.Len())
		}
		out, err := fr.Append(nil)
		if err != nil {
			t.Fatal(err)
		}
		want := append([]byte{}, b[:n]...)
		want[16] &= flagMarkers | flagCRC | flagReject | flagEnhanced
		if !fr.Reply {
			want[16] &^= flagReject // not checked in a Request
		}
		if fr.Rev < 2 || !fr.Enhanced {
			want[16] &^= flagEnhanced
		}
		if !bytes.Equal(out, want) {
			t.Fatalf("re-encoded\n% x\nwant\n% x", out, want)
		}
	})
}
