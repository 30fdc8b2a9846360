package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"
)

// The raw TCP baseline: the same octets as the iWARP phase (the same
// messages, in the same order) over a plain TCP connection on the same
// path, verified by the receiver as the iWARP server verifies, so that the
// ratio compares the iWARP stack with the best TCP alone can do.
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

// A raw TCP baseline connection opens with rawKey, then size, total, the
// pattern seed, the client run's id and its number of rounds as big-endian
// 64-bit numbers. The key differs from MPA's so that one listener tells the
// two apart from the first 16 octets.
const (
	rawKey     = "RNIC raw TCP v2 "
	rawHdrLen  = 5 * 8
	rawBatch   = 4 << 20 // octets per write and per read
	rawStaging = 1024    // messages shorter than this are copied to batch them
)

type rawHello struct {
	size      int
	total     int64
	seed, run uint64
	rounds    int
}

func (h rawHello) append(b []byte) []byte {
	b = append(b, rawKey...)
	b = binary.BigEndian.AppendUint64(b, uint64(h.size))
	b = binary.BigEndian.AppendUint64(b, uint64(h.total))
	b = binary.BigEndian.AppendUint64(b, h.seed)
	b = binary.BigEndian.AppendUint64(b, h.run)
	return binary.BigEndian.AppendUint64(b, uint64(h.rounds))
}

func parseRawHello(hdr []byte) (rawHello, error) {
	h := rawHello{
		size:   int(binary.BigEndian.Uint64(hdr[0:])),
		total:  int64(binary.BigEndian.Uint64(hdr[8:])),
		seed:   binary.BigEndian.Uint64(hdr[16:]),
		run:    binary.BigEndian.Uint64(hdr[24:]),
		rounds: int(binary.BigEndian.Uint64(hdr[32:])),
	}
	if h.size <= 0 || h.size > maxMessageSize || h.total <= 0 || h.rounds < 1 || h.rounds > maxRounds+1 {
		return h, fmt.Errorf("bad raw TCP hello: size %d, total %d, rounds %d", h.size, h.total, h.rounds)
	}
	return h, nil
}

// rawSend sends one baseline of h.total octets and returns the time from
// the first octet to the receiver's verdict.
func rawSend(ctx context.Context, c net.Conn, pat *pattern, h rawHello, prog *progress) (time.Duration, error) {
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := c.Write(h.append(make([]byte, 0, 16+rawHdrLen))); err != nil {
		return 0, fmt.Errorf("raw TCP: %w", err)
	}
	size, total := h.size, h.total
	msgLen := func(i uint64) int {
		if rem := total - int64(i)*int64(size); rem < int64(size) {
			return int(rem)
		}
		return size
	}
	nmsg := uint64((total + int64(size) - 1) / int64(size))
	var (
		staging []byte
		vec     net.Buffers
	)
	if size < rawStaging {
		staging = make([]byte, 0, rawBatch+size)
	} else {
		vec = make(net.Buffers, 0, rawBatch/size+1)
	}
	start := time.Now()
	var sent int64
	for i := uint64(0); i < nmsg; {
		var n int64
		var err error
		if staging != nil {
			b := staging[:0]
			for ; i < nmsg && len(b) < rawBatch; i++ {
				b = append(b, pat.msg(i)[:msgLen(i)]...)
			}
			var k int
			k, err = c.Write(b)
			n = int64(k)
		} else {
			v := vec[:0]
			var batch int
			for ; i < nmsg && batch < rawBatch; i++ {
				m := pat.msg(i)[:msgLen(i)]
				v = append(v, m)
				batch += len(m)
			}
			// writev of the messages where they are: net.Buffers goes to
			// the kernel in one call per 1024 messages.
			n, err = v.WriteTo(c)
		}
		sent += n
		prog.add(n)
		if err != nil {
			return 0, fmt.Errorf("raw TCP: after %d octets: %w", sent, err)
		}
	}
	// The receiver answers once it has verified everything, so the time
	// covers delivery, not just handing octets to the kernel.
	var ack [8]byte
	if _, err := io.ReadFull(c, ack[:]); err != nil {
		return 0, fmt.Errorf("raw TCP: waiting for the receiver's verdict: %w", err)
	}
	if bad := binary.BigEndian.Uint64(ack[:]); bad != 0 {
		return 0, fmt.Errorf("raw TCP: the receiver found %d mismatched octets", bad)
	}
	return time.Since(start), nil
}

// rawReceive serves one baseline connection whose hello has been read:
// it reads in rawBatch chunks and compares every octet, where it landed,
// with the message it belongs to, then sends the count of mismatches.
func rawReceive(ctx context.Context, c net.Conn, h rawHello) (verified int64, mismatches int64, err error) {
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	pat := newPattern(h.seed, h.size)
	buf := make([]byte, rawBatch)
	var (
		i     uint64 // message being received
		inMsg int    // octets of it verified so far
	)
	for verified < h.total {
		want := min(int64(len(buf)), h.total-verified)
		n, err := c.Read(buf[:want])
		if n == 0 && err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return verified, mismatches, fmt.Errorf("raw TCP: after %d of %d octets: %w", verified, h.total, err)
		}
		got := buf[:n]
		for len(got) > 0 {
			m := pat.msg(i)
			if rem := h.total - verified; rem < int64(len(m)-inMsg) {
				m = m[:inMsg+int(rem)]
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
	var ack [8]byte
	binary.BigEndian.PutUint64(ack[:], uint64(mismatches))
	_, err = c.Write(ack[:])
	return verified, mismatches, err
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
