package sctp

import (
	"errors"
	"fmt"
)

var (
	// ErrClosed is returned by calls on an association or endpoint that
	// this end closed (Close, Abort, Endpoint.Close).
	ErrClosed = errors.New("sctp: association closed")
	// ErrShutdown is returned by SendMsg once a graceful shutdown has begun
	// at either end (RFC 9260 9.2: no new data after SHUTDOWN).
	ErrShutdown = errors.New("sctp: association is shutting down; no new messages can be sent")
	// ErrPeerUnreachable: Association.Max.Retrans timeouts in a row went
	// unanswered (RFC 9260 8.1); the association is gone.
	ErrPeerUnreachable = errors.New("sctp: peer unreachable: retransmission limit reached without an answer")
	// ErrEndpointClosed is returned by Accept and Dial on a closed endpoint.
	ErrEndpointClosed = errors.New("sctp: endpoint closed")
)

// AbortError is how an association ended by an ABORT reports itself:
// every blocking call on it returns one. Remote says the peer sent the
// ABORT; otherwise this end sent it (Abort, or a protocol error it found).
type AbortError struct {
	Remote bool
	Causes []ErrorCause
}

func (e *AbortError) Error() string {
	who := "this end"
	if e.Remote {
		who = "the peer"
	}
	if len(e.Causes) == 0 {
		return "sctp: association aborted by " + who + " (no cause given)"
	}
	s := "sctp: association aborted by " + who + ": " + e.Causes[0].String()
	for _, c := range e.Causes[1:] {
		s += "; " + c.String()
	}
	return s
}

// HasCause reports whether the ABORT carried a cause with this code.
func (e *AbortError) HasCause(code uint16) bool {
	for _, c := range e.Causes {
		if c.Code == code {
			return true
		}
	}
	return false
}

// MessageTooLargeError is SendMsg's refusal of a message that could never
// be delivered: larger than the peer's receive buffer (its initial a_rwnd,
// all of which a message must fit in for reassembly) or than this end's
// SendBuffer.
type MessageTooLargeError struct {
	Size  int    // the message's octets
	Limit int    // the largest message that can be sent
	What  string // which limit: "peer receive window" or "SendBuffer"
}

func (e *MessageTooLargeError) Error() string {
	return fmt.Sprintf("sctp: message of %d octets is larger than the %s (%d octets); split it, or raise the limit (Config.ReceiveBuffer at the peer, Config.SendBuffer here)", e.Size, e.What, e.Limit)
}

// StreamError is SendMsg's refusal of a stream number outside the
// negotiated outbound streams.
type StreamError struct {
	Stream  uint16
	Streams uint16 // the outbound streams the association has
}

func (e *StreamError) Error() string {
	return fmt.Sprintf("sctp: stream %d does not exist: the association has %d outbound streams (0..%d); ask for more with Config.OutboundStreams, the peer with its MaxInboundStreams", e.Stream, e.Streams, e.Streams-1)
}

// HandshakeError is Dial's failure to set up the association: no answer
// to INIT or COOKIE ECHO after MaxInitRetransmissions, or a Stale Cookie
// Error each time.
type HandshakeError struct {
	State   string // "COOKIE-WAIT" or "COOKIE-ECHOED"
	Reason  string
	Attempt int
}

func (e *HandshakeError) Error() string {
	return fmt.Sprintf("sctp: association not established (%s, after %d attempts): %s", e.State, e.Attempt, e.Reason)
}
