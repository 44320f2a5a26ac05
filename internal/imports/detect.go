package imports

import (
	"archive/zip"
	"bufio"
	"bytes"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
)

// Detect guesses the kind of the source at p from its names and its first bytes (docs/IMPORTS.md,
// "Telling the kind"): "" when it cannot tell, and the owner picks. It reads at most a few KiB of one
// entry, through the same zip checks as an import (an entry whose name leaves the archive is never
// opened), so an upload can be detected before anything else is read.
func Detect(p string) string {
	fi, err := os.Stat(p)
	if err != nil {
		return ""
	}
	if fi.IsDir() {
		root, err := os.OpenRoot(p)
		if err != nil {
			return ""
		}
		defer func() { _ = root.Close() }() // read only
		return detectNames(func(name string) (io.ReadCloser, bool) {
			if fi, err := root.Lstat(name); err != nil || !fi.Mode().IsRegular() {
				return nil, false
			}
			f, err := root.Open(name)
			return f, err == nil
		}, dirNames(root))
	}
	if zr, err := openZip(p); err == nil {
		defer func() { _ = zr.Close() }() // read only
		byName := map[string]*zip.File{}
		var names []string
		for _, f := range zr.File {
			if safeName(f.Name) && !f.FileInfo().IsDir() && f.Mode().IsRegular() {
				n := path.Clean(f.Name)
				byName[n] = f
				names = append(names, n)
			}
		}
		return detectNames(func(name string) (io.ReadCloser, bool) {
			f, ok := byName[name]
			if !ok {
				return nil, false
			}
			rc, err := f.Open()
			return rc, err == nil
		}, names)
	}
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer func() { _ = f.Close() }() // read only
	return detectJSON(peek(f))
}

// dirNames lists a folder's files two levels deep at most: enough to find an export's files.
func dirNames(root *os.Root) []string {
	var out []string
	ents, _ := fs.ReadDir(root.FS(), ".")
	for _, e := range ents {
		if !e.IsDir() {
			out = append(out, e.Name())
			continue
		}
		sub, _ := fs.ReadDir(root.FS(), e.Name())
		for _, s := range sub {
			out = append(out, e.Name()+"/"+s.Name())
		}
	}
	return out
}

// detectNames tells an export (conversations.json: ChatGPT's or Claude's; OpenMemory's memories.json)
// or a folder of Markdown (basic-memory when its notes carry a permalink) by its files.
func detectNames(open func(string) (io.ReadCloser, bool), names []string) string {
	find := func(base string) string {
		for _, n := range names {
			if n == base || (strings.Count(n, "/") == 1 && path.Base(n) == base) {
				return n
			}
		}
		return ""
	}
	read := func(name string) []byte {
		rc, ok := open(name)
		if !ok {
			return nil
		}
		defer func() { _ = rc.Close() }() // read only
		return peek(rc)
	}
	if c := find("conversations.json"); c != "" {
		head := read(c)
		switch {
		case bytes.Contains(head, []byte(`"mapping"`)) || bytes.Contains(head, []byte(`"current_node"`)):
			return ChatGPT
		case bytes.Contains(head, []byte(`"chat_messages"`)) || bytes.Contains(head, []byte(`"uuid"`)):
			return Claude
		}
	}
	if m := find("memories.json"); m != "" {
		if k := detectJSON(read(m)); k == Mem0 {
			return Mem0
		}
	}
	for _, n := range names {
		if strings.HasSuffix(strings.ToLower(n), ".md") && !hidden(n) {
			if front, _, _, err := splitFront(read(n)); err == nil && bytes.Contains(front, []byte("permalink:")) {
				return BasicMemory
			}
			return Markdown
		}
	}
	return ""
}

// detectJSON tells a JSON source by its first bytes: the reference server's JSONL (an entity or
// relation object a line), or a mem0/OpenMemory list of memories.
func detectJSON(head []byte) string {
	head = bytes.TrimSpace(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")))
	if len(head) == 0 {
		return ""
	}
	first, _, _ := bytes.Cut(head, []byte("\n"))
	compact := strings.Join(strings.Fields(string(first)), "")
	switch {
	case head[0] == '{' && (strings.Contains(compact, `"type":"entity"`) || strings.Contains(compact, `"type":"relation"`)):
		return ServerMemory
	case (head[0] == '[' || head[0] == '{') && (bytes.Contains(head, []byte(`"memory"`)) || bytes.Contains(head, []byte(`"memories"`)) || bytes.Contains(head, []byte(`"content"`))):
		return Mem0
	}
	return ""
}

// peek reads the first 8 KiB of a stream, at most.
func peek(r io.Reader) []byte {
	buf := make([]byte, 8<<10)
	n, _ := io.ReadFull(bufio.NewReader(io.LimitReader(r, int64(len(buf)))), buf)
	return buf[:n]
}
