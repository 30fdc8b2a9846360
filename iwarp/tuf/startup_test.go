package tuf

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestStartupExchange(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	type res struct {
		f   StartupFrame
		err error
	}
	done := make(chan res, 1)
	go func() {
		req, err := Respond(ctx, b, func(req StartupFrame) StartupFrame {
			return StartupFrame{Key: 0x222222222222, PrivateData: []byte("reply pd")}
		})
		done <- res{req, err}
	}()
	reply, err := Initiate(ctx, a, StartupFrame{Key: 0x111111111111, PrivateData: []byte("request pd")})
	if err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if reply.Key != 0x222222222222 || string(reply.PrivateData) != "reply pd" {
		t.Errorf("Reply %+v", reply)
	}
	if r.f.Key != 0x111111111111 || string(r.f.PrivateData) != "request pd" {
		t.Errorf("Request %+v", r.f)
	}
}

func TestStartupReject(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	ctx := context.Background()
	done := make(chan error, 1)
	go func() {
		_, err := Respond(ctx, b, func(StartupFrame) StartupFrame {
			return StartupFrame{Reject: true, PrivateData: []byte("no")}
		})
		done <- err
	}()
	_, err := Initiate(ctx, a, StartupFrame{Key: 1})
	var re *RejectError
	if !errors.As(err, &re) || string(re.Reply.PrivateData) != "no" {
		t.Fatalf("Initiate after a reject: %v", err)
	}
	if err := <-done; !errors.As(err, &re) {
		t.Fatalf("Respond after its reject: %v", err)
	}
}

// tcpPair returns both ends of a loopback TCP connection (buffered, unlike
// net.Pipe: both ends may write before either reads).
func tcpPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	return a, b
}

// Two Initiators: each reads the other's Request where a Reply belongs.
func TestStartupWrongRole(t *testing.T) {
	a, b := tcpPair(t)
	defer a.Close()
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := Initiate(ctx, b, StartupFrame{Key: 2}); done <- err }()
	_, err := Initiate(ctx, a, StartupFrame{Key: 1})
	if !errors.Is(err, ErrBadStartup) {
		t.Fatalf("two Initiators: %v", err)
	}
	if err := <-done; !errors.Is(err, ErrBadStartup) {
		t.Fatalf("two Initiators, the other: %v", err)
	}
}

func TestStartupCancelled(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go func() { buf := make([]byte, 64); b.Read(buf) }() // takes the Request, never answers
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := Initiate(ctx, a, StartupFrame{Key: 1}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled startup: %v", err)
	}
}

func TestParseStartupHeader(t *testing.T) {
	good, _ := appendStartup(nil, kindReply, StartupFrame{Key: 0xa1b2c3d4e5f6, Reject: true, PrivateData: []byte("x")})
	if f, n, err := ParseStartupHeader(good, "REP"); err != nil || f.Key != 0xa1b2c3d4e5f6 || !f.Reject || n != 1 {
		t.Fatalf("Reply: %+v %d %v", f, n, err)
	}
	for _, c := range []struct {
		name string
		edit func(b []byte) []byte
		kind string
	}{
		{"short", func(b []byte) []byte { return b[:25] }, "REP"},
		{"other kind", func(b []byte) []byte { return b }, "REQ"},
		{"packing asked for", func(b []byte) []byte { b[22] |= flagPack; return b }, "REP"},
		{"reserved flag", func(b []byte) []byte { b[22] |= 0x80; return b }, "REP"},
		{"reserved octet", func(b []byte) []byte { b[23] = 1; return b }, "REP"},
		{"reject in a Request", func(b []byte) []byte { copy(b, kindRequest); return b }, "REQ"},
		{"private data too long", func(b []byte) []byte { b[24], b[25] = 0x02, 0x01; return b }, "REP"},
	} {
		if _, _, err := ParseStartupHeader(c.edit(bytes.Clone(good)), c.kind); !errors.Is(err, ErrBadStartup) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if _, err := appendStartup(nil, kindRequest, StartupFrame{PrivateData: make([]byte, MaxPrivateData+1)}); err == nil {
		t.Error("513 octets of private data framed")
	}
}

// The startup frames, byte for byte (golden files; the layout is in
// startup.go and docs/tuf.md).
func TestGoldenStartup(t *testing.T) {
	frames := map[string][]byte{}
	frames["startup_req"], _ = appendStartup(nil, kindRequest, StartupFrame{Key: goldenKey, PrivateData: []byte{0, 16, 0, 16}})
	frames["startup_rep"], _ = appendStartup(nil, kindReply, StartupFrame{Key: 0x0a0b0c0d0e0f})
	frames["startup_ack"], _ = appendStartup(nil, kindAck, StartupFrame{})
	byHand := map[string][]byte{
		"startup_req": append([]byte("TUF-DDP-REQ-v001\xa1\xb2\xc3\xd4\xe5\xf6\x00\x00\x00\x04"), 0, 16, 0, 16),
		"startup_rep": []byte("TUF-DDP-REP-v001\x0a\x0b\x0c\x0d\x0e\x0f\x00\x00\x00\x00"),
		"startup_ack": []byte("TUF-DDP-ACK-v001\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"),
	}
	for name, got := range frames {
		var b bytes.Buffer
		b.WriteString("# " + name + ": kind (16) | key (6) | flags | reserved | private data length (2) | private data\n")
		b.WriteString("# segment 1/1\n")
		hexLines(&b, got)
		path := filepath.Join("testdata", "golden", name+".hex")
		if *update {
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update to create it)", err)
		}
		if !bytes.Equal(b.Bytes(), want) {
			t.Errorf("%s differs:\n%s", path, b.Bytes())
		}
		if segs := readGolden(t, name); len(segs) != 1 || !bytes.Equal(segs[0], byHand[name]) {
			t.Errorf("%s: not the layout worked out by hand", path)
		}
	}
}
