package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/boxmem/box/internal/errs"
)

// wire is what both protocols share: the HTTP client, the key's header and the failure sentences.
type wire struct {
	cfg    Config
	key    key
	name   string
	header func(h http.Header)
}

// call is one HTTP exchange: it sends body (nil for GET), and on a 2xx answer hands the body to read,
// with tick to call on every bit of progress. Timers bound the wait for headers and the silence
// between two reads; the caller's ctx bounds the whole.
func (w *wire) call(ctx context.Context, op, method, url string, body any, read func(r io.Reader, tick func()) error) error {
	var payload io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return errs.Wrap(op, errs.Invalid, err, "the request could not be encoded")
		}
		payload = bytes.NewReader(data)
	}
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := http.NewRequestWithContext(cctx, method, url, payload)
	if err != nil {
		return errs.Wrap(op, errs.Invalid, err, "the request could not be made")
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream, application/json")
	}
	w.header(req.Header)

	first := time.AfterFunc(w.cfg.FirstByte, func() { cancel(errFirstByte) })
	resp, err := w.cfg.HTTP.Do(req)
	first.Stop()
	if err != nil {
		return w.transport(op, ctx, cctx, err, w.cfg.FirstByte)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		code, msg := errorBody(resp.Body)
		return fail(op, statusFailure(w.name, w.key.reveal(), resp, code, msg, w.cfg.Now()))
	}
	idle := time.AfterFunc(w.cfg.Idle, func() { cancel(errIdle) })
	defer idle.Stop()
	tick := func() { idle.Reset(w.cfg.Idle) }
	if err := read(resp.Body, tick); err != nil {
		if FailureOf(err) != nil || errs.KindOf(err) != errs.Other {
			return err
		}
		return w.transport(op, ctx, cctx, err, w.cfg.Idle)
	}
	return nil
}

func (w *wire) transport(op string, ctx, cctx context.Context, err error, limit time.Duration) error {
	if ctx.Err() != nil {
		return ctxFailure(op, ctx)
	}
	return fail(op, transportFailure(w.name, err, context.Cause(cctx), limit))
}

// stream posts body to url and hands each server-sent event of the answer to handle.
func (w *wire) stream(ctx context.Context, url string, body any, handle func(event) (bool, error)) error {
	return w.call(ctx, "provider.stream", http.MethodPost, url, body, func(r io.Reader, tick func()) error {
		return consume(r, tick, handle)
	})
}

// getJSON fetches url and decodes its JSON answer into v.
func (w *wire) getJSON(ctx context.Context, op, url string, v any) error {
	return w.call(ctx, op, http.MethodGet, url, nil, func(r io.Reader, _ func()) error {
		if err := json.NewDecoder(io.LimitReader(r, 32<<20)).Decode(v); err != nil {
			return fail(op, brokenFailure(w.name, "its list was not JSON"))
		}
		return nil
	})
}
