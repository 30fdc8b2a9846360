package rping

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/openrnic/rnic/iwarp/ddpsctp"
)

// SCTPConn stands for a DDP/SCTP association where Client and Serve take a
// connection: the Soft provider then runs the session's queue pair over
// DDP/SCTP (docs/ddp-sctp.md) instead of MPA over TCP. The client passes
// the association (its queue pair initiates the DDP Stream Session on
// stream 0); the server passes the peer's session request too. The queue
// pair's Close ends the association. Reads and writes fail: the queue pair
// talks through the session, not through this value.
func SCTPConn(c *ddpsctp.Conn, req *ddpsctp.Request) net.Conn {
	return &sctpConn{c: c, req: req}
}

type sctpConn struct {
	c   *ddpsctp.Conn
	req *ddpsctp.Request
}

var errSCTPConn = errors.New("rping: a DDP/SCTP association carries no octet stream; its queue pair talks through the session")

func (s *sctpConn) Read([]byte) (int, error)         { return 0, errSCTPConn }
func (s *sctpConn) Write([]byte) (int, error)        { return 0, errSCTPConn }
func (s *sctpConn) Close() error                     { return s.c.Close() }
func (s *sctpConn) LocalAddr() net.Addr              { return sctpAddr("local DDP/SCTP association") }
func (s *sctpConn) SetDeadline(time.Time) error      { return nil }
func (s *sctpConn) SetReadDeadline(time.Time) error  { return nil }
func (s *sctpConn) SetWriteDeadline(time.Time) error { return nil }

func (s *sctpConn) RemoteAddr() net.Addr {
	if a := s.c.RemoteAddr(); a != nil {
		return a
	}
	return sctpAddr("an SCTP peer")
}

type sctpAddr string

func (a sctpAddr) Network() string { return "sctp" }
func (a sctpAddr) String() string  { return string(a) }

// establishSCTP runs q's queue pair on the DDP/SCTP session of s.
func establishSCTP(ctx context.Context, q *softQP, s *sctpConn) error {
	var err error
	if s.req != nil {
		err = q.qp.EstablishRequest(ctx, s.req)
	} else {
		err = q.qp.EstablishSession(ctx, s.c, 0)
	}
	if err != nil {
		s.Close()
		return err
	}
	q.closer = s
	return nil
}
