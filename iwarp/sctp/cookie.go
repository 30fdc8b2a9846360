package sctp

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"time"
)

// cookieState is what an INIT ACK's State Cookie carries so that the
// listener keeps no state until the COOKIE ECHO comes back (RFC 9260
// 5.1.3): everything the association's Transmission Control Block needs,
// the creation time and the lifetime. It is authenticated with
// HMAC-SHA-256 under the endpoint's secret (RFC 9260 5.1.3 asks for a
// MAC over the cookie with a secret key that the endpoint changes from
// time to time; the secret here lives as long as the Endpoint).
type cookieState struct {
	Created        time.Time
	Lifetime       time.Duration
	LocalTag       uint32 // the listener's Initiate Tag (from its INIT ACK)
	PeerTag        uint32 // the dialer's Initiate Tag (from its INIT)
	LocalTSN       uint32 // the listener's initial TSN
	PeerTSN        uint32 // the dialer's initial TSN
	PeerARwnd      uint32
	OutStreams     uint16 // negotiated: min(our OS, peer's MIS)
	InStreams      uint16 // negotiated: min(peer's OS, our MIS)
	PeerAdaptation *uint32
	LocalPort      uint16
	PeerPort       uint16
	PeerAddr       string // the UDP address the INIT came from
}

const (
	cookieVersion = 1
	cookieFixed   = 1 + 1 + 8 + 8 + 4*6 + 2*4 + 1
	cookieMACLen  = sha256.Size
)

func (s *cookieState) seal(secret []byte) []byte {
	b := make([]byte, 0, cookieFixed+len(s.PeerAddr)+cookieMACLen)
	var flags byte
	var adapt uint32
	if s.PeerAdaptation != nil {
		flags |= 1
		adapt = *s.PeerAdaptation
	}
	addr := s.PeerAddr
	if len(addr) > 255 {
		addr = addr[:255]
	}
	b = append(b, cookieVersion, flags)
	b = binary.BigEndian.AppendUint64(b, uint64(s.Created.UnixNano()))
	b = binary.BigEndian.AppendUint64(b, uint64(s.Lifetime))
	b = binary.BigEndian.AppendUint32(b, s.LocalTag)
	b = binary.BigEndian.AppendUint32(b, s.PeerTag)
	b = binary.BigEndian.AppendUint32(b, s.LocalTSN)
	b = binary.BigEndian.AppendUint32(b, s.PeerTSN)
	b = binary.BigEndian.AppendUint32(b, s.PeerARwnd)
	b = binary.BigEndian.AppendUint32(b, adapt)
	b = binary.BigEndian.AppendUint16(b, s.OutStreams)
	b = binary.BigEndian.AppendUint16(b, s.InStreams)
	b = binary.BigEndian.AppendUint16(b, s.LocalPort)
	b = binary.BigEndian.AppendUint16(b, s.PeerPort)
	b = append(b, byte(len(addr)))
	b = append(b, addr...)
	m := hmac.New(sha256.New, secret)
	m.Write(b)
	return m.Sum(b)
}

// openCookie checks the MAC and decodes. It returns false for a cookie
// that is malformed or not ours: RFC 9260 5.1.5 step 2 discards those
// silently. Staleness is the caller's check (it answers with an ERROR).
func openCookie(c, secret []byte) (cookieState, bool) {
	var s cookieState
	if len(c) < cookieFixed+cookieMACLen {
		return s, false
	}
	body, mac := c[:len(c)-cookieMACLen], c[len(c)-cookieMACLen:]
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	if !hmac.Equal(m.Sum(nil), mac) {
		return s, false
	}
	if body[0] != cookieVersion || int(body[cookieFixed-1]) != len(body)-cookieFixed {
		return s, false
	}
	p := body[2:]
	s.Created = time.Unix(0, int64(binary.BigEndian.Uint64(p)))
	s.Lifetime = time.Duration(binary.BigEndian.Uint64(p[8:]))
	s.LocalTag = binary.BigEndian.Uint32(p[16:])
	s.PeerTag = binary.BigEndian.Uint32(p[20:])
	s.LocalTSN = binary.BigEndian.Uint32(p[24:])
	s.PeerTSN = binary.BigEndian.Uint32(p[28:])
	s.PeerARwnd = binary.BigEndian.Uint32(p[32:])
	if body[1]&1 != 0 {
		a := binary.BigEndian.Uint32(p[36:])
		s.PeerAdaptation = &a
	}
	s.OutStreams = binary.BigEndian.Uint16(p[40:])
	s.InStreams = binary.BigEndian.Uint16(p[42:])
	s.LocalPort = binary.BigEndian.Uint16(p[44:])
	s.PeerPort = binary.BigEndian.Uint16(p[46:])
	s.PeerAddr = string(body[cookieFixed:])
	return s, true
}
