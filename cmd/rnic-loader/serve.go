package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/openrnic/rnic/driver"
	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/rping"
)

// rnic-loader serve keeps one device up, as a board's driver process
// would: the device's objects live as long as it runs, and the other
// commands (stag, qp, info --attach, stats --attach) reach it through a
// Unix socket. Each request is one line of JSON, {"op": ..., arguments},
// and so is each reply, {"result": ...} or {"error": "..."}; a connection
// may carry any number of them. The socket is the operator's: it is
// created with mode 0600, in $XDG_RUNTIME_DIR when set.

// ctlRequest is a request to the device server.
type ctlRequest struct {
	Op     string `json:"op"` // info, stats, stag-register, stag-invalidate, stag-list, qp-list
	Len    uint64 `json:"len,omitempty"`
	Access string `json:"access,omitempty"`
	STag   uint32 `json:"stag,omitempty"`
}

type ctlReply struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// maxCtlLine bounds a request line: a client that sends more is dropped.
const maxCtlLine = 4096

// defaultSocket is where serve listens and the other commands look:
// $RNIC_LOADER_SOCKET, else $XDG_RUNTIME_DIR/rnic-loader.sock, else a
// per-user name in the temporary directory.
func defaultSocket() string {
	if s := os.Getenv("RNIC_LOADER_SOCKET"); s != "" {
		return s
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "rnic-loader.sock")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("rnic-loader-%d.sock", os.Getuid()))
}

// server is the device a serve process holds and what it created on it
// for operators.
type server struct {
	name  string // --device
	d     *driver.Device
	mu    sync.Mutex
	pd    *driver.PD
	owned map[uint32]ownedRegion // stag register's regions, by STag
}

type ownedRegion struct {
	mr  *driver.MR
	buf *driver.Buffer
}

type mrJSON struct {
	Index  uint16 `json:"index"`
	STag   string `json:"stag"`
	PD     uint16 `json:"pd"`
	TO     string `json:"to"`
	Length uint64 `json:"length"`
	Access string `json:"access"`
	Owner  string `json:"owner"` // operator (stag register) or session
}

type qpJSON struct {
	QPN           uint16 `json:"qpn"`
	State         string `json:"state"`
	PD            uint16 `json:"pd"`
	SQEntries     int    `json:"sq_entries"`
	RQEntries     int    `json:"rq_entries"`
	SendCQ        uint16 `json:"send_cq"`
	RecvCQ        uint16 `json:"recv_cq"`
	SQPI          uint16 `json:"sq_pi"`
	RQPI          uint16 `json:"rq_pi"`
	SQOutstanding int    `json:"sq_outstanding"`
	RQOutstanding int    `json:"rq_outstanding"`
}

// parseAccess reads LR,LW,RR,RW (any order, case-insensitive).
func parseAccess(s string) (uint8, error) {
	var a uint8
	for _, p := range strings.Split(s, ",") {
		switch strings.ToUpper(strings.TrimSpace(p)) {
		case "LR":
			a |= hostif.AccessLocalRead
		case "LW":
			a |= hostif.AccessLocalWrite
		case "RR":
			a |= hostif.AccessRemoteRead
		case "RW":
			a |= hostif.AccessRemoteWrite
		default:
			return 0, fmt.Errorf("access %q: not one of LR, LW, RR, RW (local read and write, remote read and write), comma-separated", p)
		}
	}
	return a, nil
}

// maxRegister bounds one stag register: the device's host memory is the
// serving process's (a simulated device has 256 MiB).
const maxRegister = 64 << 20

func (s *server) handle(req ctlRequest) (any, error) {
	switch req.Op {
	case "info":
		return infoOf(s.name, s.d.Map), nil
	case "stats":
		cs, err := countersOf(s.d.Map, s.d.B)
		if err != nil {
			return nil, err
		}
		return map[string]any{"device": s.name, "counters": cs}, nil
	case "stag-list":
		return s.mrs(), nil
	case "qp-list":
		var out []qpJSON
		for _, q := range s.d.QPs() {
			out = append(out, qpJSON{QPN: q.QPN, State: q.State.String(), PD: q.PD, SQEntries: 1 << q.SQLog2,
				RQEntries: 1 << q.RQLog2, SendCQ: q.SendCQ, RecvCQ: q.RecvCQ, SQPI: q.SQPI, RQPI: q.RQPI,
				SQOutstanding: q.SQOutstanding, RQOutstanding: q.RQOutstanding})
		}
		return out, nil
	case "stag-register":
		if req.Len == 0 || req.Len > maxRegister {
			return nil, fmt.Errorf("a region of %d octets: register 1 octet to %d MiB", req.Len, maxRegister>>20)
		}
		access, err := parseAccess(req.Access)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.pd == nil {
			s.pd = s.d.AllocPD()
		}
		b, err := s.d.AllocDMA(int(req.Len))
		if err != nil {
			return nil, err
		}
		mr, err := s.pd.RegisterMR(b, 0, req.Len, access)
		if err != nil {
			s.d.FreeDMA(b)
			return nil, err
		}
		s.owned[mr.STag] = ownedRegion{mr, b}
		return s.mrJSON(driver.MRInfo{Index: mr.Index, STag: mr.STag, PD: s.pd.ID, TO: mr.TO, Len: mr.Len, Access: mr.Access}), nil
	case "stag-invalidate":
		s.mu.Lock()
		defer s.mu.Unlock()
		o, ok := s.owned[req.STag]
		if !ok {
			if s.d.MR(req.STag) != nil {
				return nil, fmt.Errorf("STag 0x%08x belongs to a session on the device; it is invalidated when the session ends", req.STag)
			}
			return nil, fmt.Errorf("STag 0x%08x is not registered on the device (`rnic-loader stag list` shows the registered ones)", req.STag)
		}
		// Deregister is MR_INVALIDATE, a fence: once it returns, no
		// placement through the STag is in flight (docs/device.md), so
		// the memory can go.
		if err := o.mr.Deregister(); err != nil {
			return nil, err
		}
		delete(s.owned, req.STag)
		if err := s.d.FreeDMA(o.buf); err != nil {
			return nil, err
		}
		return map[string]string{"stag": fmt.Sprintf("0x%08x", req.STag)}, nil
	case "":
		return nil, errors.New(`a request without "op"`)
	}
	return nil, fmt.Errorf("op %q: not one of info, stats, stag-register, stag-invalidate, stag-list, qp-list", req.Op)
}

func (s *server) mrs() []mrJSON {
	s.mu.Lock() // s.owned
	defer s.mu.Unlock()
	out := []mrJSON{}
	for _, m := range s.d.MRs() {
		out = append(out, s.mrJSON(m))
	}
	return out
}

// mrJSON describes m; s.mu is held.
func (s *server) mrJSON(m driver.MRInfo) mrJSON {
	owner := "session"
	if _, ok := s.owned[m.STag]; ok {
		owner = "operator"
	}
	return mrJSON{Index: m.Index, STag: fmt.Sprintf("0x%08x", m.STag), PD: m.PD, TO: fmt.Sprintf("0x%016x", m.TO),
		Length: m.Len, Access: driver.AccessString(m.Access), Owner: owner}
}

// serveConn answers one client's requests until it goes.
func (s *server) serveConn(c net.Conn) {
	defer c.Close()
	r := bufio.NewReaderSize(c, maxCtlLine)
	enc := json.NewEncoder(c)
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				enc.Encode(ctlReply{Error: fmt.Sprintf("a request line longer than %d octets", maxCtlLine)})
			}
			return
		}
		var req ctlRequest
		var rep ctlReply
		if err := json.Unmarshal(line, &req); err != nil {
			rep.Error = fmt.Sprintf("the request is not JSON (%v): send one object per line, {\"op\": ...}", err)
		} else if v, err := s.handle(req); err != nil {
			rep.Error = err.Error()
		} else if rep.Result, err = json.Marshal(v); err != nil {
			rep.Error = err.Error()
		}
		if enc.Encode(rep) != nil {
			return
		}
	}
}

// listenCtl listens on path, replacing a socket no server answers on
// (left by one that was killed) but never one that is alive, nor a file
// that is not a socket.
func listenCtl(path string) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket: choose another path with --socket", path)
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("another rnic-loader serve is running on %s: stop it, or give this one another --socket", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, err
		}
	}
	old := syscall.Umask(0o077)
	ln, err := net.Listen("unix", path)
	syscall.Umask(old)
	return ln, err
}

type serveOpts struct {
	dev    deviceFlags
	socket string
	rping  string
}

func newServeCmd() *cobra.Command {
	var o serveOpts
	c := &cobra.Command{
		Use:   "serve",
		Short: "Keep a device up and let the other commands reach it",
		Long: `serve opens the device, sets up its data path and keeps it up until it is
interrupted (Ctrl-C or SIGTERM), as a board's driver process does: what is
created on the device lives as long as serve runs. The stag, qp, info
--attach and stats --attach commands reach it through a Unix socket
(--socket; default $RNIC_LOADER_SOCKET, else $XDG_RUNTIME_DIR/rnic-loader.sock,
else rnic-loader-<uid>.sock in the temporary directory).

With --rping ADDR:PORT, serve also answers rping clients on the device, one
session after the other (as rping -s -P), so that qp list and stats show
a device at work.`,
		Example: `  rnic-loader serve --device sim &
  rnic-loader stag register --len 64KiB --access LR,LW,RR,RW
  rnic-loader stag list --json
  rnic-loader serve --device sim --rping 127.0.0.1:7174 --socket /tmp/rnic.sock &
  rnic-loader rping -c -a 127.0.0.1 -p 7174 -C 10
  rnic-loader qp list --socket /tmp/rnic.sock
  rnic-loader stats --attach --socket /tmp/rnic.sock`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.dev.device == "soft" {
				return usagef("--device soft: serve holds a device (sim or model); the software stack has none")
			}
			return runServe(cmd.Context(), cmd.ErrOrStderr(), &o)
		},
	}
	o.dev.addDevice(c, "sim", "which device: sim (the verilated device, hw/sim) or model (the driver's in-process model of it)")
	c.Flags().StringVar(&o.socket, "socket", "", "the Unix socket to listen on (default: see above)")
	c.Flags().StringVar(&o.rping, "rping", "", "also serve rping clients on the device at `ADDR:PORT`")
	return c
}

func runServe(ctx context.Context, info io.Writer, o *serveOpts) error {
	path := o.socket
	if path == "" {
		path = defaultSocket()
	}
	var rpingLn net.Listener
	if o.rping != "" {
		if _, _, err := net.SplitHostPort(o.rping); err != nil {
			return usagef("--rping %s: give ADDR:PORT, e.g. 127.0.0.1:7174", o.rping)
		}
	}
	d, relay, closeDev, err := o.dev.openVerbs(ctx)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer closeDev()
	ln, err := listenCtl(path)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer os.Remove(path)
	defer ln.Close()
	s := &server{name: o.dev.device, d: d, owned: map[uint32]ownedRegion{}}
	fmt.Fprintf(info, "serve: device %s (build %08x) up; requests on %s\n", o.dev.device, d.Map.BuildHash, path)
	var wg sync.WaitGroup
	defer wg.Wait()
	if o.rping != "" {
		if rpingLn, err = net.Listen("tcp", o.rping); err != nil {
			return fmt.Errorf("serve: listening for rping on %s: %w (is another server on that port?)", o.rping, err)
		}
		fmt.Fprintf(info, "serve: rping server on %s\n", rpingLn.Addr())
		wg.Add(1)
		go func() {
			defer wg.Done()
			serveRping(ctx, info, rpingLn, &rping.Device{D: d, Relay: relay, Vector: verbsVector}, o.dev.device)
		}()
		defer rpingLn.Close()
	}
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				fmt.Fprintln(info, "serve: stopping")
				if rpingLn != nil {
					rpingLn.Close()
				}
				return endCauseOrNil(ctx)
			}
			return fmt.Errorf("serve: %w", err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			stop := context.AfterFunc(ctx, func() { c.Close() })
			defer stop()
			s.serveConn(c)
		}()
	}
}

// endCauseOrNil is nil for an interrupted serve (its normal end) and the
// cause of any other end (a --timeout).
func endCauseOrNil(ctx context.Context) error {
	if wasInterrupted(ctx) {
		return nil
	}
	return endCause(ctx)
}

// serveRping answers rping clients on p, one after the other, until ln
// closes; each session's outcome is logged.
func serveRping(ctx context.Context, info io.Writer, ln net.Listener, p rping.Provider, device string) {
	o := rpingOpts{size: newSize(rping.DefaultSize, rping.MinSize, rping.MaxSize, "ping size"), server: true,
		persistent: true, verify: true, quiet: true, provider: p, dev: deviceFlags{device: device}}
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		res, err := o.session(ctx, c, false, io.Discard, io.Discard)
		if err != nil {
			fmt.Fprintf(info, "serve: rping session with %s: %v\n", c.RemoteAddr(), err)
			continue
		}
		fmt.Fprintf(info, "serve: rping session with %s: %d rounds\n", c.RemoteAddr(), res.Rounds)
	}
}

// ctlCall sends one request to the serve process on path and decodes its
// result into out.
func ctlCall(ctx context.Context, path string, req ctlRequest, out any) error {
	var dl net.Dialer
	c, err := dl.DialContext(ctx, "unix", path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) {
			return fmt.Errorf("no rnic-loader serve answers on %s: start one (rnic-loader serve --device sim &) or give its --socket", path)
		}
		return fmt.Errorf("reaching rnic-loader serve on %s: %w", path, err)
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	if err := json.NewEncoder(c).Encode(req); err != nil {
		return fmt.Errorf("rnic-loader serve on %s: %w", path, err)
	}
	var rep ctlReply
	if err := json.NewDecoder(bufio.NewReader(c)).Decode(&rep); err != nil {
		if c := endCause(ctx); c != nil {
			return c
		}
		return fmt.Errorf("rnic-loader serve on %s did not answer (%v): is it still running?", path, err)
	}
	if rep.Error != "" {
		return errors.New(rep.Error)
	}
	if out != nil {
		return json.Unmarshal(rep.Result, out)
	}
	return nil
}

// parseSTag reads an STag in hex (0x...) or decimal.
func parseSTag(s string) (uint32, error) {
	v, err := strconv.ParseUint(s, 0, 32)
	if err != nil {
		return 0, usagef("STag %q: give it as 0x... (hex) or decimal, as stag list prints it", s)
	}
	return uint32(v), nil
}
