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
		if !strings.Contains(e, "refused the connection") || i == 100 {
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
	if r.Schema != rpingSchema || r.Role != "client" || r.Rounds != 5 || r.VerifiedOctets != 5*3000 || !*r.CRC || *r.MPARev != 2 || *r.IRD != 1 || *r.ORD != 1 || r.Error != nil {
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
