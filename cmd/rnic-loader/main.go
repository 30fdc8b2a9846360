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
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Exit codes: 0 success (an interrupt that ends a run is a success: it is
// the documented way to stop a server or rping -C 0), 1 the operation
// failed (a mismatch, a protocol error, a peer that went away, a --timeout
// that fired), 2 the command line was wrong.
const (
	exitFailure = 1
	exitUsage   = 2
)

// usageError marks errors in the command line, reported with exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// flagNames lists flags as a user types them: "--op, --size".
func flagNames(names ...string) string {
	for i, n := range names {
		names[i] = "--" + n
	}
	return strings.Join(names, ", ")
}

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// interrupted is the cause of a run's context when a signal (Ctrl-C)
// asked it to stop. Commands tell it apart from a --timeout with
// context.Cause and end normally: summary, JSON record, exit 0.
type interrupted struct{ sig os.Signal }

func (e *interrupted) Error() string { return fmt.Sprintf("interrupted (%v)", e.sig) }

// timedOut is the cause of a run's context when its --timeout fires.
type timedOut struct {
	flag string
	d    time.Duration
}

func (e *timedOut) Error() string {
	return fmt.Sprintf("gave up after %s %v (raise it, or give %s 0 for no limit)", e.flag, e.d, e.flag)
}

// withTimeout bounds ctx by a --timeout flag's value; 0 means no limit,
// for every command.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, d, &timedOut{flag: "--timeout", d: d})
}

// settle waits for ctx to end if its deadline has passed: a connection's
// deadline taken from ctx fires at the same instant as ctx's own timer, and
// an error from the one may arrive before the other has set the cause.
func settle(ctx context.Context) {
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		<-ctx.Done()
	}
}

// wasInterrupted reports whether ctx ended because of a signal.
func wasInterrupted(ctx context.Context) bool {
	settle(ctx)
	var in *interrupted
	return ctx.Err() != nil && errors.As(context.Cause(ctx), &in)
}

// endCause returns the reason ctx ended (a *timedOut or *interrupted), or
// nil while it runs or when it ended for another reason.
func endCause(ctx context.Context) error {
	settle(ctx)
	if ctx.Err() == nil {
		return nil
	}
	c := context.Cause(ctx)
	var to *timedOut
	var in *interrupted
	if errors.As(c, &to) || errors.As(c, &in) {
		return c
	}
	return nil
}

// version says which build this is, from the module and VCS stamps the
// Go toolchain puts in the binary.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (built without module information)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, when, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = ", modified"
			}
		}
	}
	out := v
	if rev != "" {
		out += ", revision " + rev
		if when != "" {
			out += " (" + when + ")"
		}
		out += dirty
	} else {
		out += ", revision unknown (built without VCS stamping, e.g. -buildvcs=false)"
	}
	return out + ", " + bi.GoVersion
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "rnic-loader",
		Short: "Drive the open iWARP RNIC and its Go reference stack",
		Long: `rnic-loader drives the open iWARP RNIC: it benchmarks the Go reference
stack (MPA, DDP, RDMAP over real TCP), talks to peers such as Linux siw, and
opens the device (today the simulated one, rnic-sim from hw/sim) to show
who it is and what it counted (info, stats).

Exit status: 0 success (also when Ctrl-C ends a server or an endless run),
1 the operation failed (a mismatch, a protocol error, a lost peer, a
--timeout that fired), 2 the command line was wrong.

Sizes (bench --size, --bytes, --warmup; rping -S) are octets: 4096, or with
a unit: K/KB, M/MB, G/GB are decimal (1000, 1000000, ...), KiB, MiB, GiB
binary (1024, 1048576, ...). Every command says a size back in octets.`,
		Example: `  rnic-loader bench --op write --size 64KiB --bytes 1GiB
  rnic-loader rping -s -P
  rnic-loader info --json
  rnic-loader --version`,
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("rnic-loader {{.Version}}\n")
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		var ive *pflag.InvalidValueError
		if errors.As(err, &ive) {
			// "--size -1: sizes are positive ...": the flag as typed and
			// what is wrong with it, not strconv's words.
			return usageError{fmt.Errorf("--%s %s: %v (see '%s --help')", ive.GetFlag().Name, ive.GetValue(), errors.Unwrap(ive), c.CommandPath())}
		}
		return usageError{fmt.Errorf("%w (see '%s --help')", err, c.CommandPath())}
	})
	root.AddCommand(newBenchCmd(), newBootStatusCmd(), newConfirmCmd(), newFlashCmd(), newInfoCmd(), newLatCmd(), newQPCmd(), newRpingCmd(), newServeCmd(), newStagCmd(), newStatsCmd(), newVersionCmd())
	root.AddCommand(newKeygenCmd(), newSignCmd(), newVerifyCmd(), newInspectCmd(), newProvisionCmd())
	return root
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the version: module version, VCS revision, Go version",
		Example: "  rnic-loader version\n  rnic-loader --version",
		Args:    cobra.NoArgs,
		Run: func(cmd *cobra.Command, args []string) {
			fmt.Fprintln(cmd.OutOrStdout(), "rnic-loader", version())
		},
	}
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
// By how they start: a command's own error that merely says "accepts" or
// "requires" somewhere is a failure, not a usage error.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command ", "accepts ", "requires at ", "unknown flag", "unknown shorthand"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// rnicLoader is the program: it runs the command line with a context
// that the first SIGINT or SIGTERM cancels with an *interrupted cause. A
// second signal kills the process the default way, for a run that does not
// stop.
func rnicLoader() int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s, ok := <-sigs
		if !ok {
			return
		}
		signal.Stop(sigs)
		cancel(&interrupted{sig: s})
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	signal.Stop(sigs)
	return code
}

func main() { os.Exit(rnicLoader()) }
