package tftrain

// Helpers shared by the package's tests.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
