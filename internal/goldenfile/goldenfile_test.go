package goldenfile

import (
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that remembers whether Check failed instead of failing the real test.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true; panic(r) }
func (r *recorder) Fatal(...any)          { r.failed = true; panic(r) }

func check(t *testing.T, path string, got []byte) (failed bool) {
	r := &recorder{TB: t}
	defer func() {
		if p := recover(); p != nil && p != r {
			panic(p)
		}
		failed = r.failed
	}()
	Check(r, path, got)
	return
}

func TestCheck(t *testing.T) {
	if Update() {
		t.Skip("-update rewrites instead of comparing")
	}
	path := filepath.Join(t.TempDir(), "a.txt")
	if !check(t, path, []byte("x")) {
		t.Error("a missing golden file passed")
	}
	os.WriteFile(path, []byte("x\n"), 0o644)
	if check(t, path, []byte("x\n")) {
		t.Error("equal output failed")
	}
	if !check(t, path, []byte("y\n")) {
		t.Error("different output passed")
	}
}
