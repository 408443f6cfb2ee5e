package tftrain

// Config, Trainer, Predictions and Model: these train examples/configs/tiny.yaml.

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

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
	if report.Memory.NumUnits == 0 || report.Validation.Windows == 0 {
		t.Errorf("memory report %+v, validation %+v", report.Memory, report.Validation)
	}
	if math.Abs(report.BestValidationLoss-report.Validation.Loss) > 1e-12 || report.PeakActivationBytes <= 0 {
		t.Errorf("report %+v", report)
	}
	if mem := must(trainer.MeasureMemory()); mem.NumUnits != report.Memory.NumUnits ||
		mem.CheckpointedPeakBytes <= 0 {
		t.Errorf("MeasureMemory %+v, report %+v", mem, report.Memory)
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

// A refit (training.init_from, docs/refit.md) starts from the saved model: its first validation
// loss is the saved model's, on the same data. A key that contradicts the saved architecture is
// a config error naming it.
func TestRefit(t *testing.T) {
	first := t.TempDir()
	cfg := tinyConfig(t)
	defer cfg.Close()
	check(t, cfg.Set("output.directory", first))
	trainer := must(NewTrainer(cfg))
	saved := must(trainer.Train())
	trainer.Close()

	refit := tinyConfig(t)
	defer refit.Close()
	check(t, refit.Set("training.init_from", filepath.Join(first, "model")))
	trainer = must(NewTrainer(refit))
	report := must(trainer.Train())
	trainer.Close()
	if report.InitialValidationLoss != saved.BestValidationLoss {
		t.Errorf("refit's first validation loss %v, the saved model's %v",
			report.InitialValidationLoss, saved.BestValidationLoss)
	}
	out := must(refit.Get("output.directory"))
	summary := must(os.ReadFile(filepath.Join(out, "summary.json")))
	if !strings.Contains(string(summary), `"init_from"`) {
		t.Errorf("summary.json lacks init_from")
	}
	check(t, refit.Set("model.hidden_size", "16"))
	_, err := NewTrainer(refit)
	wantStatus(t, err, StatusConfig, "model.hidden_size is 16 here but 8")
}

// twoFoldRefit is tiny.yaml backtested over two folds, each refit for one epoch from the fold
// before.
func twoFoldRefit(t *testing.T) *Config {
	cfg := tinyConfig(t)
	check(t, cfg.Set("backtest.folds", "2"))
	check(t, cfg.Set("backtest.mode", "refit"))
	check(t, cfg.Set("backtest.refit_epochs", "1"))
	return cfg
}

// A refit backtest of tiny.yaml over two folds: both finish, each fold's forecasts are one
// window per series, and the pooled ones are both folds'.
func TestBacktest(t *testing.T) {
	cfg := twoFoldRefit(t)
	defer cfg.Close()
	report := must(Backtest(cfg))
	if report.Folds != 2 || report.FinishedFolds != 2 || len(report.PerFold) != 2 {
		t.Fatalf("folds %+v", report)
	}
	if report.Overall.Model.Windows != report.PerFold[0].Model.Windows+report.PerFold[1].Model.Windows {
		t.Errorf("pooled windows %d", report.Overall.Model.Windows)
	}
	if !(report.Overall.Model.QRiskP50 > 0) || !(report.Overall.Naive.QRiskP50 > 0) {
		t.Errorf("q-risk %+v", report.Overall)
	}
	out := must(cfg.Get("output.directory"))
	if _, err := os.Stat(filepath.Join(out, "backtest.csv")); err != nil {
		t.Error(err)
	}
	check(t, cfg.Set("backtest.folds", "500"))
	_, err := Backtest(cfg)
	wantStatus(t, err, StatusConfig, "backtest.folds 500")
}

// Progress reaches a backtest's callback with the fold it trains; cancelling in fold 2 keeps
// fold 1 on disk, and a panic in the callback cancels too and reaches the error.
func TestBacktestProgress(t *testing.T) {
	cfg := twoFoldRefit(t)
	defer cfg.Close()
	seen := map[int64]int{}
	report := must(BacktestWithProgress(cfg, func(p Progress) bool {
		if p.Folds != 2 || p.Fold < 1 || p.Fold > 2 {
			t.Errorf("progress %+v", p)
		}
		seen[p.Fold]++
		return false
	}))
	if report.FinishedFolds != 2 || seen[1] == 0 || seen[2] == 0 {
		t.Fatalf("finished %d, progress calls per fold %v", report.FinishedFolds, seen)
	}

	out := filepath.Join(t.TempDir(), "cancelled")
	check(t, cfg.Set("output.directory", out))
	_, err := BacktestWithProgress(cfg, func(p Progress) bool { return p.Fold == 2 })
	wantStatus(t, err, StatusCancelled, "")
	for _, kept := range []string{filepath.Join("folds", "fold-1", "summary.json"), "backtest.json"} {
		if _, err := os.Stat(filepath.Join(out, kept)); err != nil {
			t.Errorf("after a cancel in fold 2: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "folds", "fold-2", "summary.json")); err == nil {
		t.Error("fold 2 was cancelled, yet its summary.json is there")
	}

	_, err = BacktestWithProgress(cfg, func(p Progress) bool { panic("in the callback") })
	wantStatus(t, err, StatusCancelled, "the progress callback panicked: in the callback")
}
