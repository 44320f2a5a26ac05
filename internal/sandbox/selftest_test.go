package sandbox

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The lockdown self-test: a child started as the sandbox starts one, with lockdown applied, then trying
// what JavaScript cannot even ask for. It proves the layer under goja holds on its own.
const selftestEnv = "BOX_SANDBOX_SELFTEST"

type selftest struct {
	Landlock   int
	ReadFile   string // the error reading a file; "" if it was read
	ListRoot   string
	WriteFile  string
	Env        []string
	Interfaces []string // up interfaces in the child's network namespace
}

func lockdownSelftest() int {
	abi, err := lockdown(32, 5*time.Second)
	if err != nil {
		return 3
	}
	errText := func(err error) string {
		if err == nil {
			return ""
		}
		return err.Error()
	}
	st := selftest{Landlock: abi, Env: os.Environ()}
	_, err = os.ReadFile("/etc/hostname")
	st.ReadFile = errText(err)
	_, err = os.ReadDir("/")
	st.ListRoot = errText(err)
	st.WriteFile = errText(os.WriteFile("made-by-child", []byte("x"), 0o600))
	ifs, _ := net.Interfaces()
	for _, i := range ifs {
		if i.Flags&net.FlagUp != 0 {
			st.Interfaces = append(st.Interfaces, i.Name)
		}
	}
	json.NewEncoder(os.Stdout).Encode(st)
	return 0
}

func TestChildLockdown(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var out strings.Builder
	cmd, ns, err := start(func() *exec.Cmd {
		c := exec.Command(exe)
		c.Env = []string{selftestEnv + "=1"}
		c.Dir = dir
		c.Stdout = &out
		return c
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("selftest: %v", err)
	}
	var st selftest
	if err := json.Unmarshal([]byte(out.String()), &st); err != nil {
		t.Fatalf("%v: %q", err, out.String())
	}
	t.Logf("kernel Landlock ABI %d, child held by %d; namespaces %v; up interfaces %v", landlockABI(), st.Landlock, ns, st.Interfaces)
	if len(st.Env) != 1 {
		t.Errorf("the child inherited an environment: %v", st.Env)
	}
	if landlockABI() > 0 {
		if st.ReadFile == "" || st.ListRoot == "" || st.WriteFile == "" {
			t.Errorf("Landlock is on but the child read or wrote files: %+v", st)
		}
	}
	// Without Landlock the file-size rlimit still holds: a file may be made, but nothing written into it.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if info, err := e.Info(); landlockABI() > 0 || err != nil || info.Size() != 0 {
			t.Errorf("the child wrote into its working folder: %s", e.Name())
		}
	}
	if ns && len(st.Interfaces) != 0 {
		t.Errorf("the child's network namespace has interfaces up: %v", st.Interfaces)
	}
}
