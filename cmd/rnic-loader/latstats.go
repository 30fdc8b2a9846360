package main

import (
	"math"
	"slices"
)

// The statistics of a latency run: the same summary for every path and
// size, computed once the timed loops are over.
//
// Percentiles interpolate linearly between the closest ranks: with n
// values sorted ascending, the p-th percentile is at rank h = (n-1)·p/100
// (from 0), between x[floor h] and x[floor h + 1] — numpy's default and
// Excel's PERCENTILE.INC. The 0th is the minimum, the 100th the maximum,
// the 50th the usual median (the mean of the two middle values for an even
// n), and the order min <= median <= p99 <= p99.9 <= max always holds.
//
// The histogram's buckets grow by a factor of √2: bucket k holds the
// values v with 2^(k/2) µs <= v < 2^((k+1)/2) µs, so that 1, 1.41, 2,
// 2.83, 4, ... µs are bucket bounds and every power of two µs starts a
// bucket. Latencies spread over orders of magnitude (a 10 µs median with
// a 2 ms tail); equal-width buckets would put everything in one of them.

// latStats summarises one path's samples. Every field is always present
// in JSON; the values are null when there is no sample.
type latStats struct {
	Samples       int         `json:"samples"`
	MinSeconds    *float64    `json:"min_seconds"`
	MedianSeconds *float64    `json:"median_seconds"`
	MeanSeconds   *float64    `json:"mean_seconds"`
	P99Seconds    *float64    `json:"p99_seconds"`
	P999Seconds   *float64    `json:"p99_9_seconds"`
	MaxSeconds    *float64    `json:"max_seconds"`
	StddevSeconds *float64    `json:"stddev_seconds"`
	Histogram     []latBucket `json:"histogram"`
}

// latBucket is one histogram bucket: count values in [low, high).
type latBucket struct {
	LowSeconds  float64 `json:"low_seconds"`
	HighSeconds float64 `json:"high_seconds"`
	Count       int     `json:"count"`
}

// percentile returns the p-th percentile (0 <= p <= 100) of sorted, which
// holds at least one value, interpolating between the closest ranks.
func percentile(sorted []float64, p float64) float64 {
	h := float64(len(sorted)-1) * p / 100
	lo := int(math.Floor(h))
	if lo >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

// bucketOf returns the histogram bucket of a value of us microseconds:
// the k with 2^(k/2) <= us < 2^((k+1)/2). Values below 2^-10 µs (about
// 1 ns: no clock here measures less) count in that lowest bucket.
func bucketOf(us float64) int {
	const lowest = -20
	if us <= bucketLow(lowest) {
		return lowest
	}
	k := int(math.Floor(2 * math.Log2(us)))
	// Log2 may round across a bound; the bounds decide.
	for k > lowest && us < bucketLow(k) {
		k--
	}
	for us >= bucketLow(k+1) {
		k++
	}
	return k
}

// bucketLow is the lower bound of bucket k in microseconds, 2^(k/2): exact
// for even k, the nearest float64 to 2^(k/2) for odd k.
func bucketLow(k int) float64 {
	if k%2 == 0 {
		return math.Ldexp(1, k/2)
	}
	return math.Ldexp(math.Sqrt2, (k-1)/2)
}

// summarize computes the statistics of values in nanoseconds (whole or
// half: exact in a float64, so that a value of 2000 ns is exactly 2 µs and
// falls in the bucket that starts there); it sorts values in place and
// reports seconds.
func summarize(values []float64) latStats {
	st := latStats{Samples: len(values), Histogram: []latBucket{}}
	if len(values) == 0 {
		return st
	}
	slices.Sort(values)
	var sum float64
	for _, v := range values {
		sum += v
	}
	mean := sum / float64(len(values))
	// The sample standard deviation (divided by n-1): the samples stand
	// for the path's latency in general, not a whole population; 0 for a
	// single sample.
	var sq float64
	for _, v := range values {
		sq += (v - mean) * (v - mean)
	}
	sd := 0.0
	if len(values) > 1 {
		sd = math.Sqrt(sq / float64(len(values)-1))
	}
	sec := func(ns float64) *float64 { return ptr(ns / 1e9) }
	st.MinSeconds, st.MaxSeconds = sec(values[0]), sec(values[len(values)-1])
	st.MedianSeconds = sec(percentile(values, 50))
	st.P99Seconds = sec(percentile(values, 99))
	st.P999Seconds = sec(percentile(values, 99.9))
	st.MeanSeconds, st.StddevSeconds = sec(mean), sec(sd)
	// The buckets run from the minimum's to the maximum's, empty ones
	// between included.
	first := bucketOf(values[0] / 1000)
	last := bucketOf(values[len(values)-1] / 1000)
	for k := first; k <= last; k++ {
		st.Histogram = append(st.Histogram, latBucket{LowSeconds: bucketLow(k) / 1e6, HighSeconds: bucketLow(k+1) / 1e6})
	}
	for _, v := range values {
		st.Histogram[bucketOf(v/1000)-first].Count++
	}
	return st
}

// latValues turns round-trip times in nanoseconds into the latencies
// reported, in nanoseconds: half of each (write and send ping-pong, as
// perftest's ib_write_lat and ib_send_lat report) or all of it (a Read,
// as ib_read_lat). It allocates a new slice: the timed loops' samples stay
// in the order they were taken, for the per-round figures.
func latValues(rtt []int64, half bool) []float64 {
	out := make([]float64, len(rtt))
	for i, v := range rtt {
		out[i] = float64(v)
		if half {
			out[i] /= 2
		}
	}
	return out
}
