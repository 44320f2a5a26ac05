package wire

import (
	"bytes"
	"testing"
)

// FuzzParseJSON: any settings file parses without panicking, and what parses encodes to JSON that parses
// again to the same encoding (wire rewrites the files it reads, so a round trip must be stable).
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{"hooks":{"PostToolUse":[{"matcher":"Write","hooks":[{"type":"command","command":"x"}]}]}}`, `{"a":[1,2.5,"x",null,true,{}]}`, `[]`, `{`, `{"a":1} x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := parseJSON(data)
		if err != nil {
			return
		}
		once := v.encode()
		w, err := parseJSON(once)
		if err != nil {
			t.Fatalf("its own encoding does not parse: %v\n%s", err, once)
		}
		if twice := w.encode(); !bytes.Equal(once, twice) {
			t.Fatalf("the round trip is not stable:\n%s\n%s", once, twice)
		}
	})
}
