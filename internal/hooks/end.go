package hooks

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/boxmem/box/internal/box"
)

// Usage is what one session cost, read from its transcript.
type Usage struct {
	Turns         int `json:"turns"`
	Input         int `json:"input"`
	Output        int `json:"output"`
	CacheRead     int `json:"cacheRead"`
	CacheCreation int `json:"cacheCreation"`
}

// Total is every token billed.
func (u Usage) Total() int { return u.Input + u.Output + u.CacheRead + u.CacheCreation }

// ReadTranscript sums a Claude Code transcript (JSON lines): a turn is a prompt the user typed (not a
// tool result, not a harness message); tokens are the usage of each assistant message, counted once per
// message id (a message split over several lines repeats its usage).
func ReadTranscript(path string) (Usage, error) {
	f, err := os.Open(path)
	if err != nil {
		return Usage{}, err
	}
	defer func() { _ = f.Close() }() // hooks fail open: a close is not worth failing a session for
	var u Usage
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var l struct {
			Type    string `json:"type"`
			IsMeta  bool   `json:"isMeta"`
			Message struct {
				ID      string          `json:"id"`
				Content json.RawMessage `json:"content"`
				Usage   *struct {
					Input         int `json:"input_tokens"`
					Output        int `json:"output_tokens"`
					CacheRead     int `json:"cache_read_input_tokens"`
					CacheCreation int `json:"cache_creation_input_tokens"`
				} `json:"usage"`
			} `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue
		}
		switch l.Type {
		case "user":
			if !l.IsMeta && typedPrompt(l.Message.Content) {
				u.Turns++
			}
		case "assistant":
			m := l.Message
			if m.Usage == nil || m.ID != "" && seen[m.ID] {
				continue
			}
			seen[m.ID] = true
			u.Input += m.Usage.Input
			u.Output += m.Usage.Output
			u.CacheRead += m.Usage.CacheRead
			u.CacheCreation += m.Usage.CacheCreation
		}
	}
	return u, sc.Err()
}

// typedPrompt reports whether a user message's content is something the user typed.
func typedPrompt(content json.RawMessage) bool {
	var text string
	if json.Unmarshal(content, &text) == nil {
		return strings.TrimSpace(text) != "" && !harnessTag.MatchString(text)
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(content, &blocks) != nil {
		return false
	}
	for _, b := range blocks {
		if b.Type == "tool_result" {
			return false
		}
	}
	for _, b := range blocks {
		if b.Type == "text" && !harnessTag.MatchString(b.Text) {
			return true
		}
	}
	return false
}

// sessionKeep is how long session folders and sieved outputs are kept.
const sessionKeep = 7 * 24 * time.Hour

// sessionEnd writes the session's turns and tokens into the diary (a box change, when the session ran
// inside the box; a log line otherwise) and prunes old session folders.
func (s *session) sessionEnd(ctx context.Context) error {
	defer s.prune()
	if s.in.TranscriptPath == "" {
		return nil
	}
	u, err := ReadTranscript(s.in.TranscriptPath)
	if err != nil {
		return err
	}
	who := "Claude Code"
	if strings.Contains(s.in.TranscriptPath, ".codex") {
		who = "Codex"
	}
	// The summary is the diary line and the commit message: the payload's words reach it only as the
	// safe session id (its folder's name) and a reason the agents are known to give.
	summary := fmt.Sprintf("%s session %s ended (%s): %d turns, %d tokens (input %d, output %d, cache read %d, cache write %d)",
		who, s.id, endReason(s.in.Reason), u.Turns, u.Total(), u.Input, u.Output, u.CacheRead, u.CacheCreation)
	if !s.inBox {
		s.logf("%s in %s", summary, s.project)
		return nil
	}
	sv, err := s.services(ctx)
	if err != nil {
		return err
	}
	_, err = sv.Memory.Box().Do(ctx, box.Change{
		Actor: box.Actor{Who: who, Via: "hook", Trust: "outside"}, Op: "session", Summary: summary,
		Reason: "the session ended", Apply: func(*box.Tx) error { return nil },
	})
	return errors.Join(err, sv.Close())
}

// endReasons are the reasons Claude Code gives SessionEnd.
var endReasons = map[string]bool{"clear": true, "logout": true, "prompt_input_exit": true, "bypass_permissions_disabled": true, "other": true}

// endReason is the payload's reason when it is one the agents give, else "other".
func endReason(r string) string {
	if endReasons[r] {
		return r
	}
	return "other"
}

// prune removes session folders and sieved outputs older than sessionKeep.
func (s *session) prune() {
	cut := s.now().Add(-sessionKeep)
	for _, dir := range []string{filepath.Join(s.root, ".box", "sessions"), filepath.Join(s.root, ".box", "sieve")} {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if fi, err := e.Info(); err == nil && fi.ModTime().Before(cut) && e.Name() != s.id {
				_ = os.RemoveAll(filepath.Join(dir, e.Name()))
			}
		}
	}
}
