package sctp

import (
	"context"
	"fmt"
	"io"
	"net"
	"testing"
	"time"
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
					s.Release(m.Data)
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

// BenchmarkGoodputVsTCP alternates rounds of 64 64-KiB messages over SCTP
// (MTU 65507) and 64 64-KiB writes over TCP on loopback, each round timed
// until the receiver has everything, so that the load of a shared machine
// weighs on both alike. It reports both goodputs and sctp/tcp, their
// ratio. One op is one round of each.
//
//	go test -run '^$' -bench GoodputVsTCP -benchtime 100x ./iwarp/sctp
func BenchmarkGoodputVsTCP(b *testing.B) {
	const round = 64
	msg := make([]byte, 64<<10)
	fill(msg, 2)
	cfg := Config{MTU: MaxMTU, HeartbeatInterval: -1}
	s, c, _ := pair(b, cfg, cfg, nil)
	ctx := context.Background()

	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	tcpDone := make(chan error, 1)
	tcpGo := make(chan int)
	go func() {
		tc, err := l.Accept()
		if err != nil {
			tcpDone <- err
			return
		}
		defer tc.Close()
		for n := range tcpGo {
			_, err := io.CopyN(io.Discard, tc, int64(n))
			tcpDone <- err
		}
	}()
	tc, err := net.Dial("tcp4", l.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer tc.Close()
	defer close(tcpGo)

	var sctpTime, tcpTime time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		recvDone := make(chan error, 1)
		go func() {
			for k := 0; k < round; k++ {
				m, err := s.RecvMsg(ctx)
				if err != nil || len(m.Data) != len(msg) {
					recvDone <- fmt.Errorf("message %d: %v", k, err)
					return
				}
				s.Release(m.Data)
			}
			recvDone <- nil
		}()
		for k := 0; k < round; k++ {
			if err := c.SendMsg(ctx, 0, 0x10, true, msg); err != nil {
				b.Fatal(err)
			}
		}
		if err := <-recvDone; err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		tcpGo <- round * len(msg)
		for k := 0; k < round; k++ {
			if _, err := tc.Write(msg); err != nil {
				b.Fatal(err)
			}
		}
		if err := <-tcpDone; err != nil {
			b.Fatal(err)
		}
		sctpTime += t1.Sub(t0)
		tcpTime += time.Since(t1)
	}
	b.StopTimer()
	octets := float64(b.N) * round * float64(len(msg))
	b.ReportMetric(octets/sctpTime.Seconds()/1e6, "sctp_MB/s")
	b.ReportMetric(octets/tcpTime.Seconds()/1e6, "tcp_MB/s")
	b.ReportMetric(tcpTime.Seconds()/sctpTime.Seconds(), "sctp/tcp")
}
