package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// stag and qp: the objects on the device a running `rnic-loader serve`
// holds (serve.go). A device lives as long as its driver process, so these
// commands ask that process; they never start a device of their own.

const stagSchema, qpSchema = "rnic-loader/stag/1", "rnic-loader/qp/1"

type objFlags struct {
	dev  deviceFlags // socket only
	json bool
}

func (o *objFlags) add(c *cobra.Command) {
	o.dev.addSocket(c)
	c.Flags().BoolVar(&o.json, "json", false, "print JSON instead of text")
}

func newStagCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "stag",
		Short: "Register, invalidate and list memory regions (STags) on a served device",
		Long: `stag works on the device a running rnic-loader serve holds (see serve --help):
register gives a new region of the serving process's DMA memory an STag,
invalidate takes one back (MR_INVALIDATE: once it returns, no placement
through the STag is in flight), list shows every registered region, those of
the sessions serve runs included.`,
		Example: `  rnic-loader serve --device sim &
  rnic-loader stag register --len 64KiB --access LR,LW,RR,RW
  rnic-loader stag list
  rnic-loader stag invalidate 0x00000101
  rnic-loader stag list --json --socket /tmp/rnic.sock`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usagef("stag needs a subcommand: register, invalidate or list")
		},
	}
	c.AddCommand(newStagRegisterCmd(), newStagInvalidateCmd(), newStagListCmd())
	return c
}

func newStagRegisterCmd() *cobra.Command {
	var o objFlags
	size := newSize(4096, 1, maxRegister, "region length")
	var access string
	c := &cobra.Command{
		Use:   "register --len SIZE [--access LR,LW,RR,RW]",
		Short: "Register a new region of the serving process's DMA memory",
		Example: `  rnic-loader stag register --len 64KiB
  rnic-loader stag register --len 4096 --access LR,RR --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := parseAccess(access); err != nil {
				return usagef("--access %s", err)
			}
			var m mrJSON
			if err := ctlCall(cmd.Context(), o.dev.socketPath(), ctlRequest{Op: "stag-register", Len: uint64(size.Int64()), Access: access}, &m); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if o.json {
				return writeJSON(w, struct {
					Schema string `json:"schema"`
					mrJSON
				}{stagSchema, m})
			}
			fmt.Fprintf(w, "registered STag %s: %d octets at TO %s, PD %d, access %s\n", m.STag, m.Length, m.TO, m.PD, m.Access)
			return nil
		},
	}
	c.Flags().Var(size, "len", "the region's length (e.g. 4096, 64KiB, 1MiB)")
	c.Flags().StringVar(&access, "access", "LR,LW,RR,RW", "access rights: LR, LW, RR, RW (local read and write, remote read and write), comma-separated")
	o.add(c)
	return c
}

func newStagInvalidateCmd() *cobra.Command {
	var o objFlags
	c := &cobra.Command{
		Use:     "invalidate STAG",
		Short:   "Invalidate a region stag register registered, and free its memory",
		Example: `  rnic-loader stag invalidate 0x00000101`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := parseSTag(args[0])
			if err != nil {
				return err
			}
			if err := ctlCall(cmd.Context(), o.dev.socketPath(), ctlRequest{Op: "stag-invalidate", STag: st}, nil); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if o.json {
				return writeJSON(w, map[string]string{"schema": stagSchema, "invalidated": fmt.Sprintf("0x%08x", st)})
			}
			fmt.Fprintf(w, "invalidated STag 0x%08x\n", st)
			return nil
		},
	}
	o.add(c)
	return c
}

func newStagListCmd() *cobra.Command {
	var o objFlags
	c := &cobra.Command{
		Use:     "list",
		Short:   "List the device's registered regions",
		Example: "  rnic-loader stag list\n  rnic-loader stag list --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var ms []mrJSON
			if err := ctlCall(cmd.Context(), o.dev.socketPath(), ctlRequest{Op: "stag-list"}, &ms); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if o.json {
				if ms == nil {
					ms = []mrJSON{}
				}
				return writeJSON(w, map[string]any{"schema": stagSchema, "regions": ms})
			}
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "index\tstag\tpd\tto\tlength\taccess\towner")
			for _, m := range ms {
				fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%d\t%s\t%s\n", m.Index, m.STag, m.PD, m.TO, m.Length, m.Access, m.Owner)
			}
			return tw.Flush()
		},
	}
	o.add(c)
	return c
}

func newQPCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "qp",
		Short: "List the queue pairs of a served device",
		Long: `qp works on the device a running rnic-loader serve holds (see serve --help).
list shows each queue pair: its state as the driver knows it (created, rts,
error), PD, ring sizes and producer indices, CQs, and the work requests
posted and not yet completed.`,
		Example: "  rnic-loader qp list\n  rnic-loader qp list --json --socket /tmp/rnic.sock",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usagef("qp needs a subcommand: list")
		},
	}
	var o objFlags
	list := &cobra.Command{
		Use:     "list",
		Short:   "List the device's queue pairs",
		Example: "  rnic-loader qp list --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var qs []qpJSON
			if err := ctlCall(cmd.Context(), o.dev.socketPath(), ctlRequest{Op: "qp-list"}, &qs); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if o.json {
				if qs == nil {
					qs = []qpJSON{}
				}
				return writeJSON(w, map[string]any{"schema": qpSchema, "qps": qs})
			}
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "qpn\tstate\tpd\tsq\trq\tsend_cq\trecv_cq\tsq_pi\trq_pi\tsq_out\trq_out")
			for _, q := range qs {
				fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", q.QPN, q.State, q.PD, q.SQEntries, q.RQEntries,
					q.SendCQ, q.RecvCQ, q.SQPI, q.RQPI, q.SQOutstanding, q.RQOutstanding)
			}
			return tw.Flush()
		},
	}
	o.add(list)
	c.AddCommand(list)
	return c
}
