package sctp

import (
	"context"
	"fmt"
	"io"
	"net"
	"testing"
)

// BenchmarkGoodput64K sends 64 KiB unordered messages one way over
// loopback UDP and counts the octets RecvMsg returns (b.SetBytes: MB/s is
// goodput). At the default MTU of 1200 each message is 56 DATA chunks;
// at MaxMTU (loopback's 64 KiB datagrams) two.
//
//	go test -run '^$' -bench Goodput64K ./iwarp/sctp
func BenchmarkGoodput64K(b *testing.B) {
	for _, mtu := range []int{DefaultMTU, 9000, MaxMTU} {
		b.Run(fmt.Sprintf("mtu=%d", mtu), func(b *testing.B) {
			cfg := Config{MTU: mtu, HeartbeatInterval: -1}
			s, c, _ := pair(b, cfg, cfg, nil)
			ctx := context.Background()
			msg := make([]byte, 64<<10)
			fill(msg, 1)
			b.SetBytes(int64(len(msg)))
			done := make(chan error, 1)
			go func() {
				for i := 0; i < b.N; i++ {
					m, err := s.RecvMsg(ctx)
					if err != nil {
						done <- err
						return
					}
					if len(m.Data) != len(msg) {
						done <- fmt.Errorf("message %d of %d octets", i, len(m.Data))
						return
					}
				}
				done <- nil
			}()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := c.SendMsg(ctx, uint16(i%4), 0x10, true, msg); err != nil {
					b.Fatal(err)
				}
			}
			if err := <-done; err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			st := c.Stats()
			b.ReportMetric(float64(st.Retransmissions)/float64(b.N), "rtx/msg")
			b.ReportMetric(float64(st.PacketsSent)/float64(b.N), "pkts/msg")
		})
	}
}

// BenchmarkTCPBaseline64K is the reference for BenchmarkGoodput64K in the
// same run on the same machine: 64 KiB writes over loopback TCP, read
// into one buffer (MPA over TCP reaches about 0.78 of this, README).
//
//	go test -run '^$' -bench 'Goodput64K|TCPBaseline64K' ./iwarp/sctp
func BenchmarkTCPBaseline64K(b *testing.B) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	done := make(chan error, 1)
	msg := make([]byte, 64<<10)
	b.SetBytes(int64(len(msg)))
	go func() {
		c, err := l.Accept()
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		_, err = io.CopyN(io.Discard, c, int64(b.N)*int64(len(msg)))
		done <- err
	}()
	c, err := net.Dial("tcp4", l.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Write(msg); err != nil {
			b.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}
