package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/openrnic/rnic/driver"
	"github.com/openrnic/rnic/driver/mirror"
	"github.com/openrnic/rnic/driver/model"
	"github.com/openrnic/rnic/driver/regmap"
	"github.com/openrnic/rnic/driver/simdev"
	"github.com/openrnic/rnic/driver/vfio"
)

// deviceFlags are how a command finds the device it talks to.
type deviceFlags struct {
	device string
	simBin string
	fst    string
	mirror bool // --mirror: the model beside the simulated device (driver/mirror)
	json   bool
	attach bool   // info, stats: the device rnic-loader serve holds
	socket string // its socket ("": defaultSocket)
}

func (f *deviceFlags) add(c *cobra.Command) {
	f.addDevice(c, "sim", "which device: sim (the verilated device, hw/sim), model (the driver's in-process model of it) or vfio:BDF (a board bound to vfio-pci, docs/vfio.md)")
	c.Flags().BoolVar(&f.json, "json", false, "print JSON instead of text")
}

// addAttach adds --attach and --socket: the command asks the device a
// running `rnic-loader serve` holds instead of starting one of its own.
func (f *deviceFlags) addAttach(c *cobra.Command) {
	c.Flags().BoolVar(&f.attach, "attach", false, "ask the device a running `rnic-loader serve` holds (its --socket) instead of starting one")
	f.addSocket(c)
}

func (f *deviceFlags) addSocket(c *cobra.Command) {
	c.Flags().StringVar(&f.socket, "socket", "", "rnic-loader serve's socket (default: $RNIC_LOADER_SOCKET, else $XDG_RUNTIME_DIR/rnic-loader.sock, else rnic-loader-<uid>.sock in the temporary directory)")
}

// socketPath is the serve socket the command talks to.
func (f *deviceFlags) socketPath() string {
	if f.socket != "" {
		return f.socket
	}
	return defaultSocket()
}

// checkAttach refuses the flags that choose a device of the command's own
// beside --attach.
func (f *deviceFlags) checkAttach(changed func(string) bool) error {
	if !f.attach {
		if changed("socket") {
			return usagef("--socket is where a running serve listens: use it with --attach")
		}
		return nil
	}
	for _, n := range []string{"device", "sim", "fst", "mirror"} {
		if changed(n) {
			return usagef("--%s chooses a device of this command's own; with --attach the device is the one serve holds", n)
		}
	}
	return nil
}

// addDevice adds --device (with its default and help), --sim and --fst.
func (f *deviceFlags) addDevice(c *cobra.Command, def, help string) {
	c.Flags().StringVar(&f.device, "device", def, help)
	c.Flags().StringVar(&f.simBin, "sim", "", "rnic-sim's path for --device sim (default: $RNIC_SIM, else build/sim/rnic-sim here or above; `make sim` builds it)")
	c.Flags().StringVar(&f.fst, "fst", "", "with --device sim: write an FST waveform of the device's clocks to this file")
	c.Flags().BoolVar(&f.mirror, "mirror", false, "with --device sim: run the model device beside it with the same inputs and fail at the first difference in wire octets or host memory writes (slower)")
}

// verbsVector is the interrupt vector the verbs users' CQs raise (vector 0
// carries the event ring).
const verbsVector = 1

// openVerbs opens the device for a verbs user (rping, bench): the register
// map walked, the data path set up (the ring arena, the event ring), the
// CQs' vector enabled, a relay on its network seam. close releases it all;
// with --mirror its error is the first difference the mirror found.
func (f *deviceFlags) openVerbs(ctx context.Context) (d *driver.Device, relay *driver.Relay, close func() error, err error) {
	b, _, err := f.open(ctx, verbsMemSize)
	if err != nil {
		return nil, nil, nil, err
	}
	if b.Network() == nil {
		b.Close()
		return nil, nil, nil, fmt.Errorf("--device %s: a board's connections run on its own MAC, which this driver does not set up yet; "+
			"rping and bench run on sim, model or soft (docs/vfio.md)", f.device)
	}
	if d, err = driver.Open(b); err == nil {
		err = d.InitDataPath(4 << 20)
	}
	if err == nil {
		err = d.EnableVector(verbsVector)
	}
	if err != nil {
		b.Close()
		return nil, nil, nil, err
	}
	relay = driver.NewRelay(b.Network())
	return d, relay, func() error {
		relay.Close()
		if mb, ok := b.(*mirror.Backend); ok {
			err := mb.Check()
			mb.Close()
			return err
		}
		b.Close()
		return nil
	}, nil
}

// verbsMemSize is the simulated host memory a verbs user (rping, bench)
// gets: the driver's ring arena (4 MiB) and the registered buffers. The
// memfd is sparse: only the octets used take memory.
const verbsMemSize = 256 << 20

// open starts or opens the device and walks its register map; the caller
// closes what it returns. memSize is the host memory a simulated device
// gets (0: none; the model allocates its own).
func (f *deviceFlags) open(ctx context.Context, memSize int) (driver.Backend, *regmap.Device, error) {
	var b driver.Backend
	switch f.device {
	case "sim":
		d, err := simdev.Start(ctx, simdev.Config{Binary: f.simBin, FST: f.fst, MemSize: memSize})
		if err != nil {
			return nil, nil, err
		}
		b = d
		if f.mirror {
			mb, err := mirror.New(d)
			if err != nil {
				d.Close()
				return nil, nil, err
			}
			b = mb
		}
	case "model":
		if f.simBin != "" || f.fst != "" || f.mirror {
			return nil, nil, usageError{fmt.Errorf("--sim, --fst and --mirror are for --device sim, not --device model")}
		}
		// The model sized as rnic_dev's default build (hw/rtl/rnic_dev.v).
		d, err := model.New(model.Config{QPs: 64, CQs: 64, STags: 1024, Vectors: 4, Windows: 16,
			SQLog2: 10, RQLog2: 10, CQLog2: 12, DataWidth: 64})
		if err != nil {
			return nil, nil, err
		}
		b = d
	case "vfio":
		return nil, nil, usagef("--device vfio needs the board's PCI address: --device vfio:0000:01:00.0 (lspci -Dnn lists it; docs/vfio.md)")
	default:
		bdf, ok := strings.CutPrefix(f.device, "vfio:")
		if !ok {
			return nil, nil, usageError{fmt.Errorf("--device %s: not a device this build drives; use sim, model or vfio:BDF", f.device)}
		}
		if f.simBin != "" || f.fst != "" || f.mirror {
			return nil, nil, usagef("--sim, --fst and --mirror are for --device sim, not a board")
		}
		// A board bound to vfio-pci (docs/vfio.md): its BAR0 holds the
		// register map.
		d, err := vfio.Open(ctx, vfio.Config{BDF: bdf})
		if err != nil {
			return nil, nil, err
		}
		b = d
	}
	m, err := regmap.Walk(b, b.BARSize())
	if err != nil {
		b.Close()
		return nil, nil, err
	}
	return b, m, nil
}

type infoJSON struct {
	Schema    string      `json:"schema"`
	Device    string      `json:"device"`
	DeviceID  string      `json:"device_id"`
	MapMajor  uint32      `json:"map_version_major"`
	MapMinor  uint32      `json:"map_version_minor"`
	BuildHash string      `json:"build_hash"`
	DataWidth uint32      `json:"data_width_bits"`
	Conns     uint32      `json:"connections"`
	STags     uint32      `json:"stags"`
	SQLog2    uint32      `json:"sq_log2"`
	RQLog2    uint32      `json:"rq_log2"`
	CQLog2    uint32      `json:"cq_log2"`
	CQs       uint32      `json:"cqs"`
	Vectors   uint32      `json:"vectors"`
	Windows   uint32      `json:"dma_windows"`
	Blocks    []blockJSON `json:"blocks"`
}

type blockJSON struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Offset  uint32 `json:"offset"`
	Version string `json:"version"`
	Known   bool   `json:"known"`
}

func fourCC(v uint32) string {
	b := []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return fmt.Sprintf("%#08x", v)
		}
	}
	return string(b)
}

func newInfoCmd() *cobra.Command {
	var f deviceFlags
	c := &cobra.Command{
		Use:   "info",
		Short: "Print the device's ID block, capabilities and register blocks",
		Long: `info opens the device, walks its register map (the chain of blocks that
starts with the ID block, docs/registers.md) and prints who the device is:
its ID, register map version, the commit it was built from, its datapath
width and capabilities, and the blocks of its map. A device whose ID or
map version this rnic-loader does not know is refused with what to do.`,
		Example: `  rnic-loader info
  rnic-loader info --json
  rnic-loader info --device model
  rnic-loader info --device vfio:0000:01:00.0   # a board bound to vfio-pci (docs/vfio.md)
  rnic-loader info --sim build/sim/rnic-sim --fst /tmp/dev.fst`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.checkAttach(cmd.Flags().Changed); err != nil {
				return err
			}
			var out infoJSON
			if f.attach {
				if err := ctlCall(cmd.Context(), f.socketPath(), ctlRequest{Op: "info"}, &out); err != nil {
					return err
				}
			} else {
				d, m, err := f.open(cmd.Context(), 0)
				if err != nil {
					return err
				}
				defer d.Close()
				out = infoOf(f.device, m)
			}
			w := cmd.OutOrStdout()
			if f.json {
				return writeJSON(w, out)
			}
			fmt.Fprintf(w, "device      %s (%s), register map %d.%d, build %s\n", out.DeviceID, out.Device, out.MapMajor,
				out.MapMinor, out.BuildHash)
			fmt.Fprintf(w, "datapath    %d bits\n", out.DataWidth)
			fmt.Fprintf(w, "capacity    %d connections, %d STags, %d CQs, %d interrupt vectors, %d DMA windows\n",
				out.Conns, out.STags, out.CQs, out.Vectors, out.Windows)
			fmt.Fprintf(w, "rings       up to 2^%d (SQ), 2^%d (RQ), 2^%d (CQ) entries\n", out.SQLog2, out.RQLog2, out.CQLog2)
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "offset\ttype\tblock\tversion")
			for _, b := range out.Blocks {
				fmt.Fprintf(tw, "0x%04x\t%s\t%s\t%s\n", b.Offset, b.Type, b.Name, b.Version)
			}
			return tw.Flush()
		},
	}
	f.add(c)
	f.addAttach(c)
	return c
}

// infoOf is info's answer for the walked device m.
func infoOf(device string, m *regmap.Device) infoJSON {
	out := infoJSON{Schema: "rnic-loader/info/1", Device: device, DeviceID: fourCC(m.DeviceID), MapMajor: m.MapMajor, MapMinor: m.MapMinor,
		BuildHash: fmt.Sprintf("%08x", m.BuildHash), DataWidth: m.DataWidth, Conns: m.Conns, STags: m.STags,
		SQLog2: m.SQLog2, RQLog2: m.RQLog2, CQLog2: m.CQLog2, CQs: m.CQs, Vectors: m.Vectors, Windows: m.Windows}
	for _, b := range m.Blocks {
		name := b.Name
		if name == "" {
			name = "(unknown)"
		}
		out.Blocks = append(out.Blocks, blockJSON{Name: name, Type: fourCC(b.Type), Offset: b.Base,
			Version: fmt.Sprintf("%d.%d", b.VersionMajor, b.VersionMinor), Known: b.Known})
	}
	return out
}

type statsJSON struct {
	Schema   string            `json:"schema"`
	Device   string            `json:"device"`
	Counters map[string]uint64 `json:"counters"`
}

func newStatsCmd() *cobra.Command {
	var f deviceFlags
	c := &cobra.Command{
		Use:   "stats",
		Short: "Print the device's counters",
		Long: `stats reads every counter of the device's counters block: FPDUs and
octets in and out, CRC and marker errors, DDP and RDMAP errors by kind,
Terminates, exception segments by reason, DMA reads and writes. Counters
are 64 bits, count from the device's reset and are never cleared by a read.`,
		Example: `  rnic-loader stats
  rnic-loader stats --json
  rnic-loader stats --attach          # the device a running rnic-loader serve holds`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.checkAttach(cmd.Flags().Changed); err != nil {
				return err
			}
			var cs []counterJSON
			name := f.device
			if f.attach {
				var out struct {
					Device   string        `json:"device"`
					Counters []counterJSON `json:"counters"`
				}
				if err := ctlCall(cmd.Context(), f.socketPath(), ctlRequest{Op: "stats"}, &out); err != nil {
					return err
				}
				cs, name = out.Counters, out.Device
			} else {
				d, m, err := f.open(cmd.Context(), 0)
				if err != nil {
					return err
				}
				defer d.Close()
				if cs, err = countersOf(m, d); err != nil {
					return err
				}
			}
			w := cmd.OutOrStdout()
			if f.json {
				out := statsJSON{Schema: "rnic-loader/stats/1", Device: name, Counters: map[string]uint64{}}
				for _, c := range cs {
					out.Counters[c.Name] = c.Value
				}
				return writeJSON(w, out)
			}
			for _, c := range cs {
				fmt.Fprintf(w, "%-32s %20d\n", c.Name, c.Value)
			}
			return nil
		},
	}
	f.add(c)
	f.addAttach(c)
	return c
}

type counterJSON struct {
	Name  string `json:"name"`
	Value uint64 `json:"value"`
}

// countersOf reads the counters block in the map's order.
func countersOf(m *regmap.Device, b driver.Backend) ([]counterJSON, error) {
	cs, err := m.Counters(b)
	if err != nil {
		return nil, err
	}
	out := make([]counterJSON, 0, len(cs))
	for _, c := range cs {
		out = append(out, counterJSON{c.Name, c.Value})
	}
	return out, nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
