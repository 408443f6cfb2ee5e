package tftrain

// Version, errors and CheckpointConfig: no training.

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	major, minor, patch := VersionNumbers()
	if got := Version(); got != fmt.Sprintf("%d.%d.%d", major, minor, patch) {
		t.Fatalf("Version() = %q, numbers %d.%d.%d", got, major, minor, patch)
	}
	if got, want := APIVersion(), major*10000+minor*100+patch; got != want {
		t.Fatalf("APIVersion() = %d, want %d (the packed version)", got, want)
	}
	if StatusConfig.String() != "ERROR_CONFIG" || StatusOK.String() != "OK" {
		t.Fatalf("status names: %v %v", StatusConfig, StatusOK)
	}
}

// The estimates' table of tests/capi/test_capi_checkpoint.c.
func TestEstimateFormulas(t *testing.T) {
	uniform := func(k int) func() (*CheckpointConfig, error) {
		return func() (*CheckpointConfig, error) { return CheckpointUniform(k) }
	}
	selective := func(l ...int) func() (*CheckpointConfig, error) {
		return func() (*CheckpointConfig, error) { return CheckpointSelective(l...) }
	}
	dynamic := func(n int, f float64, min int) func() (*CheckpointConfig, error) {
		return func() (*CheckpointConfig, error) {
			c, err := CheckpointDynamic(n, f)
			if err == nil && min > 0 {
				err = c.SetMinInterval(min)
			}
			return c, err
		}
	}
	rows := []struct {
		label    string
		make     func() (*CheckpointConfig, error)
		n, i     int
		should   bool
		savings  float64
		overhead float64
	}{
		{"uniform(2) n6 i0", uniform(2), 6, 0, true, 1.0 - 3.0/6.0, 1.0 + 1.0/6.0},
		{"uniform(2) n6 i1", uniform(2), 6, 1, false, 1.0 - 3.0/6.0, 1.0 + 1.0/6.0},
		{"uniform(2) n6 i4", uniform(2), 6, 4, true, 1.0 - 3.0/6.0, 1.0 + 1.0/6.0},
		{"uniform(3) n7 i3", uniform(3), 7, 3, true, 1.0 - 3.0/7.0, 1.0 + 1.0/7.0},
		{"uniform(3) n7 i5", uniform(3), 7, 5, false, 1.0 - 3.0/7.0, 1.0 + 1.0/7.0},
		{"uniform(3) n3 (k >= n)", uniform(3), 3, 0, true, 0.0, 1.0},
		{"uniform(2) n1 (k >= n)", uniform(2), 1, 0, true, 0.0, 1.0},
		{"uniform(0)", uniform(0), 6, 0, false, 0.0, 1.0},
		{"selective{0,3} n6 i3", selective(0, 3), 6, 3, true, 1.0 - 2.0/6.0, 1.0 + 1.0/6.0},
		{"selective{0,3} n6 i2", selective(0, 3), 6, 2, false, 1.0 - 2.0/6.0, 1.0 + 1.0/6.0},
		{"selective{0,3} n10 i0", selective(0, 3), 10, 0, true, 1.0 - 2.0/10.0, 1.0 + 2.0/10.0},
		{"selective{} n6", selective(), 6, 0, false, 0.0, 1.0},
		{"dynamic(10,0.35) i3", dynamic(10, 0.35, 0), 10, 3, true, 1.0 - 0.35, 1.0 + 0.65*0.3},
		{"dynamic(10,0.35) i4", dynamic(10, 0.35, 0), 10, 4, false, 1.0 - 0.35, 1.0 + 0.65*0.3},
		{"dynamic(6,0.3)+min4 i4", dynamic(6, 0.3, 4), 6, 4, true, 1.0 - 0.3, 1.0 + 0.7*0.3},
		{"dynamic(6,0.3)+min4 i1", dynamic(6, 0.3, 4), 6, 1, false, 1.0 - 0.3, 1.0 + 0.7*0.3},
		{"none", CheckpointNone, 6, 0, false, 0.0, 1.0},
	}
	for _, row := range rows {
		c := must(row.make())
		should := must(c.ShouldCheckpoint(row.i))
		savings := must(c.MemorySavings(row.n))
		overhead := must(c.ComputeOverhead(row.n))
		if should != row.should || math.Abs(savings-row.savings) > 1e-12 ||
			math.Abs(overhead-row.overhead) > 1e-12 {
			t.Errorf("%s: got should=%v savings=%.15g overhead=%.15g, want %v %.15g %.15g",
				row.label, should, savings, overhead, row.should, row.savings, row.overhead)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCheckpointFlagsAndValidation(t *testing.T) {
	c := must(CheckpointNone())
	if a := must(c.CheckpointAttention()); a {
		t.Error("none: attention set")
	}
	if f := must(c.CheckpointFFN()); f {
		t.Error("none: ffn set")
	}
	if m := must(c.MinInterval()); m != 1 {
		t.Errorf("none: min interval %d", m)
	}
	if s := must(c.Strategy()); s != StrategyNone {
		t.Errorf("none: strategy %v", s)
	}
	c.Close()

	c = must(CheckpointDynamic(6, 0.5))
	defer c.Close()
	if s := must(c.Strategy()); s != StrategyDynamic {
		t.Errorf("strategy %v", s)
	}
	if a := must(c.CheckpointAttention()); !a {
		t.Error("dynamic: attention not set")
	}
	check(t, c.SetCheckpointAttention(false))
	check(t, c.SetCheckpointFFN(false))
	copy := must(c.Clone())
	defer copy.Close()
	if a, f := must(copy.CheckpointAttention()), must(copy.CheckpointFFN()); a || f {
		t.Errorf("clone flags %v %v", a, f)
	}
	check(t, copy.Validate())
	check(t, copy.SetMinInterval(0))
	wantStatus(t, copy.Validate(), StatusConfig, "checkpoint.min_checkpoint_interval: must be at least 1 (got 0)")
	if !errors.Is(copy.Validate(), ErrConfig) {
		t.Error("errors.Is(ErrConfig) failed")
	}

	_, err := CheckpointDynamic(0, 0.5)
	wantStatus(t, err, StatusConfig, "checkpoint.num_layers: must be at least 1 (got 0)")
	_, err = CheckpointDynamic(6, 1.5)
	wantStatus(t, err, StatusConfig, "(got 1.5)")
	_, err = CheckpointDynamic(6, math.NaN())
	wantStatus(t, err, StatusConfig, "(got nan)")
	_, err = CheckpointUniform(-1)
	wantStatus(t, err, StatusInvalidArgument, "negative")

	u := must(CheckpointUniform(0))
	wantStatus(t, u.Validate(), StatusConfig, "checkpoint.interval: must be at least 1 (got 0)")
	u.Close()
	d := must(CheckpointSelective(1, 1))
	wantStatus(t, d.Validate(), StatusConfig, "duplicate index 1")
	d.Close()
}

func TestSummaryYAMLJSON(t *testing.T) {
	c := must(CheckpointDynamic(6, 0.3))
	defer c.Close()
	if s := must(c.Summary()); s != "Dynamic checkpointing (6 layers, 30.0% memory target)" {
		t.Errorf("summary %q", s)
	}
	u := must(CheckpointUniform(2))
	if s := must(u.Summary()); s != "Uniform checkpointing every 2 layers" {
		t.Errorf("summary %q", s)
	}
	u.Close()

	sel := must(CheckpointSelective(0, 3))
	defer sel.Close()
	check(t, sel.SetCheckpointFFN(false))
	text := must(sel.YAML())
	if !strings.Contains(text, "strategy: selective") {
		t.Errorf("yaml %q", text)
	}
	back := must(CheckpointFromYAML(text))
	if s := must(back.Strategy()); s != StrategySelective {
		t.Errorf("strategy %v", s)
	}
	if v := must(back.ShouldCheckpoint(3)); !v {
		t.Error("layer 3 not checkpointed after YAML round trip")
	}
	if f := must(back.CheckpointFFN()); f {
		t.Error("ffn set after YAML round trip")
	}
	back.Close()
	js := must(sel.JSON())
	back = must(CheckpointFromJSON(js))
	if v := must(back.ShouldCheckpoint(0)); !v {
		t.Error("layer 0 not checkpointed after JSON round trip")
	}
	back.Close()

	_, err := CheckpointFromYAML("strategy: uniform\ninterval: 2\nintervall: 3\n")
	wantStatus(t, err, StatusConfig, "unknown key 'intervall'")
	wantStatus(t, err, StatusConfig, "line 3")
	_, err = CheckpointFromYAML("strategy: [unclosed\n")
	wantStatus(t, err, StatusConfig, "")
	_, err = CheckpointFromJSON(`{"strategy": 3}`)
	wantStatus(t, err, StatusConfig, "checkpoint.strategy")
	_, err = CheckpointFromJSON("{not json")
	wantStatus(t, err, StatusConfig, "")
}

func TestMisuseAfterClose(t *testing.T) {
	c := must(CheckpointUniform(2))
	check(t, c.Close())
	if err := c.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second Close: %v", err)
	}
	_, err := c.ShouldCheckpoint(0)
	if !errors.Is(err, ErrClosed) || !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("use after Close: %v", err)
	}
	var nilConfig *CheckpointConfig
	if _, err := nilConfig.Summary(); !errors.Is(err, ErrClosed) {
		t.Fatalf("nil receiver: %v", err)
	}
	cfg := tinyConfig(t)
	check(t, cfg.Close())
	if err := cfg.Set("training.epochs", "1"); !errors.Is(err, ErrClosed) {
		t.Fatalf("config use after Close: %v", err)
	}
	if _, err := NewTrainer(cfg); !errors.Is(err, ErrClosed) {
		t.Fatalf("NewTrainer(closed): %v", err)
	}
	cfg2 := tinyConfig(t)
	defer cfg2.Close()
	if err := cfg2.SetCheckpoint(c); !errors.Is(err, ErrClosed) {
		t.Fatalf("SetCheckpoint(closed): %v", err)
	}
}
