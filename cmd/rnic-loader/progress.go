package main

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// progressInterval is how often progress lines come; tests shorten it.
var progressInterval = time.Second

// progress prints how far a long transfer has come to stderr, once a
// second, and nothing for transfers that finish within the first second.
// A transfer has a total of octets, or a duration (a timed run).
type progress struct {
	label string
	total int64
	dur   time.Duration
	done  atomic.Int64
	w     io.Writer
	start time.Time
	stop  chan struct{}
	wg    sync.WaitGroup
}

func newProgress(w io.Writer, label string, total int64) *progress {
	return startProgress(w, label, total, 0)
}

// startProgress starts the progress of a transfer of total octets, or
// with total 0 of one that runs for dur.
func startProgress(w io.Writer, label string, total int64, dur time.Duration) *progress {
	p := &progress{label: label, total: total, dur: dur, w: w, start: time.Now(), stop: make(chan struct{})}
	if w == nil {
		return p
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(progressInterval)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				d := p.done.Load()
				el := time.Since(p.start)
				// Gbit/s, the unit of the summary, so that the two agree.
				rate := float64(d) * 8 / el.Seconds() / 1e9
				if p.total == 0 && p.dur > 0 {
					fmt.Fprintf(p.w, "%s: %s in %.0f s of %v (%.0f%%), %.3f Gbit/s\n", p.label,
						shortOctets(d), el.Seconds(), p.dur, min(100, 100*el.Seconds()/p.dur.Seconds()), rate)
					continue
				}
				fmt.Fprintf(p.w, "%s: %s of %s (%.0f%%), %.3f Gbit/s\n", p.label,
					shortOctets(d), shortOctets(p.total),
					100*float64(d)/float64(max(p.total, 1)), rate)
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
