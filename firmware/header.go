// Package firmware is the RNIC's signed image format: a 320-octet header
// that names the image's target (board, FPGA part, PCI IDs), its version
// and anti-rollback security counter, and binds the payload through its
// length and SHA-256, signed with Ed25519 (RFC 8032, pure Ed25519) by a
// key the verifier looks up in its own trust set by key id, never taken
// from the image. docs/firmware.md has the layout, the key handling and
// what the security counter means.
//
// Verify checks an image against a trust set (structure, signature,
// payload), Check checks a verified header against the device it is
// about to go to; VerifyTarget does both and is the one call a flash
// updater makes before it touches the flash.
package firmware

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// The header's sizes (docs/firmware.md, "The header").
const (
	HeaderSize    = 320 // octets of the header, signature included
	SignedSize    = 256 // octets the signature covers: 0x000..0x0FF
	FormatVersion = 1
	Magic         = "RIMG"
	BoardSize     = 16 // octets of the board field
	PartSize      = 32 // octets of the FPGA part field
	// MaxPayload is the largest payload the 32-bit length field holds; a
	// device's slot is smaller (Target.MaxPayload).
	MaxPayload = 1<<32 - 1
)

// Field offsets. Every integer is little-endian.
const (
	offMagic       = 0x000
	offFormat      = 0x004
	offSignedLen   = 0x006
	offFlags       = 0x008
	offMajor       = 0x00C
	offMinor       = 0x00D
	offPatch       = 0x00E
	offBuild       = 0x010
	offSecCounter  = 0x014
	offPayloadLen  = 0x018
	offReserved1   = 0x01C
	offPayloadHash = 0x020
	offKeyID       = 0x040
	offBoard       = 0x060
	offPart        = 0x070
	offVendor      = 0x090
	offDevice      = 0x092
	offSubVendor   = 0x094
	offSubDevice   = 0x096
	offBuildHash   = 0x098
	offReserved2   = 0x0AC
	offSignature   = 0x100
)

// Version is the image's version, major.minor.patch+build. It orders
// images for people; the device's anti-rollback rule uses the separate
// security counter.
type Version struct {
	Major uint8
	Minor uint8
	Patch uint16
	Build uint32 // build number
}

func (v Version) String() string {
	return fmt.Sprintf("%d.%d.%d+%d", v.Major, v.Minor, v.Patch, v.Build)
}

// ParseVersion reads "1.2.3" or "1.2.3+45" (build number 45; 0 when
// absent). Major and minor are 0 to 255, patch 0 to 65535, the build
// number 0 to 4294967295: the header's field sizes.
func ParseVersion(s string) (Version, error) {
	var v Version
	core, build, hasBuild := strings.Cut(s, "+")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return v, fmt.Errorf("version %q: want MAJOR.MINOR.PATCH or MAJOR.MINOR.PATCH+BUILD, e.g. 1.2.3+45", s)
	}
	fields := []struct {
		name string
		s    string
		bits int
	}{{"major", parts[0], 8}, {"minor", parts[1], 8}, {"patch", parts[2], 16}}
	var n [3]uint64
	for i, f := range fields {
		x, err := strconv.ParseUint(f.s, 10, f.bits)
		if err != nil {
			return v, fmt.Errorf("version %q: %s %q: want 0 to %d", s, f.name, f.s, uint64(1)<<f.bits-1)
		}
		n[i] = x
	}
	v.Major, v.Minor, v.Patch = uint8(n[0]), uint8(n[1]), uint16(n[2])
	if hasBuild {
		b, err := strconv.ParseUint(build, 10, 32)
		if err != nil {
			return v, fmt.Errorf("version %q: build number %q: want 0 to 4294967295", s, build)
		}
		v.Build = uint32(b)
	}
	return v, nil
}

// PCIIDs are a PCI function's identity: vendor, device, subsystem vendor
// and subsystem device (PCI Local Bus 3.0, 6.2.1 and 6.2.4).
type PCIIDs struct {
	Vendor    uint16
	Device    uint16
	SubVendor uint16
	SubDevice uint16
}

// String is "vvvv:dddd:ssss:tttt" in hex, as lspci -n shows IDs.
func (p PCIIDs) String() string {
	return fmt.Sprintf("%04x:%04x:%04x:%04x", p.Vendor, p.Device, p.SubVendor, p.SubDevice)
}

// ParsePCIIDs reads "VVVV:DDDD:SVVV:SDDD" (four 4-digit hex IDs) or
// "VVVV:DDDD", which stands for "VVVV:DDDD:VVVV:DDDD": the subsystem IDs
// the same as the function's own, what a board without a subsystem of
// its own reports.
func ParsePCIIDs(s string) (PCIIDs, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 2 && len(parts) != 4 {
		return PCIIDs{}, fmt.Errorf("PCI IDs %q: want VVVV:DDDD or VVVV:DDDD:SVVV:SDDD (hex, as lspci -n shows them)", s)
	}
	var ids [4]uint16
	for i, p := range parts {
		if len(p) != 4 {
			return PCIIDs{}, fmt.Errorf("PCI IDs %q: %q is not 4 hex digits", s, p)
		}
		x, err := strconv.ParseUint(p, 16, 16)
		if err != nil {
			return PCIIDs{}, fmt.Errorf("PCI IDs %q: %q is not 4 hex digits", s, p)
		}
		ids[i] = uint16(x)
	}
	if len(parts) == 2 {
		ids[2], ids[3] = ids[0], ids[1]
	}
	return PCIIDs{ids[0], ids[1], ids[2], ids[3]}, nil
}

// KeyID names a signing key: the SHA-256 of its 32-octet Ed25519 public
// key.
type KeyID [32]byte

// KeyIDOf is pub's key id.
func KeyIDOf(pub []byte) KeyID { return sha256.Sum256(pub) }

func (k KeyID) String() string { return hex.EncodeToString(k[:]) }

// Header is the image header. Fields the format fixes (magic, format
// version, signed header length, flags, reserved) are not here: Marshal
// writes their only valid values and Unmarshal refuses any other.
type Header struct {
	Version         Version
	SecurityCounter uint32 // anti-rollback: the device refuses less than it has accepted
	PayloadLen      uint32
	PayloadSHA256   [32]byte
	KeyID           KeyID
	Board           string // printable ASCII, at most 16 octets
	Part            string // printable ASCII, at most 32 octets
	PCI             PCIIDs
	BuildHash       [20]byte // git commit of the build (SHA-1)
	Signature       [64]byte // Ed25519 over the first 256 octets
}

// checkName checks a board or part name: 1 to size octets of printable
// ASCII without spaces (0x21..0x7E), so that it prints as it is and
// compares exactly.
func checkName(field, s string, size int) error {
	if s == "" {
		return refuse(BadString, field, "empty: give the %s name (at most %d ASCII characters)", field, size)
	}
	if len(s) > size {
		return refuse(BadString, field, "%q is %d octets, more than the %d the header holds: use a shorter name", s, len(s), size)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e {
			return refuse(BadString, field, "%q: octet %d is %#02x; names are printable ASCII without spaces (0x21 to 0x7E)", s, i, c)
		}
	}
	return nil
}

// check checks the fields Marshal cannot write or Unmarshal must refuse.
func (h *Header) check() error {
	if err := checkName("board", h.Board, BoardSize); err != nil {
		return err
	}
	if err := checkName("part", h.Part, PartSize); err != nil {
		return err
	}
	if h.PayloadLen == 0 {
		return refuse(EmptyPayload, "payload length", "0: an image carries at least one octet of payload")
	}
	return nil
}

// MarshalBinary returns the header's 320 octets.
func (h *Header) MarshalBinary() ([]byte, error) {
	return h.AppendBinary(make([]byte, 0, HeaderSize))
}

// AppendBinary appends the header's 320 octets to b.
func (h *Header) AppendBinary(b []byte) ([]byte, error) {
	if err := h.check(); err != nil {
		return b, err
	}
	n := len(b)
	b = append(b, make([]byte, HeaderSize)...)
	h.put(b[n:])
	return b, nil
}

// put writes the checked header into o (HeaderSize octets, zero).
func (h *Header) put(o []byte) {
	le := binary.LittleEndian
	copy(o[offMagic:], Magic)
	le.PutUint16(o[offFormat:], FormatVersion)
	le.PutUint16(o[offSignedLen:], SignedSize)
	o[offMajor] = h.Version.Major
	o[offMinor] = h.Version.Minor
	le.PutUint16(o[offPatch:], h.Version.Patch)
	le.PutUint32(o[offBuild:], h.Version.Build)
	le.PutUint32(o[offSecCounter:], h.SecurityCounter)
	le.PutUint32(o[offPayloadLen:], h.PayloadLen)
	copy(o[offPayloadHash:], h.PayloadSHA256[:])
	copy(o[offKeyID:], h.KeyID[:])
	copy(o[offBoard:offBoard+BoardSize], h.Board)
	copy(o[offPart:offPart+PartSize], h.Part)
	le.PutUint16(o[offVendor:], h.PCI.Vendor)
	le.PutUint16(o[offDevice:], h.PCI.Device)
	le.PutUint16(o[offSubVendor:], h.PCI.SubVendor)
	le.PutUint16(o[offSubDevice:], h.PCI.SubDevice)
	copy(o[offBuildHash:], h.BuildHash[:])
	copy(o[offSignature:], h.Signature[:])
}

// UnmarshalBinary parses exactly one 320-octet header, checking every
// field the format fixes. It does not check the signature: Verify does.
func (h *Header) UnmarshalBinary(b []byte) error {
	if len(b) != HeaderSize {
		if len(b) < HeaderSize {
			return refuse(Truncated, "header", "%d octets, short of the %d-octet header: the file was cut (copy or download it again)", len(b), HeaderSize)
		}
		return refuse(Oversized, "header", "%d octets, more than the %d-octet header", len(b), HeaderSize)
	}
	le := binary.LittleEndian
	if string(b[offMagic:offMagic+4]) != Magic {
		return refuse(BadMagic, "magic", "% x, not %q (52 49 4d 47): this is not an RNIC signed image (rnic-loader sign makes one)", b[offMagic:offMagic+4], Magic)
	}
	if v := le.Uint16(b[offFormat:]); v != FormatVersion {
		return refuse(BadFormatVersion, "format version", "%d: this rnic-loader reads format version %d only (a newer rnic-loader may read it)", v, FormatVersion)
	}
	if n := le.Uint16(b[offSignedLen:]); n != SignedSize {
		return refuse(BadHeaderLength, "signed header length", "%d: format version %d signs exactly %d octets", n, FormatVersion, SignedSize)
	}
	if f := le.Uint32(b[offFlags:]); f != 0 {
		return refuse(BadFlags, "flags", "%#08x: every flag is reserved and must be 0 in format version %d", f, FormatVersion)
	}
	if err := zero("reserved (0x01c)", b[offReserved1:offPayloadHash]); err != nil {
		return err
	}
	if err := zero("reserved (0x0ac)", b[offReserved2:offSignature]); err != nil {
		return err
	}
	board, err := name("board", b[offBoard:offBoard+BoardSize])
	if err != nil {
		return err
	}
	part, err := name("part", b[offPart:offPart+PartSize])
	if err != nil {
		return err
	}
	var g Header
	g.Version = Version{Major: b[offMajor], Minor: b[offMinor], Patch: le.Uint16(b[offPatch:]), Build: le.Uint32(b[offBuild:])}
	g.SecurityCounter = le.Uint32(b[offSecCounter:])
	g.PayloadLen = le.Uint32(b[offPayloadLen:])
	copy(g.PayloadSHA256[:], b[offPayloadHash:])
	copy(g.KeyID[:], b[offKeyID:])
	g.Board, g.Part = board, part
	g.PCI = PCIIDs{le.Uint16(b[offVendor:]), le.Uint16(b[offDevice:]), le.Uint16(b[offSubVendor:]), le.Uint16(b[offSubDevice:])}
	copy(g.BuildHash[:], b[offBuildHash:])
	copy(g.Signature[:], b[offSignature:])
	if err := g.check(); err != nil {
		return err
	}
	*h = g
	return nil
}

// zero refuses a reserved field with any bit set: nothing unsigned or
// unparsed may hide in the header.
func zero(field string, b []byte) error {
	for i, c := range b {
		if c != 0 {
			return refuse(Reserved, field, "octet %d is %#02x; reserved octets must be 0 (an image from a newer format, or a damaged one)", i, c)
		}
	}
	return nil
}

// name reads a NUL-padded name: the octets before the first NUL, and
// nothing but NULs after it.
func name(field string, b []byte) (string, error) {
	n := len(b)
	for i, c := range b {
		if c == 0 {
			n = i
			break
		}
	}
	for i := n; i < len(b); i++ {
		if b[i] != 0 {
			return "", refuse(BadString, field, "octet %d is %#02x after the name's NUL padding began at octet %d: the padding must be all NUL", i, b[i], n)
		}
	}
	s := string(b[:n])
	return s, checkName(field, s, len(b))
}

// ParseHeader parses the header at the start of an image file (b holds at
// least the header; what follows is not looked at).
func ParseHeader(b []byte) (*Header, error) {
	if len(b) < HeaderSize {
		return nil, refuse(Truncated, "header", "the file is %d octets, short of the %d-octet header: it was cut (copy or download it again)", len(b), HeaderSize)
	}
	var h Header
	if err := h.UnmarshalBinary(b[:HeaderSize]); err != nil {
		return nil, err
	}
	return &h, nil
}
