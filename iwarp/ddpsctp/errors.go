package ddpsctp

import (
	"errors"
	"fmt"
)

// FormatError is a DATA chunk payload this layer cannot carry or parse.
type FormatError struct {
	PPID   uint32
	Detail string
}

func (e *FormatError) Error() string { return "ddpsctp: " + e.Detail }

// SequenceError is a chunk that breaks the legal sequences of a DDP Stream
// Session (section 6) or fails the DDP-SSN validity check (section 10): the
// session is terminated.
type SequenceError struct {
	Stream uint16
	SSN    uint16
	Detail string
}

func (e *SequenceError) Error() string {
	return fmt.Sprintf("ddpsctp: stream %d, DDP-SSN %d: %s; the session is terminated (section 6.1)", e.Stream, e.SSN, e.Detail)
}

// HeldError terminates a session whose peer sent a chunk ahead of a gap in
// its DDP-SSNs when holding it would take what the association's sessions
// hold ahead of gaps past Config.MaxHeld: the peer sends on past a chunk it
// does not send, or that is late beyond what a peer that means well has
// outstanding (draft-ietf-rddp-sctp section 10: no resources on the
// assumption that DDP-SSNs are valid; an invalid one may terminate the
// DDP Stream).
type HeldError struct {
	Stream uint16
	SSN    uint16 // the chunk refused
	Next   uint16 // the DDP-SSN missing, the next one expected
	Octets int    // the chunk's octets
	Held   int    // what the association held then
	Limit  int    // Config.MaxHeld
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("ddpsctp: stream %d, DDP-SSN %d: %d octets to hold ahead of the missing DDP-SSN %d, with %d held already, pass the association's bound of %d octets held ahead of gaps (Config.MaxHeld); the peer sends on past a gap it does not fill, and the session is terminated (draft-ietf-rddp-sctp section 10). If the peer legitimately has more outstanding, raise Config.MaxHeld", e.Stream, e.SSN, e.Octets, e.Next, e.Held, e.Limit)
}

// AdaptationError refuses an association without the DDP Adaptation Layer
// Indication (sections 7.1 and 11.1): DDP must not run on it.
type AdaptationError struct {
	Indication uint32
	Present    bool
}

func (e *AdaptationError) Error() string {
	if !e.Present {
		return "ddpsctp: the peer sent no Adaptation Layer Indication in its INIT or INIT-ACK, so it does not support DDP (section 11.1); enable it on the peer (Linux: the SCTP_ADAPTATION_LAYER socket option with 1)"
	}
	return fmt.Sprintf("ddpsctp: the peer's Adaptation Layer Indication is %#x, not DDP's 0x1 (section 11.1); DDP must not run on this association", e.Indication)
}

// RejectError is the passive side's DDP Stream Session Reject (6.3), with
// its private data.
type RejectError struct {
	Stream      uint16
	PrivateData []byte
}

func (e *RejectError) Error() string {
	return fmt.Sprintf("ddpsctp: the peer rejected the session on stream %d (%d octets of private data)", e.Stream, len(e.PrivateData))
}

// TerminatedError is a session the peer ended with a Terminate before it
// was accepted: a passive side at its limit of pending requests (6.4), or
// one that refused the stream.
type TerminatedError struct {
	Stream uint16
}

func (e *TerminatedError) Error() string {
	return fmt.Sprintf("ddpsctp: the peer answered the Initiate on stream %d with a Terminate (not under its ULP's control: too many pending requests, section 6.4, or the stream is in use)", e.Stream)
}

// SizeError refuses a DDP segment larger than the MULPDU (section 9) or
// private data larger than 512 octets (5.2.3).
type SizeError struct {
	What     string
	Len, Max int
}

func (e *SizeError) Error() string {
	return fmt.Sprintf("ddpsctp: %s of %d octets is larger than the maximum %d", e.What, e.Len, e.Max)
}

// StreamError refuses a stream number: out of the association's range, or
// already used for a session (section 6.6 forbids reusing a stream while
// chunks of a prior session may be outstanding; this layer starts each new
// session on a fresh stream).
type StreamError struct {
	Stream  uint16
	Streams int
	Used    bool
}

func (e *StreamError) Error() string {
	if e.Used {
		return fmt.Sprintf("ddpsctp: stream %d already carried a session on this association; pick another (section 6.6)", e.Stream)
	}
	return fmt.Sprintf("ddpsctp: stream %d is out of range: the association has %d streams (0 to %d)", e.Stream, e.Streams, e.Streams-1)
}

// ErrClosed is returned by calls on a closed Conn or finished session.
var ErrClosed = errors.New("ddpsctp: closed")

// ErrAssociationEnded ends the sessions of an association that ended
// (SHUTDOWN or ABORT) before their Terminates.
var ErrAssociationEnded = errors.New("ddpsctp: the association ended")
