package main

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/openrnic/rnic/internal/simbuild"
)

// The scripts in testdata/script run rnic-loader as users meet it: a
// command named rnic-loader in $PATH that is this test binary, running
// main's code (rnicLoader) in a process of its own, so that exit codes,
// stdout and stderr, and signals are the real ones.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"rnic-loader": func() { os.Exit(rnicLoader()) },
	})
}

func TestScripts(t *testing.T) {
	sim := simbuild.Binary(t)
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Values[procsKey{}] = &procs{m: map[string]*proc{}}
			// The simulated device the device commands start (make sim).
			env.Setenv("RNIC_SIM", sim)
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
		},
	})
}

// scriptWait bounds every wait in a script, so that a broken build fails
// rather than hangs; no test asserts on how long anything takes.
const scriptWait = 60 * time.Second

type procsKey struct{}

type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
	conn net.Conn // for idle connections
}

type procs struct {
	mu sync.Mutex
	m  map[string]*proc
}

func getProcs(ts *testscript.TestScript) *procs { return ts.Value(procsKey{}).(*procs) }

func (p *procs) get(ts *testscript.TestScript, name string) *proc {
	p.mu.Lock()
	defer p.mu.Unlock()
	pr := p.m[name]
	if pr == nil {
		ts.Fatalf("no background process or connection named %q", name)
	}
	return pr
}

func (p *procs) put(ts *testscript.TestScript, name string, pr *proc) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m[name] != nil {
		ts.Fatalf("%q is already running", name)
	}
	p.m[name] = pr
}

// exits CODE prog args...: run prog (like exec) and check its exit status
// exactly; stdout and stderr are kept for the stdout and stderr commands.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE prog args...")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("%s: %v", args[1], err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// start NAME prog args...: run prog in the background, its stdout and
// stderr going to the files NAME.stdout and NAME.stderr in the work
// directory (so that waitfor can watch them while it runs).
func cmdStart(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: start NAME prog args...")
	}
	name := args[0]
	path, err := lookPath(ts, args[1])
	ts.Check(err)
	cmd := exec.Command(path, args[2:]...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = append(os.Environ(), "PATH="+ts.Getenv("PATH"), "HOME="+ts.Getenv("HOME"), "RNIC_SIM="+ts.Getenv("RNIC_SIM"))
	out, err := os.Create(ts.MkAbs(name + ".stdout"))
	ts.Check(err)
	errf, err := os.Create(ts.MkAbs(name + ".stderr"))
	ts.Check(err)
	cmd.Stdout, cmd.Stderr = out, errf
	ts.Check(cmd.Start())
	pr := &proc{cmd: cmd, done: make(chan struct{})}
	go func() {
		pr.err = cmd.Wait()
		out.Close()
		errf.Close()
		close(pr.done)
	}()
	getProcs(ts).put(ts, name, pr)
	ts.Defer(func() {
		select {
		case <-pr.done:
		default:
			cmd.Process.Kill()
			<-pr.done
		}
	})
}

func lookPath(ts *testscript.TestScript, prog string) (string, error) {
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		p := filepath.Join(dir, prog)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in the script's $PATH", prog)
}

// waitfor FILE REGEXP [VAR]: wait until FILE (e.g. srv.stderr of a
// started process) matches REGEXP, and set VAR to its first submatch.
// The regexp sees the whole file, so (?s)a.*a waits for a second a.
func cmdWaitfor(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: waitfor FILE REGEXP [VAR]")
	}
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	deadline := time.Now().Add(scriptWait)
	for {
		b, _ := os.ReadFile(ts.MkAbs(args[0]))
		if m := re.FindSubmatch(b); m != nil {
			if len(args) == 3 {
				if len(m) < 2 {
					ts.Fatalf("waitfor: %q has no submatch for %s", args[1], args[2])
				}
				ts.Setenv(args[2], string(m[1]))
			}
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("waitfor: %s does not match %q:\n%s", args[0], args[1], b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sigint NAME: send SIGINT (Ctrl-C) to a started process.
func cmdSigint(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: sigint NAME")
	}
	ts.Check(getProcs(ts).get(ts, args[0]).cmd.Process.Signal(os.Interrupt))
}

// waitexit NAME CODE: wait for a started process to end and check its
// exit status exactly.
func cmdWaitexit(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitexit NAME CODE")
	}
	pr := getProcs(ts).get(ts, args[0])
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	select {
	case <-pr.done:
	case <-time.After(scriptWait):
		ts.Fatalf("%s has not exited", args[0])
	}
	got := 0
	var ee *exec.ExitError
	if errors.As(pr.err, &ee) {
		got = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			ts.Fatalf("%s was killed by %v", args[0], ws.Signal())
		}
	} else if pr.err != nil {
		ts.Fatalf("%s: %v", args[0], pr.err)
	}
	if got != want {
		errOut, _ := os.ReadFile(ts.MkAbs(args[0] + ".stderr"))
		ts.Fatalf("%s exited %d, want %d; stderr:\n%s", args[0], got, want, errOut)
	}
}

// garbage ADDR N: connect to ADDR, send N random octets, close the
// sending half, and wait for the peer to close.
func cmdGarbage(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: garbage ADDR N")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	c, err := net.Dial("tcp", args[0])
	ts.Check(err)
	defer c.Close()
	b := make([]byte, n)
	rand.Read(b)
	_, err = c.Write(b)
	ts.Check(err)
	ts.Check(c.(*net.TCPConn).CloseWrite())
	c.SetReadDeadline(time.Now().Add(scriptWait))
	io.Copy(io.Discard, c)
}

// idle NAME ADDR N: connect to ADDR, send N octets of zeros and go silent,
// keeping the connection open in the background (see waitclosed).
func cmdIdle(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: idle NAME ADDR N")
	}
	n, err := strconv.Atoi(args[2])
	ts.Check(err)
	c, err := net.Dial("tcp", args[1])
	ts.Check(err)
	_, err = c.Write(make([]byte, n))
	ts.Check(err)
	pr := &proc{conn: c, done: make(chan struct{})}
	go func() {
		c.SetReadDeadline(time.Now().Add(scriptWait))
		_, pr.err = io.Copy(io.Discard, c)
		close(pr.done)
	}()
	getProcs(ts).put(ts, args[0], pr)
	ts.Defer(func() { c.Close() })
}

// waitclosed NAME: wait until the peer of an idle connection closes it.
func cmdWaitclosed(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitclosed NAME")
	}
	pr := getProcs(ts).get(ts, args[0])
	<-pr.done
	if pr.err != nil {
		ts.Fatalf("%s: the peer did not close the connection: %v", args[0], pr.err)
	}
}

// sink VAR: listen on a loopback port that accepts connections and never
// answers, and set VAR to its address and VAR_PORT to its port.
func cmdSink(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: sink VAR")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go io.Copy(io.Discard, c)
		}
	}()
	ts.Defer(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	ts.Setenv(args[0], ln.Addr().String())
	ts.Setenv(args[0]+"_PORT", strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
}

// freeport VAR: set VAR to a loopback port nobody listens on right now.
func cmdFreeport(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: freeport VAR")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	ts.Setenv(args[0], strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	ln.Close()
}

// readJSON decodes every JSON value in FILE (stdout, stderr or a file).
func readJSON(ts *testscript.TestScript, file string) []any {
	dec := json.NewDecoder(strings.NewReader(ts.ReadFile(file)))
	dec.UseNumber()
	var vals []any
	for {
		var v any
		err := dec.Decode(&v)
		if err == io.EOF {
			break
		}
		if err != nil {
			ts.Fatalf("%s: not JSON: %v", file, err)
		}
		vals = append(vals, v)
	}
	if len(vals) == 0 {
		ts.Fatalf("%s holds no JSON", file)
	}
	return vals
}

// jsonAt follows a dotted path: object keys, and list indexes. With
// several records in the file, the path starts with the record's index.
func jsonAt(ts *testscript.TestScript, file, path string) (any, bool) {
	vals := readJSON(ts, file)
	var v any = vals[0]
	if len(vals) > 1 {
		v = vals
	}
	if path == "." {
		return v, true
	}
	for _, k := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[k]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// json FILE PATH OP [VALUE]: check a field of a JSON record. OP is
// present (the key exists, whatever its value), null, notnull, == (a JSON
// literal: 64000, "write", true, null), > or < (numbers), ~ (a regexp on a
// string), len (a list's length).
func cmdJSON(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 3 {
		ts.Fatalf("usage: json FILE PATH OP [VALUE]")
	}
	v, ok := jsonAt(ts, args[0], args[1])
	op, want := args[2], strings.Join(args[3:], " ")
	var good bool
	switch {
	case op == "present":
		good = ok
	case !ok:
		ts.Fatalf("%s: no field %s", args[0], args[1])
	case op == "null":
		good = v == nil
	case op == "notnull":
		good = v != nil
	case op == "==":
		var w any
		d := json.NewDecoder(strings.NewReader(want))
		d.UseNumber()
		ts.Check(d.Decode(&w))
		good = fmt.Sprint(w) == fmt.Sprint(v) && (w == nil) == (v == nil)
	case op == ">" || op == "<":
		n, isNum := v.(json.Number)
		if !isNum {
			ts.Fatalf("%s: %s is %v, not a number", args[0], args[1], v)
		}
		got, _ := n.Float64()
		w, err := strconv.ParseFloat(want, 64)
		ts.Check(err)
		good = op == ">" && got > w || op == "<" && got < w
	case op == "~":
		s, isStr := v.(string)
		good = isStr && regexp.MustCompile(want).MatchString(s)
	case op == "len":
		l, isList := v.([]any)
		good = isList && strconv.Itoa(len(l)) == want
	default:
		ts.Fatalf("json: unknown op %q", op)
	}
	if good == neg {
		b, _ := json.Marshal(v)
		ts.Fatalf("%s: %s is %s; want %s%s %s", args[0], args[1], b, map[bool]string{true: "not "}[neg], op, want)
	}
}

// jsonkeys FILE PATH KEY...: the object at PATH has exactly these keys,
// each present whatever its value (null included).
func cmdJSONKeys(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: jsonkeys FILE PATH KEY...")
	}
	v, ok := jsonAt(ts, args[0], args[1])
	obj, isObj := v.(map[string]any)
	if !ok || !isObj {
		ts.Fatalf("%s: %s is not an object", args[0], args[1])
	}
	var missing, extra []string
	want := map[string]bool{}
	for _, k := range args[2:] {
		want[k] = true
		if _, ok := obj[k]; !ok {
			missing = append(missing, k)
		}
	}
	for k := range obj {
		if !want[k] {
			extra = append(extra, k)
		}
	}
	if len(missing)+len(extra) > 0 {
		ts.Fatalf("%s %s: missing keys %v, unexpected keys %v", args[0], args[1], missing, extra)
	}
}
