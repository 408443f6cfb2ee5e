package tftrain

import (
	"runtime"

	"tftrain/internal/swig"
)

// Predictions are forecasts: the validation windows in order, then one window after the
// data per series, in original units (tft_predictions). Close them when done.
type Predictions struct {
	raw swig.Predictions
}

// ForecastInfo describes one forecast (tft_forecast_info).
type ForecastInfo struct {
	Series   int
	Origin   int64 // time of the last encoder step (integer, or microseconds since 1970)
	IsFuture bool  // the window after the data (actuals NaN)
}

func wrapPredictions(raw swig.Predictions) *Predictions {
	p := &Predictions{raw: raw}
	runtime.SetFinalizer(p, (*Predictions).Close)
	return p
}

// Close releases the native object; a second Close returns an ErrClosed error.
func (p *Predictions) Close() error {
	if p == nil || p.raw == nil {
		return closedError("Predictions")
	}
	raw := p.raw
	p.raw = nil
	runtime.SetFinalizer(p, nil)
	swig.DeletePredictions(raw)
	return nil
}

func (p *Predictions) do(f func(r swig.Predictions)) error {
	if p == nil || p.raw == nil {
		return closedError("Predictions")
	}
	defer runtime.KeepAlive(p)
	return call(func() { f(p.raw) })
}

// Shape returns the number of forecasts, horizon steps and quantiles per step.
func (p *Predictions) Shape() (forecasts, horizon, quantiles int, err error) {
	err = p.do(func(r swig.Predictions) {
		forecasts, horizon, quantiles = int(r.GetForecastCount()), int(r.GetHorizon()), int(r.GetQuantileCount())
	})
	return
}

// Quantiles returns the quantile levels, e.g. [0.1 0.5 0.9].
func (p *Predictions) Quantiles() ([]float64, error) {
	var levels []float64
	err := p.do(func(r swig.Predictions) {
		n := r.GetQuantileCount()
		for i := uint64(0); i < n; i++ {
			levels = append(levels, r.GetQuantile(i))
		}
	})
	return levels, err
}

// Info describes forecast index.
func (p *Predictions) Info(index int) (ForecastInfo, error) {
	var info ForecastInfo
	i, err := count("index", index)
	if err != nil {
		return info, err
	}
	err = p.do(func(r swig.Predictions) {
		raw := swig.NewForecastInfo()
		defer swig.DeleteForecastInfo(raw)
		r.GetForecastInfo(i, raw)
		info = ForecastInfo{Series: int(raw.GetSeries()), Origin: raw.GetOrigin(), IsFuture: raw.GetIs_future() != 0}
	})
	return info, err
}

// SeriesName is the name of series `series` ("" when the data is one series).
func (p *Predictions) SeriesName(series int) (string, error) {
	i, err := count("series", series)
	if err != nil {
		return "", err
	}
	var s string
	err = p.do(func(r swig.Predictions) { s = r.GetSeriesName(i) })
	return s, err
}

func floats(a swig.FloatArray) []float32 {
	defer swig.DeleteFloatArray(a)
	out := make([]float32, a.Count())
	for i := range out {
		out[i] = a.Get(uint64(i))
	}
	return out
}

// Values are the forecasts, [forecasts x horizon x quantiles] row-major.
func (p *Predictions) Values() ([]float32, error) {
	var v []float32
	err := p.do(func(r swig.Predictions) { v = floats(r.GetValues()) })
	return v, err
}

// Actuals are the known values, [forecasts x horizon] (NaN: unknown).
func (p *Predictions) Actuals() ([]float32, error) {
	var v []float32
	err := p.do(func(r swig.Predictions) { v = floats(r.GetActuals()) })
	return v, err
}

// Times are the forecast steps' times, [forecasts x horizon].
func (p *Predictions) Times() ([]int64, error) {
	var v []int64
	err := p.do(func(r swig.Predictions) {
		a := r.GetTimes()
		defer swig.DeleteInt64Array(a)
		v = make([]int64, a.Count())
		for i := range v {
			v[i] = a.Get(uint64(i))
		}
	})
	return v, err
}

// WriteCSV writes forecast.csv's layout to path.
func (p *Predictions) WriteCSV(path string) error {
	if err := text("path", path); err != nil {
		return err
	}
	return p.do(func(r swig.Predictions) { r.WriteCsv(path) })
}

// Model is a saved model folder (tft_model). Close it when done.
type Model struct {
	raw swig.Model
}

// LoadModel loads a model folder written by training or Trainer.Save.
func LoadModel(directory string) (*Model, error) {
	if err := text("directory", directory); err != nil {
		return nil, err
	}
	var raw swig.Model
	if err := call(func() { raw = swig.NewModel(directory) }); err != nil {
		return nil, err
	}
	m := &Model{raw: raw}
	runtime.SetFinalizer(m, (*Model).Close)
	return m, nil
}

// Close releases the native object; a second Close returns an ErrClosed error.
func (m *Model) Close() error {
	if m == nil || m.raw == nil {
		return closedError("Model")
	}
	raw := m.raw
	m.raw = nil
	runtime.SetFinalizer(m, nil)
	swig.DeleteModel(raw)
	return nil
}

// Predict forecasts a CSV laid out like the training data; "" means the training data.
func (m *Model) Predict(csvPath string) (*Predictions, error) {
	if err := text("csvPath", csvPath); err != nil {
		return nil, err
	}
	if m == nil || m.raw == nil {
		return nil, closedError("Model")
	}
	defer runtime.KeepAlive(m)
	var raw swig.Predictions
	if err := call(func() { raw = m.raw.Predict(csvPath) }); err != nil {
		return nil, err
	}
	return wrapPredictions(raw), nil
}
