package tftrain

import (
	"fmt"
	"runtime"
	"runtime/cgo"
	"sync"

	"tftrain/internal/swig"
)

// ProgressKind says what a Progress record reports.
type ProgressKind int

// The progress kinds.
const (
	ProgressStep  ProgressKind = 0 // after an optimisation step
	ProgressEpoch ProgressKind = 1 // after an epoch's validation
)

// Progress is what the progress callback receives (tft_progress).
type Progress struct {
	Kind                ProgressKind
	Epoch               int64 // 1-based
	Epochs              int64
	Step                int64 // 1-based within the epoch
	StepsPerEpoch       int64
	TrainLoss           float64
	ValidationLoss      float64 // ProgressEpoch only; NaN otherwise
	SamplesPerSecond    float64
	PeakActivationBytes int64
	LearningRate        float64
	Fold                int64 // BacktestWithProgress: the fold training (1-based); 0 in a Trainer
	Folds               int64 // BacktestWithProgress: backtest.folds; 0 in a Trainer
}

// ProgressFunc is called after every step and epoch on the goroutine running Train (or
// BacktestWithProgress); it returns true to cancel (Train then returns an ErrCancelled error).
// A panic in it cancels too; the returned error then carries the panic value.
type ProgressFunc func(p Progress) (cancel bool)

// progressHandle wraps fn for tftgoProgress: a panic in fn is stored through record and
// cancels the run. The caller deletes the handle once the run has returned.
func progressHandle(fn ProgressFunc, record func(panicked any)) cgo.Handle {
	wrapped := swig.ProgressFunc(func(d *swig.ProgressData) (cancel bool) {
		defer func() {
			if r := recover(); r != nil {
				record(r)
				cancel = true
			}
		}()
		return fn(Progress{
			Kind: ProgressKind(d.Kind), Epoch: d.Epoch, Epochs: d.Epochs, Step: d.Step,
			StepsPerEpoch: d.StepsPerEpoch, TrainLoss: d.TrainLoss,
			ValidationLoss: d.ValidationLoss, SamplesPerSecond: d.SamplesPerSecond,
			PeakActivationBytes: d.PeakActivationBytes, LearningRate: d.LearningRate,
			Fold: d.Fold, Folds: d.Folds,
		})
	})
	return cgo.NewHandle(wrapped)
}

// withPanic adds a progress callback's panic to the error of the run it cancelled.
func withPanic(err error, panicked any) error {
	if panicked != nil {
		if e, ok := err.(*Error); ok && e.Status == StatusCancelled {
			e.Message = fmt.Sprintf("%s (the progress callback panicked: %v)", e.Message, panicked)
		}
	}
	return err
}

// Metrics is the forecast quality of a set of windows (tft_metrics).
type Metrics struct {
	Loss     float64
	QRiskP50 float64
	QRiskP90 float64
	MAEP50   float64
	Windows  int64
}

// MemoryReport is one training step's activation memory (tft_memory_report).
type MemoryReport struct {
	CheckpointedPeakBytes    int64
	UncheckedPeakBytes       int64
	MeasuredSavings          float64
	PredictedSavings         float64
	PredictedComputeOverhead float64
	NumUnits                 int
}

// TrainReport says how a training run ended: tft_train_report's summary (tft_train_summary),
// validation metrics and memory report, read through tft_train_report_get_*.
type TrainReport struct {
	EpochsRun             int64
	BestEpoch             int64
	ResumedFromEpoch      int64
	EarlyStopped          bool
	InitialValidationLoss float64
	BestValidationLoss    float64
	FinalValidationLoss   float64
	FinalTrainLoss        float64
	Validation            Metrics
	TrainSeconds          float64
	SamplesPerSecond      float64
	PeakActivationBytes   int64
	Memory                MemoryReport
}

// Trainer trains one model (tft_trainer). Close it when done.
//
// While Train or Resume runs, only Cancel and Close may be called (from the progress
// callback or another goroutine); other methods return an error then. Close during
// training cancels it and releases the trainer when Train returns.
type Trainer struct {
	mu           sync.Mutex // guards everything below
	raw          swig.Trainer
	running      bool
	closePending swig.Trainer // closed while running: freed when Train returns
	progress     cgo.Handle
	panicked     any
}

// NewTrainer reads the data, builds the model and returns a trainer; cfg is copied.
func NewTrainer(cfg *Config) (*Trainer, error) {
	if cfg == nil || cfg.raw == nil {
		return nil, closedError("Config")
	}
	defer runtime.KeepAlive(cfg)
	var raw swig.Trainer
	if err := call(func() { raw = swig.NewTrainer(cfg.raw) }); err != nil {
		return nil, err
	}
	t := &Trainer{raw: raw}
	runtime.SetFinalizer(t, (*Trainer).Close)
	return t, nil
}

// release frees the native trainer and the callback handle; t.mu is held.
func (t *Trainer) release(raw swig.Trainer) {
	swig.DeleteTrainer(raw)
	if t.progress != 0 {
		t.progress.Delete()
		t.progress = 0
	}
}

// lockOpen takes t.mu when the trainer is open (the caller unlocks); a nil or closed trainer
// gets an ErrClosed error and the lock is not held.
func (t *Trainer) lockOpen() error {
	if t == nil {
		return closedError("Trainer")
	}
	t.mu.Lock()
	if t.raw == nil {
		t.mu.Unlock()
		return closedError("Trainer")
	}
	return nil
}

// Close releases the trainer and its progress callback; a second Close returns an ErrClosed
// error. Called while Train runs, it cancels training and the release happens when Train
// returns.
func (t *Trainer) Close() error {
	if err := t.lockOpen(); err != nil {
		return err
	}
	defer t.mu.Unlock()
	raw := t.raw
	t.raw = nil
	runtime.SetFinalizer(t, nil)
	if t.running {
		_ = call(func() { raw.Cancel() })
		t.closePending = raw
		return nil
	}
	t.release(raw)
	return nil
}

// do runs f on the open, idle trainer, under the lock.
func (t *Trainer) do(f func(r swig.Trainer)) error {
	if err := t.lockOpen(); err != nil {
		return err
	}
	defer t.mu.Unlock()
	if t.running {
		return invalid("Trainer is training: only Cancel and Close may be called until Train returns")
	}
	defer runtime.KeepAlive(t)
	return call(func() { f(t.raw) })
}

// SetProgress sets the progress callback; nil clears it.
func (t *Trainer) SetProgress(fn ProgressFunc) error {
	var h cgo.Handle
	if fn != nil {
		h = progressHandle(fn, func(panicked any) {
			t.mu.Lock()
			t.panicked = panicked
			t.mu.Unlock()
		})
	}
	err := t.do(func(r swig.Trainer) {
		if h == 0 {
			r.ClearProgress()
		} else {
			r.SetProgressHandle(uint64(h))
		}
		if t.progress != 0 {
			t.progress.Delete()
		}
		t.progress = h
	})
	if err != nil && h != 0 {
		h.Delete()
	}
	return err
}

func metricsFrom(m swig.Metrics) Metrics {
	return Metrics{Loss: m.GetLoss(), QRiskP50: m.GetQ_risk_p50(), QRiskP90: m.GetQ_risk_p90(),
		MAEP50: m.GetMae_p50(), Windows: m.GetWindows()}
}

func memoryFrom(m swig.MemoryReport) MemoryReport {
	return MemoryReport{CheckpointedPeakBytes: m.GetCheckpointed_peak_bytes(),
		UncheckedPeakBytes: m.GetUnchecked_peak_bytes(), MeasuredSavings: m.GetMeasured_savings(),
		PredictedSavings:         m.GetPredicted_savings(),
		PredictedComputeOverhead: m.GetPredicted_compute_overhead(), NumUnits: int(m.GetNum_units())}
}

// reportFrom reads a tft_train_report through its three getters.
func reportFrom(r swig.TrainReport) *TrainReport {
	s := swig.NewTrainSummary()
	defer swig.DeleteTrainSummary(s)
	v := swig.NewMetrics()
	defer swig.DeleteMetrics(v)
	m := swig.NewMemoryReport()
	defer swig.DeleteMemoryReport(m)
	r.GetSummary(s)
	r.GetValidation(v)
	r.GetMemory(m)
	return &TrainReport{
		EpochsRun: s.GetEpochs_run(), BestEpoch: s.GetBest_epoch(),
		ResumedFromEpoch: s.GetResumed_from_epoch(), EarlyStopped: s.GetEarly_stopped() != 0,
		InitialValidationLoss: s.GetInitial_validation_loss(),
		BestValidationLoss:    s.GetBest_validation_loss(),
		FinalValidationLoss:   s.GetFinal_validation_loss(),
		FinalTrainLoss:        s.GetFinal_train_loss(),
		Validation:            metricsFrom(v),
		TrainSeconds:          s.GetTrain_seconds(), SamplesPerSecond: s.GetSamples_per_second(),
		PeakActivationBytes: s.GetPeak_activation_bytes(), Memory: memoryFrom(m),
	}
}

func (t *Trainer) run(resume bool) (*TrainReport, error) {
	if err := t.lockOpen(); err != nil {
		return nil, err
	}
	if t.running {
		t.mu.Unlock()
		return nil, invalid("Trainer is training already")
	}
	raw := t.raw
	t.running = true
	t.panicked = nil
	t.mu.Unlock()

	var report *TrainReport
	err := call(func() {
		var r swig.TrainReport
		if resume {
			r = raw.Resume()
		} else {
			r = raw.Train()
		}
		defer swig.DeleteTrainReport(r)
		report = reportFrom(r)
	})

	t.mu.Lock()
	t.running = false
	panicked := t.panicked
	t.panicked = nil
	if t.closePending != nil {
		t.release(t.closePending)
		t.closePending = nil
	}
	t.mu.Unlock()
	runtime.KeepAlive(t)
	if err != nil {
		return nil, withPanic(err, panicked)
	}
	return report, nil
}

// Train trains from the initial weights, keeps the best epoch's weights and writes the run's
// files to output.directory.
func (t *Trainer) Train() (*TrainReport, error) { return t.run(false) }

// Resume continues from the snapshot of an earlier run with this output.directory (a fresh
// run when there is none).
func (t *Trainer) Resume() (*TrainReport, error) { return t.run(true) }

// Cancel asks a running Train to stop at the next step; safe from any goroutine (and from
// the progress callback) while the trainer is open. A request made while not training is
// kept for the next Train.
func (t *Trainer) Cancel() error {
	if err := t.lockOpen(); err != nil {
		return err
	}
	defer t.mu.Unlock()
	raw := t.raw
	return call(func() { raw.Cancel() })
}

// Evaluate measures the current weights on the validation windows.
func (t *Trainer) Evaluate() (Metrics, error) {
	var m Metrics
	err := t.do(func(r swig.Trainer) {
		raw := swig.NewMetrics()
		defer swig.DeleteMetrics(raw)
		r.Evaluate(raw)
		m = metricsFrom(raw)
	})
	return m, err
}

// MeasureMemory measures one training step's activation peak with checkpointing as
// configured and with it off (tft_trainer_measure_memory).
func (t *Trainer) MeasureMemory() (MemoryReport, error) {
	var m MemoryReport
	err := t.do(func(r swig.Trainer) {
		raw := swig.NewMemoryReport()
		defer swig.DeleteMemoryReport(raw)
		r.MeasureMemory(raw)
		m = memoryFrom(raw)
	})
	return m, err
}

// Predict returns forecasts of the current weights.
func (t *Trainer) Predict() (*Predictions, error) {
	var raw swig.Predictions
	if err := t.do(func(r swig.Trainer) { raw = r.Predict() }); err != nil {
		return nil, err
	}
	return wrapPredictions(raw), nil
}

// PredictCSV writes forecasts of the current weights as CSV to path.
func (t *Trainer) PredictCSV(path string) error {
	if err := text("path", path); err != nil {
		return err
	}
	return t.do(func(r swig.Trainer) { r.PredictCsv(path) })
}

// Save writes the current weights as a model folder; "" means output.directory/model.
func (t *Trainer) Save(directory string) error {
	if err := text("directory", directory); err != nil {
		return err
	}
	return t.do(func(r swig.Trainer) { r.Save(directory) })
}
