// Command rnic-oracle answers questions about iWARP wire formats for the
// hardware testbenches, computing every answer with the Go reference stack
// (iwarp/...). A cocotb test starts it once and keeps it running; the
// testbench never computes an expected value itself.
//
// Protocol: JSON lines on stdin and stdout, one request line in, one
// response line out, in order.
//
//	request:  {"op": "<name>", "id": <any, optional>, <op's fields>}
//	response: {"id": <echoed when given>, <op's result fields>}
//	      or: {"id": <echoed when given>, "error": "<message>"}
//
// Octet strings travel as hex strings (upper or lower case in, lower case
// out, "" for none); 32-bit values as JSON numbers. A request with an unknown
// op, an unknown or missing field or a malformed value gets an "error"
// response and the oracle carries on with the next line. It exits 0 at the
// end of its input, and non-zero only when it cannot read or write.
//
// `rnic-oracle -ops` lists the ops with a line of description each. The ops
// live in one file per area (crc.go, mpa.go, ...), each registering its own
// handlers at init time; see register in ops.go.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	listOps := flag.Bool("ops", false, "list the ops and exit")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(),
			"usage: rnic-oracle [-ops]\n\n"+
				"Reads JSON requests from stdin, one a line, and writes one JSON response\n"+
				"line each to stdout. See `go doc ./cmd/rnic-oracle`.\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	if *listOps {
		for _, name := range opNames() {
			fmt.Printf("%-16s %s\n", name, ops[name].doc)
		}
		return
	}
	if err := serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "rnic-oracle:", err)
		os.Exit(1)
	}
}

// serve answers the requests on r, one a line, writing one response line
// each to w and flushing after each one (the client waits for every answer
// before it sends the next request). Blank lines are skipped. It returns nil
// at the end of r.
func serve(r io.Reader, w io.Writer) error {
	in := bufio.NewReaderSize(r, 1<<16)
	out := bufio.NewWriterSize(w, 1<<16)
	for {
		// ReadBytes has no line length limit: a request may carry a
		// whole jumbo frame or many of them.
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if _, werr := out.Write(append(handle(line), '\n')); werr != nil {
				return werr
			}
			if werr := out.Flush(); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
