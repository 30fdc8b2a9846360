package capture

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"slices"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Segment is one TCP segment that carried payload, as it was captured.
type Segment struct {
	// Seq is the sequence number of the first payload octet (for a SYN
	// that carries data, the SYN's own number plus one).
	Seq uint32
	// Offset is the position of the first payload octet in the stream:
	// Seq - (ISN+1), unwrapped past 2^32 as the stream goes on. It is
	// what places the segment, and what a parser checking framing
	// alignment (such as MPA's FPDU alignment) wants.
	Offset int64
	// Payload holds the captured payload octets. It is shorter than the
	// segment was on the wire when the capture cut the packet (snap
	// length); the missing octets then show up as a gap unless another
	// copy of the segment supplies them.
	Payload []byte
	// Time is the capture timestamp.
	Time time.Time
	// Retransmission is true when every captured octet of this segment
	// had already been captured in earlier segments of the same
	// direction (a retransmission or duplicate).
	Retransmission bool
}

// Stream is one direction of a TCP conversation.
type Stream struct {
	// ISN is the initial sequence number; Data starts at ISN+1. When the
	// capture holds no SYN for this direction (SYN is false), ISN is
	// inferred as one less than the lowest sequence number seen.
	ISN uint32
	// SYN reports whether the SYN of this direction was captured.
	SYN bool
	// FIN reports whether this direction sent a FIN, and FINTime when
	// the first one was captured (zero without a FIN): with the other
	// direction's, it tells which side closed first.
	FIN     bool
	FINTime time.Time
	// RST reports whether this direction sent a RST.
	RST bool
	// Data is the reassembled byte stream from ISN+1, up to the first
	// octet missing from the capture, if any (see GapError).
	Data []byte
	// Segments lists every captured segment of this direction that
	// carried payload, in capture order, retransmissions included. Pure
	// ACKs, and segments placed before ISN+1, are left out.
	Segments []Segment
}

// Conversation is one TCP connection found in a capture.
type Conversation struct {
	// Client is the endpoint that sent the SYN and Server the one that
	// answered it. When the capture holds neither a SYN nor a SYN-ACK
	// for the connection, Client is the sender of its first captured
	// packet.
	Client, Server netip.AddrPort
	// ClientToServer and ServerToClient are the two directions.
	ClientToServer, ServerToClient Stream
}

// Stream returns the direction sent by the client (fromClient) or by
// the server.
func (c *Conversation) Stream(fromClient bool) *Stream {
	if fromClient {
		return &c.ClientToServer
	}
	return &c.ServerToClient
}

func (c *Conversation) String() string {
	return fmt.Sprintf("%v -> %v (%d+%d octets)", c.Client, c.Server,
		len(c.ClientToServer.Data), len(c.ServerToClient.Data))
}

// GapError reports that the capture lacks some octets of a stream: no
// captured segment holds them, though a later segment, a FIN or the
// length a truncated packet announced shows that they were sent. The
// stream's Data stops where the gap starts.
type GapError struct {
	Client, Server netip.AddrPort
	// FromClient tells which direction has the gap.
	FromClient bool
	// Offset is the stream offset (from ISN+1) of the first missing
	// octet, and Seq its sequence number.
	Offset int64
	Seq    uint32
	// Missing is how many octets are missing before the next octet the
	// capture holds, or before the end of the stream if it holds none.
	Missing int64
}

func (e *GapError) Error() string {
	src, dst := e.Client, e.Server
	if !e.FromClient {
		src, dst = dst, src
	}
	return fmt.Sprintf("capture: TCP stream %v -> %v: %d octets missing at offset %d (seq %d)",
		src, dst, e.Missing, e.Offset, e.Seq)
}

// ReadTCPStreams reads the pcap or pcapng file at path and returns its
// TCP conversations in the order their first packets were captured. See
// ReadTCPStreamsFrom.
func ReadTCPStreams(path string) ([]*Conversation, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	convs, err := ReadTCPStreamsFrom(f)
	if err != nil {
		err = fmt.Errorf("%s: %w", path, err)
	}
	return convs, err
}

// ReadTCPStreamsFrom reads a capture in pcap (also gzip-compressed) or
// pcapng format from r and returns its TCP conversations in the order
// their first packets were captured.
//
// Supported link types are Ethernet (with 802.1Q tags), Linux cooked
// capture v1 and v2, BSD loopback and raw IP; network layers are IPv4
// and IPv6 (with extension headers). IP fragments and packets that do
// not decode are ignored. Checksums are not verified, since captures
// taken on a sending host commonly hold offloaded, unfinished ones.
//
// Each direction is reassembled by sequence number: a retransmission or
// duplicate adds nothing, out-of-order segments are put in place, and an
// overlap keeps the octets of the segment with the lower sequence number
// (the earlier captured one when both start at the same place). A new
// SYN with another ISN on the same address and port pair starts a new
// conversation.
//
// When a stream has a hole, the conversations are still returned, with
// that stream's Data cut at the hole, together with an error that wraps
// one *GapError per such stream (use errors.As). A capture that ends in
// the middle of a packet record likewise returns what was read before
// it along with the error.
func ReadTCPStreamsFrom(r io.Reader) ([]*Conversation, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	src, err := openSource(br)
	if err != nil {
		return nil, err
	}
	var (
		d       = newDecoder()
		tab     = newConvTable()
		readErr error
		badLink = map[layers.LinkType]bool{}
	)
	for {
		data, ci, lt, err := src.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			readErr = fmt.Errorf("capture: reading packet %d: %w", tab.packets+1, err)
			break
		}
		tab.packets++
		p, ok, supported := d.decode(lt, data)
		if !supported {
			badLink[lt] = true
			continue
		}
		if !ok {
			continue
		}
		p.time = ci.Timestamp
		tab.add(&p)
	}
	convs, gaps := tab.finish()
	if len(convs) == 0 && len(badLink) > 0 && readErr == nil {
		lts := make([]string, 0, len(badLink))
		for lt := range badLink {
			lts = append(lts, fmt.Sprintf("%v (%d)", lt, int(lt)))
		}
		slices.Sort(lts)
		return nil, fmt.Errorf("capture: unsupported link type %v", lts)
	}
	return convs, errors.Join(append([]error{readErr}, gaps...)...)
}

// packetSource hides the difference between pcap and pcapng readers.
type packetSource interface {
	next() ([]byte, gopacket.CaptureInfo, layers.LinkType, error)
}

type pcapSource struct{ r *pcapgo.Reader }

func (s pcapSource) next() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	data, ci, err := s.r.ReadPacketData()
	return data, ci, s.r.LinkType(), err
}

type ngSource struct{ r *pcapgo.NgReader }

func (s ngSource) next() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	data, ci, err := s.r.ReadPacketData()
	lt := s.r.LinkType()
	if len(ci.AncillaryData) > 0 {
		if l, ok := ci.AncillaryData[0].(layers.LinkType); ok {
			lt = l
		}
	}
	return data, ci, lt, err
}

const pcapngMagic = 0x0a0d0d0a // section header block type, any byte order

func openSource(br *bufio.Reader) (packetSource, error) {
	magic, err := br.Peek(4)
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("capture: reading file header: %w", err)
	}
	if binary.LittleEndian.Uint32(magic) == pcapngMagic {
		r, err := pcapgo.NewNgReader(br, pcapgo.NgReaderOptions{WantMixedLinkType: true, SkipUnknownVersion: true})
		if err != nil {
			return nil, fmt.Errorf("capture: pcapng: %w", err)
		}
		return ngSource{r}, nil
	}
	r, err := pcapgo.NewReader(br)
	if err != nil {
		return nil, fmt.Errorf("capture: pcap: %w", err)
	}
	return pcapSource{r}, nil
}

// packet is the part of a decoded TCP packet that reassembly needs.
type packet struct {
	src, dst netip.AddrPort
	seq      uint32
	syn, ack bool
	fin, rst bool
	payload  []byte // captured payload
	declared int    // payload length announced by the IP header
	time     time.Time
}

// decoder turns captured frames into packets with gopacket's decoding
// layers, reusing the layer structs from one packet to the next.
type decoder struct {
	eth     layers.Ethernet
	dot1q   layers.Dot1Q
	sll     layers.LinuxSLL
	sll2    layers.LinuxSLL2
	loop    layers.Loopback
	ip4     layers.IPv4
	ip6     layers.IPv6
	ext     layers.IPv6ExtensionSkipper
	frag    layers.IPv6Fragment
	tcp     layers.TCP
	parsers map[gopacket.LayerType]*gopacket.DecodingLayerParser
	decoded []gopacket.LayerType
}

func newDecoder() *decoder {
	return &decoder{parsers: map[gopacket.LayerType]*gopacket.DecodingLayerParser{}}
}

func (d *decoder) parser(first gopacket.LayerType) *gopacket.DecodingLayerParser {
	p := d.parsers[first]
	if p == nil {
		// The extension skipper comes before the fragment decoder, so
		// that the latter wins for fragment headers and a fragment is
		// never mistaken for a whole TCP segment.
		p = gopacket.NewDecodingLayerParser(first,
			&d.eth, &d.dot1q, &d.sll, &d.sll2, &d.loop,
			&d.ip4, &d.ip6, &d.ext, &d.frag, &d.tcp)
		p.IgnoreUnsupported = true
		d.parsers[first] = p
	}
	return p
}

// firstLayer maps a link type to the layer the frame starts with.
func firstLayer(lt layers.LinkType, data []byte) (gopacket.LayerType, bool) {
	switch lt {
	case layers.LinkTypeEthernet:
		return layers.LayerTypeEthernet, true
	case layers.LinkTypeLinuxSLL:
		return layers.LayerTypeLinuxSLL, true
	case layers.LinkTypeLinuxSLL2:
		return layers.LayerTypeLinuxSLL2, true
	case layers.LinkTypeNull, layers.LinkTypeLoop:
		return layers.LayerTypeLoopback, true
	case layers.LinkTypeRaw, layers.LinkTypeIPv4, layers.LinkTypeIPv6, 12, 14:
		// 12 and 14 are DLT_RAW of some BSDs, found in old files.
		if len(data) > 0 && data[0]>>4 == 6 {
			return layers.LayerTypeIPv6, true
		}
		return layers.LayerTypeIPv4, true
	}
	return 0, false
}

// offsetIn returns where part starts inside whole, part being a
// subslice of whole that runs to whole's end of capacity (as every
// layer payload gopacket cuts from a frame is).
func offsetIn(whole, part []byte) int {
	return cap(whole) - cap(part)
}

// decode decodes one frame. ok is false when the frame is not a whole,
// decodable TCP segment; supported is false when its link type is not.
func (d *decoder) decode(lt layers.LinkType, data []byte) (p packet, ok, supported bool) {
	first, supported := firstLayer(lt, data)
	if !supported {
		return p, false, false
	}
	// The parser's error only says where decoding stopped: what counts
	// is whether it got as far as TCP.
	_ = d.parser(first).DecodeLayers(data, &d.decoded)
	var netLayer gopacket.LayerType
	haveTCP := false
	for _, t := range d.decoded {
		switch t {
		case layers.LayerTypeIPv4, layers.LayerTypeIPv6:
			netLayer = t
		case layers.LayerTypeTCP:
			haveTCP = true
		}
	}
	if !haveTCP || netLayer == 0 {
		return p, false, true
	}

	var (
		srcIP, dstIP []byte
		ipStart      int
		ipEnd        = -1 // end of the IP packet as its header announces it
	)
	if netLayer == layers.LayerTypeIPv4 {
		srcIP, dstIP = d.ip4.SrcIP, d.ip4.DstIP
		ipStart = offsetIn(data, d.ip4.Contents)
		ipEnd = ipStart + int(d.ip4.Length)
	} else {
		srcIP, dstIP = d.ip6.SrcIP, d.ip6.DstIP
		ipStart = offsetIn(data, d.ip6.Contents)
		if d.ip6.Length != 0 { // zero: jumbogram, length unknown here
			ipEnd = ipStart + 40 + int(d.ip6.Length)
		}
	}
	src, ok1 := netip.AddrFromSlice(srcIP)
	dst, ok2 := netip.AddrFromSlice(dstIP)
	if !ok1 || !ok2 {
		return p, false, true
	}

	t := &d.tcp
	payloadStart := offsetIn(data, t.Contents) + len(t.Contents)
	payload := t.Payload
	declared := len(payload)
	if ipEnd >= 0 {
		declared = ipEnd - payloadStart
	}
	if declared < 0 || payloadStart < 0 || payloadStart > cap(data) {
		return p, false, true
	}
	if declared < len(payload) {
		payload = payload[:declared]
	}
	p = packet{
		src:      netip.AddrPortFrom(src.Unmap(), uint16(t.SrcPort)),
		dst:      netip.AddrPortFrom(dst.Unmap(), uint16(t.DstPort)),
		seq:      t.Seq,
		syn:      t.SYN,
		ack:      t.ACK,
		fin:      t.FIN,
		rst:      t.RST,
		payload:  payload,
		declared: declared,
	}
	return p, true, true
}

// convKey names a connection by its two endpoints, in canonical order.
type convKey struct{ a, b netip.AddrPort }

func keyOf(x, y netip.AddrPort) convKey {
	if x.Compare(y) > 0 {
		x, y = y, x
	}
	return convKey{x, y}
}

type rawSegment struct {
	seq      uint32
	payload  []byte
	declared int
	time     time.Time
}

// half is one direction of a connection while the capture is read.
type half struct {
	isn     uint32
	syn     bool
	fin     bool
	finSeq  uint32 // sequence number the FIN occupies
	finTime time.Time
	rst     bool
	segs    []rawSegment
}

func (h *half) used() bool { return len(h.segs) > 0 || h.fin || h.rst }

type conv struct {
	client, server netip.AddrPort
	rolesKnown     bool // client and server are known from SYN or SYN-ACK
	dir            [2]half
}

// side returns 0 for a packet sent by the client and 1 for the server.
func (c *conv) side(src netip.AddrPort) int {
	if src == c.client {
		return 0
	}
	return 1
}

func (c *conv) swap() {
	c.client, c.server = c.server, c.client
	c.dir[0], c.dir[1] = c.dir[1], c.dir[0]
}

type convTable struct {
	live    map[convKey]*conv
	all     []*conv
	packets int
}

func newConvTable() *convTable {
	return &convTable{live: map[convKey]*conv{}}
}

func (tab *convTable) start(p *packet) *conv {
	c := &conv{client: p.src, server: p.dst}
	tab.live[keyOf(p.src, p.dst)] = c
	tab.all = append(tab.all, c)
	return c
}

func (tab *convTable) add(p *packet) {
	if p.src == p.dst {
		return // a connection needs two distinct endpoints
	}
	c := tab.live[keyOf(p.src, p.dst)]
	if c == nil {
		c = tab.start(p)
	}
	if p.syn {
		c = tab.handleSYN(c, p)
		if c == nil {
			return
		}
	}
	h := &c.dir[c.side(p.src)]
	if p.rst {
		h.rst = true
		return // a RST's payload, if any, is diagnostic text, not stream
	}
	seq := p.seq
	if p.syn {
		seq++ // the SYN occupies ISN; payload follows it
	}
	if p.declared > 0 {
		h.segs = append(h.segs, rawSegment{seq: seq, payload: p.payload, declared: p.declared, time: p.time})
	}
	if p.fin && !h.fin {
		h.fin = true
		h.finSeq = seq + uint32(p.declared)
		h.finTime = p.time
	}
}

// handleSYN records the ISN a SYN or SYN-ACK carries and returns the
// conversation the packet belongs to (a new one when the SYN opens a new
// connection on the same endpoints), or nil when the packet is to be
// dropped.
func (tab *convTable) handleSYN(c *conv, p *packet) *conv {
	if !p.ack { // SYN: the sender is a client
		if !c.rolesKnown {
			if c.dir[0].used() || c.dir[1].used() {
				c = tab.start(p) // connection reused after a mid-stream capture
			} else if c.client != p.src {
				c.swap()
			}
			c.rolesKnown = true
			c.dir[0].isn, c.dir[0].syn = p.seq, true
			return c
		}
		s := c.side(p.src)
		h := &c.dir[s]
		switch {
		case s == 0 && h.syn && h.isn == p.seq:
			// retransmitted SYN
		case s == 0 && !h.syn && !h.used():
			h.isn, h.syn = p.seq, true // roles were known from the SYN-ACK
		case s == 1 && !h.syn && !h.used():
			h.isn, h.syn = p.seq, true // simultaneous open
		default:
			c = tab.start(p)
			c.rolesKnown = true
			c.dir[0].isn, c.dir[0].syn = p.seq, true
		}
		return c
	}
	// SYN-ACK: the sender is a server
	if !c.rolesKnown {
		if c.dir[0].used() || c.dir[1].used() {
			c = tab.start(p)
		}
		if c.server != p.src {
			c.swap()
		}
		c.rolesKnown = true
	}
	h := &c.dir[c.side(p.src)]
	if !h.syn || (h.isn != p.seq && !h.used()) {
		h.isn, h.syn = p.seq, true
	}
	return c
}

func (tab *convTable) finish() ([]*Conversation, []error) {
	out := make([]*Conversation, 0, len(tab.all))
	var errs []error
	for _, c := range tab.all {
		if !c.dir[0].syn && !c.dir[1].syn && !c.dir[0].used() && !c.dir[1].used() {
			continue // only pure ACKs: nothing to report
		}
		conv := &Conversation{Client: c.client, Server: c.server}
		for s := range 2 {
			st := conv.Stream(s == 0)
			if gap := c.dir[s].assemble(st); gap != nil {
				gap.Client, gap.Server, gap.FromClient = c.client, c.server, s == 0
				errs = append(errs, gap)
			}
		}
		out = append(out, conv)
	}
	return out, errs
}

// span is a half-open interval of stream offsets.
type span struct{ lo, hi int64 }

// coverage is a sorted list of disjoint, non-adjacent spans.
type coverage []span

// add adds [lo, hi) and reports whether any of it was new.
func (cv *coverage) add(lo, hi int64) bool {
	if lo >= hi {
		return false
	}
	s := *cv
	// i: first span that ends at or after lo (may merge)
	i, _ := slices.BinarySearchFunc(s, lo, func(x span, v int64) int { return cmp.Compare(x.hi, v) })
	j := i
	for j < len(s) && s[j].lo <= hi {
		j++
	}
	if i < len(s) && j == i+1 && s[i].lo <= lo && s[i].hi >= hi {
		return false // already covered
	}
	if j > i {
		lo = min(lo, s[i].lo)
		hi = max(hi, s[j-1].hi)
	}
	*cv = slices.Replace(s, i, j, span{lo, hi})
	return true
}

// assemble fills st from the captured segments, returning the first gap.
func (h *half) assemble(st *Stream) *GapError {
	st.SYN, st.FIN, st.RST, st.FINTime = h.syn, h.fin, h.rst, h.finTime
	var base uint32 // sequence number of stream offset 0
	switch {
	case h.syn:
		base = h.isn + 1
	case len(h.segs) > 0:
		// No SYN: start at the lowest sequence number seen, judged
		// relative to the first segment (modulo 2^32).
		base = h.segs[0].seq
		for _, sg := range h.segs[1:] {
			if int32(sg.seq-base) < 0 {
				base = sg.seq
			}
		}
	case h.fin:
		base = h.finSeq
	default:
		return nil
	}
	st.ISN = base - 1

	// Unwrap each sequence number relative to the highest offset reached
	// so far, so that a stream longer than 2^32 octets keeps counting.
	var hi int64
	unwrap := func(seq uint32) int64 {
		return hi + int64(int32(seq-(base+uint32(hi))))
	}
	var end int64 // end of the stream as far as the capture tells
	var cov coverage
	st.Segments = make([]Segment, 0, len(h.segs))
	for _, sg := range h.segs {
		off := unwrap(sg.seq)
		if off < 0 {
			continue // before ISN+1: not part of this stream
		}
		segEnd := off + int64(sg.declared)
		hi = max(hi, segEnd)
		end = max(end, segEnd)
		fresh := cov.add(off, off+int64(len(sg.payload))) || len(sg.payload) == 0
		st.Segments = append(st.Segments, Segment{
			Seq:            sg.seq,
			Offset:         off,
			Payload:        sg.payload,
			Time:           sg.time,
			Retransmission: !fresh,
		})
	}
	if h.fin {
		if off := unwrap(h.finSeq); off > end {
			end = off
		}
	}

	// Place segments by offset; a stable sort keeps capture order among
	// segments that start at the same offset, so the first copy wins.
	order := make([]int, len(st.Segments))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Compare(st.Segments[a].Offset, st.Segments[b].Offset)
	})
	var data []byte
	if len(cov) > 0 && cov[0].lo == 0 {
		data = make([]byte, 0, cov[0].hi)
	}
	var cursor int64
	for _, i := range order {
		sg := &st.Segments[i]
		if sg.Offset > cursor {
			st.Data = data
			return &GapError{Offset: cursor, Seq: base + uint32(cursor), Missing: sg.Offset - cursor}
		}
		if e := sg.Offset + int64(len(sg.Payload)); e > cursor {
			data = append(data, sg.Payload[cursor-sg.Offset:]...)
			cursor = e
		}
	}
	st.Data = data
	if cursor < end {
		return &GapError{Offset: cursor, Seq: base + uint32(cursor), Missing: end - cursor}
	}
	return nil
}
