package sctp

import (
	"encoding/binary"
	"fmt"

	"github.com/openrnic/rnic/iwarp/crc32c"
)

// Chunk types (RFC 9260 3.2; RFC 4960 3.2 has the same values).
const (
	ctData             = 0
	ctInit             = 1
	ctInitAck          = 2
	ctSack             = 3
	ctHeartbeat        = 4
	ctHeartbeatAck     = 5
	ctAbort            = 6
	ctShutdown         = 7
	ctShutdownAck      = 8
	ctError            = 9
	ctCookieEcho       = 10
	ctCookieAck        = 11
	ctShutdownComplete = 14
)

// DATA chunk flags (RFC 9260 3.3.1).
const (
	flagEnd       = 0x01 // E: last fragment of a user message
	flagBegin     = 0x02 // B: first fragment
	flagUnordered = 0x04 // U
	flagImmediate = 0x08 // I (RFC 9260 3.3.1): the receiver should SACK without delay
)

// flagT is the T bit of ABORT and SHUTDOWN COMPLETE (RFC 9260 3.3.7 and
// 3.3.13): the Verification Tag is the one the sender expects, reflected.
const flagT = 0x01

// Parameter types used in INIT and INIT ACK (RFC 9260 3.3.2 and 3.3.3).
const (
	ptHeartbeatInfo      = 1 // inside HEARTBEAT and HEARTBEAT ACK (3.3.5)
	ptIPv4               = 5
	ptIPv6               = 6
	ptStateCookie        = 7
	ptUnrecognized       = 8
	ptCookiePreservative = 9
	ptHostName           = 11
	ptSupportedAddrTypes = 12
	// ptAdaptation is the Adaptation Layer Indication (RFC 5061 4.2.7;
	// ddp-over-sctp draft 5.1): a 32-bit indication, length 8.
	ptAdaptation = 0xC006
)

const (
	commonHeaderLen = 12
	chunkHeaderLen  = 4
	dataHeaderLen   = 16 // chunk header + TSN, stream, SSN, PPID
	initFixedLen    = 20 // chunk header + tag, a_rwnd, OS, MIS, initial TSN
	sackFixedLen    = 16
	// maxPacket is the largest SCTP packet one UDP datagram carries over
	// IPv4 (65535 - 20 - 8).
	maxPacket = 65507
)

// commonHeader is the SCTP common header (RFC 9260 3.1).
type commonHeader struct {
	SrcPort, DstPort uint16
	VTag             uint32
	Checksum         uint32
}

// chunk is one chunk of a received packet; Value aliases the packet and
// excludes the padding.
type chunk struct {
	Type  uint8
	Flags uint8
	Value []byte
}

// ParseError says why a packet, chunk or parameter was refused.
type ParseError struct {
	What   string // "packet", "DATA chunk", "INIT parameter", ...
	Reason string
}

func (e *ParseError) Error() string { return "sctp: malformed " + e.What + ": " + e.Reason }

func parseErr(what, format string, a ...any) error {
	return &ParseError{What: what, Reason: fmt.Sprintf(format, a...)}
}

// checksumOf computes the CRC32c of an SCTP packet with its checksum field
// taken as zero (RFC 9260 6.8 and appendix A), without modifying pkt.
func checksumOf(pkt []byte) uint32 {
	var zero [4]byte
	c := crc32c.Update(0, pkt[:8])
	c = crc32c.Update(c, zero[:])
	return crc32c.Update(c, pkt[12:])
}

// sealPacket writes the CRC32c into a packet built with a zero checksum
// field. RFC 9260 appendix A puts the reflected CRC least significant
// octet first, the order crc32c.PutWire uses for MPA and iSCSI.
func sealPacket(pkt []byte) {
	binary.BigEndian.PutUint32(pkt[8:], 0)
	crc32c.PutWire(pkt[8:], crc32c.Checksum(pkt))
}

// checksumOK reports whether a received packet's CRC32c is right.
func checksumOK(pkt []byte) bool {
	return crc32c.Wire(pkt[8:12]) == checksumOf(pkt)
}

// appendCommonHeader starts a packet with a zero checksum.
func appendCommonHeader(b []byte, src, dst uint16, vtag uint32) []byte {
	b = binary.BigEndian.AppendUint16(b, src)
	b = binary.BigEndian.AppendUint16(b, dst)
	b = binary.BigEndian.AppendUint32(b, vtag)
	return binary.BigEndian.AppendUint32(b, 0)
}

// parsePacket checks the common header and splits the chunks into dst
// (reused). It does not check the CRC (see checksumOK). RFC 9260 3.2: a
// chunk's length excludes its padding; the last chunk's padding may be
// absent. A chunk shorter than its header or running past the packet
// makes the whole packet malformed.
func parsePacket(pkt []byte, dst []chunk) (commonHeader, []chunk, error) {
	var h commonHeader
	if len(pkt) < commonHeaderLen {
		return h, dst, parseErr("packet", "%d octets, shorter than the 12-octet common header", len(pkt))
	}
	h.SrcPort = binary.BigEndian.Uint16(pkt[0:])
	h.DstPort = binary.BigEndian.Uint16(pkt[2:])
	h.VTag = binary.BigEndian.Uint32(pkt[4:])
	h.Checksum = crc32c.Wire(pkt[8:])
	rest := pkt[commonHeaderLen:]
	if len(rest) == 0 {
		return h, dst, parseErr("packet", "no chunks")
	}
	for len(rest) > 0 {
		if len(rest) < chunkHeaderLen {
			return h, dst, parseErr("packet", "%d trailing octets, shorter than a chunk header", len(rest))
		}
		l := int(binary.BigEndian.Uint16(rest[2:]))
		if l < chunkHeaderLen {
			return h, dst, parseErr("chunk", "type %d has length %d, less than its 4-octet header", rest[0], l)
		}
		if l > len(rest) {
			return h, dst, parseErr("chunk", "type %d has length %d, %d octets left in the packet", rest[0], l, len(rest))
		}
		dst = append(dst, chunk{Type: rest[0], Flags: rest[1], Value: rest[chunkHeaderLen:l]})
		padded := (l + 3) &^ 3
		if padded > len(rest) {
			padded = len(rest)
		}
		rest = rest[padded:]
	}
	return h, dst, nil
}

// appendChunk appends a chunk header, value and padding.
func appendChunk(b []byte, typ, flags uint8, value []byte) []byte {
	b = append(b, typ, flags)
	b = binary.BigEndian.AppendUint16(b, uint16(chunkHeaderLen+len(value)))
	b = append(b, value...)
	return pad4(b)
}

func pad4(b []byte) []byte {
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// beginChunk appends a chunk header with a zero length; endChunk fills the
// length in from what was appended since (so without the last parameter's
// padding) and pads. A chunk starts 4-aligned in the buffer.
func beginChunk(b []byte, typ, flags uint8) ([]byte, int) {
	return append(b, typ, flags, 0, 0), len(b)
}

func endChunk(b []byte, start int) []byte {
	binary.BigEndian.PutUint16(b[start+2:], uint16(len(b)-start))
	return pad4(b)
}

// --- DATA (RFC 9260 3.3.1) ---------------------------------------------

type dataChunk struct {
	Flags  uint8
	TSN    uint32
	Stream uint16
	SSN    uint16
	PPID   uint32
	Data   []byte
}

func appendData(b []byte, d *dataChunk) []byte {
	b = append(b, ctData, d.Flags)
	b = binary.BigEndian.AppendUint16(b, uint16(dataHeaderLen+len(d.Data)))
	b = binary.BigEndian.AppendUint32(b, d.TSN)
	b = binary.BigEndian.AppendUint16(b, d.Stream)
	b = binary.BigEndian.AppendUint16(b, d.SSN)
	b = binary.BigEndian.AppendUint32(b, d.PPID)
	b = append(b, d.Data...)
	return pad4(b)
}

// parseData reads a DATA chunk; Data aliases c.Value. A DATA chunk with
// no user data is well formed here: the association answers it with an
// ABORT carrying No User Data (RFC 9260 6.2).
func parseData(c chunk) (dataChunk, error) {
	if len(c.Value) < dataHeaderLen-chunkHeaderLen {
		return dataChunk{}, parseErr("DATA chunk", "%d octets of value, less than the 12 of TSN, stream, SSN and PPID", len(c.Value))
	}
	v := c.Value
	return dataChunk{
		Flags:  c.Flags,
		TSN:    binary.BigEndian.Uint32(v[0:]),
		Stream: binary.BigEndian.Uint16(v[4:]),
		SSN:    binary.BigEndian.Uint16(v[6:]),
		PPID:   binary.BigEndian.Uint32(v[8:]),
		Data:   v[12:],
	}, nil
}

// --- INIT and INIT ACK (RFC 9260 3.3.2, 3.3.3) --------------------------

// param is one TLV parameter; Value aliases the chunk.
type param struct {
	Type  uint16
	Value []byte
}

type initChunk struct {
	Tag          uint32 // Initiate Tag
	ARwnd        uint32
	OutStreams   uint16
	InStreams    uint16 // MIS
	InitialTSN   uint32
	Adaptation   *uint32 // the Adaptation Layer Indication, if present
	Cookie       []byte  // State Cookie (INIT ACK only)
	Preservative uint32  // Cookie Preservative increment in ms (INIT only), 0 if absent
	// Unrecognized holds the parameters this end does not know whose
	// type says to report them (upper bits 01 and 11), whole TLVs with
	// their padding (RFC 9260 3.3.3.1: "copied from the INIT chunk").
	Unrecognized [][]byte
	// Stopped is set when a parameter's upper bits 00 or 01 said to stop
	// processing the chunk's parameters (RFC 9260 3.2.1).
	Stopped bool
}

// appendParam pads what comes before (the previous parameter) and appends
// one TLV unpadded: RFC 9260 3.2 counts the padding of every parameter
// but the last in the chunk's length. endChunk pads the chunk.
func appendParam(b []byte, typ uint16, value []byte) []byte {
	b = pad4(b)
	b = binary.BigEndian.AppendUint16(b, typ)
	b = binary.BigEndian.AppendUint16(b, uint16(4+len(value)))
	return append(b, value...)
}

// appendInit appends an INIT (typ ctInit) or INIT ACK (ctInitAck).
// Parameter order: State Cookie first in INIT ACK, then the Adaptation
// Layer Indication, then the reports of unrecognized parameters.
func appendInit(b []byte, typ uint8, c *initChunk) []byte {
	b, start := beginChunk(b, typ, 0)
	b = binary.BigEndian.AppendUint32(b, c.Tag)
	b = binary.BigEndian.AppendUint32(b, c.ARwnd)
	b = binary.BigEndian.AppendUint16(b, c.OutStreams)
	b = binary.BigEndian.AppendUint16(b, c.InStreams)
	b = binary.BigEndian.AppendUint32(b, c.InitialTSN)
	if typ == ctInitAck {
		b = appendParam(b, ptStateCookie, c.Cookie)
	}
	if c.Preservative != 0 {
		b = appendParam(b, ptCookiePreservative, binary.BigEndian.AppendUint32(nil, c.Preservative))
	}
	if c.Adaptation != nil {
		b = appendParam(b, ptAdaptation, binary.BigEndian.AppendUint32(nil, *c.Adaptation))
	}
	for _, u := range c.Unrecognized {
		b = appendParam(b, ptUnrecognized, u)
	}
	return endChunk(b, start)
}

// parseInit reads an INIT or INIT ACK. It checks the parameter framing
// and the parameters it knows; unknown parameters are handled by their
// upper two bits (RFC 9260 3.2.1).
func parseInit(c chunk) (initChunk, error) {
	what := "INIT chunk"
	if c.Type == ctInitAck {
		what = "INIT ACK chunk"
	}
	var ic initChunk
	if len(c.Value) < initFixedLen-chunkHeaderLen {
		return ic, parseErr(what, "%d octets of value, less than the 16 fixed octets", len(c.Value))
	}
	v := c.Value
	ic.Tag = binary.BigEndian.Uint32(v[0:])
	ic.ARwnd = binary.BigEndian.Uint32(v[4:])
	ic.OutStreams = binary.BigEndian.Uint16(v[8:])
	ic.InStreams = binary.BigEndian.Uint16(v[10:])
	ic.InitialTSN = binary.BigEndian.Uint32(v[12:])
	rest := v[16:]
	for len(rest) > 0 && !ic.Stopped {
		pt, pv, whole, next, err := nextTLV(rest, what, "parameter")
		if err != nil {
			return ic, err
		}
		rest = next
		switch pt {
		case ptStateCookie:
			if c.Type != ctInitAck {
				return ic, parseErr(what, "a State Cookie parameter belongs only in INIT ACK")
			}
			ic.Cookie = pv
		case ptAdaptation:
			if len(pv) != 4 {
				return ic, parseErr(what, "Adaptation Layer Indication of %d octets, not 4", len(pv))
			}
			a := binary.BigEndian.Uint32(pv)
			ic.Adaptation = &a
		case ptCookiePreservative:
			if len(pv) != 4 {
				return ic, parseErr(what, "Cookie Preservative of %d octets, not 4", len(pv))
			}
			ic.Preservative = binary.BigEndian.Uint32(pv)
		case ptIPv4, ptIPv6, ptHostName, ptSupportedAddrTypes, ptUnrecognized:
			// Known and deliberately unused: one address per association
			// (no multi-homing); the UDP source address is the peer's. An
			// INIT ACK's reports of this end's parameters need no action:
			// it sends only the Adaptation Layer Indication and the
			// Cookie Preservative, which a peer may ignore.
		default:
			if pt&0x4000 != 0 {
				ic.Unrecognized = append(ic.Unrecognized, whole)
			}
			if pt&0x8000 == 0 {
				ic.Stopped = true
			}
		}
	}
	if c.Type == ctInitAck && ic.Cookie == nil {
		return ic, &missingParamError{Type: ptStateCookie}
	}
	return ic, nil
}

// missingParamError is an INIT ACK without its State Cookie: RFC 9260
// 3.3.3 answers it with an ABORT carrying Missing Mandatory Parameter.
type missingParamError struct{ Type uint16 }

func (e *missingParamError) Error() string {
	return fmt.Sprintf("sctp: malformed INIT ACK chunk: mandatory parameter %d (State Cookie) missing", e.Type)
}

// --- SACK (RFC 9260 3.3.4) ----------------------------------------------

type gapBlock struct{ Start, End uint16 } // offsets from the Cumulative TSN Ack

type sackChunk struct {
	CumTSN uint32
	ARwnd  uint32
	Gaps   []gapBlock
	Dups   []uint32
}

func appendSack(b []byte, s *sackChunk) []byte {
	b = append(b, ctSack, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(sackFixedLen+4*len(s.Gaps)+4*len(s.Dups)))
	b = binary.BigEndian.AppendUint32(b, s.CumTSN)
	b = binary.BigEndian.AppendUint32(b, s.ARwnd)
	b = binary.BigEndian.AppendUint16(b, uint16(len(s.Gaps)))
	b = binary.BigEndian.AppendUint16(b, uint16(len(s.Dups)))
	for _, g := range s.Gaps {
		b = binary.BigEndian.AppendUint16(b, g.Start)
		b = binary.BigEndian.AppendUint16(b, g.End)
	}
	for _, d := range s.Dups {
		b = binary.BigEndian.AppendUint32(b, d)
	}
	return b
}

// parseSack reads a SACK into s, reusing its slices.
func parseSack(c chunk, s *sackChunk) error {
	v := c.Value
	if len(v) < sackFixedLen-chunkHeaderLen {
		return parseErr("SACK chunk", "%d octets of value, less than the 12 fixed octets", len(v))
	}
	s.CumTSN = binary.BigEndian.Uint32(v[0:])
	s.ARwnd = binary.BigEndian.Uint32(v[4:])
	ng := int(binary.BigEndian.Uint16(v[8:]))
	nd := int(binary.BigEndian.Uint16(v[10:]))
	if len(v) != 12+4*ng+4*nd {
		return parseErr("SACK chunk", "%d gap blocks and %d duplicate TSNs need %d octets of value, it has %d", ng, nd, 12+4*ng+4*nd, len(v))
	}
	s.Gaps = s.Gaps[:0]
	s.Dups = s.Dups[:0]
	p := v[12:]
	for i := 0; i < ng; i++ {
		g := gapBlock{binary.BigEndian.Uint16(p), binary.BigEndian.Uint16(p[2:])}
		if g.Start == 0 || g.End < g.Start {
			return parseErr("SACK chunk", "gap block %d is %d..%d: a block starts after the cumulative TSN and ends at or after its start", i, g.Start, g.End)
		}
		s.Gaps = append(s.Gaps, g)
		p = p[4:]
	}
	for i := 0; i < nd; i++ {
		s.Dups = append(s.Dups, binary.BigEndian.Uint32(p))
		p = p[4:]
	}
	return nil
}

// --- HEARTBEAT, HEARTBEAT ACK (RFC 9260 3.3.5, 3.3.6) -------------------

// appendHeartbeat appends a HEARTBEAT or HEARTBEAT ACK carrying info as
// its Heartbeat Information parameter. The ACK echoes the parameter the
// peer sent, untouched.
func appendHeartbeat(b []byte, typ uint8, info []byte) []byte {
	b, start := beginChunk(b, typ, 0)
	b = appendParam(b, ptHeartbeatInfo, info)
	return endChunk(b, start)
}

// parseHeartbeat returns the Heartbeat Information parameter's value.
func parseHeartbeat(c chunk) ([]byte, error) {
	v := c.Value
	if len(v) < 4 {
		return nil, parseErr("HEARTBEAT chunk", "no Heartbeat Information parameter")
	}
	pt := binary.BigEndian.Uint16(v)
	pl := int(binary.BigEndian.Uint16(v[2:]))
	if pt != ptHeartbeatInfo {
		return nil, parseErr("HEARTBEAT chunk", "parameter type %d, not Heartbeat Information (1)", pt)
	}
	if pl < 4 || pl > len(v) {
		return nil, parseErr("HEARTBEAT chunk", "Heartbeat Information length %d with %d octets", pl, len(v))
	}
	return v[4:pl], nil
}

// --- SHUTDOWN (3.3.8), and the bodiless chunks -----------------------------

func appendShutdown(b []byte, cumTSN uint32) []byte {
	b = append(b, ctShutdown, 0, 0, 8)
	return binary.BigEndian.AppendUint32(b, cumTSN)
}

func parseShutdown(c chunk) (uint32, error) {
	if len(c.Value) != 4 {
		return 0, parseErr("SHUTDOWN chunk", "%d octets of value, not 4", len(c.Value))
	}
	return binary.BigEndian.Uint32(c.Value), nil
}

// appendEmpty appends a chunk that is only its header: SHUTDOWN ACK,
// COOKIE ACK, SHUTDOWN COMPLETE (with flags for its T bit).
func appendEmpty(b []byte, typ, flags uint8) []byte {
	return append(b, typ, flags, 0, 4)
}

// --- Error causes: ABORT (3.3.7), ERROR (3.3.10) ----------------------------

// Error cause codes (RFC 9260 3.3.10).
const (
	CauseInvalidStream          uint16 = 1
	CauseMissingParameter       uint16 = 2
	CauseStaleCookie            uint16 = 3
	CauseOutOfResource          uint16 = 4
	CauseUnresolvableAddress    uint16 = 5
	CauseUnrecognizedChunk      uint16 = 6
	CauseInvalidParameter       uint16 = 7
	CauseUnrecognizedParameters uint16 = 8
	CauseNoUserData             uint16 = 9
	CauseCookieWhileShutdown    uint16 = 10
	CauseRestartNewAddresses    uint16 = 11
	CauseUserInitiatedAbort     uint16 = 12
	CauseProtocolViolation      uint16 = 13
)

// ErrorCause is one error cause of an ABORT or ERROR chunk (RFC 9260
// 3.3.10): its code and the cause-specific information that follows the
// 4-octet cause header.
type ErrorCause struct {
	Code uint16
	Info []byte
}

// UserAbort is the User-Initiated Abort cause (RFC 9260 3.3.10.12) with
// the upper layer's reason.
func UserAbort(reason string) ErrorCause {
	return ErrorCause{Code: CauseUserInitiatedAbort, Info: []byte(reason)}
}

// ProtocolViolation is the Protocol Violation cause (RFC 9260 3.3.10.13)
// with a description.
func ProtocolViolation(what string) ErrorCause {
	return ErrorCause{Code: CauseProtocolViolation, Info: []byte(what)}
}

// CauseName is the RFC's name of an error cause code.
func CauseName(code uint16) string {
	switch code {
	case CauseInvalidStream:
		return "Invalid Stream Identifier"
	case CauseMissingParameter:
		return "Missing Mandatory Parameter"
	case CauseStaleCookie:
		return "Stale Cookie Error"
	case CauseOutOfResource:
		return "Out of Resource"
	case CauseUnresolvableAddress:
		return "Unresolvable Address"
	case CauseUnrecognizedChunk:
		return "Unrecognized Chunk Type"
	case CauseInvalidParameter:
		return "Invalid Mandatory Parameter"
	case CauseUnrecognizedParameters:
		return "Unrecognized Parameters"
	case CauseNoUserData:
		return "No User Data"
	case CauseCookieWhileShutdown:
		return "Cookie Received While Shutting Down"
	case CauseRestartNewAddresses:
		return "Restart of an Association with New Addresses"
	case CauseUserInitiatedAbort:
		return "User-Initiated Abort"
	case CauseProtocolViolation:
		return "Protocol Violation"
	}
	return fmt.Sprintf("error cause %d", code)
}

// String names the cause and shows its information: as text for the
// causes whose information is text, as numbers or octets otherwise.
func (c ErrorCause) String() string {
	s := fmt.Sprintf("%s (%d)", CauseName(c.Code), c.Code)
	switch c.Code {
	case CauseUserInitiatedAbort, CauseProtocolViolation:
		if len(c.Info) > 0 {
			s += ": " + string(c.Info)
		}
	case CauseInvalidStream:
		if len(c.Info) >= 2 {
			s += fmt.Sprintf(": stream %d", binary.BigEndian.Uint16(c.Info))
		}
	case CauseStaleCookie:
		if len(c.Info) >= 4 {
			s += fmt.Sprintf(": %d µs stale", binary.BigEndian.Uint32(c.Info))
		}
	case CauseNoUserData:
		if len(c.Info) >= 4 {
			s += fmt.Sprintf(": TSN %d", binary.BigEndian.Uint32(c.Info))
		}
	case CauseUnrecognizedChunk:
		if len(c.Info) >= 1 {
			s += fmt.Sprintf(": chunk type %d", c.Info[0])
		}
	default:
		if len(c.Info) > 0 {
			s += fmt.Sprintf(": % x", c.Info)
		}
	}
	return s
}

// appendCauses appends error causes, each padded but the last (RFC 9260
// 3.2, 3.3.10), like appendParam.
func appendCauses(b []byte, causes []ErrorCause) []byte {
	for _, c := range causes {
		b = pad4(b)
		b = binary.BigEndian.AppendUint16(b, c.Code)
		b = binary.BigEndian.AppendUint16(b, uint16(4+len(c.Info)))
		b = append(b, c.Info...)
	}
	return b
}

// appendCauseChunk appends an ABORT or ERROR with its causes.
func appendCauseChunk(b []byte, typ, flags uint8, causes []ErrorCause) []byte {
	b, start := beginChunk(b, typ, flags)
	b = appendCauses(b, causes)
	return endChunk(b, start)
}

// parseCauses reads the error causes of an ABORT or ERROR; Info aliases
// the chunk.
func parseCauses(c chunk) ([]ErrorCause, error) {
	what := "ERROR chunk"
	if c.Type == ctAbort {
		what = "ABORT chunk"
	}
	var out []ErrorCause
	rest := c.Value
	for len(rest) > 0 {
		code, info, _, next, err := nextTLV(rest, what, "error cause")
		if err != nil {
			return out, err
		}
		out = append(out, ErrorCause{Code: code, Info: info})
		rest = next
	}
	return out, nil
}

// nextTLV reads one type-length-value item (a parameter, RFC 9260 3.2.1,
// or an error cause, 3.3.10) from b: its type, its value, the item with
// its padding (when the padding is there), and what follows.
func nextTLV(b []byte, what, kind string) (typ uint16, value, whole, rest []byte, err error) {
	if len(b) < 4 {
		return 0, nil, nil, nil, parseErr(what, "%d trailing octets, shorter than the 4-octet %s header", len(b), kind)
	}
	typ = binary.BigEndian.Uint16(b)
	l := int(binary.BigEndian.Uint16(b[2:]))
	if l < 4 || l > len(b) {
		return 0, nil, nil, nil, parseErr(what, "%s %#04x has length %d with %d octets left", kind, typ, l, len(b))
	}
	padded := min((l+3)&^3, len(b))
	return typ, b[4:l], b[:padded], b[padded:], nil
}

// --- TSN serial arithmetic (RFC 9260 1.6, RFC 1982 with SERIAL_BITS 32) ---

func tsnLT(a, b uint32) bool  { return int32(a-b) < 0 }
func tsnLTE(a, b uint32) bool { return int32(a-b) <= 0 }
func tsnGT(a, b uint32) bool  { return int32(a-b) > 0 }
