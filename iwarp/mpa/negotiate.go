package mpa

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"
)

// Role is a side of the MPA startup (RFC 5044 7.1): the Initiator sends the
// Request Frame, the Responder the Reply. It is unrelated to who sent the
// TCP SYN.
type Role uint8

const (
	Initiator Role = iota
	Responder
)

func (r Role) String() string {
	if r == Initiator {
		return "initiator"
	}
	return "responder"
}

// DefaultStartupTimeout bounds the wait for the peer's startup frame
// (RFC 5044 7.1.3 rules 8 and 10) when neither the Config nor the context
// sets one.
const DefaultStartupTimeout = 10 * time.Second

// Config is one endpoint's side of the startup negotiation.
type Config struct {
	// Rev is the MPA revision to offer: 1 (RFC 5044) or 2 (RFC 6581). Zero
	// means 2, which every current peer (Linux siw among them) speaks.
	Rev uint8
	// Markers asks the peer to put markers on what it sends us.
	Markers bool
	// NoCRC declares a preference not to use CRCs (RFC 5044 4.4 case 2a);
	// CRCs are still used when the peer asks for them.
	NoCRC bool
	// PrivateData is the consumer's private data for the frame we send.
	PrivateData []byte
	// MaxPrivateData bounds the peer's private data (RFC 5044 7.1.3
	// rule 9); 0 means 512.
	MaxPrivateData int
	// IRD and ORD are offered in revision 2 frames (RFC 6581 3): the RDMA
	// Read Requests we accept at once, and those we want to issue at once.
	IRD, ORD uint16
	// P2P requests peer-to-peer mode: the Initiator sends an RTR message
	// of one of the types in RTR as its first FPDU (RFC 6581 3, 4).
	P2P bool
	RTR RTR
	// Permissive accepts RDMAC (revision 0) peers as RFC 5044 appendix C
	// describes: DDP/RDMAP version 0, markers and CRC on both ways.
	Permissive bool
	// Timeout bounds the whole startup; 0 means DefaultStartupTimeout
	// unless ctx has an earlier deadline.
	Timeout time.Duration
	// Accept, on a Responder, decides on the Request's private data
	// (RFC 5044 7.1.3 rule 6). Returning reject=true sends a Reply with R
	// set; reply is the private data to return either way. Nil accepts.
	Accept func(req *StartupFrame) (reply []byte, reject bool)
}

// Params is the outcome of a successful startup: what each half connection
// of Full Operation uses.
type Params struct {
	Role  Role
	Local StartupFrame // the frame we sent
	Peer  StartupFrame // the frame we received
	// TxMarkers: we insert markers in what we send (the peer's M bit).
	// RxMarkers: the peer inserts markers in what we receive (our M bit).
	TxMarkers, RxMarkers bool
	// CRC is on both ways when either side set C (RFC 5044 7.1.1).
	CRC bool
	// Rev is the MPA revision the peer sent; DDPVersion the DDP/RDMAP
	// version in use: 1, or 0 with an RDMAC peer (appendix C).
	Rev        uint8
	DDPVersion uint8
	// IRD is how many inbound RDMA Read Requests we accept at once, ORD
	// how many we may have outstanding: ORD never exceeds the peer's IRD.
	IRD, ORD uint16
	// P2P and RTR: peer-to-peer mode was agreed and the RTR type to use.
	P2P bool
	RTR RTR
}

// Revision is the MPA revision the connection runs: the Reply's, since the
// Responder answers with at most the Request's revision (RFC 6581 3).
func (p *Params) Revision() uint8 {
	if p.Role == Responder {
		return p.Local.Rev
	}
	return p.Peer.Rev
}

// WaitsForFirstFPDU reports whether this side must receive an FPDU before
// it may send one: the Responder's duty of RFC 5044 7.1.3 rule 4.
func (p *Params) WaitsForFirstFPDU() bool { return p.Role == Responder }

// RejectError reports a startup that ended with a Reply whose R bit was set
// (RFC 5044 7.1.3 rules 2 and 3). MPA has exited and the TCP connection is
// left open for the consumer to close or reuse.
type RejectError struct {
	Reply StartupFrame
	// Code is non-zero when the rejection has an MPA error number, such as
	// ErrNoMatchingRTR for an RTR mismatch (RFC 6581 4).
	Code ErrorCode
}

func (e *RejectError) Error() string {
	s := "mpa: connection rejected by the Responder"
	if e.Code != 0 {
		s += ": " + e.Code.String()
	}
	if n := len(e.Reply.PrivateData); n > 0 {
		s += fmt.Sprintf(" (%d octets of private data in the Reply)", n)
	}
	return s
}

// Initiate runs the Initiator's side of the startup on c (RFC 5044 7.1.3
// rules 1, 3, 5, 8): it sends a Request Frame and waits for the Reply. On
// an improperly formatted Reply, an Initiator/Initiator startup or a
// revision it cannot use it closes c and returns an *Error with code
// ErrBadStartupFrame. On a rejection it returns a *RejectError and leaves c
// open. It reads nothing past the Reply Frame.
func Initiate(ctx context.Context, c net.Conn, cfg Config) (*Params, error) {
	stop := deadline(ctx, c, cfg.Timeout)
	defer stop()
	req := cfg.frame(false)
	b, err := req.Append(nil)
	if err != nil {
		return nil, err
	}
	if _, err := c.Write(b); err != nil {
		return nil, startupIOError(ctx, err, "sending the MPA Request")
	}
	rep, err := ReadStartupFrame(c, cfg.MaxPrivateData)
	if err != nil {
		return nil, failStartup(ctx, c, err, "the MPA Reply")
	}
	if !rep.Reply {
		// RFC 5044 7.1.3 rule 8: a Request where a Reply belongs.
		c.Close()
		return nil, errorf(ErrBadStartupFrame, 0, "received an MPA Request where the Reply belongs: both ends started as Initiator")
	}
	p := &Params{Role: Initiator, Local: req, Peer: rep, Rev: rep.Rev}
	if err := p.settle(&cfg); err != nil {
		c.Close()
		return nil, err
	}
	if rep.Reject {
		return nil, &RejectError{Reply: rep}
	}
	if p.P2P && p.RTR == 0 {
		c.Close()
		return nil, errorf(ErrNoMatchingRTR, 0, "peer-to-peer Reply names no RTR type this side offered (%v)", cfg.rtr())
	}
	return p, nil
}

// Respond runs the Responder's side (RFC 5044 7.1.3 rules 2, 5, 6, 8): it
// waits for a Request, asks cfg.Accept about it and sends the Reply. After
// a successful Respond the consumer must not send an FPDU before it has
// received one (rule 4). Errors are reported as for Initiate; when the
// consumer rejects, the Reply with R set is sent, a *RejectError returned
// and c left open.
func Respond(ctx context.Context, c net.Conn, cfg Config) (*Params, error) {
	stop := deadline(ctx, c, cfg.Timeout)
	defer stop()
	req, err := ReadStartupFrame(c, cfg.MaxPrivateData)
	if err != nil {
		return nil, failStartup(ctx, c, err, "the MPA Request (is the peer also a Responder?)")
	}
	if req.Reply {
		c.Close()
		return nil, errorf(ErrBadStartupFrame, 0, "received an MPA Reply where a Request belongs: both ends started as Responder")
	}
	rep := cfg.frame(true)
	p := &Params{Role: Responder, Peer: req, Rev: req.Rev}
	switch {
	case req.Rev == 0 && cfg.Permissive:
		// Appendix C.2.4: answer an RDMAC Initiator in kind.
		rep.Rev, rep.Markers, rep.CRC, rep.Enhanced = 0, true, true, false
	case req.Rev == 0 || req.Rev > 2:
		// Appendix C.2.1: reply with our revision, then close.
		rep.Enhanced = false
		if b, err := rep.Append(nil); err == nil {
			c.Write(b)
		}
		c.Close()
		return nil, errorf(ErrBadStartupFrame, 0, "the Initiator speaks MPA revision %d, this side %s", req.Rev, revisions(cfg.Permissive))
	case req.Rev < rep.Rev:
		rep.Rev = req.Rev // RFC 6581 3: answer a revision 1 peer with revision 1
		rep.Enhanced = false
	}
	if rep.Enhanced && !req.Enhanced {
		rep.Enhanced = false
	}
	var rejectCode ErrorCode
	if rep.Enhanced {
		// RFC 6581 3: do not offer more outbound reads than the peer
		// takes; in peer-to-peer mode choose one RTR type both support.
		rep.Params.ORD = min(rep.Params.ORD, req.Params.IRD)
		if req.Params.P2P {
			rep.Params.P2P = true
			rep.Params.RTR = pickRTR(req.Params.RTR & cfg.rtr())
			if rep.Params.RTR == 0 {
				rejectCode = ErrNoMatchingRTR
				rep.Reject = true
			}
		} else {
			rep.Params.P2P, rep.Params.RTR = false, 0
		}
	}
	if cfg.Accept != nil && !rep.Reject {
		pd, reject := cfg.Accept(&req)
		rep.PrivateData, rep.Reject = pd, reject
	}
	b, err := rep.Append(nil)
	if err != nil {
		return nil, err
	}
	if _, err := c.Write(b); err != nil {
		return nil, startupIOError(ctx, err, "sending the MPA Reply")
	}
	p.Local = rep
	if rep.Reject {
		return nil, &RejectError{Reply: rep, Code: rejectCode}
	}
	if err := p.settle(&cfg); err != nil {
		c.Close()
		return nil, err
	}
	return p, nil
}

// frame builds the startup frame cfg asks for.
func (cfg *Config) frame(reply bool) StartupFrame {
	rev := cfg.Rev
	if rev == 0 {
		rev = 2
	}
	f := StartupFrame{
		Reply:       reply,
		Markers:     cfg.Markers,
		CRC:         !cfg.NoCRC,
		Rev:         rev,
		PrivateData: cfg.PrivateData,
	}
	if rev >= 2 {
		f.Enhanced = true
		f.Params = EnhancedParams{P2P: cfg.P2P, IRD: min(cfg.IRD, MaxIRD), ORD: min(cfg.ORD, MaxIRD)}
		if cfg.P2P {
			f.Params.RTR = cfg.rtr()
		}
	}
	return f
}

// rtr is the set of RTR types this side supports in peer-to-peer mode.
func (cfg *Config) rtr() RTR {
	if cfg.RTR == 0 {
		return RTRWrite | RTRRead | RTRSend
	}
	return cfg.RTR
}

// pickRTR chooses one RTR type from a set, preferring a zero-length Write
// (no receive buffer or read credit consumed), then a Read, then a Send.
func pickRTR(set RTR) RTR {
	for _, r := range []RTR{RTRWrite, RTRRead, RTRSend} {
		if set&r != 0 {
			return r
		}
	}
	return 0
}

// settle derives the Full Operation parameters from both frames.
func (p *Params) settle(cfg *Config) error {
	local, peer := &p.Local, &p.Peer
	switch {
	case peer.Rev == 0 && !cfg.Permissive:
		return errorf(ErrBadStartupFrame, 0, "the peer speaks MPA revision 0 (RDMAC); set Permissive to accept it (RFC 5044 appendix C)")
	case peer.Rev > 2:
		return errorf(ErrBadStartupFrame, 0, "the peer speaks MPA revision %d, this side %s", peer.Rev, revisions(cfg.Permissive))
	}
	p.DDPVersion = 1
	p.TxMarkers = peer.Markers
	p.RxMarkers = local.Markers
	p.CRC = local.CRC || peer.CRC
	if peer.Rev == 0 {
		// Appendix C.2.5: an RDMAC peer needs version 0 DDP/RDMAP with
		// markers and CRC, whatever was asked.
		p.DDPVersion = 0
		p.TxMarkers, p.RxMarkers, p.CRC = true, true, true
	}
	p.IRD = min(cfg.IRD, MaxIRD)
	p.ORD = min(cfg.ORD, MaxIRD)
	if local.Enhanced && peer.Enhanced {
		p.ORD = min(p.ORD, peer.Params.IRD)
		if p.Role == Initiator {
			p.P2P = local.Params.P2P && peer.Params.P2P
			p.RTR = pickRTR(peer.Params.RTR & local.Params.RTR)
		} else {
			p.P2P = local.Params.P2P
			p.RTR = local.Params.RTR
		}
		if !p.P2P {
			p.RTR = 0
		}
	}
	return nil
}

func revisions(permissive bool) string {
	if permissive {
		return "0, 1 and 2"
	}
	return "1 and 2"
}

// deadline applies the startup timeout to c and makes a cancelled ctx
// interrupt blocked I/O. The returned func undoes both.
func deadline(ctx context.Context, c net.Conn, timeout time.Duration) func() {
	if timeout <= 0 {
		timeout = DefaultStartupTimeout
	}
	d := time.Now().Add(timeout)
	if cd, ok := ctx.Deadline(); ok && cd.Before(d) {
		d = cd
	}
	c.SetDeadline(d)
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(fired)
		c.SetDeadline(time.Unix(1, 0))
	})
	return func() {
		if !stop() {
			// The cancellation has started: let it finish before the
			// deadline is cleared, or its deadline in the past could
			// land after the clearing and fail every later read.
			<-fired
		}
		c.SetDeadline(time.Time{})
	}
}

// failStartup closes c after a failed read of the peer's frame and turns
// the failure into the error the consumer should see.
func failStartup(ctx context.Context, c net.Conn, err error, what string) error {
	c.Close()
	var me *Error
	if errors.As(err, &me) {
		me.Detail = "in " + what + ": " + me.Detail
		return me
	}
	return startupIOError(ctx, err, "waiting for "+what)
}

func startupIOError(ctx context.Context, err error, what string) error {
	if ctx.Err() != nil {
		return fmt.Errorf("mpa: %s: %w", what, ctx.Err())
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return &Error{Code: ErrTCPClosed, Detail: what + ": startup timed out (RFC 5044 7.1.3 rule 10)"}
	}
	return &Error{Code: ErrTCPClosed, Detail: what + ": " + err.Error()}
}
