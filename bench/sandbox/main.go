// Command sandbox benchmarks running connectors: validate_build of the seed's Bus times connector, start
// to first tool result (a fresh child per call, one fetch through the egress proxy to a local HTTPS
// server), and what the sandbox adds to each fetch over the same request made straight from Go. It runs
// the Go benchmarks of internal/connector and internal/sandbox (their local server needs the test-only
// network, which only a test binary may turn on) and prints a Markdown section for BENCHMARKS.md.
//
//	go run ./bench/sandbox [-runs 60]
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

var runs = flag.Int("runs", 60, "iterations of each benchmark")

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "bench/sandbox: %v\n", err)
		os.Exit(1)
	}
}

// metrics runs one package's benchmarks and returns each benchmark's metrics by unit.
func metrics(pkg, pattern string) (map[string]map[string]float64, error) {
	cmd := exec.Command("go", "test", "-run", "^$", "-bench", pattern, "-benchtime", strconv.Itoa(*runs)+"x", "-count", "1", pkg)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go test %s: %v\n%s", pkg, err, out.String())
	}
	res := map[string]map[string]float64{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := strings.TrimPrefix(f[0], "Benchmark")
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			name = name[:i]
		}
		m := map[string]float64{}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err == nil {
				m[f[i+1]] = v
			}
		}
		res[name] = m
	}
	return res, nil
}

func run() error {
	c, err := metrics("./internal/connector", "^BenchmarkValidateBusTimes$")
	if err != nil {
		return err
	}
	s, err := metrics("./internal/sandbox", "^Benchmark(StartToResult|FetchOverhead)$")
	if err != nil {
		return err
	}
	v, start, fetch := c["ValidateBusTimes"], s["StartToResult"], s["FetchOverhead"]
	if v == nil || start == nil || fetch == nil {
		return fmt.Errorf("a benchmark did not report: %v %v", c, s)
	}
	fmt.Println("<!-- bench:sandbox -->")
	fmt.Println("## Connectors and the sandbox")
	fmt.Println()
	fmt.Printf("The seed's Bus times connector: `validate_build` (parse, checks, two esbuild passes), then calls, each in a fresh\n")
	fmt.Printf("child of the binary (rlimits, Landlock, new namespaces where the machine allows) running goja, with one fetch\n")
	fmt.Printf("through the parent's egress proxy to a local HTTPS server mapped in as api.example.com; %d runs each.\n", *runs)
	fmt.Println("Target: start to first tool result under 100 ms p50.")
	fmt.Println()
	fmt.Println("| measure | p50 | p95 / mean |")
	fmt.Println("|---|---:|---:|")
	fmt.Printf("| validate_build (Bus times) | — | %.1f ms mean |\n", v["ns/op"]/1e6)
	fmt.Printf("| start to first tool result | %.1f ms | %.1f ms |\n", start["p50-ms"], start["p95-ms"])
	fmt.Println()
	fmt.Println("Per fetch (median of calls making 100 fetches, less a call making none, over 100), beside the same request")
	fmt.Println("made straight from Go with a keep-alive client:")
	fmt.Println()
	fmt.Println("| fetch | µs |")
	fmt.Println("|---|---:|")
	fmt.Printf("| straight from Go | %.0f |\n", fetch["direct-fetch-µs"])
	fmt.Printf("| through ctx.fetch in the sandbox | %.0f |\n", fetch["sandbox-fetch-µs"])
	fmt.Printf("| overhead per fetch | %.0f |\n", fetch["overhead-µs"])
	fmt.Println("<!-- bench:end -->")
	return nil
}
