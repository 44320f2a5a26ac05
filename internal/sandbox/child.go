package sandbox

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"time"

	"github.com/boxmem/box/internal/connector"
	"github.com/dop251/goja"
)

// The child is the box binary run again with this argv[0] and environment marker; IsChild sees both.
const (
	childArg0 = "box-sandbox"
	childEnv  = "BOX_SANDBOX_CHILD"
)

//go:embed prelude.js
var prelude string

// IsChild reports whether this process is a sandbox child. The box's main calls it first thing and, when
// it is true, runs ChildMain instead of the command line.
func IsChild() bool {
	return os.Getenv(childEnv) == "1" && len(os.Args) == 1 && os.Args[0] == childArg0
}

// ChildMain is the sandbox child: it reads the start message from stdin, locks itself down (rlimits,
// Landlock; docs/CONNECTORS.md, "The sandbox"), runs one tool in goja and writes the outcome to stdout.
// It returns the process's exit code.
func ChildMain() int {
	debug.SetTraceback("none")
	in, out := bufio.NewReaderSize(os.Stdin, 64<<10), os.Stdout
	start, err := readFrame(in, maxToChild)
	if err != nil || start.Op != "start" {
		fmt.Fprintln(os.Stderr, "sandbox: no start message:", err)
		return 3
	}
	abi, err := lockdown(start.MemoryMB, time.Duration(start.TimeoutMs)*time.Millisecond)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox:", err)
		return 3
	}
	done := runTool(start, &hostLink{in: in, out: out})
	done.Landlock = abi
	if err := writeFrame(out, done); err != nil {
		return 3
	}
	return 0
}

// hostLink is the child's end of the pipe.
type hostLink struct {
	in  io.Reader
	out io.Writer
}

func (h *hostLink) ask(m *message) (*message, error) {
	if err := writeFrame(h.out, m); err != nil {
		return nil, err
	}
	r, err := readFrame(h.in, maxToChild)
	if err != nil {
		return nil, err
	}
	if r.Error != "" {
		return nil, errors.New(r.Error)
	}
	return r, nil
}

var (
	errTimeout = errors.New("timeout")
	errMemory  = errors.New("memory")
)

// runTool loads the script and calls the tool; every failure is a done message with an error sentence.
func runTool(start *message, link *hostLink) *message {
	time.Local = time.UTC // no time zone file to read, and the owner's zone is not the connector's to know
	vm := goja.New()
	vm.SetMaxCallStackSize(2000)
	limit := time.Duration(start.TimeoutMs) * time.Millisecond
	timer := time.AfterFunc(limit, func() { vm.Interrupt(errTimeout) })
	defer timer.Stop()
	stop := watchMemory(vm, int64(start.MemoryMB)<<20)
	defer stop()

	fail := func(err error) *message {
		var ie *goja.InterruptedError
		if errors.As(err, &ie) {
			switch ie.Value() {
			case errTimeout:
				return &message{Op: "done", Stop: stopTime}
			case errMemory:
				return &message{Op: "done", Stop: stopMemory}
			}
		}
		msg := err.Error()
		var ex *goja.Exception
		if errors.As(err, &ex) {
			msg = ex.String()
		}
		fmt.Fprintln(os.Stderr, msg)
		return &message{Op: "done", Error: firstLine(msg)}
	}

	makeRun, err := vm.RunString(prelude)
	if err != nil {
		return fail(err)
	}
	if _, err := vm.RunScript("index.mjs", start.Script); err != nil {
		return fail(err)
	}
	mk, _ := goja.AssertFunction(makeRun)
	runV, err := mk(goja.Undefined(), vm.ToValue(hostFunc(vm, link)))
	if err != nil {
		return fail(err)
	}
	run, _ := goja.AssertFunction(runV)
	args := string(start.Args)
	if args == "" {
		args = "{}"
	}
	outV, err := run(goja.Undefined(), vm.Get(connector.GlobalName), vm.ToValue(start.Tool), vm.ToValue(args))
	if err != nil {
		return fail(err)
	}
	o := outV.ToObject(vm)
	done := &message{Op: "done"}
	if t := o.Get("tools"); t != nil {
		_ = vm.ExportTo(t, &done.Tools) // tools it cannot read are no tools: the checks that follow refuse them
	}
	switch {
	case o.Get("stop") != nil && !goja.IsUndefined(o.Get("stop")):
		done.Stop = o.Get("stop").String()
	case !o.Get("settled").ToBoolean():
		done.Stop = stopUnsettled
	case o.Get("error") != nil && !goja.IsUndefined(o.Get("error")):
		msg := o.Get("error").String()
		fmt.Fprintln(os.Stderr, msg)
		done.Error = firstLine(msg)
	default:
		done.Value = json.RawMessage(o.Get("value").String())
	}
	return done
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 500 {
		s = s[:500] + "…"
	}
	return s
}

// hostFunc is the one native function the prelude gets: log writes to stderr here, fetch and store go to
// the parent. Payloads cross as JSON text, so no Go value ever reaches the connector's code.
func hostFunc(vm *goja.Runtime, link *hostLink) func(op, payload string) string {
	return func(op, payload string) string {
		switch op {
		case "log":
			fmt.Fprintln(os.Stderr, payload)
			return "null"
		case "fetch":
			var req fetchRequest
			if err := json.Unmarshal([]byte(payload), &req); err != nil {
				panic(vm.NewTypeError("ctx.fetch: %v", err))
			}
			r, err := link.ask(&message{Op: "fetch", Req: &req})
			if err != nil {
				panic(vm.NewTypeError("ctx.fetch: %v", err))
			}
			if r.Res == nil {
				panic(vm.NewTypeError("ctx.fetch: no response"))
			}
			b, _ := json.Marshal(r.Res)
			return string(b)
		case "store":
			var m message
			if err := json.Unmarshal([]byte(payload), &m); err != nil {
				panic(vm.NewTypeError("ctx.store: %v", err))
			}
			m.Op = "store"
			r, err := link.ask(&m)
			if err != nil {
				panic(vm.NewTypeError("ctx.store: %v", err))
			}
			if m.Action == "keys" {
				b, _ := json.Marshal(r.Keys)
				if r.Keys == nil {
					b = []byte("[]")
				}
				return string(b)
			}
			if len(r.Value) == 0 {
				return "null"
			}
			return string(r.Value)
		}
		panic(vm.NewTypeError("no such host call"))
	}
}

// watchMemory interrupts the script when the live heap passes limit; the rlimit set in lockdown is the
// hard stop for an allocation too big or too fast to catch here.
func watchMemory(vm *goja.Runtime, limit int64) func() {
	debug.SetMemoryLimit(limit)
	done := make(chan struct{})
	go func() {
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				metrics.Read(sample)
				if sample[0].Value.Kind() == metrics.KindUint64 && int64(sample[0].Value.Uint64()) > limit {
					vm.Interrupt(errMemory)
					return
				}
			}
		}
	}()
	return func() { close(done) }
}
