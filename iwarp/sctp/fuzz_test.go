package sctp

import (
	"bytes"
	"encoding/binary"
	"net"
	"testing"
	"time"
)

// FuzzParsePacket runs every chunk parser over arbitrary packets and checks
// that what parses re-encodes to the same octets.
func FuzzParsePacket(f *testing.F) {
	f.Add(goldenPacket())
	f.Fuzz(func(t *testing.T, pkt []byte) {
		_, cs, err := parsePacket(pkt, nil)
		if err != nil {
			return
		}
		for _, c := range cs {
			if len(c.Value) > len(pkt) {
				t.Fatal("chunk value longer than the packet")
			}
			switch c.Type {
			case ctData:
				d, err := parseData(c)
				if err != nil {
					continue
				}
				if got := appendData(nil, &d); !bytes.Equal(got[:4+len(c.Value)], append(append([]byte{c.Type, c.Flags}, binary.BigEndian.AppendUint16(nil, uint16(4+len(c.Value)))...), c.Value...)) {
					t.Fatalf("DATA re-encodes differently")
				}
			case ctInit, ctInitAck:
				ic, err := parseInit(c)
				if err != nil {
					continue
				}
				// Encode and parse again: the fields that were read survive.
				again, err := parseInit(chunk{Type: c.Type, Value: appendInit(nil, c.Type, &ic)[4:]})
				if err != nil {
					t.Fatalf("re-encoded INIT does not parse: %v", err)
				}
				if again.Tag != ic.Tag || again.ARwnd != ic.ARwnd || again.OutStreams != ic.OutStreams || again.InStreams != ic.InStreams || again.InitialTSN != ic.InitialTSN || !bytes.Equal(again.Cookie, ic.Cookie) || (again.Adaptation == nil) != (ic.Adaptation == nil) {
					t.Fatalf("INIT fields changed: %+v vs %+v", again, ic)
				}
			case ctSack:
				var s sackChunk
				if parseSack(c, &s) != nil {
					continue
				}
				if got := appendSack(nil, &s); !bytes.Equal(got[4:], c.Value) {
					t.Fatalf("SACK re-encodes differently")
				}
			case ctAbort, ctError:
				causes, err := parseCauses(c)
				if err != nil {
					continue
				}
				for _, x := range causes {
					_ = x.String()
				}
			case ctHeartbeat, ctHeartbeatAck:
				parseHeartbeat(c)
			case ctShutdown:
				parseShutdown(c)
			case ctCookieEcho:
				openCookie(c.Value, []byte("k"))
			}
		}
	})
}

// FuzzCookie: openCookie takes no cookie it did not seal, whatever the
// octets, and opens its own.
func FuzzCookie(f *testing.F) {
	f.Add(goldenCookie())
	f.Fuzz(func(t *testing.T, c []byte) {
		secret := []byte("golden secret, 32 octets long...")
		cs, ok := openCookie(c, secret)
		if !ok {
			return
		}
		// Only a sealed cookie opens: sealing what came out gives the same.
		if again := cs.seal(secret); !bytes.Equal(again, c) {
			t.Fatalf("a cookie opened that is not what sealing its contents gives")
		}
	})
}

// discardConn is a PacketConn that drops what is written and reads
// nothing until closed.
type discardConn struct{ closed chan struct{} }

func (d *discardConn) ReadFrom(b []byte) (int, net.Addr, error) {
	<-d.closed
	return 0, nil, net.ErrClosed
}
func (d *discardConn) WriteTo(b []byte, addr net.Addr) (int, error) { return len(b), nil }
func (d *discardConn) Close() error {
	select {
	case <-d.closed:
	default:
		close(d.closed)
	}
	return nil
}
func (d *discardConn) LocalAddr() net.Addr {
	return &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9899}
}
func (d *discardConn) SetDeadline(time.Time) error      { return nil }
func (d *discardConn) SetReadDeadline(time.Time) error  { return nil }
func (d *discardConn) SetWriteDeadline(time.Time) error { return nil }

// FuzzAssociation feeds arbitrary chunks, with the right tag and CRC32c,
// to an established association: nothing may panic, and what it delivers
// must be whole messages within its window.
func FuzzAssociation(f *testing.F) {
	for _, g := range goldenChunks() {
		f.Add(g.build(nil))
	}
	f.Fuzz(func(t *testing.T, chunks []byte) {
		cfg := fastConfig()
		cfg.ReceiveBuffer = 1 << 16
		e, err := newEndpoint(&discardConn{closed: make(chan struct{})}, cfg, true)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		peer := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2), Port: 9899}
		key := keyOf(peer)
		a := newAssociation(e, key, peer)
		a.fromCookie(&cookieState{LocalTag: 0x55667788, PeerTag: 0x11223344, LocalTSN: 0x20000000, PeerTSN: 7, PeerARwnd: 1 << 16, OutStreams: 4, InStreams: 4, LocalPort: 9899, PeerPort: 9899})
		e.mu.Lock()
		e.assocs[key] = a
		e.mu.Unlock()
		pkt := appendCommonHeader(nil, 9899, 9899, 0x55667788)
		pkt = append(pkt, chunks...)
		sealPacket(pkt)
		e.handle(pkt, key, peer, nil)
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.held > cfg.ReceiveBuffer+65536 || a.held < 0 {
			t.Fatalf("held %d octets", a.held)
		}
		for _, m := range a.readQ {
			if len(m.Data) == 0 || m.Stream >= 4 {
				t.Fatalf("delivered %+v", m)
			}
		}
	})
}
