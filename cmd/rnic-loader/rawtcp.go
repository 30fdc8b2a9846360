package main

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

// The raw TCP baseline: the same octets as the iWARP phase (the same
// messages, in the same order, in the same direction) over plain TCP
// connections on the same path, verified by the receiver as the iWARP
// receiver verifies, so that the ratio compares the iWARP stack with the
// best TCP alone can do.
//
// "The best" matters: the baseline is the denominator of the ratio, and a
// slow one flatters the stack. It used to write message by message and read
// each message with io.ReadFull, one or two system calls per message; with
// 64 KiB messages on loopback that ran at about two thirds of what plain TCP
// with 1 MiB writes reaches. Now the sender hands the kernel rawBatch octets
// per system call whatever the message size (writev of the messages in
// place, zero-copy, or for small messages one copy into a staging buffer),
// and the receiver reads rawBatch octets at a time and verifies them where
// they landed, against the same pattern: one memory compare per message, as
// on the iWARP side.
//
// A connection carries data one way: from the client (the baseline of
// Writes and Sends) or from the server (of Reads). --bidir runs one of
// each at once per queue pair. A bounded baseline moves its total; a timed
// one (--duration) ends with the sender's FIN after whole messages: the
// client half-closes at its deadline, and a server that sends stops at the
// client's FIN and half-closes in turn.
//
// A connection opens with rawKey, then the hello: size, total (0: timed),
// the pattern seed, the client run's id, the run's iWARP sessions and raw
// TCP connections, and flags, as big-endian 64-bit numbers. The key
// differs from MPA's so that one listener tells the two apart from the
// first 16 octets. On a connection the server sends, the client then
// sends one octet, rawGo, when its clock starts. On one the client sends,
// the server answers with its verdict: octets and messages verified,
// mismatched octets.
const (
	rawKey     = "RNIC raw TCP v3 "
	rawHdrLen  = 7 * 8
	rawBatch   = 4 << 20 // octets per write and per read
	rawStaging = 1024    // messages shorter than this are copied to batch them
	rawGo      = 'G'
	// rawServerSends is the flag of a connection that carries the
	// server's data to the client.
	rawServerSends = 1
)

type rawHello struct {
	size      int
	total     int64 // 0: until the sender's FIN
	seed, run uint64
	sessions  int // the run's iWARP sessions
	rawConns  int // the run's raw TCP connections
	flags     uint64
}

func (h rawHello) serverSends() bool { return h.flags&rawServerSends != 0 }

func (h rawHello) append(b []byte) []byte {
	b = append(b, rawKey...)
	for _, v := range []uint64{uint64(h.size), uint64(h.total), h.seed, h.run, uint64(h.sessions), uint64(h.rawConns), h.flags} {
		b = binary.BigEndian.AppendUint64(b, v)
	}
	return b
}

func parseRawHello(hdr []byte) (rawHello, error) {
	u := func(i int) uint64 { return binary.BigEndian.Uint64(hdr[8*i:]) }
	h := rawHello{size: int(u(0)), total: int64(u(1)), seed: u(2), run: u(3), sessions: int(u(4)), rawConns: int(u(5)), flags: u(6)}
	if h.size <= 0 || h.size > maxMessageSize || h.total < 0 || h.sessions < 0 || h.sessions > maxSessions ||
		h.rawConns < 1 || h.rawConns > maxSessions || h.flags&^rawServerSends != 0 {
		return h, fmt.Errorf("bad raw TCP hello: size %d, total %d, sessions %d, connections %d, flags %#x (a bench of another version?)", h.size, h.total, h.sessions, h.rawConns, h.flags)
	}
	return h, nil
}

// rawVerdictLen is the receiver's verdict: verified octets and messages,
// mismatched octets.
const rawVerdictLen = 24

// rawSend sends messages of pat (size octets, the last one of a bounded
// baseline shorter) until total octets have gone (total > 0) or stop says
// so, which it asks before each batch after the first. It returns what it
// sent.
func rawSend(ctx context.Context, c net.Conn, pat *pattern, size int, total int64, stop func() bool, prog *progress) (octets, msgs int64, err error) {
	cancel := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer cancel()
	msgLen := func(i uint64) int {
		if total > 0 {
			if rem := total - int64(i)*int64(size); rem < int64(size) {
				return int(rem)
			}
		}
		return size
	}
	more := func(i uint64) bool {
		if total > 0 {
			return int64(i)*int64(size) < total
		}
		return true
	}
	var (
		staging []byte
		vec     net.Buffers
	)
	if size < rawStaging {
		staging = make([]byte, 0, rawBatch+size)
	} else {
		vec = make(net.Buffers, 0, rawBatch/size+1)
	}
	for i := uint64(0); more(i) && (i == 0 || stop == nil || !stop()); {
		var n int64
		var err error
		if staging != nil {
			b := staging[:0]
			for ; more(i) && len(b) < rawBatch; i++ {
				b = append(b, pat.msg(i)[:msgLen(i)]...)
			}
			var k int
			k, err = c.Write(b)
			n = int64(k)
		} else {
			v := vec[:0]
			var batch int
			for ; more(i) && batch < rawBatch; i++ {
				m := pat.msg(i)[:msgLen(i)]
				v = append(v, m)
				batch += len(m)
			}
			// writev of the messages where they are: net.Buffers goes to
			// the kernel in one call per 1024 messages.
			n, err = v.WriteTo(c)
		}
		octets += n
		msgs = int64(i)
		prog.add(n)
		if err != nil {
			return octets, msgs, fmt.Errorf("raw TCP: after %d octets: %w", octets, err)
		}
	}
	return octets, msgs, nil
}

// rawReceive reads a baseline's data in rawBatch chunks and compares every
// octet, where it landed, with the message it belongs to: total octets
// (total > 0), or until the sender's FIN, which must come after a whole
// message.
func rawReceive(ctx context.Context, c net.Conn, pat *pattern, size int, total int64, prog *progress) (verified, msgs, mismatches int64, err error) {
	cancel := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer cancel()
	buf := make([]byte, rawBatch)
	var (
		i     uint64 // message being received
		inMsg int    // octets of it verified so far
	)
	for total == 0 || verified < total {
		want := int64(len(buf))
		if total > 0 {
			want = min(want, total-verified)
		}
		n, err := c.Read(buf[:want])
		if n == 0 && err != nil {
			if err == io.EOF && total == 0 && inMsg == 0 {
				break
			}
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			of := ""
			if total > 0 {
				of = fmt.Sprintf(" of %d", total)
			}
			return verified, int64(i), mismatches, fmt.Errorf("raw TCP: after %d%s octets: %w", verified, of, err)
		}
		got := buf[:n]
		prog.add(int64(n))
		for len(got) > 0 {
			m := pat.msg(i)
			if total > 0 {
				if rem := total - verified; rem < int64(len(m)-inMsg) {
					m = m[:inMsg+int(rem)]
				}
			}
			k := min(len(got), len(m)-inMsg)
			if w := m[inMsg : inMsg+k]; !bytes.Equal(got[:k], w) {
				mismatches += int64(countDiff(got[:k], w))
			}
			got = got[k:]
			verified += int64(k)
			inMsg += k
			if inMsg == len(m) {
				i, inMsg = i+1, 0
			}
		}
	}
	return verified, int64(i), mismatches, nil
}

func putRawVerdict(verified, msgs, bad int64) []byte {
	b := make([]byte, 0, rawVerdictLen)
	b = binary.BigEndian.AppendUint64(b, uint64(verified))
	b = binary.BigEndian.AppendUint64(b, uint64(msgs))
	return binary.BigEndian.AppendUint64(b, uint64(bad))
}

// rawServe serves a baseline connection whose hello has been read: it
// receives and verifies the client's data and answers with its verdict,
// or sends its own data. It returns what it verified or sent.
func rawServe(ctx context.Context, c net.Conn, h rawHello) (octets, msgs, mismatches int64, err error) {
	if !h.serverSends() {
		pat := newPattern(dataSeed(h.seed, false), h.size)
		v, m, bad, err := rawReceive(ctx, c, pat, h.size, h.total, nil)
		if err != nil {
			return v, m, bad, err
		}
		_, err = c.Write(putRawVerdict(v, m, bad))
		return v, m, bad, err
	}
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	var g [1]byte
	if _, err := io.ReadFull(c, g[:]); err != nil || g[0] != rawGo {
		return 0, 0, 0, fmt.Errorf("raw TCP: waiting for the client's go: %v", errors.Join(err, errors.New("no go octet")))
	}
	// The client's FIN ends a timed baseline; a bounded one ends at its
	// total, after which the client closes.
	fin := make(chan struct{})
	go func() {
		io.Copy(io.Discard, c)
		close(fin)
	}()
	finished := func() bool {
		select {
		case <-fin:
			return true
		default:
			return false
		}
	}
	pat := newPattern(dataSeed(h.seed, true), h.size)
	octets, msgs, err = rawSend(ctx, c, pat, h.size, h.total, finished, nil)
	if err != nil {
		return octets, msgs, 0, err
	}
	if err := closeWrite(c); err != nil {
		return octets, msgs, 0, err
	}
	// Wait for the client to have read everything and closed, so that
	// closing here cannot cut the stream short.
	select {
	case <-fin:
	case <-ctx.Done():
		return octets, msgs, 0, ctx.Err()
	}
	return octets, msgs, 0, nil
}

// closeWrite half-closes c: the peer reads EOF after what was sent.
func closeWrite(c net.Conn) error {
	cw, ok := c.(interface{ CloseWrite() error })
	if !ok {
		return fmt.Errorf("raw TCP: %T cannot half-close", c)
	}
	return cw.CloseWrite()
}

func countDiff(a, b []byte) int {
	n := 0
	for k := range a {
		if a[k] != b[k] {
			n++
		}
	}
	return n
}
