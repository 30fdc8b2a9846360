// Command sctppeer is the guest's side of the DDP/SCTP interop test
// (interop/ddpsctp_test.go): it speaks the DDP/SCTP adaptation layer
// (draft-ietf-rddp-sctp) over the Linux kernel's SCTP, with the kernel's
// RFC 6951 UDP encapsulation, against the project's stack on the host. Its
// wire formats are written here from the draft, not taken from the
// project's ddpsctp package, so that a misreading there shows.
//
//	sctppeer -listen 5000 -connect 10.0.2.2:5001
//
// Phase A: it accepts an association on -listen, answers a session
// Initiate on stream 1 with a Reject and one on stream 2 with an Accept,
// echoes every DDP segment of that session until the host's Terminate, and
// answers with its own. Phase B: it sets up an association to -connect,
// initiates a session on stream 3, sends segments of several sizes and
// checks their echoes, terminates, then initiates one on stream 4 and
// expects a Reject. Phase C: an association to -connect without the
// Adaptation Layer Indication, which the host must abort. Each phase checks
// that the peer's indication is DDP's (1) and that every chunk is
// unordered with the right PPID and DDP-SSN. It prints what it saw and
// exits 0 when everything held, 1 otherwise.
//
// Build it static for the guest: CGO_ENABLED=0 go build.
package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Linux SCTP socket API (include/uapi/linux/sctp.h); x/sys/unix has only
// IPPROTO_SCTP.
const (
	solSCTP            = 132
	sctpAdaptationOpt  = 7  // SCTP_ADAPTATION_LAYER: struct sctp_setadaptation
	sctpEvents         = 11 // SCTP_EVENTS: struct sctp_event_subscribe
	sctpRecvRcvInfo    = 32 // SCTP_RECVRCVINFO
	cmsgSndInfo        = 2  // SCTP_SNDINFO: struct sctp_sndinfo (16 octets)
	cmsgRcvInfo        = 3  // SCTP_RCVINFO: struct sctp_rcvinfo (28 octets)
	sctpUnordered      = 1  // SCTP_UNORDERED in snd_flags and rcv_flags
	msgNotification    = 0x8000
	snAdaptationEvent  = 0x8007 // SCTP_ADAPTATION_INDICATION
	eventAdaptationIdx = 7      // sctp_adaptation_layer_event in sctp_event_subscribe
)

// The adaptation layer's formats (draft-ietf-rddp-sctp 5).
const (
	ppidSegment = 0x10
	ppidControl = 0x11
	fInitiate   = 1
	fAccept     = 2
	fReject     = 3
	fTerminate  = 4
	adaptDDP    = 1
)

// msg is one SCTP user message of the adaptation layer.
type msg struct {
	stream    uint16
	ppid      uint32
	unordered bool
	ssn       uint16
	fn        uint16 // control messages
	body      []byte // private data, or the DDP segment
}

func (m msg) String() string {
	if m.ppid == ppidControl {
		return fmt.Sprintf("stream %d DDP-SSN %d control %d (%d octets of private data)", m.stream, m.ssn, m.fn, len(m.body))
	}
	return fmt.Sprintf("stream %d DDP-SSN %d segment of %d octets", m.stream, m.ssn, len(m.body))
}

type sock struct {
	fd int
	// indication is the peer's Adaptation Layer Indication, once its
	// notification has come.
	indication *uint32
}

func newSock(adaptation bool) (*sock, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_SCTP)
	if err != nil {
		return nil, fmt.Errorf("socket(IPPROTO_SCTP): %w (is sctp.ko loaded?)", err)
	}
	if adaptation {
		var v [4]byte
		binary.NativeEndian.PutUint32(v[:], adaptDDP)
		if err := unix.SetsockoptString(fd, solSCTP, sctpAdaptationOpt, string(v[:])); err != nil {
			return nil, fmt.Errorf("SCTP_ADAPTATION_LAYER: %w", err)
		}
	}
	var ev [eventAdaptationIdx + 1]byte
	ev[eventAdaptationIdx] = 1
	if err := unix.SetsockoptString(fd, solSCTP, sctpEvents, string(ev[:])); err != nil {
		return nil, fmt.Errorf("SCTP_EVENTS: %w", err)
	}
	if err := unix.SetsockoptInt(fd, solSCTP, sctpRecvRcvInfo, 1); err != nil {
		return nil, fmt.Errorf("SCTP_RECVRCVINFO: %w", err)
	}
	tv := unix.NsecToTimeval(int64(20 * time.Second))
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	return &sock{fd: fd}, nil
}

// dial sets up an association to addr (ip:port), with or without the
// indication. connected is false, and err the connect's, when connect
// itself failed.
func dial(addr string, adaptation bool) (s *sock, connected bool, err error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return nil, false, err
	}
	if s, err = newSock(adaptation); err != nil {
		return nil, false, err
	}
	err = unix.Connect(s.fd, &unix.SockaddrInet4{Addr: ap.Addr().As4(), Port: int(ap.Port())})
	return s, err == nil, err
}

// send sends m as one unordered message.
func (s *sock) send(m msg) error {
	var b []byte
	b = binary.BigEndian.AppendUint16(b, m.ssn)
	if m.ppid == ppidControl {
		b = binary.BigEndian.AppendUint16(b, m.fn)
	}
	b = append(b, m.body...)
	info := make([]byte, 16)
	binary.NativeEndian.PutUint16(info[0:], m.stream)
	binary.NativeEndian.PutUint16(info[2:], sctpUnordered)
	binary.BigEndian.PutUint32(info[4:], m.ppid) // on the wire as given
	oob := make([]byte, unix.CmsgSpace(len(info)))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
	h.Level, h.Type = solSCTP, cmsgSndInfo
	h.SetLen(unix.CmsgLen(len(info)))
	copy(oob[unix.CmsgLen(0):], info)
	return unix.Sendmsg(s.fd, b, oob, nil, 0)
}

// recv returns the next message, taking any notification on the way.
func (s *sock) recv() (msg, error) {
	buf := make([]byte, 1<<17)
	oob := make([]byte, 256)
	for {
		n, oobn, flags, _, err := unix.Recvmsg(s.fd, buf, oob, 0)
		if err != nil {
			return msg{}, err
		}
		if n == 0 {
			return msg{}, errEOF
		}
		if flags&msgNotification != 0 {
			if binary.NativeEndian.Uint16(buf) == snAdaptationEvent && n >= 12 {
				v := binary.NativeEndian.Uint32(buf[8:])
				s.indication = &v
			}
			continue
		}
		if flags&unix.MSG_EOR == 0 {
			return msg{}, errors.New("a message larger than the receive buffer")
		}
		cms, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return msg{}, err
		}
		var m msg
		got := false
		for _, c := range cms {
			if c.Header.Level == solSCTP && c.Header.Type == cmsgRcvInfo && len(c.Data) >= 28 {
				m.stream = binary.NativeEndian.Uint16(c.Data[0:])
				m.unordered = binary.NativeEndian.Uint16(c.Data[4:])&sctpUnordered != 0
				m.ppid = binary.BigEndian.Uint32(c.Data[8:])
				got = true
			}
		}
		if !got {
			return msg{}, errors.New("no SCTP_RCVINFO with the message")
		}
		b := buf[:n]
		need := 2
		if m.ppid == ppidControl {
			need = 4
		}
		if len(b) < need {
			return m, fmt.Errorf("a %d-octet message with PPID %#x, shorter than its header", len(b), m.ppid)
		}
		m.ssn = binary.BigEndian.Uint16(b)
		if m.ppid == ppidControl {
			m.fn = binary.BigEndian.Uint16(b[2:])
		}
		m.body = append([]byte(nil), b[need:]...)
		return m, nil
	}
}

var errEOF = errors.New("the association ended")

// expect receives the next message and checks it is unordered on stream
// with the given PPID, DDP-SSN and, for control, function.
func (s *sock) expect(stream uint16, ppid uint32, ssn uint16, fn uint16) (msg, error) {
	m, err := s.recv()
	if err != nil {
		return m, err
	}
	switch {
	case !m.unordered:
		return m, fmt.Errorf("%v: an ordered chunk; the adaptation layer sends unordered ones only (section 10)", m)
	case m.stream != stream || m.ppid != ppid || m.ssn != ssn || ppid == ppidControl && m.fn != fn:
		return m, fmt.Errorf("got %v (PPID %#x), want stream %d PPID %#x DDP-SSN %d function %d", m, m.ppid, stream, ppid, ssn, fn)
	}
	return m, nil
}

func (s *sock) checkIndication(who string) error {
	if s.indication == nil {
		return fmt.Errorf("%s: no SCTP_ADAPTATION_INDICATION notification: the peer sent no Adaptation Layer Indication", who)
	}
	if *s.indication != adaptDDP {
		return fmt.Errorf("%s: the peer's Adaptation Layer Indication is %d, not 1", who, *s.indication)
	}
	fmt.Printf("%s: peer's adaptation layer indication %d (DDP)\n", who, *s.indication)
	return nil
}

// phaseA is the passive side against the host's active one.
func phaseA(port int) error {
	ls, err := newSock(true)
	if err != nil {
		return err
	}
	defer unix.Close(ls.fd)
	if err := unix.Bind(ls.fd, &unix.SockaddrInet4{Port: port}); err != nil {
		return err
	}
	if err := unix.Listen(ls.fd, 4); err != nil {
		return err
	}
	fmt.Printf("SCTPPEER-LISTENING %d\n", port)
	fd, _, err := unix.Accept(ls.fd)
	if err != nil {
		return fmt.Errorf("accept: %w", err)
	}
	s := &sock{fd: fd}
	defer unix.Close(fd)
	m, err := s.expect(1, ppidControl, 0, fInitiate)
	if err != nil {
		return err
	}
	if err := s.checkIndication("A"); err != nil {
		return err
	}
	fmt.Printf("A: Initiate on stream 1 (%q): rejecting\n", m.body)
	if err := s.send(msg{stream: 1, ppid: ppidControl, ssn: 0, fn: fReject, body: []byte("no thanks")}); err != nil {
		return err
	}
	if m, err = s.expect(2, ppidControl, 0, fInitiate); err != nil {
		return err
	}
	fmt.Printf("A: Initiate on stream 2 (%q): accepting\n", m.body)
	if err := s.send(msg{stream: 2, ppid: ppidControl, ssn: 0, fn: fAccept, body: []byte("welcome")}); err != nil {
		return err
	}
	var sizes []string
	for ssn := uint16(1); ; ssn++ {
		m, err := s.recv()
		if err != nil {
			return err
		}
		if !m.unordered || m.stream != 2 || m.ssn != ssn {
			return fmt.Errorf("A: got %v (unordered %v), want DDP-SSN %d on stream 2", m, m.unordered, ssn)
		}
		if m.ppid == ppidControl && m.fn == fTerminate {
			if len(m.body) != 0 {
				return errors.New("A: a Terminate with private data")
			}
			fmt.Printf("A: echoed %d segments (%s octets), then the host's Terminate: answering\n", len(sizes), strings.Join(sizes, ", "))
			if err := s.send(msg{stream: 2, ppid: ppidControl, ssn: ssn, fn: fTerminate}); err != nil {
				return err
			}
			break
		}
		if m.ppid != ppidSegment {
			return fmt.Errorf("A: got %v, want a DDP Segment Chunk", m)
		}
		sizes = append(sizes, strconv.Itoa(len(m.body)))
		if err := s.send(msg{stream: 2, ppid: ppidSegment, ssn: ssn, body: m.body}); err != nil {
			return err
		}
	}
	// The host ends the association (SHUTDOWN): recv sees its end.
	if _, err := s.recv(); !errors.Is(err, errEOF) {
		return fmt.Errorf("A: after the Terminates: %v, want the association's end", err)
	}
	fmt.Println("A: the host shut the association down")
	return nil
}

// phaseB is the active side against the host's passive one.
func phaseB(addr string) error {
	s, connected, err := dial(addr, true)
	if s != nil {
		defer unix.Close(s.fd)
	}
	if !connected {
		return fmt.Errorf("B: connect %s: %w", addr, err)
	}
	if err := s.send(msg{stream: 3, ppid: ppidControl, ssn: 0, fn: fInitiate, body: []byte("guest")}); err != nil {
		return err
	}
	m, err := s.expect(3, ppidControl, 0, fAccept)
	if err != nil {
		return err
	}
	if err := s.checkIndication("B"); err != nil {
		return err
	}
	fmt.Printf("B: the host accepted the session on stream 3 (%q)\n", m.body)
	sizes := []int{2, 64, 515, 516, 1000, 1150}
	for i, n := range sizes {
		seg := bytes.Repeat([]byte{byte(0xa0 + i)}, n)
		if err := s.send(msg{stream: 3, ppid: ppidSegment, ssn: uint16(i + 1), body: seg}); err != nil {
			return err
		}
	}
	for i, n := range sizes {
		m, err := s.expect(3, ppidSegment, uint16(i+1), 0)
		if err != nil {
			return err
		}
		if !bytes.Equal(m.body, bytes.Repeat([]byte{byte(0xa0 + i)}, n)) {
			return fmt.Errorf("B: the echo of segment %d (%d octets) differs", i+1, n)
		}
	}
	fmt.Printf("B: %d segments echoed by the host, sizes %v\n", len(sizes), sizes)
	term := uint16(len(sizes) + 1)
	if err := s.send(msg{stream: 3, ppid: ppidControl, ssn: term, fn: fTerminate}); err != nil {
		return err
	}
	if _, err := s.expect(3, ppidControl, term, fTerminate); err != nil {
		return err
	}
	fmt.Println("B: Terminate answered with Terminate")
	if err := s.send(msg{stream: 4, ppid: ppidControl, ssn: 0, fn: fInitiate, body: []byte("reject me")}); err != nil {
		return err
	}
	if m, err = s.expect(4, ppidControl, 0, fReject); err != nil {
		return err
	}
	fmt.Printf("B: the host rejected the session on stream 4 (%q)\n", m.body)
	return nil
}

// phaseC sets up an association without the indication: the host must
// abort it.
func phaseC(addr string) error {
	s, connected, err := dial(addr, false)
	if s == nil {
		return err
	}
	defer unix.Close(s.fd)
	// The host aborts once the association is up: connect may see the
	// ABORT already, or the first recv.
	if connected {
		_, err = s.recv()
	}
	if errors.Is(err, unix.ECONNREFUSED) || errors.Is(err, unix.ECONNRESET) || errors.Is(err, errEOF) {
		fmt.Printf("C: without the indication the host ended the association: %v\n", err)
		return nil
	}
	return fmt.Errorf("C: an association without the indication was not ended by the host: %v", err)
}

func main() {
	listen := flag.Int("listen", 5000, "SCTP port for phase A")
	connect := flag.String("connect", "10.0.2.2:5001", "the host's SCTP address for phases B and C")
	flag.Parse()
	for _, p := range []struct {
		name string
		run  func() error
	}{
		{"A", func() error { return phaseA(*listen) }},
		{"B", func() error { return phaseB(*connect) }},
		{"C", func() error { return phaseC(*connect) }},
	} {
		if err := p.run(); err != nil {
			fmt.Printf("SCTPPEER-FAIL phase %s: %v\n", p.name, err)
			os.Exit(1)
		}
	}
	fmt.Println("SCTPPEER-OK")
}
