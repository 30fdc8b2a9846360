package main

import (
	"os"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestFirmwareScripts runs the scripts of testdata/firmware: keygen, sign,
// verify and inspect as users meet them, and the CLI half of the tamper
// matrix (issue 31). They need no simulated device, so they run apart
// from TestScripts, with commands of their own that damage files.
func TestFirmwareScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/firmware",
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":    cmdExits,
			"json":     cmdJSON,
			"jsonkeys": cmdJSONKeys,
			"flipbit":  cmdFlipbit,
			"truncate": cmdTruncate,
			"grow":     cmdGrow,
			"mode":     cmdMode,
		},
	})
}

// flipbit FILE OFFSET BIT: invert one bit of FILE in place (OFFSET in
// octets, decimal or 0x hex; -1 is the last octet).
func cmdFlipbit(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: flipbit FILE OFFSET BIT")
	}
	p := ts.MkAbs(args[0])
	b, err := os.ReadFile(p)
	ts.Check(err)
	off, err := strconv.ParseInt(args[1], 0, 64)
	ts.Check(err)
	if off < 0 {
		off += int64(len(b))
	}
	bit, err := strconv.Atoi(args[2])
	ts.Check(err)
	if off < 0 || off >= int64(len(b)) || bit < 0 || bit > 7 {
		ts.Fatalf("flipbit: octet %s bit %s is outside %s (%d octets)", args[1], args[2], args[0], len(b))
	}
	b[off] ^= 1 << bit
	ts.Check(os.WriteFile(p, b, 0o644))
}

// truncate FILE SIZE: cut FILE to SIZE octets (negative: that many fewer).
func cmdTruncate(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: truncate FILE SIZE")
	}
	p := ts.MkAbs(args[0])
	n, err := strconv.ParseInt(args[1], 0, 64)
	ts.Check(err)
	if n < 0 {
		fi, err := os.Stat(p)
		ts.Check(err)
		n += fi.Size()
	}
	ts.Check(os.Truncate(p, n))
}

// grow FILE N: append N octets (0xa5) to FILE.
func cmdGrow(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: grow FILE N")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	f, err := os.OpenFile(ts.MkAbs(args[0]), os.O_WRONLY|os.O_APPEND, 0)
	ts.Check(err)
	b := make([]byte, n)
	for i := range b {
		b[i] = 0xa5
	}
	_, err = f.Write(b)
	ts.Check(err)
	ts.Check(f.Close())
}

// mode FILE PERM: FILE's permission bits are exactly PERM (octal).
func cmdMode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: mode FILE PERM")
	}
	want, err := strconv.ParseUint(args[1], 8, 32)
	ts.Check(err)
	fi, err := os.Stat(ts.MkAbs(args[0]))
	ts.Check(err)
	if got := fi.Mode().Perm(); uint64(got) != want {
		ts.Fatalf("%s has mode %04o, want %04o", args[0], got, want)
	}
}
