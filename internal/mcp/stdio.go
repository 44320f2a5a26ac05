package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Stdio is the transport of box mcp: newline-delimited JSON-RPC on in and out. A line that is not JSON is
// answered with JSON-RPC -32700 (parse error) and the session goes on, so one bad line from a client
// never ends box mcp or loses the replies in flight.
func Stdio(in io.Reader, out io.Writer) sdk.Transport {
	w := &lockedWriter{w: out}
	pr, pw := io.Pipe()
	go func() {
		r := bufio.NewReader(in)
		for {
			line, err := r.ReadBytes('\n')
			if t := bytes.TrimSpace(line); len(t) > 0 {
				if json.Valid(t) {
					_, werr := pw.Write(append(t, '\n'))
					if werr != nil {
						return // the session ended and closed its reader
					}
				} else if _, werr := w.Write([]byte(parseError + "\n")); werr != nil {
					pw.CloseWithError(werr)
					return
				}
			}
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return &sdk.IOTransport{Reader: pr, Writer: w}
}

const parseError = `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: a line that is not JSON was skipped; send one JSON-RPC message per line."}}`

// lockedWriter keeps the SDK's messages and the parse errors whole: one Write at a time.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }
