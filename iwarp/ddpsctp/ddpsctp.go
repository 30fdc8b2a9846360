// Package ddpsctp is the DDP/SCTP adaptation layer (draft-ietf-rddp-sctp,
// later RFC 5043): the Lower Layer Protocol that carries DDP segments
// (RFC 5041) over an SCTP association instead of MPA over TCP.
//
// Every user message it hands SCTP is an unordered DATA chunk (section 10)
// whose payload starts with the 16-bit DDP-SSN (5.2.1): a DDP Segment
// Chunk (PPID 0x10, 5.2.2) or a DDP Stream Session Control message (PPID
// 0x11, 5.2.3: Initiate, Accept, Reject, Terminate, with up to 512 octets
// of private data). A DDP Stream is the pair of like-numbered SCTP streams
// (section 8); several run on one association, each with its own DDP
// Stream Session (section 6).
//
// The layer runs over anything that satisfies Association: the userspace
// SCTP association of package sctp, or the in-memory Pipe of the tests.
// New refuses an association whose peer did not send the Adaptation Layer
// Indication for DDP (sections 7.1 and 11.1).
//
//	c, _ := ddpsctp.New(assoc, ddpsctp.Config{})
//	s, _ := c.Initiate(ctx, 1, privateData) // active side
//	s.Send(ctx, ddpSegment)
//
//	r, _ := c.Listen(ctx) // passive side
//	s, _ := r.Accept(ctx, reply)
//	seg, _ := s.Receive(ctx)
//
// Segments are handed to DDP in DDP-SSN order (the sender's order, RFC 5041
// 3 item 5): the layer holds those that arrive early. That keeps the
// placement engine the one MPA feeds; placing them on arrival is an
// optimisation this package leaves for later.
//
// Flow control: on a FlowControlled association (package sctp's) the
// segments that wait for Receive stay charged to SCTP's receive window
// until the ULP takes them, so a ULP that does not keep up closes the
// window on the peer's sender; chunks held ahead of a gap are bounded by
// Config.MaxHeld instead, so that the chunk filling the gap always gets
// in. The association's sessions share its window: Session.CloseRead
// frees a session nobody will read. See docs/ddp-sctp.md.
package ddpsctp

import "context"

// Payload Protocol Identifiers (section 5.2).
const (
	PPIDSegment uint32 = 0x10 // DDP Segment Chunk
	PPIDControl uint32 = 0x11 // DDP Stream Session Control
)

// AdaptationDDP is the Adaptation Layer Indication for DDP (5.1), sent in
// the INIT or INIT-ACK parameter 0xC006 (RFC 5061 4.2.7).
const AdaptationDDP uint32 = 1

// Sizes of the formats.
const (
	SSNLen           = 2   // DDP-SSN
	ControlHeaderLen = 4   // DDP-SSN and Function Code
	MaxPrivateData   = 512 // 5.2.3
	// MinMULPDU is the least MULPDU the layer offers: a Session Control
	// message with 512 octets of private data (section 9).
	MinMULPDU = 516
	// MaxInFlight bounds the chunks of one stream a sender has without
	// acknowledgment, so that DDP-SSNs compare without ambiguity (section
	// 10); the receiver's validity check uses the same window.
	MaxInFlight = 32767
	// bundleReserve keeps a full DDP segment short enough that a SACK
	// chunk (16 octets without gap blocks) still fits beside it (section
	// 9: "below the theoretical maximum in order to allow bundling of
	// Control Chunks").
	bundleReserve = 16
)

// Message is one SCTP user message.
type Message struct {
	Stream    uint16
	PPID      uint32
	Unordered bool
	Data      []byte
}

// Association is what the adaptation layer needs of an SCTP association
// (RFC 4960) whose endpoints exchanged Adaptation Layer Indications.
type Association interface {
	// SendUnordered hands SCTP one user message for stream as a single
	// unordered DATA chunk (U flag set, RFC 4960 3.3.1) with ppid. It
	// returns once SCTP has taken the message: it will be delivered or
	// the association fails. msg is the caller's again then (SCTP copies
	// what it keeps).
	SendUnordered(ctx context.Context, stream uint16, ppid uint32, msg []byte) error
	// Receive returns the next user message from the peer, on any
	// stream, in the order SCTP delivers them. The message's Data is the
	// caller's.
	Receive(ctx context.Context) (Message, error)
	// WaitAcked waits until the peer has acknowledged every message sent
	// so far (Linux's SCTP_SENDER_DRY_EVENT).
	WaitAcked(ctx context.Context) error
	// PeerAdaptation is the Adaptation Layer Indication the peer sent in
	// its INIT or INIT-ACK, and whether it sent one.
	PeerAdaptation() (uint32, bool)
	// Streams is the number of streams open in both directions.
	Streams() int
	// MaxUnfragmented is the largest user message SCTP sends in one DATA
	// chunk, without SCTP or IP fragmentation, on the current path.
	MaxUnfragmented() int
	// Close ends the association (SHUTDOWN) after what was sent.
	Close() error
}

// FlowControlled is an Association whose Receive leaves each message's
// octets charged to the association's receive window (RFC 9260 6.2: the
// a_rwnd it advertises) until Credit gives them back: package sctp's, by
// FromSCTP. On one the layer keeps the segments that wait for the ULP's
// Receive charged, so that a ULP that does not keep up closes the window
// on the peer's sender rather than growing the layer's queue; everything
// else (Session Control messages, chunks held ahead of a DDP-SSN gap,
// chunks dropped) it credits as it takes it, and Charge puts a held
// chunk back on the window when the gap closes and it joins the queue.
// An Association that is not FlowControlled has credited each message by
// the time Receive returns it.
type FlowControlled interface {
	Association
	// Credit gives n octets back to the receive window.
	Credit(n int)
	// Charge takes n octets of the receive window again, even past it.
	Charge(n int)
}
