package capture

import (
	"bytes"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// FuzzReadTCPStreams feeds arbitrary bytes to the reader, which must not
// panic, and checks what it returns for consistency. Its seed corpus in
// testdata/fuzz/FuzzReadTCPStreams holds the siw rping capture and
// captures of every link type and corner the unit tests cover; it is
// produced by `go test -run TestFuzzSeedCorpus -update-corpus`.
func FuzzReadTCPStreams(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		convs, err := ReadTCPStreamsFrom(bytes.NewReader(data))
		for _, c := range convs {
			if c.Client == c.Server {
				t.Fatalf("conversation with itself: %v", c.Client)
			}
			for _, st := range []*Stream{&c.ClientToServer, &c.ServerToClient} {
				var end int64
				for _, s := range st.Segments {
					if s.Offset < 0 {
						t.Fatalf("segment at negative offset %d", s.Offset)
					}
					if s.Seq != st.ISN+1+uint32(s.Offset) {
						t.Fatalf("segment seq %d offset %d, ISN %d", s.Seq, s.Offset, st.ISN)
					}
					end = max(end, s.Offset+int64(len(s.Payload)))
				}
				if int64(len(st.Data)) > end {
					t.Fatalf("%d octets of data from segments ending at %d", len(st.Data), end)
				}
				if err == nil && int64(len(st.Data)) != end {
					t.Fatalf("no error, but data stops at %d before segments end at %d", len(st.Data), end)
				}
			}
		}
	})
}

var updateCorpus = flag.Bool("update-corpus", false, "rewrite the seed corpus of FuzzReadTCPStreams")

const corpusDir = "testdata/fuzz/FuzzReadTCPStreams"

// seedCorpus returns the seeds by file name.
func seedCorpus(t *testing.T) map[string][]byte {
	siw, err := os.ReadFile(requireSiwCapture(t))
	if err != nil {
		t.Fatal(err)
	}
	seeds := map[string][]byte{"siw-rping-default": siw}

	// The siw capture again, as pcapng.
	r, err := pcapgo.NewReader(bytes.NewReader(siw))
	if err != nil {
		t.Fatal(err)
	}
	var ng bytes.Buffer
	nw, err := pcapgo.NewNgWriter(&ng, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	for {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		if err := nw.WritePacket(ci, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := nw.Flush(); err != nil {
		t.Fatal(err)
	}
	seeds["siw-rping-default-pcapng"] = ng.Bytes()

	// Our Writer, IPv4 and IPv6 with sequence numbers wrapping.
	for name, fam := range map[string][2]netip.AddrPort{"writer-ipv4": {cli4, srv4}, "writer-ipv6-wrap": {cli6, srv6}} {
		var b bytes.Buffer
		w, err := NewWriter(&b, fam[0], fam[1], WithISN(0xffffffd0, 0xfffffff0), WithMSS(64))
		if err != nil {
			t.Fatal(err)
		}
		_ = w.Write(true, pattern(100, 1), t0)
		_ = w.Segment(false, t0.Add(time.Millisecond), pattern(30, 2), pattern(90, 3))
		if err := w.Close(t0.Add(2 * time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		seeds[name] = b.Bytes()
	}

	// Linux cooked capture with out-of-order, duplicate and missing data.
	data := []byte("0123456789abcdefghijklmnopqrstuvwxyz")
	seeds["sll-reorder-gap"] = buildPcap(t, layers.LinkTypeLinuxSLL, cli6, srv6, append(handshake(10, 20),
		pkt{fromClient: true, flags: "PA", seq: 21, payload: data[10:20]},
		pkt{fromClient: true, flags: "PA", seq: 11, payload: data[:15]},
		pkt{fromClient: true, flags: "PA", seq: 11, payload: data[:10]},
		pkt{fromClient: false, flags: "PA", seq: 21, payload: data[:5]},
		pkt{fromClient: false, flags: "PA", seq: 31, payload: data[10:]},
		pkt{fromClient: true, flags: "FA", seq: 40},
	))
	// Raw IP, a packet cut by the snap length, a reused port pair.
	seeds["raw-truncated-reuse"] = buildPcap(t, layers.LinkTypeRaw, cli4, srv4, append(handshake(1, 2),
		pkt{fromClient: true, flags: "PA", seq: 2, payload: data, capLen: 50},
		pkt{fromClient: true, flags: "RA", seq: 38},
		pkt{fromClient: true, flags: "SP", seq: 77, payload: data[:4]}, // SYN with data
		pkt{fromClient: false, flags: "SA", seq: 500},
	))
	return seeds
}

func corpusFile(b []byte) []byte {
	return fmt.Appendf(nil, "go test fuzz v1\n[]byte(%s)\n", strconv.Quote(string(b)))
}

// TestFuzzSeedCorpus checks that the seed corpus is present and up to
// date, or rewrites it with -update-corpus.
func TestFuzzSeedCorpus(t *testing.T) {
	for name, b := range seedCorpus(t) {
		path := filepath.Join(corpusDir, name)
		want := corpusFile(b)
		if *updateCorpus {
			if err := os.MkdirAll(corpusDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("seed %s missing (%v): run go test ./capture -run TestFuzzSeedCorpus -update-corpus", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("seed %s is stale: run go test ./capture -run TestFuzzSeedCorpus -update-corpus", name)
		}
	}
}
