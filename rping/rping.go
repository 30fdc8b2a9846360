// Package rping speaks the protocol of rdma-core's rping example
// (librdmacm/examples/rping.c) over the Go reference stack, so that either
// side can stand opposite rdma-core's own rping on Linux siw or any other
// iWARP device.
//
// One round ("ping") of the protocol, with rping's state names:
//
//	client Sends {be64 addr, be32 STag, be32 len} of its start buffer  (RDMA_READ_ADV)
//	server RDMA-Reads len octets from it                               (RDMA_READ_COMPLETE)
//	server Sends 16 octets: "go ahead"
//	client Sends the same advertisement for its RDMA buffer            (RDMA_WRITE_ADV)
//	server RDMA-Writes what it read, up to and including its first NUL (RDMA_WRITE_COMPLETE)
//	server Sends 16 octets: "go ahead"
//
// The client fills its start buffer with "rdma-ping-N: " followed by a
// rotating run of the letters 'A' to 'z', the last octet NUL (PingData).
// The server's "go ahead" carries rping's never-written send buffer: 16
// zero octets. rping's client ends the connection after its count of
// rounds; the server serves until the client disconnects.
package rping

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

const (
	// DefaultPort is rping's TCP port.
	DefaultPort = 7174
	// DefaultSize is rping's default ping size (-S).
	DefaultSize = 64
	// MinSize and MaxSize bound -S as rping does: room for
	// "rdma-ping-2147483647: " and a NUL, and less than 64 KiB.
	MinSize = 26
	MaxSize = 64<<10 - 1
	// AdvLen is the length of an advertisement and of a "go ahead".
	AdvLen = 16
	// IRD and ORD are what rping asks of the RDMA CM (responder_resources
	// and initiator_depth of 1): one RDMA Read in flight.
	IRD = 1
	ORD = 1
)

// Adv is rping's buffer advertisement, struct rping_rdma_info.
type Adv struct {
	Addr uint64 // the buffer's tagged offset (its virtual address)
	STag uint32 // the rkey
	Len  uint32
}

// Append appends the 16 wire octets of a.
func (a Adv) Append(b []byte) []byte {
	b = binary.BigEndian.AppendUint64(b, a.Addr)
	b = binary.BigEndian.AppendUint32(b, a.STag)
	return binary.BigEndian.AppendUint32(b, a.Len)
}

// ParseAdv decodes an advertisement. rping refuses any receive that is not
// exactly 16 octets ("Received bogus data").
func ParseAdv(b []byte) (Adv, error) {
	if len(b) != AdvLen {
		return Adv{}, fmt.Errorf("rping: received bogus data: a Send of %d octets, want a %d-octet advertisement", len(b), AdvLen)
	}
	return Adv{
		Addr: binary.BigEndian.Uint64(b),
		STag: binary.BigEndian.Uint32(b[8:]),
		Len:  binary.BigEndian.Uint32(b[12:]),
	}, nil
}

func (a Adv) String() string {
	return fmt.Sprintf("addr %#x STag %#08x len %d", a.Addr, a.STag, a.Len)
}

// CheckSize reports whether size is a ping size rping accepts.
func CheckSize(size int) error {
	if size < MinSize || size > MaxSize {
		return fmt.Errorf("rping: invalid size %d (valid range is %d to %d)", size, MinSize, MaxSize)
	}
	return nil
}

// PingData returns the start buffer of round ping (from 0) for a given
// size: "rdma-ping-<ping>: ", then letters from 'A'+ping rotating through
// 'A'..'z' (ASCII 65 to 122), then a NUL in the last octet.
func PingData(ping, size int) []byte {
	b := make([]byte, size)
	FillPingData(b, ping)
	return b
}

// FillPingData writes round ping's data into b (its size is len(b)).
func FillPingData(b []byte, ping int) {
	// rping prints the header with snprintf(buf, size, ...), which
	// truncates; sizes of at least MinSize always hold it whole.
	n := copy(b, fmt.Sprintf("rdma-ping-%d: ", ping))
	c := byte(65 + ping%58)
	for i := n; i < len(b); i++ {
		b[i] = c
		c++
		if c > 122 {
			c = 65
		}
	}
	if len(b) > 0 {
		b[len(b)-1] = 0
	}
}

// cstring returns b up to its first NUL, as rping's printf("%s") shows it.
func cstring(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// strlen1 is the length rping's server writes back: strlen(buf)+1, bounded
// by the buffer (rping's buffers always hold a NUL).
func strlen1(b []byte) int {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return i + 1
	}
	return len(b)
}
