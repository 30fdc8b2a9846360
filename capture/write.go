package capture

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Largest TCP payload one IP packet can carry without options: 65535
// minus the IPv4 and TCP headers, or minus the TCP header alone for
// IPv6, whose length field leaves out its own 40-octet header.
const (
	MaxSegmentIPv4 = 65535 - 20 - 20
	MaxSegmentIPv6 = 65535 - 20
)

// DefaultMSS is the maximum segment size a Writer announces and Write
// cuts at unless WithMSS says otherwise: that of a 1500-octet Ethernet
// MTU over IPv4.
const DefaultMSS = 1460

// ErrClosed is returned by a Writer's methods after Close.
var ErrClosed = errors.New("capture: writer closed")

const (
	snapLen     = 262144 // libpcap's maximum, above any frame written here
	windowShift = 7      // window scale both ends announce
	window      = 0xffff // window field after the handshake: 8 MiB scaled
	// ackEvery bounds the octets a direction sends before the other side
	// acknowledges, well inside the scaled window.
	ackEvery = 4 << 20
)

// Option configures a Writer.
type Option func(*config) error

type config struct {
	mss int
	isn [2]uint32
	mac [2]net.HardwareAddr
}

// WithMSS sets the maximum segment size both SYNs announce and Write
// cuts payloads at. It must lie between 1 and the largest payload of an
// IP packet (MaxSegmentIPv4 or MaxSegmentIPv6). A loopback interface
// with its 65536-octet MTU announces 65495 over IPv4.
func WithMSS(mss int) Option {
	return func(c *config) error {
		if mss < 1 {
			return fmt.Errorf("capture: MSS %d out of range", mss)
		}
		c.mss = mss
		return nil
	}
}

// WithISN sets the initial sequence numbers of client and server
// (defaults: fixed values, so that the same calls give the same file).
func WithISN(client, server uint32) Option {
	return func(c *config) error {
		c.isn = [2]uint32{client, server}
		return nil
	}
}

// WithMACs sets the Ethernet addresses of client and server (defaults:
// the locally administered 02:00:00:00:00:01 and 02:00:00:00:00:02).
func WithMACs(client, server net.HardwareAddr) Option {
	return func(c *config) error {
		if len(client) != 6 || len(server) != 6 {
			return errors.New("capture: MAC addresses must be 6 octets")
		}
		c.mac = [2]net.HardwareAddr{client, server}
		return nil
	}
}

// endpoint is the sending state of one side.
type endpoint struct {
	addr netip.AddrPort
	ip   net.IP // addr's address, for the IP layer
	mac  net.HardwareAddr
	isn  uint32
	next uint32 // sequence number of the next octet to send
	ipID uint16
	// unacked counts octets sent since the other side last acknowledged.
	unacked int
}

// Writer writes a pcap of one synthetic TCP conversation between a
// client and a server: Ethernet frames, IPv4 or IPv6 by the addresses'
// family, valid IP and TCP checksums, nanosecond timestamps.
//
// The handshake (SYN with MSS and window-scale options, SYN-ACK, ACK) is
// written by Open, or by the first Write or Segment at that call's time.
// Each Write or Segment sends data segments with the sender's next
// sequence numbers, acknowledging all the peer has sent, and then an
// ACK from the receiver. Close writes a FIN from each side and the
// client's final ACK, and flushes.
//
// Output is buffered: nothing may reach the io.Writer before Flush or
// Close. A Writer is safe for concurrent use; its methods serialise on
// one lock. The first error writing to the io.Writer sticks: every
// later call returns it, and Close reports it.
//
// A zero time.Time given to any method stands for time.Now().
type Writer struct {
	mu     sync.Mutex
	bw     *bufio.Writer
	pw     *pcapgo.Writer
	ipv6   bool
	mss    int
	maxSeg int
	end    [2]endpoint // 0: client, 1: server
	opened bool
	closed bool
	// aborted: a RST has been written; later data is not recorded.
	aborted bool
	err     error

	buf   gopacket.SerializeBuffer
	eth   layers.Ethernet
	ip4   layers.IPv4
	ip6   layers.IPv6
	tcp   layers.TCP
	opts  [3]layers.TCPOption
	mssB  [2]byte
	wsB   [1]byte
	sopts gopacket.SerializeOptions
}

// NewWriter writes a pcap file header to w and returns a Writer for a
// conversation from client (the side sending the SYN) to server. The two
// addresses must be of the same family (IPv4-mapped IPv6 addresses count
// as IPv4) and differ.
func NewWriter(w io.Writer, client, server netip.AddrPort, opts ...Option) (*Writer, error) {
	cfg := config{
		mss: DefaultMSS,
		isn: [2]uint32{0x1ee70000, 0x5e870000},
		mac: [2]net.HardwareAddr{
			{0x02, 0, 0, 0, 0, 0x01},
			{0x02, 0, 0, 0, 0, 0x02},
		},
	}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	ca, sa := client.Addr().Unmap().WithZone(""), server.Addr().Unmap().WithZone("")
	if !ca.IsValid() || !sa.IsValid() {
		return nil, errors.New("capture: invalid client or server address")
	}
	if ca.Is4() != sa.Is4() {
		return nil, fmt.Errorf("capture: client %v and server %v are of different address families", client, server)
	}
	client, server = netip.AddrPortFrom(ca, client.Port()), netip.AddrPortFrom(sa, server.Port())
	if client == server {
		return nil, fmt.Errorf("capture: client and server are both %v", client)
	}
	wr := &Writer{
		ipv6:   ca.Is6(),
		mss:    cfg.mss,
		maxSeg: MaxSegmentIPv4,
		buf:    gopacket.NewSerializeBuffer(),
		sopts:  gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
	}
	if wr.ipv6 {
		wr.maxSeg = MaxSegmentIPv6
	}
	if wr.mss > wr.maxSeg {
		return nil, fmt.Errorf("capture: MSS %d above the largest segment %d", wr.mss, wr.maxSeg)
	}
	for i, a := range []netip.AddrPort{client, server} {
		wr.end[i] = endpoint{addr: a, ip: a.Addr().AsSlice(), mac: cfg.mac[i], isn: cfg.isn[i], next: cfg.isn[i]}
	}
	wr.bw = bufio.NewWriterSize(w, 256<<10)
	wr.pw = pcapgo.NewWriterNanos(wr.bw)
	if err := wr.pw.WriteFileHeader(snapLen, layers.LinkTypeEthernet); err != nil {
		return nil, err
	}
	return wr, nil
}

// MSS returns the maximum segment size the Writer announces and Write
// cuts at.
func (w *Writer) MSS() int { return w.mss }

// MaxSegment returns the largest payload Segment puts in one TCP
// segment: MaxSegmentIPv4 or MaxSegmentIPv6.
func (w *Writer) MaxSegment() int { return w.maxSeg }

// Open writes the three-way handshake at time t, if it was not written
// yet.
func (w *Writer) Open(t time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return err
	}
	return w.openLocked(stamp(t))
}

// Write sends payload from the client (fromClient) or the server, cut
// into segments of at most MSS octets, followed by an ACK from the other
// side. An empty payload writes nothing (but the handshake, if due).
func (w *Writer) Write(fromClient bool, payload []byte, t time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return err
	}
	return w.sendLocked(side(fromClient), stamp(t), w.mss, payload)
}

// Segment sends each payload as one TCP segment, so that the caller
// controls segment boundaries (for instance to keep one MPA FPDU per
// segment, as an iWARP sender does), then an ACK from the other side.
// A payload longer than MaxSegment is cut at that size. Segments may
// exceed the announced MSS, as the segments a host captures before TCP
// segmentation offload do; Wireshark accepts them.
func (w *Writer) Segment(fromClient bool, t time.Time, payloads ...[]byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return err
	}
	t = stamp(t)
	s := side(fromClient)
	for _, p := range payloads {
		if err := w.dataLocked(s, t, w.maxSeg, p); err != nil {
			return err
		}
	}
	return w.ackLocked(1-s, t)
}

// Flush writes buffered packets to the underlying io.Writer.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.err = w.bw.Flush()
	return w.err
}

// Err returns the first error met writing the capture, if any. Taps
// cannot return capture errors to their callers; they show up here and
// in Close.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Close writes the closing exchange at time t (the handshake first if
// nothing was written yet): FIN-ACK from the client, FIN-ACK from the
// server, ACK from the client. After a RST (see Tap) it writes nothing
// more. Then it flushes. It does not close the underlying io.Writer.
// Calling Close again does nothing.
func (w *Writer) Close(t time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return w.err
	}
	w.closed = true
	if w.err != nil {
		return w.err
	}
	if !w.aborted {
		t = stamp(t)
		if err := w.openLocked(t); err != nil {
			return err
		}
		c, s := &w.end[0], &w.end[1]
		if err := w.emit(0, flagFIN|flagACK, c.next, s.next, t, nil); err != nil {
			return err
		}
		c.next++
		if err := w.emit(1, flagFIN|flagACK, s.next, c.next, t, nil); err != nil {
			return err
		}
		s.next++
		if err := w.emit(0, flagACK, c.next, s.next, t, nil); err != nil {
			return err
		}
	}
	w.err = w.bw.Flush()
	return w.err
}

// usable reports why the Writer cannot take more packets, if it cannot.
func (w *Writer) usable() error {
	if w.closed {
		return ErrClosed
	}
	return w.err
}

func side(fromClient bool) int {
	if fromClient {
		return 0
	}
	return 1
}

func stamp(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now()
	}
	return t
}

type tcpFlags uint8

const (
	flagFIN tcpFlags = 1 << iota
	flagSYN
	flagRST
	flagPSH
	flagACK
)

func (w *Writer) openLocked(t time.Time) error {
	if w.opened {
		return nil
	}
	w.opened = true
	c, s := &w.end[0], &w.end[1]
	if err := w.emit(0, flagSYN, c.isn, 0, t, nil); err != nil {
		return err
	}
	c.next = c.isn + 1
	if err := w.emit(1, flagSYN|flagACK, s.isn, c.next, t, nil); err != nil {
		return err
	}
	s.next = s.isn + 1
	return w.emit(0, flagACK, c.next, s.next, t, nil)
}

// sendLocked sends p from side s in segments of at most seg octets,
// then has the other side acknowledge.
func (w *Writer) sendLocked(s int, t time.Time, seg int, p []byte) error {
	if len(p) == 0 {
		return w.openLocked(t)
	}
	if err := w.dataLocked(s, t, seg, p); err != nil {
		return err
	}
	return w.ackLocked(1-s, t)
}

// dataLocked sends p from side s in segments of at most seg octets,
// the last one with PSH, acknowledging on the other side's behalf
// whenever ackEvery octets are outstanding.
func (w *Writer) dataLocked(s int, t time.Time, seg int, p []byte) error {
	if err := w.openLocked(t); err != nil {
		return err
	}
	e, peer := &w.end[s], &w.end[1-s]
	for len(p) > 0 {
		n := min(len(p), seg)
		f := flagACK
		if n == len(p) {
			f |= flagPSH
		}
		if err := w.emit(s, f, e.next, peer.next, t, p[:n]); err != nil {
			return err
		}
		e.next += uint32(n)
		e.unacked += n
		p = p[n:]
		if e.unacked >= ackEvery && len(p) > 0 {
			if err := w.ackLocked(1-s, t); err != nil {
				return err
			}
		}
	}
	return nil
}

// ackLocked sends a pure ACK from side s if the other side has
// unacknowledged data.
func (w *Writer) ackLocked(s int, t time.Time) error {
	e, peer := &w.end[s], &w.end[1-s]
	if peer.unacked == 0 {
		return nil
	}
	peer.unacked = 0
	return w.emit(s, flagACK, e.next, peer.next, t, nil)
}

// abortLocked writes a RST from side s; nothing is recorded after it.
func (w *Writer) abortLocked(s int, t time.Time) error {
	if w.aborted || !w.opened {
		w.aborted = true
		return nil
	}
	w.aborted = true
	e, peer := &w.end[s], &w.end[1-s]
	return w.emit(s, flagRST|flagACK, e.next, peer.next, t, nil)
}

// emit serialises one frame from side s and writes it to the pcap.
func (w *Writer) emit(s int, f tcpFlags, seq, ack uint32, t time.Time, payload []byte) error {
	if w.err != nil {
		return w.err
	}
	src, dst := &w.end[s], &w.end[1-s]
	w.eth = layers.Ethernet{SrcMAC: src.mac, DstMAC: dst.mac}
	var netLayer gopacket.SerializableLayer
	if w.ipv6 {
		w.eth.EthernetType = layers.EthernetTypeIPv6
		w.ip6 = layers.IPv6{
			Version:    6,
			NextHeader: layers.IPProtocolTCP,
			HopLimit:   64,
			SrcIP:      src.ip,
			DstIP:      dst.ip,
		}
		netLayer = &w.ip6
	} else {
		w.eth.EthernetType = layers.EthernetTypeIPv4
		w.ip4 = layers.IPv4{
			Version:  4,
			IHL:      5,
			TTL:      64,
			Flags:    layers.IPv4DontFragment,
			Id:       src.ipID,
			Protocol: layers.IPProtocolTCP,
			SrcIP:    src.ip,
			DstIP:    dst.ip,
		}
		src.ipID++
		netLayer = &w.ip4
	}
	w.tcp = layers.TCP{
		SrcPort: layers.TCPPort(src.addr.Port()),
		DstPort: layers.TCPPort(dst.addr.Port()),
		Seq:     seq,
		Ack:     ack,
		FIN:     f&flagFIN != 0,
		SYN:     f&flagSYN != 0,
		RST:     f&flagRST != 0,
		PSH:     f&flagPSH != 0,
		ACK:     f&flagACK != 0,
		Window:  window,
	}
	if f&flagSYN != 0 {
		// Unscaled window in a SYN; MSS and window scale announced.
		w.tcp.Window = 65535
		w.mssB = [2]byte{byte(w.mss >> 8), byte(w.mss)}
		w.wsB = [1]byte{windowShift}
		w.opts = [3]layers.TCPOption{
			{OptionType: layers.TCPOptionKindMSS, OptionLength: 4, OptionData: w.mssB[:]},
			{OptionType: layers.TCPOptionKindNop, OptionLength: 1},
			{OptionType: layers.TCPOptionKindWindowScale, OptionLength: 3, OptionData: w.wsB[:]},
		}
		w.tcp.Options = w.opts[:]
	}
	if err := w.tcp.SetNetworkLayerForChecksum(netLayer.(gopacket.NetworkLayer)); err != nil {
		return err
	}
	if err := gopacket.SerializeLayers(w.buf, w.sopts, &w.eth, netLayer, &w.tcp, gopacket.Payload(payload)); err != nil {
		w.err = fmt.Errorf("capture: encoding packet: %w", err)
		return w.err
	}
	b := w.buf.Bytes()
	ci := gopacket.CaptureInfo{Timestamp: t, CaptureLength: len(b), Length: len(b)}
	if err := w.pw.WritePacket(ci, b); err != nil {
		w.err = err
		return err
	}
	return nil
}
