package main

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// Sizes on the command line: every size flag of every command (bench
// --size, --bytes, --warmup; rping -S) parses with sizeValue, so that one
// spelling means one number everywhere.
//
// A size is a whole number of octets, written plainly (4096) or with a unit:
//
//	K, KB, M, MB, G, GB, T, TB       decimal (SI): 1000, 1000², ...
//	KiB, MiB, GiB, TiB (Ki, Mi, ...) binary (IEC): 1024, 1024², ...
//	B                                octets, as in 4096B
//
// as the SI and IEC prefixes are defined, and as humanize and most tools
// that print sizes read them. Units are case-insensitive except that
// the binary ones need their "i" ("64k" is 64000, "64kib" 65536). A
// fraction is allowed when the result is a whole number (1.5KiB = 1536).
// The value is always said back with its exact octet count (sayOctets) so
// that nobody mistakes 64K for 65536.

// sizeExamples ends every size error: what a valid size looks like.
const sizeExamples = "sizes are positive numbers of octets, e.g. 4096, 64KiB, 1MB"

var sizeUnits = map[string]int64{
	"": 1, "b": 1,
	"k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12, "tb": 1e12,
	"ki": 1 << 10, "kib": 1 << 10, "mi": 1 << 20, "mib": 1 << 20, "gi": 1 << 30, "gib": 1 << 30, "ti": 1 << 40, "tib": 1 << 40,
}

// parseOctets reads a size as described above; it rejects negative
// numbers, unknown units, fractions of an octet and values past int64.
func parseOctets(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, errors.New(sizeExamples)
	}
	if t[0] == '-' {
		return 0, errors.New(sizeExamples)
	}
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.' || t[i] == '+' && i == 0) {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult, ok := sizeUnits[unit]
	if num == "" || num == "+" || !ok {
		return 0, errors.New(sizeExamples)
	}
	// Exact arithmetic, so that 1.5KiB is 1536 and 0.1B is refused
	// rather than rounded.
	r, ok := new(big.Rat).SetString(strings.TrimPrefix(num, "+"))
	if !ok {
		return 0, errors.New(sizeExamples)
	}
	r.Mul(r, new(big.Rat).SetInt64(mult))
	if !r.IsInt() {
		return 0, fmt.Errorf("%s is not a whole number of octets; %s", num+t[i:], sizeExamples)
	}
	if !r.Num().IsInt64() {
		return 0, fmt.Errorf("too large; %s", sizeExamples)
	}
	return r.Num().Int64(), nil
}

// sizeValue is a size flag (a pflag.Value, so cobra's help shows its
// type and default). min and max bound it; auto, when set, is a word
// accepted instead of a number (bench --warmup auto), leaving isAuto set.
type sizeValue struct {
	n        int64
	min, max int64
	auto     string
	isAuto   bool
	what     string // what the number counts, for range errors: "message size"
}

func newSize(def, min, max int64, what string) *sizeValue {
	return &sizeValue{n: def, min: min, max: max, what: what}
}

func (v *sizeValue) Set(s string) error {
	if v.auto != "" && strings.EqualFold(strings.TrimSpace(s), v.auto) {
		v.isAuto = true
		return nil
	}
	n, err := parseOctets(s)
	if err != nil {
		return err
	}
	if n < v.min || n > v.max {
		return fmt.Errorf("%s: %s is out of range: want %s to %s", v.what, sayOctets(n), sayOctets(v.min), sayOctets(v.max))
	}
	v.n, v.isAuto = n, false
	return nil
}

// String is the value as a flag would take it, in a unit when exact
// ("256MiB", "64kB"), so that help shows defaults the way users type them.
func (v *sizeValue) String() string {
	if v.isAuto {
		return v.auto
	}
	if s := shortOctets(v.n); v.n >= 1000 && !strings.Contains(s, ".") {
		return strings.ReplaceAll(s, " ", "")
	}
	return strconv.FormatInt(v.n, 10)
}

func (v *sizeValue) Type() string { return "size" }

func (v *sizeValue) Int64() int64 { return v.n }

// sayOctets says a size back as parsed: the exact octet count, and for
// large ones the unit it is a whole multiple of ("65536 octets (64 KiB)",
// "64000 octets (64 kB)"), or an SI approximation ("1000001 octets (1.0 MB)").
func sayOctets(n int64) string {
	if n < 1000 && n > -1000 {
		if n == 1 {
			return "1 octet"
		}
		return fmt.Sprintf("%d octets", n)
	}
	return fmt.Sprintf("%d octets (%s)", n, shortOctets(n))
}

// shortOctets is the unit part of sayOctets: the unit, binary or decimal,
// that n is the shortest whole multiple of ("64 KiB", "64 kB", "64 MB"; the
// decimal one on a tie: 640000 is "640 kB", not "625 KiB"), or else a
// decimal approximation ("1.0 MB").
func shortOctets(n int64) string {
	units := []struct {
		d    int64
		name string
	}{{1 << 40, "TiB"}, {1e12, "TB"}, {1 << 30, "GiB"}, {1e9, "GB"}, {1 << 20, "MiB"}, {1e6, "MB"}, {1 << 10, "KiB"}, {1e3, "kB"}}
	best := ""
	for _, u := range units {
		if n >= u.d && n%u.d == 0 {
			s := fmt.Sprintf("%d %s", n/u.d, u.name)
			// Units run from large to small, each binary before its
			// decimal neighbour: a later one wins only if shorter, or as
			// long and decimal.
			if best == "" || len(s) < len(best) || len(s) == len(best) && !strings.Contains(u.name, "i") {
				best = s
			}
		}
	}
	if best != "" {
		return best
	}
	for _, u := range units {
		if u.name[len(u.name)-2] != 'i' && n >= u.d {
			return fmt.Sprintf("%.1f %s", float64(n)/float64(u.d), u.name)
		}
	}
	return fmt.Sprintf("%d B", n)
}
