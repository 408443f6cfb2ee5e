package main

import (
	"math"
	"testing"
)

func TestFormatMatchesC(t *testing.T) {
	cases := []struct {
		x    float64
		prec int
		want string
	}{
		{0.212486065123, 9, "0.212486065"},
		{0.5, 9, "0.5"},
		{123456789, 9, "123456789"},
		{1234567890, 9, "1.23456789e+09"},
		{0.0001, 9, "0.0001"},
		{0.00001234, 9, "1.234e-05"},
		{1e100, 9, "1e+100"},
		{0, 9, "0"},
		{-2.5, 9, "-2.5"},
		{math.NaN(), 9, "nan"},
		{math.Inf(1), 9, "inf"},
		{9.9999999999, 9, "10"},
	}
	for _, c := range cases {
		if got := formatG(c.x, c.prec); got != c.want {
			t.Errorf("formatG(%v, %d) = %q, want %q", c.x, c.prec, got, c.want)
		}
	}
	if got := formatF(0.80151, 4); got != "0.8015" {
		t.Errorf("formatF = %q", got)
	}
}
