package httpjson

import (
	"net/http/httptest"
	"testing"
)

func TestWrite(t *testing.T) {
	for _, tc := range []struct {
		escape bool
		want   string
	}{{false, `{"u":"https://a.example/?x=1&y=<2>"}` + "\n"}, {true, `{"u":"https://a.example/?x=1\u0026y=\u003c2\u003e"}` + "\n"}} {
		rec := httptest.NewRecorder()
		Write(rec, 201, map[string]string{"u": "https://a.example/?x=1&y=<2>"}, tc.escape)
		if rec.Code != 201 || rec.Header().Get("Content-Type") != "application/json" || rec.Header().Get("Cache-Control") != "no-store" || rec.Body.String() != tc.want {
			t.Errorf("escape=%v: %d %v %q", tc.escape, rec.Code, rec.Header(), rec.Body.String())
		}
	}
}
