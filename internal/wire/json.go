package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/boxmem/box/internal/errs"
)

// value is a JSON value that keeps the order of object keys, so a file wire edits keeps the user's
// layout of keys (formatting is normalised to two-space indents).
type value struct {
	keys   []string          // object keys in order (obj != nil)
	obj    map[string]*value // an object
	arr    []*value          // an array (isArr)
	isArr  bool
	scalar any // string, json.Number, bool or nil
}

func newObject() *value { return &value{obj: map[string]*value{}} }

// parseJSON reads one JSON document.
func parseJSON(data []byte) (*value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("text after the JSON document")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (*value, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			v := newObject()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				child, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				v.set(k, child)
			}
			_, err := dec.Token()
			return v, err
		case '[':
			v := &value{isArr: true}
			for dec.More() {
				child, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				v.arr = append(v.arr, child)
			}
			_, err := dec.Token()
			return v, err
		}
		return nil, errs.E("wire.json", errs.Invalid, "unexpected %v", t)
	}
	return &value{scalar: tok}, nil
}

func (v *value) get(k string) *value {
	if v == nil || v.obj == nil {
		return nil
	}
	return v.obj[k]
}

func (v *value) set(k string, child *value) {
	if _, ok := v.obj[k]; !ok {
		v.keys = append(v.keys, k)
	}
	v.obj[k] = child
}

func (v *value) del(k string) {
	if _, ok := v.obj[k]; !ok {
		return
	}
	delete(v.obj, k)
	for i, key := range v.keys {
		if key == k {
			v.keys = append(v.keys[:i], v.keys[i+1:]...)
			break
		}
	}
}

func (v *value) str() string {
	if v == nil {
		return ""
	}
	s, _ := v.scalar.(string)
	return s
}

// from converts a plain Go value (maps with a key order given by orderedMap, slices, scalars).
func from(x any) *value {
	switch t := x.(type) {
	case *value:
		return t
	case orderedMap:
		v := newObject()
		for i := 0; i+1 < len(t); i += 2 {
			v.set(t[i].(string), from(t[i+1]))
		}
		return v
	case []any:
		v := &value{isArr: true}
		for _, e := range t {
			v.arr = append(v.arr, from(e))
		}
		return v
	case []string:
		v := &value{isArr: true}
		for _, e := range t {
			v.arr = append(v.arr, from(e))
		}
		return v
	case int:
		return &value{scalar: json.Number(fmt.Sprint(t))}
	}
	return &value{scalar: x}
}

// orderedMap is key, value, key, value …
type orderedMap []any

// encode writes v with two-space indents and a final newline.
func (v *value) encode() []byte {
	var b bytes.Buffer
	v.write(&b, 0)
	b.WriteByte('\n')
	return b.Bytes()
}

func (v *value) write(b *bytes.Buffer, depth int) {
	ind := strings.Repeat("  ", depth+1)
	switch {
	case v.obj != nil:
		if len(v.keys) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, k := range v.keys {
			b.WriteString(ind)
			writeScalar(b, k)
			b.WriteString(": ")
			v.obj[k].write(b, depth+1)
			if i < len(v.keys)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(strings.Repeat("  ", depth) + "}")
	case v.isArr:
		if len(v.arr) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, e := range v.arr {
			b.WriteString(ind)
			e.write(b, depth+1)
			if i < len(v.arr)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(strings.Repeat("  ", depth) + "]")
	default:
		writeScalar(b, v.scalar)
	}
}

func writeScalar(b *bytes.Buffer, x any) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(x)
	b.Truncate(b.Len() - 1) // Encode's newline
}
