// tft-train-yaml-go: train a Temporal Fusion Transformer from a YAML file through the Go
// binding; the Go twin of examples/c/tft_train_yaml.c.
//
//	tft-train-yaml-go [--memory] CONFIG.yaml [KEY=VALUE ...]
//
// --memory reads data.path's CSV into an Arrow table with arrow-go first and trains from
// that table in memory (tftrain.NewDataFromTable) instead of letting the library read the
// file; the summary is the same.
// KEY=VALUE pairs override the file (Config.Set), e.g. training.epochs=3 or
// output.directory=/tmp/run. Progress goes to stderr, one line per epoch; the summary goes to
// stdout as "name: value" lines with the C runner's formats. Exit status: 0 on success, 1 on
// any error (its message on stderr), 2 on bad usage.
package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"tftrain"
)

const program = "tft_train_yaml_go"

func main() { os.Exit(run(os.Args[1:])) }

func failed(what string, err error) int {
	var e *tftrain.Error
	if errors.As(err, &e) {
		fmt.Fprintf(os.Stderr, "%s: %s: %s: %s\n", program, what, e.Status, e.Message)
	} else {
		fmt.Fprintf(os.Stderr, "%s: %s: %v\n", program, what, err)
	}
	return 1
}

func applyOverride(cfg *tftrain.Config, assignment string) int {
	equals := strings.IndexByte(assignment, '=')
	if equals <= 0 {
		fmt.Fprintf(os.Stderr, "%s: expected KEY=VALUE, got \"%s\"\n", program, assignment)
		return 2
	}
	if equals >= 256 {
		fmt.Fprintf(os.Stderr, "%s: key too long in \"%s\"\n", program, assignment)
		return 2
	}
	if err := cfg.Set(assignment[:equals], assignment[equals+1:]); err != nil {
		return failed("override", err)
	}
	return 0
}

// dataPath is data.path, relative to the config file's folder.
func dataPath(cfg *tftrain.Config, configPath string) (string, error) {
	value, err := cfg.Get("data.path")
	if err != nil {
		return "", err
	}
	if unquoted, err := strconv.Unquote(value); err == nil {
		value = unquoted
	}
	if value == "" || value == "null" || value == "~" {
		return "", fmt.Errorf("--memory needs data.path, the CSV file to read into memory")
	}
	if !filepath.IsAbs(value) {
		value = filepath.Join(filepath.Dir(configPath), value)
	}
	return value, nil
}

// newTrainer builds the trainer from the config, or with --memory from data.path's CSV read
// into an Arrow table.
func newTrainer(cfg *tftrain.Config, configPath string, memory bool) (*tftrain.Trainer, int) {
	if !memory {
		trainer, err := tftrain.NewTrainer(cfg)
		if err != nil {
			return nil, failed("trainer", err)
		}
		return trainer, 0
	}
	path, err := dataPath(cfg, configPath)
	if err != nil {
		return nil, failed("data", err)
	}
	table, err := loadTable(path)
	if err != nil {
		return nil, failed("data", err)
	}
	defer table.Release()
	data, err := tftrain.NewDataFromTable(table)
	if err != nil {
		return nil, failed("data", err)
	}
	defer data.Close() // the trainer has its own copy of the rows
	trainer, err := tftrain.NewTrainerFromData(cfg, data)
	if err != nil {
		return nil, failed("trainer", err)
	}
	return trainer, 0
}

func run(args []string) int {
	memory := len(args) > 0 && args[0] == "--memory"
	if memory {
		args = args[1:]
	}
	if len(args) < 1 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintf(os.Stderr, "usage: %s [--memory] CONFIG.yaml [KEY=VALUE ...]\n", os.Args[0])
		return 2
	}
	cfg, err := tftrain.LoadConfig(args[0])
	if err != nil {
		return failed("config", err)
	}
	defer cfg.Close()
	for _, a := range args[1:] {
		if code := applyOverride(cfg, a); code != 0 {
			return code
		}
	}
	if err := cfg.Validate(); err != nil {
		return failed("config", err)
	}
	trainer, code := newTrainer(cfg, args[0], memory)
	if code != 0 {
		return code
	}
	defer trainer.Close()
	trainer.SetProgress(func(p tftrain.Progress) bool {
		if p.Kind == tftrain.ProgressEpoch {
			fmt.Fprintf(os.Stderr, "epoch %d/%d  train loss %s  validation loss %s  %s samples/s\n",
				p.Epoch, p.Epochs, formatF(p.TrainLoss, 6), formatF(p.ValidationLoss, 6),
				formatF(p.SamplesPerSecond, 0))
		}
		return false
	})
	r, err := trainer.Train()
	if err != nil {
		return failed("training", err)
	}
	early := "false"
	if r.EarlyStopped {
		early = "true"
	}
	fmt.Printf("epochs_run: %d\n", r.EpochsRun)
	fmt.Printf("best_epoch: %d\n", r.BestEpoch)
	fmt.Printf("early_stopped: %s\n", early)
	fmt.Printf("initial_validation_loss: %s\n", formatG(r.InitialValidationLoss, 9))
	fmt.Printf("best_validation_loss: %s\n", formatG(r.BestValidationLoss, 9))
	fmt.Printf("final_validation_loss: %s\n", formatG(r.FinalValidationLoss, 9))
	fmt.Printf("final_train_loss: %s\n", formatG(r.FinalTrainLoss, 9))
	fmt.Printf("q_risk_p50: %s\n", formatG(r.Validation.QRiskP50, 9))
	fmt.Printf("q_risk_p90: %s\n", formatG(r.Validation.QRiskP90, 9))
	fmt.Printf("samples_per_second: %s\n", formatF(r.SamplesPerSecond, 1))
	fmt.Printf("peak_activation_bytes: %d\n", r.PeakActivationBytes)
	fmt.Printf("memory_savings_measured: %s\n", formatF(r.Memory.MeasuredSavings, 4))
	fmt.Printf("memory_savings_predicted: %s\n", formatF(r.Memory.PredictedSavings, 4))
	return 0
}

// nonFinite writes NaN and infinities the way glibc's printf does.
func nonFinite(x float64) (string, bool) {
	switch {
	case math.IsNaN(x) && math.Signbit(x):
		return "-nan", true
	case math.IsNaN(x):
		return "nan", true
	case math.IsInf(x, 1):
		return "inf", true
	case math.IsInf(x, -1):
		return "-inf", true
	}
	return "", false
}

// formatF is C's "%.<prec>f".
func formatF(x float64, prec int) string {
	if s, ok := nonFinite(x); ok {
		return s
	}
	return strconv.FormatFloat(x, 'f', prec, 64)
}

// formatG is C's "%.<prec>g".
func formatG(x float64, prec int) string {
	if s, ok := nonFinite(x); ok {
		return s
	}
	if prec == 0 {
		prec = 1
	}
	e := strconv.FormatFloat(x, 'e', prec-1, 64) // d.ddde±XX, rounded
	i := strings.LastIndexByte(e, 'e')
	exp, _ := strconv.Atoi(e[i+1:])
	if exp < -4 || exp >= prec {
		mantissa := e[:i]
		if strings.Contains(mantissa, ".") {
			mantissa = strings.TrimRight(strings.TrimRight(mantissa, "0"), ".")
		}
		sign := "+"
		if exp < 0 {
			sign, exp = "-", -exp
		}
		return fmt.Sprintf("%se%s%02d", mantissa, sign, exp)
	}
	f := strconv.FormatFloat(x, 'f', prec-1-exp, 64)
	if strings.Contains(f, ".") {
		f = strings.TrimRight(strings.TrimRight(f, "0"), ".")
	}
	return f
}
