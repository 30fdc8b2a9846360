package tuf

import (
	"errors"
	"fmt"

	"github.com/openrnic/rnic/iwarp/crc32c"
)

// ErrTooLong is returned (wrapped) for a ULPDU that does not fit in an
// EMSS-sized FPDU while oversized ULPDUs are reported (the draft's
// EMSGSIZE, appendix A.3), or that no FPDU can frame (Length is 16 bits).
var ErrTooLong = errors.New("tuf: ULPDU too long")

// Config is one direction of a TUF connection as the sender sees it: the
// parameters the draft requires both peers to have established before TUF
// is enabled (4.3: the key and the packing mode) and the current EMSS.
type Config struct {
	Key  Key
	EMSS int
	// Pack puts as many whole ULPDUs into one FPDU as fit in EMSS (4.1.2,
	// the default there); false is the draft's no-packing mode, one ULPDU
	// an FPDU. DDP over TUF runs without packing: the FPDU's Length is
	// then the length of the one DDP segment it holds, which DDP needs
	// from its lower layer (DDP draft section 3, requirement 7), and DDP
	// segments carry no length of their own to unpack them by.
	Pack bool
	// Oversized lets a ULPDU longer than MaxULPDU(EMSS) through: its FPDU
	// is then cut into several TCP segments (5.2.5) instead of being
	// refused with ErrTooLong (appendix A.6).
	Oversized bool
}

// AppendFPDU appends one FPDU framing ulpdus back to back (header,
// ULPDUs, CRC32c trailer over both) to dst.
func AppendFPDU(dst []byte, key Key, ulpdus ...[]byte) ([]byte, error) {
	n := 0
	for _, u := range ulpdus {
		n += len(u)
	}
	if n > MaxULPDUs {
		return dst, fmt.Errorf("%w: %d octets in one FPDU, the Length field holds at most %d with the trailer",
			ErrTooLong, n, MaxULPDUs)
	}
	start := len(dst)
	dst = Header{Length: uint16(n + CRCLen), Key: key}.Append(dst)
	for _, u := range ulpdus {
		dst = append(dst, u...)
	}
	return crc32c.AppendWire(dst, crc32c.Checksum(dst[start:])), nil
}

// Sender frames ULPDUs and cuts the stream into TCP segment payloads as a
// TUF-conforming TCP sender must (4.2): every FPDU starts a segment.
type Sender struct {
	cfg Config
	off uint64 // stream offset of the next octet
}

// NewSender checks cfg and returns a Sender at stream offset 0.
func NewSender(cfg Config) (*Sender, error) {
	if cfg.EMSS < MinEMSS {
		return nil, fmt.Errorf("tuf: EMSS %d is below %d (header, trailer and one octet)", cfg.EMSS, MinEMSS)
	}
	return &Sender{cfg: cfg}, nil
}

// MULPDU is the draft's MULPDU for the Sender's EMSS (4.1.2).
func (s *Sender) MULPDU() int { return MULPDU(s.cfg.EMSS) }

// MaxULPDU is the largest ULPDU the Sender takes without cutting an FPDU.
func (s *Sender) MaxULPDU() int { return MaxULPDU(s.cfg.EMSS) }

// Offset is the stream offset of the next octet the Sender emits.
func (s *Sender) Offset() uint64 { return s.off }

// SetEMSS changes the EMSS (a PMTU change, 5.2.2 and 5.2.3); FPDUs already
// returned are not cut again (DDP draft section 3, requirement 2).
func (s *Sender) SetEMSS(emss int) error {
	if emss < MinEMSS {
		return fmt.Errorf("tuf: EMSS %d is below %d", emss, MinEMSS)
	}
	s.cfg.EMSS = emss
	return nil
}

// Segments frames ulpdus in order and appends the TCP segment payloads
// they go out in to dst. With packing, consecutive ULPDUs share an FPDU
// while it stays within EMSS; without, each ULPDU has its own. Each FPDU
// up to EMSS octets is one segment. An FPDU longer than EMSS (Oversized)
// is cut into segments of at most EMSS octets, none of which passes the
// containment test (5.2.2, 5.2.4: "guaranteed not to give a false-positive
// indication"): the first is shorter than its Length says, and a later one
// that would look like a whole FPDU with the key is cut one octet shorter.
// An empty ULPDU gets an FPDU of its own like any other. On an error
// nothing is appended and the Sender does not move.
func (s *Sender) Segments(dst [][]byte, ulpdus [][]byte) ([][]byte, error) {
	limit := s.MaxULPDU()
	for i, u := range ulpdus {
		if len(u) > MaxULPDUs || (len(u) > limit && !s.cfg.Oversized) {
			return dst, fmt.Errorf("%w: ULPDU %d has %d octets, MULPDU %d leaves room for %d (EMSS %d)",
				ErrTooLong, i, len(u), s.MULPDU(), limit, s.cfg.EMSS)
		}
	}
	for i := 0; i < len(ulpdus); {
		j, n := i+1, len(ulpdus[i])
		for s.cfg.Pack && j < len(ulpdus) && n+len(ulpdus[j]) <= limit {
			n += len(ulpdus[j])
			j++
		}
		fpdu, _ := AppendFPDU(make([]byte, 0, n+Overhead), s.cfg.Key, ulpdus[i:j]...)
		dst = s.cut(dst, fpdu)
		i = j
	}
	return dst, nil
}

// cut appends fpdu as one segment, or as several of at most EMSS octets.
func (s *Sender) cut(dst [][]byte, fpdu []byte) [][]byte {
	s.off += uint64(len(fpdu))
	emss := s.cfg.EMSS
	if len(fpdu) <= emss {
		return append(dst, fpdu)
	}
	for off := 0; off < len(fpdu); {
		n := min(emss, len(fpdu)-off)
		if off > 0 && n > 1 {
			if _, ok := Contains(fpdu[off:off+n], s.cfg.Key); ok {
				n-- // would pass the test: keep it from doing so
			}
		}
		dst = append(dst, fpdu[off:off+n])
		off += n
	}
	return dst
}
