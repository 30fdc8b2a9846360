package flash

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// The layout (docs/firmware-update.md, "Flash layout"): a 16 MiB part, three
// 4 MiB slots (golden at 0, A, B), the last 4 MiB unused. A slot is its
// header sector then its payload.
const (
	Size       = 16 << 20
	SectorSize = 4096
	PageSize   = 256
	SlotSize   = 4 << 20

	HeaderLen  = 320    // the signed image header (firmware.HeaderSize)
	MarkerOff  = 0x200  // the commit marker in the header sector
	MarkerLen  = 20     // magic, seq, header CRC, payload CRC, marker CRC
	ConfirmOff = 0x220  // the confirm octet: 0x00 when the driver confirmed the image
	TrialsOff  = 0x240  // the trial attempt octets: not 0xFF once used
	Trials     = 1      // attempt octets (flash_boot's TRIALS)
	PayloadOff = 0x1000 // the payload, from the next sector on
	// MaxPayload is what a slot holds after its header sector.
	MaxPayload = SlotSize - PayloadOff
)

// markerMagic is "RCMT".
var markerMagic = [4]byte{'R', 'C', 'M', 'T'}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CRC is the boot logic's checksum: CRC32c (hw/rtl/flash_boot.v).
func CRC(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// Base is the slot's first flash address.
func (s Slot) Base() uint32 { return uint32(s) * SlotSize }

// Marker is the commit marker the updater programs after the header: the
// slot is valid only with it, whole.
type Marker struct {
	Seq        uint32 // the newer of A and B has the higher one
	HeaderCRC  uint32 // CRC of the header's 320 octets
	PayloadCRC uint32 // CRC of the payload
}

// MarshalBinary returns the marker's 20 octets.
func (m Marker) MarshalBinary() ([]byte, error) {
	b := make([]byte, MarkerLen)
	copy(b, markerMagic[:])
	binary.LittleEndian.PutUint32(b[4:], m.Seq)
	binary.LittleEndian.PutUint32(b[8:], m.HeaderCRC)
	binary.LittleEndian.PutUint32(b[12:], m.PayloadCRC)
	binary.LittleEndian.PutUint32(b[16:], CRC(b[:16]))
	return b, nil
}

// ErrNoMarker is ParseMarker's answer for an erased marker.
var ErrNoMarker = errors.New("flash: no commit marker (erased)")

// ParseMarker parses a marker; a torn one (a cut program or erase) fails
// its own CRC.
func ParseMarker(b []byte) (Marker, error) {
	if len(b) < MarkerLen {
		return Marker{}, fmt.Errorf("flash: a marker is %d octets, got %d", MarkerLen, len(b))
	}
	erased := true
	for _, x := range b[:MarkerLen] {
		erased = erased && x == 0xff
	}
	if erased {
		return Marker{}, ErrNoMarker
	}
	if [4]byte(b[:4]) != markerMagic {
		return Marker{}, fmt.Errorf("flash: commit marker magic % x, want %q", b[:4], markerMagic[:])
	}
	if got, want := binary.LittleEndian.Uint32(b[16:]), CRC(b[:16]); got != want {
		return Marker{}, fmt.Errorf("flash: commit marker CRC %#08x, computed %#08x: torn", got, want)
	}
	return Marker{Seq: binary.LittleEndian.Uint32(b[4:]), HeaderCRC: binary.LittleEndian.Uint32(b[8:]),
		PayloadCRC: binary.LittleEndian.Uint32(b[12:])}, nil
}

// KeyListOff is where the golden slot's header sector holds the ids of the
// keys an update may be signed with (written with the golden image at
// manufacturing; the loader requires an image's key id there as well as
// in the host's trust set).
const KeyListOff = 0x800

// MaxKeys bounds the key list (it fits the header sector).
const MaxKeys = 64

var keyListMagic = [4]byte{'R', 'K', 'E', 'Y'}

// MarshalKeyList returns the key list's octets: "RKEY", a u32 count, the
// 32-octet key ids, a CRC32c of all before it.
func MarshalKeyList(ids [][32]byte) ([]byte, error) {
	if len(ids) == 0 || len(ids) > MaxKeys {
		return nil, fmt.Errorf("flash: a key list of %d keys: give 1 to %d", len(ids), MaxKeys)
	}
	b := append([]byte{}, keyListMagic[:]...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(ids)))
	for _, id := range ids {
		b = append(b, id[:]...)
	}
	return binary.LittleEndian.AppendUint32(b, CRC(b)), nil
}

// ParseKeyList parses the key list at the start of b.
func ParseKeyList(b []byte) ([][32]byte, error) {
	if len(b) < 8 || [4]byte(b[:4]) != keyListMagic {
		return nil, errors.New("flash: the golden slot holds no key list (magic \"RKEY\" at header sector offset 0x800): provision the golden image with its trusted key ids")
	}
	n := int(binary.LittleEndian.Uint32(b[4:]))
	if n == 0 || n > MaxKeys || len(b) < 8+32*n+4 {
		return nil, fmt.Errorf("flash: the golden slot's key list says %d keys: damaged", n)
	}
	end := 8 + 32*n
	if got, want := binary.LittleEndian.Uint32(b[end:]), CRC(b[:end]); got != want {
		return nil, fmt.Errorf("flash: the golden slot's key list CRC %#08x, computed %#08x: damaged", got, want)
	}
	ids := make([][32]byte, n)
	for i := range ids {
		copy(ids[i][:], b[8+32*i:])
	}
	return ids, nil
}

// HeaderSector returns what an image puts in its slot's header sector (up
// to the end of the marker; the rest stays erased): the 320-octet header
// at 0 and the commit marker for seq at MarkerOff.
func HeaderSector(header, payload []byte, seq uint32) ([]byte, error) {
	if len(header) != HeaderLen {
		return nil, fmt.Errorf("flash: a header of %d octets, want %d", len(header), HeaderLen)
	}
	m, err := Marker{Seq: seq, HeaderCRC: CRC(header), PayloadCRC: CRC(payload)}.MarshalBinary()
	if err != nil {
		return nil, err
	}
	hs := make([]byte, MarkerOff+MarkerLen)
	for i := range hs {
		hs[i] = 0xff
	}
	copy(hs, header)
	copy(hs[MarkerOff:], m)
	return hs, nil
}

// WriteSlot lays an image (header, payload) into a flash image fl (the
// whole part, as a programmer writes it or the simulated flash's file
// holds it) at slot s with sequence number seq, as a complete update
// would leave it: the factory's way to put the golden image in place,
// and its key list with it when keys is not empty.
func WriteSlot(fl []byte, s Slot, header, payload []byte, seq uint32, keys [][32]byte) error {
	if len(fl) != Size {
		return fmt.Errorf("flash: a flash image of %d octets, the part is %d", len(fl), Size)
	}
	if len(payload) == 0 || len(payload) > MaxPayload {
		return fmt.Errorf("flash: a payload of %d octets: a slot holds 1 to %d", len(payload), MaxPayload)
	}
	hs, err := HeaderSector(header, payload, seq)
	if err != nil {
		return err
	}
	base := s.Base()
	end := base + PayloadOff + uint32(len(payload)+SectorSize-1)/SectorSize*SectorSize
	for i := base; i < end; i++ {
		fl[i] = 0xff
	}
	copy(fl[base:], hs)
	copy(fl[base+PayloadOff:], payload)
	if len(keys) > 0 {
		kl, err := MarshalKeyList(keys)
		if err != nil {
			return err
		}
		copy(fl[base+KeyListOff:], kl)
	}
	return nil
}
