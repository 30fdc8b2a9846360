package sctp

import (
	"bytes"
	"context"
	"encoding/binary"
	"testing"
	"time"
)

// TestUnrecognizedChunks injects packets with unknown chunk types ahead of
// a DATA chunk and checks the action of each type's upper two bits (RFC
// 9260 3.2): 00 stop and discard, 01 stop, discard and report, 10 skip,
// 11 skip and report. Reports are ERRORs with Unrecognized Chunk Type.
func TestUnrecognizedChunks(t *testing.T) {
	via, rp := viaRelay(t, nil)
	s, c, _ := pair(t, fastConfig(), fastConfig(), via)
	r := *rp
	ctx := testCtx(t)
	tsn := s.rcvCumSnapshot() + 1
	inject := func(typ uint8, tsn uint32, ppid uint32) {
		b := appendCommonHeader(nil, c.localPort, s.localPort, s.localTag)
		b = appendChunk(b, typ, 0, []byte{0xaa, 0xbb})
		b = appendData(b, &dataChunk{Flags: flagBegin | flagEnd | flagUnordered, TSN: tsn, PPID: ppid, Data: []byte{byte(ppid)}})
		sealPacket(b)
		r.inject(true, b)
	}
	inject(0x3f, tsn, 1)   // 00: the DATA is not processed
	inject(0xbf, tsn, 2)   // 10: skipped, DATA delivered
	inject(0x7f, tsn+1, 3) // 01: not processed, reported
	inject(0xff, tsn+1, 4) // 11: skipped and reported, DATA delivered
	for _, want := range []uint32{2, 4} {
		m, err := s.RecvMsg(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m.PPID != want {
			t.Fatalf("delivered PPID %d, want %d", m.PPID, want)
		}
	}
	// The reports reach the dialer: two ERRORs naming 0x7f and 0xff.
	deadline := time.Now().Add(10 * time.Second)
	var reported []uint8
	for len(reported) < 2 && time.Now().Before(deadline) {
		reported = reported[:0]
		for _, p := range r.packets(false) {
			_, cs, _ := parsePacket(p, nil)
			for _, ch := range cs {
				if ch.Type != ctError {
					continue
				}
				causes, err := parseCauses(ch)
				if err != nil || len(causes) != 1 || causes[0].Code != CauseUnrecognizedChunk {
					t.Fatalf("ERROR causes %v %v", causes, err)
				}
				// The cause carries the whole unrecognized chunk.
				info := causes[0].Info
				if len(info) != 6 || info[2] != 0 || info[3] != 6 || !bytes.Equal(info[4:], []byte{0xaa, 0xbb}) {
					t.Errorf("reported chunk % x", info)
				}
				reported = append(reported, info[0])
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(reported) != 2 || reported[0] != 0x7f || reported[1] != 0xff {
		t.Errorf("reported chunk types % x, want 7f ff", reported)
	}
	if n := c.Stats().ErrorsReceived; n != 2 {
		t.Errorf("dialer counted %d ERRORs, want 2", n)
	}
}

// TestUnrecognizedInitParameters: the listener reports INIT parameters
// whose type has the 0x4000 bit in Unrecognized Parameter parameters of
// its INIT ACK, skips those with 0x8000 set, and stops at one with 0x8000
// clear, so that an Adaptation Layer Indication after it is not seen.
func TestUnrecognizedInitParameters(t *testing.T) {
	ep, pc := listenRaw(t, fastConfig())
	param := func(typ uint16) []byte {
		b := binary.BigEndian.AppendUint16(nil, typ)
		return append(binary.BigEndian.AppendUint16(b, 6), 0xaa, 0xbb, 0, 0)
	}
	ali := []byte{0xc0, 0x06, 0, 8, 0, 0, 0, 1}
	// INIT: fixed part, 0x800c (skip), 0xc00b (skip, report), 0x400d
	// (stop, report), then the ALI, which must not be processed.
	v := binary.BigEndian.AppendUint32(nil, 0x0badcafe)
	v = binary.BigEndian.AppendUint32(v, 65536)
	v = append(v, 0, 4, 0, 4)
	v = binary.BigEndian.AppendUint32(v, 77)
	v = append(v, param(0x800c)...)
	v = append(v, param(0xc00b)...)
	v = append(v, param(0x400d)...)
	v = append(v, ali...)
	b := appendCommonHeader(nil, 5000, ep.Port(), 0)
	b = appendChunk(b, ctInit, 0, v)
	sealPacket(b)
	pc.WriteTo(b, ep.Addr())
	pkt := readPacket(t, pc)
	_, cs, err := parsePacket(pkt, nil)
	if err != nil || cs[0].Type != ctInitAck {
		t.Fatalf("%v %v", cs, err)
	}
	ic, err := parseInit(cs[0])
	if err != nil {
		t.Fatal(err)
	}
	// parseInit skips type 8 as known-unused; read the reports off the
	// raw chunk.
	var reported [][]byte
	rest := cs[0].Value[16:]
	for len(rest) >= 4 {
		pt := binary.BigEndian.Uint16(rest)
		pl := int(binary.BigEndian.Uint16(rest[2:]))
		if pt == ptUnrecognized {
			reported = append(reported, rest[4:pl])
		}
		rest = rest[min((pl+3)&^3, len(rest)):]
	}
	if len(reported) != 2 || !bytes.Equal(reported[0], param(0xc00b)) || !bytes.Equal(reported[1], param(0x400d)) {
		t.Errorf("INIT ACK reports % x, want the 0xc00b and 0x400d parameters with their padding", reported)
	}
	if ic.Adaptation != nil {
		t.Errorf("listener sent an adaptation indication it was not configured with")
	}
	// Finish the handshake: the association's peer has no indication,
	// since the ALI came after a stop-processing parameter.
	echo := appendCommonHeader(nil, 5000, ep.Port(), ic.Tag)
	echo = appendChunk(echo, ctCookieEcho, 0, ic.Cookie)
	sealPacket(echo)
	pc.WriteTo(echo, ep.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	a, err := ep.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p := a.PeerAdaptation(); p != nil {
		t.Errorf("PeerAdaptation %d, want nil: the ALI followed a parameter that stops processing", *p)
	}
	if o, i := a.Streams(); o != 4 || i != 4 {
		t.Errorf("streams %d/%d", o, i)
	}
	ack := readPacket(t, pc)
	if ts := chunkTypes(ack); len(ts) != 1 || ts[0] != ctCookieAck {
		t.Errorf("answer to COOKIE ECHO: chunk types %v", ts)
	}
}

// TestUnrecognizedInitAckParameters: a dialer reports the INIT ACK's
// unknown reportable parameters in an ERROR bundled after its COOKIE ECHO
// (RFC 9260 3.3.3), against a listener played by hand.
func TestUnrecognizedInitAckParameters(t *testing.T) {
	fake := listenUDP(t)
	defer fake.Close()
	cfg := fastConfig()
	cfg.PeerPort = 7000
	type res struct {
		a   *Association
		err error
	}
	done := make(chan res, 1)
	go func() {
		a, err := Dial(testCtx(t), listenUDP(t), fake.LocalAddr(), cfg)
		done <- res{a, err}
	}()
	fake.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 65536)
	n, from, err := fake.ReadFrom(buf)
	if err != nil {
		t.Fatal(err)
	}
	h, cs, err := parsePacket(buf[:n], nil)
	if err != nil || cs[0].Type != ctInit || h.VTag != 0 || h.DstPort != 7000 {
		t.Fatalf("INIT: %v %v %+v", cs, err, h)
	}
	init, _ := parseInit(cs[0])
	unknown := []byte{0xc0, 0x0b, 0, 5, 0x42, 0, 0, 0}
	v := binary.BigEndian.AppendUint32(nil, 0x600df00d)
	v = binary.BigEndian.AppendUint32(v, 65536)
	v = append(v, 0, 2, 0, 2)
	v = binary.BigEndian.AppendUint32(v, 500)
	v = append(v, 0, ptStateCookie, 0, 7, 'a', 'b', 'c', 0)
	v = append(v, unknown...)
	b := appendCommonHeader(nil, 7000, h.SrcPort, init.Tag)
	b = appendChunk(b, ctInitAck, 0, v)
	sealPacket(b)
	fake.WriteTo(b, from)
	n, _, err = fake.ReadFrom(buf)
	if err != nil {
		t.Fatal(err)
	}
	h, cs, err = parsePacket(buf[:n], nil)
	if err != nil || len(cs) != 2 || cs[0].Type != ctCookieEcho || cs[1].Type != ctError || h.VTag != 0x600df00d {
		t.Fatalf("after INIT ACK: %v %v tag %#x, want COOKIE ECHO then ERROR with tag 0x600df00d", cs, err, h.VTag)
	}
	if string(cs[0].Value) != "abc" {
		t.Errorf("cookie echoed %q", cs[0].Value)
	}
	causes, err := parseCauses(cs[1])
	if err != nil || len(causes) != 1 || causes[0].Code != CauseUnrecognizedParameters || !bytes.Equal(causes[0].Info, unknown[:5]) {
		t.Errorf("ERROR causes %+v %v, want Unrecognized Parameters with % x", causes, err, unknown[:5])
	}
	b = appendCommonHeader(nil, 7000, h.SrcPort, init.Tag)
	b = appendEmpty(b, ctCookieAck, 0)
	sealPacket(b)
	fake.WriteTo(b, from)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if o, i := r.a.Streams(); o != 2 || i != 2 {
		t.Errorf("streams %d/%d, want 2/2", o, i)
	}
	r.a.Abort(UserAbort("done"))
}
