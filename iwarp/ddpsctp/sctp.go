package ddpsctp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/openrnic/rnic/iwarp/sctp"
)

// FromSCTP adapts an association of package sctp (userspace SCTP over UDP,
// RFC 6951) to the layer's Association. It is FlowControlled: its Receive
// takes messages with RecvMsgHeld, so whoever calls Receive (New's reader)
// must Credit their octets back.
func FromSCTP(a *sctp.Association) Association { return &sctpAssoc{a: a} }

type sctpAssoc struct{ a *sctp.Association }

func (s *sctpAssoc) SendUnordered(ctx context.Context, stream uint16, ppid uint32, msg []byte) error {
	return s.a.SendMsg(ctx, stream, ppid, true, msg)
}

func (s *sctpAssoc) Receive(ctx context.Context) (Message, error) {
	m, err := s.a.RecvMsgHeld(ctx)
	return Message{Stream: m.Stream, PPID: m.PPID, Unordered: m.Unordered, Data: m.Data}, err
}

func (s *sctpAssoc) Credit(n int) { s.a.Credit(n) }
func (s *sctpAssoc) Charge(n int) { s.a.Charge(n) }

func (s *sctpAssoc) WaitAcked(ctx context.Context) error { return s.a.WaitAcked(ctx) }

// Release hands a received message's buffer back (Session.ReceiveFunc).
func (s *sctpAssoc) Release(data []byte) { s.a.Release(data) }

func (s *sctpAssoc) PeerAdaptation() (uint32, bool) {
	if p := s.a.PeerAdaptation(); p != nil {
		return *p, true
	}
	return 0, false
}

// Streams is the smaller of the two directions' counts: a DDP Stream needs
// the like-numbered stream both ways (section 8).
func (s *sctpAssoc) Streams() int {
	out, in := s.a.Streams()
	return int(min(out, in))
}

func (s *sctpAssoc) MaxUnfragmented() int { return s.a.MaxChunkData() }

func (s *sctpAssoc) RemoteAddr() net.Addr { return s.a.RemoteAddr() }

// closeTimeout bounds the graceful SHUTDOWN of Close.
const closeTimeout = 5 * time.Second

func (s *sctpAssoc) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	return s.a.Close(ctx)
}

// SCTPConfig returns cfg set up for DDP: the Adaptation Layer Indication 1
// in INIT and INIT-ACK (sections 5.1, 11.1), and as many streams inbound
// as outbound (section 8).
func SCTPConfig(cfg sctp.Config) sctp.Config {
	ind := AdaptationDDP
	cfg.AdaptationIndication = &ind
	if cfg.OutboundStreams == 0 {
		cfg.OutboundStreams = 16
	}
	cfg.MaxInboundStreams = cfg.OutboundStreams
	return cfg
}

// Dial sets up an association over UDP to raddr (host:port, the peer's
// encapsulation port) and starts the layer on it; the association is the
// Conn's (Close ends it). An association whose peer does not indicate DDP
// is aborted with the AdaptationError.
func Dial(ctx context.Context, raddr string, scfg sctp.Config, cfg Config) (*Conn, error) {
	ua, err := net.ResolveUDPAddr("udp", raddr)
	if err != nil {
		return nil, err
	}
	laddr := ":0"
	if ua.IP != nil && ua.IP.To4() != nil {
		laddr = "0.0.0.0:0"
	}
	pc, err := net.ListenPacket("udp", laddr)
	if err != nil {
		return nil, err
	}
	a, err := sctp.Dial(ctx, pc, ua, SCTPConfig(scfg))
	if err != nil {
		pc.Close()
		return nil, fmt.Errorf("ddpsctp: setting up the SCTP association with %s: %w", raddr, err)
	}
	return start(a, cfg)
}

// start runs the layer on a, aborting a when its peer does not do DDP.
func start(a *sctp.Association, cfg Config) (*Conn, error) {
	c, err := New(FromSCTP(a), cfg)
	if err != nil {
		var ae *AdaptationError
		if errors.As(err, &ae) {
			a.Abort(sctp.UserAbort("no DDP Adaptation Layer Indication (draft-ietf-rddp-sctp 11.1)"))
		} else {
			a.Abort(sctp.UserAbort(err.Error()))
		}
		return nil, err
	}
	return c, nil
}

// Listener accepts DDP associations on a UDP port.
type Listener struct {
	ep  *sctp.Endpoint
	cfg Config
}

// Listen listens on the UDP address addr (":9899": RFC 6951's port).
func Listen(addr string, scfg sctp.Config, cfg Config) (*Listener, error) {
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return nil, err
	}
	ep, err := sctp.Listen(pc, SCTPConfig(scfg))
	if err != nil {
		pc.Close()
		return nil, err
	}
	return &Listener{ep: ep, cfg: cfg}, nil
}

// Addr is the UDP address the listener receives on.
func (l *Listener) Addr() net.Addr { return l.ep.Addr() }

// Accept waits for the next association and starts the layer on it. An
// association without the DDP indication is aborted and reported as an
// *AdaptationError; the listener keeps listening.
func (l *Listener) Accept(ctx context.Context) (*Conn, error) {
	a, err := l.ep.Accept(ctx)
	if err != nil {
		return nil, err
	}
	return start(a, l.cfg)
}

// Close stops listening and aborts the associations left.
func (l *Listener) Close() error { return l.ep.Close() }
