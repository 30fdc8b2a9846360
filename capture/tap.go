package capture

import (
	"net"
	"time"
)

// Tap returns a net.Conn that passes everything through to c and records
// what is written to it in the capture, as sent by the client (isClient)
// or the server.
//
// Tap records Writes only. It is meant for a loopback pair where both
// ends are ours: tap each end, the client's with isClient true and the
// server's with false, and every octet is recorded exactly once, by the
// side that sent it; recording the Reads as well would record it twice.
// When only one end of a connection can be tapped, use TapDuplex.
//
// The two taps of a pair may be used from different goroutines at once
// (each net.Conn from one goroutine at a time for Writes, as net.Conn
// itself requires for a coherent stream). Each Write becomes data
// segments of at most MSS octets and an ACK, timestamped with the time
// of recording.
//
// The octets are recorded just before they are handed to c, so that in
// the capture a request always comes before the reply it caused. If the
// Write to c then fails short, the capture holds octets the peer never
// got: the Writer then records a RST from this side and records nothing
// more, so that the capture shows where the connection broke.
//
// Closing the returned net.Conn closes c; it does not close the Writer,
// whose Close must still be called once both sides are done. Errors
// writing the capture do not fail the connection's Writes: see Err.
func (w *Writer) Tap(c net.Conn, isClient bool) net.Conn {
	return &tapConn{Conn: c, w: w, client: isClient}
}

// TapDuplex is like Tap but also records what is read from c, as sent
// by the other side. Use it when the other end of the connection is not
// tapped, and never on both ends of one connection.
func (w *Writer) TapDuplex(c net.Conn, isClient bool) net.Conn {
	return &tapConn{Conn: c, w: w, client: isClient, reads: true}
}

type tapConn struct {
	net.Conn
	w      *Writer
	client bool // this end is the client
	reads  bool // record Reads too
}

func (c *tapConn) Write(p []byte) (int, error) {
	if len(p) > 0 {
		c.w.record(c.client, p)
	}
	n, err := c.Conn.Write(p)
	if err != nil && n < len(p) && len(p) > 0 {
		c.w.abort(c.client)
	}
	return n, err
}

func (c *tapConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if c.reads && n > 0 {
		c.w.record(!c.client, p[:n])
	}
	return n, err
}

// record writes p as sent by the client (fromClient) or the server,
// timestamped now. Errors stick in w.err.
func (w *Writer) record(fromClient bool, p []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.aborted || w.err != nil {
		return
	}
	_ = w.sendLocked(side(fromClient), time.Now(), w.mss, p)
}

// abort records a RST from the given side.
func (w *Writer) abort(fromClient bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.err != nil {
		return
	}
	_ = w.abortLocked(side(fromClient), time.Now())
}

// CloseWrite half-closes c when it supports it (a *net.TCPConn does), so
// that a tapped connection can still send its FIN after its last octet.
func (c *tapConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
