// Package simbuild builds the simulated device (rnic-sim, `make sim`) for
// the tests that run it, once per test binary.
package simbuild

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
)

var (
	once sync.Once
	bin  string
	out  string
	err  error
)

// Root is the repository's root directory.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Binary runs `make sim` at the repository's root (a no-op when the
// device is up to date) and returns rnic-sim's path; the test fails with
// make's output when the build does. RNIC_SIM, when set, names another
// build (e.g. `make sim-512`'s) and is used as it is, without make.
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("RNIC_SIM"); p != "" {
		if _, e := os.Stat(p); e != nil {
			t.Fatalf("RNIC_SIM: %v", e)
		}
		return p
	}
	once.Do(func() {
		root, e := filepath.Abs(Root())
		if e != nil {
			err = e
			return
		}
		// Test binaries of several packages run at once (go test -p): one
		// build at a time, the others then find it up to date.
		if e := os.MkdirAll(filepath.Join(root, "build"), 0o755); e != nil {
			err = e
			return
		}
		lock, e := os.OpenFile(filepath.Join(root, "build", "sim.lock"), os.O_CREATE|os.O_RDWR, 0o644)
		if e != nil {
			err = e
			return
		}
		defer lock.Close()
		if e := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); e != nil {
			err = e
			return
		}
		defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
		cmd := exec.Command("make", "--no-print-directory", "sim")
		cmd.Dir = root
		// Not the jobserver of a make that runs this test: its descriptors
		// are not ours.
		for _, e := range os.Environ() {
			if !strings.HasPrefix(e, "MAKEFLAGS=") && !strings.HasPrefix(e, "MFLAGS=") && !strings.HasPrefix(e, "MAKELEVEL=") {
				cmd.Env = append(cmd.Env, e)
			}
		}
		b, e := cmd.CombinedOutput()
		if e != nil {
			err, out = e, string(b)
			return
		}
		bin = filepath.Join(root, "build", "sim", "rnic-sim")
	})
	if err != nil {
		t.Fatalf("make sim: %v\n%s", err, out)
	}
	return bin
}
