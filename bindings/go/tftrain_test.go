package tftrain

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// tinyConfig is examples/configs/tiny.yaml (TFTRAIN_TINY_CONFIG overrides the path).
func tinyConfig(t *testing.T) *Config {
	t.Helper()
	path := os.Getenv("TFTRAIN_TINY_CONFIG")
	if path == "" {
		path = filepath.Join("..", "..", "examples", "configs", "tiny.yaml")
	}
	cfg, err := LoadConfig(path)
	if err != nil {
		t.Fatalf("LoadConfig(%s): %v", path, err)
	}
	if err := cfg.Set("output.directory", t.TempDir()); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func wantStatus(t *testing.T, err error, status Status, fragment string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("want an *Error with %v, got %v", status, err)
	}
	if e.Status != status {
		t.Fatalf("want status %v, got %v (%s)", status, e.Status, e.Message)
	}
	if !strings.Contains(e.Message, fragment) {
		t.Fatalf("message %q lacks %q", e.Message, fragment)
	}
}

// must returns v, or panics (failing the test run) on err.
func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprintf("unexpected error: %v", err))
	}
	return v
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

func TestVersion(t *testing.T) {
	major, minor, patch := VersionNumbers()
	if got := Version(); got != fmt.Sprintf("%d.%d.%d", major, minor, patch) {
		t.Fatalf("Version() = %q, numbers %d.%d.%d", got, major, minor, patch)
	}
	if StatusConfig.String() != "ERROR_CONFIG" || StatusOK.String() != "OK" {
		t.Fatalf("status names: %v %v", StatusConfig, StatusOK)
	}
}

// The seed formula table of tests/capi/test_capi_checkpoint.c.
func TestSeedFormulas(t *testing.T) {
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

func TestConfig(t *testing.T) {
	cfg := tinyConfig(t)
	defer cfg.Close()
	if v := must(cfg.Get("training.epochs")); v != "2" {
		t.Errorf("training.epochs = %q", v)
	}
	check(t, cfg.Set("training.epochs", "3"))
	if v := must(cfg.Get("training.epochs")); v != "3" {
		t.Errorf("training.epochs = %q after Set", v)
	}
	err := cfg.Set("training.epochs", "ten")
	wantStatus(t, err, StatusConfig, "training.epochs")
	wantStatus(t, cfg.Set("training.epochs", "3\x00"), StatusInvalidArgument, "NUL")
	err = cfg.Set("training.epoch", "1")
	wantStatus(t, err, StatusConfig, "epoch")
	_, err = cfg.Get("no.such.key")
	wantStatus(t, err, StatusConfig, "")

	cp := must(CheckpointUniform(2))
	check(t, cfg.SetCheckpoint(cp))
	cp.Close()
	back := must(cfg.Checkpoint())
	if s := must(back.Strategy()); s != StrategyUniform {
		t.Errorf("strategy %v", s)
	}
	back.Close()
	check(t, cfg.Validate())
	text := must(cfg.YAML())
	again := must(ParseConfig(text))
	if v := must(again.Get("training.epochs")); v != "3" {
		t.Errorf("round trip epochs %q", v)
	}
	again.Close()
	clone := must(cfg.Clone())
	check(t, clone.Close())
}

func TestBadConfig(t *testing.T) {
	_, err := ParseConfig("data:\n  path: x.csv\ntraining:\n  epochs: ten\n")
	wantStatus(t, err, StatusConfig, "training.epochs")
	if !errors.Is(err, ErrConfig) {
		t.Error("errors.Is(ErrConfig) failed")
	}
	_, err = LoadConfig(filepath.Join(t.TempDir(), "missing.yaml"))
	wantStatus(t, err, StatusIO, "")
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("windows:\n  encoder_length: 4\n  prediction_length: 2\ntraining:\n  epoch: 3\n"), 0o644)
	_, err = LoadConfig(bad)
	wantStatus(t, err, StatusConfig, "bad.yaml:")
}

func TestTrainProgressAndCancel(t *testing.T) {
	cfg := tinyConfig(t)
	defer cfg.Close()
	trainer := must(NewTrainer(cfg))
	defer trainer.Close()

	var steps, epochs int
	var lastEpoch, lastStep int64
	check(t, trainer.SetProgress(func(p Progress) bool {
		if p.Kind == ProgressStep {
			if p.Epoch < lastEpoch || (p.Epoch == lastEpoch && p.Step <= lastStep) {
				t.Errorf("progress went back: %d/%d after %d/%d", p.Epoch, p.Step, lastEpoch, lastStep)
			}
			lastEpoch, lastStep = p.Epoch, p.Step
			steps++
		} else {
			epochs++
			if math.IsNaN(p.ValidationLoss) {
				t.Error("epoch record without validation loss")
			}
		}
		return false
	}))
	report := must(trainer.Train())
	if report.EpochsRun != 2 || epochs != 2 || steps < 2 {
		t.Errorf("epochs_run %d, epoch records %d, step records %d", report.EpochsRun, epochs, steps)
	}
	if !(report.FinalValidationLoss > 0) || math.IsInf(report.FinalValidationLoss, 0) {
		t.Errorf("final validation loss %v", report.FinalValidationLoss)
	}
	if report.Memory.NumUnits == 0 {
		t.Errorf("memory report %+v", report.Memory)
	}
	m := must(trainer.Evaluate())
	if m.Windows <= 0 || !(m.Loss > 0) {
		t.Errorf("evaluate %+v", m)
	}

	// Cancel from the callback after 3 steps.
	calls := 0
	check(t, trainer.SetProgress(func(p Progress) bool {
		calls++
		return calls >= 3
	}))
	_, err := trainer.Train()
	if !errors.Is(err, ErrCancelled) || calls != 3 {
		t.Fatalf("cancel: err %v after %d calls", err, calls)
	}

	// A panic in the callback cancels and is reported, not propagated.
	check(t, trainer.SetProgress(func(p Progress) bool { panic("boom") }))
	_, err = trainer.Train()
	if !errors.Is(err, ErrCancelled) || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("panicking callback: %v", err)
	}

	// Cancel requested while not training applies to the next Train.
	check(t, trainer.SetProgress(nil))
	check(t, trainer.Cancel())
	_, err = trainer.Train()
	if !errors.Is(err, ErrCancelled) {
		t.Fatalf("Cancel before Train: %v", err)
	}

	// Cancel from another goroutine while training.
	started := make(chan struct{})
	var once sync.Once
	check(t, trainer.SetProgress(func(p Progress) bool {
		once.Do(func() { close(started) })
		time.Sleep(20 * time.Millisecond)
		return false
	}))
	done := make(chan error)
	go func() {
		<-started
		done <- trainer.Cancel()
	}()
	_, err = trainer.Train()
	if !errors.Is(err, ErrCancelled) {
		t.Fatalf("Cancel from another goroutine: %v", err)
	}
	check(t, <-done)

	check(t, trainer.Close())
	if err := trainer.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("double Close: %v", err)
	}
	if _, err := trainer.Train(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Train after Close: %v", err)
	}
	if err := trainer.Cancel(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Cancel after Close: %v", err)
	}
}

// Misuse during training: other methods fail from the callback; Close cancels and the
// trainer is released when Train returns.
func TestCloseDuringTrain(t *testing.T) {
	cfg := tinyConfig(t)
	defer cfg.Close()
	trainer := must(NewTrainer(cfg))
	var reentrant, closeErr error
	calls := 0
	check(t, trainer.SetProgress(func(p Progress) bool {
		calls++
		if calls == 1 {
			_, reentrant = trainer.Evaluate()
			closeErr = trainer.Close()
		}
		return false
	}))
	_, err := trainer.Train()
	if !errors.Is(err, ErrCancelled) || closeErr != nil {
		t.Fatalf("Train after Close in the callback: %v (Close: %v)", err, closeErr)
	}
	if reentrant == nil || !strings.Contains(reentrant.Error(), "training") {
		t.Fatalf("Evaluate from the callback: %v", reentrant)
	}
	if _, err := trainer.Train(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Train after Close: %v", err)
	}
	if err := trainer.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second Close: %v", err)
	}
}

func TestPredictSaveAndModel(t *testing.T) {
	cfg := tinyConfig(t)
	defer cfg.Close()
	check(t, cfg.Set("training.epochs", "1"))
	trainer := must(NewTrainer(cfg))
	defer trainer.Close()
	must(trainer.Train())
	preds := must(trainer.Predict())
	defer preds.Close()
	f, h, q, err := preds.Shape()
	if err != nil || f == 0 || h != 7 || q != 3 {
		t.Fatalf("shape %d %d %d %v", f, h, q, err)
	}
	levels := must(preds.Quantiles())
	if len(levels) != 3 || levels[1] != 0.5 {
		t.Errorf("quantiles %v", levels)
	}
	values := must(preds.Values())
	if len(values) != f*h*q {
		t.Errorf("%d values", len(values))
	}
	if len(must(preds.Actuals())) != f*h || len(must(preds.Times())) != f*h {
		t.Error("actuals/times size")
	}
	info := must(preds.Info(f - 1))
	if !info.IsFuture {
		t.Errorf("last forecast %+v", info)
	}
	if name := must(preds.SeriesName(info.Series)); name == "" {
		t.Error("empty series name")
	}
	_, err = preds.Info(f)
	wantStatus(t, err, StatusInvalidArgument, "")
	dir := t.TempDir()
	check(t, preds.WriteCSV(filepath.Join(dir, "forecast.csv")))
	check(t, trainer.PredictCSV(filepath.Join(dir, "forecast2.csv")))
	check(t, trainer.Save(filepath.Join(dir, "model")))
	model := must(LoadModel(filepath.Join(dir, "model")))
	defer model.Close()
	p2 := must(model.Predict(""))
	f2, _, _, _ := p2.Shape()
	if f2 != f {
		t.Errorf("model forecasts %d, trainer %d", f2, f)
	}
	check(t, p2.Close())
	_, err = LoadModel(filepath.Join(dir, "nothing"))
	if err == nil {
		t.Error("LoadModel(missing) succeeded")
	}
}

// Finalizers release objects that were never closed (no crash, no leak of handles).
func TestFinalizers(t *testing.T) {
	for i := 0; i < 100; i++ {
		_, _ = CheckpointUniform(2)
	}
	runtime.GC()
	runtime.GC()
}

// A Parquet copy of the tiny data (TFTRAIN_TINY_PARQUET, written by ctest's fixture with
// scripts/csv_to_parquet.py) trains the same model as the CSV, and a saved model reads it.
func TestParquetTrainsLikeCSV(t *testing.T) {
	parquet := os.Getenv("TFTRAIN_TINY_PARQUET")
	if parquet == "" {
		t.Skip("TFTRAIN_TINY_PARQUET is not set (a build without Parquet)")
	}
	train := func(data string) (float64, *Trainer) {
		cfg := tinyConfig(t)
		defer cfg.Close()
		check(t, cfg.Set("training.epochs", "1"))
		if data != "" {
			check(t, cfg.Set("data.path", data))
		}
		trainer := must(NewTrainer(cfg))
		return must(trainer.Train()).FinalValidationLoss, trainer
	}
	fromCSV, a := train("")
	defer a.Close()
	fromParquet, b := train(parquet)
	defer b.Close()
	if fromCSV != fromParquet {
		t.Fatalf("final validation loss: csv %v, parquet %v", fromCSV, fromParquet)
	}
	dir := filepath.Join(t.TempDir(), "model")
	check(t, a.Save(dir))
	model := must(LoadModel(dir))
	defer model.Close()
	preds := must(model.Predict(parquet))
	defer preds.Close()
	if f, _, _, _ := preds.Shape(); f == 0 {
		t.Fatal("no forecasts from the Parquet file")
	}
}
