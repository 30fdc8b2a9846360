package tuf

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// The startup of DDP over TUF: "negotiating the use of TUF is the
// responsibility of the ULP" (4.3), so this stack defines the exchange for
// DDP, on the TCP connection itself before the first FPDU, as a three-way
// handshake (the draft's suggestion): the Initiator sends a Request with
// its key, the Responder answers with a Reply with its key (or a reject),
// the Initiator confirms with an Ack. Each side sends FPDUs only once it
// knows the other has enabled TUF: the Initiator after its Ack (the
// Responder reads the Ack before any FPDU behind it), the Responder after
// it has read the Ack (4.3: "the remote peer will not transmit its first
// TCP segment in the new mode until it is certain that the local peer has
// actually enabled ... TUF").
//
// Frame layout (all three frames; docs/tuf.md):
//
//	octets 0-15   "TUF-DDP-REQ-v001", "TUF-DDP-REP-v001" or "TUF-DDP-ACK-v001"
//	octets 16-21  the sender's 48-bit FPDU key (zero in an Ack)
//	octet  22     flags: bit 0 ULPDU packing (must be 0: DDP over TUF runs
//	              without packing), bit 1 reject (Reply only)
//	octet  23     reserved, 0
//	octets 24-25  private data length, at most MaxPrivateData
//	octets 26-    private data

// Frame kinds.
const (
	startupHeaderLen = 26
	// MaxPrivateData bounds a startup frame's private data (as MPA's,
	// RFC 5044 7.1).
	MaxPrivateData = 512
	flagPack       = 0x01
	flagReject     = 0x02
)

var (
	kindRequest = []byte("TUF-DDP-REQ-v001")
	kindReply   = []byte("TUF-DDP-REP-v001")
	kindAck     = []byte("TUF-DDP-ACK-v001")
)

// StartupFrame is one frame of the startup exchange.
type StartupFrame struct {
	Key         Key
	Reject      bool
	PrivateData []byte
}

// ErrBadStartup is wrapped by every error about a startup frame that is
// not what this stack sends.
var ErrBadStartup = errors.New("tuf: bad startup frame")

// RejectError is the Responder's reject, with its Reply.
type RejectError struct{ Reply StartupFrame }

func (e *RejectError) Error() string {
	return fmt.Sprintf("tuf: the peer rejected the connection (%d octets of private data)", len(e.Reply.PrivateData))
}

// appendStartup appends a startup frame of the given kind (kindRequest,
// kindReply or kindAck) to dst.
func appendStartup(dst []byte, kind []byte, f StartupFrame) ([]byte, error) {
	if len(f.PrivateData) > MaxPrivateData {
		return dst, fmt.Errorf("tuf: %d octets of private data, at most %d", len(f.PrivateData), MaxPrivateData)
	}
	dst = append(dst, kind...)
	k := uint64(f.Key) & KeyMask
	dst = append(dst, byte(k>>40), byte(k>>32), byte(k>>24), byte(k>>16), byte(k>>8), byte(k))
	var flags byte
	if f.Reject {
		flags |= flagReject
	}
	dst = append(dst, flags, 0)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(f.PrivateData)))
	return append(dst, f.PrivateData...), nil
}

// ParseStartupHeader checks the first 26 octets of a startup frame of the
// given kind and returns the frame (without its private data) and the
// length of the private data that follows.
func ParseStartupHeader(b []byte, kind string) (StartupFrame, int, error) {
	want := map[string][]byte{"REQ": kindRequest, "REP": kindReply, "ACK": kindAck}[kind]
	if want == nil {
		return StartupFrame{}, 0, fmt.Errorf("tuf: unknown startup frame kind %q", kind)
	}
	if len(b) < startupHeaderLen {
		return StartupFrame{}, 0, fmt.Errorf("%w: %d octets, a header has %d", ErrBadStartup, len(b), startupHeaderLen)
	}
	if !bytes.Equal(b[:16], want) {
		return StartupFrame{}, 0, fmt.Errorf("%w: starts %q, want %q (is the peer speaking DDP over TUF, and in the other role?)", ErrBadStartup, b[:16], want)
	}
	var kb [8]byte
	copy(kb[2:], b[16:22])
	f := StartupFrame{Key: Key(binary.BigEndian.Uint64(kb[:]))}
	flags := b[22]
	switch {
	case flags&flagPack != 0:
		return f, 0, fmt.Errorf("%w: the peer asks for ULPDU packing, which DDP over TUF does not use (DDP needs each segment's length from its FPDU)", ErrBadStartup)
	case flags&^(flagPack|flagReject) != 0 || b[23] != 0:
		return f, 0, fmt.Errorf("%w: reserved bits set (flags %#02x, octet 23 %#02x)", ErrBadStartup, flags, b[23])
	case flags&flagReject != 0 && kind != "REP":
		return f, 0, fmt.Errorf("%w: reject flag in a %s frame", ErrBadStartup, kind)
	}
	f.Reject = flags&flagReject != 0
	n := int(binary.BigEndian.Uint16(b[24:]))
	if n > MaxPrivateData {
		return f, 0, fmt.Errorf("%w: %d octets of private data, at most %d", ErrBadStartup, n, MaxPrivateData)
	}
	return f, n, nil
}

func readStartup(c io.Reader, kind string) (StartupFrame, error) {
	var hdr [startupHeaderLen]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return StartupFrame{}, err
	}
	f, n, err := ParseStartupHeader(hdr[:], kind)
	if err != nil {
		return f, err
	}
	f.PrivateData = make([]byte, n)
	_, err = io.ReadFull(c, f.PrivateData)
	return f, err
}

func writeStartup(c io.Writer, kind []byte, f StartupFrame) error {
	b, err := appendStartup(nil, kind, f)
	if err != nil {
		return err
	}
	_, err = c.Write(b)
	return err
}

// DefaultStartupTimeout bounds the exchange when ctx has no deadline.
const DefaultStartupTimeout = 10 * time.Second

// withDeadline applies ctx's deadline (or the default) to c and unblocks
// c when ctx is cancelled; the returned function undoes both.
func withDeadline(ctx context.Context, c net.Conn) func() {
	d := time.Now().Add(DefaultStartupTimeout)
	if cd, ok := ctx.Deadline(); ok && cd.Before(d) {
		d = cd
	}
	c.SetDeadline(d)
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	return func() {
		stop()
		c.SetDeadline(time.Time{})
	}
}

func startupErr(ctx context.Context, err error, what string) error {
	if ctx.Err() != nil {
		return fmt.Errorf("tuf: %s: %w", what, ctx.Err())
	}
	if errors.Is(err, ErrBadStartup) {
		return err
	}
	return fmt.Errorf("tuf: %s: %w", what, err)
}

// Initiate runs the Initiator's side of the startup on c with the local
// key and private data, and returns the Responder's Reply. A reject comes
// back as *RejectError (c stays open; the caller closes it).
func Initiate(ctx context.Context, c net.Conn, local StartupFrame) (StartupFrame, error) {
	defer withDeadline(ctx, c)()
	if err := writeStartup(c, kindRequest, StartupFrame{Key: local.Key, PrivateData: local.PrivateData}); err != nil {
		return StartupFrame{}, startupErr(ctx, err, "sending the Request")
	}
	reply, err := readStartup(c, "REP")
	if err != nil {
		return reply, startupErr(ctx, err, "waiting for the Reply")
	}
	if reply.Reject {
		return reply, &RejectError{Reply: reply}
	}
	if err := writeStartup(c, kindAck, StartupFrame{}); err != nil {
		return reply, startupErr(ctx, err, "sending the Ack")
	}
	return reply, nil
}

// Respond runs the Responder's side: it reads the Request, asks decide for
// the Reply (its Key, PrivateData and Reject), sends it, and, unless it
// rejected, waits for the Ack. It returns the Request. After a reject it
// returns a *RejectError.
func Respond(ctx context.Context, c net.Conn, decide func(req StartupFrame) StartupFrame) (StartupFrame, error) {
	defer withDeadline(ctx, c)()
	req, err := readStartup(c, "REQ")
	if err != nil {
		return req, startupErr(ctx, err, "waiting for the Request (is the peer also a Responder?)")
	}
	reply := decide(req)
	if err := writeStartup(c, kindReply, reply); err != nil {
		return req, startupErr(ctx, err, "sending the Reply")
	}
	if reply.Reject {
		return req, &RejectError{Reply: reply}
	}
	if _, err := readStartup(c, "ACK"); err != nil {
		return req, startupErr(ctx, err, "waiting for the Ack")
	}
	return req, nil
}
