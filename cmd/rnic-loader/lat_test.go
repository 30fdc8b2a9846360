package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// The lat scripts (testdata/lat) run as the others in testdata/script do,
// with one command more: jsonorder.
func TestLatScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/lat",
		Setup: func(env *testscript.Env) error {
			env.Values[procsKey{}] = &procs{m: map[string]*proc{}}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":      cmdExits,
			"start":      cmdStart,
			"waitfor":    cmdWaitfor,
			"sigint":     cmdSigint,
			"waitexit":   cmdWaitexit,
			"garbage":    cmdGarbage,
			"idle":       cmdIdle,
			"waitclosed": cmdWaitclosed,
			"sink":       cmdSink,
			"freeport":   cmdFreeport,
			"json":       cmdJSON,
			"jsonkeys":   cmdJSONKeys,
			"jsonorder":  cmdJSONOrder,
		},
	})
}

// jsonorder FILE PATH...: the numbers at the paths are in order, each at
// most the next (min <= median <= p99 <= max).
func cmdJSONOrder(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: jsonorder FILE PATH PATH...")
	}
	prev, prevPath := 0.0, ""
	for i, p := range args[1:] {
		v, ok := jsonAt(ts, args[0], p)
		n, isNum := v.(json.Number)
		if !ok || !isNum {
			ts.Fatalf("%s: %s is %v, not a number", args[0], p, v)
		}
		f, err := n.Float64()
		ts.Check(err)
		if i > 0 && f < prev {
			ts.Fatalf("%s: %s = %v is less than %s = %v", args[0], p, f, prevPath, prev)
		}
		prev, prevPath = f, p
	}
}

func runLatJSON(t *testing.T, args ...string) (latResult, string) {
	t.Helper()
	code, out, errOut := runCLI(t, append([]string{"lat", "--json", "-q"}, args...)...)
	var r latResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("exit %d, bad JSON %q: %v (stderr %s)", code, out, err, errOut)
	}
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	return r, errOut
}

// Every op, sizes from one octet to several FPDUs, MPA variants: every
// iteration measured and verified, the figures in order.
func TestLatLoopbackJSON(t *testing.T) {
	for _, c := range []struct {
		args []string
		size int64
	}{
		{[]string{"--op", "write", "--size", "1"}, 1},
		{[]string{"--op", "write", "--size", "100000", "--markers"}, 100000},
		{[]string{"--op", "send", "--size", "3", "--mpa-rev", "1"}, 3},
		{[]string{"--op", "send", "--size", "70000", "--no-crc", "--no-inline"}, 70000},
		{[]string{"--op", "send", "--size", "3000", "--receive-thread"}, 3000},
		{[]string{"--op", "read", "--size", "3000", "--receive-thread", "--markers"}, 3000},
		{[]string{"--op", "read", "--size", "9", "--markers"}, 9},
		{[]string{"--op", "read", "--size", "200000", "--no-inline"}, 200000},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			const iters, warm = 50, 7
			r, _ := runLatJSON(t, append(c.args, "--iters", strconv.Itoa(iters), "--warmup-iters", strconv.Itoa(warm), "--rounds", "3")...)
			if r.Error != nil || r.Mismatches != 0 || len(r.Sizes) != 1 || r.Interrupted {
				t.Fatalf("result %+v", r)
			}
			s := r.Sizes[0]
			if s.MessageOctets != c.size || s.IWARP.Samples != iters || s.RawTCP.Samples != iters || len(s.Rounds) != 3 {
				t.Fatalf("size %+v", s)
			}
			// Every message of both paths, warm-up included, verified
			// once: pings by the server, pongs by the client; a Read by
			// the client, a raw TCP read request (8 octets) by the server.
			n := int64(iters + warm)
			want := 4 * n * c.size
			if r.Op == "read" {
				want = 2*n*c.size + 8*n
			}
			if r.VerifiedOctets != want {
				t.Errorf("verified %d octets, want %d", r.VerifiedOctets, want)
			}
			for name, st := range map[string]latStats{"iwarp": s.IWARP, "raw_tcp": s.RawTCP} {
				order := []*float64{st.MinSeconds, st.MedianSeconds, st.P99Seconds, st.P999Seconds, st.MaxSeconds}
				for i := 1; i < len(order); i++ {
					if *order[i] < *order[i-1] {
						t.Errorf("%s: figure %d (%v) below figure %d (%v)", name, i, *order[i], i-1, *order[i-1])
					}
				}
				if *st.MinSeconds <= 0 || *st.MeanSeconds < *st.MinSeconds || *st.MeanSeconds > *st.MaxSeconds {
					t.Errorf("%s: %+v", name, st)
				}
				total := 0
				for _, b := range st.Histogram {
					total += b.Count
				}
				if total != iters {
					t.Errorf("%s: the histogram holds %d samples, want %d", name, total, iters)
				}
			}
			if *s.RatioMedian != *s.IWARP.MedianSeconds / *s.RawTCP.MedianSeconds {
				t.Errorf("ratio_median %v is not the ratio of the medians", *s.RatioMedian)
			}
			sum := [2]int{}
			for i, rd := range s.Rounds {
				sum[0] += rd.IWARPSamples
				sum[1] += rd.RawTCPSamples
				if rd.Round != i+1 || rd.RawFirst != (i%2 == 1) || rd.IWARPSamples != rd.RawTCPSamples || rd.RatioMedian == nil {
					t.Errorf("round %+v", rd)
				}
			}
			if sum != [2]int{iters, iters} {
				t.Errorf("rounds hold %v samples, want %d each", sum, iters)
			}
			if r.Timed != map[bool]string{true: "round_trip", false: "half_round_trip"}[r.Op == "read"] {
				t.Errorf("timed %q for %s", r.Timed, r.Op)
			}
		})
	}
}

// Fewer iterations than rounds: one round per iteration, as many on each
// path.
func TestLatRoundsAtMostIters(t *testing.T) {
	r, _ := runLatJSON(t, "--iters", "2", "--rounds", "5", "--warmup-iters", "0")
	if s := r.Sizes[0]; len(s.Rounds) != 2 || s.IWARP.Samples != 2 || s.RawTCP.Samples != 2 || s.WarmupIters != 0 {
		t.Fatalf("size %+v", s)
	}
}

// -a without --iters: as many iterations as move 1 GiB each way, between
// 100 and --iters, the warm-up at most that.
func TestLatAllIters(t *testing.T) {
	o := latOpts{all: true, iters: 10000, warmup: 1000}
	for size, want := range map[int]int{2: 10000, 65536: 10000, 131072: 8192, 1 << 20: 1024, 8 << 20: 128} {
		if got := o.itersFor(size); got != want {
			t.Errorf("-a, size %d: %d iterations, want %d", size, got, want)
		}
	}
	if got := o.warmupFor(8 << 20); got != 128 {
		t.Errorf("-a, 8 MiB: warm-up %d, want 128", got)
	}
	o.itersGiven, o.iters = true, 5
	if got := o.itersFor(8 << 20); got != 5 {
		t.Errorf("-a --iters 5: %d iterations at 8 MiB", got)
	}
	o.duration = time.Second
	if got := o.itersFor(64); got != 0 {
		t.Errorf("--duration: %d iterations, want 0 (timed)", got)
	}
	sizes := (&latOpts{all: true}).sizes()
	if len(sizes) != 23 || sizes[0] != 2 || sizes[22] != 8<<20 {
		t.Errorf("-a sizes %v", sizes)
	}
}

func TestLatIterNumbers(t *testing.T) {
	b := make([]byte, 3)
	latPutIter(b, 0x0a0b0c0d)
	if !bytes.Equal(b, []byte{0x0d, 0x0c, 0x0b}) {
		t.Errorf("3-octet message of iteration 0x0a0b0c0d: % x, want the low octets, little-endian", b)
	}
	if !latIterOK(b, 0x0a0b0c0d) || latIterOK(b, 0x0a0b0c0e) {
		t.Error("latIterOK")
	}
	want := []byte("0123456789abcdef")
	got := append([]byte(nil), want...)
	latPutIter(got, 5)
	if n := latDiff(got, want, 5, true); n != 0 {
		t.Errorf("a good message: %d octets differ", n)
	}
	if n := latDiff(got, want, 6, true); n != 1 {
		t.Errorf("the next iteration's number: %d octets differ, want 1", n)
	}
	got[9], got[15] = 'x', 'y'
	if n := latDiff(got, want, 5, true); n != 2 {
		t.Errorf("two octets of the pattern changed: %d differ", n)
	}
	if n := latDiff(want, want, 0, false); n != 0 {
		t.Errorf("an unnumbered message (a Read): %d differ", n)
	}
	if n := latDiff(want[:4], want, 0, false); n != 16 {
		t.Errorf("a short message: %d differ, want 16", n)
	}
}

// latServerFor runs a lat server on a loopback port for one test.
func latServerFor(t *testing.T, persistent bool) (addr string, log *syncBuf, done chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := &latOpts{startupTimeout: 5 * time.Second, mpaRev: 2, persistent: persistent}
	log = &syncBuf{}
	done = make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- serveLat(ctx, ln, o, log, log) }()
	t.Cleanup(func() { cancel(); ln.Close() })
	return ln.Addr().String(), log, done
}

// A pong that arrives different from what the server sent fails the run:
// here a raw TCP "server" that answers pings with a pong one octet off.
// The real server serves the iWARP session.
func TestLatClientDetectsBadPong(t *testing.T) {
	real, _, _ := latServerFor(t, true)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				key := make([]byte, len(latRawKey))
				if _, err := io.ReadFull(c, key); err != nil {
					return
				}
				if string(key) != latRawKey {
					// Anything else goes to the real server.
					up, err := net.Dial("tcp", real)
					if err != nil {
						return
					}
					defer up.Close()
					up.Write(key)
					go io.Copy(up, c)
					io.Copy(c, up)
					return
				}
				rest := make([]byte, latRawHelloLen-len(latRawKey))
				io.ReadFull(c, rest)
				p, _ := parseLatRawHello(append(key, rest...))
				in, pong := make([]byte, p.Size), latPong(p)
				for i := uint64(0); ; i++ {
					if _, err := io.ReadFull(c, in); err != nil {
						return
					}
					latPutIter(pong, i)
					out := append([]byte(nil), pong...)
					if i == 3 {
						out[p.Size-1] ^= 0x40
					}
					c.Write(out)
				}
			}()
		}
	}()
	code, out, errOut := runCLI(t, "lat", "--connect", ln.Addr().String(), "--iters", "10", "--warmup-iters", "0", "--json", "-q")
	if code != exitFailure {
		t.Fatalf("exit %d, want %d: %s", code, exitFailure, errOut)
	}
	var r latResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Error == nil || !strings.Contains(*r.Error, "raw TCP: pong 3: 1 of its 64 octets differ from what the server sent") || r.Mismatches != 1 {
		t.Errorf("error %v, mismatches %d", r.Error, r.Mismatches)
	}
	if len(r.Sizes) != 1 || r.Sizes[0].IWARP.Samples == 0 {
		t.Errorf("the figures measured before the mismatch are missing: %+v", r.Sizes)
	}
}

// A ping that arrives wrong is caught by the server, which tells an iWARP
// client why (a control message) and drops a raw TCP one.
func TestLatServerDetectsBadPing(t *testing.T) {
	for _, op := range []string{"write", "send"} {
		t.Run(op, func(t *testing.T) {
			addr, log, done := latServerFor(t, false)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			o := &latOpts{startupTimeout: 5 * time.Second, mpaRev: 2}
			p := latParams{Test: "lat", Op: op, Size: 64, Seed: 9, Inline: true, Run: 1, Sizes: 1}
			s, err := dialLatIWARP(ctx, addr, o, p, &latResult{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.close()
			if _, err := s.iter(ctx, 0); err != nil {
				t.Fatal(err)
			}
			s.send[40] ^= 1 // past the iteration number: the full check finds it
			_, err = s.iter(ctx, 1)
			if err == nil {
				// The pong left before the full check: the report comes
				// with the next iteration.
				_, err = s.iter(ctx, 2)
			}
			if err == nil || !strings.Contains(err.Error(), "the server found ping 1 different from what was sent in 1 octets") {
				t.Fatalf("error %v", err)
			}
			if serr := <-done; serr == nil || !strings.Contains(serr.Error(), "ping 1 arrived with 1 of its 64 octets different") {
				t.Errorf("server: %v; log %s", serr, log)
			}
		})
	}
	t.Run("raw", func(t *testing.T) {
		addr, log, done := latServerFor(t, false)
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		p := latParams{Test: "lat", Op: "send", Size: 16, Seed: 9, Run: 2, Sizes: 1}
		c.Write(latRawHello(p))
		ping := latPing(p)
		latPutIter(ping, 1) // iteration 0 expected
		c.Write(ping)
		if n, err := io.ReadFull(c, make([]byte, 16)); !errors.Is(err, io.EOF) {
			t.Errorf("the server answered a wrong ping: %d octets, %v", n, err)
		}
		if serr := <-done; serr == nil || !strings.Contains(serr.Error(), "raw TCP baseline of 16 octets: ping 0 arrived with") {
			t.Errorf("server: %v; log %s", serr, log)
		}
		// A read request for the wrong iteration too.
		addr, _, done = latServerFor(t, false)
		c2, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c2.Close()
		p.Op = "read"
		c2.Write(latRawHello(p))
		c2.Write(binary.LittleEndian.AppendUint64(nil, 7))
		if serr := <-done; serr == nil || !strings.Contains(serr.Error(), "request 0 asked for 7") {
			t.Errorf("server: %v", serr)
		}
	})
}

// The timed loop allocates nothing of its own: a raw TCP iteration, both
// ends included (the server runs in this process), allocates nothing, and
// latLoop appends into the room made before it starts. (The iWARP
// iterations allocate what the stack does: 2 objects per Write or Send
// round trip, 6 per Read, counted the same way.)
func TestLatTimedLoopAllocatesNothing(t *testing.T) {
	addr, _, _ := latServerFor(t, true)
	ctx := context.Background()
	o := &latOpts{startupTimeout: 5 * time.Second, mpaRev: 2}
	for _, op := range latOps {
		p := latParams{Test: "lat", Op: op, Size: 64, Seed: 3, Run: uint64(len(op)), Sizes: 1}
		r, err := dialLatRaw(ctx, addr, o, p)
		if err != nil {
			t.Fatal(err)
		}
		room := make([]int64, 100)
		count := new(atomic.Int64)
		var i uint64
		var loopErr error
		// AllocsPerRun counts every allocation in the process, so a
		// stray one elsewhere (a goroutine an earlier test left winding
		// down, the runtime under -race) can land in a measurement. A
		// loop that allocates does so in every measurement: the least of
		// three is the loop's own.
		least := -1.0
		for try := 0; try < 3 && least != 0 && loopErr == nil; try++ {
			a := testing.AllocsPerRun(5, func() {
				_, i, loopErr = latLoop(ctx, r, room[:0:100], i, 100, time.Time{}, count)
			})
			if least < 0 || a < least {
				least = a
			}
		}
		if least != 0 || loopErr != nil {
			t.Errorf("%s: %v allocations per 100 raw TCP iterations, the least of three measurements (%v)", op, least, loopErr)
		}
		r.close()
	}
}
