package connector

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// node is one JSON value with its object keys in the order they were written. The manifest is read
// into nodes rather than straight into structs so that every problem can be reported at once, with
// its place, and so that an unknown or repeated key is seen instead of silently dropped.
type node struct {
	kind  byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	keys  []string
	vals  []*node
	items []*node
	text  string // a string's value or a number's digits
	b     bool
}

func (n *node) kindName() string {
	switch n.kind {
	case 'o':
		return "an object"
	case 'a':
		return "a list"
	case 's':
		return "text"
	case 'n':
		return "a number"
	case 'b':
		return "true or false"
	}
	return "null"
}

// get returns the value of key in an object node, or nil.
func (n *node) get(key string) *node {
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// parseTree reads one JSON value; a key written twice in one object is an error naming it, as is
// anything after the value.
func parseTree(data []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := parseValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("there is more after the JSON value")
	}
	return n, nil
}

const maxDepth = 64

func parseValue(dec *json.Decoder, depth int) (*node, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("it nests deeper than %d levels", maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonError(err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &node{kind: 'o'}
			var seen map[string]bool // past a few keys: a search of the keys per key would be quadratic
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, jsonError(err)
				}
				k, _ := kt.(string)
				if seen == nil && len(n.keys) >= 16 {
					seen = make(map[string]bool, 2*len(n.keys))
					for _, k := range n.keys {
						seen[k] = true
					}
				}
				if (seen != nil && seen[k]) || (seen == nil && n.get(k) != nil) {
					return nil, fmt.Errorf("the key %q is written twice in one object", k)
				}
				if seen != nil {
					seen[k] = true
				}
				v, err := parseValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.keys, n.vals = append(n.keys, k), append(n.vals, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, jsonError(err)
			}
			return n, nil
		case '[':
			n := &node{kind: 'a'}
			for dec.More() {
				v, err := parseValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, jsonError(err)
			}
			return n, nil
		}
		return nil, fmt.Errorf("unexpected %q", t)
	case string:
		return &node{kind: 's', text: t}, nil
	case json.Number:
		return &node{kind: 'n', text: t.String()}, nil
	case bool:
		return &node{kind: 'b', b: t}, nil
	case nil:
		return &node{kind: 'z'}, nil
	}
	return nil, fmt.Errorf("unexpected %v", tok)
}

func jsonError(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return errors.New("the JSON ends too early")
	}
	return errors.New(strings.TrimPrefix(err.Error(), "json: "))
}

// MarshalJSON writes the node back as JSON, keys in their written order.
func (n *node) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	n.write(&b)
	return b.Bytes(), nil
}

func (n *node) write(b *bytes.Buffer) {
	switch n.kind {
	case 'o':
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			n.vals[i].write(b)
		}
		b.WriteByte('}')
	case 'a':
		b.WriteByte('[')
		for i, v := range n.items {
			if i > 0 {
				b.WriteByte(',')
			}
			v.write(b)
		}
		b.WriteByte(']')
	case 's':
		writeString(b, n.text)
	case 'n':
		b.WriteString(n.text)
	case 'b':
		if n.b {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	default:
		b.WriteString("null")
	}
}

func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)       // a string always encodes
	b.Truncate(b.Len() - 1) // Encode's newline
}
