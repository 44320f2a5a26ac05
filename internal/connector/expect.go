package connector

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Expect is what a test wants of a tool's result: "ok" (it returned without an error), "nonempty" (and
// not null, "", [] or {}), or {"contains": "text"} (its JSON holds the text).
type Expect struct {
	Kind     string // "ok", "nonempty" or "contains"
	Contains string
}

func parseExpect(n *node) (Expect, string) {
	const hint = `say "ok", "nonempty" or {"contains": "some text"}`
	switch {
	case n == nil:
		return Expect{}, "is missing; " + hint
	case n.kind == 's' && (n.text == "ok" || n.text == "nonempty"):
		return Expect{Kind: n.text}, ""
	case n.kind == 'o' && len(n.keys) == 1 && n.keys[0] == "contains" && n.vals[0].kind == 's' && n.vals[0].text != "":
		return Expect{Kind: "contains", Contains: n.vals[0].text}, ""
	}
	return Expect{}, fmt.Sprintf("is %s; %s", describe(n), hint)
}

// MarshalJSON writes the expectation as the manifest does.
func (e Expect) MarshalJSON() ([]byte, error) {
	if e.Kind == "contains" {
		return json.Marshal(map[string]string{"contains": e.Contains})
	}
	return json.Marshal(e.Kind)
}

// Check judges a tool's result (its JSON); why says what was wrong when it fails.
func (e Expect) Check(result json.RawMessage) (ok bool, why string) {
	r := bytes.TrimSpace(result)
	switch e.Kind {
	case "ok":
		return true, ""
	case "nonempty":
		switch string(r) {
		case "", "null", `""`, "[]", "{}":
			return false, fmt.Sprintf("the result was empty (%s)", orNothing(r))
		}
		var v any
		if json.Unmarshal(r, &v) == nil {
			switch v := v.(type) {
			case []any:
				if len(v) == 0 {
					return false, "the result was an empty list"
				}
			case map[string]any:
				if len(v) == 0 {
					return false, "the result was an empty object"
				}
			}
		}
		return true, ""
	case "contains":
		var s string
		if json.Unmarshal(r, &s) == nil && strings.Contains(s, e.Contains) {
			return true, ""
		}
		if strings.Contains(string(r), e.Contains) {
			return true, ""
		}
		return false, fmt.Sprintf("the result does not contain %q", e.Contains)
	}
	return false, "the test has no expectation"
}

func orNothing(r []byte) string {
	if len(r) == 0 {
		return "nothing"
	}
	return string(r)
}
