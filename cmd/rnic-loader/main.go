// Command rnic-loader drives the open RNIC: today it runs the Go reference
// iWARP stack over real TCP (bench); device programming and image loading
// join it as the driver and firmware packages land.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/spf13/cobra"
)

// Exit codes: 0 success, 1 the operation failed (a mismatch, a protocol
// error, a peer that went away), 2 the command line was wrong.
const (
	exitFailure = 1
	exitUsage   = 2
)

// usageError marks errors in the command line, reported with exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "rnic-loader",
		Short: "Drive the open iWARP RNIC and its Go reference stack",
		Long: `rnic-loader drives the open iWARP RNIC: it benchmarks the Go reference
stack (MPA, DDP, RDMAP over real TCP) and talks to peers such as Linux siw.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%w (see '%s --help')", err, c.CommandPath())}
	})
	root.AddCommand(newBenchCmd(), newRpingCmd())
	return root
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "rnic-loader:", err)
	var ue usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		return exitUsage
	}
	return exitFailure
}

// isCobraUsage recognises cobra's own argument errors (unknown command,
// wrong argument count), which do not pass through the flag error func.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires ", "unknown flag", "unknown shorthand"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
