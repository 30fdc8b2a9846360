package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code = run(ctx, args, &o, &e)
	return code, o.String(), e.String()
}

func TestBenchLoopbackJSON(t *testing.T) {
	for _, args := range [][]string{
		{"--op", "write", "--size", "64KiB", "--bytes", "8MiB", "--markers"},
		{"--op", "write", "--size", "100", "--bytes", "100KiB", "--window", "7"},
		{"--op", "read", "--size", "4096", "--bytes", "2MiB", "--markers"},
		{"--op", "read", "--size", "70000", "--bytes", "1MiB", "--no-crc"},
		{"--op", "send", "--size", "1", "--bytes", "3000", "--mpa-rev", "1"},
		{"--op", "send", "--size", "9000", "--bytes", "1000001", "--markers", "--no-crc"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, out, errOut := runCLI(t, append([]string{"bench", "--json", "--quiet"}, args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var r Result
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("bad JSON %q: %v", out, err)
			}
			if r.VerifiedBytes != r.Bytes || r.Mismatches != 0 || r.GoodputBps <= 0 || r.RawTCPBps <= 0 || r.Ratio <= 0 {
				t.Fatalf("result %+v", r)
			}
		})
	}
}

// The octets are split into interleaved rounds of whole messages, the raw
// phase going first in every other one, after an untimed warm-up.
func TestBenchRounds(t *testing.T) {
	code, out, errOut := runCLI(t, "bench", "--json", "--quiet", "--op", "send", "--size", "9000", "--bytes", "1000001", "--rounds", "3", "--warmup", "20000")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("bad JSON %q: %v", out, err)
	}
	if len(r.Rounds) != 3 || r.VerifiedBytes != 1000001 || r.Mismatches != 0 {
		t.Fatalf("result %+v", r)
	}
	var sum int64
	for i, rd := range r.Rounds {
		sum += rd.Bytes
		if i < 2 && rd.Bytes%9000 != 0 {
			t.Errorf("round %d moves %d octets, not whole messages", i, rd.Bytes)
		}
		if rd.RawFirst != (i%2 == 1) || rd.GoodputBps <= 0 || rd.RawTCPBps <= 0 || rd.Ratio <= 0 {
			t.Errorf("round %d: %+v", i, rd)
		}
	}
	if sum != 1000001 {
		t.Errorf("rounds move %d octets, want 1000001", sum)
	}
	// Fewer messages than rounds: one round per message.
	code, out, errOut = runCLI(t, "bench", "--json", "--quiet", "--size", "1MiB", "--bytes", "2MiB", "--rounds", "5")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Rounds) != 2 {
		t.Fatalf("%d rounds (%v), want 2", len(r.Rounds), err)
	}
}

func TestBenchTwoProcesses(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "rnic-loader")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	srv := exec.Command(bin, "bench", "--listen", addr)
	var srvErr bytes.Buffer
	srv.Stderr = &srvErr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Process.Kill()
	// Wait for the server to listen.
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			// A connection that sends nothing and closes: the server
			// must shrug it off and keep serving.
			c.Close()
			break
		}
		if i > 100 {
			t.Fatal("server did not come up")
		}
		time.Sleep(50 * time.Millisecond)
	}
	out, err := exec.Command(bin, "bench", "--connect", addr, "--op", "write", "--size", "8KiB", "--bytes", "4MiB", "--warmup", "1MiB", "--json").Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("client: %v: %s (server said %s)", err, stderr, srvErr.String())
	}
	var r Result
	if err := json.Unmarshal(out, &r); err != nil || r.VerifiedBytes != 4<<20 || r.Mismatches != 0 {
		t.Fatalf("client result %s (%v)", out, err)
	}
	if err := srv.Wait(); err != nil {
		t.Fatalf("server exit: %v: %s", err, srvErr.String())
	}
	// Four rounds and the warm-up: 5 MiB each way.
	if !strings.Contains(srvErr.String(), "5 iWARP sessions and 5 raw TCP baselines (warm-up included): iWARP verified 5242880 octets, 0 mismatches; raw TCP verified 5242880 octets, 0 mismatches") {
		t.Fatalf("server log: %s", srvErr.String())
	}
}

func TestBenchUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--op", "erase"}, "--op \"erase\""},
		{[]string{"bench", "--size", "lots"}, "--size \"lots\""},
		{[]string{"bench", "--size", "0"}, "--size 0"},
		{[]string{"bench", "--bytes", "10", "--size", "100"}, "less than one message"},
		{[]string{"bench", "--mpa-rev", "3"}, "--mpa-rev 3"},
		{[]string{"bench", "--listen", "a:1", "--connect", "b:2"}, "exclude each other"},
		{[]string{"bench", "--frobnicate"}, "unknown flag"},
		{[]string{"bench", "--rounds", "0"}, "--rounds 0"},
		{[]string{"bench", "--warmup", "some"}, "--warmup \"some\""},
		{[]string{"flash-everything"}, "unknown command"},
	} {
		code, _, errOut := runCLI(t, c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d mentioning %q", c.args, code, errOut, exitUsage, c.want)
		}
	}
}

func TestBenchConnectRefused(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	code, _, errOut := runCLI(t, "bench", "--connect", addr, "--bytes", "1MiB")
	if code != exitFailure || !strings.Contains(errOut, "refused") {
		t.Fatalf("exit %d, %q", code, errOut)
	}
}

// The bench server wraps its connection to peek at the first octets; the
// wrapper must still expose the socket, or the queue pair cannot read
// TCP_MAXSEG and sizes FPDUs for a 1460-octet EMSS.
func TestPeekConnExposesSocket(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			defer c.Close()
			time.Sleep(time.Second)
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pc := &peekConn{Conn: c, r: bufio.NewReader(c)}
	var sc syscall.Conn = pc
	raw, err := sc.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var mss int
	var serr error
	if err := raw.Control(func(fd uintptr) { mss, serr = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_MAXSEG) }); err != nil || serr != nil {
		t.Fatal(err, serr)
	}
	if mss <= 1460 {
		t.Fatalf("TCP_MAXSEG through the wrapper = %d; loopback's is far larger", mss)
	}
}
