package tftrain

import (
	"runtime"

	"tftrain/internal/swig"
)

// Config is a training configuration (tft_config): one YAML file, every key in
// docs/config.md. Close it when done.
type Config struct {
	raw swig.Config
}

func wrapConfig(raw swig.Config) *Config {
	c := &Config{raw: raw}
	runtime.SetFinalizer(c, (*Config).Close)
	return c
}

// LoadConfig reads and validates a YAML file (relative paths resolve against its folder).
func LoadConfig(path string) (*Config, error) {
	if err := text("path", path); err != nil {
		return nil, err
	}
	var raw swig.Config
	if err := call(func() { raw = swig.ConfigCreateFromFile(path) }); err != nil {
		return nil, err
	}
	return wrapConfig(raw), nil
}

// ParseConfig reads and validates YAML text (relative paths stay relative to the working
// directory).
func ParseConfig(yaml string) (*Config, error) {
	if err := text("yaml", yaml); err != nil {
		return nil, err
	}
	var raw swig.Config
	if err := call(func() { raw = swig.NewConfig(yaml) }); err != nil {
		return nil, err
	}
	return wrapConfig(raw), nil
}

// Close releases the native object; a second Close returns an ErrClosed error.
func (c *Config) Close() error {
	if c == nil || c.raw == nil {
		return closedError("Config")
	}
	raw := c.raw
	c.raw = nil
	runtime.SetFinalizer(c, nil)
	swig.DeleteConfig(raw)
	return nil
}

func (c *Config) do(f func(r swig.Config)) error {
	if c == nil || c.raw == nil {
		return closedError("Config")
	}
	defer runtime.KeepAlive(c)
	return call(func() { f(c.raw) })
}

// Clone returns an independent copy.
func (c *Config) Clone() (*Config, error) {
	var raw swig.Config
	if err := c.do(func(r swig.Config) { raw = r.Clone() }); err != nil {
		return nil, err
	}
	return wrapConfig(raw), nil
}

// Get returns the value at a dotted key ("training.epochs") as YAML text.
func (c *Config) Get(key string) (string, error) {
	if err := text("key", key); err != nil {
		return "", err
	}
	var s string
	err := c.do(func(r swig.Config) { s = r.GetValue(key) })
	return s, err
}

// Set sets the value at a dotted key from YAML text ("64", "[0.1, 0.5, 0.9]"); the config is
// unchanged on error. Call Validate when done.
func (c *Config) Set(key, value string) error {
	if err := text("key and value", key, value); err != nil {
		return err
	}
	return c.do(func(r swig.Config) { r.SetValue(key, value) })
}

// SetCheckpoint replaces the checkpoint section with a copy of cp.
func (c *Config) SetCheckpoint(cp *CheckpointConfig) error {
	if cp == nil || cp.raw == nil {
		return closedError("CheckpointConfig")
	}
	defer runtime.KeepAlive(cp)
	return c.do(func(r swig.Config) { r.SetCheckpoint(cp.raw) })
}

// Checkpoint returns a copy of the checkpoint section.
func (c *Config) Checkpoint() (*CheckpointConfig, error) {
	var raw swig.CheckpointConfig
	if err := c.do(func(r swig.Config) { raw = r.GetCheckpoint() }); err != nil {
		return nil, err
	}
	return wrapCheckpoint(raw), nil
}

// Validate returns an ErrConfig error naming the first broken rule, or nil.
func (c *Config) Validate() error {
	return c.do(func(r swig.Config) { r.Validate() })
}

// YAML is the whole configuration (every key, resolved paths) as YAML text.
func (c *Config) YAML() (string, error) {
	var s string
	err := c.do(func(r swig.Config) { s = r.ToYaml() })
	return s, err
}
