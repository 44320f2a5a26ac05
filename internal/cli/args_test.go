package cli

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Every verb given a wrong number of arguments, an unknown verb and a group's unknown sub-verb are exit 2
// with the kind usage (docs/CLI.md, "Exit codes": 2 is bad flags or arguments), never exit 1.
func TestWrongArgumentsAreUsage(t *testing.T) {
	root := initBox(t)
	g := &Global{IO: IO{Getenv: func(string) string { return "" }}}
	var cases [][]string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			walk(sub)
			if sub.Args == nil || sub.DisableFlagParsing { // remember, chat: any text, read by textArgs
				continue
			}
			// the fewest arguments this verb refuses: none, or more than it takes
			for _, n := range []int{0, 1, 2, 3, 9} {
				args := slices.Repeat([]string{"x"}, n)
				if sub.Args(sub, args) != nil {
					cases = append(cases, append(strings.Fields(sub.CommandPath())[1:], args...))
					break
				}
			}
		}
	}
	walk(g.rootCmd())
	if len(cases) < 30 {
		t.Fatalf("only %d verbs refuse some argument count: the walk is broken", len(cases))
	}
	cases = append(cases, []string{"frob"}, []string{"backup", "frob"}, []string{"jobs", "frob"}, []string{"undo", "20260101T000000Z-abc"})
	for _, args := range cases {
		got := runCLI(t, run{args: append([]string{"--box", root, "--json"}, args...), cwd: root})
		var out errorOutput
		if got.code != ExitUsage || json.Unmarshal([]byte(got.stdout), &out) != nil || out.Error.Kind != "usage" {
			t.Errorf("box %s: exit %d, want %d (usage)\n%s%s", strings.Join(args, " "), got.code, ExitUsage, got.stdout, got.stderr)
		}
	}
}

// With --json anywhere before "--", a refused flag is a JSON error on stdout, even one that comes before
// --json (cobra stops at it before it reads --json).
func TestFlagErrorsAreJSONWhereverJSONIsAsked(t *testing.T) {
	root := initBox(t)
	for _, c := range []struct {
		args []string
		json bool
	}{
		{[]string{"status", "--bogus", "--json"}, true},
		{[]string{"search", "--limit", "abc", "leo", "--json"}, true},
		{[]string{"status", "--json", "--bogus"}, true},
		{[]string{"status", "--bogus", "--json=true"}, true},
		{[]string{"status", "--bogus", "--json=false"}, false},
		{[]string{"status", "--bogus"}, false},
		{[]string{"search", "--bogus", "--", "--json"}, false},
	} {
		got := runCLI(t, run{args: append([]string{"--box", root}, c.args...), cwd: root})
		var out errorOutput
		isJSON := json.Unmarshal([]byte(got.stdout), &out) == nil && out.Error.Kind == "usage"
		if got.code != ExitUsage || isJSON != c.json || !strings.Contains(got.stderr, "box:") {
			t.Errorf("box %s: exit %d, JSON error %v (want %v)\nstdout: %s\nstderr: %s", strings.Join(c.args, " "), got.code, isJSON, c.json, got.stdout, got.stderr)
		}
	}
}

// Exit codes docs/CLI.md gives for single verbs that no other test took through Main.
func TestDocumentedExitCodes(t *testing.T) {
	root := initBox(t)
	for _, c := range []struct {
		code int
		args []string
	}{
		{ExitNotFound, []string{"jobs", "run", "nothing-such"}},    // "An unknown name is exit 5"
		{ExitNotFound, []string{"backup", "remove", "nothing"}},    // "An unknown name is exit 5"
		{ExitConflict, []string{"restore", "/nowhere.git", root}},  // "A non-empty DIR is exit 6"
		{ExitNotABox, []string{"--box", t.TempDir(), "overview"}},  // no box found
		{ExitOK, []string{"backup"}},                               // a group alone prints its help
		{ExitUsage, []string{"recent", "--n", "0"}},                // a count out of range is bad arguments
		{ExitUsage, []string{"recent", "--n", "100000"}},           //
		{ExitUsage, []string{"diary", "--n", "-1"}},                //
		{ExitUsage, []string{"jobs", "-n", "0"}},                   //
		{ExitUsage, []string{"jobs", "--limit", "100000"}},         //
		{ExitUsage, []string{"search", "leo", "--limit", "0"}},     //
		{ExitUsage, []string{"search", "leo", "--limit", "5000"}},  //
		{ExitUsage, []string{"search", "leo", "--trust", "maybe"}}, //
		{ExitOK, []string{"search", "leo", "--limit", "1000", "--trust", "own"}},
	} {
		args := append([]string{"--box", root}, c.args...)
		if c.args[0] == "--box" {
			args = c.args
		}
		if got := runCLI(t, run{args: args, cwd: root}); got.code != c.code {
			t.Errorf("box %s: exit %d, want %d\n%s%s", strings.Join(c.args, " "), got.code, c.code, got.stdout, got.stderr)
		}
	}
}

// The undo command box jobs prints for a run is one that works as printed; each job's last run has the
// commit of its change (docs/CLI.md's lastRun.commit).
func TestJobsPrintsAWorkingUndo(t *testing.T) {
	root := initBox(t)
	for _, args := range [][]string{{"remember", "Leo swims on Thursdays"}, {"jobs", "run", "tidy"}} {
		if got := runCLI(t, run{args: append([]string{"--box", root}, args...), cwd: root}); got.code != 0 {
			t.Fatalf("box %v: exit %d %s", args, got.code, got.stderr)
		}
	}
	got := runCLI(t, run{args: []string{"--box", root, "--json", "jobs"}, cwd: root})
	var out struct {
		Jobs []struct {
			Name    string `json:"name"`
			LastRun *struct {
				Commit string `json:"commit"`
			} `json:"lastRun"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(got.stdout), &out); err != nil {
		t.Fatal(err)
	}
	for _, j := range out.Jobs {
		if j.Name == "tidy" && (j.LastRun == nil || j.LastRun.Commit == "") {
			t.Errorf("tidy's last run has no commit: %+v", j.LastRun)
		}
	}
	got = runCLI(t, run{args: []string{"--box", root, "jobs"}, cwd: root})
	_, cmd, ok := strings.Cut(got.stdout, "[undo: box ")
	cmd, _, ok2 := strings.Cut(cmd, "]")
	if got.code != 0 || !ok || !ok2 {
		t.Fatalf("box jobs: exit %d, no undo hint\n%s", got.code, got.stdout)
	}
	if undo := runCLI(t, run{args: append([]string{"--box", root}, strings.Fields(cmd)...), cwd: root}); undo.code != 0 {
		t.Fatalf("box %s: exit %d %s", cmd, undo.code, undo.stderr)
	}
}

// A job that failed is exit 1 with its record printed, the error in it (docs/CLI.md, box jobs run), not
// the job's own error kind.
func TestJobsRunAFailedJobIsExit1WithItsRecord(t *testing.T) {
	root := initBox(t)
	missing := filepath.Join(t.TempDir(), "nothing.git")
	if got := runCLI(t, run{args: []string{"--box", root, "backup", "add", "usb", missing}, cwd: root}); got.code != 0 {
		t.Fatalf("backup add: %s", got.stderr)
	}
	got := runCLI(t, run{args: []string{"--box", root, "--json", "jobs", "run", "backup"}, cwd: root})
	var rec struct {
		Job   string `json:"job"`
		Error string `json:"error"`
		Path  string `json:"path"`
	}
	if got.code != ExitFailure || json.Unmarshal([]byte(got.stdout), &rec) != nil || rec.Job != "backup" || !strings.Contains(rec.Error, "no repository there") || rec.Path == "" {
		t.Fatalf("a failed job: exit %d\n%s%s", got.code, got.stdout, got.stderr)
	}
}
