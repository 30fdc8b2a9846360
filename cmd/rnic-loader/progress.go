package main

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dustin/go-humanize"
)

// progress prints how far a long transfer has come to stderr, once a
// second, and nothing for transfers that finish within the first second.
type progress struct {
	label string
	total int64
	done  atomic.Int64
	w     io.Writer
	start time.Time
	stop  chan struct{}
	wg    sync.WaitGroup
}

func newProgress(w io.Writer, label string, total int64) *progress {
	p := &progress{label: label, total: total, w: w, start: time.Now(), stop: make(chan struct{})}
	if w == nil {
		return p
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				d := p.done.Load()
				el := time.Since(p.start).Seconds()
				fmt.Fprintf(p.w, "%s: %s of %s (%.0f%%), %s/s\n", p.label,
					humanize.IBytes(uint64(d)), humanize.IBytes(uint64(p.total)),
					100*float64(d)/float64(max(p.total, 1)), humanize.Bytes(uint64(float64(d)/el)))
			}
		}
	}()
	return p
}

func (p *progress) add(n int64) {
	if p != nil {
		p.done.Add(n)
	}
}

func (p *progress) finish() {
	if p == nil {
		return
	}
	close(p.stop)
	p.wg.Wait()
}
