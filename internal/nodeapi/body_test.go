package nodeapi

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestRequestBodyLimit(t *testing.T) {
	w := newWorld(t, nil)
	post := func(body io.Reader, length int64) (int, string) {
		t.Helper()
		req, err := http.NewRequest("POST", w.base+"/run/default/web/app?cmd=true", body)
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = length
		req.Header.Set("Authorization", "Bearer alice-token")
		resp, err := w.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out)
	}
	small := bytes.Repeat([]byte("x"), maxBodyBytes)
	if code, body := post(bytes.NewReader(small), int64(len(small))); code != http.StatusOK {
		t.Errorf("a body at the limit: %d %q, want the command's 200", code, body)
	}
	large := bytes.Repeat([]byte("x"), maxBodyBytes+1)
	if code, body := post(bytes.NewReader(large), int64(len(large))); code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "limit") {
		t.Errorf("a body over the limit: %d %q, want 413", code, body)
	}
	// Refused before authentication: no credentials, still 413.
	req, _ := http.NewRequest("POST", w.base+"/run/default/web/app?cmd=true", bytes.NewReader(large))
	resp, err := w.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a large body without credentials: %d, want 413", resp.StatusCode)
	}
	w.rv.mu.Lock()
	defer w.rv.mu.Unlock()
	if w.rv.tokenReviews != 1 {
		t.Errorf("%d TokenReviews, want 1: a refused body must not reach the apiserver", w.rv.tokenReviews)
	}
}
