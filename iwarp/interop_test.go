// Package iwarp_test checks the reference stack against a third party: the
// wire between two Linux siw peers running rping, captured in
// ../shared/testdata/siw-rping-default.pcap (see its README).
package iwarp_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/openrnic/rnic/internal/siwtrace"
	"github.com/openrnic/rnic/iwarp/ddp"
	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/rdmap"
)

const siwCapture = "../../shared/testdata/siw-rping-default.pcap"

func TestSiwCaptureDecodes(t *testing.T) {
	tr, err := siwtrace.Load(siwCapture)
	if err != nil {
		t.Fatalf("%v (the capture ships in ../shared/testdata)", err)
	}
	req, rep := tr.Request, tr.Reply
	cli, srv := tr.Direction(true), tr.Direction(false)
	for _, f := range []mpa.StartupFrame{req, rep} {
		if f.Rev != 2 || !f.Enhanced || f.Markers || f.CRC || f.Params.IRD != 1 || f.Params.ORD != 1 {
			t.Errorf("startup frame %+v: the README says rev 2, Enhanced, IRD/ORD 1, no M, no C", f)
		}
	}
	// The README's three rounds of rping: client Send (advertisement),
	// server Read Request, client Read Response, server Send, client
	// Send, server Write, server Send.
	var cliOps, srvOps []string
	for _, f := range cli {
		cliOps = append(cliOps, f.Seg.Opcode.String())
	}
	for _, f := range srv {
		srvOps = append(srvOps, f.Seg.Opcode.String())
	}
	wantCli := strings.Repeat("Send,RDMA Read Response,Send,", 3)
	wantSrv := strings.Repeat("RDMA Read Request,Send,RDMA Write,Send,", 3)
	if got := strings.Join(cliOps, ",") + ","; got != wantCli {
		t.Errorf("client sent %s\nwant %s", got, wantCli)
	}
	if got := strings.Join(srvOps, ",") + ","; got != wantSrv {
		t.Errorf("server sent %s\nwant %s", got, wantSrv)
	}
	// rping's payloads: the 16-octet advertisements, and "rdma-ping-N: "
	// followed by the rotating alphabet in the 64-octet buffer.
	for round := 0; round < 3 && len(cli) == 9 && len(srv) == 12; round++ {
		adv := cli[3*round].Seg.Payload
		if len(adv) != 16 {
			t.Fatalf("round %d: advertisement of %d octets", round, len(adv))
		}
		rr, err := rdmap.ParseReadRequest(srv[4*round].Seg.Payload)
		if err != nil {
			t.Fatal(err)
		}
		// The server reads exactly what the client advertised.
		if want := (rdmap.ReadRequest{SourceSTag: be32(adv[8:]), SourceTO: be64(adv), Size: be32(adv[12:])}); rr.SourceSTag != want.SourceSTag || rr.SourceTO != want.SourceTO || rr.Size != want.Size {
			t.Errorf("round %d: Read Request %+v does not match the advertisement % x", round, rr, adv)
		}
		resp := cli[3*round+1].Seg
		if resp.Header.STag != rr.SinkSTag || resp.Header.TO != rr.SinkTO || uint32(len(resp.Payload)) != rr.Size {
			t.Errorf("round %d: Read Response %v does not answer %+v", round, resp.Header, rr)
		}
		want := fmt.Sprintf("rdma-ping-%d: ", round)
		if !bytes.HasPrefix(resp.Payload, []byte(want)) {
			t.Errorf("round %d: ping data %q", round, resp.Payload)
		}
		if w := srv[4*round+2].Seg; !bytes.Equal(w.Payload, resp.Payload) {
			t.Errorf("round %d: the server wrote back %q, read %q", round, w.Payload, resp.Payload)
		}
	}
}

// TestSiwCaptureReencodes rebuilds every FPDU of the capture from its
// decoded fields with the stack's own encoders (rdmap messages, DDP
// segmentation, MPA framing) and compares the octets with siw's.
func TestSiwCaptureReencodes(t *testing.T) {
	tr, err := siwtrace.Load(siwCapture)
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []struct {
		name       string
		f          mpa.StartupFrame
		raw        []byte
		fromClient bool
	}{{"client", tr.Request, tr.RequestRaw, true}, {"server", tr.Reply, tr.ReplyRaw, false}} {
		fpdus, full := tr.Direction(dir.fromClient), tr.FullOf(dir.fromClient)
		// The startup frame re-encodes exactly.
		b, err := dir.f.Append(nil)
		if err != nil || !bytes.Equal(b, dir.raw) {
			t.Fatalf("%s startup frame re-encoded % x, siw sent % x", dir.name, b, dir.raw)
		}
		fr := mpa.NewFramer(false, false, 0)
		var out []byte
		for _, p := range fpdus {
			h := p.Seg.Header
			var m rdmap.Message
			switch p.Seg.Opcode {
			case rdmap.OpWrite:
				m = rdmap.NewWrite(h.STag, h.TO, p.Seg.Payload)
			case rdmap.OpReadResponse:
				m = rdmap.NewReadResponse(h.STag, h.TO, p.Seg.Payload)
			case rdmap.OpReadRequest:
				rr, err := rdmap.ParseReadRequest(p.Seg.Payload)
				if err != nil {
					t.Fatal(err)
				}
				m = rdmap.NewReadRequest(h.MSN, rr)
			case rdmap.OpSend:
				m = rdmap.NewSend(h.MSN, p.Seg.Payload)
			default:
				t.Fatalf("%s: unexpected %v", dir.name, p.Seg.Opcode)
			}
			segs, err := m.Segments(mpa.MULPDU(1448, false))
			if err != nil {
				t.Fatal(err)
			}
			for {
				sh, payload, ok := segs.Next()
				if !ok {
					break
				}
				var hdr [ddp.UntaggedHeaderLen]byte
				out, err = fr.AppendFPDU(out, sh.Append(hdr[:0]), payload)
				if err != nil {
					t.Fatal(err)
				}
			}
		}
		if !bytes.Equal(out, full) {
			for i := range min(len(out), len(full)) {
				if out[i] != full[i] {
					t.Fatalf("%s: re-encoded stream differs from siw's at offset %d: % x vs % x", dir.name, i, out[i:min(i+16, len(out))], full[i:min(i+16, len(full))])
				}
			}
			t.Fatalf("%s: re-encoded %d octets, siw sent %d", dir.name, len(out), len(full))
		}
	}
}

func be32(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}
func be64(b []byte) uint64 { return uint64(be32(b))<<32 | uint64(be32(b[4:])) }
