package sctp

import (
	"github.com/openrnic/rnic/iwarp/crc32c"
)

// gatherMin is the smallest DATA payload sent from its own buffer rather
// than copied into the packet's header buffer.
const gatherMin = 512

// piece is a run of the header buffer (data nil) or a message's octets.
type piece struct {
	lo, hi int
	data   []byte
}

// packetBuilder assembles one outgoing packet as pieces: the common
// header, control chunks and DATA chunk headers in one buffer, large user
// payloads by reference. Its CRC32c runs over the pieces in order.
type packetBuilder struct {
	hdr    []byte
	pieces []piece
	mark   int // start of the header run not yet in pieces
	size   int // octets of data pieces
	bufs   [][]byte
	flat   []byte // for PacketConns without gathered writes
}

func (p *packetBuilder) reset(src, dst uint16, vtag uint32) {
	p.hdr = appendCommonHeader(p.hdr[:0], src, dst, vtag)
	p.pieces = p.pieces[:0]
	p.mark = 0
	p.size = 0
}

func (p *packetBuilder) len() int { return len(p.hdr) + p.size }

func (p *packetBuilder) empty() bool { return p.len() == commonHeaderLen }

// appendData adds a DATA chunk (RFC 9260 3.3.1). A large payload goes by
// reference, all but its last 0-3 octets, which are copied with the
// padding: the header buffer's length then stays congruent to the
// packet's modulo 4, so that pad4 on it pads the packet right.
func (p *packetBuilder) appendData(d *dataChunk) {
	if len(d.Data) < gatherMin {
		p.hdr = appendData(p.hdr, d)
		return
	}
	full := d.Data
	body := full[:len(full)&^3]
	d.Data = nil
	p.hdr = appendData(p.hdr, d) // the 16-octet header
	d.Data = full
	putLen(p.hdr[len(p.hdr)-dataHeaderLen:], dataHeaderLen+len(full))
	p.pieces = append(p.pieces, piece{lo: p.mark, hi: len(p.hdr)}, piece{data: body})
	p.size += len(body)
	p.mark = len(p.hdr)
	p.hdr = pad4(append(p.hdr, full[len(body):]...))
}

func putLen(chunkHdr []byte, n int) { chunkHdr[2], chunkHdr[3] = byte(n>>8), byte(n) }

// seal closes the pieces and writes the CRC32c (RFC 9260 6.8).
func (p *packetBuilder) seal() [][]byte {
	if p.mark < len(p.hdr) || len(p.pieces) == 0 {
		p.pieces = append(p.pieces, piece{lo: p.mark, hi: len(p.hdr)})
		p.mark = len(p.hdr)
	}
	p.hdr[8], p.hdr[9], p.hdr[10], p.hdr[11] = 0, 0, 0, 0
	var c uint32
	p.bufs = p.bufs[:0]
	for _, pc := range p.pieces {
		b := pc.data
		if b == nil {
			b = p.hdr[pc.lo:pc.hi]
		}
		c = crc32c.Update(c, b)
		p.bufs = append(p.bufs, b)
	}
	crc32c.PutWire(p.hdr[8:], c)
	return p.bufs
}

// flatten copies the sealed pieces into one buffer.
func (p *packetBuilder) flatten(bufs [][]byte) []byte {
	p.flat = p.flat[:0]
	for _, b := range bufs {
		p.flat = append(p.flat, b...)
	}
	return p.flat
}
