package provider

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzReadEvents: any bytes give events without a panic, and data survives the round trip.
func FuzzReadEvents(f *testing.F) {
	f.Add([]byte("event: ping\ndata: {\"type\": \"ping\"}\n\n"))
	f.Add([]byte(": OPENROUTER PROCESSING\r\n\r\ndata: a\rdata: b\r\rdata: [DONE]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		n := 0
		err := readEvents(bytes.NewReader(data), func() {}, func(ev event) bool {
			n++
			if bytes.ContainsAny(ev.data, "\r") {
				t.Errorf("event data %q keeps a CR", ev.data)
			}
			return true
		})
		if err == nil && n > len(data) {
			t.Errorf("%d events from %d bytes", n, len(data))
		}
	})
}

// checkCalls: whatever the stream said, every call's Input is a JSON object.
func checkCalls(t *testing.T, r Reply) {
	for _, c := range r.Calls {
		var obj map[string]json.RawMessage
		if json.Unmarshal(c.Input, &obj) != nil || obj == nil {
			t.Errorf("call %+v: Input is not a JSON object", c)
		}
	}
}

func FuzzOpenAIStream(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		s := &oaStream{assembly: assembly{name: "X", emit: func(Delta) {}, calls: map[int]*partialCall{}}}
		reply, _ := s.finish("m", consume(bytes.NewReader(data), func() {}, s.handle))
		checkCalls(t, reply)
	})
}

func FuzzAnthropicStream(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		s := &anStream{assembly: assembly{name: "X", emit: func(Delta) {}, calls: map[int]*partialCall{}}}
		reply, _ := s.finish("m", consume(bytes.NewReader(data), func() {}, s.handle))
		checkCalls(t, reply)
	})
}
