package tftrain

import (
	"runtime"

	"tftrain/internal/swig"
)

// Strategy is the checkpointing strategy (tft_checkpoint_strategy).
type Strategy int

// The strategies.
const (
	StrategyNone      Strategy = 0
	StrategyUniform   Strategy = 1
	StrategySelective Strategy = 2
	StrategyDynamic   Strategy = 3
)

func (s Strategy) String() string {
	switch s {
	case StrategyNone:
		return "none"
	case StrategyUniform:
		return "uniform"
	case StrategySelective:
		return "selective"
	case StrategyDynamic:
		return "dynamic"
	}
	return "unknown"
}

// CheckpointConfig says which units of the model recompute their activations in backward
// (tft_checkpoint_config). Close it when done.
type CheckpointConfig struct {
	raw swig.CheckpointConfig
}

func wrapCheckpoint(raw swig.CheckpointConfig) *CheckpointConfig {
	c := &CheckpointConfig{raw: raw}
	runtime.SetFinalizer(c, (*CheckpointConfig).Close)
	return c
}

func newCheckpoint(make func() swig.CheckpointConfig) (*CheckpointConfig, error) {
	var raw swig.CheckpointConfig
	if err := call(func() { raw = make() }); err != nil {
		return nil, err
	}
	return wrapCheckpoint(raw), nil
}

// CheckpointNone checkpoints nothing.
func CheckpointNone() (*CheckpointConfig, error) {
	return newCheckpoint(swig.NewCheckpointConfig)
}

// CheckpointUniform checkpoints every interval-th unit (0 is accepted but fails Validate).
func CheckpointUniform(interval int) (*CheckpointConfig, error) {
	n, err := count("interval", interval)
	if err != nil {
		return nil, err
	}
	return newCheckpoint(func() swig.CheckpointConfig { return swig.CheckpointConfigCreateUniform(n) })
}

// CheckpointSelective checkpoints the listed units (duplicates fail Validate).
func CheckpointSelective(layers ...int) (*CheckpointConfig, error) {
	for _, l := range layers {
		if _, err := count("layer index", l); err != nil {
			return nil, err
		}
	}
	return newCheckpoint(func() swig.CheckpointConfig {
		list := swig.NewIndexList()
		defer swig.DeleteIndexList(list)
		for _, l := range layers {
			list.Add(uint64(l))
		}
		return swig.CheckpointConfigCreateSelective(list)
	})
}

// CheckpointDynamic checkpoints enough of numLayers units to keep memoryFraction of the
// activations (ErrConfig: numLayers 0 or memoryFraction outside [0, 1]).
func CheckpointDynamic(numLayers int, memoryFraction float64) (*CheckpointConfig, error) {
	n, err := count("num_layers", numLayers)
	if err != nil {
		return nil, err
	}
	return newCheckpoint(func() swig.CheckpointConfig {
		return swig.CheckpointConfigCreateDynamic(n, memoryFraction)
	})
}

// CheckpointFromYAML parses the checkpoint section's YAML text.
func CheckpointFromYAML(yaml string) (*CheckpointConfig, error) {
	if err := text("yaml", yaml); err != nil {
		return nil, err
	}
	return newCheckpoint(func() swig.CheckpointConfig { return swig.CheckpointConfigCreateFromYaml(yaml) })
}

// CheckpointFromJSON parses the checkpoint section's JSON text.
func CheckpointFromJSON(json string) (*CheckpointConfig, error) {
	if err := text("json", json); err != nil {
		return nil, err
	}
	return newCheckpoint(func() swig.CheckpointConfig { return swig.CheckpointConfigCreateFromJson(json) })
}

// Close releases the native object; a second Close returns an ErrClosed error.
func (c *CheckpointConfig) Close() error {
	if c == nil || c.raw == nil {
		return closedError("CheckpointConfig")
	}
	raw := c.raw
	c.raw = nil
	runtime.SetFinalizer(c, nil)
	swig.DeleteCheckpointConfig(raw)
	return nil
}

func (c *CheckpointConfig) do(f func(r swig.CheckpointConfig)) error {
	if c == nil || c.raw == nil {
		return closedError("CheckpointConfig")
	}
	defer runtime.KeepAlive(c)
	return call(func() { f(c.raw) })
}

// Clone returns an independent copy.
func (c *CheckpointConfig) Clone() (*CheckpointConfig, error) {
	var raw swig.CheckpointConfig
	if err := c.do(func(r swig.CheckpointConfig) { raw = r.Clone() }); err != nil {
		return nil, err
	}
	return wrapCheckpoint(raw), nil
}

// SetCheckpointAttention sets whether attention sub-layers are checkpointed.
func (c *CheckpointConfig) SetCheckpointAttention(enabled bool) error {
	return c.do(func(r swig.CheckpointConfig) { r.SetCheckpointAttention(enabled) })
}

// SetCheckpointFFN sets whether position-wise feed-forward sub-layers are checkpointed.
func (c *CheckpointConfig) SetCheckpointFFN(enabled bool) error {
	return c.do(func(r swig.CheckpointConfig) { r.SetCheckpointFfn(enabled) })
}

// SetMinInterval sets the minimum interval (0 is stored but fails Validate).
func (c *CheckpointConfig) SetMinInterval(interval int) error {
	n, err := count("interval", interval)
	if err != nil {
		return err
	}
	return c.do(func(r swig.CheckpointConfig) { r.SetMinInterval(n) })
}

// Strategy returns the strategy.
func (c *CheckpointConfig) Strategy() (Strategy, error) {
	var s int
	err := c.do(func(r swig.CheckpointConfig) { s = r.GetStrategy() })
	return Strategy(s), err
}

// CheckpointAttention reports whether attention sub-layers are checkpointed.
func (c *CheckpointConfig) CheckpointAttention() (bool, error) {
	var v bool
	err := c.do(func(r swig.CheckpointConfig) { v = r.GetCheckpointAttention() })
	return v, err
}

// CheckpointFFN reports whether feed-forward sub-layers are checkpointed.
func (c *CheckpointConfig) CheckpointFFN() (bool, error) {
	var v bool
	err := c.do(func(r swig.CheckpointConfig) { v = r.GetCheckpointFfn() })
	return v, err
}

// MinInterval returns the minimum checkpoint interval.
func (c *CheckpointConfig) MinInterval() (int, error) {
	var v uint64
	err := c.do(func(r swig.CheckpointConfig) { v = r.GetMinInterval() })
	return int(v), err
}

// ShouldCheckpoint reports whether unit `layer` is checkpointed
// (tft_checkpoint_config_get_should_checkpoint).
func (c *CheckpointConfig) ShouldCheckpoint(layer int) (bool, error) {
	n, err := count("layer", layer)
	if err != nil {
		return false, err
	}
	var v bool
	err = c.do(func(r swig.CheckpointConfig) { v = r.GetShouldCheckpoint(n) })
	return v, err
}

// MemorySavings is the predicted fraction of activation memory saved for numLayers units.
func (c *CheckpointConfig) MemorySavings(numLayers int) (float64, error) {
	n, err := count("num_layers", numLayers)
	if err != nil {
		return 0, err
	}
	var v float64
	err = c.do(func(r swig.CheckpointConfig) { v = r.GetMemorySavings(n) })
	return v, err
}

// ComputeOverhead is the predicted compute factor (>= 1) for numLayers units.
func (c *CheckpointConfig) ComputeOverhead(numLayers int) (float64, error) {
	n, err := count("num_layers", numLayers)
	if err != nil {
		return 0, err
	}
	var v float64
	err = c.do(func(r swig.CheckpointConfig) { v = r.GetComputeOverhead(n) })
	return v, err
}

// Validate returns an ErrConfig error naming the broken rule, or nil.
func (c *CheckpointConfig) Validate() error {
	return c.do(func(r swig.CheckpointConfig) { r.Validate() })
}

// Summary is the human-readable description ("Uniform checkpointing every 2 layers").
func (c *CheckpointConfig) Summary() (string, error) {
	var s string
	err := c.do(func(r swig.CheckpointConfig) { s = r.GetSummary() })
	return s, err
}

// YAML is the checkpoint section as YAML text.
func (c *CheckpointConfig) YAML() (string, error) {
	var s string
	err := c.do(func(r swig.CheckpointConfig) { s = r.ToYaml() })
	return s, err
}

// JSON is the checkpoint section as JSON text.
func (c *CheckpointConfig) JSON() (string, error) {
	var s string
	err := c.do(func(r swig.CheckpointConfig) { s = r.ToJson() })
	return s, err
}
