package rping

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/verbs"
)

// Config configures one side of an rping session.
type Config struct {
	// Size is the ping size, -S (default DefaultSize).
	Size int
	// Count is the client's number of rounds, -C; 0 runs until ctx ends.
	// rping's server ignores it, and so does Serve: it serves until the
	// client disconnects.
	Count int
	// Validate checks every round's data, -V: the client compares what
	// the server wrote back with what it offered; the server compares
	// what it read with the data rping's client generates (PingData).
	Validate bool
	// Verbose, when set, receives rping's -v lines: "ping data: ..." on
	// the client, "server ping data: ..." on the server.
	Verbose io.Writer
	// QP configures the queue pair. IRD and ORD default to rping's 1.
	QP verbs.QPConfig
	// ReadOverrun and WriteOverrun make the server's RDMA Read and RDMA
	// Write that many octets longer than the client's buffer, to check
	// that the peer refuses them with a Terminate. Zero for rping's own
	// behaviour.
	ReadOverrun, WriteOverrun int
	// Round, when set, is called after each completed round.
	Round func(Stats)
	// StartDelay makes the client wait this long after the MPA startup
	// before its first Send. Linux siw as responder (6.1) installs its
	// receive path only after it has sent its MPA Reply, and an FPDU that
	// arrives in between sits unread in the socket until more data comes,
	// which for rping never happens (docs/interop.md). rdma-core's rping
	// never hits the window: the RDMA CM's event round trip delays its
	// first Send. Zero sends at once, as the protocol allows.
	StartDelay time.Duration
}

// Stats sums up a session.
type Stats struct {
	// Rounds is the number of completed rounds.
	Rounds int
	// Verified counts the octets checked by Validate.
	Verified int64
	// Size is the ping size in use: the client's -S, which the server
	// learns from the client's last advertisement (0 before the first).
	Size int
	// Params is what the MPA startup negotiated.
	Params *mpa.Params
}

// Mismatch is the error of a round whose data failed validation.
type Mismatch struct {
	Round  int
	Offset int    // first differing octet
	Got    []byte // what arrived
	Want   []byte
}

func (m *Mismatch) Error() string {
	return fmt.Sprintf("rping: data mismatch in round %d at octet %d: got %q, want %q", m.Round, m.Offset, cstring(m.Got), cstring(m.Want))
}

func (c *Config) defaults() error {
	if c.Size == 0 {
		c.Size = DefaultSize
	}
	if err := CheckSize(c.Size); err != nil {
		return err
	}
	if c.Count < 0 {
		return fmt.Errorf("rping: invalid count %d", c.Count)
	}
	if c.ReadOverrun < 0 || c.WriteOverrun < 0 {
		return errors.New("rping: negative overrun")
	}
	if c.QP.MPA.IRD == 0 {
		c.QP.MPA.IRD = IRD
	}
	if c.QP.MPA.ORD == 0 {
		c.QP.MPA.ORD = ORD
	}
	c.QP.SendCQ = verbs.NewCQ(64)
	c.QP.RecvCQ = verbs.NewCQ(64)
	return nil
}

// session is the state both sides share.
type session struct {
	qp    QP
	stats Stats
}

// setup creates the queue pair and establishes it on conn.
func (s *session) setup(ctx context.Context, p Provider, conn net.Conn, role mpa.Role, cfg *Config) error {
	qp, err := p.Connect(ctx, conn, role, cfg)
	if err != nil {
		return err
	}
	s.qp = qp
	s.stats.Params = qp.Params()
	return nil
}

// await waits for the next completion of op: a receive (whose payload it
// returns), or a signaled send work request.
func (s *session) await(ctx context.Context, op verbs.Opcode, what string) ([]byte, error) {
	for {
		c, err := s.qp.Next(ctx)
		if err != nil {
			return nil, fmt.Errorf("rping: waiting for %s: %w", what, err)
		}
		if c.Op == verbs.OpRecv {
			if c.Err != nil {
				return nil, fmt.Errorf("rping: waiting for %s: %w", what, c.Err)
			}
			if op != verbs.OpRecv {
				return nil, fmt.Errorf("rping: waiting for %s, the peer sent a %d-octet Send out of turn", what, len(c.Data))
			}
			return c.Data, nil
		}
		if c.Err != nil {
			return nil, fmt.Errorf("rping: %v failed while waiting for %s: %w", c.Op, what, c.Err)
		}
		if c.Op == op {
			return nil, nil
		}
	}
}

// sendAdv Sends an advertisement (unsignaled, as every rping Send: its
// completion tells rping nothing).
func (s *session) sendAdv(ctx context.Context, a Adv) error {
	return s.send(ctx, a.Append(make([]byte, 0, AdvLen)))
}

func (s *session) send(ctx context.Context, data []byte) error {
	if err := s.qp.Send(ctx, data); err != nil {
		return fmt.Errorf("rping: posting %v: %w", verbs.OpSend, err)
	}
	return nil
}

func provider(p Provider) Provider {
	if p == nil {
		return Soft(nil)
	}
	return p
}

// Client runs rping's client over conn, a connected TCP connection, as the
// MPA Initiator, on p's queue pair and buffers (nil: the software stack
// with a device of its own). It returns after cfg.Count rounds (closing the
// connection gracefully), or with the first error: a Terminate from the
// peer, a failed validation (*Mismatch), a lost connection.
func Client(ctx context.Context, p Provider, conn net.Conn, cfg Config) (*Stats, error) {
	if err := cfg.defaults(); err != nil {
		conn.Close()
		return nil, err
	}
	p = provider(p)
	var s session
	s.stats.Size = cfg.Size
	// rping registers both buffers for remote read and write.
	startBuf, err := p.Buffer(cfg.Size)
	if err != nil {
		conn.Close()
		return nil, err
	}
	defer startBuf.Release()
	rdmaBuf, err := p.Buffer(cfg.Size)
	if err != nil {
		conn.Close()
		return nil, err
	}
	defer rdmaBuf.Release()
	start, rdma := startBuf.Bytes(), rdmaBuf.Bytes()

	if err := s.setup(ctx, p, conn, mpa.Initiator, &cfg); err != nil {
		return nil, err
	}
	defer s.qp.Close()
	if cfg.StartDelay > 0 {
		select {
		case <-time.After(cfg.StartDelay):
		case <-ctx.Done():
			return &s.stats, ctx.Err()
		}
	}
	for ping := 0; cfg.Count == 0 || ping < cfg.Count; ping++ {
		FillPingData(start, ping)
		// rping leaves the last round's echo in place; clearing it makes
		// validation prove that this round's Write landed.
		clear(rdma)
		if err := s.sendAdv(ctx, startBuf.Adv(cfg.Size)); err != nil {
			return &s.stats, err
		}
		if _, err := s.await(ctx, verbs.OpRecv, "the server's go-ahead after its RDMA Read"); err != nil {
			return &s.stats, err
		}
		if err := s.sendAdv(ctx, rdmaBuf.Adv(cfg.Size)); err != nil {
			return &s.stats, err
		}
		if _, err := s.await(ctx, verbs.OpRecv, "the server's go-ahead after its RDMA Write"); err != nil {
			return &s.stats, err
		}
		if cfg.Validate {
			if i := firstDiff(rdma, start); i >= 0 {
				return &s.stats, &Mismatch{Round: ping, Offset: i, Got: bytes.Clone(rdma), Want: bytes.Clone(start)}
			}
			s.stats.Verified += int64(cfg.Size)
		}
		if cfg.Verbose != nil {
			fmt.Fprintf(cfg.Verbose, "ping data: %s\n", cstring(rdma))
		}
		s.stats.Rounds++
		if cfg.Round != nil {
			cfg.Round(s.stats)
		}
	}
	return &s.stats, nil
}

// Serve runs rping's server over conn, an accepted TCP connection, as the
// MPA Responder, on p's queue pair and buffers (nil: the software stack),
// until the client disconnects between two rounds (a normal end: nil
// error) or an error.
func Serve(ctx context.Context, p Provider, conn net.Conn, cfg Config) (*Stats, error) {
	if err := cfg.defaults(); err != nil {
		conn.Close()
		return nil, err
	}
	p = provider(p)
	// The RDMA buffer takes the client's data; rping sizes it -S. An
	// overrun Read needs room for the extra octets on this side, an
	// overrun Write for its zeros (the source of a Write is registered
	// memory on an RNIC).
	rdmaBuf, err := p.Buffer(cfg.Size + cfg.ReadOverrun + cfg.WriteOverrun)
	if err != nil {
		conn.Close()
		return nil, err
	}
	defer rdmaBuf.Release()
	rdma := rdmaBuf.Bytes()
	goAhead := make([]byte, AdvLen) // rping's server never writes its send buffer

	var s session
	if err := s.setup(ctx, p, conn, mpa.Responder, &cfg); err != nil {
		return nil, err
	}
	defer s.qp.Close()
	for ping := 0; ; ping++ {
		// Between rounds, the client's disconnect is the normal end.
		msg, err := s.await(ctx, verbs.OpRecv, "the client's source advertisement")
		if err != nil {
			if errors.Is(err, ErrConnLost) && ctx.Err() == nil {
				return &s.stats, nil
			}
			return &s.stats, err
		}
		src, err := ParseAdv(msg)
		if err != nil {
			return &s.stats, err
		}
		n := int(src.Len) + cfg.ReadOverrun
		s.stats.Size = int(src.Len)
		clear(rdma)
		// A client that advertises more than this server's buffer holds
		// gets what rdma-core's rping gives it: the Read is issued as
		// asked, its response fails DDP's bounds check on this side, and
		// the client is sent a Terminate that says why (DDP Tagged
		// Buffer Error, base or bounds violation).
		if err := s.qp.Read(ctx, src, rdmaBuf, n); err != nil {
			return &s.stats, fmt.Errorf("rping: posting %v: %w", verbs.OpRead, err)
		}
		if _, err := s.await(ctx, verbs.OpRead, "the RDMA Read of the client's ping data"); err != nil {
			if n > cfg.Size+cfg.ReadOverrun {
				return &s.stats, fmt.Errorf("rping: the client advertised %d octets, more than this server's %d-octet buffer (-S %d), so the RDMA Read of them failed here and the client was sent a Terminate: give both sides the same -S: %w", src.Len, cfg.Size, cfg.Size, err)
			}
			return &s.stats, err
		}
		if cfg.Validate {
			want := PingData(ping, int(src.Len))
			if i := firstDiff(rdma[:src.Len], want); i >= 0 {
				return &s.stats, &Mismatch{Round: ping, Offset: i, Got: bytes.Clone(rdma[:src.Len]), Want: want}
			}
			s.stats.Verified += int64(src.Len)
		}
		if cfg.Verbose != nil {
			fmt.Fprintf(cfg.Verbose, "server ping data: %s\n", cstring(rdma[:n]))
		}
		if err := s.send(ctx, goAhead); err != nil {
			return &s.stats, err
		}
		msg, err = s.await(ctx, verbs.OpRecv, "the client's sink advertisement")
		if err != nil {
			return &s.stats, err
		}
		sink, err := ParseAdv(msg)
		if err != nil {
			return &s.stats, err
		}
		// rping writes back the string it read, NUL included; an
		// overrun Write adds zeros.
		echo := strlen1(rdma[:n])
		clear(rdma[echo : echo+cfg.WriteOverrun])
		if err := s.qp.Write(ctx, sink, rdmaBuf, echo+cfg.WriteOverrun); err != nil {
			return &s.stats, fmt.Errorf("rping: posting %v: %w", verbs.OpWrite, err)
		}
		if _, err := s.await(ctx, verbs.OpWrite, "the RDMA Write of the echo"); err != nil {
			return &s.stats, err
		}
		if err := s.send(ctx, goAhead); err != nil {
			return &s.stats, err
		}
		s.stats.Rounds++
		if cfg.Round != nil {
			cfg.Round(s.stats)
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}
