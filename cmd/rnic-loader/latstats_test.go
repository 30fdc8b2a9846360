package main

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// Percentiles against values worked out by hand with the definition in
// latstats.go: rank h = (n-1)·p/100, interpolated between x[floor h] and
// x[floor h + 1].
func TestPercentileByHand(t *testing.T) {
	oneToTen := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	oneToThousand := make([]float64, 1000)
	for i := range oneToThousand {
		oneToThousand[i] = float64(i + 1)
	}
	for _, c := range []struct {
		name   string
		sorted []float64
		p      float64
		want   float64
	}{
		{"one value is every percentile", []float64{7}, 50, 7},
		{"one value, p99.9", []float64{7}, 99.9, 7},
		{"p0 is the minimum", []float64{1, 2, 3, 4}, 0, 1},
		{"p100 is the maximum", []float64{1, 2, 3, 4}, 100, 4},
		// Even n: h = 3·0.5 = 1.5, halfway between 2 and 3.
		{"even median is the mean of the middle two", []float64{1, 2, 3, 4}, 50, 2.5},
		// h = 3·0.99 = 2.97: 3 + 0.97·(4-3).
		{"p99 of four", []float64{1, 2, 3, 4}, 99, 3.97},
		// Odd n: h = 2, exactly the middle value.
		{"odd median is the middle value", []float64{1, 5, 100}, 50, 5},
		// h = 9·0.5 = 4.5: 5 + 0.5.
		{"median of ten", oneToTen, 50, 5.5},
		// h = 9·0.99 = 8.91: 9 + 0.91.
		{"p99 of ten", oneToTen, 99, 9.91},
		// h = 9·0.999 = 8.991: 9 + 0.991.
		{"p99.9 of ten", oneToTen, 99.9, 9.991},
		// h = 999·0.99 = 989.01: x[989] = 990, + 0.01.
		{"p99 of a thousand", oneToThousand, 99, 990.01},
		// h = 999·0.999 = 998.001: x[998] = 999, + 0.001.
		{"p99.9 of a thousand", oneToThousand, 99.9, 999.001},
		// Uneven gaps: h = 3·0.99 = 2.97 between 20 and 1000: 20 + 0.97·980.
		{"a tail", []float64{10, 11, 20, 1000}, 99, 970.6},
	} {
		if got := percentile(c.sorted, c.p); !near(got, c.want) {
			t.Errorf("%s: percentile(%v, %v) = %v, want %v", c.name, c.sorted, c.p, got, c.want)
		}
	}
}

// Bucket k holds [2^(k/2), 2^((k+1)/2)) µs; the bounds by hand:
// √2 = 1.41421..., 2√2 = 2.82842..., 1/√2 = 0.70710...
func TestBucketOfByHand(t *testing.T) {
	for _, c := range []struct {
		us   float64
		want int
	}{
		{1, 0},        // a power of two starts its bucket
		{1.4142, 0},   // just under √2
		{1.4143, 1},   // just over √2
		{1.999999, 1}, // just under 2
		{2, 2},
		{2.8284, 2},
		{2.8285, 3},
		{4, 4},
		{0.5, -2},
		{0.7071, -2}, // just under 1/√2
		{0.7072, -1},
		{10, 6},   // 2·log2(10) = 6.64: [8, 11.31)
		{11.3, 6}, // 8√2 = 11.3137
		{11.32, 7},
		{100, 13}, // 2·log2(100) = 13.29: [90.51, 128)
		{128, 14},
		{1e6, 39}, // 1 s: 2·log2(10^6) = 39.86
		{0, -20},  // below the lowest bucket's bound: the lowest bucket
		{1e-9, -20},
	} {
		if got := bucketOf(c.us); got != c.want {
			t.Errorf("bucketOf(%v µs) = %d, want %d", c.us, got, c.want)
		}
	}
	for k, want := range map[int]float64{0: 1, 1: math.Sqrt2, 2: 2, 3: 2 * math.Sqrt2, 6: 8, 7: 8 * math.Sqrt2, -1: 1 / math.Sqrt2, -2: 0.5, -3: 0.5 / math.Sqrt2} {
		if got := bucketLow(k); !near(got, want) {
			t.Errorf("bucketLow(%d) = %v, want %v", k, got, want)
		}
	}
}

// A whole summary, every figure worked out by hand: values in ns.
func TestSummarizeByHand(t *testing.T) {
	// 2, 4, 4, 4, 5, 5, 7, 9 µs, unsorted: mean 5 µs, squared deviations
	// 9+1+1+1+0+0+4+16 = 32 µs², sample variance 32/7 µs².
	st := summarize([]float64{9000, 4000, 2000, 5000, 4000, 7000, 4000, 5000})
	if st.Samples != 8 {
		t.Fatalf("samples %d, want 8", st.Samples)
	}
	for _, c := range []struct {
		name      string
		got       *float64
		wantMicro float64
	}{
		{"min", st.MinSeconds, 2},
		{"max", st.MaxSeconds, 9},
		{"mean", st.MeanSeconds, 5},
		// h = 7·0.5 = 3.5 between 4 and 5.
		{"median", st.MedianSeconds, 4.5},
		// h = 7·0.99 = 6.93: 7 + 0.93·2.
		{"p99", st.P99Seconds, 8.86},
		// h = 7·0.999 = 6.993: 7 + 0.993·2.
		{"p99.9", st.P999Seconds, 8.986},
		{"stddev", st.StddevSeconds, math.Sqrt(32.0 / 7)},
	} {
		if c.got == nil || !near(*c.got, c.wantMicro/1e6) {
			t.Errorf("%s = %v, want %v µs", c.name, c.got, c.wantMicro)
		}
	}
	// Buckets: 2 µs is bucket 2 [2, 2.83); 4, 4, 4, 5, 5 bucket 4
	// [4, 5.66); 7 bucket 5 [5.66, 8); 9 bucket 6 [8, 11.31). Bucket 3
	// [2.83, 4) is empty and listed.
	want := []struct {
		low, high float64
		count     int
	}{{2, 2 * math.Sqrt2, 1}, {2 * math.Sqrt2, 4, 0}, {4, 4 * math.Sqrt2, 5}, {4 * math.Sqrt2, 8, 1}, {8, 8 * math.Sqrt2, 1}}
	if len(st.Histogram) != len(want) {
		t.Fatalf("histogram %+v, want %d buckets", st.Histogram, len(want))
	}
	for i, w := range want {
		b := st.Histogram[i]
		if !near(b.LowSeconds, w.low/1e6) || !near(b.HighSeconds, w.high/1e6) || b.Count != w.count {
			t.Errorf("bucket %d: %+v, want [%v, %v) µs × %d", i, b, w.low, w.high, w.count)
		}
	}
}

func TestSummarizeEdges(t *testing.T) {
	// No samples: every figure null, an empty histogram (not null).
	st := summarize(nil)
	if st.Samples != 0 || st.MinSeconds != nil || st.MedianSeconds != nil || st.P999Seconds != nil || st.StddevSeconds != nil || st.Histogram == nil || len(st.Histogram) != 0 {
		t.Errorf("empty summary %+v", st)
	}
	// One sample: every percentile is it, the deviation 0, one bucket.
	st = summarize([]float64{1500})
	for _, v := range []*float64{st.MinSeconds, st.MedianSeconds, st.P99Seconds, st.P999Seconds, st.MaxSeconds, st.MeanSeconds} {
		if !near(*v, 1.5e-6) {
			t.Errorf("one sample of 1.5 µs: %v", *v)
		}
	}
	if *st.StddevSeconds != 0 || len(st.Histogram) != 1 || st.Histogram[0].Count != 1 {
		t.Errorf("one sample: stddev %v, histogram %+v", *st.StddevSeconds, st.Histogram)
	}
}

// Half round trips stay exact: 2001 ns of round trip is 1000.5 ns.
func TestLatValuesHalf(t *testing.T) {
	rtt := []int64{2000, 2001, 3}
	half := latValues(rtt, true)
	full := latValues(rtt, false)
	for i, want := range []float64{1000, 1000.5, 1.5} {
		if half[i] != want {
			t.Errorf("half of %d ns = %v, want %v", rtt[i], half[i], want)
		}
		if full[i] != float64(rtt[i]) {
			t.Errorf("full %d ns = %v", rtt[i], full[i])
		}
	}
	// 2000 ns halved is exactly 1 µs: the start of bucket 0.
	if k := bucketOf(half[0] / 1000); k != 0 {
		t.Errorf("1000 ns in bucket %d, want 0", k)
	}
}
