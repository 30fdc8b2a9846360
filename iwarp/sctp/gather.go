package sctp

import (
	"net"
	"net/netip"
	"syscall"

	"golang.org/x/sys/unix"
)

// gatherWriter sends one packet from several buffers with one sendmsg:
// the DATA chunks' user octets go from the message buffers to the kernel
// without first being copied into a packet buffer.
type gatherWriter struct {
	rc    syscall.RawConn
	inet6 bool // the socket is AF_INET6 (IPv4 peers as mapped addresses)
}

func newGatherWriter(uc *net.UDPConn) *gatherWriter {
	rc, err := uc.SyscallConn()
	if err != nil {
		return nil
	}
	g := &gatherWriter{rc: rc}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		var sa unix.Sockaddr
		sa, serr = unix.Getsockname(int(fd))
		_, g.inet6 = sa.(*unix.SockaddrInet6)
	}); err != nil || serr != nil {
		return nil
	}
	return g
}

// sockaddr is the destination for ap in the socket's family.
func (g *gatherWriter) sockaddr(ap netip.AddrPort) unix.Sockaddr {
	if g.inet6 {
		return &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
	}
	if !ap.Addr().Is4() {
		return nil
	}
	return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
}

func (g *gatherWriter) write(bufs [][]byte, to unix.Sockaddr) error {
	var err error
	werr := g.rc.Write(func(fd uintptr) bool {
		_, err = unix.SendmsgBuffers(int(fd), bufs, nil, to, 0)
		return err != unix.EAGAIN
	})
	if werr != nil {
		return werr
	}
	return err
}
