package main

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/openrnic/rnic/capture"
)

// freePort returns a loopback port nobody listens on right now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

type cliResult struct {
	code         int
	stdout, errs string
}

// rpingPair runs the server and the client of rnic-loader rping against
// each other in this process.
func rpingPair(t *testing.T, server, client []string) (srv, cli cliResult) {
	t.Helper()
	port := freePort(t)
	done := make(chan cliResult)
	go func() {
		code, o, e := runCLI(t, append([]string{"rping", "-s", "-a", "127.0.0.1", "-p", port, "-q"}, server...)...)
		done <- cliResult{code, o, e}
	}()
	// The client retries until the server listens.
	for i := 0; ; i++ {
		code, o, e := runCLI(t, append([]string{"rping", "-c", "-a", "127.0.0.1", "-p", port}, client...)...)
		cli = cliResult{code, o, e}
		if !strings.Contains(e, "connection refused") || i == 100 {
			break
		}
	}
	return <-done, cli
}

func TestRpingJSONAndPcap(t *testing.T) {
	pcap := filepath.Join(t.TempDir(), "rping.pcap")
	srv, cli := rpingPair(t, []string{"-V", "-v", "-S", "3000"}, []string{"-C", "5", "-S", "3000", "-V", "--json", "-v", "--pcap", pcap})
	if srv.code != 0 || cli.code != 0 {
		t.Fatalf("server exit %d: %s\nclient exit %d: %s", srv.code, srv.errs, cli.code, cli.errs)
	}
	var r RpingResult
	if err := json.Unmarshal([]byte(cli.stdout), &r); err != nil {
		t.Fatalf("client JSON %q: %v", cli.stdout, err)
	}
	if r.Role != "client" || r.Rounds != 5 || r.VerifiedBytes != 5*3000 || !r.CRC || r.MPARev != 2 || r.IRD != 1 || r.ORD != 1 || r.Error != "" {
		t.Errorf("client result %+v", r)
	}
	// With --json the ping data goes to stderr; the server prints it on
	// stdout as rping does.
	if n := strings.Count(cli.errs, "ping data: rdma-ping-"); n != 5 {
		t.Errorf("client printed %d ping data lines:\n%s", n, cli.errs)
	}
	if n := strings.Count(srv.stdout, "server ping data: rdma-ping-"); n != 5 {
		t.Errorf("server printed %d ping data lines:\n%s", n, srv.stdout)
	}
	// The pcap holds the whole session.
	convs, err := capture.ReadTCPStreams(pcap)
	if err != nil || len(convs) != 1 {
		t.Fatalf("pcap: %v, %d connections", err, len(convs))
	}
	if n := len(convs[0].ClientToServer.Data); n < 5*2*(16+18+8) {
		t.Errorf("pcap holds %d client octets", n)
	}
	if fi, err := os.Stat(pcap); err != nil || fi.Size() == 0 {
		t.Errorf("pcap: %v", err)
	}
}

// A server that writes past the client's buffer gets the client's
// Terminate, and both report it with exit code 1.
func TestRpingOverrunTerminate(t *testing.T) {
	srv, cli := rpingPair(t, []string{"--overrun-write", "16"}, []string{"-C", "2"})
	if srv.code != 1 || !strings.Contains(srv.errs, "the peer terminated the stream") || !strings.Contains(srv.errs, "Base or bounds violation") {
		t.Errorf("server exit %d: %s", srv.code, srv.errs)
	}
	if cli.code != 1 || !strings.Contains(cli.errs, "Terminate sent to the peer") {
		t.Errorf("client exit %d: %s", cli.code, cli.errs)
	}
}

func TestRpingUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"rping"}, "exactly one of -s"},
		{[]string{"rping", "-s", "-c"}, "exactly one of -s"},
		{[]string{"rping", "-c"}, "needs the server's address"},
		{[]string{"rping", "-s", "-S", "25"}, "valid range is 26 to 65535"},
		{[]string{"rping", "-s", "-S", "65536"}, "valid range"},
		{[]string{"rping", "-c", "-a", "x", "-C", "-1"}, "invalid count"},
		{[]string{"rping", "-s", "--mpa-rev", "3"}, "--mpa-rev must be 1 or 2"},
		{[]string{"rping", "-c", "-a", "x", "--overrun-read", "1"}, "server options"},
		{[]string{"rping", "-s", "-p", "70000"}, "invalid port"},
		{[]string{"rping", "-s", "--bogus"}, "unknown flag"},
	} {
		code, _, errOut := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

func TestRpingConnectRefused(t *testing.T) {
	code, _, errOut := runCLI(t, "rping", "-c", "-a", "127.0.0.1", "-p", freePort(t))
	if code != 1 || !strings.Contains(errOut, "is a server listening on") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}
